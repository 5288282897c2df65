# memwall's two entry points for a fresh Debian machine (run as root, or with sudo available):
#   make demo   installs what is missing, builds, and simulates naive vs tiled attention
#   make test   installs what is missing, builds, and runs every test: the suite in build/, the
#               suite again under AddressSanitizer + UBSan in build-asan/, then each libFuzzer
#               harness briefly on its checked-in corpus in build-fuzz/ (when clang is present)
# `make build` alone builds into build/; `make test-unit`, `make test-asan` and `make test-fuzz`
# run one step each; `make fuzz-long` runs each harness for 10^6 executions (docs/reliability.md);
# `make format` rewrites the C++ and CUDA sources to follow .clang-format; `make clean` removes the
# build directories.

BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

# Debian packages the build needs; only those not yet installed are fetched. The Python ones are
# for /usr/bin/python3: the memwall module (python/), its tests (tests/python/), memwall.plot and
# the notebooks (docs/notebooks/); chromium loads the `run --html` page in tests/e2e/html_report.py.
PACKAGES := cmake make g++ libboost-graph-dev libeigen3-dev libspdlog-dev libyaml-cpp-dev \
            libcli11-dev catch2 clang libclang-rt-14-dev clang-format \
            python3-dev pybind11-dev python3-pybind11 python3-pytest python3-pandas \
            python3-matplotlib python3-nbconvert python3-ipykernel chromium

ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
# Seconds each fuzz harness runs in `make test` (on the checked-in corpus, then mutating it).
FUZZ_SECONDS ?= 20

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps build demo check test test-unit test-asan test-fuzz fuzz-long docs-refresh format clean

deps:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "memwall: installing missing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

# The default simulation: naive vs FlashAttention-2 on the H200 preset, side by side. The preset
# holds the datasheet's peaks (every efficiency 1), so the demo shows the chip's ideal: the
# comparison of the two algorithms, not a prediction of measured times. DEMO_CONFIG=h200-calibrated
# runs it on the efficiencies fitted to the real H200 (configs/calibrated/h200.yaml) instead.
DEMO_SHAPE ?= --seq 4096 --head-dim 64 --batch 4 --heads 16
DEMO_CONFIG ?= configs/h200.yaml
demo: build
	@echo "memwall demo: naive attention vs FlashAttention-2 on $(DEMO_CONFIG)"
	@if [ "$(DEMO_CONFIG)" = configs/h200.yaml ]; then \
	  echo "  (the H200's datasheet peaks, every efficiency 1: the ideal chip, to compare the two"; \
	  echo "  algorithms; make demo DEMO_CONFIG=h200-calibrated uses the efficiencies fitted to the"; \
	  echo "  real H200, whose kernel times are off by about 5% on average from measured ones)"; \
	fi
	@echo
	$(BUILD)/memwall run --config $(DEMO_CONFIG) --workload naive,flash2 $(DEMO_SHAPE)
	@echo
	@echo "How to read it:"
	@echo "  DRAM       bytes moved between the L2 and HBM (the chip's memory); SM->L2: bytes the SMs"
	@echo "             asked of the L2 (hits and misses); shared memory: bytes of the SMs' on-chip SRAM"
	@echo "  CTA        a thread block, the unit the GPU schedules onto an SM"
	@echo "  SM clock   the mean SM clock: the board's power limiter lowers it while the work would"
	@echo "             draw more than the limit (board power: what the power model gives the run)"
	@echo "  SM time    each SM's time split four ways: compute (a pipe busy), memory latency (waiting"
	@echo "             as long as an unloaded path takes), memory bandwidth (queueing behind other"
	@echo "             requests), idle (no CTA resident)"
	@echo "  units      sizes in binary units (1 GiB = 2^30 bytes), rates in decimal ones (1 TB/s ="
	@echo "             10^12 bytes/s), as GPU datasheets write them"

test: test-unit test-asan test-fuzz

# The test suite alone, in build/ (what a student runs after a change): no sanitizer build, no fuzzing.
check: test-unit

test-unit: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer (any report fails the test).
# -O1 (with assertions): under ASan it compiles about 2.4 times faster than -O3. Warnings are not
# errors here (build/ enforces them): GCC 12 at -O1 with ASan reports a false -Wuninitialized
# inside Boost.Graph's named_graph.hpp.
test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 \
	  -DMEMWALL_SANITIZE=ON -DMEMWALL_CUDA=OFF -DMEMWALL_WERROR=OFF
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

# Each libFuzzer harness for FUZZ_SECONDS on its corpus; skipped (with a note) without clang.
test-fuzz: deps
	BUILD=$(FUZZ_BUILD) JOBS=$(JOBS) tests/fuzz/run.sh $(FUZZ_SECONDS)

# The long campaign of docs/reliability.md: 10^6 executions per harness, one at a time.
fuzz-long: deps
	BUILD=$(FUZZ_BUILD) JOBS=$(JOBS) FUZZ_RUNS=1000000 tests/fuzz/run.sh 3600

# Rewrites the `$ memwall ...` outputs pasted in README.md and docs/*.md with fresh ones, after a
# deliberate change of the output; the doc_blocks test checks them (docs/reliability.md).
docs-refresh: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS) --target memwall
	python3 tests/e2e/doc_blocks.py --update --memwall $(BUILD)/memwall

# Rewrites every tracked C++ and CUDA source to follow .clang-format (the `format` test checks it).
format:
	git ls-files '*.cc' '*.h' '*.cu' '*.cuh' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)

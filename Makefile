# memwall's two entry points for a fresh Debian machine (run as root, or with sudo available):
#   make demo   installs what is missing, builds, and simulates naive vs tiled attention
#   make test   installs what is missing, builds, and runs every test
# Everything builds into build/. `make build` alone builds; `make clean` removes build/.

BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

# Debian packages the build needs; only those not yet installed are fetched.
PACKAGES := cmake make g++ libboost-graph-dev libeigen3-dev libspdlog-dev libyaml-cpp-dev \
            libcli11-dev catch2

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps build demo test clean

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

# The default simulation: naive vs FlashAttention-2 on the H200 preset, side by side.
DEMO_SHAPE ?= --seq 4096 --head-dim 64 --batch 4 --heads 16
demo: build
	$(BUILD)/memwall run --config configs/h200.yaml --workload naive,flash2 $(DEMO_SHAPE)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)

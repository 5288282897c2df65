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

demo: build
	$(BUILD)/memwall config show configs/h200.yaml

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)

# Thin wrapper over scripts/setup.sh, CMake and CTest. See docs/building.md.
#   make build       install what is missing, configure build/ (Release) once, build it and the benchmarks
#   make demo        build, then run the main job: build/bin/memo-fuzz demo
#   make test        build what the tests need (not the benchmarks), then run every test (unit,
#                    sanitizer, CLI, compile-fail, packaging, ...)
#   make amalgamate  regenerate single_include/memo/memo.hpp from include/
#   make clean       remove build/

BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= 2
CMAKE ?= cmake
CTEST ?= ctest

MAKEFLAGS += --no-print-directory

.PHONY: all setup configure build build-tests demo test amalgamate clean

all: build

setup:
	@scripts/setup.sh

configure: setup
	@if [ ! -f "$(BUILD_DIR)/CMakeCache.txt" ]; then \
	  $(CMAKE) -S . -B "$(BUILD_DIR)" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=$(BUILD_TYPE); \
	fi

build-tests: configure
	$(CMAKE) --build "$(BUILD_DIR)" -j$(JOBS)

build: build-tests
	@if $(CMAKE) --build "$(BUILD_DIR)" --target help | grep -q memo-bench; then \
	  $(CMAKE) --build "$(BUILD_DIR)" -j$(JOBS) --target memo-bench; \
	fi

demo: build
	"$(BUILD_DIR)/bin/memo-fuzz" demo

test: build-tests
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $(CTEST) --test-dir "$(BUILD_DIR)" --output-on-failure -j$(JOBS)

amalgamate:
	python3 scripts/amalgamate.py

clean:
	rm -rf "$(BUILD_DIR)"

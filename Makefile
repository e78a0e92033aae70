# Thin wrapper over scripts/setup.sh, CMake and CTest. See docs/building.md.
#   make build       install what is missing, configure build/ (Release) once, build it and the benchmarks
#   make demo        build memo-fuzz alone (nothing the demo does not run), then run the main job:
#                    build/bin/memo-fuzz demo
#   make test        build what the tests need (not the benchmarks), then run every test (unit,
#                    sanitizer, CLI, compile-fail, packaging, ...); prints the set-up, build and
#                    test times at the end
#   make amalgamate  regenerate single_include/memo/memo.hpp from include/
#   make format      lay the C++ sources out as .clang-format says (the test `format` checks it)
#   make clean       remove build/

BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= 2
CMAKE ?= cmake
CTEST ?= ctest

MAKEFLAGS += --no-print-directory

.PHONY: all setup configure build build-tests build-demo demo test amalgamate format clean

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

build-demo: configure
	$(CMAKE) --build "$(BUILD_DIR)" -j$(JOBS) --target memo-fuzz

demo: build-demo
	"$(BUILD_DIR)/bin/memo-fuzz" demo

# Each step timed: a cold run (fresh machine, empty ccache) must stay well inside CI's limit.
test:
	@t0=$$(date +%s); \
	$(MAKE) configure || exit $$?; t1=$$(date +%s); \
	$(MAKE) build-tests || exit $$?; t2=$$(date +%s); \
	rc=0; env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $(CTEST) --test-dir "$(BUILD_DIR)" --output-on-failure -j$(JOBS) || rc=$$?; \
	t3=$$(date +%s); \
	echo "times: set-up and configure $$((t1 - t0)) s, build $$((t2 - t1)) s, tests $$((t3 - t2)) s, total $$((t3 - t0)) s"; \
	exit $$rc

amalgamate:
	python3 scripts/amalgamate.py

format:
	scripts/format.sh

clean:
	rm -rf "$(BUILD_DIR)"

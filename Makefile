# Convenience targets over CMake. CMake is the build system; this file only
# names the common commands. Everything builds in build/ (Release).
#
#   make demo    install missing packages, build, run the demo
#   make test    install missing packages, build, run all tests
#   make bench   install missing packages, build, run the benchmarks
#   make format  clang-format every C++ file in place
#   make clean   remove build/

BUILD_DIR := build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CLANG_FORMAT ?= clang-format
FORMAT_DIRS := include src tests bench examples

# Prerequisites run in the order listed (deps, then build, then the rest);
# CMake parallelizes the compilation itself.
.NOTPARALLEL:
.PHONY: all deps build demo test bench format clean

all: build

deps:
	scripts/install-deps

build:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD_DIR) -j$(JOBS)

demo: deps build
	$(BUILD_DIR)/examples/feedcore-demo

test: deps build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j2

# Uses the bench-run target when bench/CMakeLists.txt defines one, otherwise
# runs the benchmark binary directly.
bench: deps build
	@if cmake --build $(BUILD_DIR) --target help | grep '\bbench-run\b' >/dev/null; then \
	  cmake --build $(BUILD_DIR) --target bench-run; \
	elif [ -x $(BUILD_DIR)/bench/feedcore_benchmarks ]; then \
	  $(BUILD_DIR)/bench/feedcore_benchmarks; \
	else \
	  echo "bench: no bench-run target and no $(BUILD_DIR)/bench/feedcore_benchmarks" >&2; \
	  exit 1; \
	fi

format:
	find $(FORMAT_DIRS) -type f \( -name '*.h' -o -name '*.cc' \) -print0 \
	  | xargs -0 -r $(CLANG_FORMAT) -i

clean:
	rm -rf $(BUILD_DIR)

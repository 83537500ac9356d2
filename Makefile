# Convenience targets over CMake. CMake is the build system; this file only
# names the common commands. Everything builds in build/ (Release).
#
#   make demo    install missing packages, build, run the demo
#   make test    install missing packages, build, run all tests
#   make test-nocluster
#                build without the Redis Cluster backend (build-nocluster/)
#                and run the unit tests there
#   make bench   install missing packages (and gnuplot), build
#                feedcore-bench (Release), compare feedcore, in process and
#                on a Redis Cluster, with Redis and the baselines; writes the
#                figures into docs/benchmark-results.md (generated) and
#                the chart docs/benchmarks-vs-redis.png
#                (the Google Benchmark programs: cmake --build build
#                --target bench-run)
#   make sanitize  clang builds: every test under AddressSanitizer and
#                UndefinedBehaviorSanitizer (build-asan/, shared libraries,
#                so the exported-symbol check runs there too), the
#                concurrency tests under ThreadSanitizer (build-tsan/, only
#                what they need)
#   make fuzz    the libFuzzer targets in fuzz/, built in build-asan/ (the
#                same objects as its tests), each run for FUZZ_SECONDS
#                (default 600; CI: 60), two at a time, or only FUZZ_TARGETS;
#                a crash fails (fuzz/run-fuzzers)
#   make soak    minutes of constant load with a short TTL (feedcore_soak,
#                Release); writes build/soak.csv and the chart docs/soak.png
#                (SOAK_FLAGS adds flags, e.g. SOAK_FLAGS=--seconds=600)
#   make package the Debian package (cmake/packaging.cmake): a Release
#                build installed under /usr in build-package/, without
#                tests, benchmarks and examples, then cpack -G DEB there;
#                writes build-package/feedcore_<version>_<arch>.deb
#   make format  clang-format every C++ file in place
#   make clean   remove the build trees

BUILD_DIR := build
# CI sets FEEDCORE_WERROR=ON (.ci/run); a user's build does not fail on a
# warning a newer compiler adds.
FEEDCORE_WERROR ?= OFF
CMAKE_FLAGS := -DFEEDCORE_WERROR=$(FEEDCORE_WERROR)
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# Ninja (scripts/install-deps installs it) for a new build tree; a tree
# that exists keeps the generator it was made with.
NINJA := $(shell command -v ninja 2>/dev/null)
generator = $(if $(wildcard $(1)/CMakeCache.txt),,$(if $(NINJA),-G Ninja))
# ctest runs up to CTEST_JOBS tests at once: more than the cores, since the
# cluster and server tests spend much of their time waiting on sockets;
# tests that need both cores say so (PROCESSORS).
CTEST_JOBS ?= 3
CTEST := ctest --output-on-failure -j$(CTEST_JOBS)
SLOWEST := scripts/slowest-tests
CLANG_FORMAT ?= clang-format
FORMAT_DIRS := include src tests bench examples server tools fuzz

# Prerequisites run in the order listed (deps, then build, then the rest);
# CMake parallelizes the compilation itself.
.NOTPARALLEL:
.PHONY: all deps configure build demo test test-nocluster bench sanitize asan \
  asan-build tsan fuzz soak package format clean

# Sanitizer builds use clang (its -Wthread-safety also checks the lock
# annotations) and only build what the tests need, with line tables as
# their debug information (enough for the sanitizers' stack traces). The
# consumer tests are skipped there: they check packaging, not memory or
# threads.
SAN_CMAKE = CC=clang CXX=clang++ cmake -S . -B $(1) $(call generator,$(1)) \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
  $(CMAKE_FLAGS) -DFEEDCORE_BENCH=OFF
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
  -fno-omit-frame-pointer
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
# One AddressSanitizer + UBSan build serves the tests and the fuzz targets:
# the library's objects carry libFuzzer's coverage instrumentation
# (fuzz/CMakeLists.txt), which slows the model tests by a tenth or so and
# saves a whole build. Shared libraries, so that the exported-symbol check
# (label exports) reads them. Instrumenting optimized code is what makes a
# sanitizer build slow to compile, so the test programs are compiled at
# -O0 there, but for those marked COMPUTE (tests/CMakeLists.txt).
ASAN_CMAKE := $(call SAN_CMAKE,build-asan) -DCMAKE_CXX_FLAGS="$(ASAN_FLAGS)" \
  -DFEEDCORE_FUZZ=ON -DBUILD_SHARED_LIBS=ON -DFEEDCORE_EXAMPLES=OFF \
  -DFEEDCORE_SERVER=OFF \
  -DFEEDCORE_TEST_OPTIMIZATION=-O0 -DFEEDCORE_COMPUTE_TEST_OPTIMIZATION=-O1

all: build

deps:
	scripts/install-deps

configure:
	cmake -S . -B $(BUILD_DIR) $(call generator,$(BUILD_DIR)) \
	  -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j$(JOBS)

# Only the library and the demo program.
demo: deps configure
	cmake --build $(BUILD_DIR) -j$(JOBS) --target feedcore-demo
	$(BUILD_DIR)/examples/feedcore-demo

# Prints the ten slowest tests, then fails if a test failed.
test: deps build
	$(CTEST) --test-dir $(BUILD_DIR) || { $(SLOWEST) $(BUILD_DIR); exit 1; }
	$(SLOWEST) $(BUILD_DIR)

# The library, tests and benchmarks must build without hiredis's backend;
# the in-memory unit tests are enough to show the build works (the examples
# and feedcore-server do not depend on the option and are left out).
# With ccache, the sources it shares with build/ come from the cache.
test-nocluster: deps
	cmake -S . -B build-nocluster $(call generator,build-nocluster) \
	  -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) \
	  -DFEEDCORE_REDIS_CLUSTER=OFF -DFEEDCORE_EXAMPLES=OFF \
	  -DFEEDCORE_SERVER=OFF
	cmake --build build-nocluster -j$(JOBS)
	$(CTEST) --test-dir build-nocluster -L unit

# Builds only the driver (with the Redis Cluster backend it links); it
# starts its own redis-server on a free loopback port and a 3-master Redis
# Cluster (scripts/redis-cluster), and stops both at exit. BENCH_FLAGS adds
# driver flags, e.g. BENCH_FLAGS=--memory_entries=10000000, or
# --redis_cluster=false to leave the cluster out. A run whose answers do
# not match fails and leaves docs/ untouched.
BENCH_FLAGS ?=
BENCH_RATIOS := $(BUILD_DIR)/feedcore-bench-ratios.dat
bench:
	scripts/install-deps --bench
	cmake -S . -B $(BUILD_DIR) $(call generator,$(BUILD_DIR)) \
	  -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD_DIR) -j$(JOBS) --target feedcore-bench
	rm -f $(BENCH_RATIOS)
	$(BUILD_DIR)/bench/feedcore-bench \
	  --commit=$$(git rev-parse --short HEAD 2>/dev/null || echo unknown) \
	  --json=$(BUILD_DIR)/feedcore-bench.json \
	  --markdown=docs/benchmark-results.md --chart_data=$(BENCH_RATIOS) $(BENCH_FLAGS)
	@if [ -s $(BENCH_RATIOS) ] && [ "$$(grep -vc '^#' $(BENCH_RATIOS))" -gt 0 ]; then \
	  gnuplot -e "datafile='$(BENCH_RATIOS)'; outfile='docs/benchmarks-vs-redis.png'" \
	    bench/driver/ratio_chart.gp && echo "bench: wrote docs/benchmarks-vs-redis.png"; \
	else \
	  echo "bench: no Redis figures in this run; docs/benchmarks-vs-redis.png left as it was"; \
	fi

sanitize: asan tsan

asan-build:
	scripts/install-deps --sanitize
	$(ASAN_CMAKE)

# The model tests run at half their length here; make test runs them whole
# (tests/support/test_util.h, ModelOps).
ASAN_MODEL_OPS_PERCENT ?= 50
asan: asan-build
	cmake --build build-asan -j$(JOBS)
	FEEDCORE_MODEL_OPS_PERCENT=$(ASAN_MODEL_OPS_PERCENT) \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  $(CTEST) --test-dir build-asan -LE consumer \
	  || { $(SLOWEST) build-asan; exit 1; }
	$(SLOWEST) build-asan

# With feedcore-server, whose sorted_set_race_test is a stress test.
tsan:
	scripts/install-deps --sanitize
	$(call SAN_CMAKE,build-tsan) -DCMAKE_CXX_FLAGS="$(TSAN_FLAGS)" \
	  -DFEEDCORE_SERVER=ON
	cmake --build build-tsan -j$(JOBS) --target feedcore-stress-tests
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  $(CTEST) --test-dir build-tsan -L stress \
	  || { $(SLOWEST) build-tsan; exit 1; }
	$(SLOWEST) build-tsan

# Builds only the fuzz targets and the seed writers of build-asan/ (all
# there already after make asan).
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?=
FUZZ_JOBS ?= 2
fuzz: asan-build
	cmake --build build-asan -j$(JOBS) --target feedcore-fuzzers
	FUZZ_JOBS=$(FUZZ_JOBS) fuzz/run-fuzzers build-asan $(FUZZ_SECONDS) \
	  $(FUZZ_TARGETS)

SOAK_FLAGS ?=
SOAK_CSV := $(BUILD_DIR)/soak.csv
soak:
	scripts/install-deps --bench
	cmake -S . -B $(BUILD_DIR) $(call generator,$(BUILD_DIR)) \
	  -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD_DIR) -j$(JOBS) --target feedcore_soak
	$(BUILD_DIR)/bench/feedcore_soak --csv=$(SOAK_CSV) $(SOAK_FLAGS)
	gnuplot -e "datafile='$(SOAK_CSV)'; outfile='docs/soak.png'" \
	  bench/soak/plot.gp
	@echo "soak: wrote $(SOAK_CSV) and docs/soak.png"

PACKAGE_DIR := build-package
package: deps
	cmake -S . -B $(PACKAGE_DIR) $(call generator,$(PACKAGE_DIR)) \
	  -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr $(CMAKE_FLAGS) \
	  -DFEEDCORE_TEST=OFF -DFEEDCORE_BENCH=OFF -DFEEDCORE_EXAMPLES=OFF
	cmake --build $(PACKAGE_DIR) -j$(JOBS)
	cd $(PACKAGE_DIR) && cpack -G DEB

format:
	find $(FORMAT_DIRS) -type f \( -name '*.h' -o -name '*.cc' \) -print0 \
	  | xargs -0 -r $(CLANG_FORMAT) -i

clean:
	rm -rf $(BUILD_DIR) $(BUILD_DIR)-add_subdirectory build-nocluster \
	  build-asan build-tsan $(PACKAGE_DIR)

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
#                figures into docs/benchmarks.md and the chart
#                docs/benchmarks-vs-redis.png
#                (the Google Benchmark programs: cmake --build build
#                --target bench-run)
#   make sanitize  clang builds: every test under AddressSanitizer and
#                UndefinedBehaviorSanitizer (build-asan/), the concurrency
#                tests under ThreadSanitizer (build-tsan/)
#   make fuzz    clang build of the libFuzzer targets in fuzz/ (build-fuzz/),
#                each run for FUZZ_SECONDS (default 600; CI: 60), or only
#                FUZZ_TARGETS; a crash fails (fuzz/run-fuzzers)
#   make soak    minutes of constant load with a short TTL (feedcore_soak,
#                Release); writes build/soak.csv and the chart docs/soak.png
#                (SOAK_FLAGS adds flags, e.g. SOAK_FLAGS=--seconds=600)
#   make format  clang-format every C++ file in place
#   make clean   remove build/

BUILD_DIR := build
# CI sets FEEDCORE_WERROR=ON (.ci/run); a user's build does not fail on a
# warning a newer compiler adds.
FEEDCORE_WERROR ?= OFF
CMAKE_FLAGS := -DFEEDCORE_WERROR=$(FEEDCORE_WERROR)
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CLANG_FORMAT ?= clang-format
FORMAT_DIRS := include src tests bench examples fuzz

# Prerequisites run in the order listed (deps, then build, then the rest);
# CMake parallelizes the compilation itself.
.NOTPARALLEL:
.PHONY: all deps build demo test test-nocluster bench sanitize asan tsan fuzz soak format clean

# Sanitizer builds use clang (its -Wthread-safety also checks the lock
# annotations) and only build what the tests need. The consumer tests are
# skipped there: they check packaging, not memory or threads.
SAN_CMAKE := CC=clang CXX=clang++ cmake -S . -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  $(CMAKE_FLAGS) -DFEEDCORE_BENCH=OFF -DFEEDCORE_EXAMPLES=OFF
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
  -fno-omit-frame-pointer
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer

all: build

deps:
	scripts/install-deps

build:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR) -j$(JOBS)

demo: deps build
	$(BUILD_DIR)/examples/feedcore-demo

test: deps build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j2

# The library, tests and benchmarks must build without hiredis's backend;
# the in-memory unit tests are enough to show the build works (the examples
# do not depend on the option and are left out).
test-nocluster: deps
	cmake -S . -B build-nocluster -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) \
	  -DFEEDCORE_REDIS_CLUSTER=OFF -DFEEDCORE_EXAMPLES=OFF
	cmake --build build-nocluster -j$(JOBS)
	ctest --test-dir build-nocluster --output-on-failure -j2 -L unit

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
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD_DIR) -j$(JOBS) --target feedcore-bench
	rm -f $(BENCH_RATIOS)
	$(BUILD_DIR)/bench/feedcore-bench \
	  --commit=$$(git rev-parse --short HEAD 2>/dev/null || echo unknown) \
	  --json=$(BUILD_DIR)/feedcore-bench.json \
	  --markdown=docs/benchmarks.md --chart_data=$(BENCH_RATIOS) $(BENCH_FLAGS)
	@if [ -s $(BENCH_RATIOS) ] && [ "$$(grep -vc '^#' $(BENCH_RATIOS))" -gt 0 ]; then \
	  gnuplot -e "datafile='$(BENCH_RATIOS)'; outfile='docs/benchmarks-vs-redis.png'" \
	    bench/driver/ratio_chart.gp && echo "bench: wrote docs/benchmarks-vs-redis.png"; \
	else \
	  echo "bench: no Redis figures in this run; docs/benchmarks-vs-redis.png left as it was"; \
	fi

sanitize: asan tsan

asan:
	scripts/install-deps --sanitize
	$(SAN_CMAKE) -B build-asan -DCMAKE_CXX_FLAGS="$(ASAN_FLAGS)"
	cmake --build build-asan -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir build-asan --output-on-failure -j2 -LE consumer

tsan:
	scripts/install-deps --sanitize
	$(SAN_CMAKE) -B build-tsan -DCMAKE_CXX_FLAGS="$(TSAN_FLAGS)" \
	  -DFEEDCORE_EXAMPLES=ON
	cmake --build build-tsan -j$(JOBS)
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  ctest --test-dir build-tsan --output-on-failure -L stress

# The library is built with the fuzzers' sanitizers and coverage
# instrumentation (fuzz/CMakeLists.txt); tests, benchmarks and examples are
# left out of this build.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?=
fuzz:
	scripts/install-deps --sanitize
	CC=clang CXX=clang++ cmake -S . -B build-fuzz $(CMAKE_FLAGS) \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFEEDCORE_FUZZ=ON \
	  -DFEEDCORE_TEST=OFF -DFEEDCORE_BENCH=OFF -DFEEDCORE_EXAMPLES=OFF \
	  -DFEEDCORE_INSTALL=OFF
	cmake --build build-fuzz -j$(JOBS)
	fuzz/run-fuzzers build-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

SOAK_FLAGS ?=
SOAK_CSV := $(BUILD_DIR)/soak.csv
soak:
	scripts/install-deps --bench
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD_DIR) -j$(JOBS) --target feedcore_soak
	$(BUILD_DIR)/bench/feedcore_soak --csv=$(SOAK_CSV) $(SOAK_FLAGS)
	gnuplot -e "datafile='$(SOAK_CSV)'; outfile='docs/soak.png'" \
	  bench/soak/plot.gp
	@echo "soak: wrote $(SOAK_CSV) and docs/soak.png"

format:
	find $(FORMAT_DIRS) -type f \( -name '*.h' -o -name '*.cc' \) -print0 \
	  | xargs -0 -r $(CLANG_FORMAT) -i

clean:
	rm -rf $(BUILD_DIR) build-nocluster build-asan build-tsan build-fuzz

# The two commands of the project; everything else is CMake.
#   make demo   the main job, end to end on the default backend
#   make test   every test: both build configurations, qemu, fuzzers
#   make bench  the benchmark suite; writes docs/bench.md and docs/bench-*.svg
.PHONY: demo test bench deps clean
demo:
	@scripts/demo.sh
test:
	@scripts/test.sh
bench:
	@scripts/bench.sh
deps:
	@scripts/install-deps.sh
clean:
	rm -rf build build-asan build-fuzz

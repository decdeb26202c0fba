# The two commands of the project; everything else is CMake.
#   make demo   the main job, end to end on the default backend
#   make test   every test: both build configurations, qemu, fuzzers
.PHONY: demo test deps clean
demo:
	@scripts/demo.sh
test:
	@scripts/test.sh
deps:
	@scripts/install-deps.sh
clean:
	rm -rf build build-asan build-fuzz

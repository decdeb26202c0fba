#!/usr/bin/env bash
# The project's test command (`make test`): installs what is missing, builds
# the normal and the sanitizer configurations, runs every ctest suite in
# both (the qemu kernel run only in the normal one), then runs the fuzzers
# for a bounded time.  Ends with one line: "Summary: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
FUZZ_SECONDS=${UABI_FUZZ_SECONDS:-60}
passed=0
failed=0
failures=()

phase() { printf '\n=== %s ===\n' "$*"; }

# ctest_phase NAME BUILD_DIR [ctest args...]: adds the suite's counts.
ctest_phase() {
	local name=$1 dir=$2
	shift 2
	phase "$name"
	local log
	log=$(mktemp)
	ctest --test-dir "$dir" --output-on-failure --timeout 900 "$@" 2>&1 | tee "$log"
	local line
	line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
	if [[ -z "$line" ]]; then
		echo "$name: ctest printed no result" >&2
		failed=$((failed + 1))
		failures+=("$name: no result")
	else
		local f t
		f=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
		t=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$line")
		passed=$((passed + t - f))
		failed=$((failed + f))
		((f == 0)) || failures+=("$name: $f of $t failed")
	fi
	rm -f "$log"
}

build() {
	local dir=$1
	shift
	phase "build $dir $*"
	cmake -S "$root" -B "$dir" -G Ninja "$@" >/dev/null &&
		ninja -C "$dir"
}

phase "dependencies"
scripts/install-deps.sh || exit 1

if build build -DCMAKE_BUILD_TYPE=RelWithDebInfo; then
	ctest_phase "tests (normal build)" build
else
	failed=$((failed + 1))
	failures+=("build failed")
fi

if build build-asan -DUABI_SANITIZE=ON -DUABI_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug; then
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest_phase "tests (ASan+UBSan build)" build-asan -LE kernel
else
	failed=$((failed + 1))
	failures+=("sanitizer build failed")
fi

if CC=clang CXX=clang++ build build-fuzz -DUABI_FUZZ=ON -DUABI_SANITIZE=ON \
	-DUABI_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo; then
	fuzzdir=build-fuzz/tests/fuzz
	for target in "$fuzzdir"/fuzz_*; do
		name=$(basename "$target")
		[[ $name == fuzz_make_seeds ]] && continue
		phase "fuzz $name for ${FUZZ_SECONDS}s"
		corpus=$fuzzdir/corpus-$name
		rm -rf "$corpus" && mkdir -p "$corpus"
		"$fuzzdir"/fuzz_make_seeds "$corpus"
		# -timeout: an input that hangs fails the run in 30 s instead of
		# libFuzzer's default 20 minutes (the crash file keeps it).
		if "$target" -max_total_time="$FUZZ_SECONDS" -timeout=30 -print_final_stats=1 \
			-artifact_prefix="$fuzzdir/crash-$name-" "$corpus" \
			>"$fuzzdir/$name.log" 2>&1; then
			grep -E 'Done [0-9]+ runs' "$fuzzdir/$name.log"
			passed=$((passed + 1))
		else
			tail -40 "$fuzzdir/$name.log"
			failed=$((failed + 1))
			failures+=("$name found a crash (see $fuzzdir/crash-$name-*)")
		fi
	done
else
	failed=$((failed + 1))
	failures+=("fuzz build failed")
fi

phase "result"
for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "Summary: $passed passed, $failed failed"
((failed == 0))

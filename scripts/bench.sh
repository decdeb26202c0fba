#!/usr/bin/env bash
# The benchmark suite (`make bench`): builds the benchmark binaries, runs
# them with progress on the terminal, runs perftest (unmodified) under the
# drop-in library, and writes docs/bench.md and docs/bench-*.svg from what
# this run measured (scripts/bench_report.py).
#
#   UABI_BENCH_QUICK=1     a short pass (under a minute): one repetition,
#                          shorter runs, perftest at its target sizes only
#   UABI_BENCH_BUILD=DIR   build directory (default: build)
#   UABI_BENCH_OUT=DIR     where the raw results go (default: DIR/bench-results)
#   UABI_BENCH_DOCS=DIR    where bench.md and the plots go (default: docs)
#   UABI_BENCH_PIN=0       do not pin the two processes of the data path and
#                          of perftest to two different CPUs
#   UABI_BENCH_SPINS=N     data path waits yield after N polls (default: never)
#
#   UABI_BENCH_KERNEL=0    skip the kernel module's runs in qemu (bench_control
#                          on the module; perftest on the module against rxe)
#   UABI_BENCH_BASELINE=REV  also build commit REV (its uabid, uabi and
#                          libibverbs.so.1, from `git archive`) and run the
#                          perftest targets on it and on this tree in
#                          alternation, for a before/after table (ratios
#                          measured in the same run)
#
# Backends: in-process and uabid (a private daemon on a socket of this
# run); and the kernel module: bench_control runs again inside a qemu (TCG)
# guest that loads rdma_uabi.ko (tests/kernel/run-qemu.sh --bench-only),
# where the ratios mean something and absolute times are emulated; and
# perftest on the module (its shared memory and its own RoCE device on the
# wire) against Linux's rxe in one guest boot (bench/qemu_vs_rxe.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${UABI_BENCH_BUILD:-build}
quick=${UABI_BENCH_QUICK:-0}
out=${UABI_BENCH_OUT:-$build/bench-results}
docs=${UABI_BENCH_DOCS:-docs}

step() { printf '\n=== [%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

t_start=$(date +%s)
step "dependencies"
kernel=${UABI_BENCH_KERNEL:-1}
if [[ $kernel == 1 ]]; then
	scripts/install-deps.sh
else
	scripts/install-deps.sh --no-kernel
fi

step "build ($build, RelWithDebInfo)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUABI_BUILD_BENCH=ON >/dev/null
ninja -C "$build" bench_control bench_legacy bench_datapath bench_daemon_rtt uabid uabi uabi_verbs

# Repetitions run in random order across benchmarks, so that a burst of
# load from elsewhere hits single repetitions, which the median discards.
if [[ $quick == 1 ]]; then
	reps=1
	ctl_time=0.03 dp_time=0.02
else
	reps=5
	ctl_time=0.1 dp_time=0.1
fi
gb_args=(--benchmark_repetitions="$reps" --benchmark_format=console
	 --benchmark_counters_tabular=false)
((reps > 1)) && gb_args+=(--benchmark_display_aggregates_only=true
			  --benchmark_enable_random_interleaving=true)

rm -rf "$out"
mkdir -p "$out/perftest"
tmp=$(mktemp -d /tmp/uabi-bench.XXXXXX)
uabi=$root/$build/newapi/tools/uabi
export UABI_SOCKET=$tmp/uabid.sock UABI_BACKEND=daemon UABI_BENCH_PROGRESS=1
cleanup() {
	"$uabi" --socket "$UABI_SOCKET" daemon stop >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "mode=$([[ $quick == 1 ]] && echo quick || echo full)"
	echo "min_time=$ctl_time s (control), $dp_time s (data path)"
	echo "repetitions=$reps"
	echo "build=$build"
	cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
	echo "compiler=$("${cxx:-c++}" --version 2>/dev/null | head -1)"
	echo "pinning=${UABI_BENCH_PIN:-1}"
	# +dirty: the source differs from the commit (this run's own outputs,
	# the report and the plots, do not count).
	echo "git=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- . \
		':(exclude)docs/bench.md' ':(exclude)docs/bench-*.svg' 2>/dev/null || echo +dirty)"
} >"$out/meta.env"

step "uabid on a private socket"
"$uabi" --socket "$UABI_SOCKET" daemon start

step "control path: every verb, new / legacy / chains, inproc and daemon; cmtime (bench_control)"
"$build/bench/bench_control" "${gb_args[@]}" --benchmark_min_time="$ctl_time" \
	--benchmark_out="$out/control.json" --benchmark_out_format=json

step "control round trip: in-process, uabid's request slot, uabid's socket (bench_daemon_rtt)"
"$build/bench/bench_daemon_rtt" "${gb_args[@]}" --benchmark_min_time="$ctl_time" \
	--benchmark_out="$out/rtt.json" --benchmark_out_format=json

step "translation alone (bench_legacy, BM_Translate_*)"
"$build/bench/bench_legacy" "${gb_args[@]}" --benchmark_min_time="$ctl_time" \
	--benchmark_filter='BM_Translate' \
	--benchmark_out="$out/translate.json" --benchmark_out_format=json

step "data path, two processes, and the copy limits (bench_datapath)"
"$build/bench/bench_datapath" "${gb_args[@]}" --benchmark_min_time="$dp_time" \
	--benchmark_out="$out/datapath.json" --benchmark_out_format=json

# The kernel backend: the same control benchmarks in a qemu guest that
# loads the module (nothing else runs there).  A failure here is reported,
# not fatal: the rest of the report stands on its own.
kernel_status="not measured (UABI_BENCH_KERNEL=0)"
if [[ $kernel == 1 ]]; then
	step "control path on the kernel module, in a qemu TCG guest (bench_control, backend kernel)"
	# heap_mib=64: room for the chain of 1000 CQs (24 KiB of rings each;
	# the default 16 MiB holds about 600).
	if tests/kernel/run-qemu.sh --work-dir "$out/qemu" --bench-only --module-args heap_mib=64 \
		--bench "$build/bench/bench_control" \
		--bench-args "${gb_args[*]} --benchmark_min_time=$ctl_time" \
		--bench-out "$out/control-kernel.json" >"$out/qemu.log" 2>&1; then
		kernel_status="measured in a qemu TCG guest, kernel $(sed -n 's/^kernel: *\([^ ]*\).*/\1/p' "$out/qemu.log")"
		grep -E '^guest\| (ctl|cmtime)/' "$out/qemu.log" | sed 's/^guest| //' | cut -c1-160 || true
	else
		kernel_status="not measured: the qemu run failed ($(grep -E 'FAIL' "$out/qemu.log" | tail -1 || true))"
		tail -20 "$out/qemu.log"
	fi
	echo "kernel: $kernel_status"

	# The module's data path, shared memory and its own RoCE device with
	# the wire forced, against Linux's rxe on the same NIC: perftest in one
	# guest boot (issue 20's and issue 18's ratios).  Also reported, not
	# fatal, when it fails.
	step "perftest on rdma_uabi.ko (uabi_sw0, kroce0) against rxe, one qemu TCG guest (bench/qemu_vs_rxe.sh)"
	qvr_args=(--rounds 5)
	[[ $quick == 1 ]] && qvr_args=(--rounds 1 --bw-iters 1000 --lat-iters 500)
	if bench/qemu_vs_rxe.sh --build "$build" --work-dir "$out/qemu-rxe" "${qvr_args[@]}" \
		--out "$out/qemu_vs_rxe.env" >"$out/qemu_vs_rxe.log" 2>&1; then
		grep -E 'median| / rxe|on the wire' "$out/qemu_vs_rxe.log" || true
	else
		echo "bench: bench/qemu_vs_rxe.sh failed ($out/qemu_vs_rxe.log)" >&2
		tail -20 "$out/qemu_vs_rxe.log"
	fi
fi

# perftest, unmodified, server and client as two processes under `uabi run`.
free_port() {
	local p=${1}
	while ss -Hltn "sport = :$p" 2>/dev/null | grep -q .; do p=$((p + 1)); done
	echo "$p"
}
port=18600
# Server and client on two different CPUs (bench_datapath pins its two
# processes the same way): left to the scheduler on a busy 2-CPU machine
# they may share one CPU, and every round trip then waits for a scheduler
# tick.  The client, which initiates, gets the CPU on which bench_datapath
# measured the data path and process_vm_writev.  UABI_BENCH_PIN=0: none.
read -r cpu0 cpu1 < <(python3 -c 'import os; c = sorted(os.sched_getaffinity(0)); print(*(c[:2] if len(c) > 1 else ["", ""]))') || true
pin_srv=() pin_cli=()
if [[ ${UABI_BENCH_PIN:-1} != 0 && -n ${cpu1:-} ]] && command -v taskset >/dev/null; then
	pin_cli=(taskset -c "$cpu0") pin_srv=(taskset -c "$cpu1")
fi
# perftest TAG PROG ARGS...: results in $out/perftest/TAG.*  With PT_TOOL
# and PT_SOCKET set, through another build's `uabi` and its own uabid.
perftest() {
	local tag=$1 name=$2
	shift 2
	local tool=${PT_TOOL:-$uabi}
	local UABI_SOCKET=${PT_SOCKET:-$UABI_SOCKET}
	port=$(free_port $((port + 1)))
	printf -- '--- %s %s (port %s)\n' "$name" "$*" "$port"
	local f=$out/perftest/$tag
	timeout 300 "${pin_srv[@]}" "$tool" run -- "$name" -p "$port" "$@" >"$f.server" 2>&1 &
	local spid=$!
	for _ in $(seq 200); do
		ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05
	done
	local crc=0 src=0
	timeout 300 "${pin_cli[@]}" "$tool" run -- "$name" -p "$port" "$@" localhost >"$f.client" 2>&1 || crc=$?
	wait "$spid" || src=$?
	echo "$name $*" >"$f.args"
	echo "server=$src client=$crc" >"$f.status"
	# The result rows (size, iterations, then numbers).
	grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+' "$f.client" || echo "    (no result: server exit $src, client exit $crc)"
}

step "perftest under the drop-in library ($(dpkg-query -W -f='${Version}' perftest 2>/dev/null || echo '?'))"
# Each test with perftest's defaults (latency: 2 bytes, 1000 iterations;
# bandwidth: 64 KiB, 5000 iterations for WRITE): the targets.  Three
# rounds in full mode; the report takes the median run of each test.
rounds=3
[[ $quick == 1 ]] && rounds=1
for r in $(seq "$rounds"); do
	for t in send_lat write_lat read_lat write_bw read_bw send_bw; do
		perftest "ib_$t@$r" "ib_$t"
	done
done
if [[ $quick != 1 ]]; then
	perftest ib_atomic_lat@1 ib_atomic_lat
	perftest ib_atomic_bw@1 ib_atomic_bw
	# Every size from 2 bytes to 8 MiB, for the plots; fewer iterations
	# per size (perftest's pure spinning stalls for whole time slices on
	# a loaded machine, at every size).
	for t in send_lat write_lat read_lat; do perftest "ib_$t-sweep" "ib_$t" -a -n 100; done
	for t in write_bw read_bw send_bw; do perftest "ib_$t-sweep" "ib_$t" -a -n 200; done
fi

# Before and after: the same perftest targets on the baseline's build and
# on this one, alternately, each round on both, more iterations than the
# defaults (the medians decide).
if [[ -n ${UABI_BENCH_BASELINE:-} ]]; then
	base_rev=$(git rev-parse --short "$UABI_BENCH_BASELINE")
	step "baseline $base_rev: build"
	base_src=$root/$build/baseline/src base_build=$root/$build/baseline/build
	rm -rf "$base_src" && mkdir -p "$base_src"
	git archive "$base_rev" | tar -x -C "$base_src"
	cmake -S "$base_src" -B "$base_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DUABI_BUILD_TESTS=OFF -DUABI_BUILD_BENCH=OFF >/dev/null
	ninja -C "$base_build" uabid uabi uabi_verbs >/dev/null
	base_tool=$base_build/newapi/tools/uabi
	base_sock=$tmp/baseline.sock
	"$base_tool" --socket "$base_sock" daemon start
	echo "baseline=$base_rev" >>"$out/meta.env"
	cmp_rounds=5
	[[ $quick == 1 ]] && cmp_rounds=1
	step "baseline $base_rev against this tree: perftest, $cmp_rounds rounds, alternating"
	for r in $(seq "$cmp_rounds"); do
		for t in write_bw write_lat send_lat send_bw; do
			PT_TOOL=$base_tool PT_SOCKET=$base_sock perftest "ib_$t~base@$r" "ib_$t" -n 20000
			perftest "ib_$t~new@$r" "ib_$t" -n 20000
		done
	done
	"$base_tool" --socket "$base_sock" daemon stop >/dev/null 2>&1 || true
fi

# RoCEv2 between two namespaces against plain UDP (root only).
if [[ $(id -u) == 0 ]]; then
	step "RoCEv2 between two network namespaces against UDP (scripts/bench_wire.sh)"
	scripts/bench_wire.sh "$build" "$out/wire.md" || echo "bench: bench_wire.sh failed" >&2
fi

echo "kernel_bench=$kernel_status" >>"$out/meta.env"
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/meta.env"
echo "seconds=$(($(date +%s) - t_start))" >>"$out/meta.env"

step "report"
python3 scripts/bench_report.py "$out" "$docs"
echo "bench: $(($(date +%s) - t_start)) s; wrote $docs/bench.md, $docs/bench-latency.svg, $docs/bench-bandwidth.svg"

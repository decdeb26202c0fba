#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# /init of the qemu guest made by tests/kernel/run-qemu.sh (busybox only).
# Loads rdma_uabi.ko, runs the conformance suite on the kernel backend,
# ioctl_abuse and (when packed) the e2e verbs tests and the multi-process
# XRC tests, unloads the module and checks the kernel log.  Every step
# prints a "UABI-KERNEL-..." marker line that run-qemu.sh parses; the last
# one is "UABI-KERNEL-RESULT: PASS" or "UABI-KERNEL-RESULT: FAIL".

. /lib.sh
guest_marker UABI-KERNEL
export PATH=/bin
cd /tmp

# run-qemu.sh's UABI_QEMU_ONLY: only the steps it names run.
want() {
	[ ! -e /only.steps ] || grep -qw "$1" /only.steps
}

echo "UABI-KERNEL-GUEST: $(uname -r), $(nproc) cpu(s)"
# Only what happens from here on is checked: keep the boot log aside.
dmesg -c >/tmp/boot.dmesg

# run-qemu.sh --module-args: one parameter per line.
if insmod /rdma_uabi.ko $(cat /module.args 2>/dev/null) && [ -c /dev/rdma_uabi ]; then
	step insmod PASS
else
	step insmod FAIL
fi

# run-qemu.sh --bench-only: the benchmark below and nothing else.
if [ -e /bench.only ]; then
	tests=""
else
	tests=1
fi

# Present only when run-qemu.sh got --bench: bench_control on the kernel
# backend; its JSON goes to the console between markers.
run_bench() {
	[ -x /bench/bench_control ] || return 0
	echo "UABI-KERNEL-BENCH-BEGIN"
	LD_LIBRARY_PATH=/e2e-libs:/lib/x86_64-linux-gnu UABI_BACKEND=kernel \
		UABI_BENCH_BACKENDS=kernel /bench/bench_control $(cat /bench.args) \
		--benchmark_out=/tmp/bench.json --benchmark_out_format=json
	rc=$?
	echo "UABI-KERNEL-BENCH-END: exit $rc"
	echo "UABI-KERNEL-BENCH-JSON-BEGIN"
	cat /tmp/bench.json
	echo "UABI-KERNEL-BENCH-JSON-END"
	[ $rc -eq 0 ] && step bench PASS || step bench FAIL
}

if [ -z "$tests" ]; then
	run_bench
else
	start=$(cut -d. -f1 /proc/uptime)
	if want conformance; then
	echo "UABI-KERNEL-CONFORMANCE-BEGIN"
	# One argument per line in /conformance.args (none contains a space).
	UABI_BACKEND=kernel /uabi_conformance $(cat /conformance.args)
	rc=$?
	echo "UABI-KERNEL-CONFORMANCE-END: exit $rc, $(($(cut -d. -f1 /proc/uptime) - start))s"
	[ $rc -eq 0 ] && step conformance PASS || step conformance FAIL
	fi

	if want ioctl_abuse; then
	echo "UABI-KERNEL-ABUSE-BEGIN"
	/ioctl_abuse
	rc=$?
	echo "UABI-KERNEL-ABUSE-END: exit $rc"
	[ $rc -eq 0 ] && step ioctl_abuse PASS || step ioctl_abuse FAIL
	fi

	# Present only when run-qemu.sh got --tool and --security: `uabi
	# objects` on the kernel backend lists what another process of the
	# user holds (DEVICE / LIST_OBJECTS, scope USER).
	if [ -x /uabi ] && [ -x /security_attacks ] && want objects; then
		d=/tmp/objects
		mkdir -p $d
		export LD_LIBRARY_PATH=/e2e-libs:/lib/x86_64-linux-gnu UABI_BACKEND=kernel
		/security_attacks hold $d/qpn $d/done --seconds 120 &
		holder=$!
		i=0
		while [ ! -s $d/qpn ] && [ $i -lt 200 ]; do usleep 100000; i=$((i + 1)); done
		echo "UABI-KERNEL-OBJECTS-BEGIN"
		/uabi objects >$d/out 2>&1
		rc=$?
		cat $d/out
		echo "UABI-KERNEL-OBJECTS-END: exit $rc"
		touch $d/done
		wait $holder
		unset LD_LIBRARY_PATH UABI_BACKEND
		[ $rc -eq 0 ] && grep -q " qp .* qpn $(cat $d/qpn) RC " $d/out &&
			step uabi_objects PASS || step uabi_objects FAIL
	fi

	# Present only when run-qemu.sh got --e2e: the verbs data path through the
	# module's arena, with same-process copies and with process_vm_* copies,
	# and once more with the control verbs on the write path (UABI_VERBS_PATH).
	if [ -x /e2e_inproc_verbs ] && want e2e; then
		for run in 0:new 1:new 0:write; do
			vm=${run%%:*} path=${run#*:}
			echo "UABI-KERNEL-E2E-BEGIN: UABI_SW_FORCE_VM=$vm UABI_VERBS_PATH=$path"
			LD_LIBRARY_PATH=/e2e-libs:/lib/x86_64-linux-gnu UABI_BACKEND=kernel \
				UABI_SW_FORCE_VM=$vm UABI_VERBS_PATH=$path /e2e_inproc_verbs --gtest_color=no
			rc=$?
			echo "UABI-KERNEL-E2E-END: exit $rc"
			[ $rc -eq 0 ] && step "e2e_inproc_verbs(vm=$vm,path=$path)" PASS ||
				step "e2e_inproc_verbs(vm=$vm,path=$path)" FAIL
		done
	fi

	# Present only when run-qemu.sh got --extras: the verbs beyond the basics
	# (timestamps, atomic write, rereg, memory windows, multicast with
	# member processes) on the module, both copy kinds, both control paths.
	if [ -x /e2e_verbs_extras ] && want extras; then
		for run in 0:new 1:new 0:write; do
			vm=${run%%:*} path=${run#*:}
			echo "UABI-KERNEL-EXTRAS-BEGIN: UABI_SW_FORCE_VM=$vm UABI_VERBS_PATH=$path"
			LD_LIBRARY_PATH=/e2e-libs:/lib/x86_64-linux-gnu UABI_BACKEND=kernel \
				UABI_SW_FORCE_VM=$vm UABI_VERBS_PATH=$path timeout 600 \
				/e2e_verbs_extras --gtest_color=no
			rc=$?
			echo "UABI-KERNEL-EXTRAS-END: exit $rc"
			[ $rc -eq 0 ] && step "e2e_verbs_extras(vm=$vm,path=$path)" PASS ||
				step "e2e_verbs_extras(vm=$vm,path=$path)" FAIL
		done
	fi

	# Present only when run-qemu.sh got --import: imported contexts, PDs and
	# MRs on the module (cmd_fd is the device file), in one process and in a
	# forked child that gets the fd over a unix socket, both control paths.
	if [ -x /e2e_verbs_import ] && want import; then
		for run in 0:new 1:new 0:write; do
			vm=${run%%:*} path=${run#*:}
			echo "UABI-KERNEL-IMPORT-BEGIN: UABI_SW_FORCE_VM=$vm UABI_VERBS_PATH=$path"
			LD_LIBRARY_PATH=/e2e-libs:/lib/x86_64-linux-gnu UABI_BACKEND=kernel \
				UABI_SW_FORCE_VM=$vm UABI_VERBS_PATH=$path timeout 300 \
				/e2e_verbs_import --gtest_color=no
			rc=$?
			echo "UABI-KERNEL-IMPORT-END: exit $rc"
			[ $rc -eq 0 ] && step "e2e_verbs_import(vm=$vm,path=$path)" PASS ||
				step "e2e_verbs_import(vm=$vm,path=$path)" FAIL
		done
	fi

	# Present only when run-qemu.sh got --placement: in-order placement
	# between two processes through the module's arena, every mode.
	if [ -x /placement ] && want placement; then
		for mode in write write_imm read send; do
			total=$(cat /placement.total)
			# SEND (three spinning threads on two vCPUs) is the slow
			# one under TCG: a fifth of the count.
			[ $mode = send ] && total=$((total / 5))
			echo "UABI-KERNEL-PLACEMENT-BEGIN: $mode"
			LD_LIBRARY_PATH=/e2e-libs:/lib/x86_64-linux-gnu UABI_BACKEND=kernel \
				timeout 600 /placement --mode $mode --total "$total" \
				--seconds 500
			rc=$?
			echo "UABI-KERNEL-PLACEMENT-END: exit $rc"
			[ $rc -eq 0 ] && step "placement($mode)" PASS || step "placement($mode)" FAIL
		done
	fi

	# Present only when run-qemu.sh got --security (and --placement): the
	# attacks of docs/security.md as uid 65534, while root moves bytes
	# (placement, WRITE and SEND, run after run) and holds a QP the
	# attacker aims at; then one user's CQ floods against another's round
	# trips.
	if [ -x /security_attacks ] && [ -x /placement ] && want security; then
		echo "UABI-KERNEL-SECURITY-BEGIN"
		export LD_LIBRARY_PATH=/e2e-libs:/lib/x86_64-linux-gnu UABI_BACKEND=kernel
		d=/tmp/security
		mkdir -p $d && chmod 1777 $d
		(
			while [ ! -e $d/done ]; do
				for mode in write send; do
					/placement --mode $mode --total 20000 --seconds 300 \
						>$d/victim.last 2>&1 ||
						{ cat $d/victim.last; touch $d/victim.failed; }
				done
			done
		) &
		victim=$!
		/security_attacks hold $d/victim.qpn $d/done &
		holder=$!
		i=0
		while [ ! -s $d/victim.qpn ] && [ $i -lt 200 ]; do usleep 100000; i=$((i + 1)); done
		echo x >$d/xrc-private && chmod 600 $d/xrc-private
		echo x >$d/xrc-public && chmod 644 $d/xrc-public
		/security_attacks drop-to 65534 /security_attacks attacker --victim-uid 0 \
			--victim-qpn "$(cat $d/victim.qpn)" --xrc-file $d/xrc-private \
			--open-xrc-file $d/xrc-public
		rc=$?
		/security_attacks drop-to 65534 /security_attacks flood --seconds 8 &
		flood=$!
		sleep 1
		/security_attacks probe --seconds 5 --p99-ms 250 --max-ms 2000
		prc=$?
		wait $flood
		touch $d/done
		wait $holder
		wait $victim
		unset LD_LIBRARY_PATH UABI_BACKEND
		echo "UABI-KERNEL-SECURITY-END: attacks $rc, probe $prc"
		[ $rc -eq 0 ] && step security_attacks PASS || step security_attacks FAIL
		[ $prc -eq 0 ] && step security_fairness PASS || step security_fairness FAIL
		[ ! -e $d/victim.failed ] && step security_victim_traffic PASS ||
			step security_victim_traffic FAIL
	fi

	# Present only when run-qemu.sh got --xrc: the OFED XRC API across real
	# processes sharing one receive QP through the module (tests/xrc), with
	# each control path.  xrc_prog T: the command line of program T.
	xrc_prog() {
		case $1 in
		mpi) echo /xrc/ofed_xrc_mpi 100 ;;
		mixed) echo /xrc/ofed_xrc_mixed /xrc/upstream_xrc_peer 20 ;;
		both) echo /xrc/ofed_xrc_both 50 ;;
		esac
	}
	if [ -x /xrc/ofed_xrc_mpi ] && [ -x /xrc/ofed_xrc_mixed ] && [ -x /xrc/upstream_xrc_peer ] &&
		[ -x /xrc/ofed_xrc_both ] && want xrc; then
		for path in new write; do
			for t in mpi mixed both; do
				set -- $(xrc_prog $t)
				echo "UABI-KERNEL-XRC-BEGIN: $t UABI_VERBS_PATH=$path"
				LD_LIBRARY_PATH=/e2e-libs:/lib/x86_64-linux-gnu UABI_BACKEND=kernel \
					UABI_VERBS_PATH=$path TMPDIR=/tmp timeout 300 "$@"
				rc=$?
				echo "UABI-KERNEL-XRC-END: exit $rc"
				[ $rc -eq 0 ] && step "xrc_${t}(path=$path)" PASS ||
					step "xrc_${t}(path=$path)" FAIL
			done
		done
		# The same on a RoCE device of the module (on lo): each receive
		# QP served on the wire by one process that holds it at a time,
		# handed over as holders go (docs/wire.md, "XRC").  Passes only
		# if XRC SEND packets crossed the wire.
		if [ -x /probes/uabi ]; then
			ip link set lo up
			if /probes/uabi --backend kernel link add kxrc netdev lo; then
				for t in mpi mixed both; do
					set -- $(xrc_prog $t)
					rm -f /tmp/xrc-wire.trace
					echo "UABI-KERNEL-XRC-BEGIN: $t on kxrc (wire)"
					LD_LIBRARY_PATH=/e2e-libs:/lib/x86_64-linux-gnu UABI_BACKEND=kernel \
						XRC_DEVICE=kxrc XRC_GID_INDEX=0 UABI_WIRE_TRACE=/tmp/xrc-wire.trace \
						TMPDIR=/tmp timeout 300 "$@"
					rc=$?
					n=$(grep -cE " rx op a[0-5] " /tmp/xrc-wire.trace 2>/dev/null)
					echo "UABI-KERNEL-XRC-END: exit $rc, ${n:-0} XRC SEND packets received"
					[ $rc -eq 0 ] && [ "${n:-0}" -gt 0 ] && step "xrc_${t}(wire)" PASS ||
						step "xrc_${t}(wire)" FAIL
				done
				# Deleted under a program watching its async
				# events: it hears IBV_EVENT_DEVICE_FATAL, and once
				# it is gone the device goes.
				if [ -x /probes/ibv_asyncwatch ]; then
					env PATH=/bin:/usr/sbin:/usr/bin:/sbin LD_LIBRARY_PATH=/lib/x86_64-linux-gnu \
						UABI_VERBS_LIB=/probes/lib/libibverbs.so.1 timeout 60 \
						/probes/uabi --backend kernel run -- /probes/ibv_asyncwatch -d kxrc \
						>/tmp/aw.out 2>&1 &
					aw=$!
					sleep 1
					UABI_LINK_DEL_WAIT=30 /probes/uabi --backend kernel link del kxrc >/tmp/del.out 2>&1 &
					del=$!
					i=0
					while [ $i -lt 100 ] && ! grep -q "IBV_EVENT_DEVICE_FATAL" /tmp/aw.out; do
						i=$((i + 1))
						sleep 0.2
					done
					cat /tmp/aw.out
					kill $aw
					wait $del
					rc=$?
					cat /tmp/del.out
					if grep -q "IBV_EVENT_DEVICE_FATAL" /tmp/aw.out && [ $rc -eq 0 ] &&
						! /probes/uabi --backend kernel link | grep -q "^link kxrc/"; then
						step device_fatal PASS
					else
						step device_fatal FAIL
					fi
				else
					step "device_fatal: ibv_asyncwatch not packed" FAIL
					/probes/uabi --backend kernel link del kxrc || step xrc_wire_link_del FAIL
				fi
			else
				step "xrc(wire): uabi link add kxrc netdev lo" FAIL
			fi
		fi
	fi

	# Present only when run-qemu.sh got --probes: the device as middleware
	# and the unmodified InfiniBand diagnostics see it through the module,
	# under `uabi run` (tests/probes), as root and as uid 65534.
	if [ -x /probes/uabi ] && [ -x /probes/check_sysfs ] && want probes; then
		# With port_traffic: the port counters follow known traffic.
		traffic=""
		[ -x /probes/port_traffic ] && traffic=/probes/port_traffic
		for as in self nobody; do
			echo "UABI-KERNEL-PROBES-BEGIN: as $as"
			PATH=/bin:/usr/sbin:/usr/bin:/sbin LD_LIBRARY_PATH=/lib/x86_64-linux-gnu \
				UABI_VERBS_LIB=/probes/lib/libibverbs.so.1 \
				UABI_UMAD_LIB=/probes/lib/libuabi_umad.so \
				timeout 600 sh /probes/run_probes.sh /probes/uabi /probes/check_sysfs \
				--abuse /probes/umad_abuse --backend kernel --as $as \
				${traffic:+--traffic $traffic}
			rc=$?
			echo "UABI-KERNEL-PROBES-END: exit $rc"
			[ $rc -eq 0 ] && step "probes($as)" PASS || step "probes($as)" FAIL
		done
	fi

	# The connection manager on the module (docs/cm.md): Debian's rping,
	# server and client as two processes under `uabi run`, 20 pings with
	# their payload checked; then nothing of theirs is left.
	cmenv="PATH=/bin:/usr/sbin:/usr/bin:/sbin LD_LIBRARY_PATH=/lib/x86_64-linux-gnu UABI_VERBS_LIB=/probes/lib/libibverbs.so.1 UABI_UMAD_LIB=/probes/lib/libuabi_umad.so UABI_RDMACM_LIB=/probes/lib/libuabi_rdmacm.so"
	if [ -x /probes/rping ] && [ -e /probes/lib/libuabi_rdmacm.so ] && want cm; then
		env $cmenv timeout 120 /probes/uabi --backend kernel run -- /probes/rping -s -a 127.0.0.1 -p 7400 -v -C 20 >/tmp/rping.s 2>&1 &
		spid=$!
		sleep 1
		tries=0
		while :; do
			env $cmenv timeout 120 /probes/uabi --backend kernel run -- /probes/rping -c -a 127.0.0.1 -p 7400 -v -C 20 >/tmp/rping.c 2>&1
			crc=$?
			[ $crc -eq 0 ] && break
			grep -qE "REJECTED|RDMA_CM_EVENT_REJECTED|connect error" /tmp/rping.c && [ $tries -lt 20 ] || break
			tries=$((tries + 1))
			sleep 0.5
		done
		wait $spid
		src=$?
		pings=$(grep -c "ping data: rdma-ping-" /tmp/rping.c)
		echo "UABI-KERNEL-CM: server $src, client $crc, client pings $pings"
		tail -n 3 /tmp/rping.s /tmp/rping.c
		[ $src -eq 0 ] && [ $crc -eq 0 ] && [ "$pings" -eq 20 ] && step cm_rping PASS || step cm_rping FAIL
	fi

	# The other librdmacm programs on the module: tests/cm/run_cm.sh's
	# cases, the same checks as on uabid (exit statuses, payloads, results,
	# nothing left in `uabi objects`), with its bash and coreutils' timeout
	# and stdbuf from the host, fewer iterations (UABI_CM_SLOW).  Each case
	# is a step cm_CASE (UABI_QEMU_ONLY: "cm" or the steps' names); a
	# program not installed on the host is a SKIP (run_cm.sh's 77), one of
	# tests/cm's own (run-qemu.sh's --cm-prog) not packed a FAIL.
	if [ -x /probes/uabi ] && [ -e /probes/run_cm.sh ] && [ -x /usr/bin/bash ] &&
		[ -e /probes/lib/libuabi_rdmacm.so ]; then
		# bash's <(...) reads /dev/fd.
		[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
		# ::1 for rping-ipv6 (the kernel gives lo its addresses when
		# it comes up), and an address of this host beyond loopback
		# for host-address: dummy0 (the guest has no NIC), in
		# TEST-NET-1, with no route beyond its subnet, so not-local's
		# TEST-NET-2 address stays on no route.
		ip link set lo up
		if [ -e /cm.modules ] && guest_insmod /cm.modules && ip link set dummy0 up &&
			ip addr add 192.0.2.15/24 dev dummy0; then
			echo "UABI-KERNEL-CM-NET: dummy0 192.0.2.15/24"
		else
			echo "UABI-KERNEL-CM-NET: no dummy0 (host-address fails)"
		fi
		for c in ucmatose udaddy cmtime rdma-server-client xrc rstream riostream mckey \
			send-bw write-lat read-bw killed-client no-listener rping-ipv6 host-address \
			not-local other-user timeouts half-connect abuse af-ib options; do
			want cm || want "cm_$c" || continue
			case $c in
			timeouts) prog=/probes/cm/cm_ucma_timeouts ;;
			half-connect) prog=/probes/cm/cm_ucma_half_connect ;;
			abuse) prog=/probes/cm/cm_ucma_abuse ;;
			af-ib) prog=/probes/cm/cm_ucma_af_ib ;;
			options) prog=/probes/cm/cm_ucma_options ;;
			*) prog="" ;;
			esac
			if [ -n "$prog" ] && [ ! -x "$prog" ]; then
				echo "UABI-KERNEL-CM-CASE: $c: $prog not packed (run-qemu.sh --cm-prog)"
				step "cm_$c" FAIL
				continue
			fi
			# timeouts shortens the module's CM timeouts for itself:
			# they must be as before for what runs after it.
			k=/sys/module/rdma_uabi/parameters
			kcm=$(cat $k/cm_response_timeout $k/cm_retries $k/cm_mra_timeout | tr '\n' ' ')
			t0=$(cut -d. -f1 /proc/uptime)
			env $cmenv PATH=/usr/bin:/bin:/usr/sbin:/sbin UABI_BACKEND=kernel UABI_CM_SLOW=1 \
				timeout 300 /usr/bin/bash /probes/run_cm.sh /probes/uabi $c $prog >/tmp/cm.out 2>&1
			rc=$?
			now=$(cat $k/cm_response_timeout $k/cm_retries $k/cm_mra_timeout | tr '\n' ' ')
			if [ "$now" != "$kcm" ]; then
				echo "cm_$c: the module's CM timeouts were not put back: $now, not $kcm"
				rc=1
			fi
			echo "UABI-KERNEL-CM-CASE: $c exit $rc, $(($(cut -d. -f1 /proc/uptime) - t0))s"
			tail -n 40 /tmp/cm.out
			case $rc in
			0) step "cm_$c" PASS ;;
			77) echo "UABI-KERNEL-STEP: cm_$c SKIP" ;;
			*) step "cm_$c" FAIL ;;
			esac
		done
	fi

	run_bench
fi

refs=$(cat /sys/module/rdma_uabi/refcnt 2>/dev/null)
[ "$refs" = 0 ] && step module_refcnt_zero PASS || step "module_refcnt_zero($refs)" FAIL
if rmmod rdma_uabi && [ ! -e /sys/module/rdma_uabi ] && [ ! -e /dev/rdma_uabi ]; then
	step rmmod PASS
else
	step rmmod FAIL
fi

dmesg >/tmp/test.dmesg
echo "UABI-KERNEL-DMESG-BEGIN"
cat /tmp/test.dmesg
echo "UABI-KERNEL-DMESG-END"
if grep -E 'WARNING|BUG|Oops|refcount|leak|general protection|Call Trace|RIP:|soft lockup|rcu.*stall|hung_task|blocked for more than' \
	/tmp/test.dmesg >/tmp/bad.dmesg; then
	cat /tmp/bad.dmesg
	step dmesg_clean FAIL
else
	step dmesg_clean PASS
fi

finish
# Not reached; should poweroff fail, init exiting panics and panic=-1
# reboots, which -no-reboot turns into qemu exiting.
exit 0

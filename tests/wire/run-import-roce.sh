#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# ibv_import_device() of a RoCE device's context on a uabid of its own
# (a RoCE device on lo, at a port of its own).
# Usage: run-import-roce.sh UABI_TOOL IMPORT_ROCE
set -uo pipefail
tool=$1 prog=$2
dir=$(mktemp -d /tmp/uabi-import-roce.XXXXXX)
export UABI_SOCKET=$dir/uabid.sock UABI_BACKEND=daemon
trap '"$tool" daemon stop >/dev/null 2>&1; rm -rf "$dir"' EXIT
UABI_WIRE_PORT=$((20000 + RANDOM % 20000)) UABI_IDLE_EXIT=0 "$tool" link add roce_lo netdev lo >/dev/null ||
	{ echo "run-import-roce: FAIL: uabi link add"; exit 1; }
# The imported context's endpoint binds a port of its own (not uabid's;
# 4791 may be held by another RoCE device of this host).
UABI_WIRE_PORT=$((40000 + RANDOM % 20000)) "$tool" run -- "$prog" roce_lo

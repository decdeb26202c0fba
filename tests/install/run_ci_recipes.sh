#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# docs/ci.md's recipes, run as written: the shell of every run: step of the
# GitHub Actions job, then the Dockerfile's instructions, each in a fresh
# throwaway Debian 12 root (lib.sh) holding the package just built where
# the recipe expects it (the job's working directory; the build context).
#   run_ci_recipes.sh CI_MD PKG_DIR WORK_DIR SOURCE_DIR BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"
page=$1 pkgdir=$2 work=$3 src=$4 build=$5
need_root

debs=("$pkgdir"/rdma-uabi_*.deb)
[[ -f ${debs[0]} ]] || die "no rdma-uabi_*.deb in $pkgdir (the package_build test makes it)"
# The job's pingpong uses this port as written.
if ss -Hltn 'sport = :18515' | grep -q .; then
	die "port 18515 (the recipe's ibv_rc_pingpong port) is in use on this machine"
fi

rm -rf "$work"
mkdir -p "$work"
python3 "$here/extract_ci_recipes.py" "$page" "$work/recipes"

step "GitHub Actions job: its run: steps in a throwaway root"
mkdir -p "$work/gha/in/workspace"
cp "$work"/recipes/gha-*.sh "$work/gha/in/"
cp "${debs[0]}" "$work/gha/in/workspace/"
chmod -R a+rX "$work/gha/in"
# Each step its own shell, as the runner does (bash -e), in the workspace.
cat >"$work/gha/in/job.sh" <<'JOB'
cd /tmp/in/workspace
for s in $(ls /tmp/in/gha-*.sh | sort -t- -k2 -n); do
	echo "--- step ${s##*/}"
	cat "$s"
	echo "---"
	bash -e "$s" || { echo "step ${s##*/} failed: exit $?"; exit 1; }
done
JOB
overlay_root "$work/gha" --hide "$build" --hide "$src" -- /bin/bash /tmp/in/job.sh \
	2>&1 | tee "$work/gha.log" | grep -v "Reading database"
((PIPESTATUS[0] == 0)) || die "a step of the GitHub Actions job failed"
grep -q "hca_id:.*uabi_sw0" "$work/gha.log" || die "the job's ibv_devinfo showed no uabi_sw0"
[[ $(grep -cE '^[0-9]+ bytes in [0-9.]+ seconds' "$work/gha.log") -eq 2 ]] ||
	die "the job's ibv_rc_pingpong pair did not both report their bytes"

step "Dockerfile: its instructions in a throwaway root"
mkdir -p "$work/docker/in/context"
cp "$work/recipes/docker.sh" "$work/docker/in/"
cp "${debs[0]}" "$work/docker/in/context/"
chmod -R a+rX "$work/docker/in"
overlay_root "$work/docker" --hide "$build" --hide "$src" -- \
	/bin/bash -c 'cd /tmp/in/context && /bin/bash -e /tmp/in/docker.sh' \
	2>&1 | tee "$work/docker.log" | grep -v "Reading database"
((PIPESTATUS[0] == 0)) || die "an instruction of the Dockerfile failed"
grep -q "hca_id:.*uabi_sw0" "$work/docker.log" || die "the image's CMD showed no uabi_sw0"
echo "PASS: docs/ci.md's GitHub Actions job and Dockerfile work as written"

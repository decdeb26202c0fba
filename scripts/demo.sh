#!/usr/bin/env bash
# The project's main job (`make demo`): builds, then runs the newapi demo
# end to end on the default backend.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --no-kernel
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build uabi-demo
exec build/newapi/uabi-demo

#!/usr/bin/env bash
# docs/uapi.md shows the output of uabi-dump-example; fail if they differ.
set -euo pipefail
prog=$1 doc=$2
expected=$("$prog")
actual=$(awk '/^request \(/{p=1} p&&/^```/{exit} p' "$doc")
if [[ "$expected" != "$actual" ]]; then
	echo "docs/uapi.md's hex dump is stale; the program prints:" >&2
	echo "$expected" >&2
	exit 1
fi
echo "docs/uapi.md hex dump matches uabi-dump-example"

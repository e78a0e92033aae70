#!/bin/bash
# docs/layers.md is what `memo-fuzz layers --markdown` prints: the reference cannot go stale.
set -euo pipefail
memo=$1
root=$(cd "$2/../.." && pwd)
if ! diff <("$memo" layers --markdown) "$root/docs/layers.md" >/dev/null; then
  echo "FAIL: docs/layers.md is stale; regenerate: build/bin/memo-fuzz layers --markdown > docs/layers.md"
  exit 1
fi
echo "docs/layers.md current"

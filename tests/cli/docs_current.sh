#!/bin/bash
# The generated references in docs/ are what memo-fuzz prints, so they cannot go stale:
# docs/layers.md (`memo-fuzz layers --markdown`) and docs/cli.md (`memo-fuzz help --markdown`).
set -euo pipefail
memo=$1
root=$(cd "$2/../.." && pwd)
stale=0
check() {  # check FILE COMMAND...
  local file=$1; shift
  if ! diff <("$memo" "$@") "$root/$file" >/dev/null; then
    echo "FAIL: $file is stale; regenerate: build/bin/memo-fuzz $* > $file"
    stale=1
  fi
}
check docs/layers.md layers --markdown
check docs/cli.md help --markdown
[[ $stale == 0 ]] || exit 1
echo "docs/layers.md and docs/cli.md current"

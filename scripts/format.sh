#!/bin/bash
# Applies .clang-format to memo's C++ sources (headers, tests, examples, benchmarks; not the
# generated single header). With --check, changes nothing and fails naming each file that would
# change: the test `format` runs it so.
set -euo pipefail
cd "$(dirname "$0")/.."
# The pinned clang-format of .venv/ (scripts/setup.sh), else the one on the PATH.
default_format=clang-format
[[ -x .venv/bin/clang-format ]] && default_format=.venv/bin/clang-format
CLANG_FORMAT=${CLANG_FORMAT:-$default_format}
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files 'include/*.hpp' 'include/*.cuh' 'tests/*.cpp' 'tests/*.hpp' 'tests/*.cu' 'examples/*.cpp' 'examples/*.hpp' 'examples/*.cu' 'bench/*.cpp')
else
  mapfile -t files < <(find include tests examples bench -name '*.hpp' -o -name '*.cpp' -o -name '*.cuh' -o -name '*.cu' | sort)
fi
if [[ "${1:-}" == "--check" ]]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$CLANG_FORMAT" --dry-run --Werror "$f" >/dev/null 2>&1; then
      echo "format: $f is not as .clang-format lays it out (scripts/format.sh, or make format, fixes it)"
      bad=1
    fi
  done
  [[ $bad == 0 ]] && echo "format: ${#files[@]} files as .clang-format lays them out"
  exit $bad
fi
"$CLANG_FORMAT" -i "${files[@]}"

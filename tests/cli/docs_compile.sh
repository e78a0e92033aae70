#!/bin/bash
# Every C++ block in docs/ and README.md that says it is complete compiles as written. A block
# whose first line is `// file: PATH` is a file of its page's program: the blocks of one page are
# written under one directory by their paths, and each .cpp among them is compiled (syntax only,
# with the directory and memo's include/ on the include path). Fragments carry no such line.
set -euo pipefail
root=$(cd "$2/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$root" "$work" <<'PY'
import pathlib, re, sys
root, work = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
pages = sorted((root / "docs").glob("*.md")) + [root / "README.md"]
count = 0
for page in pages:
    text = page.read_text()
    for block in re.findall(r"```cpp\n(.*?)```", text, re.S):
        first = block.split("\n", 1)[0]
        m = re.match(r"//\s*file:\s*(\S+)", first)
        if not m:
            continue
        out = work / page.stem / m.group(1)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(block)
        count += 1
print(f"{count} files from complete blocks", file=sys.stderr)
PY
cxx=${CXX:-c++}
n=0
fail=0
for src in $(find "$work" -name '*.cpp' | sort); do
  page=$(echo "${src#$work/}" | cut -d/ -f1)
  n=$((n + 1))
  if ! "$cxx" -std=c++20 -fsyntax-only -I "$work/$page" -I "$root/include" -I /usr/include/eigen3 "$src" 2>"$work/err.txt"; then
    echo "FAIL: docs/$page.md: ${src#$work/$page/} does not compile:"
    head -20 "$work/err.txt"
    fail=1
  fi
done
[[ $n -gt 0 ]] || { echo "FAIL: no complete C++ block found in docs/"; exit 1; }
[[ $fail == 0 ]] || exit 1
echo "$n complete programs in docs/ compile"

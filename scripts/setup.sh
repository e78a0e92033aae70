#!/bin/bash
# Installs what memo needs to build and test on Debian 12 or 13, and only what is missing: Debian
# packages, the Node.js workers' npm packages, and the Python libraries of requirements.txt in a
# virtual environment at .venv/ in the checkout.
# Idempotent: prints one line per thing it installs, nothing when all are present.
# MEMO_SKIP_SETUP=1 skips it (for machines set up by other means).
set -euo pipefail

# Debian packages memo needs. One list: add new needs here.
DEBIAN_PACKAGES=(
  g++
  make
  cmake
  ccache
  python3
  pkg-config
  libeigen3-dev
  libfmt-dev
  nlohmann-json3-dev
  libsqlite3-dev
  libgtest-dev
  libbenchmark-dev
  libonnx-dev
  libprotobuf-dev
  python3-onnx
  python3-torchvision
  chromium
  libopenmpi-dev
  openmpi-bin
)

if [[ "${MEMO_SKIP_SETUP:-0}" == "1" ]]; then
  exit 0
fi

if ! command -v dpkg >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "setup.sh: not a Debian system (no dpkg/apt-get); install the equivalents of:" \
       "${DEBIAN_PACKAGES[*]}" >&2
  exit 0
fi

installed() {
  dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed$'
}

missing=()
for package in "${DEBIAN_PACKAGES[@]}"; do
  installed "$package" || missing+=("$package")
done
# Node.js and npm run the ONNX Runtime worker. Any node and npm on the PATH will do (a machine may
# have them from elsewhere than Debian); Debian's are installed only when there are none.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

if ((${#missing[@]} == 0)); then
  as_root=(env)
elif [[ "$(id -u)" == "0" ]]; then
  as_root=(env)
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo env)
else
  echo "setup.sh: missing packages (${missing[*]}) and neither root nor sudo is available;" \
       "run as root: apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

log="$(mktemp -t memo-setup.XXXXXX.log)"
trap 'rm -f "$log"' EXIT
apt() {
  if ! "${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get "$@" >>"$log" 2>&1; then
    echo "setup.sh: apt-get $* failed:" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
}

if ((${#missing[@]} > 0)); then
  apt update -q
  for package in "${missing[@]}"; do
    echo "setup.sh: installing $package"
  done
  apt install -y -q --no-install-recommends "${missing[@]}"
fi

# The ONNX Runtime worker's one npm package, onnxruntime-node (pinned in tools/ort-worker). Its
# install script would download a GPU build; ONNXRUNTIME_NODE_INSTALL=skip keeps the CPU library
# that ships inside the package.
ort_dir="$(cd "$(dirname "$0")/../tools/ort-worker" && pwd)"
if [[ ! -f "$ort_dir/node_modules/onnxruntime-node/package.json" ]]; then
  echo "setup.sh: installing onnxruntime-node in tools/ort-worker"
  if ! (cd "$ort_dir" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error >>"$log" 2>&1); then
    echo "setup.sh: npm install in $ort_dir failed:" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
fi

# The TensorFlow.js worker's packages (pinned in tools/tfjs-worker): tfjs-core, tfjs-layers and
# the cpu and wasm backends, pure JavaScript and WebAssembly (the .wasm files ship inside the
# package; tfjs-node, whose install downloads a native library, is not used).
tfjs_dir="$(cd "$(dirname "$0")/../tools/tfjs-worker" && pwd)"
if [[ ! -f "$tfjs_dir/node_modules/@tensorflow/tfjs-backend-wasm/package.json" ]]; then
  echo "setup.sh: installing TensorFlow.js in tools/tfjs-worker"
  if ! (cd "$tfjs_dir" && npm ci --no-audit --no-fund --loglevel=error >>"$log" 2>&1); then
    echo "setup.sh: npm install in $tfjs_dir failed:" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
fi

# The Python libraries under test (PyTorch, TensorFlow, Keras, JAX) and the format test's
# clang-format, pinned in requirements.txt, in .venv/. Python 3.11 is the version their wheels on
# this machine's disk are built for: python3.11 where it is on the PATH, else python3. The stamp
# holds the requirements' checksum, so an unchanged file costs nothing.
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv"
want="$(sha256sum "$root/requirements.txt" | cut -d' ' -f1)"
if [[ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]]; then
  python=$(command -v python3.11 || command -v python3)
  echo "setup.sh: installing requirements.txt into .venv/ ($("$python" --version))"
  if [[ ! -x "$venv/bin/python" ]] && ! "$python" -m venv "$venv" >>"$log" 2>&1; then
    echo "setup.sh: $python -m venv $venv failed:" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
  if ! "$venv/bin/pip" install --disable-pip-version-check -q -r "$root/requirements.txt" >>"$log" 2>&1; then
    echo "setup.sh: pip install -r requirements.txt failed:" >&2
    grep -v '^WARNING: Location' "$log" | tail -n 30 >&2
    exit 1
  fi
  echo "$want" >"$venv/.requirements.sha256"
fi

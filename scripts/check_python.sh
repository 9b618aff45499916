#!/usr/bin/env bash
# check_python.sh BUILD_DIR — the Python binding as a user installs it: installs BUILD_DIR (a
# configured, built dualbatch tree) into a temporary prefix, makes a virtual environment
# (python3 -m venv --system-site-packages: the system's numpy and pytest serve, pip installs them
# when missing), `pip install`s python/ into it, and runs python/tests from outside the source
# tree with the installed package and the installed library, found through the loader path
# (LD_LIBRARY_PATH=<prefix>/lib, DUALBATCH_LIBRARY unset).  Then checks the two other ways to
# point at a library: DUALBATCH_LIBRARY=<BUILD_DIR>'s libdualbatch.so.0, and a copy bundled into
# the package before `pip install`.  Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/check_python.sh BUILD_DIR}
src=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
lib=$(find "$prefix" -name 'libdualbatch.so.0' | head -1)
[ -n "$lib" ] || { echo "the install of $build has no libdualbatch.so.0" >&2; exit 1; }
built=$(cd "$build/src" && pwd)/libdualbatch.so.0

python3 -m venv --system-site-packages "$work/venv"
py=$work/venv/bin/python
if ! "$py" -c "import numpy, pytest" 2>/dev/null; then
  echo "installing numpy and pytest into the venv"
  "$py" -m pip install -q numpy pytest
fi
isolation=()
"$py" -c "import setuptools, wheel" 2>/dev/null && isolation=(--no-build-isolation) # offline
pip_install() { # a copy of python/ (pip's build leaves nothing in the tree), optionally bundling $1
  rm -rf "$work/python" && cp -r python "$work/python" && rm -rf "$work/python/dualbatch/lib"
  if [ $# -gt 0 ]; then mkdir "$work/python/dualbatch/lib" && cp "$1" "$work/python/dualbatch/lib/"; fi
  "$py" -m pip install -q --force-reinstall --no-deps "${isolation[@]}" "$work/python"
}
pip_install
cd "$work"
export PYTHONDONTWRITEBYTECODE=1 DUALBATCH_DEVICE=
unset DUALBATCH_LIBRARY
probe='import dualbatch as db; print(db.library_found_by, db.library_path, db.__file__, db.library_version_string(), sep="|")'
expect() { # expect HOW LIBRARY: the probe's output (found by, library, package) is as said
  IFS='|' read -r how path pkg version <<<"$(cat)"
  echo "  found by: $how; library: $path; version $version; package: $pkg"
  [ "$how" = "$1" ] && [ "$path" = "$(realpath "$2")" ] && [[ "$pkg" == "$work/venv/"* ]] ||
    { echo "expected the library $2 found by $1, and the package from the venv" >&2; exit 1; }
}
echo "== the installed package, the installed library on the loader path: pytest python/tests"
LD_LIBRARY_PATH=$(dirname "$lib") "$py" -c "$probe" | expect "loader path" "$lib"
LD_LIBRARY_PATH=$(dirname "$lib") "$py" -m pytest -q -rs -p no:cacheprovider "$src/python/tests"
echo "== DUALBATCH_LIBRARY=$built"
DUALBATCH_LIBRARY=$built "$py" -c "$probe" | expect DUALBATCH_LIBRARY "$built"
echo "== a copy of the library bundled into the package before pip install"
(cd "$src" && pip_install "$lib")
"$py" -c "$probe" | expect "bundled copy" "$("$py" -c 'import dualbatch, os; print(os.path.dirname(dualbatch.__file__))')/lib/libdualbatch.so.0"

#!/usr/bin/env bash
# The C extensions under the sanitizers, then a bounded differential fuzz (.ci/run calls
# this; run it by hand the same way, from the repository, in its venv).
#
# 1. ASan + UBSan: the three extensions compiled with -fsanitize=address,undefined into
#    a copy of src/ in a separate build directory (the installed ones are untouched),
#    and the C-facing tests run against that copy, with libasan preloaded (Python
#    itself is not built with ASan), PYTHONMALLOC=malloc (so that ASan sees every
#    Python object) and leak detection off (the interpreter keeps its own at exit).
#    Any report fails the run (UBSan does not recover).
# 2. The same tests on each other CPython from 3.10 on that is installed (on PATH or
#    through pyenv; Debian 12's own is 3.11 only).
# 3. scripts/fuzz_c.py, on the same sanitized build: the C against its Python references
#    on mutated manifests, through the entry points and the CLI; a fixed seed, then a
#    random one (printed). Arguments to this script go to pytest.
#
# Environment: C_CHECKS_FUZZ_SECONDS (seconds for each fuzz phase, default 40: two seeds,
# four phases, about 5.5 minutes), C_CHECKS_BUILD (default: build/c-checks).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python}
BUILD=${C_CHECKS_BUILD:-build/c-checks}
FUZZ_SECONDS=${C_CHECKS_FUZZ_SECONDS:-40}
TESTS=(
    tests/native/test_c_defects.py
    tests/native/test_c_api.py
    tests/native/test_ctree.py
    tests/parse/test_tree_get.py
    tests/edit/test_treecheck.py
    tests/native/test_transport.py
    tests/native/test_resolve_c.py
    tests/native/test_classify_c.py
    tests/native/test_resources_c.py
    tests/native/test_c_odd_inputs.py
    tests/analyze/test_refs_walk.py
    tests/native/test_jsonout.py
    tests/analyze/test_pool.py
    tests/parse/test_libyaml.py
)

echo "== C extensions under AddressSanitizer and UndefinedBehaviorSanitizer"
rm -rf "$BUILD"
mkdir -p "$BUILD"
cp -r src "$BUILD/src"
find "$BUILD/src" -name '*.so' -delete
INCLUDE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
SUFFIX=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
FLAGS=(-shared -fPIC -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined
       -fno-sanitize-recover=all -Wall -Werror -I"$INCLUDE" -Isrc/cmhash)
gcc "${FLAGS[@]}" src/cmhash/native/_ctree.c -lyaml -o "$BUILD/src/cmhash/native/_ctree$SUFFIX"
gcc "${FLAGS[@]}" src/cmhash/native/_cjson.c -o "$BUILD/src/cmhash/native/_cjson$SUFFIX"
gcc "${FLAGS[@]}" src/cmhash/native/_cpack.c -o "$BUILD/src/cmhash/native/_cpack$SUFFIX"

ASAN_LIB=$(gcc -print-file-name=libasan.so)
sanitized() {
    env PYTHONPATH="$PWD/$BUILD/src" LD_PRELOAD="$ASAN_LIB" PYTHONMALLOC=malloc \
        ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$@"
}
# the tests must load the sanitized modules, not the installed ones
sanitized "$PY" - "$BUILD" <<'EOF'
import sys
from pathlib import Path

import cmhash.native._cjson, cmhash.native._cpack, cmhash.native._ctree

for m in (cmhash.native._cjson, cmhash.native._cpack, cmhash.native._ctree):
    assert Path(m.__file__).resolve().is_relative_to(Path(sys.argv[1]).resolve()), m.__file__
print("sanitized modules:", ", ".join(m.__name__ for m in (cmhash.native._cjson, cmhash.native._cpack, cmhash.native._ctree)))
EOF
# (less one test that times a pipe against a sleeping parent, the depth-limit test,
# whose 1,000-level comparison runs out of recursion under the sanitizers, and the one
# that installs two PyYAML releases with pip: the plain suite runs them)
sanitized "$PY" -m pytest -q -p no:randomly -p no:cacheprovider \
    --deselect tests/analyze/test_pool.py::test_a_worker_does_not_wait_for_the_parent_to_read \
    --deselect tests/native/test_ctree.py::test_depth_limit \
    --deselect tests/parse/test_libyaml.py::test_under_both_pyyaml_releases \
    "$@" "${TESTS[@]}"

echo "== the C-facing tests on the other CPythons requires-python claims (>=3.10)"
# Each one on this machine gets its own venv and build; one that is not here is named.
# (python3.X on PATH, else pyenv's, when either runs)
find_python() {
    local exe
    for exe in "$(command -v "python$1" || true)" \
        "$(pyenv root 2>/dev/null || true)"/versions/"$1".*/bin/"python$1"; do
        if [ -n "$exe" ] && [ -x "$exe" ] && "$exe" -c 'pass' 2>/dev/null; then
            echo "$exe"
            return
        fi
    done
}
for v in 3.10 3.12 3.13 3.14; do
    exe=$(find_python "$v")
    if [ -z "$exe" ]; then
        echo "python$v: not installed on this machine, not tested"
        continue
    fi
    echo "python$v: $exe ($("$exe" -c 'import sys; print(sys.version.split()[0])'))"
    "$exe" -m venv "$BUILD/venv-$v"
    "$BUILD/venv-$v/bin/python" -m pip install --quiet --upgrade pip
    "$BUILD/venv-$v/bin/python" -m pip install --quiet -e '.[test]'
    # (the depth-limit tests compare 1,000-level trees in Python, past the C recursion
    # limit 3.12+ keep of their own; the PyYAML releases test: as above)
    "$BUILD/venv-$v/bin/python" -m pytest -q -p no:randomly -p no:cacheprovider \
        --deselect tests/native/test_ctree.py::test_depth_limit \
        --deselect tests/parse/test_libyaml.py::test_depth_limit_is_cmhashs_on_every_path \
        --deselect tests/parse/test_libyaml.py::test_under_both_pyyaml_releases "$@" "${TESTS[@]}"
done

echo "== differential fuzz: the C (sanitized) against its Python references"
sanitized "$PY" scripts/fuzz_c.py --seconds "$FUZZ_SECONDS" --out "$BUILD/fuzz-failure.yaml"

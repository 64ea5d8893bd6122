#!/usr/bin/env bash
# Build the Cython core with AddressSanitizer + UndefinedBehaviorSanitizer in a copy of this tree
# (the normal in-place build is left alone) and run tests or the fuzzer against it.
#
#   scripts/sanitize.sh build                      # copy the tree, build with TICDC_FAST_SANITIZE=1
#   scripts/sanitize.sh sync                       # refresh the copy's Python files, no rebuild
#   scripts/sanitize.sh test [pytest args]         # fuzz + bad-input tests (default) under ASan/UBSan
#   scripts/sanitize.sh fuzz [scripts/fuzz.py args]  # the long fuzzer under ASan/UBSan
#   scripts/sanitize.sh python [args]              # any Python command with the sanitizer runtimes
#
# PYTHON (default: python3) runs tests and the fuzzer, BUILD_PYTHON (default: $PYTHON) runs the
# build and needs Cython and setuptools (same Python version); TICDC_FAST_ASAN_DIR (default /tmp/ticdc_fast-asan)
# is where the copy lives.  `build` refreshes the copy from the working tree, uncommitted edits included.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${PYTHON:-python3}"
build_py="${BUILD_PYTHON:-$py}"
dir="${TICDC_FAST_ASAN_DIR:-/tmp/ticdc_fast-asan}"
cmd="${1:-}"
[ $# -gt 0 ] && shift

run() {
    [ -d "$dir/ticdc_fast" ] || { echo "no sanitizer build in $dir: run '$0 build' first" >&2; exit 2; }
    local asan ubsan
    asan="$(gcc -print-file-name=libasan.so)"
    ubsan="$(gcc -print-file-name=libubsan.so)"
    cd "$dir"
    # CPython leaks by design (detect_leaks=0); any UBSan report is fatal, with its stack.
    env LD_PRELOAD="$asan:$ubsan" \
        ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0:print_summary=1}" \
        UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:print_summary=1}" \
        PYTHONPATH="$dir" TICDC_FAST_SANITIZED=1 "$py" "$@"
}

copy_tree() {
    mkdir -p "$dir"
    # tracked and new files of the working tree, not build products
    (cd "$here" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | (cd "$dir" && tar -xf -)
}

case "$cmd" in
    sync)
        copy_tree
        ;;
    build)
        copy_tree
        (cd "$dir" && TICDC_FAST_SANITIZE=1 "$build_py" setup.py build_ext --inplace --force -q)
        run -c "import ticdc_fast._impl as i; assert i.core is not None; print('sanitized core:', i.core.__file__)"
        ;;
    test)
        if [ $# -eq 0 ]; then
            set -- tests/test_open_fuzz.py tests/test_simple_fuzz.py tests/test_avro_fuzz.py \
                   tests/test_fuzz_campaign.py tests/test_open_bad_input.py tests/test_simple_bad_input.py \
                   tests/test_avro_bad_input.py -q -p no:cacheprovider
        fi
        run -m pytest "$@"
        ;;
    fuzz)
        run scripts/fuzz.py "$@"
        ;;
    python)
        run "$@"
        ;;
    *)
        sed -n '2,15p' "$0" >&2
        exit 2
        ;;
esac

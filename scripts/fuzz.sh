#!/bin/bash
# SPDX-License-Identifier: MIT
# The long fuzz runs: build the libFuzzer targets (build-fuzz/, clang) and run
# one of them for N inputs from the seed corpus that the fuzz ctests use
# (tests/fuzz/run_fuzz.py). CI runs each target for 60 s; this is the run
# to do before trusting a change to the receive path or the engine.
#
#   scripts/fuzz.sh [decode|xport] [N]      default: xport, 10000000 inputs
#
# Crash artifacts go to build-fuzz/fuzz-artifacts[-xport]/; the exit status is
# libFuzzer's (0: no crash, no sanitizer report, in N inputs).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-xport}
runs=${2:-10000000}
case $target in
decode) extra=() ;;
xport) extra=(--script) ;;
*) echo "fuzz.sh: unknown target '$target' (decode or xport)" >&2; exit 2 ;;
esac
[[ $runs =~ ^[0-9]+$ ]] || { echo "fuzz.sh: N must be a number of inputs, not '$runs'" >&2; exit 2; }
command -v clang >/dev/null || { echo "fuzz.sh: needs clang (apt-get install clang)" >&2; exit 2; }
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DUROCE_FUZZ=ON -DUROCE_TESTS=ON >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "fuzz_$target" uroce >/dev/null
start=$(date +%s)
rc=0
/usr/bin/python3 tests/fuzz/run_fuzz.py "build-fuzz/bin/fuzz_$target" build-fuzz/bin/uroce "runs=$runs" \
	"build-fuzz/fuzz-artifacts$([[ $target == xport ]] && echo -xport)" "${extra[@]}" || rc=$?
echo "fuzz.sh: fuzz_$target, $runs inputs, $(($(date +%s) - start)) s, exit $rc"
exit $rc

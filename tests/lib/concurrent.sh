#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Proof that test suites never collide: configures and builds two build trees
# of this source, then runs two complete `ctest -j2` of them at the same time.
# It passes only when both runs pass, run the same tests, and no test of
# either was skipped because its test network was taken (which would mean the
# allocator of tests/lib/TestNet.cmake let them meet). The two trees must own
# different slots; when they have the same one (their build directories hash
# to it, or it was set), the second is configured with the next slot
# (-DUROCE_TEST_SLOT), and it says so.
# The last line it prints starts with "concurrent: PASS" or "concurrent: FAIL".
#
#   tests/lib/concurrent.sh [BUILD_A [BUILD_B]] [-- CMAKE_OPTIONS...]
#
# BUILD_A and BUILD_B default to fresh folders in a temporary directory, which
# is removed afterwards unless a run failed. An existing tree (build/) is
# reused as it is configured; CMAKE_OPTIONS go to both configurations, and B
# gets A's UROCE_SHARED_DIR. The full ctest logs are kept in the temporary
# directory on failure. Environment: CONCURRENT_JOBS (build jobs, default
# nproc).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SLOTS=20 # as in TestNet.cmake
JOBS=${CONCURRENT_JOBS:-$(nproc 2>/dev/null || echo 2)}
DIRS=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	DIRS+=("$1")
	shift
done
[ $# -gt 0 ] && shift
OPTS=("$@")
[ ${#DIRS[@]} -le 2 ] || { echo "usage: $0 [BUILD_A [BUILD_B]] [-- CMAKE_OPTIONS...]" >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/uroce-concurrent.XXXXXX")
A=$(realpath -m "${DIRS[0]:-$TMP/build-a}")
B=$(realpath -m "${DIRS[1]:-$TMP/build-b}")
[ "$A" != "$B" ] || { echo "concurrent: FAIL: both build trees are $A" >&2; exit 2; }
KEEP=0
trap '[ "$KEEP" = 1 ] && echo "(logs kept in $TMP)" || rm -rf "$TMP"' EXIT

cache() { # DIR VAR: a value from DIR's CMakeCache.txt
	sed -n "s/^$2:[A-Z]*=//p" "$1/CMakeCache.txt"
}

configure_build() { # DIR [cmake options...]
	local dir=$1
	shift
	echo "== configure and build $dir"
	cmake -S "$SRC" -B "$dir" ${OPTS[@]+"${OPTS[@]}"} "$@" >"$TMP/cmake.log" 2>&1 ||
		{ cat "$TMP/cmake.log"; echo "concurrent: FAIL: cmake of $dir"; KEEP=1; exit 1; }
	grep 'network slot' "$TMP/cmake.log" | sed 's/^-- /   /'
	cmake --build "$dir" -j "$JOBS" >"$TMP/build.log" 2>&1 ||
		{ tail -n 40 "$TMP/build.log"; echo "concurrent: FAIL: build of $dir"; KEEP=1; exit 1; }
}

configure_build "$A"
SHARED=()
[ -n "$(cache "$A" UROCE_SHARED_DIR)" ] && SHARED=(-DUROCE_SHARED_DIR="$(cache "$A" UROCE_SHARED_DIR)")
configure_build "$B" "${SHARED[@]}"
SA=$(cache "$A" UROCE_TEST_SLOT)
SB=$(cache "$B" UROCE_TEST_SLOT)
if [ "$SA" = "$SB" ]; then
	SB=$(((SA + 1) % SLOTS))
	echo "   both trees have slot $SA: $B moves to slot $SB"
	configure_build "$B" "${SHARED[@]}" -DUROCE_TEST_SLOT="$SB"
fi

# Both runs start now and go on side by side; -V keeps every test's output,
# so that the reason of every skip can be read.
echo "== ctest -j2 of both trees at the same time"
T0=$(date +%s)
run_ctest() { # DIR X: ctest of DIR, its log in X.log, "exit-status end-time" in X.rc
	local rc=0
	ctest --test-dir "$1" -j2 -V >"$TMP/$2.log" 2>&1 || rc=$?
	echo "$rc $(date +%s)" >"$TMP/$2.rc"
}
run_ctest "$A" a &
PA=$!
run_ctest "$B" b &
PB=$!
wait "$PA" "$PB" || true

# report X DIR SLOT: sets RC, N (tests run), line: counts, time and any
# skip caused by a taken test network.
verdict=PASS
report() {
	local x=$1 dir=$2 slot=$3 log=$TMP/$1.log rc end passed skipped failed taken
	read -r rc end <"$TMP/$x.rc"
	passed=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed +[0-9.]+ sec$' "$log" || true)
	skipped=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*Skipped' "$log" || true)
	failed=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$log" || true)
	failed=$((failed - passed - skipped))
	taken=$(grep -E '^[0-9]+: SKIP: test network ' "$log" || true)
	echo "   $x: $dir (slot $slot): ctest exit $rc, $passed passed, $skipped skipped," \
		"$failed failed, $((end - T0)) s"
	if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
		verdict=FAIL
		grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$log" | grep -vE 'Passed|Skipped' | sed 's/^/      /'
		# what each failed test printed last (a CI log is all there is to read)
		grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$log" | grep -vE 'Passed|Skipped' |
			sed -E 's/.*Test +#([0-9]+):.*/\1/' | while read -r n; do
			echo "      output of test #$n (last 25 lines):"
			grep -E "^$n: " "$log" | tail -n 25 | sed 's/^/        /'
		done
	fi
	if [ -n "$taken" ]; then
		verdict=FAIL
		echo "      skipped because a test network was taken:"
		sed 's/^/      /' <<<"$taken"
	fi
	grep -E '^[0-9]+: SKIP: ' "$log" | grep -v 'SKIP: test network ' | sed 's/^/      skip: /' || true
	RUN_N=$((passed + skipped + failed))
	LINE="$x $passed passed/$skipped skipped/$failed failed in $((end - T0)) s"
}
report a "$A" "$SA"
NA=$RUN_N LA=$LINE
report b "$B" "$SB"
NB=$RUN_N LB=$LINE
if [ "$NA" -ne "$NB" ]; then
	verdict=FAIL
	echo "   the trees ran different numbers of tests: $NA and $NB"
fi
[ "$verdict" = PASS ] || KEEP=1
echo "concurrent: $verdict: two ctest -j2 runs at the same time (slots $SA and $SB): $LA; $LB"
[ "$verdict" = PASS ]

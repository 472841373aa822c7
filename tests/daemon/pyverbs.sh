#!/bin/sh
# SPDX-License-Identifier: MIT
# rdma-core's own pyverbs tests (ABI.md section 5) for devices, PDs, MRs,
# CQs and QPs, atomics, CQ events, extended CQs and QPs, shared PDs and AHs, ODP,
# against uroce0, through `uroce run`. Each test must pass or skip itself,
# except those listed with their reason in pyverbs_expected.txt: a test
# listed as PASS must pass (a skip, failure or absence fails), one listed as
# FAIL or ERROR may fail that way, and reports XPASS when it passes so the
# list can shrink. Prints the pass/fail/skip counts.
. "$CTL_SRC/lib.sh"

SRC=/usr/share/doc/rdma-core/tests
PY=/usr/bin/python3
[ -f "$SRC/run_tests.py" ] || skip "$SRC not installed (python3-pyverbs)"
"$PY" -c "import pyverbs" 2>/dev/null || skip "$PY cannot import pyverbs"

mkdir "$T/pv"
cp -r "$SRC" "$T/pv/tests"
gunzip -q "$T/pv"/tests/*.gz
cp "$CTL_SRC/pyverbs_run.py" "$T/pv/tests/"

start_daemon uroce0 "$TEST_NET.1"
MODULES="tests.test_device tests.test_pd tests.test_mr tests.test_cq tests.test_qp tests.test_atomic
tests.test_cq_events tests.test_cqex tests.test_qpex tests.test_shared_pd tests.test_addr tests.test_odp
tests.test_parent_domain tests.test_relaxed_ordering tests.test_fork"
(cd "$T/pv" && "$UROCE_BIN/uroce" run -- "$PY" tests/pyverbs_run.py \
	--dev uroce0 --port 1 --gid 0 $MODULES) >"$T/results" 2>"$T/pyverbs.log"
grep -q '^RESULT' "$T/results" || {
	cat "$T/pyverbs.log" >&2
	fail "pyverbs produced no results"
	finish
}

expected() { # ID -> expected status or nothing
	awk -v id="$1" '$1 == id { print $2 }' "$CTL_SRC/pyverbs_expected.txt"
}

while read -r tag status id rest; do
	[ "$tag" = RESULT ] || continue
	want=$(expected "$id")
	if [ "$want" = PASS ]; then
		[ "$status" = PASS ] || fail "$status $id $rest (must pass: pyverbs_expected.txt)"
		continue
	fi
	case $status in
	PASS | SKIP)
		[ -n "$want" ] && echo "XPASS: $id now ${status}es (expected $want): shrink pyverbs_expected.txt"
		;;
	*)
		if [ "$want" = "$status" ]; then
			echo "expected $status: $id"
		else
			fail "$status $id $rest"
		fi
		;;
	esac
done <"$T/results"
# A test that must pass and did not run at all (renamed, module not run).
for id in $(awk '$2 == "PASS" { print $1 }' "$CTL_SRC/pyverbs_expected.txt"); do
	grep -q "^RESULT [A-Z]* $id " "$T/results" || fail "$id did not run (must pass: pyverbs_expected.txt)"
done

for s in PASS FAIL ERROR SKIP; do
	printf '%s=%s ' "$s" "$(grep -c "^RESULT $s " "$T/results")"
done
echo "(of $(grep -c '^RESULT' "$T/results") tests in $MODULES)"
grep "^RESULT SKIP" "$T/results" | sed 's/^RESULT SKIP /skipped: /'
finish

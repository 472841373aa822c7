#!/bin/sh
# SPDX-License-Identifier: MIT
# Failures a user can understand (issue 12, item 6), end to end through the
# shim with tests/dp/failures.c on real daemons: a CQ overrun (CQ error,
# its QPs to Error, counted), a path MTU above the active MTU (clamped, on
# a daemon started with --mtu 1024), 6000 async events nobody reads (counted
# as lost, a handful of log lines rather than one per event), errors of
# work requests logged with their QP and status at a limited rate, and a
# daemon killed under a polling program (its posts fail, its outstanding
# work requests flush, IBV_EVENT_DEVICE_FATAL).
. "$CTL_SRC/lib.sh"

F=$UROCE_BIN/failures
[ -x "$F" ] || skip "failures not built (no libibverbs)"

# run_case LABEL DEVICE ARGS...: failures DEVICE ARGS under the shim, must
# exit 0; its output is in $T/LABEL.
run_case() {
	_label=$1
	shift
	if timeout 120 "$UROCE_BIN/uroce" run -- "$F" "$@" >"$T/$_label" 2>&1; then
		pass "failures $*: $(grep -c '^ok:' "$T/$_label") checks"
	else
		fail "failures $*"
		show "$T/$_label"
	fi
}

start_daemon uroce0 "$TEST_NET.1"
D0=$LAST_PID
L0=$LAST_LOG
start_daemon uroce1 "$TEST_NET.2" --mtu 1024
D1=$LAST_PID

# (a) CQ overrun.
run_case cq_overrun uroce0 cq_overrun
n=$(counter daemon.cq_overruns uroce0)
[ "$n" -eq 1 ] && pass "uroce0 counted the CQ overrun (cq_overruns 1)" ||
	fail "cq_overruns is $n, not 1"
grep -q "overran" "$L0" && pass "the overrun is logged: $(grep -m1 overran "$L0" | cut -c1-160)" ||
	fail "no log line about the overrun"

# (b) path MTU above the active MTU.
run_case mtu uroce1 mtu
n=$(counter daemon.mtu_clamped uroce1)
[ "$n" -eq 2 ] && pass "uroce1 clamped 2 path MTUs (mtu_clamped)" ||
	fail "mtu_clamped is $n, not 2"

# (c) 6000 unread async events: counted, not logged one by one.
lines0=$(grep -c "async event" "$L0")
run_case async_flood uroce0 async_flood 6000
read_n=$(sed -n 's/^async_flood: raised 6000, read \([0-9]*\)$/\1/p' "$T/async_flood")
lost=$(counter daemon.async_lost uroce0)
sleep 0.2 # the context's closing line
lines=$(($(grep -c "async event" "$L0") - lines0))
if [ -n "$read_n" ] && [ "$lost" -eq $((6000 - read_n)) ]; then
	pass "6000 events raised, $read_n read, $lost counted lost (async_lost)"
else
	fail "6000 events raised, '${read_n:-?}' read, but async_lost is $lost"
fi
[ "$lines" -eq 2 ] &&
	grep -q "closed: .*; $lost async events lost" "$L0" &&
	pass "the lost events wrote 2 log lines: the first loss, the total at close" ||
	fail "the lost events wrote $lines log lines"


grep -q "QP 0x[0-9a-f]* of pid [0-9]*: moved to ERR (its CQ overran)" "$L0" &&
	pass "the QPs of the CQ are logged with the reason" ||
	fail "no log line naming the QPs of the CQ that overran"

# (c) retries exhausted: the QP, the WR and the status in the log.
run_case retry_exc uroce0 retry_exc
line=$(grep "send WR 0x2a completed with" "$L0")
case $line in
*"QP 0x"*"(status 12)"*) pass "logged: ${line#*: }" ;;
*) fail "no log line for the WR that exhausted its retries: '$line'" ;;
esac
grep -q "QP 0x[0-9a-f]* of pid [0-9]*: moved to ERR (transport retry counter exceeded)" "$L0" &&
	pass "and the move to ERR with its reason: $(grep -m1 "moved to ERR (transport retry" "$L0" | cut -d: -f3-)" ||
	fail "no log line for the QP moved to ERR after its retries"
n=$(counter daemon.wc_errors uroce0)
[ "$n" -ge 1 ] && pass "counted as wc_errors ($n)" || fail "wc_errors is $n"

# (d) the daemon dies under a polling program.
start_daemon uroce2 "$TEST_NET.3"
D2=$LAST_PID
"$UROCE_BIN/uroce" run -- timeout -k 5 90 "$UROCE_BIN/daemon_death" uroce2 >"$T/death" 2>&1 &
P=$!
BG_PIDS="$BG_PIDS $P"
i=0
while [ $i -lt 200 ] && ! grep -q '^ready$' "$T/death" && running "$P"; do
	i=$((i + 1))
	sleep 0.05
done
if grep -q '^ready$' "$T/death"; then
	kill -KILL "$D2"
	wait "$D2" 2>/dev/null
	t0=$(date +%s%3N)
	rc=0
	wait "$P" || rc=$?
	t1=$(date +%s%3N)
	if [ "$rc" -eq 0 ]; then
		pass "daemon killed under daemon_death: $(grep -c '^ok:' "$T/death") checks," \
			"exit $((t1 - t0)) ms after the kill; $(grep '^flushed' "$T/death")"
	else
		fail "daemon_death exit $rc after the daemon was killed"
		show "$T/death"
	fi
else
	fail "daemon_death did not get ready"
	show "$T/death"
fi

stop_daemon "$D0"
stop_daemon "$D1"
finish

#!/bin/sh
# SPDX-License-Identifier: MIT
# cm_listener: the daemon's CM with a listener, from the wire. An rping
# server (real librdmacm through `uroce run`) listens on uroce0; cm_probe
# plays a foreign RoCEv2 CM peer on TEST_NET.2 and connects to it: REP, the
# same REP for a repeated REQ, REJ reason 10 for a REQ from an already
# connected QP under another comm ID, RTU, DREQ/DREP. The rping server
# must then see the disconnect and exit; the counters must show what
# happened and the capture must decode with valid ICRCs.
CTL_PORT=4791
. "$CTL_SRC/lib.sh"

[ -x "$CM_PROBE" ] || skip "cm_probe not built"
command -v rping >/dev/null 2>&1 || skip "rping not installed (rdmacm-utils)"
start_daemon uroce0 "$TEST_NET.1" --pcap "$T/cml.pcap"
D=$LAST_PID
LOG=$LAST_LOG

timeout -k 5 60 "$UROCE_BIN/uroce" run -- rping -s -v -a "$TEST_NET.1" -p 7400 >"$T/rping" 2>&1 &
RP=$!
BG_PIDS="$BG_PIDS $RP"
i=0
while ! grep -q 'CM: pid .* listens on service 0x0000000001061ce8' "$LOG"; do
	i=$((i + 1))
	[ $i -lt 200 ] || { fail "rping -s does not listen"; show "$T/rping"; finish; }
	sleep 0.05
done
"$CM_PROBE" "$TEST_NET.2" "$TEST_NET.1" "$CTL_PORT" 7400 >"$T/probe" 2>&1
rc=$?
[ "$rc" -eq 0 ] && pass "cm_probe against rping -s: $(tail -1 "$T/probe")" ||
	{ fail "cm_probe exit $rc"; show "$T/probe"; }
i=0
while kill -0 "$RP" 2>/dev/null && [ $i -lt 200 ]; do
	i=$((i + 1))
	sleep 0.05
done
kill -0 "$RP" 2>/dev/null && fail "rping -s still runs after the DREQ" ||
	{ grep -q 'DISCONNECT EVENT' "$T/rping" && pass "rping -s saw the disconnect and exited" ||
		{ fail "rping -s ended without the disconnect"; show "$T/rping"; }; }

uroce counters uroce0 --all >"$T/counters"
check_counter() { # NAME EXPECTED
	v=$(awk -v n="$1" '$1 == n { print $2 }' "$T/counters")
	[ "$v" = "$2" ] && pass "$1 = $2" || fail "$1 = ${v:-missing}, expected $2"
}
# REQ, REQ again, stale REQ, RTU, DREQ received; REP twice, REJ, DREP sent.
check_counter daemon.cm_rx 5
check_counter daemon.cm_req_rcvd 1
check_counter daemon.cm_rep_sent 1
check_counter daemon.cm_duplicates 1
check_counter daemon.cm_rej_sent 1
check_counter daemon.cm_established 1
check_counter daemon.cm_drep_sent 1
check_counter daemon.cm_tx 4
check_counter daemon.cm_rx_malformed 0
kill -0 "$D" 2>/dev/null && pass "daemon still running" || fail "daemon died"
stop_daemon "$D"

uroce decode "$T/cml.pcap" >"$T/decode" 2>&1
tail -1 "$T/decode" | grep -q "roce packets: 9, icrc ok: 9, icrc bad: 0, malformed: 0" &&
	pass "capture: $(tail -1 "$T/decode")" || { fail "capture decode"; show "$T/decode"; }
grep -q "CM ConnectReject .* reason=10" "$T/decode" && pass "capture: the stale REQ's reject, reason 10" ||
	fail "capture lacks the reason-10 ConnectReject"
finish

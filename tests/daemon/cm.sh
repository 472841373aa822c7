#!/bin/sh
# SPDX-License-Identifier: MIT
# cm: the daemon's Communication Manager on QP1, from the wire. cm_probe plays
# a foreign RoCEv2 CM peer on TEST_NET.2 (a plain UDP socket, MADs built with
# wire/) against uroce0 on TEST_NET.1 and checks the answers of a CM without
# listeners (REJ to REQ, DREP to DREQ, SIDR_REP to SIDR_REQ) and the silence
# after malformed or unmatched MADs. Then the daemon's counters must show
# exactly what it was sent, and its capture must decode with uroce decode and
# tshark as CM MADs with valid ICRCs.
# RoCEv2's own port, as a foreign peer uses it (and decoders recognise it);
# the addresses are the test's own.
CTL_PORT=4791
. "$CTL_SRC/lib.sh"

[ -x "$CM_PROBE" ] || skip "cm_probe not built"
start_daemon uroce0 "$TEST_NET.1" --pcap "$T/cm.pcap"
D=$LAST_PID
"$CM_PROBE" "$TEST_NET.2" "$TEST_NET.1" "$CTL_PORT" >"$T/probe" 2>&1
rc=$?
[ "$rc" -eq 0 ] && pass "cm_probe: $(tail -1 "$T/probe")" || { fail "cm_probe exit $rc"; show "$T/probe"; }

uroce counters uroce0 --all >"$T/counters"
check_counter() { # NAME EXPECTED
	v=$(awk -v n="$1" '$1 == n { print $2 }' "$T/counters")
	[ "$v" = "$2" ] && pass "$1 = $2" || fail "$1 = ${v:-missing}, expected $2"
}
# Received on QP1 and well formed: 2 REQ, DREQ, SIDR_REQ, RTU; malformed: the
# short MAD and the class version 1; the wrong Q_Key never reaches the CM.
check_counter daemon.cm_rx 5
check_counter daemon.cm_rx_malformed 2
check_counter daemon.cm_unmatched 1
check_counter daemon.cm_rej_sent 2
check_counter daemon.cm_drep_sent 1
check_counter daemon.cm_sidr_rep_sent 1
check_counter daemon.cm_tx 4
check_counter xport.gsi_rx 7
check_counter xport.gsi_tx 4
check_counter drop.bad_qkey 1
kill -0 "$D" 2>/dev/null && pass "daemon still running" || fail "daemon died"
stop_daemon "$D"

"$UROCE_BIN/uroce" decode "$T/cm.pcap" >"$T/decode" 2>&1
tail -1 "$T/decode" | grep -q "roce packets: 12, icrc ok: 12, icrc bad: 0, malformed: 0" &&
	pass "capture: $(tail -1 "$T/decode")" || { fail "capture decode"; show "$T/decode"; }
n=$(grep -c "CM ConnectReject .* reason=8 (invalid service ID)" "$T/decode")
[ "$n" -eq 2 ] && pass "capture: 2 ConnectRejects with reason 8" || fail "capture: $n ConnectRejects"
grep -q "CM DisconnectReply" "$T/decode" && grep -q "CM ServiceIDResReqResp" "$T/decode" &&
	pass "capture: DisconnectReply and SIDR reply" || fail "capture lacks the DREP or SIDR_REP"
if command -v tshark >/dev/null 2>&1; then
	tshark -n -r "$T/cm.pcap" -Y "infiniband.mad.attributeid == 0x0012" -T fields \
		-e infiniband.cm.rej.reason 2>/dev/null >"$T/tshark"
	[ "$(sort -u "$T/tshark")" = "0x0008" ] && [ "$(grep -c . "$T/tshark")" -eq 2 ] &&
		pass "tshark: 2 ConnectRejects, reason 8" || { fail "tshark reject reasons"; show "$T/tshark"; }
	tshark -n -r "$T/cm.pcap" --disable-heuristic rpcrdma_infiniband -Y _ws.malformed 2>/dev/null |
		grep -c . >"$T/malformed"
	[ "$(cat "$T/malformed")" -eq 0 ] && pass "tshark: nothing malformed" || fail "tshark: malformed packets"
fi
finish

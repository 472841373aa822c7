#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ICRC modes of uroced (--icrc, docs/daemon.md) against senders that use
# non-zero, incrementing IPv4 IDs, as Linux rxe and hardware RNICs do. A raw
# socket in this test (icrc_send.py, root) sends RoCEv2 packets from
# E2E_NET.9 with chosen IDs and correct ICRCs to a QP that does not exist,
# so that each is checked, counted by its ICRC path and then dropped as no_qp:
#
#   uroce0  default, with CAP_NET_RAW: exact (raw receive socket for IDs
#           other than 0); every ID passes, an ICRC computed for another ID
#           than the header's is caught (no solve could catch that), also
#           for ID 0 on the UDP socket, and a GSO datagram seen whole is cut
#   uroce1  default, started without CAP_NET_RAW (setpriv): tracked; IDs
#           counting up and a jump after a pause pass, a far ID is dropped
#   uroce2  --icrc-any-id, the alias of --icrc=any: any solved ID passes
#
# and ibv_rc_pingpong between uroce0 (exact) and uroce1 (tracked), uroce
# peers sending ID 0, works with its data check, counted as exact on one side
# and id0 on the other; ib_write_bw between them reaches uroce0's UDP socket
# only, in recvmmsg batches; uroce0's capture shows the real IDs (all its
# ICRCs good but the three broken packets sent on purpose).
#
#   icrc.sh rxe SHARED_DIR   replay Linux rxe's rping capture (10.77.0.3 ->
#           10.77.0.2, the kernel's IDs) with its timing into an RNIC owning
#           10.77.0.2 in a network namespace of this test, once exact and once
#           tracked; skipped (77) when SHARED_DIR/captures is absent
. "$(dirname "$0")/lib.sh"
MODE=${1:-local}
# The defaults are under test here, whatever the suite runs with.
unset UROCE_ICRC
need_prog setpriv
SEND=(timeout 60 "$TEST_PY" "$(dirname "$0")/icrc_send.py")


# expect NAME COUNTER VALUE [RUNDIR]
expect() {
	local v
	v=$(counter "$1" "$2" "${4:-}")
	if [ "$v" = "$3" ]; then pass "$1 $2 = $3"; else fail "$1 $2 = $v, want $3"; fi
}

seq_ids() { seq -s, "$1" "$2"; }

if [ "$MODE" = rxe ]; then
	# The capture's two hosts, inside this test's own namespace only.
	rxe_capture_ns "${2:-}" rxe
	# rping's client sent 21 packets to the server (3 CM MADs, 18 RC).
	for how in exact tracked; do
		wrap=()
		[ $how = tracked ] && wrap=(setpriv --inh-caps=-all --bounding-set=-net_raw)
		UROCED_WRAP="${wrap[*]}" HOST_NS=$NS start_rnic "rxe_$how" 10.77.0.2
		check "rxe_$how runs the $how check by default" \
			grep -q "ICRC check: $how (default" "$T/rxe_$how.log"
		ns_exec "$NS" "${SEND[@]}" replay "$PCAP" 10.77.0.3 --timing >"$T/replay.$how" 2>&1 ||
			fail "replay into rxe_$how: $(cat "$T/replay.$how")"
		sleep 0.3
		n=$(ns_exec "$NS" "$UROCE_BIN/uroce" counters "rxe_$how" --all --rundir "$RD" |
			awk '$1 == "xport.rx_pkts" { print $2 }')
		check "rxe_$how received the 21 packets of rxe's client ($n)" [ "$n" = 21 ]
		expect "rxe_$how" drop.bad_icrc 0 "$RD"
		if [ $how = exact ]; then
			expect "rxe_$how" xport.icrc_exact 21 "$RD"
		else
			expect "rxe_$how" xport.icrc_id_first 1 "$RD"
			expect "rxe_$how" xport.icrc_id_tracked 20 "$RD"
			expect "rxe_$how" xport.icrc_id_rejected_window 0 "$RD"
		fi
		# The CM MADs reached QP1 and were answered (no listener: REJ).
		check "rxe_$how took rxe's CM MADs" [ "$(counter "rxe_$how" daemon.cm_rx "$RD")" -ge 1 ]
		stop_rnic "rxe_$how"
	done
	finish
fi

need_prog ibv_rc_pingpong
SRC=$E2E_NET.9
ADDR2=$E2E_NET.3
start_rnic uroce0 "$ADDR0"
UROCED_WRAP="setpriv --inh-caps=-all --bounding-set=-net_raw" start_rnic uroce1 "$ADDR1"
start_rnic uroce2 "$ADDR2" --icrc-any-id
check "uroce0 (CAP_NET_RAW) runs the exact check by default" \
	grep -q "ICRC check: exact (default with CAP_NET_RAW" "$T/uroce0.log"
check "uroce1 (no CAP_NET_RAW) runs the tracked check by default" \
	grep -q "ICRC check: tracked (default without CAP_NET_RAW" "$T/uroce1.log"
check "uroce2 (--icrc-any-id) runs the any check" \
	grep -q "ICRC check: any (--icrc-any-id, i.e. --icrc=any;" "$T/uroce2.log"
rc=0
timeout 10 "$UROCE_BIN/uroced" --name x --addr "$E2E_NET.4" --rundir "$T/x" --icrc=loose \
	>"$T/bad_mode.out" 2>&1 || rc=$?
check "an unknown --icrc mode is refused (exit $rc)" \
	grep -q "uroced: --icrc loose: must be exact, tracked, any or auto" "$T/bad_mode.out"
rc=0
timeout 10 setpriv --inh-caps=-all --bounding-set=-net_raw "$UROCE_BIN/uroced" --name x \
	--addr "$E2E_NET.4" --rundir "$T/x" --icrc=exact >"$T/no_raw.out" 2>&1 || rc=$?
check "--icrc=exact without CAP_NET_RAW fails (exit $rc) with a clear message" \
	grep -q "needs a raw IPv4 socket (CAP_NET_RAW)" "$T/no_raw.out"
check "  ... and exits 1" [ "$rc" = 1 ]

# --- exact: every ID passes; an ICRC over another ID than the header's does not.
"${SEND[@]}" ids "$SRC" "$ADDR0" "$(seq_ids 1000 1019),7,40000,1020" >/dev/null
"${SEND[@]}" ids "$SRC" "$ADDR0" 1021 --icrc-id 1022 >/dev/null
"${SEND[@]}" ids "$SRC" "$ADDR0" 1023 --corrupt >/dev/null
sleep 0.3
expect uroce0 xport.icrc_exact 23
expect uroce0 drop.bad_icrc 2
expect uroce0 drop.no_qp 23
expect uroce0 xport.icrc_id_tracked 0
expect uroce0 daemon.rx_raw_datagrams 25
# --- exact, its two sockets: a datagram with ID 0 and DF alone (what uroce
# RNICs send) reaches the UDP socket, whose filter vouches for that header, so
# an ICRC computed for ID 1 is caught there too; any other the raw socket,
# where a GSO send seen whole (first ID 2000) is cut into its packets, each
# checked for its own ID.
"${SEND[@]}" ids "$SRC" "$ADDR0" 0 >/dev/null
"${SEND[@]}" ids "$SRC" "$ADDR0" 0 --icrc-id 1 >/dev/null
"${SEND[@]}" gso "$SRC" "$ADDR0" 2000 3 >/dev/null
sleep 0.3
expect uroce0 xport.icrc_exact 27
expect uroce0 drop.bad_icrc 3
expect uroce0 drop.no_qp 27
expect uroce0 daemon.rx_raw_datagrams 26
expect uroce0 daemon.rx_gso_segments 3
expect uroce0 daemon.rx_gso_bad 0
# Nor is ID 0 and DF with IPv4 options (which RoCEv2 senders never send):
# rx_bad_ip, a drop only the raw path makes. (ID 0 without DF cannot be sent
# from here: the kernel gives such a datagram an ID of its own.)
"${SEND[@]}" ids "$SRC" "$ADDR0" 0 --ip-options >/dev/null
sleep 0.3
expect uroce0 daemon.rx_raw_datagrams 27
expect uroce0 daemon.rx_bad_ip 1
expect uroce0 drop.no_qp 27

# --- tracked: counting up, a pause, a far ID.
"${SEND[@]}" ids "$SRC" "$ADDR1" "$(seq_ids 1000 1019)" >/dev/null
sleep 0.3
expect uroce1 xport.icrc_id_first 1
expect uroce1 xport.icrc_id_tracked 19
"${SEND[@]}" ids "$SRC" "$ADDR1" 41000 >/dev/null
sleep 0.05
expect uroce1 xport.icrc_id_rejected_window 1
expect uroce1 drop.bad_icrc 1
# 0.3 s after the last accepted ID, a jump of 200 is what Linux may do.
"${SEND[@]}" ids "$SRC" "$ADDR1" 1020,1220,1221 --gap-ms 300 >/dev/null
sleep 0.1
expect uroce1 xport.icrc_id_tracked 22
expect uroce1 drop.no_qp 23
# The ID wraps: 65534, 65535, 0 (the ID-0 check), 1.
"${SEND[@]}" ids "$SRC" "$ADDR1" 1222 >/dev/null
"${SEND[@]}" ids "$E2E_NET.10" "$ADDR1" 65533,65534,65535,0,1,2 >/dev/null
sleep 0.1
expect uroce1 xport.icrc_id_tracked 27
expect uroce1 xport.icrc_id_first 2
expect uroce1 xport.icrc_id0 1
expect uroce1 xport.icrc_id_rejected_window 1

# --- any: far IDs pass too.
"${SEND[@]}" ids "$SRC" "$ADDR2" 5,41000,9 >/dev/null
sleep 0.1
expect uroce2 xport.icrc_id_guessed 3
expect uroce2 drop.bad_icrc 0

# --- uroce peers (ID 0): exact on one side, id0 on the other.
e0=$(counter uroce0 xport.icrc_exact)
z1=$(counter uroce1 xport.icrc_id0)
next_tcp_port
run_pair pingpong 60 run \
	ibv_rc_pingpong -d uroce0 -g 0 -p "$TCP_PORT" -c -s 4096 -n 500 -- \
	ibv_rc_pingpong -d uroce1 -g 0 -p "$TCP_PORT" -c -s 4096 -n 500 "$ADDR0"
if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] &&
	grep -q 'bytes in' "$T/pingpong.client" &&
	! grep -qi 'invalid data' "$T/pingpong.server" "$T/pingpong.client"; then
	pass "ibv_rc_pingpong -c between exact uroce0 and tracked uroce1"
else
	fail "ibv_rc_pingpong between exact uroce0 and tracked uroce1"
	show_pair pingpong
fi
e0b=$(counter uroce0 xport.icrc_exact)
z1b=$(counter uroce1 xport.icrc_id0)
check "uroce0 checked the pingpong exactly ($((e0b - e0)) packets)" [ $((e0b - e0)) -ge 1000 ]
check "uroce1 checked it with ID 0 ($((z1b - z1)) packets)" [ $((z1b - z1)) -ge 1000 ]
expect uroce1 xport.icrc_id_rejected_window 1
expect uroce0 drop.bad_icrc 3
expect uroce1 drop.bad_icrc 1

# Bandwidth into the exact uroce0 from a uroce peer: every datagram on the
# UDP socket (none on the raw one), several per recvmmsg call.
need_prog ib_write_bw
d0=$(counter uroce0 daemon.rx_datagrams)
b0=$(counter uroce0 daemon.rx_batches)
r0=$(counter uroce0 daemon.rx_raw_datagrams)
run_perftest write_bw 120 run \
	ib_write_bw -d uroce0 -x 0 -F -s 65536 -n 2000 -- \
	ib_write_bw -d uroce1 -x 0 -F -s 65536 -n 2000 "$ADDR0"
if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] && [ -n "$(perftest_row "$T/write_bw.client")" ]; then
	pass "ib_write_bw 64 KiB, tracked uroce1 -> exact uroce0: $(perftest_row "$T/write_bw.client" | tr -s ' ')"
else
	fail "ib_write_bw between tracked uroce1 and exact uroce0"
	show_pair write_bw
fi
d=$(($(counter uroce0 daemon.rx_datagrams) - d0))
b=$(($(counter uroce0 daemon.rx_batches) - b0))
r=$(($(counter uroce0 daemon.rx_raw_datagrams) - r0))
check "uroce0 took $d datagrams in $b recvmmsg batches (more than 1.5 each), $r on the raw socket" \
	test $((2 * d)) -gt $((3 * b)) -a "$r" = 0
expect uroce0 drop.bad_icrc 3

stop_rnic uroce0
stop_rnic uroce1
stop_rnic uroce2
# uroce0's capture holds the packets with their real IDs: only the three
# broken on purpose are bad.
decode_summary "$T/uroce0.pcap"
check "uroce decode uroce0.pcap: $DEC_N packets, ICRC bad $DEC_BAD (want 3), malformed $DEC_MAL" \
	test "$DEC_BAD" -eq 3 -a "$DEC_MAL" -eq 0 -a "$DEC_N" -gt 1000
check "the capture shows the senders' IP IDs" \
	bash -c "tshark -r '$T/uroce0.pcap' -Y 'ip.src == $SRC' -T fields -e ip.id 2>/dev/null | grep -qx 0x03f3"
finish

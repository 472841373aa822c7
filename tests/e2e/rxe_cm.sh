#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Interoperation with Linux rxe's RDMA CM, from its real packets: an RNIC owns
# 10.77.0.2 (the server of ../shared/captures/real_rxe-2host_rdmacm-rping.pcap)
# inside this test's own network namespace, with an unmodified rping server
# listening on the captured port (7174), and rxe_peer.py plays the captured
# client (10.77.0.3): rxe's ConnectRequest byte for byte (the kernel's IPv4
# ID and ICRC), then its ReadyToUse and DisconnectRequest with the RNIC's
# communication ID and QPN put in. The REP and the DREP must be what rxe
# expects (rxe_peer.py checks them field by field), the rping server must
# see the connection come and go (it exits, no hang), and the capture of the
# exchange decodes with every ICRC valid (rxe's packets with their real IPv4
# IDs, seen or solved) and every MAD named. Once with the
# exact ICRC check (raw socket) and once tracked (no CAP_NET_RAW).
#
#   rxe_cm.sh SHARED_DIR   skipped (77) when SHARED_DIR/captures is absent
. "$(dirname "$0")/lib.sh"
unset UROCE_ICRC
need_prog rping
need_prog setpriv
rxe_capture_ns "${1:-}" rxecm
HOST_NS=$NS
for how in exact tracked; do
	wrap=()
	[ $how = tracked ] && wrap=(setpriv --inh-caps=-all --bounding-set=-net_raw)
	UROCED_WRAP="${wrap[*]}" start_rnic "uroce_$how" 10.77.0.2
	check "uroce_$how runs the $how ICRC check" grep -q "ICRC check: $how (default" "$T/uroce_$how.log"
	via_cmd run
	bg_via "rping.$how" 30 rping -s -v -C 1 -p 7174 -a 10.77.0.2
	spid=$BG_PID
	for _ in $(seq 200); do
		grep -q 'CM: pid .* listens on service' "$T/uroce_$how.log" && break
		sleep 0.05
	done
	check "rping -s listens on 10.77.0.2:7174 ($how)" grep -q 'CM: pid .* listens on service' \
		"$T/uroce_$how.log"
	rc=0
	ns_exec "$NS" timeout 30 "$TEST_PY" "$(dirname "$0")/rxe_peer.py" "$PCAP" 10.77.0.3 10.77.0.2 \
		>"$T/peer.$how" 2>&1 || rc=$?
	sed 's/^/    /' "$T/peer.$how"
	check "rxe's CM messages against uroce ($how): $(grep -c '^ok' "$T/peer.$how") checks passed" \
		[ "$rc" = 0 ]
	# The rping server saw the connection and its end: it exits by itself.
	for _ in $(seq 100); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$spid" 2>/dev/null; then
		fail "rping -s ($how) still runs 10 s after rxe's DisconnectRequest"
		kill "$spid" 2>/dev/null
	else
		pass "rping -s ($how) ended after rxe's DisconnectRequest"
	fi
	wait "$spid" 2>/dev/null
	# (rping reports DISCONNECTED only for a connection it had established)
	check "rping -s ($how) was connected, then told of the disconnect" \
		grep -q "server DISCONNECT EVENT" "$T/rping.$how"
	for c in daemon.cm_req_rcvd daemon.cm_rep_sent daemon.cm_established daemon.cm_drep_sent; do
		v=$(counter "uroce_$how" "$c" "$RD")
		check "uroce_$how $c = 1 ($v)" [ "$v" = 1 ]
	done
	v=$(counter "uroce_$how" drop.bad_icrc "$RD")
	check "uroce_$how drop.bad_icrc = 0 ($v)" [ "$v" = 0 ]
	stop_rnic "uroce_$how"
	decode_summary "$T/uroce_$how.pcap"
	# Every ICRC in the capture is valid in both modes: rxe's packets carry
	# the IPv4 ID the raw socket saw (exact) or the one the check solved
	# (tracked, noted in the frame's comment).
	check "the capture ($how): $DEC_N packets, $DEC_BAD bad ICRC, $DEC_MAL malformed" \
		[ "$DEC_N" -ge 5 -a "$DEC_BAD" = 0 -a "$DEC_MAL" = 0 ]
	for m in ConnectRequest ConnectReply ReadyToUse DisconnectRequest DisconnectReply; do
		check "  ... and shows the $m" grep -q "CM $m" "$T/uroce_$how.pcap.decode"
	done
done
finish

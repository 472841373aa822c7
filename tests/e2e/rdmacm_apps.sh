#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# More unmodified librdmacm programs on uroce through `uroce run`, the server
# on uroce1, the client on uroce0: ucmatose with 10 connections (-b/-s),
# udaddy (UD: SIDR_REQ/SIDR_REP, 4 ids), rsockets' rstream and riostream,
# rdma_server/rdma_client (the synchronous API: rdma_getaddrinfo,
# rdma_create_ep, rdma_get_request, hence rdma_migrate_id) and
# rdma_xserver/rdma_xclient over RC and XRC, cmtime (20
# connections, each step timed), perftest over the RDMA CM (-R: ib_send_bw,
# ib_write_bw, ib_read_bw, ib_send_lat) and qperf -cm1 (rc_bw, rc_lat,
# rc_rdma_write_bw, rc_rdma_read_bw, rc_compare_swap_mr, rc_fetch_add_mr).
# The captures must decode with every ICRC valid in uroce decode and tshark.
# `rdmacm_apps.sh dropin`: the same programs with the drop-ins alone
# (LD_LIBRARY_PATH=build/lib/ibverbs: libibverbs.so.1 and the librdmacm.so.1
# forwarder, docs/cm.md "Drop-in mode"), whichever order their libraries come in;
# the packets are those of the `uroce run` variant, whose captures are checked,
# so this one takes none (qperf's bandwidth tests alone capture gigabytes).
MODE=${1:-run}
case $MODE in run | dropin) ;; *) echo "usage: $0 [run|dropin]" >&2; exit 2 ;; esac
CM_VIA=$MODE
. "$(dirname "$0")/lib.sh"
need_prog ucmatose
need_prog rdma_server
need_prog cmtime

[ "$MODE" = dropin ] && RNIC_PCAP=0
start_rnics

cm_pair ucmatose 90 1 ucmatose -b "$ADDR1" -c 10 -C 10 -- ucmatose -s "$ADDR1" -b "$ADDR0" -c 10 -C 10
if [ "$CLIENT_RC" -eq 0 ] && [ "$SERVER_RC" -eq 0 ] &&
	grep -q 'return status 0' "$T/ucmatose.client" && grep -q 'return status 0' "$T/ucmatose.server"; then
	pass "ucmatose -c 10 -C 10: both sides return status 0 [$PAIR_MS ms]"
else
	fail "ucmatose: server exit $SERVER_RC, client exit $CLIENT_RC"
	show_pair ucmatose
fi

cm_pair rdma_server 60 1 rdma_server -s "$ADDR1" -p 7471 -- rdma_client -s "$ADDR1" -p 7471
if [ "$CLIENT_RC" -eq 0 ] && [ "$SERVER_RC" -eq 0 ] && grep -q 'rdma_client: end 0' "$T/rdma_server.client" &&
	grep -q 'rdma_server: end 0' "$T/rdma_server.server"; then
	pass "rdma_server/rdma_client: the synchronous API (rdma_create_ep, rdma_get_request) ends 0"
else
	fail "rdma_server/rdma_client: server exit $SERVER_RC, client exit $CLIENT_RC"
	show_pair rdma_server
fi

# rdma_xserver/rdma_xclient: the same synchronous API over RC (-c r) and over
# XRC (-c x: in the RDMA_PS_IB port space, an XRC_SEND initiator connects to
# an XRC_RECV target QP, whose XRC SRQ number comes back in the REP's private
# data, and sends one message to that SRQ). The server listens on every RNIC.
XPORT=7472
if command -v rdma_xserver >/dev/null; then
	for c in r x; do
		cm_pair "rdma_x$c" 60 1 rdma_xserver -c "$c" -p "$XPORT" -- rdma_xclient -c "$c" -s "$ADDR1" -p "$XPORT"
		if [ "$CLIENT_RC" -eq 0 ] && [ "$SERVER_RC" -eq 0 ] &&
			grep -q 'rdma_xclient: end 0' "$T/rdma_x$c.client" &&
			grep -q 'rdma_xserver: end 0' "$T/rdma_x$c.server"; then
			pass "rdma_xserver/rdma_xclient -c $c ($([ "$c" = x ] && echo XRC || echo RC)): both end 0 [$PAIR_MS ms]"
		else
			fail "rdma_xserver/rdma_xclient -c $c: server exit $SERVER_RC, client exit $CLIENT_RC"
			show_pair "rdma_x$c"
		fi
	done
fi

# udaddy: UD through the RDMA CM (RDMA_PS_UDP): SIDR_REQ/SIDR_REP on the wire.
if command -v udaddy >/dev/null; then
	cm_pair udaddy 60 1 udaddy -b "$ADDR1" -c 4 -C 10 -- udaddy -s "$ADDR1" -b "$ADDR0" -c 4 -C 10
	if [ "$CLIENT_RC" -eq 0 ] && [ "$SERVER_RC" -eq 0 ] &&
		grep -q 'return status 0' "$T/udaddy.client" && grep -q 'return status 0' "$T/udaddy.server"; then
		pass "udaddy -c 4 -C 10 (UD, SIDR): both sides return status 0"
	else
		fail "udaddy: server exit $SERVER_RC, client exit $CLIENT_RC"
		show_pair udaddy
	fi
fi

# rsockets (librdmacm's sockets over RDMA): rstream and riostream.
for prog in rstream riostream; do
	command -v "$prog" >/dev/null || continue
	cm_pair "$prog" 60 1 "$prog" -b "$ADDR1" -S 4096 -C 100 -- "$prog" -s "$ADDR1" -b "$ADDR0" -S 4096 -C 100
	if [ "$CLIENT_RC" -eq 0 ] && [ "$SERVER_RC" -eq 0 ] && grep -q '^custom *4k *100 ' "$T/$prog.client" &&
		grep -q '^custom *4k *100 ' "$T/$prog.server"; then
		pass "$prog -S 4096 -C 100 (rsockets): $(grep '^custom' "$T/$prog.client" | tr -s ' ')"
	else
		fail "$prog: server exit $SERVER_RC, client exit $CLIENT_RC"
		show_pair "$prog"
	fi
done

# cmtime's server serves until it is stopped.
want=$(($(cm_listens) + 1))
via_cmd "$MODE"
bg_via cmtime.server 120 cmtime -b "$ADDR1" -c 20
CTPID=$BG_PID
wait_cm_listens "$want" "$CTPID" || fail "cmtime: the server does not listen"
rc=0
"${VIA[@]}" timeout -k 5 90 cmtime -s "$ADDR1" -b "$ADDR0" -c 20 >"$T/cmtime.client" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] && grep -q '^connect *:' "$T/cmtime.client" && running "$CTPID"; then
	pass "cmtime -c 20: $(grep '^connect *:' "$T/cmtime.client" | tr -s ' ')"
else
	fail "cmtime: client exit $rc"
	show_pair cmtime
fi
end_programs "$(pgrep -P "$CTPID" -x cmtime)" "$CTPID"

if command -v ib_send_bw >/dev/null; then
	port=18600
	for prog in ib_send_bw ib_write_bw ib_read_bw ib_send_lat; do
		port=$((port + 1))
		cm_pair "$prog" 120 2 "$prog" -R -d uroce1 -x 0 -p "$port" -n 200 -- \
			"$prog" -R -d uroce0 -x 0 -p "$port" -n 200 "$ADDR1"
		# Again (twice at most) when perftest could not measure the CPU
		# clock, or when its client was rejected: perftest's server listens
		# again for the test connection after the exchange one, and a
		# client quicker than that is rejected (reason 8), as on any RNIC;
		# two suites at once on two cores lost that race twice in a row.
		tries=1
		while [ $tries -lt 3 ] &&
			{ grep -q "Correlation coefficient" "$T/$prog.client" "$T/$prog.server" ||
				grep -q "RDMA_CM_EVENT_REJECTED" "$T/$prog.client"; }; do
			echo "    $prog: $(grep -h -m1 "Correlation coefficient\|RDMA_CM_EVENT_REJECTED" \
				"$T/$prog.client" "$T/$prog.server" | head -1); again"
			port=$((port + 1))
			tries=$((tries + 1))
			cm_pair "$prog" 120 2 "$prog" -R -d uroce1 -x 0 -p "$port" -n 200 -- \
				"$prog" -R -d uroce0 -x 0 -p "$port" -n 200 "$ADDR1"
		done
		if [ "$CLIENT_RC" -eq 0 ] && [ "$SERVER_RC" -eq 0 ] &&
			perftest_plausible "$prog" "$T/$prog.client"; then
			pass "$prog -R: $(perftest_row "$T/$prog.client" | tr -s ' ')"
		else
			fail "$prog -R: server exit $SERVER_RC, client exit $CLIENT_RC"
			show_pair "$prog"
		fi
	done
else
	echo "SKIP (perftest -R): perftest is not installed"
fi

# qperf: one server, each test a client run of its own. qperf's server sends
# its RDMA CM port to the client before it calls rdma_listen, so a client fast
# enough is rejected (reason 8): such a test is run once more, and the second
# run must pass.
if command -v qperf >/dev/null; then
	next_tcp_port
	via_cmd "$MODE"
	bg_via qperf.server 300 qperf -lp "$TCP_PORT"
	QSPID=$BG_PID
	await_listen "$TCP_PORT" "$QSPID" || fail "qperf: the server does not listen on TCP port $TCP_PORT"
	for t in rc_bw rc_lat rc_rdma_write_bw rc_rdma_read_bw rc_compare_swap_mr rc_fetch_add_mr; do
		for attempt in 1 2; do
			rc=0
			"${VIA[@]}" timeout -k 5 60 qperf -lp "$TCP_PORT" -cm1 -t 1 "$ADDR1" "$t" \
				>"$T/qperf-$t" 2>&1 || rc=$?
			grep -q 'Event rejected' "$T/qperf-$t" || break
			echo "    qperf $t: rejected before qperf's server listened (attempt $attempt)"
		done
		if [ "$rc" -eq 0 ] && grep -Eq '(bw|latency|msg_rate) += ' "$T/qperf-$t"; then
			pass "qperf -cm1 $t: $(grep -E '(bw|latency|msg_rate) += ' "$T/qperf-$t" | tr -s ' ')"
		else
			fail "qperf -cm1 $t: client exit $rc"
			show "$T/qperf-$t"
		fi
	done
	end_programs "$(pgrep -P "$QSPID" -x qperf)" "$QSPID"
else
	echo "SKIP (qperf): qperf is not installed"
fi

stop_rnics
[ "$MODE" = dropin ] && finish
check_decode "$T/uroce0.pcap"
check_decode "$T/uroce1.pcap"
check_tshark "$T/uroce0.pcap"
check_tshark "$T/uroce1.pcap"
if command -v tshark >/dev/null; then
	n=$(tshark -n -r "$T/uroce0.pcap" -Y 'infiniband.mad.attributeid == 0x0017' 2>/dev/null | grep -c .)
	m=$(tshark -n -r "$T/uroce0.pcap" -Y 'infiniband.mad.attributeid == 0x0018' 2>/dev/null | grep -c .)
	[ "$n" -ge 4 ] && [ "$m" -ge 4 ] && pass "tshark: udaddy's $n SIDR_REQs and $m SIDR_REPs in uroce0's capture" ||
		fail "tshark: $n SIDR_REQs, $m SIDR_REPs in uroce0's capture"
fi
# The XRC connection on the wire (annex A14), at the server's RNIC: a REQ of
# transport service type 3 with extended transport type 1, a REP with the
# target QPN in its EE context field and the SRQ flag, then the client's
# SEND with an XRCETH naming the SRQ (in check_decode's listing).
if command -v rdma_xserver >/dev/null; then
	sid=$(printf '0x00000000013f%04x' "$XPORT") # RDMA_PS_IB, the port
	req=$(grep -c "CM ConnectRequest .* sid=$sid .* xrc=1" "$T/uroce1.pcap.decode")
	rep=$(grep -c 'CM ConnectReply .* qpn=0x000000 eecn=0x[0-9a-f]*[1-9a-f]' "$T/uroce1.pcap.decode")
	xs=$(grep -c 'XRC Send Only .* XRCETH srqn=' "$T/uroce1.pcap.decode")
	if [ "$req" -ge 1 ] && [ "$rep" -ge 1 ] && [ "$xs" -ge 1 ]; then
		pass "uroce1's capture: $req XRC ConnectRequest(s) in the IB port space, $rep ConnectReply(s) with the target QPN as EECN, $xs XRC SEND(s)"
	else
		fail "uroce1's capture: XRC ConnectRequests $req, ConnectReplies with an EECN $rep, XRC SENDs $xs (each >= 1)"
	fi
	if command -v tshark >/dev/null; then
		n=$(tshark -n -r "$T/uroce1.pcap" -Y 'infiniband.cm.req.ext_transport == 1' 2>/dev/null | grep -c .)
		[ "$n" -ge 1 ] && pass "tshark: $n ConnectRequest(s) with Extended Transport 0x1 (XRC)" ||
			fail "tshark: no ConnectRequest with Extended Transport 0x1 in uroce1's capture"
	fi
fi
finish

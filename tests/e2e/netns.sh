#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two hosts: network namespaces joined by a veth pair (Ethernet, MTU 1500),
# each with its own IP stack, its own run directory and one RNIC (uroce0 on
# host A, uroce1 on host B). ibv_rc_pingpong with data validation, ib_write_bw
# and ib_read_lat cross the veth; the daemons pick the IB MTU that fits the
# interface (1024 for 1500). rping connects through the RDMA CM across the
# veth. A tshark capture of the veth (real Ethernet frames) and both
# daemons' captures must decode with every ICRC valid.
# Skips when network namespaces cannot be created here (needs root).
#
#   netns.sh [4|6]   6: the RNICs own IPv6 addresses of the veth (their GIDs
#                    are those addresses); the tools still exchange their set-up
#                    over IPv4 (ibv_rc_pingpong's server listens on IPv4 only),
#                    rping's RDMA CM uses the IPv6 addresses

# the hosts' /24 is the test's private one, which exists only in its namespaces
E2E_NET=${UROCE_TEST_PRIV_NET:?UROCE_TEST_PRIV_NET must be set (by uroce_net_test)}
. "$(dirname "$0")/lib.sh"
FAMILY=${1:-4}
need_prog ibv_rc_pingpong
need_prog ib_write_bw
need_prog ib_read_lat
need_prog ip
# Names from the test's slot and index, so that no two builds or tests share
# one; the claim on the test network makes this run their only user.
NSA=uroce-t$UROCE_TEST_SLOT-$UROCE_TEST_INDEX-a
NSB=uroce-t$UROCE_TEST_SLOT-$UROCE_TEST_INDEX-b
VA=ut${UROCE_TEST_SLOT}i${UROCE_TEST_INDEX}a
VB=ut${UROCE_TEST_SLOT}i${UROCE_TEST_INDEX}b
TCP_HOST=$ADDR0 # where the servers listen for the tools' set-up exchange
if [ "$FAMILY" = 6 ]; then
	V6NET=$UROCE_TEST_V6_NET
	ADDR0=$V6NET::1
	ADDR1=$V6NET::2
	LO_FILTER="udp and ((ip6 net $V6NET::/64 and port 4791) or dst port 9)"
fi

netns_cleanup() {
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null # the veth pair goes with them
	ip link del "$VA" 2>/dev/null   # unless it never got there
}

# Leftovers of a run of this test that was killed before its cleanup.
netns_cleanup
if ! ip netns add "$NSA" 2>"$T/netns.err"; then
	skip "cannot create network namespaces here: $(cat "$T/netns.err")"
fi
at_exit netns_cleanup
ip netns add "$NSB" &&
	ip link add "$VA" type veth peer name "$VB" &&
	ip link set "$VA" netns "$NSA" &&
	ip link set "$VB" netns "$NSB" &&
	ip -n "$NSA" addr add "$TCP_HOST/24" dev "$VA" &&
	ip -n "$NSB" addr add "$E2E_NET.2/24" dev "$VB" &&
	if [ "$FAMILY" = 6 ]; then
		ip -n "$NSA" addr add "$ADDR0/64" dev "$VA" nodad &&
			ip -n "$NSB" addr add "$ADDR1/64" dev "$VB" nodad
	fi &&
	ip -n "$NSA" link set "$VA" up &&
	ip -n "$NSB" link set "$VB" up &&
	ip -n "$NSA" link set lo up &&
	ip -n "$NSB" link set lo up ||
	skip "cannot set up the veth pair between the namespaces"
mkdir -p "$(rundir_of "$NSA")" "$(rundir_of "$NSB")"

HOST_NS=$NSA start_rnic uroce0 "$ADDR0"
HOST_NS=$NSB start_rnic uroce1 "$ADDR1"
check "uroce0 chose IB MTU 1024 for the 1500-byte veth" \
	grep -q "IB MTU 1024" "$T/uroce0.log"
lo_capture_start "$VA" "$NSA" "$E2E_NET.2"
SERVER_NS=$NSA
CLIENT_NS=$NSB

next_tcp_port
run_pair pingpong 60 run \
	ibv_rc_pingpong -d uroce0 -g 0 -p "$TCP_PORT" -c -s 8192 -n 300 -- \
	ibv_rc_pingpong -d uroce1 -g 0 -p "$TCP_PORT" -c -s 8192 -n 300 "$TCP_HOST"
if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] &&
	grep -q 'bytes in' "$T/pingpong.server" && grep -q 'bytes in' "$T/pingpong.client" &&
	! grep -qi 'invalid data' "$T/pingpong.server" "$T/pingpong.client"; then
	pass "ibv_rc_pingpong -c across the veth (IPv$FAMILY): $(grep 'bytes in' "$T/pingpong.client") [${PAIR_MS} ms]"
else
	fail "ibv_rc_pingpong across the veth: server exit $SERVER_RC, client exit $CLIENT_RC"
	show_pair pingpong
fi

for prog in ib_write_bw ib_read_lat; do
	next_tcp_port
	run_pair "$prog" 60 run \
		"$prog" -d uroce0 -x 0 -F -n 200 -p "$TCP_PORT" -- \
		"$prog" -d uroce1 -x 0 -F -n 200 -p "$TCP_PORT" "$TCP_HOST"
	row=$(awk '/^ *#bytes/ { h = 1; next } h && /^ *[0-9]/ { print; exit }' "$T/$prog.client")
	case $prog in
	*_bw) col=4 ;;
	*) col=5 ;;
	esac
	if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] && [ -n "$row" ] &&
		awk -v c=$col '{ exit !($c + 0 > 0) }' <<<"$row"; then
		pass "$prog across the veth: $(tr -s ' \t' ' ' <<<"$row") [${PAIR_MS} ms]"
	else
		fail "$prog across the veth: server exit $SERVER_RC, client exit $CLIENT_RC, row '$row'"
		show_pair "$prog"
	fi
done

# Exact ICRC mode (IPv4 as root), off loopback: host A's RNIC receives every
# datagram on its raw socket (a path may cut a GSO send into datagrams with
# IDs 0, 1, 2, ..., which two sockets could hand over out of order), and its
# UDP socket's filter drops every datagram, which host A's kernel counts as
# Udp InErrors. The WRITEs came as GSO datagrams; with UDP_GRO on that socket
# the filter drops each whole, so InErrors grew by no more than the datagrams
# received, not by their segments (without it, the kernel cut every datagram
# for the filter to drop piece by piece).
if [ "$FAMILY" = 4 ]; then
	cval() { counter uroce0 "$1" "$(rundir_of "$NSA")" "$NSA"; }
	inerr=$(ip netns exec "$NSA" awk '/^Udp: [0-9]/ { print $4; exit }' /proc/net/snmp)
	rxd=$(cval daemon.rx_datagrams)
	raw=$(cval daemon.rx_raw_datagrams)
	segs=$(cval daemon.rx_gso_segments)
	gsod=$(cval daemon.rx_gso_datagrams)
	if [ "$(cval xport.icrc_exact)" -eq 0 ]; then
		echo "    (uroce0 checks ICRCs in another mode than exact: no UDP socket filter to look at)"
	else
		check "exact mode off loopback: all $rxd datagrams on the raw socket ($raw), Udp InErrors on host A $inerr <= $rxd ($segs packets in $gsod GSO datagrams)" \
			test "$raw" = "$rxd" -a "$inerr" -le "$rxd" -a "$segs" -gt $((2 * gsod))
	fi
fi

# rping through the RDMA CM across the veth, server on host A: the
# handshake's MADs (the REQ's IP header with IPv$FAMILY addresses) and the
# pings' RDMA READs and WRITEs, in the captures checked below. Run once more
# when it met rping's own race (its event thread reading the channel its
# main thread freed: exit 255 "Bad file descriptor" after every ping;
# rping_race_exit in lib.sh).
if command -v rping >/dev/null; then
	for attempt in 1 2; do
		want=$(($(cm_listens) + 1))
		HOST_NS=$SERVER_NS via_cmd run
		"${VIA[@]}" timeout -k 5 60 rping -s -v -V -C 10 -p 7200 -a "$ADDR0" \
			>"$T/rping.server" 2>&1 &
		spid=$!
		BG_PIDS="$BG_PIDS $spid"
		wait_cm_listens "$want" "$spid" || echo "(the server did not listen)" >>"$T/rping.server"
		HOST_NS=$CLIENT_NS via_cmd run
		CLIENT_RC=0
		"${VIA[@]}" timeout -k 5 60 rping -c -v -V -C 10 -p 7200 -a "$ADDR0" -I "$ADDR1" \
			>"$T/rping.client" 2>&1 || CLIENT_RC=$?
		SERVER_RC=0
		wait "$spid" || SERVER_RC=$?
		[ "$CLIENT_RC" -eq 0 ] && rping_race_exit "$T/rping.server" "$SERVER_RC" || break
		echo "    rping: the server met rping's own race (exit 255, EBADF): once more"
	done
	nc=$(grep -c '^ping data: rdma-ping-' "$T/rping.client")
	ns=$(grep -c '^server ping data: rdma-ping-' "$T/rping.server")
	if [ "$CLIENT_RC" -eq 0 ] && [ "$SERVER_RC" -eq 0 ] && [ "$nc" -eq 10 ] && [ "$ns" -eq 10 ]; then
		pass "rping across the veth (IPv$FAMILY, RDMA CM): 10 pings each way, data verified (-V)"
	else
		fail "rping across the veth: client exit $CLIENT_RC ($nc pings), server exit $SERVER_RC ($ns)"
		show_pair rping
	fi
fi

# Wildcard servers on host A's IPv6 RNIC: rping's [::] takes the IPv6
# client; its default 0.0.0.0 does not (AF_INET binds are AF-only, as in
# Linux's rdma_bind_addr): the client is rejected, reason 8. (That server
# makes no listen on the IPv6 RNIC, so there is no log line to wait for: the
# client starts a second later.)
if [ "$FAMILY" = 6 ] && command -v rping >/dev/null; then
	HOST_NS=$SERVER_NS via_cmd run
	"${VIA[@]}" timeout -k 5 30 rping -s -C 2 -p 7202 >"$T/rping4any.server" 2>&1 &
	s4pid=$!
	BG_PIDS="$BG_PIDS $s4pid"
	# Once more when the client met rping's own race (above; it hits
	# either side): exit 255, EBADF, after both pings.
	for attempt in 1 2; do
		want=$(($(cm_listens) + 1))
		HOST_NS=$SERVER_NS via_cmd run
		"${VIA[@]}" timeout -k 5 60 rping -s -C 2 -p 7201 -a :: >"$T/rping6any.server" 2>&1 &
		spid=$!
		BG_PIDS="$BG_PIDS $spid"
		wait_cm_listens "$want" "$spid" || echo "(the server did not listen)" >>"$T/rping6any.server"
		[ "$attempt" = 1 ] && sleep 1
		HOST_NS=$CLIENT_NS via_cmd run
		rc=0
		"${VIA[@]}" timeout -k 5 60 rping -c -v -C 2 -p 7201 -a "$ADDR0" -I "$ADDR1" >"$T/rping6any.client" 2>&1 || rc=$?
		SERVER_RC=0
		wait "$spid" || SERVER_RC=$?
		rping_race_exit "$T/rping6any.client" "$rc" &&
			[ "$(grep -c '^ping data' "$T/rping6any.client")" -eq 2 ] || break
		echo "    rping: the [::] client met rping's own race (exit 255, EBADF): once more"
	done
	[ "$rc" -eq 0 ] && { [ "$SERVER_RC" -eq 0 ] || [ "$SERVER_RC" -eq 255 ]; } &&
		[ "$(grep -c '^ping data' "$T/rping6any.client")" -eq 2 ] &&
		pass "rping's [::] server takes the IPv6 client" ||
		{ fail "[::] server: client exit $rc, server exit $SERVER_RC"; show_pair rping6any; }
	rc=0
	"${VIA[@]}" timeout -k 5 30 rping -c -v -C 1 -p 7202 -a "$ADDR0" -I "$ADDR1" >"$T/rping4any.client" 2>&1 || rc=$?
	kill "$s4pid" 2>/dev/null
	wait "$s4pid" 2>/dev/null
	[ "$rc" -ne 0 ] && grep -q 'RDMA_CM_EVENT_REJECTED, error 8' "$T/rping4any.client" &&
		pass "rping's 0.0.0.0 server does not take it: RDMA_CM_EVENT_REJECTED, reason 8" ||
		{ fail "0.0.0.0 server: client exit $rc"; show "$T/rping4any.client"; }
fi

lo_capture_stop

stop_rnics
check_captures
# The rping REQ as uroce decode describes it: the RDMA CM IP header of its
# private data holds the client's and the server's IPv$FAMILY addresses.
if command -v rping >/dev/null; then
	if [ "$FAMILY" = 6 ]; then ip="ip=\[$ADDR1\]:[0-9]*>\[$ADDR0\]:7200 "; else ip="ip=$ADDR1:[0-9]*>$ADDR0:7200 "; fi
	grep -q "CM ConnectRequest .*$ip" "$T/uroce1.pcap.decode" &&
		pass "the REQ carries the IPv$FAMILY addresses: $(grep -m1 -o "CM ConnectRequest .*$ip" "$T/uroce1.pcap.decode")" ||
		{ fail "no REQ from $ADDR1 to $ADDR0 port 7200 in uroce1's capture"; grep -m3 'CM ' "$T/uroce1.pcap.decode"; }
fi
# The link goes down under a running ib_write_bw (issue 12 item 6): what the
# kernel refuses to send is logged with the destination, the QP and the
# reason, at a limited rate (the counter counts every datagram), and the
# QPs that exhaust their retries are logged with their status.
if [ "$FAMILY" = 4 ]; then
	RNIC_PCAP=0 # the veth capture above is done with
	HOST_NS=$NSA start_rnic uroce2 "$ADDR0"
	HOST_NS=$NSB start_rnic uroce3 "$ADDR1"
	next_tcp_port
	# ib_write_bw: the client always has WRITEs outstanding, so it is the
	# one that meets the refused sends and exhausts its retries.
	HOST_NS=$SERVER_NS via_cmd run
	"${VIA[@]}" timeout -k 5 60 ib_write_bw -d uroce2 -x 0 -F -s 4096 -D 30 -p "$TCP_PORT" \
		>"$T/down.server" 2>&1 &
	spid=$!
	BG_PIDS="$BG_PIDS $spid"
	await_listen "$TCP_PORT" "$spid" "$SERVER_NS" || fail "link down: the server did not listen"
	HOST_NS=$CLIENT_NS via_cmd run
	"${VIA[@]}" timeout -k 5 60 ib_write_bw -d uroce3 -x 0 -F -s 4096 -D 30 -p "$TCP_PORT" \
		"$TCP_HOST" >"$T/down.client" 2>&1 &
	cpid=$!
	BG_PIDS="$BG_PIDS $cpid"
	# Until the WRITEs run (the set-up goes over the same veth).
	for _ in $(seq 200); do
		n=$(ip netns exec "$NSB" "$UROCE_BIN/uroce" counters uroce3 --rundir "$(rundir_of "$NSB")" \
			--all 2>/dev/null | awk '$1 == "xport.ack_rcvd" { print $2 }')
		[ "${n:-0}" -ge 100 ] && break
		sleep 0.1
	done
	# The client's link: its sends are refused (the server, waiting for
	# the end over TCP, would wait forever and is stopped afterwards).
	ip -n "$NSB" link set "$VB" down
	rc=0
	wait "$cpid" || rc=$?
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	ip -n "$NSB" link set "$VB" up
	lines=$(grep -Ec "datagram \([0-9]+ packets?\) to $E2E_NET.1 for its QP 0x[0-9a-f]+: " "$T/uroce3.log")
	lost=$(ip netns exec "$NSB" "$UROCE_BIN/uroce" counters uroce3 --rundir "$(rundir_of "$NSB")" \
		--all | awk '$1 == "daemon.tx_dropped" { print $2 }')
	[ "$rc" -ne 0 ] && grep -q "completed with transport retry counter exceeded (status 12)" \
		"$T/uroce3.log" && pass "link down: ib_write_bw fails, its WR logged with status 12" ||
		fail "link down: client exit $rc, no retry-exceeded line in uroce3's log"
	grep -q "moved to ERR (transport retry counter exceeded)" "$T/uroce3.log" &&
		pass "link down: the QP moved to ERR is logged with the reason" ||
		fail "link down: no 'moved to ERR' line"
	[ "$lines" -ge 1 ] && [ "$lines" -le 20 ] && [ "${lost:-0}" -ge "$lines" ] &&
		pass "link down: $lost datagrams refused, $lines lines: $(grep -m1 "to $E2E_NET.1 for its QP" "$T/uroce3.log" | sed 's/.*warn[a-z]*: //')" ||
		fail "link down: $lines log lines for ${lost:-?} refused datagrams"
	stop_rnic uroce2
	stop_rnic uroce3
fi

finish

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two hosts: network namespaces joined by a veth pair (Ethernet, MTU 1500),
# each with its own IP stack, its own run directory and one RNIC (uroce0 on
# host A, uroce1 on host B). ibv_rc_pingpong with data validation, ib_write_bw
# and ib_read_lat cross the veth; the daemons pick the IB MTU that fits the
# interface (1024 for 1500). A tshark capture of the veth (real Ethernet
# frames) and both daemons' captures must decode with every ICRC valid.
# Skips when network namespaces cannot be created here (needs root).
. "$(dirname "$0")/lib.sh"
need_prog ibv_rc_pingpong
need_prog ib_write_bw
need_prog ib_read_lat
need_prog ip
NSA=uroce-e2e-$$-a
NSB=uroce-e2e-$$-b
VA=ue2e$$a
VB=ue2e$$b

netns_cleanup() {
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null # the veth pair goes with them
}

if ! ip netns add "$NSA" 2>"$T/netns.err"; then
	skip "cannot create network namespaces here: $(cat "$T/netns.err")"
fi
trap 'e2e_cleanup; netns_cleanup' EXIT
ip netns add "$NSB" &&
	ip link add "$VA" type veth peer name "$VB" &&
	ip link set "$VA" netns "$NSA" &&
	ip link set "$VB" netns "$NSB" &&
	ip -n "$NSA" addr add "$ADDR0/24" dev "$VA" &&
	ip -n "$NSB" addr add "$ADDR1/24" dev "$VB" &&
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
lo_capture_start "$VA" "$NSA" "$ADDR1"
SERVER_NS=$NSA
CLIENT_NS=$NSB

next_tcp_port
run_pair pingpong 60 run \
	ibv_rc_pingpong -d uroce0 -g 0 -p "$TCP_PORT" -c -s 8192 -n 300 -- \
	ibv_rc_pingpong -d uroce1 -g 0 -p "$TCP_PORT" -c -s 8192 -n 300 "$ADDR0"
if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] &&
	grep -q 'bytes in' "$T/pingpong.server" && grep -q 'bytes in' "$T/pingpong.client" &&
	! grep -qi 'invalid data' "$T/pingpong.server" "$T/pingpong.client"; then
	pass "ibv_rc_pingpong -c across the veth: $(grep 'bytes in' "$T/pingpong.client") [${PAIR_MS} ms]"
else
	fail "ibv_rc_pingpong across the veth: server exit $SERVER_RC, client exit $CLIENT_RC"
	show_pair pingpong
fi

for prog in ib_write_bw ib_read_lat; do
	next_tcp_port
	run_pair "$prog" 60 run \
		"$prog" -d uroce0 -x 0 -F -n 200 -p "$TCP_PORT" -- \
		"$prog" -d uroce1 -x 0 -F -n 200 -p "$TCP_PORT" "$ADDR0"
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

lo_capture_stop
stop_rnics
check_captures
finish

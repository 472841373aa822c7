#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# UD multicast between two RNICs over real IP multicast: in a network
# namespace of its own (so that the test's group traffic meets nobody
# else's), a veth pair with uroce0 on one end and uroce1 on the other. The
# sender's datagram leaves uroce0's interface (the kernel loops a copy back
# to uroce0's own members of the group) and crosses the veth to uroce1,
# which joined the group on its end (IGMP). tests/verbs/mcast checks the
# delivery to three attached QPs on the two RNICs, detach, Q_Keys and the
# errors; then rdmacm-utils' mckey joins through the RDMA CM and sends
# between the RNICs. The captures decode with every ICRC valid, and tshark
# shows DestQP 0xFFFFFF with a DETH on every multicast packet of the veth.
# Skips when network namespaces cannot be created here (needs root).
#
#   mcast.sh PATH_TO_mcast [4|6|tracked|lo]
#     4        IPv4 RNICs, both in the exact ICRC mode (raw group sockets)
#     lo       the same, both RNICs on the namespace's lo (two RNICs of one
#              host on one interface: the kernel's loopback copy reaches both)
#     tracked  the same, uroce1 without CAP_NET_RAW (UDP group sockets)
#     6        IPv6 RNICs and an IPv6 group (ff0e::/16)

E2E_NET=${UROCE_TEST_PRIV_NET:?UROCE_TEST_PRIV_NET must be set (by uroce_net_test)}
. "$(dirname "$0")/lib.sh"
PROG=${1:?usage: mcast.sh PATH_TO_mcast [4|6|tracked|lo]}
MODE=${2:-4}
[ -x "$PROG" ] || skip "$PROG was not built (no system libibverbs)"
need_prog ip
[ "$MODE" != tracked ] || need_prog setpriv
NS=uroce-t$UROCE_TEST_SLOT-$UROCE_TEST_INDEX-m
VA=ut${UROCE_TEST_SLOT}i${UROCE_TEST_INDEX}m
VB=ut${UROCE_TEST_SLOT}i${UROCE_TEST_INDEX}n
# A group of the administratively scoped range, per test slot.
GROUP=239.$((UROCE_TEST_SLOT % 256)).$((UROCE_TEST_INDEX % 256)).1
GROUP2=239.$((UROCE_TEST_SLOT % 256)).$((UROCE_TEST_INDEX % 256)).7
GROUP_RE="239\\.$((UROCE_TEST_SLOT % 256))\\.$((UROCE_TEST_INDEX % 256))\\."
IPF=ip
if [ "$MODE" = 6 ]; then
	ADDR0=$UROCE_TEST_V6_NET::1
	ADDR1=$UROCE_TEST_V6_NET::2
	GROUP=$(printf 'ff0e::db8:%x:%x:1' "$UROCE_TEST_SLOT" "$UROCE_TEST_INDEX")
	GROUP2=$(printf 'ff0e::db8:%x:%x:7' "$UROCE_TEST_SLOT" "$UROCE_TEST_INDEX")
	GROUP_RE=$(printf 'ff0e::db8:%x:%x:' "$UROCE_TEST_SLOT" "$UROCE_TEST_INDEX")
	IPF=ipv6
fi

netns_cleanup() {
	ip netns del "$NS" 2>/dev/null
	ip link del "$VA" 2>/dev/null
}
netns_cleanup
if ! ip netns add "$NS" 2>"$T/netns.err"; then
	skip "cannot create network namespaces here: $(cat "$T/netns.err")"
fi
at_exit netns_cleanup
ip link add "$VA" type veth peer name "$VB" &&
	ip link set "$VA" netns "$NS" &&
	ip link set "$VB" netns "$NS" &&
	if [ "$MODE" = 6 ]; then
		ip -n "$NS" addr add "$ADDR0/64" dev "$VA" nodad &&
			ip -n "$NS" addr add "$ADDR1/64" dev "$VB" nodad &&
			ip -n "$NS" addr add "$E2E_NET.1/24" dev "$VA" # the capture's probe
	elif [ "$MODE" = lo ]; then
		ip -n "$NS" addr add "$ADDR0/32" dev lo && ip -n "$NS" addr add "$ADDR1/32" dev lo
	else
		ip -n "$NS" addr add "$ADDR0/24" dev "$VA" &&
			ip -n "$NS" addr add "$ADDR1/24" dev "$VB"
	fi &&
	ip -n "$NS" link set "$VA" up &&
	ip -n "$NS" link set "$VB" up &&
	ip -n "$NS" link set lo up ||
	skip "cannot set up the veth pair in the namespace"
# Both ends are this host's: a datagram from uroce0's address that comes in
# on uroce1's end is accepted as on a link between two hosts.
for k in all.rp_filter default.rp_filter $VA.rp_filter $VB.rp_filter; do
	ip netns exec "$NS" sysctl -qw "net.ipv4.conf.$k=0"
done
for k in $VA.accept_local $VB.accept_local; do
	ip netns exec "$NS" sysctl -qw "net.ipv4.conf.$k=1"
done
RUNDIR=$(rundir_of "$NS")
mkdir -p "$RUNDIR"
HOST_NS=$NS

start_rnic uroce0 "$ADDR0"
if [ "$MODE" = tracked ]; then
	UROCED_WRAP="setpriv --inh-caps=-all --bounding-set=-net_raw" start_rnic uroce1 "$ADDR1"
	check "uroce1 without CAP_NET_RAW: tracked ICRC mode (UDP group sockets)" \
		grep -q "ICRC check: tracked" "$T/uroce1.log"
else
	start_rnic uroce1 "$ADDR1"
fi
# The capture's probe goes out of uroce0's end to a neighbour that is not there.
LO_FILTER="udp and (port 4791 or dst port 9)"
CAP_IF=$VA RX_IF=$VB # the capture's interface, uroce1's
if [ "$MODE" = lo ]; then
	CAP_IF=lo RX_IF=lo
	lo_capture_start lo "$NS" "$ADDR1"
else
	ip -n "$NS" neigh replace "$E2E_NET.3" lladdr 02:00:00:00:00:03 dev "$VA" nud permanent
	lo_capture_start "$VA" "$NS" "$E2E_NET.3"
fi

via_cmd run
rc=0
"${VIA[@]}" timeout -k 5 120 "$PROG" uroce0 uroce1 "$GROUP" >"$T/mcast.out" 2>&1 || rc=$?
sed 's/^/    /' "$T/mcast.out"
check "mcast exit 0 (got $rc)" test "$rc" -eq 0
check "mcast: every check passed" grep -qx "all passed" "$T/mcast.out"
tx=$(counter uroce0 daemon.tx_mcast "$RUNDIR" "$NS")
rx1=$(counter uroce1 daemon.rx_mcast "$RUNDIR" "$NS")
rx0=$(counter uroce0 daemon.rx_mcast "$RUNDIR" "$NS")
noroute=$(counter uroce0 daemon.tx_no_route "$RUNDIR" "$NS")
check "uroce0 sent 31 datagrams to the group (tx_mcast $tx), none unroutable (tx_no_route $noroute)" \
	test "${tx:-0}" -eq 31 -a "${noroute:-1}" -eq 0
check "both RNICs received them (rx_mcast: uroce0 $rx0, uroce1 $rx1 on $RX_IF)" \
	test "${rx0:-0}" -ge 31 -a "${rx1:-0}" -ge 31

# The program is gone: its QPs are destroyed, so are their attachments, and
# the RNICs left the groups (no group socket, no membership on the veth).
groups_left() {
	ip netns exec "$NS" ss -Huwan 2>/dev/null | grep -c "$GROUP_RE" || true
}
check "after the program: no group socket left ($(groups_left))" test "$(groups_left)" -eq 0
check "after the program: the interfaces are in no group" \
	bash -c "! ip -n '$NS' maddr show | grep -q '$GROUP'"

# rdmacm-utils' mckey: receiver on uroce1, sender on uroce0, joined through
# rdma_join_multicast (the RDMA CM's MULTICAST_JOIN event gives the group's
# address vector, QPN 0xFFFFFF and Q_Key).
if command -v mckey >/dev/null; then
	bg_via mckey.recv 60 mckey -m "$GROUP2" -b "$ADDR1" -C 10
	RPID=$BG_PID
	# the receiver's join is on the wire (its group socket) before the sender starts
	for _ in $(seq 100); do
		grep -q "joined" "$T/mckey.recv" 2>/dev/null && break
		sleep 0.1
	done
	# joined: uroce1's end of the veth is in the group (IGMP), with its socket
	check "while mckey's receiver waits: $RX_IF is in $GROUP2, $(groups_left) group socket" \
		bash -c "ip -n '$NS' maddr show dev '$RX_IF' | grep -q '$GROUP2' && [ $(groups_left) -ge 1 ]"
	rc=0
	"${VIA[@]}" timeout -k 5 60 mckey -m "$GROUP2" -b "$ADDR0" -s -C 10 >"$T/mckey.send" 2>&1 || rc=$?
	wait "$RPID"
	rrc=$?
	if [ "$rc" -eq 0 ] && [ "$rrc" -eq 0 ] && grep -q "receiving data transfers" "$T/mckey.recv" &&
		grep -q "^test complete" "$T/mckey.recv" && grep -q "^test complete" "$T/mckey.send"; then
		pass "mckey: sender on uroce0 and receiver on uroce1 joined $GROUP2, 10 messages received"
	else
		fail "mckey: sender exit $rc, receiver exit $rrc"
		show "$T/mckey.send" 20
		show "$T/mckey.recv" 20
	fi
	check "after mckey: no group socket left ($(groups_left)), $RX_IF in no group" \
		bash -c "[ $(groups_left) -eq 0 ] && ! ip -n '$NS' maddr show | grep -q '$GROUP2'"
	# A receiver killed while joined: the daemon releases its QP and its
	# join, and the RNIC leaves the group.
	bg_via mckey.killed 60 mckey -m "$GROUP2" -b "$ADDR1" -C 10
	for _ in $(seq 100); do
		grep -q "joined" "$T/mckey.killed" 2>/dev/null && break
		sleep 0.1
	done
	victim=$BG_PID
	while [ -n "$victim" ] && [ "$(cat "/proc/$victim/comm" 2>/dev/null)" != mckey ]; do
		victim=$(pgrep -P "$victim" | head -n 1)
	done
	if [ -n "$victim" ] && [ "$(groups_left)" -ge 1 ]; then
		kill -KILL "$victim"
		for _ in $(seq 50); do
			[ "$(groups_left)" -eq 0 ] && break
			sleep 0.1
		done
		check "mckey killed while joined: the group is left ($(groups_left) socket), $RX_IF in no group" \
			bash -c "[ $(groups_left) -eq 0 ] && ! ip -n '$NS' maddr show | grep -q '$GROUP2'"
	else
		fail "mckey did not join for the kill (pid '${victim}', $(groups_left) group sockets)"
		show "$T/mckey.killed"
	fi
else
	echo "SKIP (mckey): rdmacm-utils is not installed"
fi

lo_capture_stop
stop_rnics
check_decode "$T/uroce0.pcap"
check_decode "$T/uroce1.pcap"
check_tshark "$T/uroce0.pcap"
check_tshark "$T/uroce1.pcap"
if [ -n "$LO_CAP" ]; then
	check_tshark "$LO_CAP"
	# every datagram to the group is a UD SEND Only (opcode 100; mckey's carry
	# an immediate, 101) to QP 0xFFFFFF with a DETH: the verbs program's
	# Q_Key, and mckey's the RDMA CM's
	for g in "$GROUP 31 0x0000000011111111 100" "$GROUP2 10 0x0000000001234567 101"; do
		set -- $g
		nmc=$(tshark -r "$LO_CAP" -Y "$IPF.dst == $1" -T fields -e infiniband.bth.opcode \
			-e infiniband.bth.destqp -e infiniband.deth.q_key 2>/dev/null | sort | uniq -c)
		echo "$nmc" | sed 's/^/    tshark: /'
		check "tshark on $CAP_IF: $2 UD SEND Only (opcode $4) to $1, QP 0xffffff, DETH Q_Key $3" \
			grep -Eq "^ *$2[[:space:]]+$4[[:space:]]+0xffffff[[:space:]]+$3\$" <<<"$nmc"
	done
fi
finish

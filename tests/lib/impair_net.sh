# SPDX-License-Identifier: MIT
# Three network namespaces joined through the impairment tool (sourced, POSIX
# sh, after common.sh): host A and host B, each with one end of a veth pair,
# and a middle namespace M holding the other two ends, between which
# uroce_impair (tests/lib/impair.c) forwards every frame, impairing the
# matching ones. A and B share the test's private /24 (UROCE_TEST_PRIV_NET):
# A is .1, B is .2, on one Ethernet segment through M, which has no address
# at all. Names come from the test's allocation (TestNet.cmake), like those
# of tests/e2e/netns.sh: namespaces uroce-t<SLOT>-<INDEX>-{a,b,m}, veths
# ut<SLOT>i<INDEX>{a,am,b,bm}; so no two tests or builds share one, and the
# claim on the test network makes this run their only user. Traffic never
# leaves these namespaces. Creating namespaces needs root: without it the
# test is skipped (exit 77) with the reason.
#
#   impair_net_up            build the topology (cleaned up at exit); IMP_MTU
#                            sets the veths' MTU (default 1500)
#   impair_start ARGS...     start uroce_impair in M with ARGS (its options,
#                            e.g. -x loss=5 --seed 3); its log is $T/impair.log
#   impair_stop              stop it; its counters end up in $T/impair.stats
#   impair_outage            start an outage now (SIGUSR1, --outage-len long)
#   impair_count DIR FIELD   a counter of the last run: DIR a->b or b->a,
#                            FIELD in sent passed lost outage dup reordered
#                            corrupted tx_err held hold_min_us hold_avg_us
#                            hold_max_us late_max_us

IMP_NS_A=uroce-t${UROCE_TEST_SLOT:?}-${UROCE_TEST_INDEX:?}-a
IMP_NS_B=uroce-t$UROCE_TEST_SLOT-$UROCE_TEST_INDEX-b
IMP_NS_M=uroce-t$UROCE_TEST_SLOT-$UROCE_TEST_INDEX-m
IMP_VA=ut${UROCE_TEST_SLOT}i${UROCE_TEST_INDEX}a
IMP_VAM=ut${UROCE_TEST_SLOT}i${UROCE_TEST_INDEX}am
IMP_VB=ut${UROCE_TEST_SLOT}i${UROCE_TEST_INDEX}b
IMP_VBM=ut${UROCE_TEST_SLOT}i${UROCE_TEST_INDEX}bm
IMP_NET=${UROCE_TEST_PRIV_NET:?UROCE_TEST_PRIV_NET must be set (by uroce_net_test)}
IMP_ADDR_A=$IMP_NET.1
IMP_ADDR_B=$IMP_NET.2
IMPAIR_BIN=${IMPAIR_BIN:-$UROCE_BIN/uroce_impair}
IMP_MTU=${IMP_MTU:-1500}
IMPAIR_PID=""

impair_net_cleanup() {
	[ -z "$IMPAIR_PID" ] || kill -TERM "$IMPAIR_PID" 2>/dev/null
	for _i_ns in "$IMP_NS_A" "$IMP_NS_B" "$IMP_NS_M"; do
		ip netns del "$_i_ns" 2>/dev/null
	done
	# veths that never reached a namespace
	ip link del "$IMP_VA" 2>/dev/null
	ip link del "$IMP_VB" 2>/dev/null
	return 0
}

impair_net_up() {
	[ -x "$IMPAIR_BIN" ] || skip "$IMPAIR_BIN is not built"
	[ "$(id -u)" = 0 ] || skip "network namespaces need root (uid $(id -u))"
	# leftovers of a run of this test that was killed before its cleanup
	impair_net_cleanup
	if ! ip netns add "$IMP_NS_A" 2>"$T/netns.err"; then
		skip "cannot create network namespaces here: $(cat "$T/netns.err")"
	fi
	at_exit impair_net_cleanup
	ip netns add "$IMP_NS_B" && ip netns add "$IMP_NS_M" &&
		ip link add "$IMP_VA" type veth peer name "$IMP_VAM" &&
		ip link add "$IMP_VB" type veth peer name "$IMP_VBM" &&
		ip link set "$IMP_VA" netns "$IMP_NS_A" &&
		ip link set "$IMP_VAM" netns "$IMP_NS_M" &&
		ip link set "$IMP_VB" netns "$IMP_NS_B" &&
		ip link set "$IMP_VBM" netns "$IMP_NS_M" &&
		ip -n "$IMP_NS_A" addr add "$IMP_ADDR_A/24" dev "$IMP_VA" &&
		ip -n "$IMP_NS_B" addr add "$IMP_ADDR_B/24" dev "$IMP_VB" &&
		ip -n "$IMP_NS_A" link set "$IMP_VA" mtu "$IMP_MTU" &&
		ip -n "$IMP_NS_B" link set "$IMP_VB" mtu "$IMP_MTU" &&
		ip -n "$IMP_NS_M" link set "$IMP_VAM" mtu "$IMP_MTU" &&
		ip -n "$IMP_NS_M" link set "$IMP_VBM" mtu "$IMP_MTU" &&
		# no TCP segmentation offload: every frame the tool sees fits the MTU
		ip -n "$IMP_NS_A" link set "$IMP_VA" gso_max_segs 1 gso_max_size "$IMP_MTU" &&
		ip -n "$IMP_NS_B" link set "$IMP_VB" gso_max_segs 1 gso_max_size "$IMP_MTU" &&
		ip -n "$IMP_NS_A" link set "$IMP_VA" up &&
		ip -n "$IMP_NS_B" link set "$IMP_VB" up &&
		ip -n "$IMP_NS_M" link set "$IMP_VAM" up &&
		ip -n "$IMP_NS_M" link set "$IMP_VBM" up &&
		ip -n "$IMP_NS_A" link set lo up &&
		ip -n "$IMP_NS_B" link set lo up &&
		ip -n "$IMP_NS_M" link set lo up ||
		skip "cannot set up the veth pairs between the namespaces"
	# Permanent neighbours: no ARP through the tool, whose loss would delay
	# (and, while unresolved, drop) the first packets of a test.
	_i_mac_a=$(ip -n "$IMP_NS_A" -br link show dev "$IMP_VA" | awk '{ print $3 }')
	_i_mac_b=$(ip -n "$IMP_NS_B" -br link show dev "$IMP_VB" | awk '{ print $3 }')
	ip -n "$IMP_NS_A" neigh replace "$IMP_ADDR_B" lladdr "$_i_mac_b" dev "$IMP_VA" nud permanent &&
		ip -n "$IMP_NS_B" neigh replace "$IMP_ADDR_A" lladdr "$_i_mac_a" dev "$IMP_VB" \
			nud permanent ||
		skip "cannot set the neighbour entries of the namespaces"
}

impair_start() {
	rm -f "$T/impair.stats"
	ip netns exec "$IMP_NS_M" "$IMPAIR_BIN" --stats "$T/impair.stats" "$@" \
		"$IMP_VAM" "$IMP_VBM" 2>"$T/impair.log" 9>&- &
	IMPAIR_PID=$!
	BG_PIDS="$BG_PIDS $IMPAIR_PID"
	_i_n=0
	while ! grep -q "impair: ready" "$T/impair.log" 2>/dev/null; do
		if ! running "$IMPAIR_PID" || [ $_i_n -ge 50 ]; then
			fail "uroce_impair $* did not start"
			show "$T/impair.log"
			exit 1
		fi
		_i_n=$((_i_n + 1))
		sleep 0.1
	done
}

impair_stop() {
	[ -n "$IMPAIR_PID" ] || return 0
	kill -TERM "$IMPAIR_PID" 2>/dev/null
	wait "$IMPAIR_PID" 2>/dev/null
	IMPAIR_PID=""
}

impair_outage() {
	kill -USR1 "$IMPAIR_PID"
}

impair_count() {
	awk -v d="$1" -v f="$2" '$1 == d { for (i = 2; i < NF; i += 2) if ($i == f) print $(i + 1) }' \
		"$T/impair.stats" 2>/dev/null
}

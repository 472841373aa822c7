#!/bin/sh
# SPDX-License-Identifier: MIT
# On-demand paging (issue 10 item 4) through the shim on real daemons:
# tests/dp/odp.c (ODP MRs over memory mapped after registration and then
# unmapped: the data moves while mapped, the WR fails with LOC_PROT_ERR /
# REM_ACCESS_ERR when not, nothing else breaks; implicit ODP; ibv_advise_mr
# and its errors), then rdma-core's ibv_rc_pingpong with -o (ODP), -O
# (implicit ODP) and -P (prefetch) between two RNICs, data checked (-c);
# and tests/dp/srq_pd.c: SRQ receive keys belong to the SRQ's PD;
# tests/dp/srq_resize.c: SRQ resizing under traffic; tests/dp/atomic_write.c:
# IBA 1.5 ATOMIC WRITE (ibv_wr_atomic_write), its completion and errors.
. "$CTL_SRC/lib.sh"

P=$UROCE_BIN/odp
[ -x "$P" ] || skip "odp not built (no libibverbs)"
need_prog ibv_rc_pingpong

start_daemon uroce0 "$TEST_NET.1"
start_daemon uroce1 "$TEST_NET.2"
if timeout 60 "$UROCE_BIN/uroce" run -- "$P" uroce0 >"$T/odp.out" 2>&1; then
	pass "odp: $(grep -c '^ok:' "$T/odp.out") checks"
else
	fail "odp"
	show "$T/odp.out"
fi
# The receive WQEs of an SRQ belong to the SRQ's PD (srq_pd.c).
if timeout 60 "$UROCE_BIN/uroce" run -- "$UROCE_BIN/srq_pd" uroce0 >"$T/srq_pd.out" 2>&1; then
	pass "srq_pd: $(grep -c '^ok:' "$T/srq_pd.out") checks"
else
	fail "srq_pd"
	show "$T/srq_pd.out"
fi
# SRQ resize (ibv_modify_srq IBV_SRQ_MAX_WR) under traffic (srq_resize.c).
if timeout 120 "$UROCE_BIN/uroce" run -- "$UROCE_BIN/srq_resize" uroce0 >"$T/srq_resize.out" 2>&1; then
	pass "srq_resize: $(grep -c '^ok:' "$T/srq_resize.out") checks"
else
	fail "srq_resize"
	show "$T/srq_resize.out"
fi
# ATOMIC WRITE (atomic_write.c) on an RNIC of its own with a capture: every
# packet's ICRC good in uroce decode, nothing malformed for tshark 4.0 (which
# calls opcode 0x1D "Unknown (29)"), the Lua plugin decoding each 0x1D.
start_daemon uroce2 "$TEST_NET.3" --pcap "$T/aw.pcap"
D2=$LAST_PID
if timeout 120 "$UROCE_BIN/uroce" run -- "$UROCE_BIN/atomic_write" uroce2 >"$T/atomic_write.out" 2>&1; then
	pass "atomic_write: $(grep -c '^ok:' "$T/atomic_write.out") checks"
else
	fail "atomic_write"
	show "$T/atomic_write.out"
fi
stop_daemon "$D2"
# The same from uroce1 into memory registered on uroce0: two RNICs.
if timeout 120 "$UROCE_BIN/uroce" run -- "$UROCE_BIN/atomic_write" uroce1 uroce0 >"$T/aw2.out" 2>&1; then
	pass "atomic_write uroce1 -> uroce0: $(grep -c '^ok:' "$T/aw2.out") checks"
else
	fail "atomic_write uroce1 -> uroce0"
	show "$T/aw2.out"
fi
uroce decode "$T/aw.pcap" >"$T/aw.dec" 2>&1 && grep -q "RC Atomic Write" "$T/aw.dec" &&
	pass "aw.pcap: $(tail -1 "$T/aw.dec")" || fail "aw.pcap: $(tail -1 "$T/aw.dec")"
if command -v tshark >/dev/null 2>&1; then
	uroce wireshark-plugin print >"$T/uroce.lua"
	nd=$(grep -c "RC Atomic Write" "$T/aw.dec")
	nm=$(tshark -r "$T/aw.pcap" --disable-heuristic rpcrdma_infiniband -Y _ws.malformed \
		2>/dev/null | wc -l)
	nt=$(tshark -r "$T/aw.pcap" -X lua_script:"$T/uroce.lua" \
		-Y 'infiniband.bth.opcode == 29 && uroce.atomic_write.dmalen == 8 && uroce.icrc == "good"' \
		2>/dev/null | wc -l)
	[ "$nm" -eq 0 ] && [ "$nt" -eq "$nd" ] && [ "$nd" -gt 0 ] &&
		pass "tshark: no malformed packet, the plugin decodes all $nt ATOMIC WRITEs" ||
		fail "tshark: $nm malformed, plugin decoded $nt of $nd ATOMIC WRITEs"
fi
prefetches=$(counter daemon.odp_prefetch uroce0)
[ "$prefetches" -ge 1 ] && pass "counter odp_prefetch: $prefetches" ||
	fail "counter odp_prefetch is '$prefetches'"

for opts in "-o" "-O" "-o -P" "-O -P"; do
	next_tcp_port
	port=$TCP_PORT
	# shellcheck disable=SC2086
	timeout 60 "$UROCE_BIN/uroce" run -- ibv_rc_pingpong -d uroce0 -g 0 -p "$port" $opts -c \
		-n 200 >"$T/pp.server" 2>&1 &
	spid=$!
	await_listen "$port" "$spid"
	# shellcheck disable=SC2086
	if timeout 60 "$UROCE_BIN/uroce" run -- ibv_rc_pingpong -d uroce1 -g 0 -p "$port" $opts -c \
		-n 200 "$TEST_NET.1" >"$T/pp.client" 2>&1 && wait "$spid" &&
		grep -q 'iters in' "$T/pp.client"; then
		pass "ibv_rc_pingpong $opts -c: $(grep 'iters in' "$T/pp.client")"
	else
		wait "$spid"
		fail "ibv_rc_pingpong $opts -c"
		show "$T/pp.server"
		show "$T/pp.client"
	fi
done
finish

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# FLUSH (IBA A19) between two uroce RNICs: tests/verbs/flush, a plain verbs
# program that reaches ibv_wr_flush through rdma-core 45's layout of struct
# ibv_qp_ex (it is built with rdma-core 44's headers, which have no
# wr_flush), runs from uroce1 into memory registered on uroce0 through
# `uroce run`; every check must pass. Then both captures must decode (uroce
# decode: every ICRC good, the FLUSH requests with their FETH, answered by
# zero-length READ responses) and tshark must find nothing malformed, while
# uroce's Lua plugin decodes the FETH and RETH of every FLUSH (Wireshark 4.0
# calls opcode 0x1C "Unknown (28)").
#
#   flush.sh PATH_TO_flush
. "$(dirname "$0")/lib.sh"
PROG=${1:?usage: flush.sh PATH_TO_flush}
[ -x "$PROG" ] || skip "$PROG was not built (no system libibverbs)"

start_rnics
rc=0
via_cmd run
"${VIA[@]}" timeout -k 5 120 "$PROG" uroce1 uroce0 >"$T/flush.out" 2>&1 || rc=$?
if [ $rc -eq 0 ] && ! grep -q '^FAIL' "$T/flush.out"; then
	pass "flush uroce1 -> uroce0: $(grep -c '^ok:' "$T/flush.out") checks"
else
	fail "flush uroce1 -> uroce0 (exit $rc)"
	grep -v '^ok' "$T/flush.out" | head -n 20 | sed 's/^/    | /'
fi
# Four FLUSHes succeed (a range, the whole MR, an ODP MR, a range after the
# local refusals); four are refused by the target (three at the R_Key, one for the
# QP's access flags) and never executed.
flushed=$(counter uroce0 xport.flush_executed)
[ "$flushed" -eq 4 ] && pass "uroce0 xport.flush_executed: $flushed" ||
	fail "uroce0 xport.flush_executed is $flushed (want 4)"
stop_rnics
check_captures

# The FLUSH requests in uroce1's capture: uroce decode shows each with its
# FETH; the answers in uroce0's are zero-length READ responses. Requests and
# responses are counted by QP and PSN (lib.sh qp_psn: a resent request is
# the same request).
nd=$(grep 'RC Flush.*FETH sel=[01] plt=[12]' "$T/uroce1.pcap.decode" | qp_psn)
nd_pkts=$(grep -c 'RC Flush.*FETH sel=[01] plt=[12]' "$T/uroce1.pcap.decode")
[ "$nd" -eq 8 ] && pass "uroce decode: $nd FLUSH requests with their FETH ($nd_pkts packets)" ||
	fail "uroce decode: $nd FLUSH requests with a FETH (want 8; $nd_pkts packets)"
nr=$(grep 'RC RDMA Read Response Only .* len=0 icrc=ok' "$T/uroce0.pcap.decode" | qp_psn)
[ "$nr" -eq 4 ] && pass "uroce decode: the 4 FLUSHes that succeeded answered by zero-length READ responses" ||
	fail "uroce decode: $nr zero-length READ responses from uroce0 (want 4)"
if command -v tshark >/dev/null; then
	LUA=$T/uroce.lua
	"$UROCE_BIN/uroce" wireshark-plugin print >"$LUA"
	nt=$(timeout -k 5 120 tshark -r "$T/uroce1.pcap" -X lua_script:"$LUA" \
		--disable-heuristic rpcrdma_infiniband \
		-Y 'infiniband.bth.opcode == 28 && uroce.flush.rkey && uroce.icrc == "good" && !_ws.malformed' \
		-T fields -e infiniband.bth.destqp -e infiniband.bth.psn -e uroce.flush.plt \
		-e uroce.flush.sel 2>/dev/null | sort -u | awk '{ print $3, $4 }' | sort | uniq -c)
	nflush=$(awk '{ n += $1 } END { print n + 0 }' <<<"$nt")
	types=$(awk '{ printf "%s%d x plt=%s sel=%s", sep, $1, $2, $3; sep = ", " }' <<<"$nt")
	# global over a range 6 times, global over the MR once, persistence once
	[ "$nflush" -eq "$nd" ] && [ "$types" = "6 x plt=0x01 sel=0, 1 x plt=0x01 sel=1, 1 x plt=0x02 sel=0" ] &&
		pass "tshark + uroce.lua: all $nflush FLUSH requests decoded ($types)" ||
		fail "tshark + uroce.lua decoded $nflush of $nd FLUSH requests: $types"
fi
finish

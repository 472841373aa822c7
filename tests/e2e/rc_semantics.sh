#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/verbs/rc_semantics (a plain verbs program linked against rdma-core's
# libibverbs) on two uroce RNICs through `uroce run`: every reliable-connected
# case must pass (WRITE, READ, SEND/WRITE with immediate, atomics, SGEs, and
# the error paths down to RETRY_EXC_ERR and RNR_RETRY_EXC_ERR, memory
# windows and invalidation). Then both
# daemons' captures, retransmissions and NAKs included, must decode cleanly.
#
#   rc_semantics.sh PATH_TO_rc_semantics
. "$(dirname "$0")/lib.sh"
PROG=${1:?usage: rc_semantics.sh PATH_TO_rc_semantics}
[ -x "$PROG" ] || skip "$PROG was not built (no system libibverbs)"
CASES="write read send_imm write_imm atomics sge bad_rkey out_of_range no_remote_write peer_gone rnr
mw_type2 mw_type1 mw_zero_based mw_rules"
NCASES=$(wc -w <<<"$CASES")

start_rnics
lo_capture_start
t0=$(now_ms)
rc=0
via_cmd run
"${VIA[@]}" timeout -k 5 240 "$PROG" uroce0 uroce1 >"$T/rc_semantics.out" 2>&1 || rc=$?
ms=$(($(now_ms) - t0))
cat "$T/rc_semantics.out"
check "rc_semantics exit 0 [$ms ms] (got $rc)" test "$rc" -eq 0
for c in $CASES; do
	check "case $c ok" grep -Eq "^$c +ok\$" "$T/rc_semantics.out"
done
check "summary: $NCASES of $NCASES cases passed" \
	grep -qx "$NCASES of $NCASES cases passed" "$T/rc_semantics.out"
lo_capture_stop
stop_rnics
check_captures
# mw_type2's SEND with Invalidate: tshark shows its IETH with the window's R_Key.
if command -v tshark >/dev/null; then
	ieth=$(tshark -r "$T/uroce0.pcap" -Y "infiniband.bth.opcode == 23" -T fields \
		-e infiniband.ieth 2>/dev/null | head -1)
	check "tshark decodes the IETH of SEND Only with Invalidate (R_Key ${ieth:-none})" \
		test -n "$ieth"
fi
finish

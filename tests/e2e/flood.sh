#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A hostile peer (issue 12 item 4): while ibv_rc_pingpong -c runs between
# uroce0 and uroce1, tests/dp/flood sends uroce0 random and mutated RoCEv2
# packets, each with a valid ICRC so that it reaches the transport's checks:
# well-formed packets of every opcode for the ping-pong's QP or random QPNs
# with random PSNs, the same with header bits flipped, random bytes. The
# ping-pong must finish with every byte right, the daemon must count what
# it refused (no ICRC drops: every ICRC was valid), stay up, and serve a
# new ping-pong afterwards.
. "$(dirname "$0")/lib.sh"
need_prog ibv_rc_pingpong
F=$UROCE_BIN/flood
[ -x "$F" ] || skip "flood not built"
RNIC_PCAP=0 # a capture of 100 000 junk packets says nothing more than the counters

start_rnics
next_tcp_port
via_cmd run
"${VIA[@]}" timeout -k 5 120 ibv_rc_pingpong -d uroce0 -g 0 -p "$TCP_PORT" -c -s 4096 -n 3000 \
	>"$T/pp.server" 2>&1 &
spid=$!
await_listen "$TCP_PORT" "$spid" || fail "the server did not listen"
"${VIA[@]}" timeout -k 5 120 ibv_rc_pingpong -d uroce1 -g 0 -p "$TCP_PORT" -c -s 4096 -n 3000 \
	"$ADDR0" >"$T/pp.client" 2>&1 &
cpid=$!
sleep 0.5
# uroce0's QPs now: the ping-pong's (the first QP of a fresh daemon is 0x11)
qpns=$(timeout 10 "$UROCE_BIN/uroce" qp uroce0 --json 2>/dev/null |
	python3 -c 'import json,sys; print(" ".join(hex(q["qpn"]) for q in json.load(sys.stdin)["qps"]))' 2>/dev/null)
[ -n "$qpns" ] || qpns=0x11
rx0=$(counter uroce0 daemon.rx_datagrams)
timeout 60 "$F" "$E2E_NET.9" "$ADDR0" 4 20000 7 $qpns >"$T/flood.out" 2>&1
sent=$(awk '/^sent/ { print $2 }' "$T/flood.out")
src=0 crc=0
wait "$cpid" || crc=$?
wait "$spid" || src=$?
if [ "$src" -eq 0 ] && [ "$crc" -eq 0 ] && grep -q 'iters in' "$T/pp.client" &&
	! grep -qi 'invalid data' "$T/pp.client" "$T/pp.server"; then
	pass "ping-pong under a flood of ${sent:-?} hostile packets (QPs $qpns): $(grep 'iters in' "$T/pp.client")"
else
	fail "ping-pong under the flood: server exit $src, client exit $crc"
	show "$T/pp.server"
	show "$T/pp.client"
fi
[ "${sent:-0}" -gt 20000 ] && pass "flood sent $sent packets" || fail "flood: $(cat "$T/flood.out")"
running "${DAEMON_PID[uroce0]}" && pass "uroce0 is still up" || fail "uroce0 died under the flood"
bad_icrc=$(counter uroce0 drop.bad_icrc)
dropped=$(timeout 10 "$UROCE_BIN/uroce" counters uroce0 --all |
	awk '$1 ~ /^drop\./ || $1 ~ /^daemon\.(rx_truncated|rx_not_ours|cm_rx_malformed|cm_unmatched)$/ { n += $2 } END { print n + 0 }')
rx1=$(counter uroce0 daemon.rx_datagrams)
echo "    uroce0: $((rx1 - rx0)) datagrams received during the flood, $dropped dropped by reason, $bad_icrc bad ICRC"
[ "$dropped" -ge $((sent * 95 / 100)) ] && pass "uroce0 counted $dropped refused packets (of $sent sent)" ||
	fail "uroce0 counted only $dropped refused packets of $sent"
[ "$bad_icrc" -eq 0 ] && pass "no ICRC drops: every flood packet had a valid ICRC" ||
	fail "$bad_icrc ICRC drops (the flood's ICRCs should all be valid)"
next_tcp_port
run_pair after 60 run ibv_rc_pingpong -d uroce0 -g 0 -p "$TCP_PORT" -c -n 200 -- \
	ibv_rc_pingpong -d uroce1 -g 0 -p "$TCP_PORT" -c -n 200 "$ADDR0"
[ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] && pass "a new ping-pong after the flood" ||
	{ fail "ping-pong after the flood"; show_pair after; }
stop_rnics
finish

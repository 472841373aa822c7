#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/demo.sh (what `./quickstart.sh demo` runs) keeps working: run it on
# this build's binaries, this test's loopback addresses and TCP port, with its
# captures in a private folder; it must exit 0 and show clean decode
# summaries of both captures.
. "$(dirname "$0")/lib.sh"
need_prog ibv_rc_pingpong
REPO=$(cd "$(dirname "$0")/../.." && pwd)
next_tcp_port
rc=0
DEMO_BUILD=${UROCE_BIN%/bin} DEMO_ADDR0=$ADDR0 DEMO_ADDR1=$ADDR1 DEMO_OUT=$T/out \
	DEMO_TCP_PORT=$TCP_PORT timeout -k 5 120 "$REPO/scripts/demo.sh" >"$T/demo.out" 2>&1 || rc=$?
cat "$T/demo.out"
check "scripts/demo.sh exit 0 (got $rc)" test "$rc" -eq 0
check "demo printed both pingpong result lines" \
	test "$(grep -cE '^ +[0-9]+ bytes in [0-9.]+ seconds' "$T/demo.out")" -eq 2
check "demo decoded two clean captures" \
	test "$(grep -cE '^roce packets: [1-9][0-9]*, icrc ok: [0-9]+, icrc bad: 0, malformed: 0$' "$T/demo.out")" -eq 2
check "captures written" test -s "$T/out/demo-uroce0.pcap" -a -s "$T/out/demo-uroce1.pcap"
finish

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The daemon and the shim built with AddressSanitizer and UBSan (registered
# only in such a build, label "sanitized": quickstart's sanitizer step runs
# it). Unmodified programs load the sanitized shim after the ASan runtime
# (LD_PRELOAD; their own leaks are not looked for), against two sanitized
# daemons, uroce0 writing a ring of pcapng captures and uroce1 dropping 10 %
# of its RC SEND Middle packets by a fault rule (resent by go-back-N; UD has
# nothing to resend) with its decision log: ibv_rc_pingpong through
# the shim and through the drop-in libibverbs, the UD, SRQ and XRC
# ping-pongs, ib_write_bw, ib_read_bw, ib_atomic_bw, ib_send_lat -e,
# ibv_devinfo -v, ucmatose (the CM), and a ping-pong whose programs are
# killed mid-traffic. Each daemon must
# stop on SIGTERM with exit 0: LeakSanitizer runs at its exit, so memory it
# still holds then fails the test, and no sanitizer may have reported
# anything in its log.
. "$(dirname "$0")/lib.sh"
need_prog ibv_rc_pingpong

PRELOAD_FIRST=$(ldd "$UROCE_LIB/liburoce.so" | awk '$1 ~ /^libasan\.so/ { print $3 }')
[ -n "$PRELOAD_FIRST" ] || skip "the shim in $UROCE_LIB is not built with AddressSanitizer"
PROG_ENV=(ASAN_OPTIONS=detect_leaks=0)
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

RNIC_PCAP=0
start_rnic uroce0 "$ADDR0" --pcap "$T/u0.pcapng" --pcap-size 64K --pcap-files 2
start_rnic uroce1 "$ADDR1" --seed 7 --fault 'tx:drop:opcode=RC_SEND_MIDDLE,prob=0.1' --fault-log "$T/u1.flog"

# pair_check WHAT LABEL: the last pair's two programs exited 0.
pair_check() {
	if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ]; then
		pass "$1"
	else
		fail "$1: server exit $SERVER_RC, client exit $CLIENT_RC"
		show_pair "$2"
	fi
}
for mode in preload dropin; do
	next_tcp_port
	run_pair "pp.$mode" 120 "$mode" ibv_rc_pingpong -d uroce0 -g 0 -p "$TCP_PORT" -s 4096 -n 300 -- \
		ibv_rc_pingpong -d uroce1 -g 0 -p "$TCP_PORT" -s 4096 -n 300 "$ADDR0"
	pair_check "ibv_rc_pingpong -s 4096 -n 300 ($mode)" "pp.$mode"
done
# UD, SRQ and XRC.
for prog in ibv_ud_pingpong ibv_srq_pingpong ibv_xsrq_pingpong; do
	command -v "$prog" >/dev/null || continue
	next_tcp_port
	run_pair "$prog" 120 preload "$prog" -d uroce0 -g 0 -p "$TCP_PORT" -n 200 -- \
		"$prog" -d uroce1 -g 0 -p "$TCP_PORT" -n 200 "$ADDR0"
	pair_check "$prog -n 200" "$prog"
done
# WRITE, READ and atomics (perftest), SEND with completion events.
for t in "ib_write_bw -s 65536" "ib_read_bw -s 65536" "ib_atomic_bw" "ib_send_lat -s 2 -e"; do
	read -r prog args <<<"$t"
	command -v "$prog" >/dev/null || continue
	# shellcheck disable=SC2086 # args are words
	run_perftest "$prog" 120 preload "$prog" -d uroce0 -x 0 -F $args -n 300 -- \
		"$prog" -d uroce1 -x 0 -F $args -n 300 "$ADDR0"
	pair_check "$t -n 300" "$prog"
done
if command -v ibv_devinfo >/dev/null; then
	via_cmd preload
	"${VIA[@]}" ibv_devinfo -v >"$T/devinfo" 2>&1 && grep -q 'hca_id:.*uroce0' "$T/devinfo" &&
		pass "ibv_devinfo -v lists uroce0" || { fail "ibv_devinfo -v"; show "$T/devinfo"; }
fi
if command -v ucmatose >/dev/null; then
	CM_VIA=preload
	cm_pair ucmatose 90 1 ucmatose -b "$ADDR1" -c 4 -C 10 -- ucmatose -s "$ADDR1" -b "$ADDR0" -c 4 -C 10
	pair_check "ucmatose -c 4 -C 10 (the CM)" ucmatose
fi
# Programs killed mid-traffic: their daemons release what they held.
next_tcp_port
via_cmd preload
bg_via killed.server 60 ibv_rc_pingpong -d uroce0 -g 0 -p "$TCP_PORT" -n 100000000
spid=$BG_PID
await_listen "$TCP_PORT" "$spid" || fail "server did not listen on TCP port $TCP_PORT"
bg_via killed.client 60 ibv_rc_pingpong -d uroce1 -g 0 -p "$TCP_PORT" -n 100000000 "$ADDR0"
cpid=$BG_PID
sleep 1
pkill -KILL -P "$spid" 2>/dev/null
pkill -KILL -P "$cpid" 2>/dev/null
wait "$spid" "$cpid" 2>/dev/null
sleep 1
stop_rnics
for d in uroce0 uroce1; do
	if grep -qE 'Sanitizer|runtime error' "$T/$d.log"; then
		fail "$d: a sanitizer reported"
		grep -E -A 12 'Sanitizer|runtime error' "$T/$d.log" | head -n 30 | sed 's/^/    | /'
	else
		pass "$d: no sanitizer report in its log"
	fi
done
[ -s "$T/u1.flog" ] && pass "uroce1's decision log: $(wc -l <"$T/u1.flog") faults" ||
	fail "uroce1's decision log is empty"
finish

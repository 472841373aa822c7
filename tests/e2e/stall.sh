#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A requester's daemon that stops running for longer than a retransmission
# timeout in the middle of bulk traffic (SIGSTOP/SIGCONT here; a debugger,
# or a scheduler on a loaded machine, does the same): ib_write_bw -q 8 of
# 64 KiB messages from uroce1 to uroce0 while uroce1's daemon is stopped 30
# times for 20 ms. The responder answers while the requester is stopped, so
# when it runs again its timers are due and the ACKs wait in its socket:
# the data path reads them before it fires a timer (emu/daemon/dp/timer.c),
# and they settle the QPs instead of a resend. Checked: the run completes
# with a plausible bandwidth (no QP gave up), uroce1 counted answers read
# that way (daemon.rx_before_timers), and both daemons are still up. The
# resends that remain (retry_fast: stops that caught the responder's answer
# in flight, the responder's own scheduling) are reported, not judged.
. "$(dirname "$0")/lib.sh"
need_prog ib_write_bw
RNIC_PCAP=0 # gigabytes

start_rnics
D1=${DAEMON_PID[uroce1]}
resume() { kill -CONT "$D1" 2>/dev/null; }
at_exit resume

# stopper N MS GAP_S: stops uroce1's daemon N times for MS ms, GAP_S apart,
# starting once the traffic flows (uroce1 sent 2000 more datagrams: on a
# loaded machine the programs may take seconds to connect, and stops before
# that catch nothing in flight); always leaves it running.
stopper() {
	local i=0 base
	trap 'kill -CONT "$D1" 2>/dev/null; exit 0' TERM EXIT
	base=$(counter uroce1 daemon.tx_datagrams)
	while [ $(($(counter uroce1 daemon.tx_datagrams) - base)) -lt 2000 ] && [ $i -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	for i in $(seq "$1"); do
		kill -STOP "$D1" || break
		sleep "0.0$2"
		kill -CONT "$D1"
		sleep "$3"
	done
}

# stopped_run LABEL: ib_write_bw while the stopper runs; both must end well.
stopped_run() {
	stopper 30 20 0.05 &
	stop_pid=$!
	BG_PIDS="$BG_PIDS $stop_pid"
	run_perftest "$1" 120 run ib_write_bw -d uroce0 -x 0 -F -s 65536 -q 8 -D 5 -- \
		ib_write_bw -d uroce1 -x 0 -F -s 65536 -q 8 -D 5 "$ADDR0"
	wait "$stop_pid" 2>/dev/null
	resume
	if [ "$CLIENT_RC" -eq 0 ] && [ "$SERVER_RC" -eq 0 ] &&
		perftest_plausible ib_write_bw "$T/$1.client"; then
		pass "ib_write_bw -q 8 while uroce1's daemon was stopped 30 x 20 ms: $(perftest_row "$T/$1.client")"
	else
		fail "ib_write_bw under stops: server exit $SERVER_RC, client exit $CLIENT_RC"
		show_pair "$1"
	fi
}

# A stop catches an answer in flight only when the responder runs while the
# requester is stopped; on a loaded machine it may not, in one round of 30
# stops, so a round that rescued nothing is followed by one more.
for round in 1 2; do
	stopped_run "write$round"
	rescued=$(counter uroce1 daemon.rx_before_timers)
	resends=$(counter uroce1 xport.retry_fast)
	fires=$(counter uroce1 daemon.timer_fires)
	echo "    uroce1 after round $round: $rescued datagrams read just before due timers; $fires timer expiries, $resends adaptive resends"
	[ "$rescued" -gt 0 ] && break
done
check "uroce1 read answers that waited in its socket before firing its timers ($rescued datagrams)" \
	[ "$rescued" -gt 0 ]
check "uroce0 is still up" running "${DAEMON_PID[uroce0]}"
check "uroce1 is still up" running "$D1"
stop_rnics
finish

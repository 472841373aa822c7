#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perftest's bandwidth and latency tests (SEND, WRITE, READ, atomics) between
# two uroce RNICs with RoCEv2 GID index 0 (-x 0), server on uroce0 and client
# on uroce1, through `uroce run`. Each must exit 0 on both sides and print a
# plausible result row: BW average > 0 MB/s for the bandwidth tests, t_typical
# > 0 us for the latency tests. Then the daemons' captures and a tshark
# capture of lo taken during the same traffic must decode with every ICRC
# valid.
. "$(dirname "$0")/lib.sh"

# program, then its iteration count (kept small: this checks function, not speed)
TESTS=(
	"ib_send_bw 200"
	"ib_write_bw 200"
	"ib_read_bw 200"
	"ib_atomic_bw 500"
	"ib_send_lat 300"
	"ib_write_lat 300"
	"ib_read_lat 300"
	"ib_atomic_lat 300"
)
for t in "${TESTS[@]}"; do
	need_prog "${t%% *}"
done

start_rnics
lo_capture_start
for t in "${TESTS[@]}"; do
	read -r prog iters <<<"$t"
	run_perftest "$prog" 120 run \
		"$prog" -d uroce0 -x 0 -F -n "$iters" -- \
		"$prog" -d uroce1 -x 0 -F -n "$iters" "$ADDR0"
	if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] &&
		perftest_plausible "$prog" "$T/$prog.client"; then
		pass "$prog -n $iters: $(perftest_row "$T/$prog.client" | tr -s ' ') [${PAIR_MS} ms]"
	else
		fail "$prog -n $iters: server exit $SERVER_RC, client exit $CLIENT_RC, row '$(perftest_row "$T/$prog.client")'"
		show_pair "$prog"
	fi
done
lo_capture_stop
stop_rnics
check_captures
finish

#!/bin/sh
# SPDX-License-Identifier: MIT
# The cost profile (uroced --profile, emu/daemon/dp/prof.c): an RNIC that
# profiles reports the time of each part of its data path after real
# traffic (ibv_rc_pingpong, 64 KiB, data checked), each part inside the
# time of the work, and the work and idle passes together no longer than
# the daemon has lived (one thread); an RNIC without the option reports none.
. "$CTL_SRC/lib.sh"

command -v ibv_rc_pingpong >/dev/null || skip "ibv_rc_pingpong is not installed (ibverbs-utils)"

t0=$(date +%s%N)
start_daemon uroce0 "$TEST_NET.1" --profile
D0=$LAST_PID
start_daemon uroce1 "$TEST_NET.2"
D1=$LAST_PID

next_tcp_port
port=$TCP_PORT
timeout 60 "$UROCE_BIN/uroce" run -- ibv_rc_pingpong -d uroce0 -g 0 -s 65536 -n 300 -c \
	-p "$port" >"$T/srv" 2>&1 &
srv=$!
await_listen "$port" "$srv"
if timeout 60 "$UROCE_BIN/uroce" run -- ibv_rc_pingpong -d uroce1 -g 0 -s 65536 -n 300 -c \
	-p "$port" "$TEST_NET.1" >"$T/cli" 2>&1 && wait "$srv" && grep -q 'iters in' "$T/cli"; then
	pass "ibv_rc_pingpong -s 65536 -n 300 -c: $(grep 'iters in' "$T/cli")"
else
	wait "$srv"
	fail "ibv_rc_pingpong between a profiling RNIC and another"
	show "$T/srv"
	show "$T/cli"
fi

work=$(counter daemon.time_work_ns uroce0)
idle=$(counter daemon.time_idle_ns uroce0)
lived=$(($(date +%s%N) - t0))
for p in tx rx dma icrc; do
	v=$(counter "daemon.time_${p}_ns" uroce0)
	if [ "$v" -gt 0 ] && [ "$v" -lt "$work" ]; then
		pass "uroce0 time_${p}_ns $v, inside time_work_ns $work"
	else
		fail "uroce0 time_${p}_ns $v: want more than 0 and less than time_work_ns $work"
	fi
done
if [ "$idle" -gt 0 ] && [ $((work + idle)) -le "$lived" ]; then
	pass "uroce0 time_work_ns $work + time_idle_ns $idle <= the $lived ns it lived"
else
	fail "uroce0 time_work_ns $work + time_idle_ns $idle against the $lived ns it lived"
fi
other=$(uroce counters uroce1 --all | awk '$1 ~ /^daemon\.time_/ && $2 != 0' | tr '\n' ' ')
n=$(uroce counters uroce1 --all | grep -c '^daemon\.time_.*_ns')
if [ -z "$other" ] && [ "$n" -eq 6 ]; then
	pass "uroce1 (no --profile): its 6 time_*_ns counters are 0"
else
	fail "uroce1 (no --profile): $n time counters, non-zero: $other"
fi
uroce counters uroce1 | grep -q '^daemon\.time_' &&
	fail "uroce counters (without --all) prints zero time counters" ||
	pass "uroce counters (without --all) leaves the zero time counters out"
stop_daemon "$D0"
[ "$STOP_RC" -eq 0 ] && pass "uroce0 exits 0" || fail "uroce0 exit $STOP_RC"
stop_daemon "$D1"
finish

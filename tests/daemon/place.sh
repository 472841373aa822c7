#!/bin/sh
# SPDX-License-Identifier: MIT
# Where uroced runs (--cpu, emu/daemon/dp/place.c): a daemon alone is left to
# the scheduler; the daemons of one run directory each keep to a CPU of
# their own while there are several (the first one too, within a look or
# two), and a daemon alone again gets its whole affinity back; a claim ends
# with its process, however it ends, and a daemon that found every CPU
# claimed takes one that becomes free; --cpu N keeps to N, --cpu none leaves
# the affinity alone, and bad values are errors. Read from
# /proc/PID/status (Cpus_allowed_list), as taskset -p would show it.
. "$CTL_SRC/lib.sh"

D="$UROCE_BIN/uroced"

cpus() { # PID: its Cpus_allowed_list
	awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$1/status"
}

# wait_cpus PID WANT: up to 3 s (the daemon looks every 250 ms).
wait_cpus() {
	_w_i=0
	while [ $_w_i -lt 30 ]; do
		[ "$(cpus "$1")" = "$2" ] && return 0
		_w_i=$((_w_i + 1))
		sleep 0.1
	done
	return 1
}

# Bad values: a usage error (2), or a CPU outside the affinity (1).
"$D" --name x --addr "$TEST_NET.1" --cpu bogus 2>"$T/err"
rc=$?
if [ $rc -eq 2 ] && grep -q -- "--cpu bogus: must be auto, none or a CPU number" "$T/err"; then
	pass "--cpu bogus -> 2: $(cat "$T/err")"
else
	fail "--cpu bogus: exit $rc, $(cat "$T/err")"
fi
"$D" --name x --addr "$TEST_NET.1" --cpu -3 2>"$T/err"
[ $? -eq 2 ] || fail "--cpu -3 accepted: $(cat "$T/err")"
"$D" --help | grep -q -- "--cpu auto|none|N" || fail "--help does not document --cpu"

ALL=$(cpus $$)
NCPU=$(nproc)
[ "$NCPU" -ge 2 ] || skip "this test's affinity has $NCPU CPU ($ALL): nothing to place daemons on"
FIRST=$(echo "$ALL" | sed 's/[-,].*//')
LAST=$(echo "$ALL" | sed 's/.*[-,]//')
OUTSIDE=$((LAST + 1))
"$D" --name x --addr "$TEST_NET.1" --rundir "$UROCE_RUNDIR" --port "$CTL_PORT" \
	--cpu "$OUTSIDE" 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "not a CPU this daemon may run on" "$T/err"; then
	pass "--cpu $OUTSIDE (outside $ALL) -> 1: $(tail -n1 "$T/err")"
else
	fail "--cpu $OUTSIDE: exit $rc, $(tail -n1 "$T/err")"
fi

# One daemon: left alone.
start_daemon uroce0 "$TEST_NET.1"
P0=$LAST_PID
L0=$LAST_LOG
sleep 0.6
[ "$(cpus $P0)" = "$ALL" ] || fail "a daemon alone keeps to $(cpus $P0), not $ALL"
pass "a daemon alone may run on $(cpus $P0)"

# A second daemon of the same run directory: each keeps to its own CPU.
# It captures: the threads that write its capture file (libuv's pool) are
# not kept to that CPU (below).
start_daemon uroce1 "$TEST_NET.2" --pcap "$T/u1.pcap"
P1=$LAST_PID
L1=$LAST_LOG
wait_cpus $P0 "$FIRST" || fail "the first daemon keeps to $(cpus $P0), want $FIRST"
c1=$(cpus $P1)
case $c1 in
*[,-]* | "$FIRST") fail "the second daemon keeps to $c1 (want one CPU other than $FIRST)" ;;
*) pass "two daemons: CPU $(cpus $P0) and CPU $c1" ;;
esac
# Traffic between them, captured by uroce1 while it keeps to its CPU: its other
# threads (the capture's writers) may still run on every CPU of the daemon's.
# Each program is kept beside the other RNIC's daemon: left to the scheduler,
# both may poll beside their own daemons, and the daemons then swap CPUs
# (place_swap.sh), which is not what this test is about.
if command -v ibv_rc_pingpong >/dev/null && command -v taskset >/dev/null; then
	next_tcp_port
	timeout 30 taskset -c "$c1" "$UROCE_BIN/uroce" run -- ibv_rc_pingpong -d uroce0 -g 0 \
		-n 20 -p "$TCP_PORT" >"$T/pp.srv" 2>&1 &
	spid=$!
	await_listen "$TCP_PORT" "$spid"
	timeout 30 taskset -c "$FIRST" "$UROCE_BIN/uroce" run -- ibv_rc_pingpong -d uroce1 -g 0 \
		-n 20 -p "$TCP_PORT" "$TEST_NET.1" >"$T/pp.cli" 2>&1 ||
		fail "ibv_rc_pingpong: $(cat "$T/pp.cli")"
	wait "$spid"
	# The frames reach the file within 100 ms, written by those threads.
	i=0
	while [ $i -lt 30 ] && [ "$(wc -c <"$T/u1.pcap")" -lt 1000 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	others=$(for t in /proc/$P1/task/*; do
		[ "${t##*/}" = "$P1" ] || awk '/^Cpus_allowed_list:/ { print $2 }' "$t/status"
	done | sort | uniq -c | tr -s ' \n' ' ')
	if [ "$(cpus $P1)" = "$c1" ] && [ "$(wc -c <"$T/u1.pcap")" -ge 1000 ] &&
		[ "$(echo "$others" | awk '{ print $2 }')" = "$ALL" ] &&
		[ "$(echo "$others" | wc -w)" -eq 2 ]; then
		pass "uroce1 keeps to CPU $c1, its capture's threads may run on $ALL ($others)"
	else
		fail "uroce1 on $(cpus $P1), its other threads' CPUs: count and list '$others', want $ALL"
	fi
fi
grep -q "swapped" "$L0" "$L1" && fail "the daemons swapped with each program beside the other daemon"
grep -q "keeping to CPU $FIRST: another daemon" "$L0" || fail "no log line: $(show "$L0")"
grep -q "keeping to CPU $c1: another daemon" "$L1" || fail "no log line: $(show "$L1")"

# A daemon with --cpu none beside them: never moved; it takes no claim.
start_daemon uroce2 "$TEST_NET.3" --cpu none
P2=$LAST_PID
sleep 0.6
[ "$(cpus $P2)" = "$ALL" ] || fail "--cpu none: $(cpus $P2)"
pass "--cpu none: $(cpus $P2)"
stop_daemon $P2

# The second one killed (no clean exit): its claim goes with it, and the
# first daemon, alone again, gets its whole affinity back.
kill -KILL $P1
wait $P1 2>/dev/null
wait_cpus $P0 "$ALL" || fail "alone again, the first daemon keeps to $(cpus $P0)"
grep -q "no longer keeping to CPU $FIRST" "$L0" || fail "no log line: $(show "$L0")"
pass "after SIGKILL of the other: $(cpus $P0)"

# A new daemon takes the freed CPU; the first keeps to its own again.
start_daemon uroce3 "$TEST_NET.4"
P3=$LAST_PID
wait_cpus $P0 "$FIRST" || fail "the first daemon keeps to $(cpus $P0) with a new peer"
[ "$(cpus $P3)" = "$c1" ] || fail "the new daemon keeps to $(cpus $P3), not the freed $c1"
pass "a new daemon takes the freed CPU $(cpus $P3)"

# More daemons than CPUs (two CPUs): the third is left to the scheduler
# until a CPU is free, and then takes it.
if [ "$NCPU" -eq 2 ]; then
	start_daemon uroce6 "$TEST_NET.6"
	P6=$LAST_PID
	sleep 0.6
	[ "$(cpus $P6)" = "$ALL" ] || fail "a third daemon on two CPUs keeps to $(cpus $P6)"
	grep -q "every CPU of this daemon's mask has a daemon" "$LAST_LOG" ||
		fail "no log line: $(show "$LAST_LOG")"
	stop_daemon $P3
	wait_cpus $P6 "$c1" || fail "the third daemon keeps to $(cpus $P6) after CPU $c1 was freed"
	pass "a third daemon: $ALL while both CPUs were claimed, then the freed CPU $(cpus $P6)"
	stop_daemon $P6
else
	stop_daemon $P3
fi
stop_daemon $P0

# --cpu N: kept to N from the start, alone or not.
start_daemon uroce4 "$TEST_NET.5" --cpu "$LAST"
[ "$(cpus $LAST_PID)" = "$LAST" ] || fail "--cpu $LAST: $(cpus $LAST_PID)"
grep -q "keeping to CPU $LAST (--cpu $LAST)" "$LAST_LOG" || fail "--cpu $LAST: no log line"
pass "--cpu $LAST: $(cpus $LAST_PID)"
stop_daemon $LAST_PID

finish

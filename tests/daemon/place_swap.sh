#!/bin/sh
# SPDX-License-Identifier: MIT
# Two daemons that each keep to a CPU (--cpu auto) swap CPUs when each finds
# the program of its own RNIC polling beside it (emu/daemon/dp/place.c, the
# shim's ring->poller): the worst placement for a ping-pong, since every
# completion waits for the program to get the CPU from the daemon that made
# it. The programs are kept to their CPUs with taskset, so where the daemons
# end up is known: each beside the other RNIC's program. A second ping-pong
# in that placement moves nothing, and neither does one whose programs both
# run beside one daemon (only that daemon is crowded).
. "$CTL_SRC/lib.sh"

NCPU=$(nproc)
[ "$NCPU" -ge 2 ] || skip "this test's affinity has $NCPU CPU: nothing to place daemons on"
command -v ibv_rc_pingpong >/dev/null || skip "ibv_rc_pingpong (ibverbs-utils) is not installed"
command -v taskset >/dev/null || skip "taskset (util-linux) is not installed"

cpus() { # PID: its Cpus_allowed_list
	awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$1/status"
}
swaps() { # LOG: the swaps this daemon made and followed
	grep -c -e "swapped with another daemon" -e "swapped with this one" "$1"
}

# wait_pinned PID: until the daemon keeps to one CPU (up to 3 s).
wait_pinned() {
	_w_i=0
	while [ $_w_i -lt 30 ]; do
		case $(cpus "$1") in *[,-]*) ;; *) return 0 ;; esac
		_w_i=$((_w_i + 1))
		sleep 0.1
	done
	return 1
}

start_daemon uroce0 "$TEST_NET.1"
P0=$LAST_PID
L0=$LAST_LOG
start_daemon uroce1 "$TEST_NET.2"
P1=$LAST_PID
L1=$LAST_LOG
wait_pinned $P0 && wait_pinned $P1 || fail "the daemons keep to $(cpus $P0) and $(cpus $P1)"
C0=$(cpus $P0)
C1=$(cpus $P1)
[ "$C0" != "$C1" ] || fail "both daemons keep to CPU $C0"
pass "uroce0 keeps to CPU $C0, uroce1 to CPU $C1"

# pingpong SERVER_CPU CLIENT_CPU ITERS: ibv_rc_pingpong, the server on uroce0 and the
# client on uroce1, each kept to a CPU; both poll their CQs.
pingpong() {
	next_tcp_port
	timeout 120 taskset -c "$1" "$UROCE_BIN/uroce" run -- ibv_rc_pingpong -d uroce0 -g 0 \
		-n "$3" -p "$TCP_PORT" >"$T/pp.srv" 2>&1 &
	_pp_s=$!
	await_listen "$TCP_PORT" "$_pp_s"
	timeout 120 taskset -c "$2" "$UROCE_BIN/uroce" run -- ibv_rc_pingpong -d uroce1 -g 0 \
		-n "$3" -p "$TCP_PORT" "$TEST_NET.1" >"$T/pp.cli" 2>&1 ||
		fail "ibv_rc_pingpong: $(cat "$T/pp.cli")"
	wait "$_pp_s" || fail "ibv_rc_pingpong server: $(cat "$T/pp.srv")"
	tail -n1 "$T/pp.cli"
}

# swapped_once: uroce0 on uroce1's first CPU and the other way round, after one swap
# each; where: how things stand, in words.
swapped_once() {
	[ "$(cpus $P0)" = "$C1" ] && [ "$(cpus $P1)" = "$C0" ] &&
		[ "$(swaps "$L0")" -eq 1 ] && [ "$(swaps "$L1")" -eq 1 ]
}
where() {
	echo "uroce0 on $(cpus $P0), uroce1 on $(cpus $P1), swaps $(swaps "$L0")/$(swaps "$L1")"
}
# check_still WHAT: after a ping-pong (its result in r), still as after the swap.
check_still() { # WHAT
	if swapped_once; then pass "$1: nothing moves ($r)"; else fail "$1 moved the daemons: $(where)"; fi
}

# Each program beside its own RNIC's daemon: they swap.
r=$(pingpong "$C0" "$C1" 10000)
if swapped_once && grep -q "keeping to CPU $C1 instead of $C0" "$L0" &&
	grep -q "keeping to CPU $C0 instead of $C1" "$L1"; then
	pass "programs on CPU $C0 (uroce0's) and $C1 (uroce1's): the daemons swapped ($r)"
else
	fail "after a ping-pong beside their own daemons: $(where); $(show "$L0") $(show "$L1")"
fi

# The same CPUs for the programs again: each is now beside the other RNIC's daemon.
r=$(pingpong "$C0" "$C1" 3000)
check_still "the same programs again, now beside the other daemon"

# Both programs beside uroce1 (CPU C0 now): only uroce1 finds its own there; uroce0's
# program polls on another daemon's CPU, so nobody swaps.
r=$(pingpong "$C0" "$C0" 3000)
check_still "both programs on CPU $C0"

stop_daemon $P1
stop_daemon $P0
finish

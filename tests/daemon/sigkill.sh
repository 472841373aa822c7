#!/bin/sh
# SPDX-License-Identifier: MIT
# A client killed with SIGKILL while it holds a PD, MR, CQ, QP, SRQ, AH, a
# completion channel, a memory window bound to its MR, device memory, an XRC
# domain and a target QP in it with a second handle opened through the
# domain: the daemon releases all of it (resource counts from
# `uroce devices` drop to zero; the MR pages it shared with the daemon are
# unmapped), keeps serving, and another client's resources are untouched.
. "$CTL_SRC/lib.sh"

[ -n "$CTL_VERBS" ] || skip "ctl_verbs not built (no libibverbs to link)"
start_daemon uroce0 "$TEST_NET.1"
D=$LAST_PID

# maps: how many mappings of programs' MR pages the daemon holds.
maps() {
	grep -c 'uroce-mr-pages' "/proc/$D/maps"
}

hold() { # OUTFILE: start a holder, wait for "ready"; sets HOLD_PID
	"$UROCE_BIN/uroce" run -- "$CTL_VERBS" hold uroce0 >"$1" 2>&1 &
	HOLD_PID=$!
	i=0
	until grep -q ready "$1"; do
		i=$((i + 1))
		if [ $i -gt 200 ] || ! kill -0 "$HOLD_PID" 2>/dev/null; then
			fail "holder did not get ready: $(cat "$1")"
			finish
		fi
		sleep 0.05
	done
}

wait_counts() { # WANT: poll `uroce devices` for up to 5 s
	i=0
	while [ "$(counts uroce0)" != "$1" ] && [ $i -lt 100 ]; do
		i=$((i + 1))
		sleep 0.05
	done
	[ "$(counts uroce0)" = "$1" ]
}

hold "$T/a.out"
A=$HOLD_PID
hold "$T/b.out"
B=$HOLD_PID
# Each holder: CTX PD MR CQ, two QPs (RC and XRC target), SRQ AH CHAN MW DM XRCD OQP.
wait_counts "2 2 2 2 4 2 2 2 2 2 2 2" || fail "two holders: $(counts uroce0)"
pass "two holders: $(counts uroce0)"
[ "$(maps)" = 2 ] && pass "the daemon maps both holders' MR pages" ||
	fail "the daemon maps $(maps) holders' MR pages, not 2"

kill -KILL "$A"
wait "$A" 2>/dev/null
wait_counts "1 1 1 1 2 1 1 1 1 1 1 1" || fail "after SIGKILL of one holder: $(counts uroce0)"
pass "SIGKILL freed the first holder's resources: $(counts uroce0)"
[ "$(maps)" = 1 ] && pass "and unmapped its MR pages" || fail "$(maps) MR mappings left, not 1"

# The daemon still serves new clients while B is alive.
uroce run -- ibv_devinfo -d uroce0 >/dev/null 2>&1 || fail "daemon no longer serves"
kill -0 "$B" 2>/dev/null || fail "the other holder died"

kill -KILL "$B"
wait "$B" 2>/dev/null
wait_counts "0 0 0 0 0 0 0 0 0 0 0 0" || fail "after SIGKILL of both: $(counts uroce0)"
pass "all freed: $(counts uroce0)"
[ "$(maps)" = 0 ] && pass "no MR pages mapped" || fail "$(maps) MR mappings left"
finish

#!/bin/sh
# SPDX-License-Identifier: MIT
# Bad input gets the errno hardware gives and the daemon keeps serving:
# ctl_verbs (an ordinary verbs program) runs its checks against uroce0 and
# uroce1, then the devices must still answer and hold no leftovers.
. "$CTL_SRC/lib.sh"

[ -n "$CTL_VERBS" ] || skip "ctl_verbs not built (no libibverbs to link)"
start_daemon uroce0 "$TEST_NET.1"
P0=$LAST_PID
LOG0=$LAST_LOG
start_daemon uroce1 "$TEST_NET.2"

uroce run -- "$CTL_VERBS" check uroce0 uroce1 || fail "ctl_verbs check"
kill -0 "$P0" 2>/dev/null || fail "uroce0 died"
c=$(counts uroce0)
[ "$c" = "0 0 0 0 0 0 0 0 0 0 0 0" ] || fail "uroce0 holds resources after the client: $c"
uroce run -- ibv_devinfo -d uroce0 >/dev/null 2>&1 || fail "uroce0 no longer serves"
grep -q "error" "$LOG0" && fail "uroce0 logged errors: $(grep error "$LOG0")"
finish

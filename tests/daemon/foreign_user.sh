#!/bin/sh
# SPDX-License-Identifier: MIT
# A daemon of another user is not a device (issue 12 item 5): opening a
# device lets its daemon read and write the program's memory
# (PR_SET_PTRACER, process_vm_*), so the shim, the CLI and the sysfs view
# trust only a daemon of their own user or root. A daemon run as nobody in a
# shared (root-owned, sticky, world-writable) run directory is up, and yet
# `uroce devices`, ibv_devices and ibv_devinfo under the shim do not list it
# or open it, and a second daemon of the same name is still refused (the
# name is in use). Needs root (to run the daemon as nobody): skips otherwise.
. "$CTL_SRC/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root to start a daemon as another user"
command -v setpriv >/dev/null 2>&1 || skip "no setpriv"
need_prog ibv_devices

D=$T/shared-run
mkdir -m 1777 "$D"
setpriv --reuid=65534 --regid=65534 --clear-groups "$UROCE_BIN/uroced" --name foreign0 \
	--addr "$TEST_NET.1" --port "$CTL_PORT" --rundir "$D" 2>"$T/foreign.log" 9>&- &
FPID=$!
BG_PIDS="$BG_PIDS $FPID"
i=0
while [ $i -lt 100 ] && ! grep -q "device foreign0 on" "$T/foreign.log"; do
	running "$FPID" || break
	sleep 0.1
	i=$((i + 1))
done
if grep -q "device foreign0 on" "$T/foreign.log" && [ -S "$D/foreign0.sock" ]; then
	pass "a daemon of uid 65534 serves in $D ($(stat -c %U "$D/foreign0.sock")'s socket)"
else
	fail "the daemon as nobody did not come up"
	show "$T/foreign.log"
	finish
fi

out=$("$UROCE_BIN/uroce" devices --rundir "$D" 2>&1)
if echo "$out" | grep -q foreign0; then
	fail "uroce devices lists another user's daemon: $out"
else
	pass "uroce devices does not list another user's daemon"
fi
out=$(UROCE_RUNDIR=$D timeout 20 "$UROCE_BIN/uroce" run -- ibv_devices 2>&1)
if echo "$out" | grep -q foreign0; then
	fail "ibv_devices under the shim lists another user's daemon: $out"
else
	pass "ibv_devices under the shim does not list it"
fi
rc=0
UROCE_RUNDIR=$D timeout 20 "$UROCE_BIN/uroce" run -- ibv_devinfo -d foreign0 >"$T/devinfo" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && pass "ibv_devinfo -d foreign0 fails (exit $rc)" ||
	fail "ibv_devinfo opened another user's device: $(cat "$T/devinfo")"
rc=0
"$UROCE_BIN/uroced" --name foreign0 --addr "$TEST_NET.2" --port "$CTL_PORT" --rundir "$D" \
	2>"$T/second.log" || rc=$?
if [ "$rc" -ne 0 ] && grep -q "already in use" "$T/second.log"; then
	pass "a second daemon of the same name is refused: $(cat "$T/second.log")"
else
	fail "second daemon: exit $rc, $(cat "$T/second.log")"
fi
running "$FPID" && pass "the foreign daemon is still up" || fail "the foreign daemon died"
kill "$FPID" 2>/dev/null
wait "$FPID" 2>/dev/null
finish

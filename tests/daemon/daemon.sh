#!/bin/sh
# SPDX-License-Identifier: MIT
# uroced as a program: options and their errors, the name rule in the run
# directory (live socket = in use, stale file = reused), address binding,
# IPv4 and IPv6, the MTU rule, the default run directory, --pcap, and a
# clean exit on SIGTERM and SIGINT that removes the socket.
. "$CTL_SRC/lib.sh"

D="$UROCE_BIN/uroced"

# expect_exit CODE PATTERN -- COMMAND...: exit status and a stderr line.
expect_exit() {
	code=$1
	pat=$2
	shift 3
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" -ne "$code" ] || ! grep -q -- "$pat" "$T/err"; then
		fail "$*: exit $rc (want $code), stderr: $(cat "$T/err")"
	else
		pass "$* -> $code: $(head -n1 "$T/err")"
	fi
}

# --help documents every option.
"$D" --help >"$T/help" || fail "--help exit status"
for o in --name --addr --port --rundir --mtu --pcap; do
	grep -q -- "$o" "$T/help" || fail "--help does not document $o"
done
pass "--help documents every option"

expect_exit 2 "required" -- "$D"
expect_exit 2 "unknown option" -- "$D" --name x --addr "$TEST_NET.1" --bogus
expect_exit 2 "port" -- "$D" --name x --addr "$TEST_NET.1" --port 0
expect_exit 2 "port" -- "$D" --name x --addr "$TEST_NET.1" --port 70000
expect_exit 2 "mtu" -- "$D" --name x --addr "$TEST_NET.1" --mtu 1500
expect_exit 2 "name" -- "$D" --name bad/name --addr "$TEST_NET.1"
expect_exit 2 "needs a value" -- "$D" --name x --addr
expect_exit 1 "not an IPv4 or IPv6 address" -- "$D" --name x --addr nonsense
expect_exit 1 "unicast" -- "$D" --name x --addr 0.0.0.0
expect_exit 1 "no local interface" -- "$D" --name x --addr 198.51.100.7 \
	--rundir "$UROCE_RUNDIR"

# A daemon, with a capture file.
start_daemon uroce0 "$TEST_NET.1" --pcap "$T/cap.pcap"
P0=$LAST_PID
[ "$(stat -c %a "$UROCE_RUNDIR")" = 700 ] || fail "run directory mode is not 0700"
uroce devices | grep -q "^uroce0 *$TEST_NET.1 *$CTL_PORT *4096 " ||
	fail "uroce devices: $(uroce devices)"

expect_exit 1 "already in use" -- "$D" --name uroce0 --addr "$TEST_NET.2" \
	--port "$CTL_PORT" --rundir "$UROCE_RUNDIR"
expect_exit 1 "cannot bind UDP $TEST_NET.1 port $CTL_PORT" -- "$D" --name other \
	--addr "$TEST_NET.1" --port "$CTL_PORT" --rundir "$UROCE_RUNDIR"
[ -S "$UROCE_RUNDIR/other.sock" ] && fail "failed daemon left a socket"

# --mtu, and IPv6 where the host has ::1 (it is its own RoCEv2 GID).
start_daemon mtu1k "$TEST_NET.3" --mtu 1024
"$UROCE_BIN/uroce" run -- ibv_devinfo -v -d mtu1k >"$T/mtu" 2>&1
grep -q "active_mtu:.*1024 (3)" "$T/mtu" || fail "--mtu 1024: $(grep mtu "$T/mtu")"
pass "--mtu 1024"
if /usr/bin/python3 -c 'import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).bind(("::1", 0))' 2>/dev/null; then
	start_daemon v6 ::1
	"$UROCE_BIN/uroce" run -- ibv_devinfo -v -d v6 >"$T/v6" 2>&1
	grep -q "GID\[  0\]:.*::1, RoCE v2" "$T/v6" || fail "IPv6 GID: $(grep GID "$T/v6")"
	pass "IPv6 ::1"
else
	echo "note: no IPv6 loopback on this host, IPv6 check not run"
fi

# SIGTERM: exit 0, socket gone, a valid (empty) pcap file written.
stop_daemon "$P0"
[ "$STOP_RC" -eq 0 ] || fail "exit status after SIGTERM: $STOP_RC"
[ -e "$UROCE_RUNDIR/uroce0.sock" ] && fail "socket left after SIGTERM"
magic=$(od -An -tx1 -N4 "$T/cap.pcap" 2>/dev/null | tr -d ' ')
[ "$magic" = d4c3b2a1 ] || fail "pcap file magic '$magic'"
pass "SIGTERM: exit 0, socket removed, pcap written"

# A stale socket file (nobody listening) is removed and the name reused.
/usr/bin/python3 - "$UROCE_RUNDIR/uroce0.sock" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1])
PY
[ -S "$UROCE_RUNDIR/uroce0.sock" ] || fail "could not make a stale socket"
start_daemon uroce0 "$TEST_NET.1"
P0=$LAST_PID
grep -q "removed stale socket" "$LAST_LOG" || fail "stale socket not reported"
kill -INT "$P0"
wait "$P0"
rc=$?
[ "$rc" -eq 0 ] || fail "exit status after SIGINT: $rc"
[ -e "$UROCE_RUNDIR/uroce0.sock" ] && fail "socket left after SIGINT"
pass "stale socket reused, SIGINT exit 0"

# Default run directory: $XDG_RUNTIME_DIR/uroce, created 0700.
mkdir -m 700 "$T/xdg"
(
	unset UROCE_RUNDIR
	export XDG_RUNTIME_DIR="$T/xdg"
	"$D" --name xdg0 --addr "$TEST_NET.4" --port "$CTL_PORT" 2>>"$T/xdg.log" &
	p=$!
	i=0
	while ! grep -q "device xdg0 on" "$T/xdg.log" && [ $i -lt 100 ]; do
		i=$((i + 1))
		sleep 0.05
	done
	"$UROCE_BIN/uroce" devices | grep -q "^xdg0 " || echo "FAIL: uroce devices in XDG rundir" >&2
	kill "$p"
	wait "$p"
) 2>"$T/xdg.err"
grep -q FAIL "$T/xdg.err" && fail "$(cat "$T/xdg.err")"
[ "$(stat -c %a "$T/xdg/uroce" 2>/dev/null)" = 700 ] ||
	fail "XDG run directory missing or not 0700"
pass "default run directory \$XDG_RUNTIME_DIR/uroce"

# ---------------------------------------------------------------------------
# Start-up unwinding (main.c: start() undoes its steps in reverse order when
# one fails; exit status 1, the failing step's one line on stderr).

# A late failure: the capture file exists (the capture step comes before the
# control socket) when the control socket finds the name in use. The unwind
# removes the file, leaves no socket of its own and does not touch the live
# daemon's socket.
start_daemon late0 127.0.0.5
P5=$LAST_PID
expect_exit 1 "already in use" -- "$D" --name late0 --addr 127.0.0.6 \
	--port "$CTL_PORT" --rundir "$UROCE_RUNDIR" --pcap "$T/late.pcap"
[ -e "$T/late.pcap" ] && fail "failed start left its capture file $T/late.pcap"
[ -S "$UROCE_RUNDIR/late0.sock" ] || fail "failed start removed the live daemon's socket"
uroce devices | grep -q "^late0 " || fail "live daemon not served after a failed start"
pass "late start failure: capture file removed, live socket kept"

# A capture file that was there before is not the failed start's to remove.
: >"$T/old.pcap"
expect_exit 1 "already in use" -- "$D" --name late0 --addr 127.0.0.6 \
	--port "$CTL_PORT" --rundir "$UROCE_RUNDIR" --pcap "$T/old.pcap"
[ -e "$T/old.pcap" ] || fail "failed start removed a capture file it did not create"
stop_daemon "$P5"
[ "$STOP_RC" -eq 0 ] || fail "exit status after SIGTERM: $STOP_RC"

# A capture path that cannot be created fails at the capture step, after
# the UDP socket and the status page: nothing of it is left.
expect_exit 1 "pcap $T/none/cap.pcap: .*No such file" -- "$D" --name early0 \
	--addr 127.0.0.5 --port "$CTL_PORT" --rundir "$UROCE_RUNDIR" --pcap "$T/none/cap.pcap"
[ -e "$UROCE_RUNDIR/early0.sock" ] && fail "failed start left a socket"
# The address and port are free again at once.
start_daemon early0 127.0.0.5
stop_daemon "$LAST_PID"
[ "$STOP_RC" -eq 0 ] || fail "exit status after SIGTERM: $STOP_RC"
pass "capture step failure: exit 1, nothing left behind"

finish

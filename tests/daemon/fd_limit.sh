#!/bin/sh
# SPDX-License-Identifier: MIT
# fd_limit: a daemon out of file descriptors refuses new clients (they see
# the connection closed) instead of leaving them in the listen backlog, where
# the readable socket made the event loop spin at 100% CPU and log a warning
# per turn. Afterwards, with descriptors free again, clients are served.
. "$CTL_SRC/lib.sh"

command -v prlimit >/dev/null 2>&1 || skip "no prlimit"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no $PY"

start_daemon fdl0 "$TEST_NET.1"
D=$LAST_PID
prlimit --pid "$D" --nofile=32:32 || skip "prlimit --pid failed"

# 40 clients connect and stay: more than the daemon has descriptors for.
"$PY" - "$UROCE_RUNDIR/fdl0.sock" >"$T/hold" 2>&1 <<'PYEOF' &
import socket, sys, time
held, closed = [], 0
for i in range(40):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    held.append(s)
time.sleep(1.5)
for s in held:
    s.settimeout(0.5)
    try:
        if s.recv(16) == b"":
            closed += 1
    except OSError:
        pass
print("closed", closed)
time.sleep(1)
PYEOF
H=$!
sleep 0.5
ticks() { awk '{print $14 + $15}' "/proc/$D/stat"; }
a=$(ticks)
sleep 1
b=$(ticks)
wait "$H"
cpu=$((b - a))
[ "$cpu" -lt 30 ] && pass "daemon idle while out of fds ($cpu ticks in 1 s)" ||
	fail "daemon busy while out of fds: $cpu ticks in 1 s"
grep -q "closed [1-9]" "$T/hold" && pass "clients beyond the fd limit refused: $(cat "$T/hold")" ||
	fail "no client saw its connection refused: $(cat "$T/hold")"
n=$(grep -c "" "$LAST_LOG")
[ "$n" -lt 100 ] && pass "log stays short ($n lines)" || fail "log flooded: $n lines"
kill -0 "$D" 2>/dev/null || fail "daemon died"
"$UROCE_BIN/uroce" run -- ibv_devinfo -d fdl0 >"$T/info" 2>&1 &&
	pass "a client is served once descriptors are free" ||
	fail "no service after the fd shortage: $(cat "$T/info")"
[ "$FAILS" -eq 0 ]

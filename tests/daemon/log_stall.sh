#!/bin/sh
# SPDX-License-Identifier: MIT
# A daemon whose stderr nobody reads keeps serving: its stderr is a FIFO of
# one page (F_SETPIPE_SZ) whose reader never reads until told, as a parent
# that keeps a child's stderr as a pipe and forgets it. 150 programs each
# make the daemon log a line or two (a context opened, closed), several times
# what the FIFO holds: every program must be served within its timeout. Once
# the reader drains the FIFO, the next line written is preceded by how many
# were dropped, and every line that arrived is whole.
. "$CTL_SRC/lib.sh"

check() { # WHAT COMMAND...: pass or fail as COMMAND says
	what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}

command -v python3 >/dev/null 2>&1 || skip "python3 not found"
command -v ibv_devinfo >/dev/null 2>&1 || skip "ibv_devinfo not found (ibverbs-utils)"
FIFO=$T/stderr.fifo
mkfifo "$FIFO"
python3 - "$FIFO" "$T/log.out" "$T/drain" "$T/stop" <<'PY' &
import fcntl, os, sys, time
fifo, out, drain, stop = sys.argv[1:5]
fd = os.open(fifo, os.O_RDWR)  # a reader (and writer) that never blocks the open
fcntl.fcntl(fd, 1031, 4096)  # F_SETPIPE_SZ: one page
open(out + ".ready", "w").close()
while not os.path.exists(drain):
    time.sleep(0.05)
os.set_blocking(fd, False)
with open(out, "ab") as f:
    while True:
        try:
            b = os.read(fd, 65536)
        except BlockingIOError:
            b = b""
        if b:
            f.write(b)
            f.flush()
        elif os.path.exists(stop):
            break
        else:
            time.sleep(0.05)
PY
HOLDER=$!
BG_PIDS="$BG_PIDS $HOLDER"
i=0
until [ -e "$T/log.out.ready" ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || { fail "the FIFO's reader did not start"; finish; }
	sleep 0.05
done

"$UROCE_BIN/uroced" --name uroce0 --addr "$TEST_NET.1" --rundir "$UROCE_RUNDIR" \
	--port "$CTL_PORT" 2>"$FIFO" &
D=$!
BG_PIDS="$BG_PIDS $D"
i=0
until uroce devices 2>/dev/null | awk '$1 == "uroce0" { f = 1 } END { exit !f }'; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! running "$D"; then
		fail "uroced did not come up"
		finish
	fi
	sleep 0.1
done

served=0
for _ in $(seq 150); do
	timeout 10 "$UROCE_BIN/uroce" run -- ibv_devinfo -d uroce0 >/dev/null 2>&1 || break
	served=$((served + 1))
done
check "150 programs served while nobody read the daemon's stderr ($served served)" \
	test "$served" = 150

touch "$T/drain"
sleep 0.5
# a line that fits now, after the dropped ones
uroce run -- ibv_devinfo -d uroce0 >/dev/null 2>&1 || fail "ibv_devinfo after the drain"
i=0
until grep -q 'log lines* dropped' "$T/log.out" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || break
	sleep 0.05
done
note=$(grep 'log lines* dropped' "$T/log.out")
n=$(echo "$note" | sed -n 's/.*warning: \([0-9]*\) log line.*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
check "the drained log says how many lines were dropped ($n): $note" test "$n" -gt 0
check "a context line follows that note" \
	sh -c "sed -n '/log lines* dropped/,\$p' '$T/log.out' | grep -q 'context [0-9]* opened by pid'"
bad=$(grep -vc '^uroced\[uroce0\]: ' "$T/log.out")
check "every line that arrived is whole ($(wc -l <"$T/log.out") lines, $bad not)" test "$bad" = 0
running "$D" && pass "the daemon still runs" || fail "the daemon is gone"

kill "$D" 2>/dev/null
wait "$D" 2>/dev/null
touch "$T/stop"
wait "$HOLDER" 2>/dev/null
finish

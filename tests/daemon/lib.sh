# SPDX-License-Identifier: MIT
# Shared helpers of the tests/daemon integration scripts (sourced, POSIX sh).
# Each test gets a private run directory and its own daemons, started here
# and killed by pid when the script exits, whether it passed or not.
#
# Environment (set by CMake): UROCE_BIN, UROCE_LIB, CTL_PORT, CTL_VERBS, CTL_SRC.

set -u
T=$(mktemp -d "${TMPDIR:-/tmp}/uroce-ctl.XXXXXX")
export UROCE_RUNDIR="$T/run"
DAEMON_PIDS=""
FAILS=0

cleanup() {
	for p in $DAEMON_PIDS; do
		kill "$p" 2>/dev/null
	done
	for p in $DAEMON_PIDS; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	echo "FAIL: $*" >&2
	FAILS=$((FAILS + 1))
}

pass() {
	echo "ok: $*"
}

skip() {
	echo "SKIP: $*"
	exit 77
}

# start_daemon NAME ADDR [extra uroced options...]: start uroced and wait
# until it serves (its start-up line is logged once the socket listens and
# the signal handlers are in place). Sets LAST_PID and LAST_LOG.
NSTARTS=0
start_daemon() {
	name=$1
	addr=$2
	shift 2
	NSTARTS=$((NSTARTS + 1))
	LAST_LOG="$T/$name.$NSTARTS.log"
	"$UROCE_BIN/uroced" --name "$name" --addr "$addr" --port "$CTL_PORT" \
		--rundir "$UROCE_RUNDIR" "$@" 2>"$LAST_LOG" &
	LAST_PID=$!
	DAEMON_PIDS="$DAEMON_PIDS $LAST_PID"
	i=0
	until grep -q "device $name on" "$LAST_LOG"; do
		i=$((i + 1))
		if [ $i -gt 200 ] || ! kill -0 "$LAST_PID" 2>/dev/null; then
			echo "daemon $name did not start:" >&2
			cat "$LAST_LOG" >&2
			exit 1
		fi
		sleep 0.05
	done
}

# stop_daemon PID: SIGTERM and wait; sets STOP_RC to the exit status.
stop_daemon() {
	kill "$1" 2>/dev/null
	wait "$1"
	STOP_RC=$?
}

uroce() {
	"$UROCE_BIN/uroce" "$@"
}

# counts NAME: "CTX PD MR CQ QP SRQ AH CHAN" of a device from `uroce devices`.
counts() {
	uroce devices | awk -v n="$1" '$1 == n { print $6, $7, $8, $9, $10, $11, $12, $13 }'
}

finish() {
	if [ "$FAILS" -ne 0 ]; then
		echo "$FAILS failure(s)" >&2
		exit 1
	fi
	echo "all passed"
	exit 0
}

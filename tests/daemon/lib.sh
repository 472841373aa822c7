# SPDX-License-Identifier: MIT
# Helpers of the tests/daemon and tests/dp integration scripts (sourced,
# POSIX sh), on top of tests/lib/common.sh (network claim, temporary
# directory, cleanup, pass/fail counting): daemons started on the test's
# UDP port with numbered logs, stopping them, and reading `uroce devices`.
#
# Environment (set by CMake): that of common.sh, plus CTL_VERBS and CTL_SRC,
# and optionally CTL_PORT, the UDP port of the daemons (default: the first
# port of the test's range, so that even [::1] is the test's own).

. "$UROCE_TEST_LIB/common.sh"
CTL_PORT=${CTL_PORT:-$TEST_PORT_BASE}

# start_daemon NAME ADDR [extra uroced options...]: start uroced on CTL_PORT
# and wait until it serves (start_uroced). Sets LAST_PID and LAST_LOG.
NSTARTS=0
start_daemon() {
	name=$1
	addr=$2
	shift 2
	NSTARTS=$((NSTARTS + 1))
	LAST_LOG="$T/$name.$NSTARTS.log"
	start_uroced "$name" "$addr" "$LAST_LOG" "$UROCE_RUNDIR" "" --port "$CTL_PORT" "$@"
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

# counter NAME DEVICE: one counter of the device as `uroce counters --all`
# names it (xport.tx_pkts, daemon.time_work_ns...), 0 when absent; printed
# whole (mawk's print would write a large one with an exponent).
counter() {
	uroce counters "$2" --all | awk -v n="$1" '$1 == n { v = $2 } END { printf "%.0f\n", v + 0 }'
}

# counts NAME: "CTX PD MR CQ QP SRQ AH CHAN MW DM XRCD OQP" of a device from `uroce devices`.
counts() {
	uroce devices | awk -v n="$1" '$1 == n { for (i = 6; i <= 17; i++) printf "%s%s", $i, i < 17 ? " " : "\n" }'
}

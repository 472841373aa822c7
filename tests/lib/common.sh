# SPDX-License-Identifier: MIT
# Shared helpers of every integration test script (sourced; POSIX sh, so that
# the sh scripts of tests/daemon and tests/dp and the bash scripts of
# tests/e2e use the same code). Sourcing it claims the test's network (see
# TestNet.cmake: its loopback /24 and port range; the test is skipped, exit
# 77, when another run holds them or something is bound there), makes a
# private temporary directory $T with the run directory $T/run, and arranges
# that everything started in the background (BG_PIDS) is killed by pid when the
# script exits, passed or not. It provides the pass/fail counting, skipping,
# starting a daemon and picking TCP ports inside the range. It starts nothing
# by itself and never uses an address outside the test's allocation.
#
# Environment (set by uroce_net_test() in CMake):
#   UROCE_BIN, UROCE_LIB      build/bin, build/lib
#   UROCE_TEST_LIB            this folder
#   UROCE_TEST_NET            first three octets of the test's loopback /24
#   UROCE_TEST_PORT_BASE/_COUNT  the test's ports (TCP, and UDP where a test
#                             needs a port of its own, e.g. on ::1)
#   UROCE_TEST_SLOT/_INDEX, UROCE_TEST_PRIV_NET, UROCE_TEST_V6_NET: for tests
#                             that build network namespaces
# Optional: UROCE_KEEP=1 keeps $T (it is always kept when a check failed).

set -u
: "${UROCE_BIN:?UROCE_BIN must name build/bin}"
: "${UROCE_LIB:?UROCE_LIB must name build/lib}"
: "${UROCE_TEST_LIB:?UROCE_TEST_LIB must name tests/lib (tests are registered with uroce_net_test)}"
: "${UROCE_TEST_NET:?UROCE_TEST_NET must name the test loopback /24, e.g. 127.130.1}"
: "${UROCE_TEST_PORT_BASE:?}" "${UROCE_TEST_PORT_COUNT:?}"
TEST_NAME=$(basename "$0" .sh)
TEST_NET=$UROCE_TEST_NET
TEST_PORT_BASE=$UROCE_TEST_PORT_BASE
TEST_PORT_END=$((UROCE_TEST_PORT_BASE + UROCE_TEST_PORT_COUNT)) # first port not ours
TEST_PY=/usr/bin/python3
FAILS=0
CHECKS=0
BG_PIDS=""  # everything started in the background, killed at exit
AT_EXIT=""  # functions run at exit after BG_PIDS are gone (at_exit)

pass() {
	CHECKS=$((CHECKS + 1))
	echo "ok: $*"
}

fail() {
	CHECKS=$((CHECKS + 1))
	FAILS=$((FAILS + 1))
	echo "FAIL: $*"
}

skip() {
	echo "SKIP: $*"
	exit 77
}

need_prog() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"
}

# show FILE [LINES]: the last LINES (40) lines of FILE indented, for failure
# reports.
show() {
	sed 's/^/    | /' "$1" 2>/dev/null | tail -n "${2:-40}"
}

# finish: exit 1 when a check failed, else 0. Scripts that report only their
# failures (`cond || fail ...`) count fewer "ok" than they check.
finish() {
	if [ "$FAILS" -ne 0 ]; then
		echo "$TEST_NAME: $FAILS failed ($((CHECKS - FAILS)) ok)"
		exit 1
	fi
	echo "$TEST_NAME: all passed ($CHECKS ok)"
	exit 0
}

# ---------------------------------------------------------------- the network

# The lock stands for the /24 and the port range on this machine; it is held
# on descriptor 9 until the script and its children are gone.
[ -x "$TEST_PY" ] || skip "$TEST_PY is needed to probe the test network"
TESTNET_WHAT="test network $TEST_NET.0/24 with ports $TEST_PORT_BASE-$((TEST_PORT_END - 1))"
TESTNET_LOCK=$("$TEST_PY" "$UROCE_TEST_LIB/testnet.py" lockfile) || exit 2
mkdir -p "${TESTNET_LOCK%/*}" && chmod 1777 "${TESTNET_LOCK%/*}" 2>/dev/null
exec 9>>"$TESTNET_LOCK"
if ! flock -n 9; then
	skip "$TESTNET_WHAT is in use by another test run ($(cat "$TESTNET_LOCK" 2>/dev/null) holds $TESTNET_LOCK)"
fi
chmod 666 "$TESTNET_LOCK" 2>/dev/null
echo "pid $$ $0 ${UROCE_BIN%/bin}" >"$TESTNET_LOCK"
if ! TESTNET_TAKEN=$("$TEST_PY" "$UROCE_TEST_LIB/testnet.py" probe); then
	skip "$TESTNET_WHAT is taken by something outside this test: $TESTNET_TAKEN"
fi

# ---------------------------------------------------------------- lifetime

T=$(mktemp -d "${TMPDIR:-/tmp}/uroce-$TEST_NAME.XXXXXX")
chmod 755 "$T" # dumpcap may write as another user
export UROCE_RUNDIR="$T/run"

# running PID: PID exists and has not exited (a zombie that sh has not reaped
# yet counts as gone).
running() {
	[ -r "/proc/$1/stat" ] && [ "$(sed 's/^.*) //' "/proc/$1/stat" | cut -c1)" != Z ]
}

# await_listen PORT PID [NS]: waits until something listens on TCP PORT, in
# network namespace NS if given (10 s at most), or PID is gone; 1 then.
await_listen() {
	_l_i=0
	while [ $_l_i -lt 100 ]; do
		ss ${3:+-N "$3"} -Htln "sport = :$1" 2>/dev/null | grep -q . && return 0
		running "$2" || return 1
		sleep 0.1
		_l_i=$((_l_i + 1))
	done
	return 1
}

# at_exit FUNCTION: run FUNCTION at exit, after the background processes are
# gone and before $T is removed.
at_exit() {
	AT_EXIT="$AT_EXIT $1"
}

test_cleanup() {
	_c_rc=$?
	for _c_p in $BG_PIDS; do
		kill -TERM "$_c_p" 2>/dev/null
	done
	for _c_p in $BG_PIDS; do
		# give each 5 s to exit, then SIGKILL
		_c_i=0
		while running "$_c_p" && [ $_c_i -lt 50 ]; do
			_c_i=$((_c_i + 1))
			sleep 0.1
		done
		kill -KILL "$_c_p" 2>/dev/null
		wait "$_c_p" 2>/dev/null
	done
	for _c_f in $AT_EXIT; do
		"$_c_f"
	done
	if [ "$FAILS" -ne 0 ] || [ "${UROCE_KEEP:-0}" = 1 ]; then
		echo "(kept $T)"
	else
		rm -rf "$T"
	fi
	# A script that counted a failure never passes, whether or not it
	# reached finish: a check that printed FAIL cannot end in exit 0.
	if [ "$FAILS" -ne 0 ] && [ "$_c_rc" -eq 0 ]; then
		echo "$TEST_NAME: $FAILS failed, but the script was ending with exit 0: exit 1"
		exit 1
	fi
}
trap test_cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT TERM

# ---------------------------------------------------------------- daemons

# start_uroced NAME ADDR LOG RUNDIR NS [uroced options...]: starts uroced in
# network namespace NS ("" = this one), under the command words of
# UROCED_WRAP when set (a program that execs it, e.g. setpriv dropping
# capabilities), with its stderr in LOG and waits (10 s
# at most) until it serves: its start-up line "device NAME on" is logged
# (once the socket listens and the signal handlers are in place), the socket
# exists and `uroce devices`, run as the daemon is (under UROCED_WRAP: the CLI
# talks only to daemons of its own user), lists it. Sets LAST_PID. A daemon that exits or
# does not come up is a failure that ends the test.
start_uroced() {
	_s_name=$1
	_s_addr=$2
	_s_log=$3
	_s_rundir=$4
	_s_ns=$5
	shift 5
	_s_nsx=""
	[ -z "$_s_ns" ] || _s_nsx="ip netns exec $_s_ns"
	# a simple command, so that $! is uroced itself (ip netns exec execs it)
	$_s_nsx ${UROCED_WRAP:-} "$UROCE_BIN/uroced" --name "$_s_name" --addr "$_s_addr" --rundir "$_s_rundir" \
		"$@" 2>"$_s_log" 9>&- &
	LAST_PID=$!
	BG_PIDS="$BG_PIDS $LAST_PID"
	_s_i=0
	while [ $_s_i -lt 100 ]; do
		if ! running "$LAST_PID"; then
			fail "uroced $_s_name on $_s_addr exited at start"
			show "$_s_log"
			exit 1
		fi
		if grep -q "device $_s_name on" "$_s_log" && [ -S "$_s_rundir/$_s_name.sock" ] &&
			$_s_nsx timeout 5 ${UROCED_WRAP:-} "$UROCE_BIN/uroce" devices --rundir "$_s_rundir" 2>/dev/null |
			awk -v n="$_s_name" '$1 == n { f = 1 } END { exit !f }'; then
			return 0
		fi
		_s_i=$((_s_i + 1))
		sleep 0.1
	done
	fail "uroced $_s_name on $_s_addr did not come up within 10 s"
	show "$_s_log"
	exit 1
}

# ---------------------------------------------------------------- TCP ports

# next_tcp_port: the next TCP port of the test's range (wrapping around)
# that no socket uses right now, except in TIME-WAIT: the servers the tests
# run (ibv_rc_pingpong, perftest) listen with SO_REUSEADDR, so an earlier
# run's leftovers do not stop them. Sets TCP_PORT; skips the test when every
# port of the range is busy.
NEXT_TCP=$TEST_PORT_BASE
next_tcp_port() {
	_t_n=0
	while ss -Htan exclude time-wait "( sport = :$NEXT_TCP or dport = :$NEXT_TCP )" 2>/dev/null |
		grep -q .; do
		_t_n=$((_t_n + 1))
		[ $_t_n -lt $((TEST_PORT_END - TEST_PORT_BASE)) ] ||
			skip "every TCP port of $TESTNET_WHAT is in use"
		NEXT_TCP=$((NEXT_TCP + 1))
		[ "$NEXT_TCP" -lt "$TEST_PORT_END" ] || NEXT_TCP=$TEST_PORT_BASE
	done
	TCP_PORT=$NEXT_TCP
	NEXT_TCP=$((NEXT_TCP + 1))
	[ "$NEXT_TCP" -lt "$TEST_PORT_END" ] || NEXT_TCP=$TEST_PORT_BASE
}

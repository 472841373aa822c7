#!/bin/sh
# SPDX-License-Identifier: MIT
# The claim on a test network cannot be missed. With this test's allocation
# (tests/lib/TestNet.cmake), a child script that sources common.sh and a
# Python child that calls testnet.claim() must both proceed while nothing
# holds the /24 or the ports, and must both exit 77 with a SKIP line naming
# what is held while this script holds one thing: UDP 4791 on the first
# address, UDP on the range's first port on the third address and on [::1],
# a TCP listener on the range's last port, or the lock of another test run.
# Does not source common.sh itself: its children claim the network.
set -u
PY=/usr/bin/python3
LIB=${UROCE_TEST_LIB:?UROCE_TEST_LIB must name tests/lib}
NET=${UROCE_TEST_NET:?UROCE_TEST_NET must be set (by uroce_net_test)}
BASE=${UROCE_TEST_PORT_BASE:?}
LAST=$((BASE + ${UROCE_TEST_PORT_COUNT:?} - 1))
T=$(mktemp -d "${TMPDIR:-/tmp}/uroce-claim.XXXXXX")
HOLD=""
FAILS=0
trap '[ -z "$HOLD" ] || kill "$HOLD" 2>/dev/null; rm -rf "$T"' EXIT

printf '. "%s/common.sh"\necho "claimed $TEST_NET"\n' "$LIB" >"$T/child.sh"
printf 'import sys\nsys.path.insert(0, "%s")\nimport testnet\nprint("claimed", testnet.claim()[0])\n' \
	"$LIB" >"$T/child.py"

# children WANT_RC PATTERN CASE: both children exit WANT_RC and print PATTERN.
children() {
	for c in "sh $T/child.sh" "$PY $T/child.py"; do
		$c >"$T/out" 2>&1
		rc=$?
		# another run of this build's slot took the network meanwhile (its
		# test of the same index): this test cannot run now, say so and skip
		if grep -q "in use by another test run" "$T/out" &&
			! grep -q "(claim_test holder holds" "$T/out"; then
			echo "SKIP: another test run took this test's network meanwhile: $(cat "$T/out")"
			exit 77
		fi
		if [ "$rc" -eq "$1" ] && grep -q -- "$2" "$T/out"; then
			echo "ok: $3: ${c%% *} child exit $rc: $(head -n 1 "$T/out")"
		else
			echo "FAIL: $3: ${c%% *} child exit $rc (want $1 and '$2'): $(cat "$T/out")"
			FAILS=$((FAILS + 1))
		fi
	done
}

# hold PYTHON_STATEMENTS: run them in the background (they bind something),
# wait until they print "ready"; sets HOLD.
hold() {
	printf 'import socket, time\n%s\nprint("ready", flush=True)\ntime.sleep(60)\n' "$1" >"$T/hold.py"
	# emptied here, not by the background job's own redirection: that one
	# may run after the wait below has read the previous holder's "ready"
	: >"$T/hold.out"
	"$PY" "$T/hold.py" >>"$T/hold.out" 2>&1 &
	HOLD=$!
	i=0
	until grep -q ready "$T/hold.out"; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$HOLD" 2>/dev/null; then
			echo "FAIL: holder did not start: $(cat "$T/hold.out")"
			exit 1
		fi
		sleep 0.05
	done
}

release() {
	kill "$HOLD"
	wait "$HOLD" 2>/dev/null
	HOLD=""
}

sh "$T/child.sh" >"$T/out" 2>&1
rc=$?
if [ "$rc" -eq 77 ]; then
	echo "SKIP: this test's own network is held by someone else: $(cat "$T/out")"
	exit 77
fi
children 0 "claimed $NET" "nothing held"

hold "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('$NET.1', 4791))"
children 77 "SKIP: .*taken by something outside this test: UDP $NET.1:4791" "UDP 4791 held"
release

hold "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('$NET.3', $BASE))"
children 77 "SKIP: .*UDP $NET.3:$BASE" "UDP on the first port held"
release

if "$PY" -c 'import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).bind(("::1", 0))' 2>/dev/null; then
	hold "s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.bind(('::1', $BASE))"
	children 77 "SKIP: .*UDP \[::1\]:$BASE" "UDP [::1] on the first port held"
	release
else
	echo "note: no IPv6 loopback on this host, [::1] case not run"
fi

hold "s = socket.socket(); s.bind(('$NET.1', $LAST)); s.listen()"
children 77 "SKIP: .*TCP port $LAST" "TCP listener on the last port"
release

LOCK=$("$PY" "$LIB/testnet.py" lockfile)
hold "import fcntl; f = open('$LOCK', 'a'); fcntl.flock(f, fcntl.LOCK_EX)
f.truncate(0); f.write('claim_test holder'); f.flush()"
children 77 "SKIP: .*in use by another test run (claim_test holder holds $LOCK)" \
	"lock held by another run"
release

children 0 "claimed $NET" "all released"
if [ "$FAILS" -ne 0 ]; then
	echo "claim_test: $FAILS failures"
	exit 1
fi
echo "claim_test: all cases passed"

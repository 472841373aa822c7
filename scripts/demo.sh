#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# uroce demo (run by `./quickstart.sh demo` after the build): two software RNICs
# on one machine, uroce0 on 127.0.0.1 and uroce1 on 127.0.0.2, and rdma-core's
# unmodified ibv_rc_pingpong between them over RoCEv2. Both daemons record what
# they send and accept; the captures are decoded at the end, every ICRC checked.
#
# Environment (optional): DEMO_BUILD (the build directory, default build/),
# DEMO_ADDR0, DEMO_ADDR1 (the RNICs' addresses; the client reaches the server
# at DEMO_ADDR0), DEMO_OUT (folder for the captures, default the build
# directory), DEMO_TCP_PORT (the port ibv_rc_pingpong uses to swap QP
# numbers, default: a free one from 18515).
set -euo pipefail
cd "$(dirname "$0")/.."

B=${DEMO_BUILD:-build}
BIN=$B/bin
ADDR0=${DEMO_ADDR0:-127.0.0.1}
ADDR1=${DEMO_ADDR1:-127.0.0.2}
OUT=${DEMO_OUT:-$B}
for f in "$BIN/uroced" "$BIN/uroce" "$B/lib/liburoce.so"; do
	if [ ! -e "$f" ]; then
		echo "demo: $f not found; build first: cmake -S . -B build && cmake --build build" >&2
		exit 2
	fi
done
if ! command -v ibv_rc_pingpong >/dev/null; then
	echo "demo: ibv_rc_pingpong not found (Debian/Ubuntu package ibverbs-utils)" >&2
	exit 2
fi
mkdir -p "$OUT"
CAP0=$OUT/demo-uroce0.pcap
CAP1=$OUT/demo-uroce1.pcap
RUN=$(mktemp -d "${TMPDIR:-/tmp}/uroce-demo.XXXXXX")
PIDS=()

cleanup() {
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$RUN"
}
trap cleanup EXIT

# start NAME ADDR CAPTURE: one RNIC in the background, its log in $RUN.
start() {
	local name=$1 addr=$2 cap=$3 i
	echo "\$ uroced --name $name --addr $addr --rundir $RUN --pcap $cap &"
	"$BIN/uroced" --name "$name" --addr "$addr" --rundir "$RUN" --pcap "$cap" 2>"$RUN/$name.log" &
	PIDS+=($!)
	for i in $(seq 100); do
		[ -S "$RUN/$name.sock" ] && return 0
		if ! kill -0 "${PIDS[-1]}" 2>/dev/null; then
			echo "demo: uroced $name did not start:" >&2
			cat "$RUN/$name.log" >&2
			echo "demo: (another RNIC on $addr? stop it, or choose other addresses" \
				"with DEMO_ADDR0=127.0.0.11 DEMO_ADDR1=127.0.0.12)" >&2
			exit 1
		fi
		sleep 0.1
	done
	echo "demo: uroced $name did not create its socket within 10 s" >&2
	exit 1
}

echo "== two RNICs on this machine"
start uroce0 "$ADDR0" "$CAP0"
start uroce1 "$ADDR1" "$CAP1"
echo "\$ uroce devices --rundir $RUN"
timeout 10 "$BIN/uroce" devices --rundir "$RUN"

PORT=${DEMO_TCP_PORT:-18515}
if [ -z "${DEMO_TCP_PORT:-}" ]; then
	while ss -Htan "( sport = :$PORT or dport = :$PORT )" 2>/dev/null | grep -q .; do
		PORT=$((PORT + 1))
	done
fi
PP_OPTS=(-g 0 -p "$PORT" -n 1000 -s 4096)
echo
echo "== ibv_rc_pingpong (rdma-core, unmodified) through the uroce shim"
echo "\$ uroce run -- ibv_rc_pingpong -d uroce0 ${PP_OPTS[*]} &          # server"
echo "\$ uroce run -- ibv_rc_pingpong -d uroce1 ${PP_OPTS[*]} $ADDR0  # client"
timeout -k 5 60 "$BIN/uroce" run --rundir "$RUN" -- \
	ibv_rc_pingpong -d uroce0 "${PP_OPTS[@]}" >"$RUN/server.out" 2>&1 &
SERVER=$!
PIDS+=($SERVER)
for _ in $(seq 100); do
	ss -Htln "( sport = :$PORT )" 2>/dev/null | grep -q . && break
	kill -0 $SERVER 2>/dev/null || break
	sleep 0.1
done
CLIENT_RC=0
timeout -k 5 60 "$BIN/uroce" run --rundir "$RUN" -- \
	ibv_rc_pingpong -d uroce1 "${PP_OPTS[@]}" "$ADDR0" >"$RUN/client.out" 2>&1 || CLIENT_RC=$?
SERVER_RC=0
wait $SERVER || SERVER_RC=$?
echo "-- server (uroce0, $ADDR0):"
sed 's/^/   /' "$RUN/server.out"
echo "-- client (uroce1, $ADDR1):"
sed 's/^/   /' "$RUN/client.out"
FAILED=0
if [ $SERVER_RC -ne 0 ] || [ $CLIENT_RC -ne 0 ]; then
	echo "demo: ibv_rc_pingpong failed (server exit $SERVER_RC, client exit $CLIENT_RC)" >&2
	FAILED=1
fi

echo
echo "== stopping the RNICs (SIGTERM flushes and closes the captures)"
for i in "${!PIDS[@]}"; do
	p=${PIDS[$i]}
	[ "$p" = "$SERVER" ] && continue
	kill -TERM "$p" 2>/dev/null || true
	rc=0
	wait "$p" || rc=$?
	if [ $rc -ne 0 ]; then
		echo "demo: uroced (pid $p) exited $rc" >&2
		FAILED=1
	fi
done
PIDS=()

echo
echo "== uroce decode: every packet each RNIC sent or accepted, every ICRC checked"
for cap in "$CAP0" "$CAP1"; do
	rc=0
	"$BIN/uroce" decode "$cap" >"$RUN/decode.out" 2>&1 || rc=$?
	echo "\$ uroce decode $cap"
	head -n 6 "$RUN/decode.out"
	echo "   ..."
	tail -n 1 "$RUN/decode.out"
	if [ $rc -ne 0 ] || ! grep -Eq '^roce packets: [1-9][0-9]*, .*icrc bad: 0, malformed: 0$' "$RUN/decode.out"; then
		echo "demo: the capture $cap did not decode cleanly (exit $rc)" >&2
		FAILED=1
	fi
done

cat <<EOF

Each decoded line is one RoCEv2 packet (InfiniBand transport headers in UDP to
port 4791): addresses, opcode (RC Send Only, Acknowledge...), destination QP,
PSN, and the ICRC that uroce recomputed. Open the captures in Wireshark
(wireshark $CAP0) or read them with
  tshark -r $CAP0 --disable-heuristic rpcrdma_infiniband
(the option stops the NFS-over-RDMA heuristic from claiming the SEND payloads).
Wireshark shows the ICRC field but does not check it; uroce decode does.
EOF
exit $FAILED

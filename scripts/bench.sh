#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# uroce benchmark: two RNICs (uroce0 on 127.0.0.1, uroce1 on 127.0.0.2), unmodified perftest
# binaries through the shim, and qperf over TCP on loopback as the baseline users would
# otherwise pick. Prints one table: each figure, its ratio to the baseline, and the peak
# memory (VmHWM) of each daemon. No targets here: it reports what it measures.
#
#   scripts/bench.sh [BUILD_DIR]        (default: build)
#   env: BENCH_ITERS_BW (default 2000), BENCH_ITERS_LAT (default 2000), BENCH_TIMEOUT (120 s),
#        BENCH_ADDR0 / BENCH_ADDR1 (the two RNICs' addresses, default 127.0.0.1 / 127.0.0.2)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
ITERS_BW=${BENCH_ITERS_BW:-2000}
ITERS_LAT=${BENCH_ITERS_LAT:-2000}
TMO=${BENCH_TIMEOUT:-120}
A0=${BENCH_ADDR0:-127.0.0.1}
A1=${BENCH_ADDR1:-127.0.0.2}

for t in ib_write_bw ib_read_bw ib_send_bw ib_send_lat ib_write_lat qperf; do
	command -v "$t" >/dev/null || { echo "bench: $t is not installed (apt-get install perftest qperf)" >&2; exit 2; }
done
[ -x "$B/bin/uroced" ] && [ -x "$B/bin/uroce" ] || { echo "bench: build first ($B/bin/uroced missing)" >&2; exit 2; }

RUNDIR=$(mktemp -d /tmp/uroce-bench.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$RUNDIR"
}
trap cleanup EXIT

"$B/bin/uroced" --name uroce0 --addr "$A0" --rundir "$RUNDIR" 2>"$RUNDIR/uroce0.log" &
D0=$!
"$B/bin/uroced" --name uroce1 --addr "$A1" --rundir "$RUNDIR" 2>"$RUNDIR/uroce1.log" &
D1=$!
PIDS+=("$D0" "$D1")
for i in $(seq 50); do
	[ -S "$RUNDIR/uroce0.sock" ] && [ -S "$RUNDIR/uroce1.sock" ] && break
	sleep 0.1
done

RUN=("$B/bin/uroce" run --rundir "$RUNDIR" --)
PORT=18515

# perftest NAME ARGS... -> prints the client's output; the server runs on uroce0.
perftest() {
	local tool=$1
	shift
	PORT=$((PORT + 1))
	timeout "$TMO" "${RUN[@]}" "$tool" -d uroce0 -x 0 -F -p "$PORT" "$@" >"$RUNDIR/$tool.srv" 2>&1 &
	local srv=$!
	sleep 0.5
	timeout "$TMO" "${RUN[@]}" "$tool" -d uroce1 -x 0 -F -p "$PORT" "$@" "$A0" >"$RUNDIR/$tool.cli" 2>&1 || true
	wait "$srv" || true
	cat "$RUNDIR/$tool.cli"
}

# The numeric row of a perftest report is the line that starts with the message size.
bw_mbs() { awk -v s="$1" '$1==s && NF>=4 {v=$4} END{print (v==""?"n/a":v)}'; }
lat_us() { awk -v s="$1" '$1==s && NF>=5 {v=$5} END{print (v==""?"n/a":v)}'; }

declare -A R
R[write_bw]=$(perftest ib_write_bw -s 65536 -n "$ITERS_BW" | bw_mbs 65536)
R[read_bw]=$(perftest ib_read_bw -s 65536 -n "$ITERS_BW" | bw_mbs 65536)
R[send_bw]=$(perftest ib_send_bw -s 65536 -n "$ITERS_BW" | bw_mbs 65536)
R[send_lat]=$(perftest ib_send_lat -s 2 -n "$ITERS_LAT" | lat_us 2)
R[write_lat]=$(perftest ib_write_lat -s 2 -n "$ITERS_LAT" | lat_us 2)

qperf >/dev/null 2>&1 &
QS=$!
PIDS+=("$QS")
sleep 0.5
QOUT=$(timeout "$TMO" qperf -t 3 127.0.0.1 tcp_bw tcp_lat 2>&1 || true)
kill "$QS" 2>/dev/null || true
# qperf prints "bw = 2.86 GB/sec" (or MB/sec) and "latency = 14.5 us" (or ms).
TCP_BW=$(echo "$QOUT" | awk '/bw *=/ {v=$3; u=$4; if (u ~ /^GB/) v*=1000; else if (u ~ /^KB/) v/=1000; print v}')
TCP_LAT=$(echo "$QOUT" | awk '/latency *=/ {v=$3; u=$4; if (u == "ms") v*=1000; else if (u == "ns") v/=1000; print v}')

hwm() { awk '/VmHWM/ {print $2 " " $3}' "/proc/$1/status" 2>/dev/null || echo "n/a"; }

ratio() { # value baseline
	awk -v a="$1" -v b="$2" 'BEGIN { if (a+0 > 0 && b+0 > 0) printf "%.2f", a/b; else print "n/a" }'
}

printf '\n%-34s %14s %14s %8s\n' "test (uroce0 <-> uroce1)" "uroce" "tcp baseline" "ratio"
printf '%-34s %14s %14s %8s\n' "ib_write_bw 64 KiB [MB/s]" "${R[write_bw]}" "$TCP_BW" "$(ratio "${R[write_bw]}" "$TCP_BW")"
printf '%-34s %14s %14s %8s\n' "ib_read_bw 64 KiB [MB/s]" "${R[read_bw]}" "$TCP_BW" "$(ratio "${R[read_bw]}" "$TCP_BW")"
printf '%-34s %14s %14s %8s\n' "ib_send_bw 64 KiB [MB/s]" "${R[send_bw]}" "$TCP_BW" "$(ratio "${R[send_bw]}" "$TCP_BW")"
printf '%-34s %14s %14s %8s\n' "ib_send_lat 2 B typical [us]" "${R[send_lat]}" "$TCP_LAT" "$(ratio "${R[send_lat]}" "$TCP_LAT")"
printf '%-34s %14s %14s %8s\n' "ib_write_lat 2 B typical [us]" "${R[write_lat]}" "$TCP_LAT" "$(ratio "${R[write_lat]}" "$TCP_LAT")"
printf '%-34s %14s\n' "uroce0 peak memory (VmHWM)" "$(hwm "$D0")"
printf '%-34s %14s\n' "uroce1 peak memory (VmHWM)" "$(hwm "$D1")"
echo "(baseline: qperf tcp_bw / tcp_lat over loopback; bandwidth ratio = uroce/tcp, latency ratio = uroce/tcp)"

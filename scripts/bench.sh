#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The uroce benchmark: two RNICs (uroce0, uroce1), unmodified perftest binaries through the
# shim, and TCP over the same loopback (qperf) as the baseline users would otherwise pick, in
# the same run. Every figure is measured REPS times and reported as the median with min-max,
# next to TCP's and as a ratio to it. No targets here: it reports what it measures.
#
# Figures: ib_write_bw / ib_read_bw / ib_send_bw with 64 KiB messages (MB/s) and the daemons'
# CPU-seconds per GB moved (both daemons' threads' CPU time from /proc/PID/task/*/schedstat,
# over the run) next to TCP's (both qperf processes); the 64 B ib_send_bw message rate;
# ib_send_lat / ib_write_lat 2 B typical and p99 latency, polling and with -e (events), and
# each p99 over its typical value (each repetition's);
# ib_write_bw -q 16 and -q 1000 aggregate, also as a ratio to the 64 KiB ib_write_bw of one QP
# (each repetition's pair); the daemons' peak memory (VmHWM), and during the
# -q 1000 run its two parts: the daemon's own (RssAnon) and the applications' pages it
# maps (RssShmem: queue rings and registered memory, up to uroced --map-budget). Then a sweep
# of message sizes, uroce ib_write_bw vs qperf tcp_bw, written as CSV and, where gnuplot or
# matplotlib is installed, drawn as a PNG.
#
#   scripts/bench.sh [--quick | --smoke] [--one-daemon] [--pin] [--profile] [--reps N] [--out DIR]
#                    [BUILD_DIR]
#   (BUILD_DIR default: build)
#
#   --one-daemon  both RNICs in one uroced process (--name/--addr twice) instead of two
#   --pin     place the processes on the first two CPUs of the mask with taskset: uroce0's
#             daemon and the client on A, uroce1's daemon and the server on B, so that each
#             hop of a message goes to another CPU (docs/performance.md, "Latency on two
#             cores"); with --one-daemon the daemon on A, both programs on B. qperf stays
#             where the scheduler puts it, which for TCP is its best: a ping-pong's two
#             ends on one CPU (11.5 us here; on two CPUs each receive is a cross-CPU
#             wake-up, 61 us). Without --pin the scheduler places everything
#   --profile the daemons time the parts of their data path (uroced --profile), and a second
#             table says where their CPU went in the 64 KiB and 64 B runs: sendmmsg,
#             recvmmsg, copies to and from registered memory, ICRCs, the rest of the work,
#             passes that found nothing, and the remainder (yields, epoll, control requests)
#   --quick   fewer iterations and one repetition: under 2 minutes
#   --smoke   tiny sizes, one repetition: checks that every part still runs (CI), in seconds
#   --reps N  repetitions of each figure (default 3; 1 with --quick/--smoke)
#   --out DIR where bench.csv, sweep.csv and sweep.png go (default: a new /tmp/uroce-bench.*)
#
#   env: BENCH_ADDR0 / BENCH_ADDR1 (the two RNICs' addresses, default 127.0.0.1 / 127.0.0.2),
#        BENCH_PORT / BENCH_PORTS (the TCP ports perftest and qperf take turns at, default
#        40 from 18515),
#        BENCH_TIMEOUT (per program, default 120 s), BENCH_DAEMON_OPTS (extra uroced options)
#
# bench.csv: one row per measurement: figure,unit,rep,uroce,tcp (tcp empty where there is no
# TCP counterpart; the ratios of two uroce figures have "x" as their unit, and the -q ratios
# the -q 1 figure in the tcp column).
# sweep.csv: bytes,uroce_write_mbs,tcp_mbs. A perftest pair that fails is named on stderr, its
# figure is left empty and its outputs are kept as failed-N.client and failed-N.server in the
# same directory. Every bandwidth run passes perftest -N: the table reports perftest's
# average, and the peak it would compute otherwise costs the client time quadratic in the
# messages sent (40 s of CPU after a -q 1000 run here).
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=full
ONE_DAEMON=0
PIN=0
PROFILE=0
REPS=
OUT=
B=build
while [ $# -gt 0 ]; do
	case $1 in
	--quick) MODE=quick ;;
	--one-daemon) ONE_DAEMON=1 ;;
	--pin) PIN=1 ;;
	--profile) PROFILE=1 ;;
	--smoke) MODE=smoke ;;
	--reps)
		[ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]*$ ]] || { echo "bench: --reps needs a number >= 1" >&2; exit 2; }
		REPS=$2
		shift
		;;
	--out)
		[ $# -ge 2 ] || { echo "bench: --out needs a directory" >&2; exit 2; }
		OUT=$2
		shift
		;;
	-h | --help)
		sed -n '3,41p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "bench: unknown option $1 (see --help)" >&2
		exit 2
		;;
	*) B=$1 ;;
	esac
	shift
done

# ITERS_BW: the 64 KiB runs also give the CPU per GB (the daemons' threads' CPU time in ns,
# cpu_ns below): 20000 messages move 1.3 GB.
case $MODE in
full) ITERS_BW=20000 ITERS_RATE=200000 ITERS_LAT=5000 ITERS_Q=200 QPS_MANY=1000 TCP_SECS=3
	SWEEP="64 256 1024 4096 8192 16384 65536 262144 1048576" SWEEP_BYTES=$((256 << 20)) ;;
quick) ITERS_BW=5000 ITERS_RATE=100000 ITERS_LAT=2000 ITERS_Q=50 QPS_MANY=1000 TCP_SECS=1
	SWEEP="64 1024 16384 65536 1048576" SWEEP_BYTES=$((64 << 20)) ;;
smoke) ITERS_BW=20 ITERS_RATE=200 ITERS_LAT=50 ITERS_Q=5 QPS_MANY=32 TCP_SECS=1
	SWEEP="64 65536" SWEEP_BYTES=$((4 << 20)) ;;
esac
[ -n "$REPS" ] || { [ "$MODE" = full ] && REPS=3 || REPS=1; }
TMO=${BENCH_TIMEOUT:-120}
A0=${BENCH_ADDR0:-127.0.0.1}
A1=${BENCH_ADDR1:-127.0.0.2}
PORT=${BENCH_PORT:-18515}
NPORTS=${BENCH_PORTS:-40}
PORT_END=$((PORT + NPORTS))

for t in ib_write_bw ib_read_bw ib_send_bw ib_send_lat ib_write_lat qperf; do
	command -v "$t" >/dev/null || { echo "bench: $t is not installed (apt-get install perftest qperf)" >&2; exit 2; }
done
[ -x "$B/bin/uroced" ] && [ -x "$B/bin/uroce" ] || { echo "bench: build first ($B/bin/uroced missing)" >&2; exit 2; }

RUNDIR=$(mktemp -d /tmp/uroce-bench-run.XXXXXX)
if [ -z "$OUT" ]; then OUT=$(mktemp -d /tmp/uroce-bench.XXXXXX); fi
mkdir -p "$OUT"
CSV=$OUT/bench.csv
echo "figure,unit,rep,uroce,tcp" >"$CSV"
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$RUNDIR"
}
trap cleanup EXIT

# PIN_D0 / PIN_D1 / PIN_SRV / PIN_CLI: the command prefixes that place the daemons and the
# perftest servers and clients (--pin).
PIN_D0=() PIN_D1=() PIN_SRV=() PIN_CLI=() PLACED="not pinned"
if [ "$PIN" = 1 ]; then
	command -v taskset >/dev/null || { echo "bench: --pin needs taskset (util-linux)" >&2; exit 2; }
	mapfile -t CPUS < <(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' |
		awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }' | head -n 2)
	[ "${#CPUS[@]}" -eq 2 ] || { echo "bench: --pin needs two CPUs in the affinity mask" >&2; exit 2; }
	PIN_D0=(taskset -c "${CPUS[0]}")
	PIN_CLI=(taskset -c "${CPUS[0]}")
	PIN_SRV=(taskset -c "${CPUS[1]}")
	if [ "$ONE_DAEMON" = 1 ]; then
		PIN_CLI=(taskset -c "${CPUS[1]}")
	else
		PIN_D1=(taskset -c "${CPUS[1]}")
	fi
fi

TICK=$(getconf CLK_TCK)
# cpu_ns PID...: the CPU time of the processes' threads so far, in ns: the sum of
# /proc/PID/task/*/schedstat, exact where utime + stime of /proc/PID/stat count ticks of
# 1/CLK_TCK s (10 ms, 1.5-2 % of a daemon's CPU over 1.3 GB), which stand in where the
# kernel has no schedstat. A thread that ended takes its time with it (the daemons' threads
# live as long as they do).
cpu_ns() {
	local t=0 p
	# shellcheck disable=SC2046
	for p in $(printf '%s\n' "$@" | sort -u); do
		if [ -r "/proc/$p/schedstat" ]; then
			t=$((t + $(cat "/proc/$p"/task/*/schedstat 2>/dev/null |
				awk '{ s += $1 } END { printf "%.0f", s }')))
		else
			t=$((t + $(awk -v hz="$TICK" '{ printf "%.0f", ($14 + $15) * 1e9 / hz }' \
				"/proc/$p/stat" 2>/dev/null || echo 0)))
		fi
	done
	echo "$t"
}

DOPTS=${BENCH_DAEMON_OPTS:-}
[ "$PROFILE" = 1 ] && DOPTS="$DOPTS --profile"
if [ "$ONE_DAEMON" = 1 ]; then
	# shellcheck disable=SC2086
	"${PIN_D0[@]}" "$B/bin/uroced" --name uroce0 --addr "$A0" --name uroce1 --addr "$A1" --rundir "$RUNDIR" \
		$DOPTS 2>"$RUNDIR/uroce0.log" &
	D0=$!
	D1=$D0
	PIDS+=("$D0")
else
	# shellcheck disable=SC2086
	"${PIN_D0[@]}" "$B/bin/uroced" --name uroce0 --addr "$A0" --rundir "$RUNDIR" $DOPTS 2>"$RUNDIR/uroce0.log" &
	D0=$!
	# shellcheck disable=SC2086
	"${PIN_D1[@]}" "$B/bin/uroced" --name uroce1 --addr "$A1" --rundir "$RUNDIR" $DOPTS 2>"$RUNDIR/uroce1.log" &
	D1=$!
	PIDS+=("$D0" "$D1")
fi
for _ in $(seq 100); do
	[ -S "$RUNDIR/uroce0.sock" ] && [ -S "$RUNDIR/uroce1.sock" ] && break
	kill -0 "$D0" 2>/dev/null && kill -0 "$D1" 2>/dev/null || break
	sleep 0.1
done
[ -S "$RUNDIR/uroce0.sock" ] && [ -S "$RUNDIR/uroce1.sock" ] || {
	echo "bench: the daemons did not start:" >&2
	cat "$RUNDIR"/uroce*.log >&2
	exit 1
}
RUN=("$B/bin/uroce" run --rundir "$RUNDIR" --)
# What the kernel says of the daemons' CPUs.
allowed() { awk '/^Cpus_allowed_list/ { print $2 }' "/proc/$1/status"; }
if [ "$PIN" = 1 ] && [ "$ONE_DAEMON" = 1 ]; then
	PLACED="pinned: the daemon on CPU $(allowed "$D0"), the programs on CPU ${CPUS[1]}"
elif [ "$PIN" = 1 ]; then
	PLACED="pinned: uroce0's daemon on CPU $(allowed "$D0") with the clients (CPU ${CPUS[0]}), uroce1's daemon on CPU $(allowed "$D1") with the servers (CPU ${CPUS[1]})"
else
	# Two daemons of one run directory each keep to a CPU of their own
	# (uroced --cpu auto, the default), the first within a look (250 ms).
	sleep 0.5
	PLACED="programs not pinned; daemons on CPU $(allowed "$D0")$([ "$ONE_DAEMON" = 1 ] || echo " and $(allowed "$D1")") (uroced --cpu)"
fi

next_port() {
	PORT=$((PORT + 1))
	[ "$PORT" -lt "$PORT_END" ] || PORT=$((PORT_END - NPORTS))
}

# perftest NAME ARGS...: the server on uroce0, the client on uroce1; the client's output
# goes to $RUNDIR/last.out, and DCPU is the daemons' CPU time over the run, in ns.
# The client starts once the server listens on its TCP port (after a run of 1000 QPs the
# daemons may still be tearing them down when the next server starts). A pair that fails
# says so on stderr and leaves both outputs in $OUT; its figure stays empty.
FAILED=0
perftest() {
	local tool=$1 srv c0 crc=0 src=0
	shift
	next_port
	[ "$PROFILE" = 1 ] && PROF0=$(prof_snap)
	c0=$(cpu_ns "$D0" "$D1")
	timeout "$TMO" "${PIN_SRV[@]}" "${RUN[@]}" "$tool" -d uroce0 -x 0 -F -p "$PORT" "$@" >"$RUNDIR/last.srv" 2>&1 &
	srv=$!
	for _ in $(seq 200); do
		ss -Htln "( sport = :$PORT )" 2>/dev/null | grep -q . && break
		kill -0 "$srv" 2>/dev/null || break
		sleep 0.05
	done
	timeout "$TMO" "${PIN_CLI[@]}" "${RUN[@]}" "$tool" -d uroce1 -x 0 -F -p "$PORT" "$@" "$A0" >"$RUNDIR/last.out" 2>&1 || crc=$?
	wait "$srv" || src=$?
	DCPU=$(($(cpu_ns "$D0" "$D1") - c0))
	[ "$PROFILE" = 1 ] && PROF1=$(prof_snap)
	if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
		FAILED=$((FAILED + 1))
		cp "$RUNDIR/last.out" "$OUT/failed-$FAILED.client"
		cp "$RUNDIR/last.srv" "$OUT/failed-$FAILED.server"
		echo "bench: $tool $*: client exit $crc, server exit $src (outputs: $OUT/failed-$FAILED.*)" >&2
	fi
}

# The cost profile (--profile): prof_snap prints both RNICs' time_*_ns counters summed, in
# the order work idle tx rx dma icrc, and then the daemons' CPU time in ns (their main
# threads', which run the data path: /proc/PID/schedstat, exact where /proc/PID/stat counts
# ticks); record_prof FIGURE records where that CPU went over the last perftest run, each
# part in %: the system calls, copies and ICRCs; the rest of the work (the engine, rings,
# completions); passes that found nothing; and what is left (sched_yield, epoll_wait,
# sleeping's wake-ups and control requests), which is the CPU time minus the timed parts.
PROF_PARTS="work idle tx rx dma icrc"
prof_snap() {
	local d cpu=0 p
	for d in uroce0 uroce1; do
		"$B/bin/uroce" counters "$d" --all --rundir "$RUNDIR" 2>/dev/null
	done | awk -v parts="$PROF_PARTS" 'BEGIN { n = split(parts, p, " ") }
		{ for (i = 1; i <= n; i++) if ($1 == "daemon.time_" p[i] "_ns") s[i] += $2 }
		END { for (i = 1; i <= n; i++) printf "%.0f ", s[i] }'
	for p in $(printf '%s\n' "$D0" "$D1" | sort -u); do
		cpu=$((cpu + $(awk '{ print $1 }' "/proc/$p/schedstat" 2>/dev/null || echo 0)))
	done
	echo "$cpu"
}
record_prof() {
	local -a a b
	read -r -a a <<<"$PROF0"
	read -r -a b <<<"$PROF1"
	awk -v f="$1" -v rep="$rep" -v a="${a[*]}" -v b="${b[*]}" 'BEGIN {
		split(a, x, " "); split(b, y, " "); ns = y[7] - x[7]
		if (ns <= 0) exit
		for (i = 1; i <= 6; i++) d[i] = y[i] - x[i]
		# 1 work, 2 idle, 3 tx, 4 rx, 5 dma, 6 icrc
		split("tx rx dma icrc", name, " ")
		for (i = 1; i <= 4; i++) printf "prof_%s_%s,%%,%s,%.1f,\n", f, name[i], rep, 100 * d[i + 2] / ns
		printf "prof_%s_engine,%%,%s,%.1f,\n", f, rep, 100 * (d[1] - d[3] - d[4] - d[5] - d[6]) / ns
		printf "prof_%s_idle_passes,%%,%s,%.1f,\n", f, rep, 100 * d[2] / ns
		printf "prof_%s_other,%%,%s,%.1f,\n", f, rep, 100 * (ns - d[1] - d[2]) / ns
	}' >>"$CSV"
}

# The numeric row of a perftest report is the line that starts with the message size.
row() { awk -v s="$1" -v c="$2" '$1==s && NF>=c {v=$c} END{print (v==""?"":v)}' "$RUNDIR/last.out"; }

# qperf_run TEST OPTIONS...: qperf over loopback to A0; output in $RUNDIR/qperf.out, TCPU
# the CPU time of both qperf processes over the run, in ns: the client's from its rusage
# (bash's `times` in the subshell that waited for it: 1 ms), the server's test child's from
# the server's cutime + cstime once it has reaped the child (ticks).
QPORT=
srv_ticks() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
qperf_run() {
	local test=$1 srv cli c0
	shift
	next_port
	QPORT=$PORT
	qperf --listen_port "$QPORT" >/dev/null 2>&1 &
	srv=$!
	sleep 0.3
	rm -f "$RUNDIR/qperf.times"
	(
		qperf -lp "$QPORT" "$@" "$A0" "$test" >"$RUNDIR/qperf.out" 2>&1
		times >"$RUNDIR/qperf.times"
	) &
	cli=$!
	# The watchdog's own sleep goes with it: a sleep left behind would hold the
	# test lock's descriptor (bench_smoke) for up to $TMO seconds.
	(
		trap 'kill "$s" 2>/dev/null; exit 0' TERM
		sleep "$TMO" &
		s=$!
		wait "$s" && pkill -P "$cli" qperf 2>/dev/null
	) &
	local watchdog=$!
	c0=$(srv_ticks "$srv")
	wait "$cli" || true
	kill "$watchdog" 2>/dev/null || true
	# The server forks a child per test and reaps it when it ends.
	for _ in $(seq 40); do
		pgrep -P "$srv" >/dev/null || break
		sleep 0.05
	done
	TCPU=$((($(srv_ticks "$srv") - c0) * 1000000000 / TICK))
	# times: the shell's own user and system time, then its children's ("0m1.234s 0m0.567s").
	TCPU=$((TCPU + $(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/)
		t += a[1] * 60 + a[2] } printf "%.0f", t * 1e9 }' "$RUNDIR/qperf.times" 2>/dev/null || echo 0)))
	kill "$srv" 2>/dev/null || true
	wait "$srv" 2>/dev/null || true
}
# qperf prints "bw = 2.86 GB/sec" (or MB/sec) and "latency = 14.5 us" (or ms).
q_bw() { awk '/bw *=/ {v=$3; u=$4; if (u ~ /^GB/) v*=1000; else if (u ~ /^KB/) v/=1000; print v}' "$RUNDIR/qperf.out"; }
q_lat() { awk '/latency *=/ {v=$3; u=$4; if (u == "ms") v*=1000; else if (u == "ns") v/=1000; print v}' "$RUNDIR/qperf.out"; }

# cpu_per_gb NS BYTES: CPU-seconds per GB (1e9 bytes).
cpu_per_gb() { awk -v t="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", t / b }'; }

record() { echo "$1,$2,$3,${4:-},${5:-}" >>"$CSV"; }
# rep_ratio A B: A / B, two figures of this repetition (many QPs' aggregate over one QP's, a
# latency's p99 over its typical value).
rep_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a+0 > 0 && b+0 > 0) printf "%.3f", a/b }'; }
# record_lat FIGURE: the last 2 B latency run's typical value (beside TCP's), its p99 and their
# quotient.
record_lat() {
	local typ p99
	typ=$(row 2 5)
	p99=$(row 2 8)
	record "$1" us "$rep" "$typ" "$tcp_lat"
	record "${1}_p99" us "$rep" "$p99" ""
	record "${1}_p99_vs_typical" x "$rep" "$(rep_ratio "$p99" "$typ")" ""
}
# record_q QPS: the last 64 KiB ib_write_bw run of QPS QPs (beside TCP's) and its quotient over
# this repetition's one-QP run.
record_q() {
	local bw
	bw=$(row 65536 4)
	record "write_bw_q$1" MB/s "$rep" "$bw" "$tcp_bw"
	record "write_bw_q${1}_vs_q1" x "$rep" "$(rep_ratio "$bw" "$q1_bw")" "$q1_bw"
}

# The daemons' memory during the many-QP run, split as /proc/PID/status splits it: RssAnon is
# the daemon's own (QP state, packet buffers), RssShmem the pages of the applications' queue
# rings (SQ, RQ, CQ: memory the shim creates in the application, shared with the daemon)
# and of their registered memory it maps (at most --map-budget per RNIC), that the daemon
# has touched. VmHWM counts both.
RSS_SAMPLER=
rss_peak_start() {
	(
		a0=0 s0=0 a1=0 s1=0
		trap 'echo "$a0 $s0 $a1 $s1" >"$RUNDIR/rss.peak"; exit 0' TERM
		while :; do
			read -r a s < <(awk '/RssAnon/ {a=$2} /RssShmem/ {s=$2} END {print a+0, s+0}' "/proc/$D0/status")
			[ "$a" -gt "$a0" ] && a0=$a
			[ "$s" -gt "$s0" ] && s0=$s
			read -r a s < <(awk '/RssAnon/ {a=$2} /RssShmem/ {s=$2} END {print a+0, s+0}' "/proc/$D1/status")
			[ "$a" -gt "$a1" ] && a1=$a
			[ "$s" -gt "$s1" ] && s1=$s
			sleep 0.05
		done
	) &
	RSS_SAMPLER=$!
}
rss_peak_stop() { # REP
	local a0 s0 a1 s1
	kill -TERM "$RSS_SAMPLER" 2>/dev/null || true
	wait "$RSS_SAMPLER" 2>/dev/null || true
	read -r a0 s0 a1 s1 <"$RUNDIR/rss.peak"
	record "q${QPS_MANY}_private_uroce0" kB "$1" "$a0" ""
	record "q${QPS_MANY}_shared_uroce0" kB "$1" "$s0" ""
	record "q${QPS_MANY}_private_uroce1" kB "$1" "$a1" ""
	record "q${QPS_MANY}_shared_uroce1" kB "$1" "$s1" ""
}

# The machine, as the table states it: cores and CPU model (where /proc/cpuinfo names one).
CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
MACHINE="$(nproc) cores${CPU_MODEL:+ ($CPU_MODEL)}, kernel $(uname -r)"
echo "bench: $MODE mode, $REPS repetition(s); $MACHINE; results in $OUT" >&2
for rep in $(seq "$REPS"); do
	# TCP first: the baselines of this repetition.
	qperf_run tcp_bw -t "$TCP_SECS"
	tcp_bw=$(q_bw)
	record tcp_bw MB/s "$rep" "" "$tcp_bw"
	record tcp_cpu_per_gb s/GB "$rep" "" "$(cpu_per_gb "$TCPU" "$(awk -v b="$tcp_bw" -v s="$TCP_SECS" 'BEGIN { printf "%.0f", b * 1e6 * s }')")"
	qperf_run tcp_lat -t "$TCP_SECS"
	tcp_lat=$(q_lat)

	for t in write read send; do
		perftest "ib_${t}_bw" -s 65536 -n "$ITERS_BW" -N
		bw=$(row 65536 4)
		[ "$t" = write ] && q1_bw=$bw
		record "${t}_bw_64k" MB/s "$rep" "$bw" "$tcp_bw"
		record "${t}_cpu_per_gb" s/GB "$rep" "$(cpu_per_gb "$DCPU" $((ITERS_BW * 65536)))" ""
		[ "$PROFILE" = 1 ] && record_prof "${t}_64k"
	done
	perftest ib_send_bw -s 64 -n "$ITERS_RATE" -N
	record msg_rate_64b Mmsg/s "$rep" "$(row 64 5)" ""
	[ "$PROFILE" = 1 ] && record_prof send_64b
	for t in send write; do
		perftest "ib_${t}_lat" -s 2 -n "$ITERS_LAT"
		record_lat "${t}_lat_2b"
	done
	perftest ib_send_lat -s 2 -n "$ITERS_LAT" -e
	record_lat send_lat_2b_events
	# -q 16 moves the bytes of the one-QP run (-n counts each QP's messages).
	q16_iters=$((ITERS_BW / 16))
	[ "$q16_iters" -ge 5 ] || q16_iters=5
	perftest ib_write_bw -s 65536 -n "$q16_iters" -q 16 -N
	record_q 16
	rss_peak_start
	perftest ib_write_bw -s 65536 -n "$ITERS_Q" -q "$QPS_MANY" -N
	record_q "$QPS_MANY"
	rss_peak_stop "$rep"
done
hwm() { awk '/VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo ""; }
record vmhwm_uroce0 kB 1 "$(hwm "$D0")" ""
record vmhwm_uroce1 kB 1 "$(hwm "$D1")" ""

# The sweep: each size moves about SWEEP_BYTES (at least 10 messages).
SWEEP_CSV=$OUT/sweep.csv
echo "bytes,uroce_write_mbs,tcp_mbs" >"$SWEEP_CSV"
for s in $SWEEP; do
	n=$((SWEEP_BYTES / s))
	[ "$n" -ge 10 ] || n=10
	[ "$n" -le "$ITERS_RATE" ] || n=$ITERS_RATE
	perftest ib_write_bw -s "$s" -n "$n" -N
	u=$(row "$s" 4)
	qperf_run tcp_bw -t 1 -m "$s"
	echo "$s,$u,$(q_bw)" >>"$SWEEP_CSV"
done

# ---------------------------------------------------------------- report

# summary FIGURE COL: "median min max" of column COL (4 uroce, 5 tcp) over the repetitions.
summary() {
	awk -F, -v f="$1" -v c="$2" '$1 == f && $c != "" { v[n++] = $c }
		END {
			if (!n) { print "n/a n/a n/a"; exit }
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			m = n % 2 ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2
			printf "%g %g %g\n", m, v[0], v[n - 1]
		}' "$CSV"
}
fmt() { # median min max -> "median (min-max)" or just the median for one repetition
	if [ "$1" = n/a ]; then echo n/a; elif [ "$REPS" -eq 1 ]; then echo "$1"; else echo "$1 ($2-$3)"; fi
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a+0 > 0 && b+0 > 0) printf "%.2fx", a/b; else print "n/a" }'; }
line() { # LABEL FIGURE [TCP_FIGURE]: uroce's column of FIGURE beside TCP's of TCP_FIGURE
	local u t
	read -r um umin umax <<<"$(summary "$2" 4)"
	if [ -n "${3:-}" ]; then
		read -r tm tmin tmax <<<"$(summary "$3" 5)"
	else
		tm=n/a tmin=n/a tmax=n/a
	fi
	u=$(fmt "$um" "$umin" "$umax")
	t=$(fmt "$tm" "$tmin" "$tmax")
	printf '%-36s %22s %22s %7s\n' "$1" "$u" "$t" "$(ratio "$um" "$tm")"
}
# a ratio of two uroce figures of each repetition: median (min-max) in the ratio column
ratio_line() {
	local u
	read -r um umin umax <<<"$(summary "$2" 4)"
	if [ "$um" = n/a ]; then
		u=n/a
	elif [ "$REPS" -eq 1 ]; then
		u=$(printf '%.2fx' "$um")
	else
		u=$(printf '%.2fx (%.2f-%.2f)' "$um" "$umin" "$umax")
	fi
	printf '%-36s %22s %22s %7s\n' "$1" "" "" "$u"
}

echo
DAEMONS="two daemons"
[ "$ONE_DAEMON" = 1 ] && DAEMONS="one daemon hosting both RNICs"
# The ICRC mode the daemons chose (exact needs CAP_NET_RAW: it receives on a raw socket too).
ICRC=$(sed -n 's/.*ICRC check: \([a-z]*\).*/\1/p' "$RUNDIR/uroce0.log" | head -n 1)
CRC=$(sed -n 's/.*CRC-32 (ICRC) by //p' "$RUNDIR/uroce0.log" | head -n 1)
# How the daemons reach registered memory (docs/abi.md, "Registered memory the daemon maps").
MRS="MRs mapped by the daemons up to --map-budget"
[ "${UROCE_MAP_MR:-}" = 0 ] && MRS="MRs reached with process_vm_* (UROCE_MAP_MR=0)"
# Two daemons swap CPUs when each finds its own programs polling beside it (place.c).
if [ "$PIN" != 1 ] && [ "$ONE_DAEMON" != 1 ]; then
	SWAPS=$(cat "$RUNDIR"/uroce0.log "$RUNDIR"/uroce1.log | grep -c "swapped with another daemon" || true)
	PLACED="$PLACED, swapped $SWAPS time(s) during the run"
fi
echo "uroce benchmark ($MODE, $REPS repetition(s), median (min-max)); $MACHINE; $DAEMONS, ICRC check ${ICRC:-unknown}, CRC-32 by ${CRC:-unknown}; $MRS; $PLACED"
printf '%-36s %22s %22s %7s\n' "figure (uroce0 <-> uroce1)" "uroce" "tcp (qperf)" "ratio"
line "ib_write_bw 64 KiB [MB/s]" write_bw_64k write_bw_64k
line "ib_read_bw 64 KiB [MB/s]" read_bw_64k read_bw_64k
line "ib_send_bw 64 KiB [MB/s]" send_bw_64k send_bw_64k
line "write: daemon CPU-s per GB" write_cpu_per_gb tcp_cpu_per_gb
line "read: daemon CPU-s per GB" read_cpu_per_gb tcp_cpu_per_gb
line "send: daemon CPU-s per GB" send_cpu_per_gb tcp_cpu_per_gb
line "ib_send_bw 64 B [M msg/s]" msg_rate_64b
line "ib_send_lat 2 B typical [us]" send_lat_2b send_lat_2b
line "ib_send_lat 2 B p99 [us]" send_lat_2b_p99
line "ib_write_lat 2 B typical [us]" write_lat_2b write_lat_2b
line "ib_write_lat 2 B p99 [us]" write_lat_2b_p99
line "ib_send_lat -e 2 B typical [us]" send_lat_2b_events send_lat_2b_events
line "ib_send_lat -e 2 B p99 [us]" send_lat_2b_events_p99
ratio_line "ib_send_lat 2 B p99 / typical" send_lat_2b_p99_vs_typical
ratio_line "ib_write_lat 2 B p99 / typical" write_lat_2b_p99_vs_typical
ratio_line "ib_send_lat -e 2 B p99 / typical" send_lat_2b_events_p99_vs_typical
line "ib_write_bw -q 16 64 KiB [MB/s]" write_bw_q16 write_bw_q16
line "ib_write_bw -q $QPS_MANY 64 KiB [MB/s]" "write_bw_q$QPS_MANY" "write_bw_q$QPS_MANY"
ratio_line "ib_write_bw -q 16 / -q 1" write_bw_q16_vs_q1
ratio_line "ib_write_bw -q $QPS_MANY / -q 1" "write_bw_q${QPS_MANY}_vs_q1"
line "uroce0 peak memory (VmHWM) [kB]" vmhwm_uroce0
line "uroce1 peak memory (VmHWM) [kB]" vmhwm_uroce1
line "-q $QPS_MANY: uroce0 own memory (RssAnon) [kB]" "q${QPS_MANY}_private_uroce0"
line "-q $QPS_MANY: uroce1 own memory (RssAnon) [kB]" "q${QPS_MANY}_private_uroce1"
line "-q $QPS_MANY: uroce0 rings + mapped MRs (RssShmem) [kB]" "q${QPS_MANY}_shared_uroce0"
line "-q $QPS_MANY: uroce1 rings + mapped MRs (RssShmem) [kB]" "q${QPS_MANY}_shared_uroce1"
echo "(ratio = uroce / tcp: above 1 is better for bandwidth, below 1 for latency and CPU cost)"
if [ "$PROFILE" = 1 ]; then
	echo
	echo "where the daemons' CPU went (uroced --profile), % of their CPU time over each run:"
	printf '%-36s %9s %9s %9s %9s\n' "part" "write 64K" "read 64K" "send 64K" "send 64B"
	for part in tx:"sendmmsg" rx:"recvmmsg" dma:"copies to/from registered memory" icrc:"ICRC (compute, check)" \
		engine:"rest of the work (engine, rings)" idle_passes:"passes that found nothing" \
		other:"the rest (yield, epoll, wake-ups)"; do
		printf '%-36s' "${part#*:}"
		for f in write_64k read_64k send_64k send_64b; do
			read -r m _ _ <<<"$(summary "prof_${f}_${part%%:*}" 4)"
			printf ' %9s' "$m"
		done
		echo
	done
	echo "(the timed parts are wall time inside them; a daemon that shares its CPU may be"
	echo " preempted inside one, so \"the rest\" can come out negative; a payload sent from"
	echo " mapped memory has its ICRC folded in as it is copied, counted under copies)"
fi
echo
echo "sweep (ib_write_bw vs qperf tcp_bw, MB/s): $SWEEP_CSV"
column -t -s, "$SWEEP_CSV" 2>/dev/null || cat "$SWEEP_CSV"

PNG=$OUT/sweep.png
if command -v gnuplot >/dev/null; then
	gnuplot <<-EOF 2>"$OUT/gnuplot.err" && echo "plot: $PNG" || echo "plot: gnuplot failed ($OUT/gnuplot.err)"
		set terminal pngcairo size 800,500 noenhanced
		set output "$PNG"
		set format x "%.0b %B"
		set datafile separator ","
		set logscale x 2
		set key top left
		set xlabel "message size [bytes]"
		set ylabel "MB/s"
		set title "uroce ib_write_bw vs TCP (qperf tcp_bw), $MACHINE"
		plot "$SWEEP_CSV" using 1:2 skip 1 with linespoints title "uroce RC WRITE", \
		     "$SWEEP_CSV" using 1:3 skip 1 with linespoints title "TCP"
	EOF
elif python3 -c 'import matplotlib' 2>/dev/null; then
	python3 - "$SWEEP_CSV" "$PNG" "$MACHINE" <<-'EOF' && echo "plot: $PNG"
		import csv, sys
		import matplotlib
		matplotlib.use("Agg")
		import matplotlib.pyplot as plt
		rows = [r for r in csv.DictReader(open(sys.argv[1]))]
		x = [int(r["bytes"]) for r in rows]
		f = lambda k: [float(r[k]) if r[k] else float("nan") for r in rows]
		plt.figure(figsize=(8, 5))
		plt.semilogx(x, f("uroce_write_mbs"), "o-", base=2, label="uroce RC WRITE")
		plt.semilogx(x, f("tcp_mbs"), "s-", base=2, label="TCP")
		plt.xlabel("message size [bytes]"); plt.ylabel("MB/s"); plt.legend()
		plt.title("uroce ib_write_bw vs TCP (qperf tcp_bw), " + sys.argv[3])
		plt.savefig(sys.argv[2], dpi=100)
	EOF
else
	echo "plot: none (install gnuplot or python3-matplotlib)"
fi

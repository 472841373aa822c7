#!/bin/sh
# SPDX-License-Identifier: MIT
# The benchmark keeps working: scripts/bench.sh --smoke (tiny sizes, one
# repetition) on this test's addresses and ports must exit 0, print its
# table, and write bench.csv with a number for every uroce figure and every
# TCP baseline, and sweep.csv with a row per size; then once more with both
# RNICs in one daemon (--one-daemon), pinned (--pin) where two CPUs are
# allowed, with the cost profile (--profile): its table is printed, and each
# run's shares of the daemon's CPU add up to 100 %. No timing is judged.
. "$UROCE_TEST_LIB/common.sh"
for p in ib_write_bw ib_read_bw ib_send_bw ib_send_lat ib_write_lat qperf; do
	command -v "$p" >/dev/null || skip "$p is not installed"
done
SRC=${1:?usage: smoke.sh SOURCE_DIR}
# bench OUT LOG [OPTION...]: bench.sh --smoke on this test's addresses and
# ports, results in OUT, its output in LOG.
bench() {
	_b_out=$1 _b_log=$2
	shift 2
	BENCH_ADDR0=$TEST_NET.1 BENCH_ADDR1=$TEST_NET.2 BENCH_PORT=$TEST_PORT_BASE \
		BENCH_PORTS=$((TEST_PORT_END - TEST_PORT_BASE)) BENCH_TIMEOUT=60 \
		bash "$SRC/scripts/bench.sh" --smoke "$@" --out "$_b_out" "${UROCE_BIN%/bin}" >"$_b_log" 2>&1
}
# figures CSV: how many uroce figures of bench.csv CSV are numbers (the cost
# profile's shares, --profile, aside).
figures() { awk -F, 'NR > 1 && $1 !~ /^prof_/ && $4 ~ /^[0-9.]+$/ { n++ } END { print n + 0 }' "$1" 2>/dev/null; }
OUT=$T/out
if bench "$OUT" "$T/bench.out"; then
	pass "bench.sh --smoke exits 0"
else
	fail "bench.sh --smoke failed"
	show "$T/bench.out"
fi
grep -q "^ib_write_bw 64 KiB" "$T/bench.out" && pass "the table is printed" || fail "no table"
# The table states the machine: cores, kernel, and the CRC-32 engine the daemons logged.
if grep -q "^uroce benchmark .* cores.*, kernel $(uname -r);.*, CRC-32 by [A-Za-z]" "$T/bench.out" &&
	! grep -q "CRC-32 by unknown" "$T/bench.out"; then
	pass "the machine is stated: $(grep -o '[0-9]* cores[^;]*;' "$T/bench.out" | head -n 1) $(grep -o 'CRC-32 by [^;]*' "$T/bench.out" | head -n 1)"
else
	fail "the machine or the CRC-32 engine is not stated"
	grep "^uroce benchmark" "$T/bench.out" >&2
fi
# Every uroce figure (26 of them, the -q and p99 ratios included) is a number (CPU cost may be 0 for a run this short).
bad=$(awk -F, 'NR > 1 && $4 == "" && $5 == "" { print $1 }
	NR > 1 && $4 != "" && $4 !~ /^[0-9.]+$/ { print $1 }
	NR > 1 && $5 != "" && $5 !~ /^[0-9.]+$/ { print $1 }' "$OUT/bench.csv" 2>/dev/null | tr '\n' ' ')
n=$(figures "$OUT/bench.csv")
if [ -z "$bad" ] && [ "$n" -eq 26 ]; then
	pass "bench.csv: $n uroce figures, all numbers"
else
	fail "bench.csv: $n uroce figures; empty or not numbers: $bad"
	show "$OUT/bench.csv"
fi
# quotient_ok FIGURE NUMERATOR DENOMINATOR: bench.csv's FIGURE is the quotient of the other two
# figures of the repetition (printed with three decimals).
quotient_ok() {
	_q_r=$(awk -F, -v f="$1" '$1 == f { print $4 }' "$OUT/bench.csv")
	_q_want=$(awk -F, -v n="$2" -v d="$3" '$1 == n { a = $4 } $1 == d { b = $4 }
		END { if (a > 0 && b > 0) printf "%.3f", a / b }' "$OUT/bench.csv")
	if [ -n "$_q_r" ] && [ "$_q_r" = "$_q_want" ]; then
		pass "$1: $_q_r"
	else
		fail "$1: '$_q_r', expected '$_q_want'"
	fi
}
# The -q ratios are each repetition's aggregate over its one-QP ib_write_bw, in the table too.
for q in 16 32; do
	quotient_ok "write_bw_q${q}_vs_q1" "write_bw_q$q" write_bw_64k
	grep -q "^ib_write_bw -q $q / -q 1 .*x" "$T/bench.out" && pass "-q $q / -q 1 in the table" ||
		fail "no -q $q / -q 1 line in the table"
done
# Each latency's p99 over its typical value, likewise.
for f in send_lat_2b write_lat_2b send_lat_2b_events; do
	quotient_ok "${f}_p99_vs_typical" "${f}_p99" "$f"
done
n=$(grep -c "p99 / typical .*[0-9]x" "$T/bench.out" || true)
[ "$n" = 3 ] && pass "three p99 / typical lines in the table" || fail "$n p99 / typical lines in the table, expected 3"
for f in tcp_bw write_bw_64k send_lat_2b; do
	v=$(awk -F, -v f="$f" '$1 == f { print $5 }' "$OUT/bench.csv")
	case $v in
	[0-9]*) pass "TCP baseline of $f: $v" ;;
	*) fail "TCP baseline of $f missing ('$v')" ;;
	esac
done
rows=$(awk -F, 'NR > 1 && $2 ~ /^[0-9.]+$/ && $3 ~ /^[0-9.]+$/ { n++ } END { print n + 0 }' "$OUT/sweep.csv" 2>/dev/null)
check_rows() { [ "$rows" -eq 2 ]; }
if check_rows; then pass "sweep.csv: $rows sizes, uroce and TCP"; else fail "sweep.csv: $rows complete rows of 2"; show "$OUT/sweep.csv"; fi
# The plot, where a plotter is installed (quickstart installs gnuplot-nox).
if command -v gnuplot >/dev/null || python3 -c 'import matplotlib' 2>/dev/null; then
	if grep -q "^plot: $OUT/sweep.png" "$T/bench.out" &&
		[ "$(head -c 4 "$OUT/sweep.png" 2>/dev/null | od -An -tx1 | tr -d ' ')" = 89504e47 ]; then
		pass "sweep.png is a PNG ($(wc -c <"$OUT/sweep.png") bytes)"
	else
		fail "no sweep.png although a plotter is installed"
		grep "^plot" "$T/bench.out" >&2
	fi
else
	pass "no plotter installed: sweep.png not drawn (bench.sh says so)"
fi
# The same with both RNICs in one daemon (--one-daemon) and, where this test
# may use two CPUs, the processes pinned (--pin): it runs, and says so.
OUT1=$T/out-one
PIN=
WANT="one daemon hosting both RNICs"
if [ "$(nproc)" -ge 2 ]; then # nproc counts the CPUs of the affinity mask
	PIN=--pin
	WANT="one daemon hosting both RNICs, .*; pinned: the daemon on CPU [0-9]*, the programs on CPU [0-9]*"
fi
if bench "$OUT1" "$T/bench-one.out" --one-daemon $PIN --profile &&
	grep -q "$WANT" "$T/bench-one.out"; then
	n=$(figures "$OUT1/bench.csv")
	if [ "$n" -eq 26 ]; then pass "bench.sh --smoke --one-daemon $PIN: $n uroce figures; $(grep -o 'pinned:.*' "$T/bench-one.out")"; else fail "--one-daemon: $n uroce figures"; show "$OUT1/bench.csv"; fi
else
	fail "bench.sh --smoke --one-daemon $PIN failed"
	show "$T/bench-one.out"
fi
# --profile: seven parts for each of the four runs, numbers that add up to 100 % of
# the daemon's CPU time over the run (each printed to 0.1; the last part is what is left).
prof=$(awk -F, '$1 ~ /^prof_/ && $4 ~ /^-?[0-9.]+$/ { n++; f = $1; sub(/_[a-z]+$/, "", f)
		sub(/_idle$/, "", f); s[f] += $4 }
	END { for (f in s) { k++; if (s[f] < 99.6 || s[f] > 100.4) bad = bad " " f "=" s[f] }
		print n + 0, k + 0, bad }' "$OUT1/bench.csv")
if [ "$prof" = "28 4 " ] && grep -q "^where the daemons' CPU went" "$T/bench-one.out"; then
	pass "--profile: the table, and 4 runs of 7 parts that add up to 100 %"
else
	fail "--profile: parts, runs, sums off 100 %: '$prof'"
	show "$OUT1/bench.csv"
fi
finish

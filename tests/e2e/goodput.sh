#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Goodput under impairment: two RNICs in network namespaces joined through
# the impairment tool (tests/lib/impair_net.sh), ib_write_bw 64 KiB from
# host B to host A under each case, its goodput next to the clean figure,
# with the daemons' retransmissions. Loss, duplication and corruption
# apply to the data direction (B to A), delay and reordering to both. The
# benchmark's sibling scripts/bench_faults.sh runs it with --full; ctest
# (bench_faults_smoke) with --smoke, which checks only that every case
# completes and reports a number: nothing here judges a speed. Beside the
# packets sent again, the table says what made the sender go back: its
# adaptive timer (retry_fast), a NAK or implied NAK (retry_nak_seq,
# retry_implied), the QP's IBA timeout (retry_timeout), and how many of
# those rewinds the sender found spurious and undid (retry_spurious).
#
#   goodput.sh [--smoke | --full]     (default: --full)
E2E_NET=${UROCE_TEST_PRIV_NET:?UROCE_TEST_PRIV_NET must be set (by uroce_net_test or bench_faults.sh)}
MODE=full
case ${1:-} in
--smoke) MODE=smoke ;;
--full | "") ;;
*)
	echo "usage: goodput.sh [--smoke | --full]" >&2
	exit 2
	;;
esac
. "$(dirname "$0")/lib.sh"
need_prog ib_write_bw
need_prog ip
IMP_MTU=9000
. "$UROCE_TEST_LIB/impair_net.sh"
impair_net_up

if [ "$MODE" = smoke ]; then ITERS=30; else ITERS=2000; fi
# name | impair options
CASES=(
	"clean|"
	"loss 1% |-b loss=1"
	"loss 5% |-b loss=5"
	"loss 20% |-b loss=20"
	"dup 5% |-b dup=5"
	"corrupt 1% |-b corrupt=1"
	"reorder 25% +5 ms|-x reorder=25,reorder_delay=5"
	"delay 20+-10 ms|-x delay=20,jitter=10"
)
[ "$MODE" = smoke ] && CASES=("clean|" "loss 5% |-b loss=5" "delay 20+-10 ms|-x delay=20,jitter=10")

start_impair_rnics
SERVER_NS=$IMP_NS_A
CLIENT_NS=$IMP_NS_B


ROWS=()
CLEAN=""
WHY=(retx_pkts retry_fast retry_nak_seq retry_implied retry_timeout retry_spurious)
declare -A c0 d
seed=1
for c in "${CASES[@]}"; do
	IFS='|' read -r name spec <<<"$c"
	name=${name% }
	seed=$((seed + 1))
	# shellcheck disable=SC2086
	impair_start --seed "$seed" $spec
	# the sender's counters before the case: packets sent again, and why
	for k in "${WHY[@]}"; do c0[$k]=$(counter uroce1 "xport.$k"); done
	run_perftest "wbw.$seed" 300 run \
		ib_write_bw -d uroce0 -x 0 -F -s 65536 -n "$ITERS" -- \
		ib_write_bw -d uroce1 -x 0 -F -s 65536 -n "$ITERS" "$IMP_ADDR_A"
	impair_stop
	for k in "${WHY[@]}"; do d[$k]=$(($(counter uroce1 "xport.$k") - c0[$k])); done
	retx=${d[retx_pkts]}
	nak=$((d[retry_nak_seq] + d[retry_implied]))
	why=$(printf '%7s %6s %7s %7s' "${d[retry_fast]}" "$nak" "${d[retry_timeout]}" "${d[retry_spurious]}")
	bw=$(perftest_row "$T/wbw.$seed.client" | awk '{ print $4 }')
	if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] && [[ $bw =~ ^[0-9.]+$ ]]; then
		pass "$name: ib_write_bw -s 65536 -n $ITERS: $bw MB/s, $retx packets sent again (rewinds: timer ${d[retry_fast]}, NAK $nak, IBA timeout ${d[retry_timeout]}, undone ${d[retry_spurious]}) [${PAIR_MS} ms]"
		[ -n "$CLEAN" ] || CLEAN=$bw
		ROWS+=("$(printf '%-20s %10s %8s %10s %s %9s' "$name" "$bw" \
			"$(awk -v a="$bw" -v b="$CLEAN" 'BEGIN { printf "%.2fx", a / b }')" "$retx" "$why" "$PAIR_MS")")
	else
		fail "$name: ib_write_bw: server exit $SERVER_RC, client exit $CLIENT_RC, row '$bw'"
		show_pair "wbw.$seed"
		ROWS+=("$(printf '%-20s %10s %8s %10s %s %9s' "$name" failed - "$retx" "$why" "$PAIR_MS")")
	fi
done
stop_rnics

echo
echo "goodput, ib_write_bw 64 KiB x $ITERS between two RNICs through the impairment tool ($(nproc) cores, $(uname -r))"
printf '%-20s %10s %8s %10s %7s %6s %7s %7s %9s\n' case "MB/s" "vs clean" "resent" timer NAK "IBA t/o" undone "ms"
for r in "${ROWS[@]}"; do echo "$r"; done
finish

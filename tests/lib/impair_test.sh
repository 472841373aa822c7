#!/bin/sh
# SPDX-License-Identifier: MIT
# Self-test of the impairment tool (impair.c) on the three-namespace topology
# of impair_net.sh, with UDP probe datagrams (impair_udp.py) from host A to
# host B, port 4791 so that the tool treats them as RoCEv2: each impairment
# on its own, per direction, with the tool's own counters agreeing with what
# arrived: clean; loss 20 % (and the same seed loses the same datagrams);
# duplication 10 %; corruption 10 % (caught by the datagram's hash, since
# the UDP checksum is 0 as with RoCEv2); delay 20 ms +- 10 ms (reorders);
# reordering 25 % by 5 ms; an outage from the command line and one started
# by a signal; loss in one direction only; frames that do not match pass
# untouched. Skips (77) without root or namespaces.
. "$UROCE_TEST_LIB/common.sh"
. "$UROCE_TEST_LIB/impair_net.sh"
impair_net_up
PROBE="$TEST_PY $UROCE_TEST_LIB/impair_udp.py"
N=2000

# probe NAME PORT COUNT GAP_US IDLE_S [FROM_NS TO_NS TO_ADDR]: datagrams from A
# to B (or FROM to TO); the receiver's summary is in $T/NAME.out.
probe() {
	_p_from=${6:-$IMP_NS_A} _p_to=${7:-$IMP_NS_B} _p_addr=${8:-$IMP_ADDR_B}
	ip netns exec "$_p_to" $PROBE recv "$_p_addr" "$2" "$5" >"$T/$1.out" 2>&1 9>&- &
	_p_rx=$!
	# the receiver must be bound before the first datagram (a loaded
	# machine starts Python slowly): wait for its socket, 10 s at most
	_p_i=0
	while [ $_p_i -lt 100 ] && ! ip netns exec "$_p_to" ss -Hunl "sport = :$2" | grep -q .; do
		sleep 0.1
		_p_i=$((_p_i + 1))
	done
	ip netns exec "$_p_from" $PROBE send "$_p_addr" "$2" "$3" "$4" 9>&-
	wait "$_p_rx"
}

# val NAME KEY: a value of the receiver's summary
val() {
	tr ' ' '\n' <"$T/$1.out" | sed -n "s/^$2=//p"
}

# expect WHAT CONDITION...: pass when the shell test CONDITION holds
expect() {
	_e_what=$1
	shift
	if [ "$@" ]; then pass "$_e_what"; else fail "$_e_what ($*)"; fi
}

# case NAME "IMPAIR ARGS" PORT COUNT GAP_US IDLE_S: one run of the tool
run_case() {
	_c_name=$1 _c_args=$2
	shift 2
	# shellcheck disable=SC2086
	impair_start $_c_args
	probe "$_c_name" "$@"
	impair_stop
	echo "$_c_name: $(cat "$T/$_c_name.out")"
	echo "$_c_name: impair $(head -1 "$T/impair.stats")"
}

run_case clean "--seed 1" 4791 $N 0 1
expect "clean: all $N arrive once, in order" "$(val clean unique)" = $N -a \
	"$(val clean received)" = $N -a "$(val clean reordered)" = 0
expect "clean: the tool saw $N" "$(impair_count a-\>b in)" = $N

run_case loss "--seed 7 -x loss=20" 4791 $N 0 1
lost=$(impair_count a-\>b lost)
last=$(val loss last)
expect "loss 20 %: $lost lost (300..500), the rest arrive" "$lost" -gt 300 -a "$lost" -lt 500 -a \
	$(($(val loss unique) + lost)) = $N
run_case loss2 "--seed 7 -x loss=20" 4791 $N 0 1
expect "loss: the same seed loses the same datagrams" "$(val loss missing_hash)" = \
	"$(val loss2 missing_hash)" -a "$(impair_count a-\>b lost)" = "$lost"

run_case dup "--seed 2 -x dup=10" 4791 $N 0 1
d=$(impair_count a-\>b dup)
expect "dup 10 %: $d duplicated (130..270), each arrives twice" "$d" -gt 130 -a "$d" -lt 270 -a \
	"$(val dup dup)" = "$d" -a "$(val dup unique)" = $N

run_case corrupt "--seed 3 -x corrupt=10" 4791 $N 0 1
c=$(impair_count a-\>b corrupted)
expect "corrupt 10 %: $c corrupted (130..270), each caught" "$c" -gt 130 -a "$c" -lt 270 -a \
	"$(val corrupt corrupt)" = "$c" -a $(($(val corrupt unique) + c)) = $N

# paced (200 us apart). What the tool decided is checked exactly from its own
# counters: every datagram held, 10..30 ms each, 17..23 on average. What the
# receiver measures includes the machine: nothing may arrive before 10 ms
# (the tool really holds them) and they reorder; on top the machine adds its
# own stalls (CI runs two suites at once on two cores: tens of ms), so the
# receiver's median is only held to the right order of magnitude.
run_case delay "--seed 4 -x delay=20,jitter=10" 4791 $N 200 1
expect "delay 20 +- 10 ms: the tool held $(impair_count a-\>b held), for $(impair_count a-\>b hold_min_us)..$(impair_count a-\>b hold_max_us) us, $(impair_count a-\>b hold_avg_us) on average" \
	"$(impair_count a-\>b held)" = $N -a "$(impair_count a-\>b hold_min_us)" -ge 10000 -a \
	"$(impair_count a-\>b hold_max_us)" -le 30000 -a "$(impair_count a-\>b hold_avg_us)" -ge 17000 -a \
	"$(impair_count a-\>b hold_avg_us)" -le 23000
expect "delay 20 +- 10 ms: all arrive, none under 10 ms late, median $(val delay delay_p50_ms) ms under 100 (max $(val delay delay_max_ms)), reordered" \
	"$(val delay unique)" = $N -a \
	"$(awk -v a="$(val delay delay_min_ms)" -v m="$(val delay delay_p50_ms)" \
		'BEGIN { print (a >= 9.5 && m >= 10 && m < 100) ? 1 : 0 }')" = 1 -a \
	"$(val delay reordered)" -gt 100

run_case reorder "--seed 5 -x reorder=25,reorder_delay=5" 4791 $N 0 1
r=$(impair_count a-\>b reordered)
expect "reorder 25 % by 5 ms: $r held back (400..600), overtaken, none lost" \
	"$r" -gt 400 -a "$r" -lt 600 -a "$(val reorder unique)" = $N -a \
	"$(val reorder reordered)" -gt 100 -a \
	"$(awk -v b="$(val reorder delay_max_ms)" 'BEGIN { print (b >= 5) ? 1 : 0 }')" = 1

# an outage 3.0 .. 3.5 s after the tool started, datagrams every ~1 ms for 3.5 s from
# when the sender runs: its window holds even for a sender that two test suites at
# once started 2.5 s late (with 1.0 .. 1.5 s and 1.5 s of datagrams, one started
# 1.5 s late and saw 3 of them dropped)
run_case outage "--seed 6 -x outage=3+0.5" 4791 3500 1000 1
o=$(impair_count a-\>b outage)
expect "outage from the command line: $o dropped in one run ($(val outage longest_gap))" \
	"$o" -gt 100 -a "$(val outage longest_gap)" = "$o" -a "$(val outage missing)" = "$o"

impair_start --seed 8 --outage-len 0.5
ip netns exec "$IMP_NS_B" $PROBE recv "$IMP_ADDR_B" 4791 1 >"$T/signal.out" 2>&1 9>&- &
rx=$!
i=0
while [ $i -lt 100 ] && ! ip netns exec "$IMP_NS_B" ss -Hunl "sport = :4791" | grep -q .; do
	sleep 0.1
	i=$((i + 1))
done
ip netns exec "$IMP_NS_A" $PROBE send "$IMP_ADDR_B" 4791 1500 1000 9>&- &
tx=$!
sleep 0.5
impair_outage
wait "$tx"
wait "$rx"
impair_stop
o=$(impair_count a-\>b outage)
echo "signal: $(cat "$T/signal.out")"
expect "outage on SIGUSR1: $o dropped in one run" "$o" -gt 100 -a \
	"$(val signal longest_gap)" = "$o" -a "$(val signal missing)" = "$o"

# loss one way only: A->B loses all, B->A nothing
impair_start --seed 9 -a loss=100
probe oneway_ab 4791 200 0 1
probe oneway_ba 4791 200 0 1 "$IMP_NS_B" "$IMP_NS_A" "$IMP_ADDR_A"
impair_stop
expect "per direction: A->B lost all, B->A lost none" "$(val oneway_ab received)" = 0 -a \
	"$(val oneway_ba unique)" = 200 -a "$(impair_count a-\>b lost)" = 200 -a \
	"$(impair_count b-\>a lost)" = 0

# acks=0: datagrams whose first byte reads as an RC Acknowledge (0x11) pass
# untouched under 100 % loss, counted as spared; a SEND Middle (0x01) is lost
export IMPAIR_PROBE_LEAD=11
run_case acks "--seed 11 -x loss=100,acks=0" 4791 $N 0 1
expect "acks=0: every Acknowledge passes a 100 % loss, spared" "$(val acks unique)" = $N -a \
	"$(impair_count a-\>b spared)" = $N -a "$(impair_count a-\>b lost)" = 0
export IMPAIR_PROBE_LEAD=01
run_case noack "--seed 11 -x loss=100,acks=0" 4791 200 0 1
expect "acks=0: a SEND Middle is still lost" "$(val noack received)" = 0 -a \
	"$(impair_count a-\>b lost)" = 200 -a "$(impair_count a-\>b spared)" = 0
unset IMPAIR_PROBE_LEAD

# not RoCEv2: passes untouched
run_case other "--seed 10 -x loss=100,corrupt=100" 9999 $N 0 1
expect "frames that do not match pass untouched" "$(val other unique)" = $N -a \
	"$(val other corrupt)" = 0 -a "$(impair_count a-\>b in)" = 0
finish

#!/bin/sh
# SPDX-License-Identifier: MIT
# The data path end to end through the shim: every RC case of rc_semantics
# between two RNICs and between a device and itself (real packets to its own
# address), the counters the daemons report, garbage written straight into
# the rings (ring_abuse), the release of every object, and capture files
# that are complete and clean after SIGTERM.
. "$CTL_SRC/lib.sh"

[ -x "$UROCE_BIN/rc_semantics" ] || skip "rc_semantics not built (no libibverbs)"

# The RoCEv2 port (CTL_PORT=4791: captures decode by it) on addresses of this
# test alone.
start_daemon uroce0 "$TEST_NET.1" --pcap "$T/u0.pcap"
D0=$LAST_PID
start_daemon uroce1 "$TEST_NET.2" --pcap "$T/u1.pcap"
D1=$LAST_PID

if timeout 300 "$UROCE_BIN/uroce" run -- "$UROCE_BIN/rc_semantics" uroce0 uroce1 >"$T/rcs" 2>&1; then
	pass "rc_semantics uroce0 uroce1: $(tail -1 "$T/rcs")"
else
	cat "$T/rcs" >&2
	fail "rc_semantics uroce0 uroce1"
fi
if timeout 300 "$UROCE_BIN/uroce" run -- "$UROCE_BIN/rc_semantics" uroce1 uroce1 >"$T/rcs1" 2>&1; then
	pass "rc_semantics uroce1 uroce1 (QPs of one RNIC)"
else
	cat "$T/rcs1" >&2
	fail "rc_semantics uroce1 uroce1"
fi

for d in uroce0 uroce1; do
	tx=$(counter xport.tx_pkts $d)
	rx=$(counter daemon.rx_datagrams $d)
	frames=$(counter daemon.pcap_frames $d)
	bad=$(counter drop.bad_icrc $d)
	if [ "$tx" -gt 0 ] && [ "$rx" -gt 0 ] && [ "$bad" -eq 0 ] &&
		[ "$frames" -ge "$((tx + rx))" ]; then
		pass "$d counters: tx_pkts $tx, rx_datagrams $rx, pcap_frames $frames, bad_icrc 0"
	else
		uroce counters "$d" >&2
		fail "$d counters: tx_pkts $tx rx $rx frames $frames bad_icrc $bad"
	fi
done
if uroce counters uroce0 --qp 0xfffff0 >"$T/noqp" 2>&1; then
	fail "counters of a QP that does not exist succeeded"
else
	grep -q "has no QP" "$T/noqp" && pass "counters --qp of an unknown QP: $(cat "$T/noqp")" ||
		fail "counters --qp unknown: $(cat "$T/noqp")"
fi
if uroce counters nosuchdev >/dev/null 2>&1; then
	fail "counters of a device that does not exist succeeded"
else
	pass "counters of an unknown device fail"
fi

# Completion events with real traffic (next / solicited-only arming), and
# events handed to a waiting thread in memory instead of through the pipe.
if [ -x "$UROCE_BIN/cq_events" ]; then
	mem0=$(counter daemon.comp_events_mem uroce0)
	if timeout 120 "$UROCE_BIN/uroce" run -- "$UROCE_BIN/cq_events" uroce0 >"$T/ev" 2>&1; then
		pass "cq_events: $(tail -1 "$T/ev")"
	else
		cat "$T/ev" >&2
		fail "cq_events"
	fi
	mem=$(($(counter daemon.comp_events_mem uroce0) - mem0))
	if [ "$mem" -gt 0 ]; then
		pass "cq_events: $mem events handed to a waiting thread in memory (comp_events_mem)"
	else
		fail "cq_events: no event went through memory (comp_events_mem $mem)"
	fi
fi

# Registered memory the daemon maps (verbs-shim/mr_share.c): the layout,
# every access, a second MR, fork() and a registration after deregistration;
# the daemon's DMA went through its mapping (dma_mapped_bytes) or, with
# UROCE_MAP_MR=0, not.
if [ -x "$UROCE_BIN/mr_share" ]; then
	for how in on off; do
		if [ $how = on ]; then set --; else set -- env UROCE_MAP_MR=0; fi
		m0=$(counter daemon.dma_mapped_bytes uroce0)
		if timeout 120 "$UROCE_BIN/uroce" run -- "$@" "$UROCE_BIN/mr_share" uroce0 $how \
			>"$T/share-$how" 2>&1; then
			m1=$(counter daemon.dma_mapped_bytes uroce0)
			if [ $how = on ] && [ "$m1" -gt "$((m0 + 300000))" ] ||
				{ [ $how = off ] && [ "$m1" -eq "$m0" ]; }; then
				pass "mr_share $how: $(grep -c '^ok' "$T/share-$how") checks, dma_mapped_bytes +$((m1 - m0))"
			else
				fail "mr_share $how: dma_mapped_bytes $m0 -> $m1"
			fi
		else
			cat "$T/share-$how" >&2
			fail "mr_share $how"
		fi
	done
	# `uroce mr` says how much of an MR the daemon maps: an ibv_rc_pingpong
	# server waiting for its client holds one page-aligned 64 KiB MR. The MR
	# is listed from its registration on, and mapped a moment later, when the
	# shim has shared its pages (MAP_MR after ibv_reg_mr returned): the test
	# waits for that, up to 10 s.
	"$UROCE_BIN/uroce" run -- ibv_rc_pingpong -d uroce0 -g 0 -s 65536 \
		-p $((TEST_PORT_BASE + 1)) >"$T/pp-hold" 2>&1 &
	pp=$!
	mapped=
	for _ in $(seq 100); do
		mapped=$(uroce mr uroce0 --json 2>/dev/null | python3 -c 'import json, sys
print(" ".join(str(m["mapped"]) for m in json.load(sys.stdin) if m["comm"] == "ibv_rc_pingpong"))')
		[ "$mapped" = 65536 ] && break
		sleep 0.1
	done
	kill "$pp" 2>/dev/null
	wait "$pp" 2>/dev/null
	if [ "$mapped" = 65536 ]; then
		pass "uroce mr: the pingpong's 64 KiB MR is mapped whole (mapped $mapped)"
	else
		fail "uroce mr: the pingpong's MR mapped '$mapped', wanted 65536"
	fi
	# An RNIC that maps nothing (--map-budget 0) says so when the shim asks
	# (MAP_MR_PROBE) and the shim leaves every page private: mr_share
	# "off" holds without UROCE_MAP_MR=0, and the RNIC counted the refusals.
	start_daemon uroce2 "$TEST_NET.3" --map-budget 0
	D2=$LAST_PID
	if timeout 120 "$UROCE_BIN/uroce" run -- "$UROCE_BIN/mr_share" uroce2 off \
		>"$T/share-budget" 2>&1; then
		over=$(counter daemon.mr_maps_over_budget uroce2)
		m1=$(counter daemon.dma_mapped_bytes uroce2)
		if [ "$over" -gt 0 ] && [ "$m1" -eq 0 ]; then
			pass "mr_share with --map-budget 0: nothing shared, mr_maps_over_budget $over"
		else
			fail "mr_share with --map-budget 0: mr_maps_over_budget $over, dma_mapped_bytes $m1"
		fi
	else
		cat "$T/share-budget" >&2
		fail "mr_share with --map-budget 0"
	fi
	stop_daemon "$D2"
	for v in 12Q 2000G -1; do
		rc=0
		out=$("$UROCE_BIN/uroced" --name mapbad --addr "$TEST_NET.3" --rundir "$T/badrun" \
			--map-budget "$v" 2>&1) || rc=$?
		if [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
			printf '%s' "$out" | grep -q -- "--map-budget $v"; then
			pass "uroced --map-budget $v: exit 2, '$out'"
		else
			fail "uroced --map-budget $v: exit $rc, '$out'"
		fi
	done
fi

# Registration collapses an MR's memory into huge pages (verbs-shim/mr.c),
# not ODP MRs' and not where the program said no; UROCE_MR_HUGEPAGES=0 stops
# it. That is for memory the DMA engine reaches with process_vm_* (pages it
# maps need no huge pages): UROCE_MAP_MR=0.
if [ -x "$UROCE_BIN/mr_hugepages" ]; then
	for how in on off; do
		if [ $how = on ]; then set -- env UROCE_MAP_MR=0; else set -- env UROCE_MAP_MR=0 UROCE_MR_HUGEPAGES=0; fi
		if timeout 120 "$UROCE_BIN/uroce" run -- "$@" "$UROCE_BIN/mr_hugepages" uroce0 $how \
			>"$T/thp-$how" 2>&1; then
			pass "mr_hugepages $how: $(tail -1 "$T/thp-$how")"
		else
			cat "$T/thp-$how" >&2
			fail "mr_hugepages $how"
		fi
	done
fi

# Small sends whose payload the shim copied into the WQE at the post
# (verbs-shim/qp.c): delivered byte for byte and counted by the daemon, and
# an SGE the daemon's checks refuse still ends in IBV_WC_LOC_PROT_ERR.
if [ -x "$UROCE_BIN/preread" ]; then
	pre0=$(counter daemon.sq_preread uroce0)
	if timeout 120 "$UROCE_BIN/uroce" run -- "$UROCE_BIN/preread" uroce0 >"$T/preread" 2>&1; then
		pass "preread: $(grep -c '^ok' "$T/preread") checks, $(tail -1 "$T/preread")"
	else
		cat "$T/preread" >&2
		fail "preread"
	fi
	pre=$(($(counter daemon.sq_preread uroce0) - pre0))
	if [ "$pre" -ge 400 ]; then
		pass "sq_preread counted $pre payloads taken from the WQE (400 small sends)"
	else
		fail "sq_preread counted $pre payloads taken from the WQE, not the 400 small sends"
	fi
	# UROCE_PREREAD=0: the same checks pass, the daemon reads every payload.
	pre0=$(counter daemon.sq_preread uroce0)
	if timeout 120 "$UROCE_BIN/uroce" run -- env UROCE_PREREAD=0 "$UROCE_BIN/preread" uroce0 \
		>"$T/preread0" 2>&1; then
		pass "preread with UROCE_PREREAD=0: $(tail -1 "$T/preread0")"
	else
		cat "$T/preread0" >&2
		fail "preread with UROCE_PREREAD=0"
	fi
	pre=$(($(counter daemon.sq_preread uroce0) - pre0))
	if [ "$pre" = 0 ]; then
		pass "UROCE_PREREAD=0: no payload taken from the WQE"
	else
		fail "UROCE_PREREAD=0: $pre payloads taken from the WQE"
	fi
fi

# Send doorbells: a pass looks at the SQs that have something new, not at
# every QP (emu/daemon/dp/doorbell.c). With 256 idle QPs beside a busy pair
# the old pass made 256 looks or more per pass, thousands of passes.
if [ -x "$UROCE_BIN/sq_doorbells" ]; then
	looks0=$(counter daemon.sq_looks uroce0)
	if timeout 180 "$UROCE_BIN/uroce" run -- "$UROCE_BIN/sq_doorbells" uroce0 256 >"$T/sqdb" 2>&1; then
		pass "sq_doorbells: $(grep -c '^ok' "$T/sqdb") checks, $(tail -1 "$T/sqdb")"
	else
		cat "$T/sqdb" >&2
		fail "sq_doorbells"
	fi
	looks=$(($(counter daemon.sq_looks uroce0) - looks0))
	wrs=$(awk '/^send WRs/ { print $3 + 0 }' "$T/sqdb")
	qps=$(awk '/^send WRs/ { print $5 + 0 }' "$T/sqdb")
	# Each send WR rings once and completes once; each QP changes state a
	# few times. At least one look per round trip of the busy pair.
	if [ "${wrs:-0}" -gt 0 ] && [ "$looks" -ge 2000 ] && [ "$looks" -le $((2 * wrs + 4 * qps)) ]; then
		pass "sq_looks grew by $looks for $wrs send WRs on $qps QPs"
	else
		uroce counters uroce0 >&2
		fail "sq_looks grew by $looks for ${wrs:-?} send WRs on ${qps:-?} QPs (want 2000..$((2 * ${wrs:-0} + 4 * ${qps:-0})))"
	fi
fi

# QP async events with real traffic (COMM_EST, SQ_DRAINED).
if [ -x "$UROCE_BIN/async_events" ]; then
	if timeout 120 "$UROCE_BIN/uroce" run -- "$UROCE_BIN/async_events" uroce0 >"$T/aev" 2>&1; then
		pass "async_events: $(tail -1 "$T/aev")"
	else
		cat "$T/aev" >&2
		fail "async_events"
	fi
fi

# Garbage in the rings: errors completed, the daemon keeps serving.
if timeout 300 "$UROCE_BIN/ring_abuse" "$UROCE_RUNDIR/uroce1.sock" 20 >"$T/abuse" 2>&1; then
	pass "ring_abuse: $(tail -1 "$T/abuse")"
else
	cat "$T/abuse" >&2
	fail "ring_abuse"
fi
kill -0 "$D1" 2>/dev/null || fail "uroce1 died"
bad=$(counter daemon.bad_send_wqe uroce1)
corrupt=$(counter daemon.ring_corrupt uroce1)
[ "$bad" -gt 0 ] && [ "$corrupt" -gt 0 ] &&
	pass "uroce1 counted $bad malformed send WQEs, $corrupt corrupt ring" ||
	fail "uroce1 counters: bad_send_wqe $bad ring_corrupt $corrupt"
if timeout 300 "$UROCE_BIN/uroce" run -- "$UROCE_BIN/rc_semantics" uroce0 uroce1 write read \
	>"$T/rcs2" 2>&1; then
	pass "rc_semantics after the abuse: $(tail -1 "$T/rcs2")"
else
	cat "$T/rcs2" >&2
	fail "rc_semantics after the abuse"
fi

# The programs exited: their contexts, QPs and timers are gone.
for d in uroce0 uroce1; do
	c=$(counts $d)
	[ "$c" = "0 0 0 0 0 0 0 0 0 0 0 0" ] && pass "$d: every object released" ||
		fail "$d still holds: $c"
done

stop_daemon "$D0"
stop_daemon "$D1"
for f in u0 u1; do
	uroce decode "$T/$f.pcap" >"$T/$f.dec" 2>&1
	rc=$?
	sum=$(tail -1 "$T/$f.dec")
	n=$(echo "$sum" | sed -n 's/^roce packets: \([0-9]*\),.*/\1/p')
	case $sum in
	*"icrc bad: 0, malformed: 0"*)
		if [ "$rc" -eq 0 ] && [ "${n:-0}" -gt 0 ]; then
			pass "$f.pcap after SIGTERM: $sum"
		else
			fail "$f.pcap: decode exit $rc: $sum"
		fi
		;;
	*) fail "$f.pcap: $sum" ;;
	esac
	if command -v tshark >/dev/null 2>&1; then
		m=$(tshark -r "$T/$f.pcap" -Y infiniband 2>/dev/null | wc -l)
		[ "$m" -eq "${n:-0}" ] && pass "tshark reads $m RoCEv2 packets in $f.pcap" ||
			fail "tshark decoded $m RoCEv2 packets in $f.pcap, uroce decode $n"
	fi
done
finish

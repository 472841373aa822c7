#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Seeded fault injection (docs/daemon.md, "Fault injection") against real programs
# between two uroce RNICs: tests/verbs/rc_semantics (which checks every byte it moves)
# and rdma-core's ibv_rc_pingpong -c. Each scenario starts a fresh pair of daemons
# with its rules and checks the protocol's answer in the counters, the per-rule
# counts and the captures:
#   drop      a dropped WRITE packet is retransmitted (retx_pkts, a sequence NAK)
#             and still in the sender's capture; the data check passes
#   dup       duplicated atomics and WRITE packets are acknowledged again and not
#             executed again (atomic_replayed, dup_acked/dup_silent; the atomics' values check)
#   corrupt   a corrupted SEND is dropped as bad ICRC by the receiver (drop.bad_icrc,
#             `uroce decode` shows it bad) and recovered
#   forged    forged RNR NAK, sequence NAK and ghost ACK make the requester wait and
#             retry (rnr_nak_rcvd, retry_rnr, retry_nak_seq; resp_bad, retry_fast/retry_timeout)
#   hold      delayed, reordered and received-twice packets: go-back-N, data intact
#   retry     a rule dropping everything for a QP (added at run time for the QPN
#             `uroce qp` shows) ends with IBV_WC_RETRY_EXC_ERR after retry_cnt (7)
#             retries: 8 transmissions faulted
#   seed      the same seed, rules and program give the same fault decisions (the
#             --fault-log files agree); another seed gives others
#   cm        the CM's own MADs on QP1 are faulted like any packet (a REQ taken
#             twice is answered twice, the second answer dropped on its way out;
#             tests/daemon/cm_probe plays the peer)
#   notes     a pcapng capture carries a comment on each faulted frame (tshark's
#             frame.comment), the dropped one included
#   bad       malformed rules are refused naming the bad part; `uroce fault` on a
#             device that does not exist exits 2; add/list/del/clear at run time
#
#   fault.sh PATH_TO_rc_semantics [PATH_TO_cm_probe]
. "$(dirname "$0")/lib.sh"
PROG=${1:?usage: fault.sh PATH_TO_rc_semantics [PATH_TO_cm_probe]}
CM_PROBE=${2:-}
[ -x "$PROG" ] || skip "$PROG was not built (no system libibverbs)"
need_prog ibv_rc_pingpong
U=$UROCE_BIN/uroce

# rule_count DEV ID WHAT: from rule ID's row of `uroce fault DEV list`, how
# many packets it matched so far (WHAT matched) or faults it injected (faults).
rule_count() {
	local col=3
	[ "$3" = matched ] && col=2
	"$U" fault "$1" list | awk -v id="$2" -v c="$col" '$1 == id { v = $c } END { print v + 0 }'
}

# begin LABEL: fresh RNICs, uroce0 with the options in OPTS0, uroce1 with OPTS1.
begin() {
	LABEL=$1
	echo "--- $LABEL"
	start_rnic uroce0 "$ADDR0" "${OPTS0[@]}"
	start_rnic uroce1 "$ADDR1" "${OPTS1[@]}"
}

# end: stop them; their captures and logs are kept as LABEL.uroceN.{pcap,log}.
end() {
	stop_rnics
	for n in uroce0 uroce1; do
		[ ! -e "$T/$n.pcap" ] || mv "$T/$n.pcap" "$T/$LABEL.$n.pcap"
		mv "$T/$n.log" "$T/$LABEL.$n.log"
	done
	OPTS0=()
	OPTS1=()
}

# rcs CASE...: rc_semantics A=uroce0 B=uroce1; checks that each case passed.
rcs() {
	local rc=0 c
	via_cmd run
	"${VIA[@]}" timeout -k 5 120 "$PROG" uroce0 uroce1 "$@" >"$T/$LABEL.out" 2>&1 || rc=$?
	for c in "$@"; do
		if grep -Eq "^$c +ok\$" "$T/$LABEL.out"; then
			pass "$LABEL: rc_semantics $c ok (data checked)"
		else
			fail "$LABEL: rc_semantics $c (exit $rc)"
			show "$T/$LABEL.out"
		fi
	done
}

# at_least WHAT VALUE MIN
at_least() {
	if [ "$2" -ge "$3" ]; then pass "$1 = $2 (>= $3)"; else fail "$1 = $2, expected >= $3"; fi
}

# exactly WHAT VALUE WANT
exactly() {
	if [ "$2" -eq "$3" ]; then pass "$1 = $2"; else fail "$1 = $2, expected $3"; fi
}

# psn_count CAP PSN_HEX OPWORD: packets in CAP (decoded) with that PSN whose
# opcode words contain OPWORD.
psn_count() {
	"$U" decode "$1" | awk -v p="PSN=$(($2))" -v w="$3" \
		'index($0, w) && index($0, " " p " ") { n++ } END { print n + 0 }'
}

OPTS0=()
OPTS1=()

# ---------------------------------------------------------------- drop
OPTS0=(--fault "tx:drop:opcode=write,nth=3,count=1" --fault-log "$T/drop.flog")
begin drop
rcs write
exactly "drop: rule 1 faults" "$(rule_count uroce0 1 faults)" 1
exactly "drop: uroce0 daemon.fault_dropped" "$(counter uroce0 daemon.fault_dropped)" 1
at_least "drop: uroce0 xport.retx_pkts" "$(counter uroce0 xport.retx_pkts)" 1
at_least "drop: uroce1 xport.seq_nak_sent" "$(counter uroce1 xport.seq_nak_sent)" 1
at_least "drop: uroce0 retries (sequence NAK or timeout)" \
	$(($(counter uroce0 xport.retry_nak_seq) + $(counter uroce0 xport.retry_timeout))) 1
end
psn=$(sed -n 's/.* psn=\(0x[0-9a-f]*\)$/\1/p' "$T/drop.flog" | head -n 1)
if grep -q "rule=1 match=3 fault=1 pkt=[0-9]* tx drop RC_RDMA_WRITE_MIDDLE qpn=0x[0-9a-f]* psn=" \
	"$T/drop.flog"; then
	pass "drop: the decision log names the 3rd WRITE packet ($(cat "$T/drop.flog"))"
else
	fail "drop: decision log: $(cat "$T/drop.flog")"
fi
# uroce0's capture holds the dropped packet and its retransmission (more if a timer
# fired too), uroce1's every copy but the dropped one.
sent=$(psn_count "$T/drop.uroce0.pcap" "$psn" "RDMA Write Middle")
got=$(psn_count "$T/drop.uroce1.pcap" "$psn" "RDMA Write Middle")
at_least "drop: copies of PSN $psn in uroce0's capture (dropped + retransmitted)" "$sent" 2
exactly "drop: copies of PSN $psn in uroce1's capture (all but the dropped one)" "$got" $((sent - 1))

# ---------------------------------------------------------------- dup
OPTS0=(--fault "tx:dup:opcode=atomic" --fault "tx:dup:opcode=write,every=10")
begin dup
rcs atomics write
at_least "dup: rule 1 (atomics) faults" "$(rule_count uroce0 1 faults)" 2
at_least "dup: rule 2 (writes) faults" "$(rule_count uroce0 2 faults)" 9
at_least "dup: uroce1 xport.dup_req" "$(counter uroce1 xport.dup_req)" 11
at_least "dup: uroce1 xport.atomic_replayed" "$(counter uroce1 xport.atomic_replayed)" 2
# A duplicate is acknowledged again when it asks for an ACK (AckReq) and
# answered by silence otherwise; either way it is not executed again.
at_least "dup: uroce1 xport.dup_acked + dup_silent" \
	$(($(counter uroce1 xport.dup_acked) + $(counter uroce1 xport.dup_silent))) 9
executed=$(counter uroce1 xport.atomic_executed)
end
# Each distinct atomic request (PSN) executes once, however many copies
# arrive: the rule doubles every atomic uroce0 sends, retransmissions too
# (a loaded machine can delay an ACK past the timeout), so the count of
# faults is not the count of atomics; uroce0's capture has each PSN.
atomics=$("$U" decode "$T/dup.uroce0.pcap" |
	awk -v me="$ADDR0:" 'index($2, me) == 1 && / RC (Compare Swap|Fetch Add) / {
		for (i = 1; i <= NF; i++) if ($i ~ /^PSN=/) psn[$i] = 1 }
		END { n = 0; for (p in psn) n++; print n }')
at_least "dup: distinct atomic requests in uroce0's capture" "$atomics" 2
exactly "dup: atomics executed once each (uroce1 executed = distinct atomic PSNs)" \
	"$executed" "$atomics"

# ---------------------------------------------------------------- corrupt
OPTS0=(--fault "tx:corrupt:opcode=send,count=1")
begin corrupt
rcs send_imm
exactly "corrupt: uroce0 daemon.fault_corrupted" "$(counter uroce0 daemon.fault_corrupted)" 1
exactly "corrupt: uroce1 drop.bad_icrc" "$(counter uroce1 drop.bad_icrc)" 1
end
for n in uroce0 uroce1; do
	decode_summary "$T/corrupt.$n.pcap"
	exactly "corrupt: $n's capture shows the bad ICRC" "$DEC_BAD" 1
done

# A corrupted packet that ends a GSO datagram shorter than the packet before
# it (an 8 KiB WRITE's Last behind its First) keeps its bad ICRC: the sender
# corrects the ICRC for the segment's IP ID by the difference, never by a
# new CRC over the corrupted bytes.
if command -v ib_write_bw >/dev/null; then
	OPTS1=(--fault "tx:corrupt:opcode=rc_rdma_write_last,count=1")
	begin corrupt-tail
	# (-t 1: one WRITE at a time, so each Last leaves behind its First)
	run_perftest "$LABEL" 120 run \
		ib_write_bw -d uroce0 -x 0 -F -s 8192 -n 50 -t 1 -- \
		ib_write_bw -d uroce1 -x 0 -F -s 8192 -n 50 -t 1 "$ADDR0"
	check "corrupt-tail: ib_write_bw 8 KiB: exit $SERVER_RC/$CLIENT_RC" \
		[ "$SERVER_RC$CLIENT_RC" = 00 ]
	exactly "corrupt-tail: uroce1 daemon.fault_corrupted" "$(counter uroce1 daemon.fault_corrupted)" 1
	at_least "corrupt-tail: uroce1 daemon.tx_gso_tails" "$(counter uroce1 daemon.tx_gso_tails)" 50
	exactly "corrupt-tail: uroce0 drop.bad_icrc" "$(counter uroce0 drop.bad_icrc)" 1
	end
fi

# ---------------------------------------------------------------- forged replies
OPTS0=(--fault "rx:rnr-nak=1:opcode=ack,count=2")
begin forged-rnr
rcs write
exactly "forged-rnr: rule 1 faults" "$(rule_count uroce0 1 faults)" 2
exactly "forged-rnr: uroce0 daemon.fault_forged" "$(counter uroce0 daemon.fault_forged)" 2
exactly "forged-rnr: uroce0 xport.rnr_nak_rcvd" "$(counter uroce0 xport.rnr_nak_rcvd)" 2
at_least "forged-rnr: uroce0 xport.retry_rnr" "$(counter uroce0 xport.retry_rnr)" 1
end
OPTS1=(--fault "tx:seq-nak:opcode=ack,count=1")
begin forged-nak
rcs write
exactly "forged-nak: uroce1 daemon.fault_forged" "$(counter uroce1 daemon.fault_forged)" 1
exactly "forged-nak: uroce0 xport.seq_nak_rcvd" "$(counter uroce0 xport.seq_nak_rcvd)" 1
at_least "forged-nak: uroce0 xport.retry_nak_seq" "$(counter uroce0 xport.retry_nak_seq)" 1
end
# The first ACK of the message becomes a ghost (an ACK for a PSN never sent):
# dropped as resp_bad, it completes nothing. What completes the message is a
# later real ACK (the requester asks for one every half window) or, when the
# ghost replaced the last one, a resend after a timer (the adaptive one,
# retry_fast, or the IBA timeout, retry_timeout).
OPTS1=(--fault "tx:ghost-ack:opcode=ack,nth=1")
begin forged-ghost
rcs send_imm
exactly "forged-ghost: uroce1 daemon.fault_forged" "$(counter uroce1 daemon.fault_forged)" 1
exactly "forged-ghost: uroce0 drop.resp_bad (the ghost ACK)" "$(counter uroce0 drop.resp_bad)" 1
at_least "forged-ghost: uroce0 real ACKs received after the ghost + timer resends" \
	$(($(counter uroce0 xport.ack_rcvd) + $(counter uroce0 xport.retry_fast) + \
		$(counter uroce0 xport.retry_timeout))) 1
exactly "forged-ghost: uroce0 xport.send_cqe (the message completed once)" \
	"$(counter uroce0 xport.send_cqe)" 1
end

# ---------------------------------------------------------------- delay, reorder, rx dup
OPTS0=(--fault "tx:delay=20:opcode=write,nth=10" --fault "tx:reorder=2:opcode=write,nth=40"
	--fault "rx:reorder:opcode=read-resp,nth=5")
OPTS1=(--fault "rx:dup:opcode=write,every=25")
begin hold
rcs write read
exactly "hold: uroce0 daemon.fault_delayed" "$(counter uroce0 daemon.fault_delayed)" 1
exactly "hold: uroce0 daemon.fault_reordered (a WRITE sent, a READ response received)" \
	"$(counter uroce0 daemon.fault_reordered)" 2
at_least "hold: uroce1 daemon.fault_duplicated" "$(counter uroce1 daemon.fault_duplicated)" 3
at_least "hold: uroce0 xport.retx_pkts" "$(counter uroce0 xport.retx_pkts)" 1
at_least "hold: uroce1 xport.dup_req" "$(counter uroce1 xport.dup_req)" 3
end

# ---------------------------------------------------------------- retry exceeded
begin retry
next_tcp_port
via_cmd run
# -s 64: one packet per SEND, so that the rule faults each transmission once.
bg_via retry.server 60 ibv_rc_pingpong -d uroce0 -g 0 -p "$TCP_PORT" -n 5 -s 64
spid=$BG_PID
await_listen "$TCP_PORT" "$spid" || fail "retry: server did not listen"
qpn=$("$U" qp uroce0 --json | "$TEST_PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["lqpn"])')
check "retry: uroce fault adds the drop-everything rule for the server's QP $qpn" \
	"$U" fault uroce1 add "tx:drop:qpn=$qpn"
rc=0
"${VIA[@]}" timeout -k 5 60 ibv_rc_pingpong -d uroce1 -g 0 -p "$TCP_PORT" -n 5 -s 64 "$ADDR0" \
	>"$T/retry.client" 2>&1 || rc=$?
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
if [ "$rc" -ne 0 ] && grep -q "transport retry counter exceeded" "$T/retry.client"; then
	pass "retry: the client fails with IBV_WC_RETRY_EXC_ERR ($(grep -m1 'Failed status' "$T/retry.client"))"
else
	fail "retry: client exit $rc"
	show "$T/retry.client"
fi
exactly "retry: rule 1 faults (1 + retry_cnt 7 transmissions)" "$(rule_count uroce1 1 faults)" 8
exactly "retry: uroce1 xport.retry_timeout" "$(counter uroce1 xport.retry_timeout)" 7
exactly "retry: uroce1 xport.qp_error" "$(counter uroce1 xport.qp_error)" 1
exactly "retry: uroce0 received nothing for its QP (xport.rx_pkts)" \
	"$(counter uroce0 xport.rx_pkts)" 0
end

# ---------------------------------------------------------------- determinism
# seed_run LABEL SEED: pingpong with 15% of the client's SENDs dropped; the decision
# log without PSNs (random per run) and packet numbers goes to LABEL.decisions.
seed_run() {
	# Both RNICs seeded: the log names the peer's QPN, which --seed makes
	# reproducible (QPNs are random otherwise).
	OPTS0=(--seed "$2")
	OPTS1=(--seed "$2" --fault "tx:drop:opcode=send,prob=0.15" --fault-log "$T/$1.flog")
	begin "$1"
	next_tcp_port
	run_pair "$1" 60 run \
		ibv_rc_pingpong -d uroce0 -g 0 -p "$TCP_PORT" -c -s 64 -n 40 -- \
		ibv_rc_pingpong -d uroce1 -g 0 -p "$TCP_PORT" -c -s 64 -n 40 "$ADDR0"
	if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] && ! grep -qi 'invalid data' "$T/$1.server"; then
		pass "$1: ibv_rc_pingpong -c passes with $(rule_count uroce1 1 faults) SENDs dropped"
	else
		fail "$1: ibv_rc_pingpong server exit $SERVER_RC, client exit $CLIENT_RC"
		show_pair "$1"
	fi
	rule_count uroce1 1 matched >"$T/$1.matches"
	end
	sed 's/ pkt=[0-9]*//; s/ psn=0x[0-9a-f]*$//' "$T/$1.flog" >"$T/$1.decisions"
}
# upto LABEL N: LABEL's decisions for the first N packets the rule matched.
upto() {
	awk -v n="$2" '{ m = $2; sub(/^match=/, "", m) } m + 0 <= n' "$T/$1.decisions"
}
seed_run seed7a 7
seed_run seed7b 7
seed_run seed8 8
# A decision is a function of the seed and the packet's number among those
# the rule matched. The runs are compared over the packets both matched:
# on a loaded machine an ACK can come after the retransmission timer, and
# a run that sends a SEND once more has more packets (and decisions) at
# its end.
m7a=$(cat "$T/seed7a.matches") m7b=$(cat "$T/seed7b.matches") m8=$(cat "$T/seed8.matches")
m7=$((m7a < m7b ? m7a : m7b))
upto seed7a "$m7" >"$T/seed7a.common"
upto seed7b "$m7" >"$T/seed7b.common"
n7=$(wc -l <"$T/seed7a.common")
if [ "$n7" -gt 0 ] && cmp -s "$T/seed7a.common" "$T/seed7b.common"; then
	pass "seed: two runs with seed 7 made the same $n7 decisions for the $m7 packets both matched ($m7a and $m7b in all; $(awk '{ print $2 }' "$T/seed7a.common" | tr '\n' ' '))"
else
	fail "seed: the runs with seed 7 differ over their first $m7 packets (or made no decision):"
	diff "$T/seed7a.common" "$T/seed7b.common" | head -n 10 | sed 's/^/    | /'
fi
m78=$((m7a < m8 ? m7a : m8))
upto seed7a "$m78" >"$T/seed7a.vs8"
upto seed8 "$m78" >"$T/seed8.common"
if [ "$m78" -gt 0 ] && ! cmp -s "$T/seed7a.vs8" "$T/seed8.common"; then
	pass "seed: seed 8 made other decisions ($(awk '{ print $2 }' "$T/seed8.decisions" | tr '\n' ' '))"
else
	fail "seed: seeds 7 and 8 made the same decisions"
fi

# ---------------------------------------------------------------- the CM
if [ -x "$CM_PROBE" ]; then
	# The first ConnectRequest is taken twice. It finds no listener, so the
	# CM holds it (for a listen about to start) and takes the copy, which
	# comes while it is held, as the peer's retry of the same request: one
	# REJ answers both, as the probe expects.
	OPTS0=(--fault "rx:dup:opcode=cm,nth=1")
	begin cm
	rc=0
	"$CM_PROBE" "$E2E_NET.3" "$ADDR0" 4791 >"$T/cm.probe" 2>&1 || rc=$?
	check "cm: cm_probe still passes ($(tail -n 1 "$T/cm.probe"))" test "$rc" -eq 0
	exactly "cm: rule 1 faults" "$(rule_count uroce0 1 faults)" 1
	# cm.sh's counts with the first ConnectRequest taken twice.
	exactly "cm: uroce0 daemon.cm_rx (5 + the duplicate)" "$(counter uroce0 daemon.cm_rx)" 6
	exactly "cm: uroce0 daemon.cm_req_held (the probe's two REQs for no listener; the copy is not held again)" \
		"$(counter uroce0 daemon.cm_req_held)" 2
	exactly "cm: uroce0 daemon.cm_duplicates (the copy)" "$(counter uroce0 daemon.cm_duplicates)" 1
	exactly "cm: uroce0 daemon.cm_rej_sent (one answer for the REQ and its copy)" \
		"$(counter uroce0 daemon.cm_rej_sent)" 2
	end
else
	echo "SKIP (cm): cm_probe was not built"
fi

# ---------------------------------------------------------------- pcapng comments
# A later --pcap wins: uroce0 writes pcapng, which holds a comment per faulted frame.
OPTS0=(--pcap "$T/notes.uroce0.pcapng" --fault "tx:drop:opcode=write,nth=3"
	--fault "tx:dup:opcode=write,nth=5" --fault "tx:corrupt:opcode=write,nth=7"
	--fault "tx:delay=10:opcode=write,nth=9" --fault "rx:seq-nak:opcode=ack,nth=1"
	--fault "tx:reorder=2:opcode=write,nth=11")
begin notes
rcs write
sleep 0.3 # the delayed packet may leave after the program is done
end
if command -v tshark >/dev/null; then
	tshark -r "$T/notes.uroce0.pcapng" --disable-heuristic rpcrdma_infiniband -Y frame.comment \
		-T fields -e frame.number -e infiniband.bth.psn -e frame.comment \
		>"$T/notes.txt" 2>"$T/notes.err"
	sed 's/^/    | /' "$T/notes.txt"
	for w in "rule 1, fault 1 (tx:drop:opcode=write,nth=3): dropped, never sent" \
		"rule 2, fault 1 (tx:dup:opcode=write,nth=5): duplicated, copy 1 of 2" \
		"rule 2, fault 1 (tx:dup:opcode=write,nth=5): duplicated, copy 2 of 2" \
		"rule 3, fault 1 (tx:corrupt:opcode=write,nth=7): bit " \
		"rule 4, fault 1 (tx:delay=10:opcode=write,nth=9): delayed 10 ms" \
		"rule 5, fault 1 (rx:seq-nak:opcode=ack,nth=1): forged seq-nak in place of RC_ACKNOWLEDGE" \
		"rule 6, fault 1 (tx:reorder=2:opcode=write,nth=11): held back until 2 later packets passed"; do
		check "notes: tshark shows the frame comment '$w'" grep -qF "uroce fault $w" "$T/notes.txt"
	done
	exactly "notes: frames a fault rule touched" "$(grep -c "uroce fault rule" "$T/notes.txt")" 7
	# The reordered packet went out right after the two packets that followed it.
	rpsn=$(awk -F'\t' '/reorder/ { print $2 }' "$T/notes.txt")
	rframe=$(awk -F'\t' '/reorder/ { print $1 }' "$T/notes.txt")
	before=$(tshark -r "$T/notes.uroce0.pcapng" --disable-heuristic rpcrdma_infiniband \
		-Y "frame.number < ${rframe:-0} && ip.src == $ADDR0" -T fields -e infiniband.bth.psn \
		2>/dev/null | tail -n 2 | tr '\n' ' ')
	check "notes: PSN $rpsn left after PSNs $((${rpsn:-0} + 1)) and $((${rpsn:-0} + 2)) (sent before it: $before)" \
		test "$before" = "$((${rpsn:-0} + 1)) $((${rpsn:-0} + 2)) "
else
	echo "SKIP (pcapng comments): tshark is not installed"
fi

# ---------------------------------------------------------------- bad input
rc=0
"$UROCE_BIN/uroced" --name bad --addr "$ADDR0" --fault "tx:drp" 2>"$T/bad.err" || rc=$?
if [ "$rc" -eq 2 ] && grep -q "unknown action 'drp'" "$T/bad.err"; then
	pass "bad: uroced --fault tx:drp exits 2: $(cat "$T/bad.err")"
else
	fail "bad: uroced --fault tx:drp exit $rc: $(cat "$T/bad.err")"
fi
printf '# rules\ntx:drop:nth=2\n\ntx:dup:qpn=zz\n' >"$T/rules.txt"
rc=0
"$UROCE_BIN/uroced" --name bad --addr "$ADDR0" --fault-file "$T/rules.txt" 2>"$T/bad.err" || rc=$?
if [ "$rc" -eq 2 ] && grep -q "rules.txt:4: 'tx:dup:qpn=zz': qpn='zz'" "$T/bad.err"; then
	pass "bad: a bad --fault-file line is named by number: $(cat "$T/bad.err")"
else
	fail "bad: uroced --fault-file exit $rc: $(cat "$T/bad.err")"
fi
OPTS0=(--fault-file "$T/rules.txt.ok")
grep -v qpn=zz "$T/rules.txt" >"$T/rules.txt.ok"
begin runtime
exactly "runtime: --fault-file gave one rule" "$("$U" fault uroce0 list --json |
	"$TEST_PY" -c 'import json,sys; print(len(json.load(sys.stdin)["rules"]))')" 1
rc=0
"$U" fault uroce0 add "tx:drop:opcode=write,qpm=3" 2>"$T/bad.err" || rc=$?
if [ "$rc" -eq 2 ] && grep -q "unknown condition 'qpm'" "$T/bad.err"; then
	pass "bad: uroce fault add of a malformed rule exits 2: $(cat "$T/bad.err")"
else
	fail "bad: uroce fault add exit $rc: $(cat "$T/bad.err")"
fi
rc=0
"$U" fault nosuch list 2>"$T/bad.err" || rc=$?
exactly "bad: uroce fault on a device that does not exist exits" "$rc" 2
rc=0
"$U" fault uroce0 del 99 2>"$T/bad.err" || rc=$?
if [ "$rc" -eq 1 ] && grep -q "has no rule 99" "$T/bad.err"; then
	pass "bad: del of a rule that does not exist: $(cat "$T/bad.err")"
else
	fail "bad: del 99 exit $rc: $(cat "$T/bad.err")"
fi
check "runtime: add" "$U" fault uroce0 add "rx:delay=5:opcode=ack,prob=50%,seed=3"
check "runtime: add" "$U" fault uroce0 add "tx:corrupt:every=1000"
"$U" fault uroce0 list >"$T/list.txt"
if grep -Eq '^2 +0 +0  rx:delay=5:opcode=ack,prob=50%,seed=3$' "$T/list.txt" &&
	grep -Eq '^3 +0 +0  tx:corrupt:every=1000$' "$T/list.txt"; then
	pass "runtime: list shows the rules with their counts"
else
	fail "runtime: list"
	show "$T/list.txt"
fi
check "runtime: del 2" "$U" fault uroce0 del 2
exactly "runtime: rules after del" "$("$U" fault uroce0 list --json |
	"$TEST_PY" -c 'import json,sys; print(len(json.load(sys.stdin)["rules"]))')" 2
check "runtime: clear" "$U" fault uroce0 clear
exactly "runtime: rules after clear" "$("$U" fault uroce0 list --json |
	"$TEST_PY" -c 'import json,sys; print(len(json.load(sys.stdin)["rules"]))')" 0
end

finish

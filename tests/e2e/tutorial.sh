#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The protocol tutorial (docs/tutorial/) run as written, so that it never rots.
#
# Every chapter NN-*.md holds its commands in ```sh blocks. The first block of a
# chapter only sets the chapter's variables (A and B, the two RNICs' addresses, and
# PORT, a TCP port for the programs' set-up); the test replaces it with this test's
# own allocation (tests/lib/TestNet.cmake: E2E_NET.1, E2E_NET.2, a port of its range)
# and runs the other blocks in order, unchanged, in one bash per chapter, in a fresh
# directory with a fresh run directory and build/bin first on PATH, as a reader
# would after `export PATH=$PWD/build/bin:$PATH`. Block K's output is kept in
# block-K.out. The chapter's checks below then test what its text says to look for
# (which packets are in the ladder, which counter moved, which completion status).
# No block may name an address or port itself: those are only the variables'.
#
#   tutorial.sh [CHAPTER...]      (default: every chapter, e.g. tutorial.sh 06)
. "$(dirname "$0")/lib.sh"
TUT=$(cd "$(dirname "$0")/../../docs/tutorial" && pwd)
need_prog ibv_rc_pingpong
need_prog ib_write_bw
need_prog tshark
[ -x "$UROCE_BIN/rc_semantics" ] || skip "rc_semantics was not built (no system libibverbs)"

# extract CHAPTER.md DIR: writes DIR/block-K.sh for every ```sh block (K from 1).
extract() {
	awk -v d="$2" '
		/^```sh$/ { k++; f = d "/block-" k ".sh"; printf "" > f; on = 1; next }
		/^```/ && on { on = 0; close(f); next }
		on { print > f }' "$1"
}

# run_chapter NAME: extracts and runs the chapter docs/tutorial/NAME.md in $T/NAME
# (60 s at most); sets D to that directory and NBLOCKS.
run_chapter() {
	local md=$TUT/$1.md k rc
	D=$T/$1
	mkdir -p "$D" "$D/run"
	extract "$md" "$D"
	NBLOCKS=$(find "$D" -name 'block-*.sh' | wc -l)
	if [ "$NBLOCKS" -lt 2 ]; then
		fail "$1: fewer than two sh blocks"
		return
	fi
	if grep -Eqv '^(A|B|PORT)=[^ ]+( (A|B|PORT)=[^ ]+)*$' "$D/block-1.sh" ||
		[ "$(wc -l <"$D/block-1.sh")" -ne 1 ]; then
		fail "$1: the first sh block must be one line setting A, B and PORT: $(cat "$D/block-1.sh")"
		return
	fi
	if grep -nE '(^|[^0-9.])127\.[0-9]|:[0-9]{4,5}([^0-9]|$)|-p [0-9]' "$D"/block-[2-9]*.sh; then
		fail "$1: a block names an address or port instead of \$A, \$B, \$PORT"
	fi
	next_tcp_port
	{
		echo "A=$ADDR0 B=$ADDR1 PORT=$TCP_PORT"
		for k in $(seq 2 "$NBLOCKS"); do
			echo "exec >block-$k.out 2>&1"
			cat "$D/block-$k.sh"
		done
	} >"$D/chapter.sh"
	rc=0
	# in a session of its own, so that timeout's signal reaches everything it started
	(cd "$D" && PATH=$UROCE_BIN:$PATH UROCE_RUNDIR=$D/run \
		setsid timeout -k 5 60 bash chapter.sh >"$D/block-1.out" 2>&1) &
	CH_PID=$!
	wait "$CH_PID" || rc=$?
	end_leftovers "$D"
	check "$1: its commands ran to the end (exit $rc)" test "$rc" -eq 0
	[ "$rc" -eq 0 ] || tail -n 20 "$D"/block-*.out | sed 's/^/    | /'
}

# end_leftovers DIR: ends the daemons and programs that a chapter run in DIR (or, for
# $T, any chapter) started and left running, found by their working directory, each
# by its pid. Also run at exit, should the test be interrupted while a chapter runs.
end_leftovers() {
	local p cwd
	for p in /proc/[0-9]*; do
		cwd=$(readlink "$p/cwd" 2>/dev/null) || continue
		case $cwd in "$1" | "$1"/*) kill -TERM "${p#/proc/}" 2>/dev/null ;; esac
	done
}
end_all_leftovers() { end_leftovers "$T"; }
at_exit end_all_leftovers

# out K: block K's output. has WHAT K REGEX: it matches a line of it (grep -E).
out() { cat "$D/block-$1.out"; }
has() {
	if grep -Eq -- "$3" "$D/block-$2.out"; then
		pass "$1"
	else
		fail "$1 (no line of block $2's output matches /$3/)"
		show "$D/block-$2.out" 15
	fi
}

# cval K DEV NAME: counter NAME in block K's `uroce counters DEV` listing (0 when not
# listed: the listing leaves out the zero ones).
cval() {
	awk -v dev="# $2" -v n="$3" '
		$0 == dev { on = 1; next } /^# / { on = 0 } on && $1 == n { v = $2 } END { print v + 0 }' \
		"$D/block-$1.out"
}

# at_least WHAT VALUE MIN, exactly WHAT VALUE WANT
at_least() {
	if [ "$2" -ge "$3" ]; then pass "$1 = $2 (>= $3)"; else fail "$1 = $2, expected >= $3"; fi
}
exactly() {
	if [ "$2" -eq "$3" ]; then pass "$1 = $2"; else fail "$1 = $2, expected $3"; fi
}

# ladder_rows K REGEX: how many lines of block K's output match REGEX.
ladder_rows() {
	grep -Ec -- "$2" "$D/block-$1.out"
}

# ladder_of K CAPTURE REGEX: the same within the ladder of CAPTURE in block K's output
# (from its "uroce ladder: CAPTURE" header to the next one).
ladder_of() {
	awk -v h="uroce ladder: $2:" '/^uroce ladder: / { on = index($0, h) == 1 } on' \
		"$D/block-$1.out" | grep -Ec -- "$3"
}

# ---------------------------------------------------------------- the chapters' claims

# psn_of K WHICH: the PSN (decimal) ibv_rc_pingpong printed in block K for its
# "local" or "remote" address.
psn_of() {
	local h
	h=$(sed -n "s/^ *$2 address: .* PSN 0x\([0-9a-f]*\),.*/\1/p" "$D/block-$1.out" | head -n 1)
	echo $((16#${h:-0}))
}

# 1: PSNs as exchanged, Send Only with AckReq, ACK with the same PSN and MSN 1, 2; the
# comments; the completion counters.
check_01() {
	local c s
	c=$(psn_of 3 local)
	s=$(psn_of 3 remote)
	has "01: before the client connects, the server's QP is INIT, no peer, 500 receive WRs" 3 \
		'^uroce0 +0x[0-9a-f]+ +0x000000 +RC +INIT +0x000000 +0x000000 +0x000000 +0 +500 .* ibv_rc_pingpong$'
	has "01: the client's first SEND carries its PSN $c, AckReq, 64 bytes" 4 \
		"^ +1 \|-- RC Send Only QP=0x[0-9a-f]+ PSN=$c A len=64 -+>\| # WR wr_id=0x2 SEND len=64 sge=1$"
	has "01: the ACK repeats PSN $c with MSN 1 and completes the SEND" 4 \
		"^ +2 \|<-+ RC Acknowledge QP=0x[0-9a-f]+ PSN=$c ACK credits=unlimited msn=1 --\| # completes send WR wr_id=0x2: success$"
	has "01: the second SEND is PSN $(((c + 1) & 0xffffff)), acknowledged with MSN 2" 4 \
		"RC Acknowledge QP=0x[0-9a-f]+ PSN=$(((c + 1) & 0xffffff)) ACK credits=unlimited msn=2 "
	has "01: the server's SEND carries the server's PSN $s and completes the receive WR" 4 \
		"<-+ RC Send Only QP=0x[0-9a-f]+ PSN=$s A len=64 --\| # completes receive WR wr_id=0x1: success$"
	has "01: tshark shows the comments" 4 $'^RC Send Only QP=0x[0-9a-f]+ ?\tWR wr_id=0x2 SEND len=64 sge=1$'
	# completions are exact; packet counts grow when the adaptive timer resends (RETX
	# retry_fast rows on a busy machine: duplicates, acknowledged again)
	exactly "01: uroce1 xport.send_cqe" "$(cval 3 uroce1 xport.send_cqe)" 2
	exactly "01: uroce1 xport.recv_cqe" "$(cval 3 uroce1 xport.recv_cqe)" 2
	at_least "01: uroce1 xport.ack_sent" "$(cval 3 uroce1 xport.ack_sent)" 2
	at_least "01: uroce1 xport.ack_rcvd" "$(cval 3 uroce1 xport.ack_rcvd)" 2
}

# 2: two packets per WRITE, AckReq on the Last (not on an unsignaled one that another WRITE
# follows at once; always on the fifth, signaled), the RETH on the First only with the
# server's address and key, one completion (perftest's moderation), none on the responder.
check_02() {
	local va rkey msns acked lasts
	exactly "02: WRITE First packets in the ladder" "$(ladder_rows 4 '\|-- RC RDMA Write First .* len=1024 -+>\| # WR wr_id=0x0 RDMA_WRITE len=2048 sge=1$')" 5
	lasts=$(ladder_rows 4 '\|-- RC RDMA Write Last QP=0x[0-9a-f]+ PSN=[0-9]+ A? ?len=1024 -+>\| #')
	exactly "02: WRITE Last packets" "$lasts" 5
	acked=$(ladder_rows 4 '\|-- RC RDMA Write Last QP=0x[0-9a-f]+ PSN=[0-9]+ A len=1024 -+>\| #')
	at_least "02: WRITE Last packets with AckReq (of 5)" "$acked" 1
	check "02: the fifth WRITE's Last asks for an ACK" bash -c \
		'grep -E "\|-- RC RDMA Write Last " "$1" | tail -n 1 | grep -Eq " A len=1024 "' _ "$D/block-4.out"
	msns=$(grep -Eo '\|<-+ RC Acknowledge .* ACK credits=unlimited msn=[0-9]+ ' "$D/block-4.out" |
		grep -Eo 'msn=[0-9]+' | sort -u -t= -k2n | tr '\n' ' ')
	# WRITEs that arrive in one batch get one ACK (coalesced): 1 to 5 ACKs, the last MSN 5
	check "02: the ACKs carry MSNs up to 5 ($msns)" bash -c '[[ "$1" =~ ^(msn=[1-4] )*msn=5\ $ ]]' _ "$msns"
	exactly "02: ACKs that complete a WR (one signaled WR)" "$(ladder_rows 4 'completes send WR wr_id=0x0: success')" 1
	rkey=$(sed -n 's/^ *remote address: .* RKey 0x\([0-9a-f]*\) VAddr 0x\([0-9a-f]*\)$/\1/p' "$D/block-3.out")
	va=$(sed -n 's/^ *remote address: .* RKey 0x\([0-9a-f]*\) VAddr 0x\([0-9a-f]*\)$/\2/p' "$D/block-3.out")
	has "02: the First packet's RETH has the server's VAddr 0x$va, RKey 0x$rkey, dmalen 2048" 4 \
		"^1 .* RC RDMA Write First .* RETH va=0x0*$(printf %x $((16#${va:-0}))) rkey=0x0*$(printf %x $((16#${rkey:-0}))) dmalen=2048 len=1024 icrc=ok$"
	has "02: the Last packet has no RETH" 4 "^2 .* RC RDMA Write Last .* A=[01] .* pad=0 len=1024 icrc=ok$"
	exactly "02: uroce1 xport.send_cqe" "$(cval 3 uroce1 xport.send_cqe)" 1
	exactly "02: uroce0 xport.msg_rcvd" "$(cval 3 uroce0 xport.msg_rcvd)" 5
	at_least "02: uroce0 xport.ack_sent" "$(cval 3 uroce0 xport.ack_sent)" 1
	exactly "02: uroce0 xport.recv_cqe" "$(cval 3 uroce0 xport.recv_cqe)" 0
}

# 3: three responses per request on the request's PSNs, AETH on First and Last, no ACK.
check_03() {
	local p
	p=$(sed -n 's/^ *1 |-- RC RDMA Read Request QP=0x[0-9a-f]* PSN=\([0-9]*\) A -*>|.*/\1/p' "$D/block-4.out")
	check "03: the first row is a READ request with AckReq (PSN ${p:-none})" test -n "$p"
	p=${p:-0}
	has "03: its First response has its PSN and an AETH with MSN 1" 4 \
		"<-- RC RDMA Read Response First QP=0x[0-9a-f]+ PSN=$p ACK credits=unlimited msn=1 len=1024 --\|"
	has "03: the Middle response is the next PSN, without AETH" 4 \
		"<-+ RC RDMA Read Response Middle QP=0x[0-9a-f]+ PSN=$(((p + 1) & 0xffffff)) len=1024 --\|"
	has "03: the Last response is the third PSN, AETH, 952 bytes" 4 \
		"<-+ RC RDMA Read Response Last QP=0x[0-9a-f]+ PSN=$(((p + 2) & 0xffffff)) ACK credits=unlimited msn=1 len=952 --\|"
	has "03: the next request is three PSNs further on" 4 \
		"\|-- RC RDMA Read Request QP=0x[0-9a-f]+ PSN=$(((p + 3) & 0xffffff)) A -+>\|"
	has "03: the request's RETH asks for 3000 bytes" 4 "^1 .* RC RDMA Read Request .* RETH va=0x[0-9a-f]+ rkey=0x[0-9a-f]+ dmalen=3000 icrc=ok$"
	exactly "03: RC Acknowledge rows" "$(ladder_rows 4 'RC Acknowledge')" 0
	has "03: the last response completes the signaled WR" 4 "Read Response Last .* # completes send WR wr_id=0x0: success$"
	at_least "03: uroce0 xport.read_resp_sent" "$(cval 3 uroce0 xport.read_resp_sent)" 15
	exactly "03: uroce0 xport.ack_sent" "$(cval 3 uroce0 xport.ack_sent)" 0
	at_least "03: uroce1 xport.rx_pkts" "$(cval 3 uroce1 xport.rx_pkts)" 15
	exactly "03: uroce1 xport.send_cqe" "$(cval 3 uroce1 xport.send_cqe)" 1
}

# 4: the three atomics with their known original values.
check_04() {
	has "04: rc_semantics atomics ok (values checked)" 3 '^atomics +ok$'
	has "04: Compare Swap 100 -> 200" 4 'RC Compare Swap .* swap_add=0x0+c8 compare=0x0+64 icrc=ok$'
	has "04: Compare Swap 100 -> 300" 4 'RC Compare Swap .* swap_add=0x0+12c compare=0x0+64 icrc=ok$'
	has "04: Fetch Add 5" 4 'RC Fetch Add .* swap_add=0x0+5 compare=0x0+ icrc=ok$'
	has "04: the first returns 100" 4 ' RC Atomic Acknowledge QP=0x[0-9a-f]+ PSN=291 .* msn=1 AtomicAckETH orig=0x0+64 icrc=ok$'
	has "04: the second returns 200 (no swap)" 4 ' RC Atomic Acknowledge QP=0x[0-9a-f]+ PSN=292 .* msn=2 AtomicAckETH orig=0x0+c8 icrc=ok$'
	has "04: the Fetch Add returns 200" 4 ' RC Atomic Acknowledge QP=0x[0-9a-f]+ PSN=293 .* msn=3 AtomicAckETH orig=0x0+c8 icrc=ok$'
	exactly "04: completions named in the ladder" "$(ladder_rows 4 '<-- RC Atomic Acknowledge .* # completes send WR wr_id=0x[567]: success$')" 3
	exactly "04: uroce0 xport.atomic_executed" "$(cval 3 uroce0 xport.atomic_executed)" 3
}

# 5: 2000 bytes at MTU 512 = 512 + 512 + 512 + 464 on consecutive PSNs, AckReq on the
# Last only, one ACK for the Last; -m 4096 on ports of MTU 1024 clamped: 1024 + 976.
check_05() {
	local p
	p=$(sed -n 's/^ *1 |-- RC Send First QP=0x[0-9a-f]* PSN=\([0-9]*\) len=512 -*>| # WR wr_id=0x2 SEND len=2000 sge=1$/\1/p' "$D/block-4.out")
	check "05: the first row is a Send First of 512 bytes (PSN ${p:-none})" test -n "$p"
	p=${p:-0}
	has "05: then a Send Middle of 512 bytes" 4 "^ +2 \|-- RC Send Middle QP=0x[0-9a-f]+ PSN=$(((p + 1) & 0xffffff)) len=512 -+>\|"
	has "05: another Send Middle" 4 "^ +3 \|-- RC Send Middle QP=0x[0-9a-f]+ PSN=$(((p + 2) & 0xffffff)) len=512 -+>\|"
	has "05: the Send Last of 464 bytes with AckReq" 4 "^ +4 \|-- RC Send Last QP=0x[0-9a-f]+ PSN=$(((p + 3) & 0xffffff)) A len=464 -+>\|"
	has "05: one ACK for the Last PSN completes the SEND" 4 \
		"^ +5 \|<-+ RC Acknowledge QP=0x[0-9a-f]+ PSN=$(((p + 3) & 0xffffff)) ACK credits=unlimited msn=1 --\| # completes send WR wr_id=0x2: success$"
	exactly "05: rows with AckReq at MTU 512 (one per message)" \
		"$(ladder_rows 4 'RC Send (First|Middle|Last) QP=0x[0-9a-f]+ PSN=[0-9]+ A len=(512|464) (-+>\| #|--\|( #|$))')" 2
	exactly "05: receive completions, on the Last packets" "$(ladder_rows 4 'Send Last .* len=464 .*# completes receive WR wr_id=0x1: success$')" 1
	# -m 4096 on ports with an active MTU of 1024: 1024 + 976
	exactly "05: Send First packets of 1024 bytes (MTU 4096 clamped)" \
		"$(ladder_rows 4 'RC Send First QP=0x[0-9a-f]+ PSN=[0-9]+ len=1024 (-+>\| #|--\|( #|$))')" 2
	exactly "05: Send Last packets of 976 bytes with AckReq" \
		"$(ladder_rows 4 'RC Send Last QP=0x[0-9a-f]+ PSN=[0-9]+ A len=976 (-+>\| #|--\|( #|$))')" 2
	exactly "05: uroce1 daemon.mtu_clamped" "$(cval 3 uroce1 daemon.mtu_clamped)" 1
	has "05: the log says so" 3 'path MTU 4096 above the active MTU, clamped to 1024$'
}

# 6: the dropped PSN in the client's capture, one sequence NAK for it, the resend
# starting there, one completion.
check_06() {
	local p
	p=$(sed -n 's/^ *[0-9]* |-- RC Send Middle QP=0x[0-9a-f]* PSN=\([0-9]*\) len=1024 -*>| # uroce fault rule 1, fault 1 (tx:drop:opcode=send,nth=2,count=1): dropped, never sent; .*/\1/p' "$D/block-4.out" | head -n 1)
	check "06: the client's ladder marks the dropped second packet (PSN ${p:-none})" test -n "$p"
	p=${p:-0}
	exactly "06: NAK PSN Sequence Error rows for PSN $p in the client's ladder" \
		"$(ladder_of 4 u1.pcapng "<-+ RC Acknowledge QP=0x[0-9a-f]+ PSN=$p NAK \"PSN Sequence Error\" ")" 1
	has "06: PSN $p is sent again, marked RETX, with the reason" 4 \
		"\|-- RC Send Middle QP=0x[0-9a-f]+ PSN=$p (A )?len=1024 -+>\| RETX # WR wr_id=0x2 SEND len=4096 sge=1; retransmission \(retry_[a-z_]+\)$"
	exactly "06: send completions in the client's ladder" "$(ladder_of 4 u1.pcapng '# completes send WR wr_id=0x2: success$')" 1
	exactly "06: uroce0 xport.seq_nak_sent" "$(cval 3 uroce0 xport.seq_nak_sent)" 1
	exactly "06: uroce1 xport.seq_nak_rcvd" "$(cval 3 uroce1 xport.seq_nak_rcvd)" 1
	at_least "06: uroce1 retries (retry_nak_seq, or a timer: retry_fast, retry_timeout)" \
		$(($(cval 3 uroce1 xport.retry_nak_seq) + $(cval 3 uroce1 xport.retry_fast) + \
			$(cval 3 uroce1 xport.retry_timeout))) 1
	at_least "06: uroce1 xport.retx_pkts" "$(cval 3 uroce1 xport.retx_pkts)" 1
	exactly "06: uroce1 daemon.fault_dropped" "$(cval 3 uroce1 daemon.fault_dropped)" 1
	has "06: uroce fault list counts one fault" 3 '^1 +[0-9]+ +1  tx:drop:opcode=send,nth=2,count=1$'
	exactly "06: uroce0 xport.recv_cqe (the message arrived once)" "$(cval 3 uroce0 xport.recv_cqe)" 1
	exactly "06: red arrows in loss.svg (as many as RETX rows in the client's ladder)" \
		"$(tail -n 1 "$D/block-4.out")" "$(ladder_of 4 u1.pcapng '\| RETX #')"
	# the server's ladder (the second one in block 4) has no copy of the dropped packet
	# before the NAK
	check "06: the server's capture shows PSN $p only after the NAK" awk -v p="PSN=$p " '
		/^uroce ladder: u0.pcapng/ { on = 1 } on && index($0, "PSN Sequence Error") { nak = 1 }
		on && index($0, "Send Middle") && index($0, p) && !nak { bad = 1 }
		END { exit bad || !nak }' "$D/block-4.out"
}

# 7: the duplicated SEND acknowledged twice, executed once; the duplicated atomics replayed.
check_07() {
	local p acks
	p=$(sed -n 's/^ *1 |-- RC Send Only QP=0x[0-9a-f]* PSN=\([0-9]*\) A len=64 -*>| # uroce fault rule 1, fault 1 (tx:dup:opcode=send,nth=1): duplicated, copy 1 of 2; .*/\1/p' "$D/block-5.out")
	check "07: the first SEND is duplicated (PSN ${p:-none})" test -n "$p"
	p=${p:-0}
	has "07: its second copy is marked RETX" 5 "^ +2 \|-- RC Send Only QP=0x[0-9a-f]+ PSN=$p A len=64 -+>\| RETX # uroce fault rule 1, fault 1 .*copy 2 of 2"
	# one ACK when both copies came in one received batch (coalesced), else two
	acks=$(ladder_rows 5 "<-+ RC Acknowledge QP=0x[0-9a-f]+ PSN=$p ACK credits=unlimited msn=1 ")
	check "07: ACKs for PSN $p with MSN 1: one or two ($acks)" test "$acks" -ge 1 -a "$acks" -le 2
	if [ "$acks" = 2 ]; then
		has "07: the second ACK completes nothing (resp_no_wqe, or resp_dup once the next WR is out)" 5 \
			"PSN=$p ACK credits=unlimited msn=1 --\| # dropped: resp_(no_wqe|dup)$"
		at_least "07: uroce1 drop.resp_no_wqe + drop.resp_dup" \
			$(($(cval 3 uroce1 drop.resp_no_wqe) + $(cval 3 uroce1 drop.resp_dup))) 1
	fi
	at_least "07: uroce0 xport.dup_req" "$(cval 3 uroce0 xport.dup_req)" 1
	at_least "07: uroce0 xport.dup_acked" "$(cval 3 uroce0 xport.dup_acked)" 1
	exactly "07: uroce0 xport.recv_cqe (two messages, two completions)" "$(cval 3 uroce0 xport.recv_cqe)" 2
	check "07: ibv_rc_pingpong -c found no bad data" bash -c "! grep -qi 'invalid data' '$D/server.txt' '$D/block-3.out'"
	has "07: rc_semantics atomics ok with every atomic sent twice" 4 '^atomics +ok$'
	has "07: the atomics rule faulted 3 times or more" 4 '^2 +[0-9]+ +([3-9]|[1-9][0-9]+)  tx:dup:opcode=atomic$'
	at_least "07: uroce0 xport.atomic_replayed" "$(cval 4 uroce0 xport.atomic_replayed)" 3
	exactly "07: uroce0 xport.atomic_executed" "$(cval 4 uroce0 xport.atomic_executed)" 3
	at_least "07: atomic ACKs completing nothing" "$(ladder_rows 5 'RC Atomic Acknowledge .* # dropped: resp_(no_wqe|dup)$')" 3
}

# 8: a forged RNR NAK, waited out; real RNR NAKs until rnr_retry (2) is used up.
check_08() {
	local p
	p=$(sed -n 's/^ *2 |<-* RC Acknowledge QP=0x[0-9a-f]* PSN=\([0-9]*\) RNR-NAK timer=1280us msn=1 --| # uroce fault rule 1, fault 1 (rx:rnr-nak:opcode=ack,nth=1): forged rnr-nak .*/\1/p' "$D/block-5.out")
	check "08: the ACK of the first SEND became an RNR NAK, timer 1280us (PSN ${p:-none})" test -n "$p"
	p=${p:-0}
	has "08: the SEND is sent again after the wait (retry_rnr)" 5 \
		"\|-- RC Send Only QP=0x[0-9a-f]+ PSN=$p A len=64 -+>\| RETX # WR wr_id=0x2 SEND len=64 sge=1; retransmission \(retry_rnr\)$"
	has "08: then acknowledged and completed" 5 "PSN=$p ACK credits=unlimited msn=1 --\| # completes send WR wr_id=0x2: success$"
	exactly "08: uroce1 xport.rnr_nak_rcvd (forged)" "$(cval 3 uroce1 xport.rnr_nak_rcvd)" 1
	exactly "08: uroce1 xport.retry_rnr (forged)" "$(cval 3 uroce1 xport.retry_rnr)" 1
	at_least "08: uroce0 xport.dup_acked (the resend was a duplicate)" "$(cval 3 uroce0 xport.dup_acked)" 1
	exactly "08: uroce0 xport.recv_cqe (executed once per message)" "$(cval 3 uroce0 xport.recv_cqe)" 2
	has "08: rc_semantics rnr ok" 4 '^rnr +ok$'
	exactly "08: transmissions of rc_semantics's SEND (1 + rnr_retry 2)" \
		"$(ladder_rows 5 '\|-- RC Send Only .* # WR wr_id=0x32 SEND len=64 sge=1')" 3
	exactly "08: real RNR NAKs (timer 10us)" "$(ladder_rows 5 '<-+ RC Acknowledge .* RNR-NAK timer=10us msn=0 --\|')" 3
	has "08: the last one completes the WR with RNR retry counter exceeded" 5 \
		'RNR-NAK timer=10us msn=0 --\| # completes send WR wr_id=0x32: RNR retry counter exceeded$'
	has "08: the log names status 13" 4 'send WR 0x32 completed with RNR retry counter exceeded \(status 13\)'
	exactly "08: uroce1 xport.rnr_nak_rcvd (both runs)" "$(cval 4 uroce1 xport.rnr_nak_rcvd)" 4
	exactly "08: uroce1 xport.retry_rnr (both runs)" "$(cval 4 uroce1 xport.retry_rnr)" 3
	exactly "08: uroce1 xport.qp_error" "$(cval 4 uroce1 xport.qp_error)" 1
}

# 9: eight transmissions of the first PSN, all dropped, RETRY_EXC_ERR, the server unaware.
check_09() {
	local c
	c=$(psn_of 3 local)
	has "09: ibv_rc_pingpong fails with transport retry counter exceeded (12)" 3 \
		'^Failed status transport retry counter exceeded \(12\) for wr_id 2$'
	exactly "09: transmissions of PSN $c, each dropped by the rule" \
		"$(ladder_rows 4 "\|-- RC Send Only QP=0x[0-9a-f]+ PSN=$c A len=64 -+>\| .*# uroce fault rule 1, fault [1-8] \(tx:drop:opcode=send\): dropped, never sent")" 8
	exactly "09: of them resent after a timeout" "$(ladder_rows 4 'RETX .*retransmission \(retry_timeout\)$')" 7
	exactly "09: arrows to the left (nothing came back)" "$(ladder_rows 4 '\|<-')" 0
	exactly "09: uroce1 xport.retry_timeout" "$(cval 3 uroce1 xport.retry_timeout)" 7
	exactly "09: uroce1 xport.qp_error" "$(cval 3 uroce1 xport.qp_error)" 1
	exactly "09: uroce1 xport.flushed (the pingpong's 500 receive WRs)" "$(cval 3 uroce1 xport.flushed)" 500
	has "09: the server's QP is still RTS, RQ-PSN the client's first PSN" 3 \
		"^uroce0 +0x[0-9a-f]+ +0x[0-9a-f]+ +RC +RTS +0x[0-9a-f]+ +0x[0-9a-f]+ +0x0*$(printf %x "$c") "
	# (retry_cnt + 1) x 4.096 us x 2^14: 7 periods between the first and the last
	# transmission, none shorter than the timeout. A frame's time is when the
	# daemon wrote it to the capture, a little after the timer fired; under
	# load (two suites at once on two cores) that lag varies by up to a
	# millisecond, which shortens the next gap as seen (66.5 ms once). So the
	# 7 periods together must make 7 timeouts, and each gap one less 2 ms.
	check "09: the transmissions are a timeout (67.1 ms) apart (tshark frame.time_relative)" \
		awk -F'\t' 'NF == 2 && $2 ~ /^[0-9]+$/ { n++; if (n == 1) t0 = $1;
				if (n > 1 && $1 - t < 0.0651) bad = 1; t = $1 }
			END { exit bad || n != 8 || t - t0 < 7 * 0.0671 }' "$D/block-4.out"
	has "09: the daemon's log names the status" 4 'send WR 0x2 completed with transport retry counter exceeded \(status 12\)'
}

# 10: the wrong key in the RETH, NAK 0x62, REM_ACCESS_ERR, both QPs in ERR.
check_10() {
	has "10: rc_semantics bad_rkey ok (REM_ACCESS_ERR, then a flushed WR)" 3 '^bad_rkey +ok$'
	has "10: the log names status 10" 4 'send WR 0xa completed with remote access error \(status 10\)'
	has "10: the NAK Remote Access Error completes the WRITE with remote access error" 5 \
		'<-+ RC Acknowledge QP=0x[0-9a-f]+ PSN=291 NAK "Remote Access Error" msn=0 --\| # completes send WR wr_id=0xa: remote access error$'
	# (keys are random: the one sent is the region's XOR 0x5a5a00, whatever the region's)
	has "10: the RETH carries a key" 5 '^1 .* RC RDMA Write Only .* RETH va=0x[0-9a-f]+ rkey=0x[0-9a-f]{8} dmalen=64 len=64 icrc=ok$'
	has "10: syndrome 0x62" 5 '^2 .* RC Acknowledge .* AETH syndrome=0x62 NAK "Remote Access Error" msn=0 icrc=ok$'
	exactly "10: uroce0 drop.req_err" "$(cval 3 uroce0 drop.req_err)" 1
	exactly "10: uroce0 xport.err_nak_sent" "$(cval 3 uroce0 xport.err_nak_sent)" 1
	exactly "10: uroce0 xport.qp_error" "$(cval 3 uroce0 xport.qp_error)" 1
	exactly "10: uroce1 xport.err_nak_rcvd" "$(cval 3 uroce1 xport.err_nak_rcvd)" 1
	exactly "10: uroce1 xport.send_cqe" "$(cval 3 uroce1 xport.send_cqe)" 2
	exactly "10: uroce1 xport.flushed" "$(cval 3 uroce1 xport.flushed)" 1
	exactly "10: packets in the capture (no retry)" "$(ladder_rows 5 '^ +[0-9]+ \|')" 2
}

# ---------------------------------------------------------------- main
chapters=("$@")
if [ ${#chapters[@]} -eq 0 ]; then
	for f in "$TUT"/[0-9][0-9]-*.md; do chapters+=("$(basename "$f" .md)"); done
fi
# the index links every chapter, and every chapter has its checks here
for f in "$TUT"/[0-9][0-9]-*.md; do
	c=$(basename "$f" .md)
	grep -q "]($c.md)" "$TUT/README.md" || fail "docs/tutorial/README.md does not link $c.md"
done
for c in "${chapters[@]}"; do
	[ -e "$TUT/$c.md" ] || c=$(basename "$(ls "$TUT/$c"-*.md 2>/dev/null | head -n 1)" .md)
	echo "--- $c"
	t0=$(now_ms)
	run_chapter "$c"
	if declare -F "check_${c%%-*}" >/dev/null; then
		"check_${c%%-*}"
	else
		fail "$c: the test has no checks for this chapter"
	fi
	echo "    ($c: $(($(now_ms) - t0)) ms)"
done
finish

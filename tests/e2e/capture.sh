#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bounded captures (uroced --pcap-snaplen, --pcap-size, --pcap-files), as
# tcpdump's -s, -C and -W bound theirs: an ibv_rc_pingpong of 4 KiB messages
# between uroce0 (pcapng, frames cut at 128 bytes, a ring of three 64 KiB
# files) and uroce1 (pcap, frames cut at 100 bytes, 64 KiB files, all kept).
# Checks: exactly the ring's files exist and none is much past its size; the
# daemon's pcap_files counter says how many were started; tshark reads every
# file, no frame is longer than the snap length while the original lengths are
# kept; each cut frame's comment gives the whole packet's ICRC verdict
# ("ICRC good"); `uroce decode` decodes the cut frames' headers, counts them
# as cut (0 malformed, 0 bad, exit 0); all of uroce1's files together hold
# every frame its counter says it wrote. Bad command lines exit 2 with a
# one-line reason. Then the annotations of a pcapng capture (a comment on each
# packet): a short ping-pong with a SEND dropped on uroce1's way out and one
# corrupted on uroce0's way in must show each request's WR (wr_id, opcode,
# length, SGE count), the retransmission and its reason, the completions a
# received packet caused, the fault rules, and the received packet uroce0
# refused with its drop reason. Last, a capture that nobody reads: uroce0
# writes into a FIFO whose reader reads nothing (--pcap-buffer 256K); its
# ping-pong must still complete (the RNIC never waits for its file), frames
# past the buffer are counted as pcap_dropped, and once a reader drains the
# FIFO the file holds every frame pcap_frames counts, with a comment on the
# first frame after the gap giving the number lost. And a reader that goes
# away: the daemon says so once, counts one pcap_error, and goes on serving.
. "$(dirname "$0")/lib.sh"
need_prog ibv_rc_pingpong

# Bad command lines: exit 2, one line naming the option.
bad_opts() {
	local want=$1 out rc=0
	shift
	out=$("$UROCE_BIN/uroced" --name capbad --addr "$ADDR0" --rundir "$T/badrun" "$@" 2>&1) || rc=$?
	if [ "$rc" -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q -- "$want" <<<"$out"; then
		pass "uroced $*: exit 2, '$out'"
	else
		fail "uroced $*: exit $rc, '$out' (wanted exit 2 naming $want)"
	fi
}
bad_opts --pcap-files --pcap "$T/x.pcapng" --pcap-files 3
bad_opts --pcap-snaplen --pcap "$T/x.pcapng" --pcap-snaplen 10
bad_opts --pcap-size --pcap "$T/x.pcapng" --pcap-size 1k
bad_opts --pcap-size --pcap "$T/x.pcapng" --pcap-size 12Q
bad_opts --pcap-size --pcap-size 1M
bad_opts --pcap-buffer --pcap "$T/x.pcapng" --pcap-buffer 4K
bad_opts --pcap-buffer --pcap-buffer 1M
[ ! -e "$T/x.pcapng" ] && pass "no capture file was created by a refused command line" ||
	fail "a refused command line left $T/x.pcapng"

# pingpong NAME SIZE ITERS WHAT: lib.sh's rc_pingpong_pair (uroce0 serves,
# uroce1 connects), which must succeed.
pingpong() {
	if rc_pingpong_pair "$1" 120 -s "$2" -n "$3"; then
		pass "$4: $(grep 'iters in' "$T/$1.client")"
	else
		fail "$4: server exit $SERVER_RC, client exit $CLIENT_RC"
		show_pair "$1"
	fi
}

RNIC_PCAP=0
start_rnic uroce0 "$ADDR0" --pcap "$T/ring.pcapng" --pcap-snaplen 128 --pcap-size 64K \
	--pcap-files 3
start_rnic uroce1 "$ADDR1" --pcap "$T/all.pcap" --pcap-snaplen 100 --pcap-size 64K
pingpong pp 4096 1000 "ibv_rc_pingpong -s 4096 -n 1000"
sleep 1 # the last ACKs settle before the counters are read
files0=$(counter uroce0 daemon.pcap_files)
files1=$(counter uroce1 daemon.pcap_files)
frames1=$(counter uroce1 daemon.pcap_frames)
stop_rnics

# uroce0: a ring of three, numbered before the extension
ls "$T"/ring* >"$T/ring.ls" 2>&1
if [ "$(sort "$T/ring.ls" | tr '\n' ' ')" = "$T/ring.0.pcapng $T/ring.1.pcapng $T/ring.2.pcapng " ]; then
	pass "ring: exactly ring.0/1/2.pcapng exist ($files0 files started after the first)"
else
	fail "ring: files $(tr '\n' ' ' <"$T/ring.ls")"
fi
[ "${files0:-0}" -ge 3 ] && pass "ring: the counter pcap_files ($files0) says the ring went round" ||
	fail "ring: pcap_files is '$files0' (wanted >= 3: 1000 round trips of 4 KiB fill more than 3 files)"
over=0
for f in "$T"/ring.*.pcapng "$T"/all.*.pcap; do
	# a file is closed by the frame that takes it past 64 KiB: at most one frame more
	[ "$(stat -c %s "$f")" -le $((65536 + 1024)) ] || over=$((over + 1))
done
[ $over -eq 0 ] && pass "no capture file is more than one frame past 64 KiB" ||
	fail "$over capture files are more than one frame past 64 KiB"

# check_cut FILE SNAP: tshark reads it; no frame is longer than SNAP and the
# data packets kept their original lengths; with comments (pcapng), every
# cut frame says the whole packet's ICRC was good; uroce decode counts them
# as cut, nothing malformed or bad.
check_cut() {
	local f=$1 snap=$2 name rc=0
	name=$(basename "$f")
	if command -v tshark >/dev/null; then
		tshark -r "$f" -T fields -e frame.len -e frame.cap_len -e frame.comment \
			>"$f.fields" 2>"$f.tshark.err" || rc=$?
		if [ $rc -eq 0 ] && awk -F'\t' -v s="$snap" '$2 > s { bad++ } $1 > s { cut++ }
			END { exit !(cut > 0 && !bad) }' "$f.fields"; then
			pass "tshark $name: $(awk -F'\t' -v s="$snap" '$1 > s' "$f.fields" | wc -l) frames cut to $snap bytes, original lengths kept"
		else
			fail "tshark $name (exit $rc): lengths wrong"
			head -n 5 "$f.fields" "$f.tshark.err" | sed 's/^/    | /'
		fi
		if [ "${3:-}" = comments ]; then
			if awk -F'\t' -v s="$snap" '$1 > s && $3 !~ ("cut at " s " of " $1 " bytes; ICRC good") { bad++ }
				$1 > s { n++ } END { exit !(n > 0 && !bad) }' "$f.fields"; then
				pass "$name: every cut frame's comment gives its length and 'ICRC good'"
			else
				fail "$name: a cut frame without the right comment"
				awk -F'\t' -v s="$snap" '$1 > s' "$f.fields" | head -n 3 | sed 's/^/    | /'
			fi
		fi
	fi
	decode_summary "$f"
	if [ "$DEC_RC" -eq 0 ] && [ "$DEC_MAL" -eq 0 ] && [ "$DEC_BAD" -eq 0 ] &&
		grep -Eq ', cut: [1-9][0-9]*$' "$f.decode" && grep -q "(cut at $snap of " "$f.decode"; then
		pass "uroce decode $name: $(tail -n 1 "$f.decode")"
	else
		fail "uroce decode $name (exit $DEC_RC): $(tail -n 1 "$f.decode")"
		grep -v 'icrc=ok' "$f.decode" | head -n 3 | sed 's/^/    | /'
	fi
}
# The two full files of the ring; the newest (the one written last, number
# pcap_files mod 3) may hold no more than the run's last frames, which need
# not be long enough to be cut: it must read and decode cleanly.
check_newest() { # FILE: at least one packet, nothing bad or malformed
	decode_summary "$1"
	[ "$DEC_RC" -eq 0 ] && [ "$DEC_N" -ge 1 ] && [ "$DEC_MAL" -eq 0 ] && [ "$DEC_BAD" -eq 0 ] &&
		pass "uroce decode $(basename "$1") (the newest): $(tail -n 1 "$1.decode")" ||
		fail "uroce decode $(basename "$1") (exit $DEC_RC): $(tail -n 1 "$1.decode")"
}
newest=$T/ring.$((${files0:-0} % 3)).pcapng
for f in "$T"/ring.*.pcapng; do [ "$f" = "$newest" ] || check_cut "$f" 128 comments; done
check_newest "$newest"

# uroce1: 64 KiB files without a ring: all kept, numbered from 0
n1=$(ls "$T"/all.*.pcap | wc -l)
[ "$n1" -eq $((files1 + 1)) ] && [ -e "$T/all.0.pcap" ] && [ ! -e "$T/all.pcap" ] &&
	pass "size limit without a ring: $n1 files all.0.pcap.. kept (pcap_files $files1)" ||
	fail "size limit without a ring: $n1 files, pcap_files '$files1'"
# the first file and the last full one; the newest as the ring's
for f in "$T"/all.0.pcap "$T/all.$((files1 - 1)).pcap"; do check_cut "$f" 100; done
check_newest "$T/all.$files1.pcap"
total=0
for f in "$T"/all.*.pcap; do
	total=$((total + $(tshark -r "$f" 2>/dev/null | wc -l)))
done
[ "$total" -eq "$frames1" ] && pass "uroce1's files hold all $frames1 frames it wrote" ||
	fail "uroce1's files hold $total frames, its counter says $frames1"

# annotations
rm -f "$T"/uroce*.pcapng
start_rnic uroce0 "$ADDR0" --pcap "$T/uroce0.pcapng" --fault 'rx:corrupt:opcode=send,nth=5'
start_rnic uroce1 "$ADDR1" --pcap "$T/uroce1.pcapng" --fault 'tx:drop:opcode=send,nth=3'
pingpong ann 2048 5 "ping-pong with two faults"
stop_rnics
# has CAP TEXT DESCRIPTION: some frame's Info<TAB>comment matches the ERE TEXT
has() {
	if grep -Eq "$2" "$1.ann"; then pass "$(basename "$1"): $3"; else
		fail "$(basename "$1"): no frame with $3 (/$2/)"
		head -n 12 "$1.ann" | sed 's/^/    | /'
	fi
}
if command -v tshark >/dev/null; then
	for f in "$T/uroce0.pcapng" "$T/uroce1.pcapng"; do
		tshark -r "$f" -T fields -e _ws.col.Info -e frame.comment >"$f.ann" 2>/dev/null
	done
	has "$T/uroce1.pcapng" $'RC Send First .*\tWR wr_id=0x2 SEND len=2048 sge=1$' \
		"a first transmission annotated with its WR"
	has "$T/uroce1.pcapng" $'RC Send First .*\turoce fault rule 1, fault 1 \\(tx:drop:opcode=send,nth=3\\): dropped, never sent; WR wr_id=0x2 SEND' \
		"the dropped SEND marked by its rule and its WR"
	# The resend's reason depends on what came first: the responder's
	# sequence NAK (for the SEND Last that arrived without its First), or,
	# when the responder did not run for a while (two suites at once), the
	# requester's adaptive timer. The annotation must name the one that did.
	why=$(awk -F'\t' '/PSN Sequence Error/ { nak = 1 }
		/^RC Send First .*WR wr_id=0x2 SEND len=2048 sge=1; retransmission/ {
			print (nak ? "retry_nak_seq" : "retry_fast|retry_timeout"); exit }' "$T/uroce1.pcapng.ann")
	has "$T/uroce1.pcapng" $'RC Send First .*\tWR wr_id=0x2 SEND len=2048 sge=1; retransmission \\('"(${why:-none})"$'\\)$' \
		"the retransmission and its reason (${why:-none}: a sequence NAK came before it or not)"
	has "$T/uroce1.pcapng" $'RC Acknowledge .*\tcompletes send WR wr_id=0x2: success$' \
		"the ACK that completed the SEND"
	has "$T/uroce0.pcapng" $'RC Send Last .*\t.*completes receive WR wr_id=0x1: success$' \
		"the SEND Last that completed a receive"
	has "$T/uroce0.pcapng" $'RC Send .*\turoce fault rule 1, fault 1 \\(rx:corrupt:opcode=send,nth=5\\): bit [0-9]+ flipped: bad ICRC; dropped: bad_icrc$' \
		"the corrupted packet, refused as bad_icrc"
fi

# A capture that nobody reads. The FIFO is held open for reading here (so
# that uroced's open does not wait) and read by nobody during the first
# ping-pong: a daemon that waited for its file would stop after 64 KiB.
mkfifo "$T/fifo.pcapng"
exec {hold}<>"$T/fifo.pcapng"
start_rnic uroce0 "$ADDR0" --pcap "$T/fifo.pcapng" --pcap-buffer 256K
start_rnic uroce1 "$ADDR1"
pingpong stall 4096 500 "ibv_rc_pingpong -n 500 while nobody reads uroce0's capture"
sleep 1 # the last ACKs settle (and are dropped) before the counter is read
dropped=$(counter uroce0 daemon.pcap_dropped)
[ "${dropped:-0}" -gt 0 ] && pass "pcap_dropped counts $dropped frames past the 256K buffer" ||
	fail "pcap_dropped is '$dropped' (wanted > 0: 2 MiB of frames against 256K)"
# A reader drains the FIFO; a second ping-pong's first frame tells of the gap.
# The reader's end is open before hold goes (a FIFO without readers fails
# its writer).
exec {rd}<"$T/fifo.pcapng"
cat <&$rd >"$T/fifo.out" {hold}>&- &
reader=$!
exec {rd}<&- {hold}>&-
pingpong after 64 5 "a second ping-pong once the capture is read"
sleep 1
frames=$(counter uroce0 daemon.pcap_frames)
dropped2=$(counter uroce0 daemon.pcap_dropped)
stop_rnics
if timeout 30 tail --pid="$reader" -f /dev/null; then
	pass "the capture's reader saw its end when uroced stopped"
else
	fail "the capture's reader is still waiting 30 s after uroced stopped"
	kill "$reader" 2>/dev/null
fi
[ "$dropped2" = "$dropped" ] && pass "no frame was dropped once the FIFO was read" ||
	fail "pcap_dropped went from $dropped to $dropped2 while the FIFO was read"
if command -v tshark >/dev/null; then
	rc=0
	tshark -r "$T/fifo.out" -T fields -e frame.comment >"$T/fifo.fields" 2>"$T/fifo.err" || rc=$?
	n=$(wc -l <"$T/fifo.fields")
	[ "$rc" -eq 0 ] && [ "$n" -eq "$frames" ] &&
		pass "tshark reads all $frames frames pcap_frames counts in the drained capture" ||
		fail "tshark (exit $rc) reads $n frames, pcap_frames says $frames ($(tail -c 200 "$T/fifo.err"))"
	gap=$(grep -Ec "(^|; )$dropped2 frames before this one not captured \(capture buffer full\)" \
		"$T/fifo.fields")
	[ "$gap" -eq 1 ] && pass "one frame says $dropped2 frames before it were not captured" ||
		fail "$gap frames say '$dropped2 frames before this one not captured'"
fi
decode_summary "$T/fifo.out"
[ "$DEC_RC" -eq 0 ] && [ "$DEC_MAL" -eq 0 ] && [ "$DEC_BAD" -eq 0 ] &&
	pass "uroce decode of the drained capture: $(tail -n 1 "$T/fifo.out.decode")" ||
	fail "uroce decode of the drained capture (exit $DEC_RC): $(tail -n 1 "$T/fifo.out.decode")"

# A reader that reads the first 20000 bytes and goes away (EPIPE).
rm -f "$T/fifo.pcapng" "$T/uroce0.log"
mkfifo "$T/fifo.pcapng"
head -c 20000 "$T/fifo.pcapng" >"$T/fifo.head" &
start_rnic uroce0 "$ADDR0" --pcap "$T/fifo.pcapng"
start_rnic uroce1 "$ADDR1"
pingpong gone 4096 200 "ping-pong after the capture's reader went away"
sleep 1
errors=$(counter uroce0 daemon.pcap_errors)
stop_rnics
warned=$(grep -c "capture: .*fifo.pcapng: Broken pipe; the rest of this file is lost" "$T/uroce0.log")
[ "$errors" = 1 ] && [ "$warned" -eq 1 ] && [ "$(stat -c %s "$T/fifo.head")" -eq 20000 ] &&
	pass "the reader's going away: one warning, pcap_errors 1, the reader had its 20000 bytes" ||
	fail "the reader's going away: pcap_errors '$errors', $warned warnings, $(stat -c %s "$T/fifo.head") bytes read"
finish

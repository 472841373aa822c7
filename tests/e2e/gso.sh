#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# UDP GSO between two uroce RNICs (docs/daemon.md "GSO and GRO"): 64 KiB
# WRITE, SEND and READ traffic (perftest), 8 KiB WRITEs, and data-checking
# ibv_rc_pingpong -c runs of 64 KiB and 10000-byte messages (whose last
# packets end GSO datagrams shorter than the others), once per ICRC mode: exact (needs CAP_NET_RAW; a
# uroce peer's datagrams, ID 0, reach the UDP socket, whose filter vouches
# for their header, not the raw socket: each segment is checked exactly) and
# tracked (each segment is checked for the ID a uroce peer gives it); in both
# UDP_GRO hands a GSO datagram over whole with its segment size. (The raw
# socket's cut of a GSO datagram seen whole: e2e_icrc.)
# In each: everything exits 0, the senders sent GSO datagrams and the
# receivers cut as many packets out of them and wrote their payloads to
# memory from the receive buffers (dma_in_place with private registered
# memory, UROCE_MAP_MR=0; then a pingpong with memory the daemon maps,
# dma_mapped_bytes), no packet failed its ICRC, and
# in tracked mode no ID had to be solved (each segment matched the ID a
# uroce peer gives it: all 32 bits kept); both daemons' captures (segments
# with their own IDs) and a tshark capture of lo (GSO datagrams whole, read
# back by `uroce decode` as their packets) have every ICRC valid. Then with
# --gso off nothing is sent as GSO and the transfer still works.
. "$(dirname "$0")/lib.sh"
need_prog ib_write_bw
need_prog ib_send_bw
need_prog ib_read_bw
need_prog ibv_rc_pingpong
unset UROCE_ICRC


# traffic LABEL: the perftest runs and the pingpong; each must succeed.
traffic() {
	local prog
	for prog in ib_write_bw ib_send_bw ib_read_bw; do
		run_perftest "$prog.$1" 120 run \
			"$prog" -d uroce0 -x 0 -F -s 65536 -n 300 -- \
			"$prog" -d uroce1 -x 0 -F -s 65536 -n 300 "$ADDR0"
		if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] &&
			perftest_plausible "$prog" "$T/$prog.$1.client"; then
			pass "$1: $prog 64 KiB: $(perftest_row "$T/$prog.$1.client" | tr -s ' ')"
		else
			fail "$1: $prog: server exit $SERVER_RC, client exit $CLIENT_RC"
			show_pair "$prog.$1"
		fi
	done
	# Messages whose last packet is shorter than the others end a GSO
	# datagram with it: a WRITE of two packets (First, Last) is one
	# datagram, a 10000-byte SEND (First, Middle, Last) too. (-t 1: one
	# WRITE outstanding, so a window with room for the First alone never
	# splits them; with more, that depends on when ACKs come.)
	run_perftest "ib_write_bw.8k.$1" 120 run \
		ib_write_bw -d uroce0 -x 0 -F -s 8192 -n 300 -t 1 -- \
		ib_write_bw -d uroce1 -x 0 -F -s 8192 -n 300 -t 1 "$ADDR0"
	if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] &&
		perftest_plausible ib_write_bw "$T/ib_write_bw.8k.$1.client"; then
		pass "$1: ib_write_bw 8 KiB: $(perftest_row "$T/ib_write_bw.8k.$1.client" | tr -s ' ')"
	else
		fail "$1: ib_write_bw 8 KiB: server exit $SERVER_RC, client exit $CLIENT_RC"
		show_pair "ib_write_bw.8k.$1"
	fi
	pingpong "$1"
	pingpong "$1.10000" 10000
}

# pingpong LABEL [SIZE]: a data-checking ibv_rc_pingpong of SIZE-byte
# messages (default 64 KiB).
pingpong() {
	local size=${2:-65536}
	next_tcp_port
	run_pair "pp.$1" 120 run \
		ibv_rc_pingpong -d uroce0 -g 0 -p "$TCP_PORT" -s "$size" -n 200 -c -- \
		ibv_rc_pingpong -d uroce1 -g 0 -p "$TCP_PORT" -s "$size" -n 200 -c "$ADDR0"
	if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] &&
		! grep -qi "invalid\|error" "$T/pp.$1.client" "$T/pp.$1.server"; then
		pass "$1: ibv_rc_pingpong -c $size B x 200: data checked"
	else
		fail "$1: ibv_rc_pingpong -c $size B: server exit $SERVER_RC, client exit $CLIENT_RC"
		show_pair "pp.$1"
	fi
}

# gso_checks MODE: the counters of a GSO run in ICRC mode MODE.
gso_checks() {
	local mode=$1 d c tx rx bad solved ok
	for d in uroce0 uroce1; do
		bad=$(counter "$d" drop.bad_icrc)
		check "$mode: $d dropped no packet for its ICRC (bad_icrc $bad)" [ "$bad" = 0 ]
		tx=$(counter "$d" daemon.tx_gso_sends)
		check "$mode: $d sent GSO datagrams ($tx)" [ "$tx" -gt 0 ]
		# 300 WRITEs of 8 KiB from uroce1 and 200 SENDs of 10000 bytes
		# each way, each one datagram ended by its shorter last packet
		tx=$(counter "$d" daemon.tx_gso_tails)
		c=200
		[ "$d" = uroce1 ] && c=500
		check "$mode: $d ended GSO datagrams with a shorter last packet ($tx, at least $c)" \
			[ "$tx" -ge "$c" ]
	done
	# What one sent whole the other cut apart: loopback loses nothing but
	# what a full socket buffer drops, and retransmissions are sent again.
	tx=$(($(counter uroce0 daemon.tx_gso_segments) + $(counter uroce1 daemon.tx_gso_segments)))
	rx=$(($(counter uroce0 daemon.rx_gso_segments) + $(counter uroce1 daemon.rx_gso_segments)))
	ok=0
	[ "$rx" -gt 0 ] && [ $((rx * 100)) -ge $((tx * 95)) ] && [ "$rx" -le "$tx" ] && ok=1
	check "$mode: $rx packets cut out of received GSO datagrams, of $tx sent in them" [ "$ok" = 1 ]
	# The payloads (uroce0: WRITE and SEND data, uroce1: READ responses)
	# went from the receive buffers to memory with no staging copy, and
	# the pingpong checked what arrived: through process_vm_writev for the
	# traffic with private memory (UROCE_MAP_MR=0), by a copy into the
	# daemon's mapping for the last pingpong's registered memory.
	for d in uroce0 uroce1; do
		c=$(counter "$d" daemon.dma_in_place)
		check "$mode: $d wrote received payloads from where they arrived (dma_in_place $c)" \
			[ "$c" -gt $((300 * 65536)) ]
		c=$(counter "$d" daemon.dma_mapped_bytes)
		check "$mode: $d copied the mapped pingpong's payloads into its mapping (dma_mapped_bytes $c)" \
			[ "$c" -gt $((200 * 65536)) ]
	done
	bad=$(($(counter uroce0 daemon.rx_gso_bad) + $(counter uroce1 daemon.rx_gso_bad)))
	check "$mode: no received datagram failed to cut (rx_gso_bad $bad)" [ "$bad" = 0 ]
	if [ "$mode" = exact ]; then
		c=$(($(counter uroce0 daemon.rx_raw_datagrams) + $(counter uroce1 daemon.rx_raw_datagrams)))
		ok=$(($(counter uroce0 xport.icrc_exact) + $(counter uroce1 xport.icrc_exact)))
		check "exact: every datagram through the UDP socket (rx_raw_datagrams $c), $ok packets checked exactly" \
			test "$c" = 0 -a "$ok" -gt 0
	fi
	if [ "$mode" = tracked ]; then
		solved=0
		for d in uroce0 uroce1; do
			for c in icrc_id_tracked icrc_id_first icrc_id_resync icrc_id_untracked icrc_id_guessed; do
				solved=$((solved + $(counter "$d" "xport.$c")))
			done
		done
		ok=0
		[ "$solved" = 0 ] && [ "$(counter uroce0 xport.icrc_id0)" -gt 0 ] && ok=1
		check "tracked: every packet matched the ID a uroce peer gives it (icrc_id0 $(counter uroce0 xport.icrc_id0) + $(counter uroce1 xport.icrc_id0), solved $solved)" \
			[ "$ok" = 1 ]
	fi
}

MODES="tracked"
if [ "$(id -u)" = 0 ]; then
	MODES="exact tracked"
else
	echo "note: not root, so no CAP_NET_RAW: the exact mode (raw socket) is not run"
fi
for mode in $MODES; do
	start_rnics --icrc "$mode"
	[ "$mode" = exact ] && lo_capture_start
	UROCE_MAP_MR=0 traffic "$mode"
	pingpong "$mode.mapped"
	gso_checks "$mode"
	[ "$mode" = exact ] && lo_capture_stop
	stop_rnics
	check_captures
	LO_CAP=
	mv "$T/uroce0.pcap" "$T/uroce0.$mode.pcap"
	mv "$T/uroce1.pcap" "$T/uroce1.$mode.pcap"
done

# Through a path that cuts GSO datagrams: two hosts in network namespaces
# whose veths have no segmentation offload (tests/lib/impair_net.sh, the
# impairment tool forwarding without impairing), the receivers in tracked
# mode: each segment arrives alone and passes as the one after the last ID
# of a uroce peer (icrc_id_gso), none fails its ICRC.
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null; then
	IMP_MTU=9000
	. "$UROCE_TEST_LIB/impair_net.sh"
	impair_net_up
	# cut_run MODE: the RNICs in ICRC mode MODE, ib_write_bw through the path;
	# both must exit 0. The RNICs stay up for the mode's counters.
	cut_run() {
		RNIC_LOG_TAG=.cut.$1 start_impair_rnics --icrc "$1"
		impair_start --seed 1
		SERVER_NS=$IMP_NS_A CLIENT_NS=$IMP_NS_B run_perftest "ib_write_bw.cut.$1" 120 run \
			ib_write_bw -d uroce0 -x 0 -F -s 65536 -n 300 -- \
			ib_write_bw -d uroce1 -x 0 -F -s 65536 -n 300 "$IMP_ADDR_A"
		check "cut path, $1: ib_write_bw 64 KiB: exit $SERVER_RC/$CLIENT_RC" \
			[ "$SERVER_RC$CLIENT_RC" = 00 ]
		# A First and its shorter Last in one GSO send: the kernel cuts
		# the Last off with the next ID, which its ICRC was sealed for.
		local tails=$(counter uroce1 daemon.tx_gso_tails)
		# (-t 1, as above: every WRITE's First has its Last behind it.)
		SERVER_NS=$IMP_NS_A CLIENT_NS=$IMP_NS_B run_perftest "ib_write_bw.cut8k.$1" 120 run \
			ib_write_bw -d uroce0 -x 0 -F -s 8192 -n 300 -t 1 -- \
			ib_write_bw -d uroce1 -x 0 -F -s 8192 -n 300 -t 1 "$IMP_ADDR_A"
		impair_stop
		tails=$(($(counter uroce1 daemon.tx_gso_tails) - tails))
		check "cut path, $1: ib_write_bw 8 KiB: exit $SERVER_RC/$CLIENT_RC, $tails datagrams of its 300 WRITEs ended by a shorter Last" \
			[ "$SERVER_RC$CLIENT_RC" = 00 -a "$tails" -ge 300 ]
	}
	cut_run tracked
	gso=$(counter uroce0 xport.icrc_id_gso)
	bad=$(counter uroce0 drop.bad_icrc)
	sent=$(counter uroce1 daemon.tx_gso_segments)
	ok=0
	[ "$sent" -gt 0 ] && [ "$gso" -gt 0 ] && [ "$bad" = 0 ] && ok=1
	check "cut path, tracked: $gso segments passed as a GSO datagram's next ($sent sent in GSO datagrams), bad_icrc $bad" [ "$ok" = 1 ]
	stop_rnics
	# The same in the exact mode: off loopback the raw socket takes every
	# segment (IDs 0, 1, 2, ...), in the order they came, each checked exactly.
	cut_run exact
	raw=$(counter uroce0 daemon.rx_raw_datagrams)
	rxd=$(counter uroce0 daemon.rx_datagrams)
	ex=$(counter uroce0 xport.icrc_exact)
	bad=$(counter uroce0 drop.bad_icrc)
	retx=$(counter uroce1 xport.retx_pkts)
	nak=$(counter uroce0 xport.seq_nak_sent)
	ok=0
	[ "$raw" -gt 0 ] && [ "$raw" = "$rxd" ] && [ "$ex" -ge "$raw" ] && [ "$bad" = 0 ] && ok=1
	check "cut path, exact: all $rxd datagrams on the raw socket ($raw), $ex packets checked exactly, bad_icrc $bad (resent $retx, sequence NAKs $nak)" [ "$ok" = 1 ]
	stop_rnics
	impair_net_cleanup
else
	echo "note: not root: the path that cuts GSO datagrams (network namespaces) is not run"
fi

start_rnics --gso off
run_perftest ib_write_bw.off 120 run \
	ib_write_bw -d uroce0 -x 0 -F -s 65536 -n 300 -- \
	ib_write_bw -d uroce1 -x 0 -F -s 65536 -n 300 "$ADDR0"
check "--gso off: ib_write_bw 64 KiB: exit $SERVER_RC/$CLIENT_RC" \
	[ "$SERVER_RC$CLIENT_RC" = 00 ]
sends=$(($(counter uroce0 daemon.tx_gso_sends) + $(counter uroce1 daemon.tx_gso_sends)))
check "--gso off: no GSO datagram sent ($sends)" [ "$sends" = 0 ]
stop_rnics
finish

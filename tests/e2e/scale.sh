#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Many QPs between two uroce RNICs on loopback, no fault injected (issue 12,
# "Scale"): perftest's `ib_write_bw -q 1000 -n 100`, `ib_send_bw -q 1000 -n
# 100` and `ib_read_bw -q 128`, server on uroce0, client on uroce1. Each must
# finish within its timeout with exit 0 on both sides, a BW average > 0 and
# no completion error (before the flow control of emu/xport/flow.c they
# ended in IBV_WC_RETRY_EXC_ERR, status 12, with a third of the datagrams
# dropped by the kernel). The daemons' retransmission and flow-control
# counters and the host's UdpRcvbufErrors are printed for each run (the
# latter counts every socket of the machine, so it is shown, not checked).
# After the 1000-QP runs each daemon's peak resident memory (VmHWM) must
# be below 64 MiB, registered memory the daemon maps included: perftest
# registers one MR for the buffers of all its QPs, 64 MiB and more, which
# each daemon refused to map (past its --map-budget: mr_maps_over_budget)
# and reached with process_vm_* instead (dma_bytes). perftest's peak-BW computation is quadratic in
# iterations x QPs (13 s of its own CPU for 100 x 1000), so it runs with
# -N (--noPeak): the traffic is the same. No captures: the runs move 15 GB.
. "$(dirname "$0")/lib.sh"
RNIC_PCAP=0

# program | QPs | perftest options beyond -q | seconds allowed
RUNS=(
	"ib_write_bw|1000|-n 100|120"
	"ib_send_bw|1000|-n 100|120"
	"ib_read_bw|128||120"
)
HWM_LIMIT_KB=$((64 * 1024))
# The memory bound is the release build's: AddressSanitizer's shadow memory
# and redzones alone exceed it.
HWM_CHECK=1
if ldd "$UROCE_BIN/uroced" 2>/dev/null | grep -q libasan; then
	HWM_CHECK=0
fi
for r in "${RUNS[@]}"; do
	need_prog "${r%%|*}"
done

# rcvbuf_errors: the host's UdpRcvbufErrors (/proc/net/snmp).
rcvbuf_errors() {
	awk '/^Udp:/ { if (!h) { for (i = 2; i <= NF; i++) if ($i == "RcvbufErrors") c = i; h = 1 }
		else print $c }' /proc/net/snmp
}

# retx_summary NAME: the transport's retransmission and flow-control
# counters of device NAME, one line.
RETX_KEYS="xport.retx_pkts xport.retry_timeout xport.retry_nak_seq xport.retry_implied
	xport.seq_nak_sent xport.flow_wait xport.qp_error daemon.tx_dropped drop.no_qp"
retx_summary() {
	local k out=""
	for k in $RETX_KEYS; do
		out="$out ${k#*.}=$(counter "$1" "$k")"
	done
	echo "$1:$out"
}

# vmhwm NAME: peak resident memory of daemon NAME in kB.
vmhwm() {
	awk '/^VmHWM:/ { print $2 }' "/proc/${DAEMON_PID[$1]}/status"
}

start_rnics
for r in "${RUNS[@]}"; do
	IFS='|' read -r prog qps opts secs <<<"$r"
	label="$prog-q$qps"
	drops0=$(rcvbuf_errors)
	# shellcheck disable=SC2086 # opts is a list of words
	run_perftest "$label" "$secs" run \
		"$prog" -d uroce0 -x 0 -F -N -q "$qps" $opts -- \
		"$prog" -d uroce1 -x 0 -F -N -q "$qps" $opts "$ADDR0"
	drops=$(($(rcvbuf_errors) - drops0))
	what="$prog -q $qps $opts"
	if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] &&
		perftest_plausible "$prog" "$T/$label.client" &&
		! grep -qE 'status 12|RETRY_EXC|Completion with error' "$T/$label.client" "$T/$label.server"; then
		pass "$what: $(perftest_row "$T/$label.client" | tr -s ' ') [${PAIR_MS} ms]"
	else
		fail "$what: server exit $SERVER_RC, client exit $CLIENT_RC," \
			"row '$(perftest_row "$T/$label.client")'"
		show_pair "$label"
	fi
	echo "    host UdpRcvbufErrors +$drops during the run; totals so far:"
	echo "    $(retx_summary uroce0)"
	echo "    $(retx_summary uroce1)"
	if [ "$qps" -ge 1000 ] && [ "$HWM_CHECK" = 0 ]; then
		echo "    (VmHWM $(vmhwm uroce0) / $(vmhwm uroce1) kB, not checked: AddressSanitizer build)"
	elif [ "$qps" -ge 1000 ]; then
		for n in uroce0 uroce1; do
			hwm=$(vmhwm "$n")
			if [ "${hwm:-0}" -gt 0 ] && [ "$hwm" -lt "$HWM_LIMIT_KB" ]; then
				pass "$n VmHWM $hwm kB < $HWM_LIMIT_KB kB after $what"
			else
				fail "$n VmHWM '${hwm:-?}' kB, not below $HWM_LIMIT_KB kB after $what"
			fi
		done
	fi
	if [ "$qps" -ge 1000 ]; then
		for n in uroce0 uroce1; do
			mapped=$(counter "$n" daemon.dma_mapped_bytes)
			over=$(counter "$n" daemon.mr_maps_over_budget)
			vm=$(counter "$n" daemon.dma_bytes)
			if [ "$over" -gt 0 ] && [ "$vm" -gt $((qps * 65536)) ]; then
				pass "$n after $what: dma_mapped_bytes $mapped, mr_maps_over_budget $over, dma_bytes $vm"
			else
				fail "$n after $what: dma_mapped_bytes $mapped, mr_maps_over_budget $over, dma_bytes $vm"
			fi
		done
	fi
done
stop_rnics
finish

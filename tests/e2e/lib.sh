# SPDX-License-Identifier: MIT
# Helpers of the end-to-end tests (sourced by bash scripts), on top of
# tests/lib/common.sh (network claim, temporary directory, cleanup of
# everything started, pass/fail counting, TCP ports of the test's range).
#
# Every test gets a private run directory and its own pair of RNICs, uroce0 and
# uroce1, on the loopback /24 the allocator gave it (E2E_NET.1 and E2E_NET.2,
# UDP 4791), so that tests can run in parallel with each other, with another
# build's tests and beside a developer's daemons on 127.0.0.1/127.0.0.2. Every
# daemon writes a capture. Every command runs under a timeout so that nothing
# can hang CI.
#
# Environment (set by CMake): that of common.sh. E2E_NET, the first three
# octets of the RNICs' /24, is the test's loopback /24 (UROCE_TEST_NET) unless
# the script sets it before sourcing this file (netns.sh puts its private /24
# on a veth pair).

. "$UROCE_TEST_LIB/common.sh"
E2E_NET=${E2E_NET:-$TEST_NET}
ADDR0=$E2E_NET.1
ADDR1=$E2E_NET.2
declare -A DAEMON_PID

now_ms() { date +%s%3N; }

# check DESCRIPTION COMMAND...: pass when COMMAND succeeds.
check() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}

# ---------------------------------------------------------------- daemons

# A test may put its hosts in network namespaces (netns.sh does): HOST_NS
# selects the namespace of the next start_rnic/via_cmd/run_pair side ("" = this
# one). Each namespace is a separate host with its own run directory.
HOST_NS=""

# ns_exec NS COMMAND...: runs COMMAND in network namespace NS ("" = here),
# in the foreground.
ns_exec() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@"
	else
		"$@"
	fi
}

# ns_prefix NS: sets NS_PREFIX to the command words that run a program in NS
# (none for ""). Background jobs are started as "${NS_PREFIX[@]}" PROGRAM &,
# a simple command, so that $! is the program itself (ip netns exec execs
# it) and a signal to $! reaches it.
ns_prefix() {
	NS_PREFIX=()
	if [ -n "$1" ]; then
		NS_PREFIX=(ip netns exec "$1")
	fi
}

# rundir_of NS: the run directory of the host in NS.
rundir_of() {
	if [ -n "$1" ]; then echo "$T/run-$1"; else echo "$UROCE_RUNDIR"; fi
}

# start_rnic NAME ADDR [uroced options...]: starts uroced (in HOST_NS) with a
# capture in $T/NAME.pcap (unless RNIC_PCAP=0: tests that move gigabytes) and
# its log in $T/NAME.log, then waits (10 s at most) until it serves
# (start_uroced). Exits the test on failure.
RNIC_PCAP=1
start_rnic() {
	local name=$1 addr=$2
	local -a cap=()
	shift 2
	[ "$RNIC_PCAP" = 0 ] || cap=(--pcap "$T/$name.pcap")
	start_uroced "$name" "$addr" "$T/$name.log" "$(rundir_of "$HOST_NS")" "$HOST_NS" \
		"${cap[@]}" "$@"
	DAEMON_PID[$name]=$LAST_PID
}

start_rnics() {
	start_rnic uroce0 "$ADDR0" "$@"
	start_rnic uroce1 "$ADDR1" "$@"
}

# start_impair_rnics [uroced options...]: uroce0 on host A and uroce1 on host B
# of tests/lib/impair_net.sh (sourced and up first), both with the test's one
# run directory, so that one process (rc_semantics) can open both RNICs; each
# daemon still lives in its host's namespace. Logs in $T/NAME$RNIC_LOG_TAG.log.
RNIC_LOG_TAG=""
start_impair_rnics() {
	rundir_of() { echo "$UROCE_RUNDIR"; }
	mkdir -p "$UROCE_RUNDIR"
	start_uroced uroce0 "$IMP_ADDR_A" "$T/uroce0$RNIC_LOG_TAG.log" "$UROCE_RUNDIR" "$IMP_NS_A" "$@"
	DAEMON_PID[uroce0]=$LAST_PID
	start_uroced uroce1 "$IMP_ADDR_B" "$T/uroce1$RNIC_LOG_TAG.log" "$UROCE_RUNDIR" "$IMP_NS_B" "$@"
	DAEMON_PID[uroce1]=$LAST_PID
}

# rxe_capture_ns SHARED_DIR TAG: the rping capture of Linux rxe between two hosts
# (SHARED_DIR/captures/real_rxe-2host_rdmacm-rping.pcap, in PCAP; skips (77) when it
# is absent) and a network namespace of this test's own (NS, named after TAG, removed
# at exit) whose lo holds the capture's two addresses, 10.77.0.2 and 10.77.0.3, with
# the run directory RD of its host.
rxe_capture_ns() {
	local caps=${1:-}/captures
	PCAP=$caps/real_rxe-2host_rdmacm-rping.pcap
	[ -r "$PCAP" ] || skip "no reference captures: $caps is absent (UROCE_SHARED_DIR)"
	need_prog ip
	NS=uroce-t$UROCE_TEST_SLOT-$UROCE_TEST_INDEX-$2
	ns_cleanup() { ip netns del "$NS" 2>/dev/null; }
	ns_cleanup
	ip netns add "$NS" 2>"$T/netns.err" ||
		skip "cannot create network namespaces here: $(cat "$T/netns.err")"
	at_exit ns_cleanup
	ip -n "$NS" link set lo up && ip -n "$NS" addr add 10.77.0.2/24 dev lo &&
		ip -n "$NS" addr add 10.77.0.3/24 dev lo ||
		skip "cannot set up the capture's addresses in $NS"
	RD=$(rundir_of "$NS")
	mkdir -p "$RD"
}

# counter NAME COUNTER [RUNDIR [NS]]: a counter of RNIC NAME as `uroce counters
# --all` names it (daemon.tx_gso_sends, drop.bad_icrc...), 0 when absent; of
# the RNIC in network namespace NS when one is given.
counter() {
	local in=()
	[ -n "${4:-}" ] && in=(ip netns exec "$4")
	timeout 10 "${in[@]}" "$UROCE_BIN/uroce" counters "$1" --all --rundir "${3:-$UROCE_RUNDIR}" |
		awk -v c="$2" '$1 == c { v = $2 } END { printf "%.0f\n", v + 0 }'
}

# stop_rnic NAME: SIGTERM, then waits up to 10 s; it must exit 0 (capture
# flushed and closed).
stop_rnic() {
	local name=$1 pid=${DAEMON_PID[$1]} rc=0
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
		fail "uroced $name ignored SIGTERM for 10 s (killed)"
		return
	fi
	wait "$pid" || rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "uroced $name stopped cleanly on SIGTERM"
	else
		fail "uroced $name exited $rc on SIGTERM"
		show "$T/$name.log"
	fi
}

stop_rnics() {
	stop_rnic uroce0
	stop_rnic uroce1
}

# ---------------------------------------------------------------- programs

# via_cmd MODE: sets VIA to the command words that run a verbs program (in
# HOST_NS) on the RNICs of that host: MODE run = through `uroce run` (the shim
# preloaded), preload = LD_PRELOAD of the shim by hand, dropin = the drop-in
# libibverbs.so.1 and librdmacm.so.1 on LD_LIBRARY_PATH, run-dropin = uroce run
# with the drop-ins on LD_LIBRARY_PATH as well. Use: via_cmd run; "${VIA[@]}" PROGRAM...
# For preload and dropin, PRELOAD_FIRST (a library loaded before the shim: a
# sanitizer's runtime) and PROG_ENV (NAME=VALUE words) apply to the program.
PRELOAD_FIRST=""
PROG_ENV=()
via_cmd() {
	local rundir
	rundir=$(rundir_of "$HOST_NS")
	ns_prefix "$HOST_NS"
	case $1 in
	run) VIA=("${NS_PREFIX[@]}" "$UROCE_BIN/uroce" run --rundir "$rundir" --) ;;
	preload) VIA=("${NS_PREFIX[@]}" env UROCE_RUNDIR="$rundir" "${PROG_ENV[@]}"
		LD_PRELOAD="${PRELOAD_FIRST:+$PRELOAD_FIRST:}$UROCE_LIB/liburoce.so") ;;
	dropin) VIA=("${NS_PREFIX[@]}" env UROCE_RUNDIR="$rundir" "${PROG_ENV[@]}"
		${PRELOAD_FIRST:+LD_PRELOAD="$PRELOAD_FIRST"} LD_LIBRARY_PATH="$UROCE_LIB/ibverbs") ;;
	run-dropin) VIA=("${NS_PREFIX[@]}" "$UROCE_BIN/uroce" run --rundir "$rundir" --
		env LD_LIBRARY_PATH="$UROCE_LIB/ibverbs") ;;
	*) echo "via_cmd: unknown mode $1" >&2; exit 2 ;;
	esac
}

# bg_via LABEL SECS PROGRAM [ARGS...]: starts PROGRAM in the background
# through VIA (via_cmd) under a timeout of SECS, output in $T/LABEL, killed at
# exit with the others (BG_PIDS); sets BG_PID.
bg_via() {
	local label=$1 secs=$2
	shift 2
	"${VIA[@]}" timeout -k 5 "$secs" "$@" >"$T/$label" 2>&1 &
	BG_PID=$!
	BG_PIDS="$BG_PIDS $BG_PID"
}

# bg_pingpong SERVER_ARGS... -- CLIENT_ARGS...: an endless ibv_rc_pingpong (-n 10^8,
# 120 s at most) in the background through `uroce run`, server on uroce0, client on
# uroce1, each with its extra ARGS; returns once the client is started. Sets SPID and
# CPID (the background jobs).
bg_pingpong() {
	local -a srv=() cli=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	cli=("$@")
	next_tcp_port
	via_cmd run
	bg_via pp.server 120 ibv_rc_pingpong -d uroce0 -g 0 -p "$TCP_PORT" -n 100000000 "${srv[@]}"
	SPID=$BG_PID
	await_listen "$TCP_PORT" "$SPID" || fail "server did not listen on TCP port $TCP_PORT"
	bg_via pp.client 120 ibv_rc_pingpong -d uroce1 -g 0 -p "$TCP_PORT" -n 100000000 "${cli[@]}" "$ADDR0"
	CPID=$BG_PID
}

# end_programs PIDS WAITPIDS: ends the verbs programs PIDS (SIGCONT in case they were
# stopped, then SIGTERM) and waits for the background jobs WAITPIDS that ran them.
end_programs() {
	local p
	for p in $1; do
		kill -CONT "$p" 2>/dev/null
		kill -TERM "$p" 2>/dev/null
	done
	for p in $2; do
		wait "$p" 2>/dev/null
	done
}

# check_none_left WHAT KIND...: once the programs are gone, `uroce KIND` lists nothing on
# uroce0 and uroce1 (waits 5 s at most) and `uroce KIND uroce0 --json` is an empty array.
check_none_left() {
	local what=$1 k d gone=0
	shift
	for _ in $(seq 50); do
		gone=1
		for k in "$@"; do
			for d in uroce0 uroce1; do
				"$UROCE_BIN/uroce" "$k" "$d" | grep -q "^$d has no " || gone=0
			done
		done
		[ "$gone" = 1 ] && break
		sleep 0.1
	done
	check "once the programs are gone the devices have no $what" test "$gone" = 1
	for k in "$@"; do
		check "uroce $k --json of a device without any is an empty array" \
			test "$("$UROCE_BIN/uroce" "$k" uroce0 --json)" = "[]"
	done
}

# rc_pingpong_pair LABEL SECS OPTIONS...: ibv_rc_pingpong with OPTIONS on
# both sides, the server on uroce0 and the client on uroce1 (to ADDR0),
# through `uroce run` on the next TCP port (run_pair, which sets SERVER_RC
# and CLIENT_RC). 0 when both exit 0, the client printed its "iters in" line
# and neither reported invalid data or an error.
rc_pingpong_pair() {
	local label=$1 secs=$2
	shift 2
	next_tcp_port
	run_pair "$label" "$secs" run \
		ibv_rc_pingpong -d uroce0 -g 0 -p "$TCP_PORT" "$@" -- \
		ibv_rc_pingpong -d uroce1 -g 0 -p "$TCP_PORT" "$@" "$ADDR0"
	[ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] && grep -q 'iters in' "$T/$label.client" &&
		! grep -qi "invalid\|error" "$T/$label.client" "$T/$label.server"
}

# run_pair LABEL SECS MODE SERVER_ARGS... -- CLIENT_ARGS...
# Runs a server/client pair of verbs programs through MODE (see via_cmd), each
# under a timeout of SECS: the server first (in namespace SERVER_NS, default
# here), the client (in CLIENT_NS) once the server listens on TCP_PORT (the
# caller puts that port in both command lines). Output goes to
# $T/LABEL.server and $T/LABEL.client; sets SERVER_RC, CLIENT_RC and PAIR_MS.
SERVER_NS=""
CLIENT_NS=""
run_pair() {
	local label=$1 secs=$2 mode=$3 spid t0
	shift 3
	local -a srv=() cli=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	cli=("$@")
	t0=$(now_ms)
	HOST_NS=$SERVER_NS via_cmd "$mode"
	"${VIA[@]}" timeout -k 5 "$secs" "${srv[@]}" >"$T/$label.server" 2>&1 &
	spid=$!
	BG_PIDS="$BG_PIDS $spid"
	if ! await_listen "$TCP_PORT" "$spid" "$SERVER_NS"; then
		echo "(server did not listen on TCP port $TCP_PORT)" >>"$T/$label.server"
	fi
	CLIENT_RC=0
	HOST_NS=$CLIENT_NS via_cmd "$mode"
	"${VIA[@]}" timeout -k 5 "$secs" "${cli[@]}" >"$T/$label.client" 2>&1 || CLIENT_RC=$?
	SERVER_RC=0
	wait "$spid" || SERVER_RC=$?
	PAIR_MS=$(($(now_ms) - t0))
}

# cm_listens: the number of listens the RNICs' logs have recorded so far (uroced
# logs each RDMA CM listen, "CM: pid P listens on service S").
cm_listens() {
	cat "$T"/uroce[01].log 2>/dev/null | grep -c 'CM: pid .* listens on service'
}

# wait_cm_listens N PID: waits (10 s at most) until the logs hold N listens or
# PID is gone.
wait_cm_listens() {
	for _ in $(seq 200); do
		[ "$(cm_listens)" -ge "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# rping_race_exit FILE RC: did the rping whose output is FILE (exit status RC)
# meet rping's own race? Its event thread calls rdma_get_cm_event(cb->cm_channel)
# again after the DISCONNECT while the main thread destroys and frees that
# channel and exits (rping.c, cm_thread vs main): if the thread comes back
# after the free, it reads a freed fd and exits 255 with "rdma_get_cm_event:
# Bad file descriptor", every ping done (its stderr line comes before the
# pings, which stdout writes at exit). On a kernel the thread is usually
# blocked in write(2) by then; on a loaded machine either side may meet it.
# The callers check that the pings were done.
rping_race_exit() {
	[ "$2" -eq 255 ] && grep -qx 'rdma_get_cm_event: Bad file descriptor' "$1"
}

# cm_pair LABEL SECS NLISTEN SERVER... -- CLIENT...: run_pair for programs that
# meet through the RDMA CM alone (no TCP): the client starts once the server's
# NLISTEN listens (1 on one RNIC, 2 for a wildcard address) are in the logs.
# Output in $T/LABEL.server and .client; sets SERVER_RC, CLIENT_RC, PAIR_MS.
# Both run through `uroce run`, or the via_cmd mode CM_VIA names (dropin).
cm_pair() {
	local label=$1 secs=$2 want spid t0
	want=$(($(cm_listens) + $3))
	shift 3
	local -a srv=() cli=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	cli=("$@")
	t0=$(now_ms)
	via_cmd "${CM_VIA:-run}"
	"${VIA[@]}" timeout -k 5 "$secs" "${srv[@]}" >"$T/$label.server" 2>&1 &
	spid=$!
	BG_PIDS="$BG_PIDS $spid"
	wait_cm_listens "$want" "$spid" || echo "(the server did not listen)" >>"$T/$label.server"
	CLIENT_RC=0
	"${VIA[@]}" timeout -k 5 "$secs" "${cli[@]}" >"$T/$label.client" 2>&1 || CLIENT_RC=$?
	SERVER_RC=0
	wait "$spid" || SERVER_RC=$?
	PAIR_MS=$(($(now_ms) - t0))
}

# run_perftest LABEL SECS VIA SERVER... -- CLIENT...: run_pair for a perftest
# pair, run once more if perftest could not measure the CPU clock. perftest
# times with the TSC, whose rate it first measures; on a loaded machine that
# measurement can fail ("Correlation coefficient r^2 ... < 0.9") and every
# figure is then 0, which says nothing about the RNIC. Anything else is
# judged as it is. The command lines must not contain the TCP port: each
# program gets -p TCP_PORT (a fresh port per attempt) after its name.
run_perftest() {
	local label=$1 secs=$2 via=$3 attempt args=() a first
	shift 3
	for attempt in 1 2; do
		next_tcp_port
		args=()
		first=1
		for a in "$@"; do
			args+=("$a")
			if [ "$first" = 1 ]; then
				args+=(-p "$TCP_PORT")
				first=0
			fi
			[ "$a" = -- ] && first=1
		done
		run_pair "$label" "$secs" "$via" "${args[@]}"
		grep -q "Correlation coefficient" "$T/$label.client" "$T/$label.server" || return 0
		echo "    $label: perftest could not measure the CPU clock (attempt $attempt)"
	done
}

# perftest_row FILE: perftest's result row, the first line that starts with a
# number after the "#bytes" header line.
perftest_row() {
	awk '/^ *#bytes/ { h = 1; next } h && /^ *[0-9]/ { print; exit }' "$1"
}

# perftest_plausible PROG FILE: the result row of PROG's output FILE is
# plausible: BW average > 0 MB/s for the bandwidth tests, t_typical > 0 us
# for the latency tests.
# bw rows: #bytes #iterations BW-peak BW-average MsgRate
# lat rows: #bytes #iterations t_min t_max t_typical t_avg t_stdev p99 p99.9
perftest_plausible() {
	local row
	row=$(perftest_row "$2")
	[ -n "$row" ] || return 1
	case $1 in
	*_bw) awk '{ exit !($4 + 0 > 0) }' <<<"$row" ;;
	*_lat) awk '{ exit !($5 + 0 > 0) }' <<<"$row" ;;
	esac
}

# show_pair LABEL: both outputs, for failure reports.
show_pair() {
	echo "    server ($*):"
	show "$T/$1.server"
	echo "    client:"
	show "$T/$1.client"
}

# ---------------------------------------------------------------- captures

# lo_capture_start [IFACE NS PROBE_ADDR]: starts tshark on IFACE (default
# lo) in namespace NS for this test's RoCEv2 traffic (capture filter
# LO_FILTER, which must let the probes through) and waits until the
# capture filter is live: probe datagrams to UDP port 9 of PROBE_ADDR (default
# E2E_NET.3; nobody listens there and `uroce decode` ignores them) are sent
# until the capture file grows past its header. Sets LO_CAP ("" when
# capturing is not permitted here, with a message saying so).
LO_CAP=""
LO_PID=""
LO_NS="" LO_PROBE="" LO_FILE="" # lo_capture_start's namespace, probe address, file
LO_DROPS=0
LO_FILTER="udp and net $E2E_NET.0/24 and (port 4791 or dst port 9)"
# lo_probe PAYLOAD: one probe datagram to UDP port 9 of the capture's probe
# address, sent from its namespace (nobody listens; `uroce decode` ignores it).
lo_probe() {
	ns_exec "$LO_NS" bash -c "echo $1 >/dev/udp/$LO_PROBE/9" 2>/dev/null
}
lo_capture_start() {
	local ifc=${1:-lo} ns=${2:-} probe=${3:-$E2E_NET.3} hdr=0 size cap
	cap=$T/$ifc.pcapng
	if ! command -v tshark >/dev/null; then
		echo "SKIP ($ifc capture): tshark is not installed"
		return 0
	fi
	# no packet printing: tshark only supervises dumpcap, which writes the file
	ns_prefix "$ns"
	"${NS_PREFIX[@]}" tshark -i "$ifc" -B 64 -w "$cap" -f "$LO_FILTER" \
		>"$T/lo.tshark.out" 2>"$T/lo.tshark.err" &
	LO_PID=$!
	LO_NS=$ns LO_PROBE=$probe LO_FILE=$cap
	BG_PIDS="$BG_PIDS $LO_PID"
	for _ in $(seq 150); do
		if ! kill -0 "$LO_PID" 2>/dev/null; then
			echo "SKIP ($ifc capture): tshark cannot capture on $ifc here:"
			show "$T/lo.tshark.err"
			LO_PID=""
			return 0
		fi
		size=$(stat -c %s "$cap" 2>/dev/null || echo 0)
		if [ "$hdr" -eq 0 ]; then
			hdr=$size
		elif [ "$size" -gt "$hdr" ]; then
			LO_CAP=$cap
			return 0
		fi
		lo_probe probe
		sleep 0.1
	done
	echo "SKIP ($ifc capture): tshark did not capture its probe within 15 s:"
	show "$T/lo.tshark.err"
	kill "$LO_PID" 2>/dev/null
	LO_PID=""
	return 0
}

lo_capture_stop() {
	local mark=uroce-capture-end-$$-$RANDOM
	[ -n "$LO_PID" ] || return 0
	# The tap hands dumpcap packets in the order they crossed the interface:
	# once an end marker (a probe with a payload of its own) is in the file,
	# so is everything sent before it. Under load dumpcap lags well behind
	# the traffic, and what it had not written when stopped was lost
	# without counting as dropped.
	for _ in $(seq 100); do
		lo_probe "$mark"
		sleep 0.1
		grep -qaF "$mark" "$LO_FILE" 2>/dev/null && break
	done
	kill -INT "$LO_PID" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$LO_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$LO_PID" 2>/dev/null
	wait "$LO_PID" 2>/dev/null
	LO_PID=""
	LO_DROPS=$(awk '/packets dropped/ { n += $1 } END { print n + 0 }' "$T/lo.tshark.err")
	grep -iE 'dropped|captured' "$T/lo.tshark.err" | sed 's/^/    tshark: /'
}

# qp_psn: how many distinct (QP, PSN) pairs the `uroce decode` lines on stdin
# name. Requests are counted this way: on a loaded machine an RC requester
# may send one again (go-back-N after its timeout), and a responder answer a
# duplicate again, as RC allows; each copy of one PSN is the same request.
qp_psn() { sed -n 's/.* \(QP=0x[0-9a-f]* PSN=[0-9]*\) .*/\1/p' | sort -u | wc -l; }

# decode_summary CAP: runs `uroce decode`; sets DEC_RC and DEC_N, DEC_OK,
# DEC_BAD, DEC_MAL from its summary line (-1 when missing; frames cut by a
# snap length are in DEC_N but in none of the others); the packet lines
# are left in CAP.decode.
decode_summary() {
	local last
	DEC_RC=0
	timeout -k 5 120 "$UROCE_BIN/uroce" decode "$1" >"$1.decode" 2>"$1.decode.err" || DEC_RC=$?
	last=$(tail -n 1 "$1.decode")
	DEC_N=-1 DEC_OK=-1 DEC_BAD=-1 DEC_MAL=-1
	if [[ $last =~ ^roce\ packets:\ ([0-9]+),\ icrc\ ok:\ ([0-9]+),\ icrc\ bad:\ ([0-9]+),\ malformed:\ ([0-9]+)(,\ cut:\ [0-9]+)?$ ]]; then
		DEC_N=${BASH_REMATCH[1]} DEC_OK=${BASH_REMATCH[2]}
		DEC_BAD=${BASH_REMATCH[3]} DEC_MAL=${BASH_REMATCH[4]}
	fi
}

# sent_by CAP ADDR: number of decoded RoCEv2 packets in CAP sent from ADDR
# (the decoder writes IPv6 sources as [ADDR]:PORT).
sent_by() {
	local a="$2:"
	case $2 in *:*) a="[$2]:" ;; esac
	awk -v a="$a" 'index($2, a) == 1 { n++ } END { print n + 0 }' "$1.decode"
}

# check_decode CAP: `uroce decode` finds packets, every ICRC good, nothing
# malformed, exit status 0.
check_decode() {
	decode_summary "$1"
	if [ "$DEC_RC" -eq 0 ] && [ "$DEC_N" -gt 0 ] && [ "$DEC_BAD" -eq 0 ] &&
		[ "$DEC_MAL" -eq 0 ] && [ "$DEC_OK" -eq "$DEC_N" ]; then
		pass "uroce decode $(basename "$1"): $DEC_N packets, all ICRC ok"
	else
		fail "uroce decode $(basename "$1") (exit $DEC_RC): $(tail -n 1 "$1.decode")"
		grep -v 'icrc=ok' "$1.decode" | head -n 5 | sed 's/^/    | /'
		show "$1.decode.err" 5
	fi
}

# check_tshark CAP: tshark's RoCEv2 dissector finds no malformed packet and no
# expert warning (with the rpcrdma heuristic off: it would claim SEND
# payloads). One kind of report is not about the packet: when payload bytes 2-3
# are zero, Wireshark's InfiniBand dissector guesses that the payload is an
# EtherType-framed protocol (packet-infiniband.c: "There is no way to identify
# these frames positively") and flags the guess as malformed when the
# application data is not such a frame. Those frames show the guessed layer
# right after infiniband in frame.protocols; they are counted and listed, and
# every other report fails the check.
check_tshark() {
	local rc=0 bad guessed
	if ! command -v tshark >/dev/null; then
		echo "SKIP (tshark check of $(basename "$1")): tshark is not installed"
		return 0
	fi
	# (lo_capture_start's probes to port 9 are not RoCEv2: tshark may take
	# their random source port for some protocol's and call it malformed)
	timeout -k 5 180 tshark -r "$1" --disable-heuristic rpcrdma_infiniband \
		-Y '!(udp.dstport == 9) && (_ws.malformed || _ws.expert.severity >= warning)' \
		-T fields -e frame.number -e frame.protocols -e _ws.col.Info \
		>"$1.tshark" 2>"$1.tshark.err" || rc=$?
	bad=$(awk -F'\t' '$2 !~ /:infiniband:ethertype(:|$)/' "$1.tshark" | wc -l)
	guessed=$(awk -F'\t' '$2 ~ /:infiniband:ethertype(:|$)/' "$1.tshark" | wc -l)
	if [ "$rc" -eq 0 ] && [ "$bad" -eq 0 ]; then
		pass "tshark: no malformed packet or warning in $(basename "$1")"
	else
		fail "tshark on $(basename "$1") (exit $rc): $bad packets malformed or with warnings"
		awk -F'\t' '$2 !~ /:infiniband:ethertype(:|$)/' "$1.tshark" | head -n 10 | sed 's/^/    | /'
		show "$1.tshark.err" 10
	fi
	if [ "$guessed" -ne 0 ]; then
		echo "    note: in $guessed packets of $(basename "$1") tshark took the application" \
			"payload for an EtherType frame and flagged its guess:"
		awk -F'\t' '$2 ~ /:infiniband:ethertype(:|$)/' "$1.tshark" | head -n 3 | sed 's/^/    | /'
	fi
}

# check_captures: after stop_rnics, both daemon captures pass `uroce decode`
# and tshark; when a lo capture was taken, it passes `uroce decode` too and
# holds as many RoCEv2 packets as the two daemons say they sent.
check_captures() {
	local sent0 sent1 lo_n want diff
	check_decode "$T/uroce0.pcap"
	sent0=$(sent_by "$T/uroce0.pcap" "$ADDR0")
	check_decode "$T/uroce1.pcap"
	sent1=$(sent_by "$T/uroce1.pcap" "$ADDR1")
	check_tshark "$T/uroce0.pcap"
	check_tshark "$T/uroce1.pcap"
	[ -n "$LO_CAP" ] || return 0
	check_decode "$LO_CAP"
	lo_n=$DEC_N
	want=$((sent0 + sent1))
	diff=$((lo_n - want))
	diff=${diff#-}
	# The kernel's tap never invents packets, but it may drop some when the
	# capture falls behind (tshark reports how many): the difference must
	# stay within those drops, or within 1% of the traffic.
	if [ "$lo_n" -le "$want" ] &&
		{ [ "$diff" -le "${LO_DROPS:-0}" ] || [ $((diff * 100)) -le "$want" ]; }; then
		pass "$(basename "$LO_CAP" .pcapng) capture: $lo_n RoCEv2 packets, daemons sent $sent0 + $sent1 (tap dropped ${LO_DROPS:-0})"
	else
		fail "$(basename "$LO_CAP" .pcapng) capture: $lo_n RoCEv2 packets, but the daemons' captures show $sent0 + $sent1 sent (tap dropped ${LO_DROPS:-0})"
	fi
}

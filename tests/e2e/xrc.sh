#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# XRC between two uroce RNICs with rdma-core's ibv_xsrq_pingpong: the server
# on uroce0, clients on uroce1 (and one on uroce0), GID index 0, through `uroce
# run`. Each side opens the XRC domain of /tmp/xrc_domain, makes an XRC SRQ,
# XRC target (receive) and initiator (send) QPs per client, and every send
# names the peer's SRQ in its XRCETH. With -c N the server serves N client
# processes, and it sends each client's messages round robin over the QPs of
# all of them: a message for one client's SRQ arrives through the target QP
# another client process made, which works only because the processes of one
# RNIC that open the same file share one XRC domain. Every program must exit
# 0 and print "success". Then both captures must decode (uroce decode, every
# ICRC good; tshark, nothing malformed), and tshark with uroce's Lua plugin
# must show an XRCETH in every XRC request and in no response, naming
# (among others) every SRQ number the programs printed. Then xrc_domain (tests/verbs) checks the
# control path of two processes sharing a domain: open rules, ibv_open_qp,
# lifetimes, misuse errors; and perftest's bandwidth and latency tests run with
# -c XRC. Then xrc_mw (tests/verbs) binds a type 2 window through an XRC
# initiator QP of uroce1, WRITEs into it from uroce0, invalidates it with
# LOCAL_INV and, bound again, with a SEND with Invalidate that arrives on
# uroce1's XRC SRQ, and sees the XRC target QPs that enter Error report
# IBV_EVENT_QP_LAST_WQE_REACHED; its SEND with Invalidate must be in the
# captures as XRC SEND Only with Invalidate, with the XRCETH.
#
#   xrc.sh XRC_DOMAIN_PROGRAM XRC_MW_PROGRAM
. "$(dirname "$0")/lib.sh"
need_prog ibv_xsrq_pingpong
XRC_DOMAIN=$1
XRC_MW=$2

# label, then options given to every side
CASES=(
	"default|"
	"events|-e"
	"size-1|-s 1"
	"size-64k|-s 65536 -n 20"
	"mtu-1024|-m 1024 -s 8192"
	"odp|-o"
)

# check_xp LABEL FILE...: every output file says success and its program exited 0.
check_xp() {
	local label=$1 ok=1 f
	shift
	[ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] || ok=0
	for f in "$@"; do
		grep -qx success "$f" || ok=0
	done
	if [ $ok = 1 ]; then
		pass "ibv_xsrq_pingpong $label [${PAIR_MS} ms]"
	else
		fail "ibv_xsrq_pingpong $label: server exit $SERVER_RC, client exit $CLIENT_RC"
		for f in "$@"; do show "$f" 10; done
	fi
}

start_rnics
for c in "${CASES[@]}"; do
	label=${c%%|*}
	read -r -a opts <<<"${c#*|}"
	next_tcp_port
	run_pair "$label" 60 run \
		ibv_xsrq_pingpong -d uroce0 -g 0 -p "$TCP_PORT" "${opts[@]}" -- \
		ibv_xsrq_pingpong -d uroce1 -g 0 -p "$TCP_PORT" "${opts[@]}" "$ADDR0"
	check_xp "$label" "$T/$label.server" "$T/$label.client"
done

# -c: several client processes, their messages crossing each other's target QPs.
# They must all be on one RNIC: the server sends a client's messages, named by
# that client's SRQ number, over the QPs of the others too, and SRQ numbers are
# per RNIC (as on hardware).
# clients LABEL N DEV...: a server for N clients on uroce0, then one client per DEV.
clients() {
	local label=$1 n=$2 spid i=0 dev t0
	shift 2
	next_tcp_port
	t0=$(now_ms)
	via_cmd run
	"${VIA[@]}" timeout -k 5 60 ibv_xsrq_pingpong -d uroce0 -g 0 -p "$TCP_PORT" -c "$n" \
		>"$T/$label.server" 2>&1 &
	spid=$!
	BG_PIDS="$BG_PIDS $spid"
	await_listen "$TCP_PORT" "$spid" || echo "(server did not listen)" >>"$T/$label.server"
	local -a cpids=() files=("$T/$label.server")
	for dev in "$@"; do
		i=$((i + 1))
		"${VIA[@]}" timeout -k 5 60 ibv_xsrq_pingpong -d "$dev" -g 0 -p "$TCP_PORT" "$ADDR0" \
			>"$T/$label.client$i" 2>&1 &
		cpids+=($!)
		BG_PIDS="$BG_PIDS $!"
		files+=("$T/$label.client$i")
	done
	CLIENT_RC=0
	for p in "${cpids[@]}"; do
		wait "$p" || CLIENT_RC=$?
	done
	SERVER_RC=0
	wait "$spid" || SERVER_RC=$?
	PAIR_MS=$(($(now_ms) - t0))
	check_xp "$label" "${files[@]}"
}
clients clients-2 2 uroce1 uroce1
clients clients-3 3 uroce1 uroce1 uroce1

# Programs killed in the middle of XRC traffic (their target QPs, SRQs and the
# shared domain with them) leave nothing behind, and the RNICs go on serving.
next_tcp_port
via_cmd run
"${VIA[@]}" timeout -k 5 60 ibv_xsrq_pingpong -d uroce0 -g 0 -p "$TCP_PORT" -c 2 -n 100000 \
	>"$T/killed.server" 2>&1 &
kspid=$!
BG_PIDS="$BG_PIDS $kspid"
await_listen "$TCP_PORT" "$kspid" || echo "(server did not listen)" >>"$T/killed.server"
kpids=()
for i in 1 2; do
	"${VIA[@]}" timeout -k 5 60 ibv_xsrq_pingpong -d uroce1 -g 0 -p "$TCP_PORT" -n 100000 "$ADDR0" \
		>"$T/killed.client$i" 2>&1 &
	kpids+=($!)
	BG_PIDS="$BG_PIDS $!"
done
sleep 1
kill -KILL "$kspid" "${kpids[@]}" 2>/dev/null
for p in "$kspid" "${kpids[@]}"; do wait "$p" 2>/dev/null; done
check_none_left "QPs" qp
next_tcp_port
run_pair after-kill 60 run \
	ibv_xsrq_pingpong -d uroce0 -g 0 -p "$TCP_PORT" -- \
	ibv_xsrq_pingpong -d uroce1 -g 0 -p "$TCP_PORT" "$ADDR0"
check_xp "after programs were killed mid-traffic" "$T/after-kill.server" "$T/after-kill.client"

# perftest over XRC (-c XRC: XRC SRQs, initiator and target QPs, as on
# ConnectX hardware; its RC-style modify masks pass as uverbs trims them).
if command -v ib_send_bw >/dev/null; then
	for prog in ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat; do
		run_perftest "perftest-$prog" 60 run \
			"$prog" -d uroce0 -x 0 -c XRC -n 200 -- \
			"$prog" -d uroce1 -x 0 -c XRC -n 200 "$ADDR0"
		if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] &&
			grep -q 'Connection type : XRC' "$T/perftest-$prog.client" &&
			perftest_plausible "$prog" "$T/perftest-$prog.client"; then
			pass "$prog -c XRC: $(perftest_row "$T/perftest-$prog.client" | tr -s ' ')"
		else
			fail "$prog -c XRC: server exit $SERVER_RC, client exit $CLIENT_RC"
			show_pair "perftest-$prog" "$prog -c XRC"
		fi
	done
else
	echo "SKIP (perftest over XRC): perftest is not installed"
fi

# Two processes, one XRC domain: the control path (tests/verbs/xrc_domain.c).
via_cmd run
"${VIA[@]}" timeout -k 5 60 "$XRC_DOMAIN" uroce1 "$T/xrc_domain.file" >"$T/xrc_domain.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && ! grep -q '^FAIL' "$T/xrc_domain.out"; then
	pass "xrc_domain: $(grep -c '^ok' "$T/xrc_domain.out") checks of two processes sharing an XRC domain"
else
	fail "xrc_domain (exit $rc)"
	grep -v '^ok' "$T/xrc_domain.out" | head -n 20 | sed 's/^/    | /'
fi

# Memory windows and invalidation over XRC, two RNICs (tests/verbs/xrc_mw.c).
via_cmd run
"${VIA[@]}" timeout -k 5 60 "$XRC_MW" uroce0 uroce1 >"$T/xrc_mw.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && ! grep -q '^FAIL' "$T/xrc_mw.out"; then
	pass "xrc_mw: $(grep -c '^ok' "$T/xrc_mw.out") checks of windows and invalidation over XRC"
else
	fail "xrc_mw (exit $rc)"
	grep -v '^ok' "$T/xrc_mw.out" | head -n 20 | sed 's/^/    | /'
fi

stop_rnics
check_captures
# One message (QP and PSN, lib.sh qp_psn: its requester may have resent it).
ninv=$(grep 'XRC Send Only Invalidate .* XRCETH srqn=.* IETH rkey=' "$T/uroce0.pcap.decode" | qp_psn)
[ "$ninv" -eq 1 ] && pass "uroce decode: xrc_mw's XRC SEND Only with Invalidate" ||
	fail "uroce decode: $ninv XRC SEND Only with Invalidate messages (QP, PSN) from uroce0 (want 1)"

# The XRCETH, as uroce's Lua plugin shows it to tshark (Wireshark 4.0 names
# the XRC opcodes but leaves the XRCETH undecoded).
LUA=$T/uroce.lua
"$UROCE_BIN/uroce" wireshark-plugin print >"$LUA"
srqns=$(cat "$T"/*.server "$T"/*.client* | sed -n 's/.*local:.*SRQN \([0-9a-f]*\),.*/\1/p' | sort -u)
for cap in "$T/uroce0.pcap" "$T/uroce1.pcap"; do
	if ! command -v tshark >/dev/null; then
		echo "SKIP (XRCETH in $(basename "$cap")): tshark is not installed"
		break
	fi
	timeout -k 5 120 tshark -X lua_script:"$LUA" -r "$cap" --disable-heuristic rpcrdma_infiniband \
		-T fields -e infiniband.bth.opcode -e uroce.xrceth.srqn -e uroce.icrc \
		>"$cap.xrc" 2>"$cap.xrc.err"
	# XRC requests: transport 101 and operations other than 0x0d-0x12 (responses).
	# Every SRQ number the xsrq programs printed must be on the wire (perftest's
	# own SRQs are named too, unprinted).
	res=$(awk -F'\t' -v want="$(echo "$srqns" | tr '\n' ' ')" '
		{ op = $1 + 0; low = op % 32 }
		int(op / 32) != 5 { other++; next }
		$3 != "good" { bad++ }
		low >= 13 && low <= 18 { resp++; if ($2 != "") bad++; next }
		{ req++; if ($2 == "") bad++; else seen[$2] = 1 }
		END {
			n = split(want, w, " ")
			for (i = 1; i <= n; i++) if (!(("0x" w[i]) in seen)) missing++
			printf "%d %d %d %d %d", req, resp, bad + 0, other + 0, missing + 0
		}' "$cap.xrc")
	read -r req resp bad other missing <<<"$res"
	if [ "${req:-0}" -gt 0 ] && [ "${resp:-0}" -gt 0 ] && [ "$bad" -eq 0 ] && [ "$other" -eq 0 ] &&
		[ "$missing" -eq 0 ]; then
		pass "tshark + uroce.lua on $(basename "$cap"): $req XRC requests with an XRCETH (naming every SRQ the programs printed: $(echo $srqns)), $resp XRC responses without"
	else
		fail "tshark + uroce.lua on $(basename "$cap"): $req requests, $resp responses, $bad bad, $other not XRC, $missing printed SRQs never named (printed: $(echo $srqns))"
		head -n 5 "$cap.xrc" | sed 's/^/    | /'
		show "$cap.xrc.err" 5
	fi
done
finish

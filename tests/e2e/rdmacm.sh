#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The RDMA CM with rdma-core's own librdmacm and real rping (rdmacm-utils)
# through `uroce run`: client and server on one RNIC, between uroce0 and
# uroce1 (rping -I picks the client's source), a wildcard server; a connect
# to a port nobody listens on (RDMA_CM_EVENT_REJECTED), to an address no
# RNIC can reach (RDMA_CM_EVENT_ADDR_ERROR) and to one where no CM answers
# (RDMA_CM_EVENT_UNREACHABLE after the retries); a server SIGKILLed in the
# middle of a run (the client sees the disconnect and exits, the daemons go
# on serving). The captures must decode with every ICRC valid, in uroce
# decode and tshark, and hold the CM handshake's MADs. The drop-in alone
# (LD_LIBRARY_PATH): rping, ucmatose and ib_send_bw -R between the two RNICs;
# with the drop-in librdmacm.so.1 also cmtime, rstream, riostream and rcopy,
# whose libibverbs comes after libc.
. "$(dirname "$0")/lib.sh"
need_prog rping

# Short CM timeouts: 4.096 us * 2^16 = 268 ms, 3 resends (UNREACHABLE in ~1 s).
start_rnics --cm-timeout 16 --cm-retries 3
via_cmd run

# rping_pair LABEL COUNT PORT NLISTEN SERVER_ARGS -- CLIENT_ARGS: rping -s
# with SERVER_ARGS, once it listens (NLISTEN RNICs) rping -c with
# CLIENT_ARGS, -C COUNT -v -V each (cm_pair).
rping_pair() {
	local label=$1 count=$2 port=$3 n=$4
	shift 4
	local -a srv=() cli=()
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	cm_pair "$label" 60 "$n" rping -s -v -V -C "$count" -p "$port" "${srv[@]}" -- \
		rping -c -v -V -C "$count" -p "$port" "${cli[@]}"
}

# rping_race LABEL COUNT: did one side of this pair meet rping's own race
# (rping_race_exit, lib.sh) after all COUNT pings, with the other side fine?
# Either side may (a client in a concurrent CI run did, after its 5 pings).
rping_race() {
	local ns nc
	ns=$(grep -c '^server ping data: rdma-ping-' "$T/$1.server")
	nc=$(grep -c '^ping data: rdma-ping-' "$T/$1.client")
	[ "$ns" -eq "$2" ] && [ "$nc" -eq "$2" ] &&
		{ { [ "$CLIENT_RC" -eq 0 ] && rping_race_exit "$T/$1.server" "$SERVER_RC"; } ||
			{ [ "$SERVER_RC" -eq 0 ] && rping_race_exit "$T/$1.client" "$CLIENT_RC"; }; }
}

check_rping() { # LABEL COUNT
	local n
	n=$(grep -c '^ping data: rdma-ping-' "$T/$1.client")
	if [ "$CLIENT_RC" -eq 0 ] && [ "$SERVER_RC" -eq 0 ] && [ "$n" -eq "$2" ] &&
		[ "$(grep -c '^server ping data: rdma-ping-' "$T/$1.server")" -eq "$2" ]; then
		pass "$1: rping -c and -s exit 0, $2 pings each, data verified (-V)"
	else
		fail "$1: client exit $CLIENT_RC ($n pings), server exit $SERVER_RC"
		show "$T/$1.client" 10
		show "$T/$1.server" 10
	fi
}

# rping_case LABEL COUNT PORT NLISTEN ARGS...: a pair, run once more (and
# said so) when the first met rping's own race (rping_race).
rping_case() {
	local label=$1 count=$2
	rping_pair "$@"
	if rping_race "$label" "$count"; then
		echo "    $label: an rping's event thread read its freed channel after the last ping (rping's race, not the RNIC's): once more"
		rping_pair "$@"
	fi
	check_rping "$label" "$count"
}
rping_case same-rnic 10 7174 1 -a "$ADDR0" -- -a "$ADDR0"
rping_case two-rnics 10 7175 1 -a "$ADDR1" -- -I "$ADDR0" -a "$ADDR1"
rping_case wildcard 5 7176 2 -- -I "$ADDR1" -a "$ADDR0"

# Nobody listens on port 7999: the REQ is rejected (reason 8).
rc=0
"${VIA[@]}" timeout -k 5 30 rping -c -v -C 1 -p 7999 -a "$ADDR1" >"$T/reject" 2>&1 || rc=$?
grep -q 'RDMA_CM_EVENT_REJECTED' "$T/reject" && [ "$rc" -ne 0 ] &&
	pass "a port nobody listens on: RDMA_CM_EVENT_REJECTED, rping exits $rc" ||
	{ fail "reject: rping exit $rc"; show "$T/reject"; }

# An address that is no RNIC's and that no RNIC's address routes from.
rc=0
"${VIA[@]}" timeout -k 5 30 rping -c -v -C 1 -a 192.0.2.1 >"$T/addrerr" 2>&1 || rc=$?
grep -q 'RDMA_CM_EVENT_ADDR_ERROR' "$T/addrerr" && [ "$rc" -ne 0 ] &&
	pass "an address no RNIC reaches: RDMA_CM_EVENT_ADDR_ERROR" ||
	{ fail "addr error: rping exit $rc"; show "$T/addrerr"; }

# From uroce0 to an address of the test's /24 where no daemon runs: the REQ
# goes out, is resent 3 times, then the client gets UNREACHABLE.
rc=0
t0=$(now_ms)
"${VIA[@]}" timeout -k 5 30 rping -c -v -C 1 -I "$ADDR0" -a "$E2E_NET.9" >"$T/unreach" 2>&1 ||
	rc=$?
ms=$(($(now_ms) - t0))
grep -q 'RDMA_CM_EVENT_UNREACHABLE' "$T/unreach" && [ "$rc" -ne 0 ] && [ "$ms" -ge 900 ] &&
	pass "no CM answers: RDMA_CM_EVENT_UNREACHABLE after $ms ms (4 sends, 268 ms apart)" ||
	{ fail "unreachable: rping exit $rc after $ms ms"; show "$T/unreach"; }

# A server killed in the middle of a long run: its daemon ends its
# connection (DREQ), the client sees the disconnect and exits; no hang.
want=$(($(cm_listens) + 1))
bg_via kill.server 60 rping -s -v -C 1000000 -p 7177 -a "$ADDR1"
KSPID=$BG_PID
wait_cm_listens "$want" "$KSPID" || fail "kill: the server does not listen"
bg_via kill.client 60 rping -c -v -C 1000000 -p 7177 -a "$ADDR1" -I "$ADDR0"
KCPID=$BG_PID
for _ in $(seq 100); do
	[ "$(grep -c '^ping data' "$T/kill.client")" -ge 20 ] && break
	sleep 0.05
done
spids=$(pgrep -P "$KSPID" -x rping || true)
[ -n "$spids" ] || spids=$(pgrep -f "rping -s -v -C 1000000 -p 7177" | head -1)
t0=$(now_ms)
kill -KILL $spids 2>/dev/null
crc=0
wait "$KCPID" || crc=$?
ms=$(($(now_ms) - t0))
n=$(grep -c '^ping data' "$T/kill.client")
if [ "$crc" -ne 124 ] && [ "$crc" -ne 137 ] && [ "$ms" -lt 20000 ] && [ "$n" -ge 20 ]; then
	pass "server SIGKILLed after $n pings: the client exits ($crc) $ms ms later, no hang"
else
	fail "server SIGKILLed: client exit $crc after $ms ms, $n pings"
	show "$T/kill.client" 10
fi
# rping's state 10 is DISCONNECTED (its handler of RDMA_CM_EVENT_DISCONNECTED).
grep -v '^ping data' "$T/kill.client" | grep -q 'DISCONNECT EVENT\|state 10$\|error\|failed' &&
	pass "the client reports the disconnect: $(grep -v '^ping data' "$T/kill.client" | head -1)" ||
	{ fail "the client says nothing about the end"; show "$T/kill.client" 10; }
rping_case after-kill 3 7178 1 -a "$ADDR1" -- -I "$ADDR0" -a "$ADDR1"

# Bad and unsupported requests (tests/verbs/cm_bad.c), each as a kernel RNIC fails it.
if [ -x "$UROCE_BIN/cm_bad" ]; then
	rc=0
	"${VIA[@]}" timeout -k 5 60 "$UROCE_BIN/cm_bad" "$ADDR0" >"$T/cm_bad" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] && pass "cm_bad: $(grep -c '^ok' "$T/cm_bad") bad or unsupported requests fail as on a kernel RNIC" ||
		{ fail "cm_bad exit $rc"; grep -v '^ok' "$T/cm_bad" | head -20; }
else
	echo "SKIP (cm_bad): not built (librdmacm-dev missing)"
fi
# rdma_notify: COMM_EST establishes a connection whose RTU has not come, as
# on a kernel (tests/verbs/cm_notify.c); through uroce run and the drop-in.
if [ -x "$UROCE_BIN/cm_notify" ]; then
	for mode in run dropin; do
		via_cmd $mode
		rc=0
		"${VIA[@]}" timeout -k 5 60 "$UROCE_BIN/cm_notify" "$ADDR0" >"$T/cm_notify.$mode" 2>&1 || rc=$?
		[ "$rc" -eq 0 ] &&
			pass "cm_notify ($mode): $(grep -c '^ok' "$T/cm_notify.$mode") checks of rdma_notify pass (COMM_EST before the RTU: ESTABLISHED, no resends)" ||
			{ fail "cm_notify ($mode) exit $rc"; grep -v '^ok' "$T/cm_notify.$mode" | head -20; }
	done
	via_cmd run
else
	echo "SKIP (cm_notify): not built (librdmacm-dev missing)"
fi

# The drop-in alone (LD_LIBRARY_PATH, no preload): its libc hooks are reached
# where libibverbs.so.1 comes before libc.so.6 in the lookup scope, as for
# rping, ucmatose and perftest (docs/cm.md, "Drop-in mode").
via_cmd dropin
rc=0
"${VIA[@]}" LD_DEBUG=bindings timeout -k 5 30 rping -c -C 1 -p 7999 -a "$ADDR1" >"$T/dropin.bind" 2>&1 || rc=$?
grep -q "binding file [^ ]*librdmacm.so.1 .* to $UROCE_LIB/ibverbs/libibverbs.so.1 .*symbol \`open'" \
	"$T/dropin.bind" && grep -q 'RDMA_CM_EVENT_REJECTED' "$T/dropin.bind" &&
	pass "drop-in: librdmacm's open() binds to the drop-in's hook (ld.so bindings), rping reaches the CM" ||
	{ fail "drop-in bindings: rping exit $rc"; grep "librdmacm.so.1.*symbol \`open'\|REJECTED" "$T/dropin.bind"; }
CM_VIA=dropin rping_case dropin-two-rnics 10 7180 1 -a "$ADDR1" -- -I "$ADDR0" -a "$ADDR1"
if command -v ucmatose >/dev/null; then
	CM_VIA=dropin cm_pair dropin-ucmatose 90 1 ucmatose -b "$ADDR1" -c 10 -C 10 -- \
		ucmatose -s "$ADDR1" -b "$ADDR0" -c 10 -C 10
	[ "$CLIENT_RC" -eq 0 ] && [ "$SERVER_RC" -eq 0 ] &&
		grep -q 'return status 0' "$T/dropin-ucmatose.client" &&
		grep -q 'return status 0' "$T/dropin-ucmatose.server" &&
		pass "drop-in: ucmatose -c 10 -C 10, both sides return status 0" ||
		{ fail "drop-in ucmatose: server exit $SERVER_RC, client exit $CLIENT_RC"; show_pair dropin-ucmatose; }
fi
if command -v ib_send_bw >/dev/null; then
	# As in rdmacm_apps.sh: perftest's server listens again for its test
	# connection and a quick client is rejected (reason 8), or the CPU clock
	# could not be measured: once more then.
	for port in 18641 18642 18643; do
		CM_VIA=dropin cm_pair dropin-send-bw 120 2 ib_send_bw -R -d uroce1 -x 0 -p "$port" -n 200 -- \
			ib_send_bw -R -d uroce0 -x 0 -p "$port" -n 200 "$ADDR1"
		grep -q "Correlation coefficient\|RDMA_CM_EVENT_REJECTED" "$T/dropin-send-bw.client" \
			"$T/dropin-send-bw.server" || break
		echo "    drop-in ib_send_bw -R: $(grep -h -m1 "Correlation coefficient\|RDMA_CM_EVENT_REJECTED" \
			"$T/dropin-send-bw.client" "$T/dropin-send-bw.server" | head -1); again"
	done
	[ "$CLIENT_RC" -eq 0 ] && [ "$SERVER_RC" -eq 0 ] && perftest_plausible ib_send_bw "$T/dropin-send-bw.client" &&
		pass "drop-in: ib_send_bw -R: $(perftest_row "$T/dropin-send-bw.client" | tr -s ' ')" ||
		{ fail "drop-in ib_send_bw -R: server exit $SERVER_RC, client exit $CLIENT_RC"; show_pair dropin-send-bw; }
fi
# The drop-in librdmacm.so.1 (verbs-shim/abi/rdmacm_fwd.c), beside the drop-in
# libibverbs.so.1: programs that need only librdmacm.so.1 and libc.so.6
# (libibverbs then comes after libc) run on the same LD_LIBRARY_PATH, because
# the wrapper loads the real librdmacm with RTLD_DEEPBIND and its open(),
# write(), close() and fstat() bind to the drop-in's hooks (docs/cm.md,
# "Drop-in mode"). ld.so's own record shows which objects are loaded.
if command -v cmtime >/dev/null; then
	rc=0
	"${VIA[@]}" LD_DEBUG=bindings,files timeout -k 5 30 cmtime -s "$ADDR1" -c 1 -p 7998 \
		>"$T/dropin.cmtime.bind" 2>&1 || rc=$?
	ours="$UROCE_LIB/ibverbs/librdmacm.so.1"
	real=$(sed -n "s|.*file=\([^ ]*librdmacm.so.1\) \[0\];  dynamically loaded by $ours \[0\]\$|\1|p" \
		"$T/dropin.cmtime.bind" | head -1)
	bound() { # FILE SYMBOL: the object FILE's SYMBOL binds to
		grep -F "binding file $1 [0] to " "$T/dropin.cmtime.bind" | grep -F ": normal symbol \`$2'" |
			sed 's/.* to \([^ ]*\) \[0\].*/\1/' | head -1
	}
	if grep -q "calling init: $ours\$" "$T/dropin.cmtime.bind" && [ -n "$real" ] &&
		[ "$(bound "$real" open)" = "$UROCE_LIB/ibverbs/libibverbs.so.1" ] &&
		[ "$(bound "$real" write)" = "$UROCE_LIB/ibverbs/libibverbs.so.1" ] &&
		[ "$(bound "$real" fstat)" = "$UROCE_LIB/ibverbs/libibverbs.so.1" ] &&
		[ "$(bound "$real" ibv_open_device)" = "$UROCE_LIB/ibverbs/libibverbs.so.1" ]; then
		pass "drop-in cmtime (libc before libibverbs): uroce's librdmacm.so.1 is loaded, it loads $real, whose open(), write(), fstat() and ibv_open_device() bind to the drop-in"
	else
		fail "drop-in cmtime bindings (exit $rc): real library '$real', open -> '$(bound "$real" open)', write -> '$(bound "$real" write)'"
		grep -E "calling init: .*librdmacm|dynamically loaded" "$T/dropin.cmtime.bind" | head -10
	fi
	# cmtime's server runs until it is stopped; its client makes COUNT
	# connections, times each step and disconnects them.
	want=$(($(cm_listens) + 1))
	bg_via dropin.cmtime.server 60 cmtime -b "$ADDR1" -p 7181
	CTPID=$BG_PID
	if wait_cm_listens "$want" "$CTPID"; then
		rc=0
		"${VIA[@]}" timeout -k 5 60 cmtime -s "$ADDR1" -b "$ADDR0" -p 7181 -c 20 \
			>"$T/dropin.cmtime" 2>&1 || rc=$?
		if [ "$rc" -eq 0 ] && grep -q '^connect *:' "$T/dropin.cmtime" &&
			grep -q '^disconnect *:' "$T/dropin.cmtime"; then
			pass "drop-in: cmtime -c 20 between the RNICs: $(grep '^connect *:' "$T/dropin.cmtime" | tr -s ' ')"
		else
			fail "drop-in cmtime: client exit $rc"
			show "$T/dropin.cmtime"
			show "$T/dropin.cmtime.server"
		fi
	else
		fail "drop-in cmtime: the server does not listen"
		show "$T/dropin.cmtime.server"
	fi
	kill "$CTPID" 2>/dev/null
	wait "$CTPID" 2>/dev/null
fi
# rsockets (librdmacm's sockets over RC QPs): rstream in the modes of its
# -T option that run on rsockets (blocking, nonblocking, data verification,
# rdma_getaddrinfo resolution; -T s and -T f use plain TCP sockets instead,
# see librspreload below), riostream (RDMA writes to a registered buffer,
# riomap), rcopy (a file through rsockets). The RNIC's count of received
# messages shows the transfers went through it.
# rstream -T a (rpoll before every transfer) is left out: its client's last
# rpoll sees the server's in-band disconnect together with the data and
# reports POLLHUP (exit 16), under `uroce run` just as under the drop-in.
if command -v rstream >/dev/null; then
	port=7182
	for t in default b n v r; do
		opt=()
		[ "$t" = default ] || opt=(-T "$t")
		before=$(counter uroce1 xport.msg_rcvd)
		CM_VIA=dropin cm_pair "dropin-rstream-$t" 60 1 rstream "${opt[@]}" -b "$ADDR1" -p "$port" -C 200 -- \
			rstream "${opt[@]}" -s "$ADDR1" -b "$ADDR0" -p "$port" -C 200
		msgs=$(($(counter uroce1 xport.msg_rcvd) - before))
		if [ "$CLIENT_RC" -eq 0 ] && [ "$SERVER_RC" -eq 0 ] && [ "$msgs" -ge 200 ] &&
			grep -q '^custom *1000 *200 ' "$T/dropin-rstream-$t.client"; then
			pass "drop-in: rstream ${opt[*]:-(no -T)}: 200 transfers each way, $(awk '/^custom/ { print $7 " Gb/s" }' "$T/dropin-rstream-$t.client"), uroce1 received $msgs messages"
		else
			fail "drop-in rstream ${opt[*]}: server exit $SERVER_RC, client exit $CLIENT_RC, $msgs messages"
			show_pair "dropin-rstream-$t"
		fi
		port=$((port + 1))
	done
fi
if command -v riostream >/dev/null; then
	before=$(counter uroce1 xport.msg_rcvd)
	CM_VIA=dropin cm_pair dropin-riostream 60 1 riostream -b "$ADDR1" -p 7190 -S 65536 -C 100 -- \
		riostream -s "$ADDR1" -b "$ADDR0" -p 7190 -S 65536 -C 100
	msgs=$(($(counter uroce1 xport.msg_rcvd) - before))
	[ "$CLIENT_RC" -eq 0 ] && [ "$SERVER_RC" -eq 0 ] && [ "$msgs" -ge 100 ] &&
		grep -q '^custom *64k *100 ' "$T/dropin-riostream.client" &&
		pass "drop-in: riostream, 100 RDMA writes of 64 KiB each way: $(awk '/^custom/ { print $7 " Gb/s" }' "$T/dropin-riostream.client"), uroce1 received $msgs messages" ||
		{ fail "drop-in riostream: server exit $SERVER_RC, client exit $CLIENT_RC, $msgs messages"; show_pair dropin-riostream; }
fi
if command -v rcopy >/dev/null; then
	head -c 3000000 /dev/urandom >"$T/rcopy.src"
	want=$(($(cm_listens) + 1))
	bg_via dropin.rcopy.server 60 rcopy -p 7191
	RCPID=$BG_PID
	wait_cm_listens "$want" "$RCPID" || fail "drop-in rcopy: the server does not listen"
	rc=0
	before=$(counter uroce0 xport.msg_rcvd)
	"${VIA[@]}" timeout -k 5 60 rcopy "$T/rcopy.src" "$ADDR0:$T/rcopy.dst" -p 7191 \
		>"$T/dropin.rcopy" 2>&1 || rc=$?
	msgs=$(($(counter uroce0 xport.msg_rcvd) - before))
	[ "$rc" -eq 0 ] && [ "$msgs" -ge 10 ] && cmp -s "$T/rcopy.src" "$T/rcopy.dst" &&
		pass "drop-in: rcopy of 3 MB through rsockets ($msgs messages into uroce0), the copy is identical" ||
		{ fail "drop-in rcopy: exit $rc, $msgs messages"; show "$T/dropin.rcopy"; show "$T/dropin.rcopy.server"; }
	kill "$RCPID" 2>/dev/null
	wait "$RCPID" 2>/dev/null
fi
# librdmacm's own preload, librspreload.so, turns an unmodified program's TCP
# sockets into rsockets; with the drop-ins it loads uroce's librdmacm.so.1:
# rstream -T s (plain sockets) then runs over RC QPs on the RNICs, as the
# RNIC's counters show.
RSP=/usr/lib/x86_64-linux-gnu/rsocket/librspreload.so
if [ -e "$RSP" ] && command -v rstream >/dev/null; then
	before=$(counter uroce1 xport.msg_rcvd)
	CM_VIA=dropin cm_pair dropin-rspreload 60 1 env LD_PRELOAD="$RSP" rstream -T s -b "$ADDR1" -p 7193 -C 100 -- \
		env LD_PRELOAD="$RSP" rstream -T s -s "$ADDR1" -b "$ADDR0" -p 7193 -C 100
	msgs=$(($(counter uroce1 xport.msg_rcvd) - before))
	[ "$CLIENT_RC" -eq 0 ] && [ "$SERVER_RC" -eq 0 ] && [ "$msgs" -ge 100 ] &&
		grep -q '^custom *1000 *100 ' "$T/dropin-rspreload.client" &&
		pass "drop-in + librspreload.so: rstream -T s (TCP sockets) runs on rsockets, uroce1 received $msgs messages" ||
		{ fail "drop-in + librspreload: server exit $SERVER_RC, client exit $CLIENT_RC, $msgs messages"; show_pair dropin-rspreload; }
fi
# Without the system's librdmacm (here: pointed elsewhere) the wrapper says
# so and stops the program at its first librdmacm call, as ld.so would.
if command -v cmtime >/dev/null; then
	for lib in "$T/no-such-librdmacm.so.1" "$UROCE_LIB/ibverbs/librdmacm.so.1"; do
		rc=0
		"${VIA[@]}" UROCE_RDMACM_LIBRARY="$lib" timeout -k 5 30 cmtime -s "$ADDR1" -c 1 \
			>"$T/dropin.nolib" 2>&1 || rc=$?
		[ "$rc" -eq 127 ] && grep -q "uroce's librdmacm.so.1 forwards .* which could not be loaded" \
			"$T/dropin.nolib" &&
			pass "UROCE_RDMACM_LIBRARY=${lib##*/} ($( [ "$lib" = "$UROCE_LIB/ibverbs/librdmacm.so.1" ] && echo the wrapper itself || echo absent)): exit 127, $(sed 's/^[^(]*(//; s/).*//' "$T/dropin.nolib" | head -1 | sed "s|$T/||; s|$UROCE_LIB/||")" ||
			{ fail "UROCE_RDMACM_LIBRARY=$lib: exit $rc"; show "$T/dropin.nolib"; }
	done
fi
# uroce run (the shim preloaded) with the wrapper on the path as well: the
# real librdmacm binds to liburoce.so as without the wrapper (no DEEPBIND:
# the preload comes first), and rping runs.
via_cmd run-dropin
rc=0
"${VIA[@]}" LD_DEBUG=bindings timeout -k 5 30 \
	rping -c -C 1 -p 7999 -a "$ADDR1" >"$T/run-dropin.bind" 2>&1 || rc=$?
grep -q "binding file [^ ]*librdmacm.so.1 \[0\] to $UROCE_LIB/liburoce.so \[0\]: normal symbol \`open'" \
	"$T/run-dropin.bind" && grep -q 'RDMA_CM_EVENT_REJECTED' "$T/run-dropin.bind" &&
	! grep -q "binding file [^ ]*librdmacm.so.1 \[0\] to $UROCE_LIB/ibverbs/libibverbs.so.1 \[0\]: normal symbol \`ibv_" \
		"$T/run-dropin.bind" &&
	pass "uroce run with the drop-ins on the path too: the real librdmacm binds to liburoce.so, rping reaches the CM" ||
	{ fail "uroce run + drop-in path: rping exit $rc"; grep "librdmacm.so.1 \[0\] to .*symbol \`\(open\|ibv_open_device\)'\|REJECTED" "$T/run-dropin.bind" | head; }
CM_VIA=run-dropin rping_case run-dropin-path 5 7192 1 -a "$ADDR1" -- -I "$ADDR0" -a "$ADDR1"
via_cmd dropin
# A program that never loads libibverbs is not touched by LD_LIBRARY_PATH.
"${VIA[@]}" LD_DEBUG=libs cat /dev/null 2>"$T/dropin.cat"
grep -q 'calling init: .*libibverbs' "$T/dropin.cat" &&
	fail "drop-in: cat loads libibverbs" || pass "drop-in: cat does not load libibverbs.so.1"

"$UROCE_BIN/uroce" counters uroce0 --all >"$T/counters0"
"$UROCE_BIN/uroce" counters uroce1 --all >"$T/counters1"
cnt() { awk -v n="daemon.$2" '$1 == n { print $2 }' "$T/counters$1"; }
[ "$(cnt 0 cm_req_sent)" -ge 5 ] && [ "$(cnt 1 cm_rep_sent)" -ge 3 ] &&
	[ "$(cnt 0 cm_established)" -ge 4 ] && [ "$(cnt 1 cm_rej_sent)" -ge 1 ] &&
	pass "counters: uroce0 sent $(cnt 0 cm_req_sent) REQs, uroce1 $(cnt 1 cm_rep_sent) REPs and $(cnt 1 cm_rej_sent) REJs" ||
	{ fail "CM counters"; grep 'daemon.cm_' "$T/counters0" "$T/counters1"; }
[ "$(cnt 0 cm_timeouts)" -ge 1 ] && [ "$(cnt 0 cm_resent)" -ge 3 ] &&
	pass "counters: the unanswered REQ was resent $(cnt 0 cm_resent) times, then timed out" ||
	{ fail "timeout counters"; grep 'daemon.cm_' "$T/counters0"; }
[ "$(cnt 0 cm_rx_malformed)" -eq 0 ] && [ "$(cnt 1 cm_rx_malformed)" -eq 0 ] &&
	pass "no malformed CM MAD received" || fail "malformed CM MADs counted"

stop_rnics
check_decode "$T/uroce0.pcap"
check_decode "$T/uroce1.pcap"
check_tshark "$T/uroce0.pcap"
check_tshark "$T/uroce1.pcap"
if command -v tshark >/dev/null; then
	tshark -n -r "$T/uroce1.pcap" -Y infiniband.mad -T fields -e infiniband.mad.attributeid \
		2>/dev/null | sort | uniq -c >"$T/mads"
	for a in 0x0010 0x0012 0x0013 0x0014 0x0015 0x0016; do
		grep -q " $a\$" "$T/mads" || { fail "tshark: no CM attribute $a in uroce1's capture"; cat "$T/mads"; }
	done
	pass "tshark: uroce1's capture holds REQ, REJ, REP, RTU, DREQ and DREP ($(tr -s ' \n' ' ' <"$T/mads"))"
fi
finish

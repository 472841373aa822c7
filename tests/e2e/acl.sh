#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Access control a real NIC and kernel would give (issue 12 item 5), tried as
# a second local user would:
#  - a forger who knows a connected QP's number, its next PSN and an R_Key
#    and VA of its MR sends, from the peer's own address (any local user can
#    bind it on loopback) but another UDP port, an RDMA WRITE and a SEND:
#    both are dropped (drop.bad_sport), the memory and the receive queue are
#    untouched, the capture says why, and the real peer is served after;
#    the peer's own port (the one its daemon holds) cannot be bound;
#  - a child forked after ibv_open_device cannot register memory in the
#    inherited context (the daemon's DMA would reach its parent's memory);
#  - QP numbers and keys are unpredictable (not 0x11, 0x12, ...; key
#    variants not the old *5+1 walk, key indexes not counting up), unique, never 0, 1 or 0xFFFFFF, and
#    reproducible only when the daemon is given --seed;
#  - a controlled Q_Key (high bit set) is EPERM at ibv_modify_qp without
#    CAP_NET_RAW (as Linux), a WR's Q_Key with the high bit sends the QP's;
#  - a run directory others may write to without the sticky bit is refused.
# The forger runs as uid 65534 when the test is root (setpriv), else as us.
. "$(dirname "$0")/lib.sh"
P=$UROCE_BIN/acl_peer
[ -x "$P" ] || skip "acl_peer was not built (no system libibverbs)"
need_prog python3
PY=/usr/bin/python3 # not a per-user shim: the forger may be another user
[ -x "$PY" ] || PY=python3

RNIC_PCAP=0
start_rnic uroce0 "$ADDR0" --pcap "$T/uroce0.pcapng"
start_rnic uroce1 "$ADDR1"
via_cmd run

# ---- a forger on the peer's address, another port
AS_OTHER=()
who="this user"
# The build and source trees may lie where uid 65534 cannot go (a private
# temporary directory, a home): it runs copies, from $T.
NB=$T/nobody-bin
mkdir -p "$NB" && cp "$UROCE_BIN/uroced" "$UROCE_BIN/uroce" "$P" "$UROCE_LIB/liburoce.so" "$(dirname "$0")/forge.py" \
	"$NB/" && chmod 755 "$NB" "$NB"/*
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	AS_OTHER=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	who="uid 65534"
fi
coproc TGT { "${VIA[@]}" timeout -k 5 60 "$P" target uroce0 uroce1 2>"$T/target.err"; }
read -r -t 30 ready <&"${TGT[0]}" || ready=""
if [[ "$ready" =~ ^ready\ qpn=(0x[0-9a-f]+)\ psn=(0x[0-9a-f]+)\ rkey=(0x[0-9a-f]+)\ va=(0x[0-9a-f]+)$ ]]; then
	pass "target connected: $ready"
	"${AS_OTHER[@]}" "$PY" "$NB/forge.py" "$ADDR1" "$ADDR0" 4791 "${BASH_REMATCH[1]}" \
		"${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}" "${BASH_REMATCH[4]}" >"$T/forge.out" 2>&1 ||
		fail "forge.py: $(cat "$T/forge.out")"
	sleep 0.5
	echo go >&"${TGT[1]}"
	out=$(timeout 30 cat <&"${TGT[0]}")
	rc=0
	wait "$TGT_PID" || rc=$?
	echo "$out" | grep -qx intact && pass "a WRITE forged by $who from $ADDR1, $(sed -n 's/sent from //p' "$T/forge.out"), did not land" ||
		fail "the forged WRITE landed: $out"
	echo "$out" | grep -qx "no receive" && pass "the forged SEND completed no receive" ||
		fail "the forged SEND completed a receive: $out"
	echo "$out" | grep -qx "peer send ok" && [ "$rc" -eq 0 ] &&
		pass "the real peer's WRITE and SEND still land afterwards" ||
		fail "the real peer after the forgery: exit $rc, $out $(cat "$T/target.err")"
	grep -qx "in use" "$T/forge.out" && pass "the peer's own RoCEv2 port cannot be bound by $who" ||
		fail "the peer's port: $(tail -1 "$T/forge.out")"
	n=$(counter uroce0 drop.bad_sport)
	[ "$n" -eq 2 ] && pass "uroce0 counted both forgeries as drop.bad_sport" ||
		fail "drop.bad_sport is $n, not 2"
	n=$(counter uroce0 xport.sport_learned)
	[ "$n" -eq 1 ] && pass "uroce0's QP learned its peer's source port once" ||
		fail "xport.sport_learned is $n, not 1"
else
	fail "acl_peer target: '$ready' $(cat "$T/target.err")"
fi
stop_rnic uroce0
if command -v tshark >/dev/null 2>&1; then
	n=$(tshark -r "$T/uroce0.pcapng" -Y frame.comment -T fields -e frame.comment 2>/dev/null |
		grep -c 'dropped: bad_sport')
	[ "$n" -eq 2 ] && pass "the capture marks both forgeries 'dropped: bad_sport'" ||
		fail "the capture marks $n frames dropped: bad_sport"
fi

# ---- a process registers only its own memory
out=$("${VIA[@]}" timeout 30 "$P" fork_reg uroce1 2>&1) && rc=0 || rc=$?
[ "$rc" -eq 0 ] && echo "$out" | grep -q "child reg_mr: Operation not permitted" &&
	echo "$out" | grep -q "parent reg_mr: registered" &&
	pass "a forked child cannot register memory in its parent's context (EPERM); the parent can" ||
	fail "fork_reg: exit $rc, $out"

# ---- a controlled Q_Key (high bit set) needs CAP_NET_RAW (IBA 10.2.5)
if [ ${#AS_OTHER[@]} -gt 0 ]; then
	N=$T/nobody-run
	mkdir -m 0700 "$N" && chown 65534:65534 "$N"
	# up when it serves (start_uroced), not when its socket file appears:
	# bind() makes the file before listen() and the start-up are done
	UROCE_BIN=$NB UROCED_WRAP="${AS_OTHER[*]}" start_uroced nobody0 "$E2E_NET.8" \
		"$T/nobody0.log" "$N" ""
	NPID=$LAST_PID
	q() { # AS... -- QKEY
		local -a as=()
		while [ "$1" != -- ]; do as+=("$1"); shift; done
		"${as[@]}" env UROCE_RUNDIR="$N" LD_PRELOAD="$NB/liburoce.so" timeout 20 \
			"$NB/${P##*/}" qkey nobody0 "$2" 2>&1
	}
	out=$(q "${AS_OTHER[@]}" -- 0x80010000)
	[ "$out" = "qkey 0x80010000: Operation not permitted" ] &&
		pass "uid 65534 may not set a controlled Q_Key: $out" || fail "controlled Q_Key as uid 65534: $out"
	out=$(q "${AS_OTHER[@]}" -- 0x11111111)
	[ "$out" = "qkey 0x11111111: ok" ] && pass "uid 65534 sets an ordinary one: $out" ||
		fail "ordinary Q_Key as uid 65534: $out"
	kill "$NPID" 2>/dev/null
	wait "$NPID" 2>/dev/null
fi
out=$("${VIA[@]}" timeout 20 "$P" qkey uroce1 0x80010000 2>&1)
caps=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
if (((16#${caps:-0} >> 13) & 1)); then # CAP_NET_RAW
	[ "$out" = "qkey 0x80010000: ok" ] && pass "with CAP_NET_RAW a controlled Q_Key is set: $out" ||
		fail "controlled Q_Key with CAP_NET_RAW: $out"
else
	[ "$out" = "qkey 0x80010000: Operation not permitted" ] &&
		pass "without CAP_NET_RAW a controlled Q_Key is refused: $out" ||
		fail "controlled Q_Key without CAP_NET_RAW: $out"
fi

# ---- numbering: unpredictable by default, reproducible with --seed
numbers() { # DEVICE: its QPNs and R_Keys, one per line
	"${VIA[@]}" timeout 30 "$P" numbers "$1" 64 32
}
start_rnic uroce2 "$E2E_NET.3"
start_rnic uroce3 "$E2E_NET.4" --seed 7
start_rnic uroce4 "$E2E_NET.5" --seed 7
start_rnic uroce5 "$E2E_NET.6" --seed 8
numbers uroce2 >"$T/n2" || fail "acl_peer numbers uroce2"
numbers uroce2 >"$T/n2b" || fail "acl_peer numbers uroce2 again"
python3 - "$T/n2" "$T/n2b" <<'EOF' && pass "QPNs and key bytes unpredictable, unique, never 0, 1, 0xffffff" || fail "numbering: see above"
import sys
runs = []
for f in sys.argv[1:]:
    q = [int(l.split()[1], 16) for l in open(f) if l.startswith("qpn")]
    k = [int(l.split()[1], 16) for l in open(f) if l.startswith("rkey")]
    assert len(q) == 64 and len(k) == 32, (len(q), len(k))
    runs.append((q, k))
q = runs[0][0] + runs[1][0]
k = runs[0][1] + runs[1][1]
bad = [x for x in q if x in (0, 1, 0xFFFFFF)]
assert not bad and len(set(q)) == len(q), "QPNs repeat or are reserved: %s" % q
assert q[0] != 0x11, "the first QPN is 0x11"
steps = sum(1 for a, b in zip(q, q[1:]) if b == a + 1)
assert steps < 4, "QPNs count up: %d of %d steps are +1" % (steps, len(q) - 1)
assert len(set(k)) == len(k), "R_Keys repeat"
walk = sum(1 for a, b in zip(k, k[1:]) if b & 0xFF == (a * 5 + 1) & 0xFF)
assert walk < 4, "key bytes follow *5+1: %d of %d" % (walk, len(k) - 1)
# the index (upper 24 bits) too: a known R_Key must not tell the next MR's
near = sum(1 for a, b in zip(k, k[1:]) if 0 <= (b >> 8) - (a >> 8) <= 4)
assert near < 4, "key indexes count up: %d of %d steps are +0..4" % (near, len(k) - 1)
print("    QPNs %s ..., key bytes %s ..." % (" ".join("%06x" % x for x in q[:4]),
      " ".join("%02x" % (x & 0xFF) for x in k[:8])))
EOF
numbers uroce3 >"$T/n3" && numbers uroce4 >"$T/n4" && numbers uroce5 >"$T/n5" ||
	fail "acl_peer numbers on the seeded daemons"
cmp -s "$T/n3" "$T/n4" && pass "two daemons with --seed 7 number QPs and keys alike" ||
	fail "--seed 7 twice: $(diff "$T/n3" "$T/n4" | head -4)"
cmp -s "$T/n3" "$T/n5" && fail "--seed 7 and --seed 8 number alike" ||
	pass "--seed 8 numbers otherwise than --seed 7"
cmp -s "$T/n2" "$T/n3" && fail "an unseeded daemon numbers like --seed 7" || true

# ---- a run directory others may write to
mkdir -m 0777 "$T/ww"
chmod 0777 "$T/ww"
rc=0
timeout 10 "$UROCE_BIN/uroced" --name ww0 --addr "$E2E_NET.7" --rundir "$T/ww" 2>"$T/ww.log" || rc=$?
[ "$rc" -eq 1 ] && grep -q "writable" "$T/ww.log" && [ ! -e "$T/ww/ww0.sock" ] &&
	pass "a world-writable run directory is refused: $(grep -m1 writable "$T/ww.log")" ||
	fail "world-writable run directory: exit $rc, $(cat "$T/ww.log")"
finish

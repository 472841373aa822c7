#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `uroce qp` (looking inside the RNIC) against a running ibv_rc_pingpong between two
# uroce RNICs: while the pair runs, both devices list its QP in RTS, type RC, each
# naming the other as its remote QPN, owned by the pingpong process (pid, comm). The
# two programs are then stopped (SIGSTOP) so that the traffic quiesces: every PSN a
# side sent is acknowledged (SQ PSN = oldest unacknowledged PSN) and each side's SQ
# PSN is the PSN the other side's responder expects next. --json parses, with and
# without a QPN (the QP's counters included); a QPN that does not exist exits 1, a
# device that does not exist 2; once the programs are gone the devices have no QPs.
. "$(dirname "$0")/lib.sh"
need_prog ibv_rc_pingpong
U=$UROCE_BIN/uroce

start_rnics
bg_pingpong -s 64 -- -s 64

# qp_json DEV: `uroce qp DEV --json` into $T/DEV.json; fails when it does not parse.
qp_json() {
	"$U" qp "$1" --json >"$T/$1.json" && "$TEST_PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/$1.json"
}

# Both QPs in RTS (the pingpong exchange runs).
up=0
for _ in $(seq 100); do
	if qp_json uroce0 && qp_json uroce1 &&
		grep -q '"state":"RTS"' "$T/uroce0.json" && grep -q '"state":"RTS"' "$T/uroce1.json"; then
		up=1
		break
	fi
	sleep 0.1
done
check "both RNICs list a QP in RTS while ibv_rc_pingpong runs" test "$up" = 1
"$U" qp uroce0 | tee "$T/uroce0.qp"
"$U" qp uroce1 | tee "$T/uroce1.qp"
check "uroce qp prints the QP as a table line (RC, RTS, comm ibv_rc_pingpong)" \
	grep -Eq '^uroce0 +0x[0-9a-f]{6} +0x[0-9a-f]{6} +RC +RTS .* ibv_rc_pingpong$' "$T/uroce0.qp"

# Stop both programs: what is in flight completes, nothing new is posted.
pids=$("$TEST_PY" -c 'import json,sys
print(" ".join(str(json.load(open(f))[0]["pid"]) for f in sys.argv[1:]))' "$T/uroce0.json" "$T/uroce1.json")
for p in $pids; do
	kill -STOP "$p"
done
check "the owning pids are the pingpong processes ($pids)" \
	test "$(for p in $pids; do cat "/proc/$p/comm"; done | sort -u)" = ibv_rc_pingpong

# The checks, on both JSON lists; prints what it found, exits 0 when they hold.
cat >"$T/check.py" <<'EOF'
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
if len(a) != 1 or len(b) != 1:
    print("QPs: %d on uroce0, %d on uroce1" % (len(a), len(b)))
    sys.exit(1)
a, b = a[0], b[0]
def show(q):
    return "%s QP %#x -> %#x %s %s sq-psn %#x unacked %#x rq-psn %#x sq-wr %d rq-wr %d retry %d/%d rnr %d/%d pid %d %s" % (
        q["dev"], q["lqpn"], q["rqpn"], q["type"], q["state"], q["sq-psn"], q["unacked-psn"],
        q["rq-psn"], q["sq-wr"], q["rq-wr"], q["retry-left"], q["retry-cnt"], q["rnr-left"],
        q["rnr-retry"], q["pid"], q["comm"])
print(show(a))
print(show(b))
ok = True
for q, p, peer in ((a, b, sys.argv[4]), (b, a, sys.argv[3])):
    ok &= q["state"] == "RTS" and q["type"] == "RC" and q["rqpn"] == p["lqpn"]
    ok &= q["sq-psn"] == q["unacked-psn"] == p["rq-psn"]
    ok &= q["sq-wr"] == 0 and q["rd-atomic"] == 0 and q["comm"] == "ibv_rc_pingpong"
    ok &= q["retry-left"] == q["retry-cnt"] == 7 and q["rnr-retry"] == 7 and q["mtu"] == 1024
    ok &= q["peer"] == peer
    ok &= q["rq-wr"] > 0
sys.exit(0 if ok else 1)
EOF
quiet=0
for _ in $(seq 30); do
	qp_json uroce0 && qp_json uroce1 &&
		"$TEST_PY" "$T/check.py" "$T/uroce0.json" "$T/uroce1.json" "$ADDR0" "$ADDR1" \
			>"$T/check.out" 2>&1 && { quiet=1; break; }
	sleep 0.1
done
if [ "$quiet" = 1 ]; then
	pass "quiesced: both in RTS, all acknowledged, each SQ PSN is the peer's expected RQ PSN"
	sed 's/^/    /' "$T/check.out"
else
	fail "the QPs' PSNs do not agree after the traffic stopped"
	show "$T/check.out"
fi
qpn=$("$TEST_PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["lqpn"])' "$T/uroce0.json")
"$U" qp uroce0 "$qpn" >"$T/one.txt"
check "uroce qp uroce0 $qpn: the QP in detail with its counters" \
	grep -q "^counters (non-zero):" "$T/one.txt"
check "... whose counters show the SENDs it received" grep -Eq '^  xport.msg_rcvd +[1-9]' "$T/one.txt"
"$U" qp uroce0 "$qpn" --json >"$T/one.json"
check "uroce qp uroce0 $qpn --json parses and holds the counters" "$TEST_PY" -c '
import json, sys
q = json.load(open(sys.argv[1]))
assert len(q) == 1 and q[0]["lqpn"] == int(sys.argv[2]) and q[0]["counters"]["xport.tx_pkts"] > 0
' "$T/one.json" "$qpn"
rc=0
"$U" qp uroce0 0xfffff0 2>"$T/err" || rc=$?
check "uroce qp of a QPN that does not exist exits 1 ($(cat "$T/err"))" test "$rc" -eq 1
rc=0
"$U" qp nosuch 2>"$T/err" || rc=$?
check "uroce qp of a device that does not exist exits 2 ($(cat "$T/err"))" test "$rc" -eq 2

end_programs "$pids" "$SPID $CPID"
check_none_left "QPs" qp
stop_rnics
finish

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `uroce mr`, `uroce cq` and `uroce counters --watch` (looking inside the RNIC) against
# a running ibv_rc_pingpong between two uroce RNICs, the server with a completion
# channel (-e), the client without: each device lists the pingpong's MR with the
# length it registered (-s 4000) and its access (LOCAL_WRITE), on a PD, owned by the
# pingpong process; and its CQ of rx_depth + 1 = 501 CQEs, the server's with a channel
# that has sent events (and is seen armed for the next completion), the client's
# without. --json parses; a device that does not exist exits 2. While the traffic
# flows, `timeout 3 uroce counters DEV --watch 1` prints at least two reports with a
# rate line for the packets sent, --watch 0.5 --count 2 exactly two and exits 0. Once
# the programs are gone the devices have no MRs and no CQs. Then res_hold (tests/verbs)
# holds 60 MRs and 30 CQs, more than one answer carries: the listings page through all
# of them, each MR with its length and access words, each CQ with the size it asked.
. "$(dirname "$0")/lib.sh"
need_prog ibv_rc_pingpong
U=$UROCE_BIN/uroce

start_rnics
bg_pingpong -s 4000 -e -- -s 4000

# list_json KIND DEV: `uroce KIND DEV --json` into $T/DEV.KIND.json; fails when it does
# not parse or lists nothing.
list_json() {
	"$U" "$1" "$2" --json >"$T/$2.$1.json" &&
		"$TEST_PY" -c 'import json,sys; assert json.load(open(sys.argv[1]))' "$T/$2.$1.json"
}

# Wait until the exchange runs (both QPs in RTS).
up=0
for _ in $(seq 100); do
	"$U" qp uroce0 2>/dev/null | grep -q ' RTS ' && "$U" qp uroce1 2>/dev/null | grep -q ' RTS ' &&
		{ up=1; break; }
	sleep 0.1
done
check "both RNICs have the pingpong's QP in RTS" test "$up" = 1

# MRs.
check "uroce mr uroce0 --json parses and lists an MR" list_json mr uroce0
check "uroce mr uroce1 --json parses and lists an MR" list_json mr uroce1
cat >"$T/mr.py" <<'EOF2'
import json, sys
for f in sys.argv[1:]:
    mrs = json.load(open(f))
    for m in mrs:
        print("  %s MR %d lkey %#x rkey %#x addr %#x length %d access %s pd %d pid %d %s" % (
            m["dev"], m["handle"], m["lkey"], m["rkey"], m["addr"], m["length"],
            ",".join(m["access"]), m["pd"], m["pid"], m["comm"]))
    if not any(m["length"] == 4000 and m["access"] == ["LOCAL_WRITE"] and m["pd"] > 0
               and m["comm"] == "ibv_rc_pingpong" and m["addr"] > 0 and m["lkey"] > 0
               for m in mrs):
        sys.exit(1)
EOF2
check "each device lists the pingpong's MR: length 4000, LOCAL_WRITE, on a PD, owner ibv_rc_pingpong" \
	"$TEST_PY" "$T/mr.py" "$T/uroce0.mr.json" "$T/uroce1.mr.json"
"$U" mr uroce0 | tee "$T/uroce0.mr"
check "uroce mr prints the MR as a table line (length 4000, LOCAL_WRITE, ibv_rc_pingpong)" \
	grep -Eq '^uroce0 +[0-9]+ 0x[0-9a-f]{8} 0x[0-9a-f]{8} 0x[0-9a-f]{16} +4000 +0 +[0-9]+ LOCAL_WRITE +[0-9]+ ibv_rc_pingpong$' \
	"$T/uroce0.mr"

# CQs: the server's has a channel and is armed whenever it waits for a completion.
cat >"$T/cq.py" <<'EOF2'
import json, sys
srv, cli = (json.load(open(f)) for f in sys.argv[1:3])
for c in srv + cli:
    print("  %s CQ %d cqe %d (asked %d) unpolled %d armed %s overflowed %s channel %s events %d pid %d %s" % (
        c["dev"], c["handle"], c["cqe"], c["cqe-requested"], c["unpolled"], c["armed"],
        c["overflowed"], c["channel"], c["events"], c["pid"], c["comm"]))
def mine(c):
    return c["cqe-requested"] == 501 and c["cqe"] >= 501 and not c["overflowed"] \
        and c["comm"] == "ibv_rc_pingpong" and 0 <= c["unpolled"] <= c["cqe"]
ok = any(mine(c) and c["channel"] and c["events"] > 0 for c in srv)
ok &= any(mine(c) and not c["channel"] and c["events"] == 0 and c["armed"] == "none" for c in cli)
sys.exit(0 if ok else 1)
EOF2
check "uroce cq uroce0 --json parses and lists a CQ" list_json cq uroce0
check "uroce cq uroce1 --json parses and lists a CQ" list_json cq uroce1
check "the pingpong's CQs: 501 CQEs asked, the server's (-e) with a channel and events, the client's without" \
	"$TEST_PY" "$T/cq.py" "$T/uroce0.cq.json" "$T/uroce1.cq.json"
armed=0
for _ in $(seq 50); do
	"$U" cq uroce0 | grep -Eq ' next +no +yes ' && { armed=1; break; }
	sleep 0.02
done
"$U" cq uroce0 | tee "$T/uroce0.cq"
check "the server's CQ is seen armed (next) while it waits for a completion event" test "$armed" = 1
check "uroce cq prints the client's CQ as a table line (no channel, ibv_rc_pingpong)" \
	bash -c "'$U' cq uroce1 | grep -Eq '^uroce1 +[0-9]+ +[0-9]+ +[0-9]+ +none +no +no +0 +[0-9]+ ibv_rc_pingpong$'"

# Bad input.
for k in mr cq; do
	rc=0
	"$U" "$k" nosuch 2>"$T/err" || rc=$?
	check "uroce $k of a device that does not exist exits 2 ($(cat "$T/err"))" test "$rc" -eq 2
	rc=0
	"$U" "$k" 2>/dev/null || rc=$?
	check "uroce $k without a device exits 2" test "$rc" -eq 2
done

# counters --watch while the traffic flows.
rc=0
timeout 3 "$U" counters uroce0 --watch 1 >"$T/watch" 2>&1 || rc=$?
sed 's/^/    /' "$T/watch"
check "timeout 3 uroce counters --watch 1 runs until stopped (status $rc, 124 from timeout)" \
	test "$rc" -eq 124 -o "$rc" -eq 0
check "... and prints at least two reports" test "$(grep -c '^# uroce0 at ' "$T/watch")" -ge 2
check "... with the packets sent and their rate per second" \
	grep -Eq '^  xport\.tx_pkts +[0-9]+ +\+[1-9][0-9]* +[1-9][0-9.]*/s$' "$T/watch"
rc=0
"$U" counters uroce1 --watch 0.5 --count 2 >"$T/watch2" 2>&1 || rc=$?
check "uroce counters --watch 0.5 --count 2 exits 0 after exactly two reports" \
	test "$rc" -eq 0 -a "$(grep -c '^# uroce1 at ' "$T/watch2")" -eq 2
rc=0
"$U" counters nosuch --watch 2>/dev/null || rc=$?
check "uroce counters --watch of a device that does not exist exits 2" test "$rc" -eq 2
rc=0
"$U" counters uroce0 --watch 0 2>/dev/null || rc=$?
check "uroce counters --watch 0 is bad usage (exit 2)" test "$rc" -eq 2

pids=$("$TEST_PY" -c 'import json,sys
print(" ".join(str(json.load(open(f))[0]["pid"]) for f in sys.argv[1:]))' "$T/uroce0.mr.json" "$T/uroce1.mr.json")
end_programs "$pids" "$SPID $CPID"
check_none_left "MRs and no CQs" mr cq

HOLD=$UROCE_BIN/res_hold
if [ -x "$HOLD" ]; then
	via_cmd run
	bg_via res.hold 60 "$HOLD" uroce0 60 30
	hpid=$BG_PID
	for _ in $(seq 100); do
		grep -q '^ready' "$T/res.hold" 2>/dev/null && break
		kill -0 "$hpid" 2>/dev/null || break
		sleep 0.1
	done
	check "res_hold holds 60 MRs and 30 CQs on uroce0 ($(head -1 "$T/res.hold"))" grep -q '^ready' "$T/res.hold"
	"$U" mr uroce0 --json >"$T/hold.mr.json"
	"$U" cq uroce0 --json >"$T/hold.cq.json"
	check "uroce mr pages through all 60 MRs, each with its length and access words, none mapped (no page lies whole inside one)" "$TEST_PY" -c '
import json, sys
acc = [["LOCAL_WRITE"], ["LOCAL_WRITE", "REMOTE_WRITE"], ["LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ"],
       ["LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC"]]
mrs = json.load(open(sys.argv[1]))
assert len(mrs) == 60, len(mrs)
assert [m["handle"] for m in mrs] == sorted(m["handle"] for m in mrs)
for i, m in enumerate(mrs):
    assert m["length"] == 4096 + i and m["access"] == acc[i % 4] and m["comm"] == "res_hold", m
    assert m["mapped"] == 0, m
' "$T/hold.mr.json"
	check "uroce cq pages through all 30 CQs, each with the size it asked" "$TEST_PY" -c '
import json, sys
cqs = json.load(open(sys.argv[1]))
assert [c["cqe-requested"] for c in cqs] == list(range(1, 31)), cqs
assert all(c["cqe"] >= c["cqe-requested"] and c["unpolled"] == 0 and not c["channel"] for c in cqs)
' "$T/hold.cq.json"
	check "the table lists 60 MRs (REMOTE_ATOMIC by name) and 30 CQs" test \
		"$("$U" mr uroce0 | grep -c ' res_hold$')/$("$U" mr uroce0 | grep -c REMOTE_ATOMIC)/$("$U" cq uroce0 | grep -c ' res_hold$')" = 60/15/30
	kill -TERM "$hpid" 2>/dev/null
	wait "$hpid" 2>/dev/null
else
	echo "skip: $HOLD not built (no libibverbs to link against)"
fi
stop_rnics
finish

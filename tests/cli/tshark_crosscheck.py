#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Cross-check with tshark: every packet `uroce sample` writes (one of every
opcode, some ACK/NAK variants, a few IPv6) is decoded by tshark and by
`uroce decode --json`, and the two must agree on the opcode name (tshark's
value string and Info column), BTH fields (destqp, psn, a, se, padcnt, pkey),
RETH (va, r_key, dmalen), AETH (syndrome, msn), ImmDt, IETH, AtomicETH
(va, r_key, swap, compare), AtomicAckETH, DETH (q_key, srcqp) and the ICRC
trailer (tshark shows it byte-swapped). tshark must find no malformed packet
and no warning, except its "Illegal checksum value (0)" for IPv6 UDP
checksum 0, which RoCEv2 sends. tshark 4.0 does not know CNP (0x81), FLUSH
and ATOMIC WRITE, and names XRC opcodes without parsing XRCETH: for those
only what it does decode is compared. Exits 77 when tshark is missing.

usage: tshark_crosscheck.py UROCE_BINARY
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

UROCE = sys.argv[1]
TSHARK = shutil.which("tshark")
if not TSHARK:
    print("SKIP: tshark is not installed")
    sys.exit(77)

failures = checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)


FIELDS = [
    "frame.number", "_ws.col.op", "_ws.col.Info", "ip.version", "ipv6.version",
    "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.bth.a", "infiniband.bth.se",
    "infiniband.bth.padcnt", "infiniband.bth.p_key", "infiniband.reth.va",
    "infiniband.reth.r_key", "infiniband.reth.dmalen", "infiniband.aeth.syndrome",
    "infiniband.aeth.msn", "infiniband.immdt", "infiniband.ieth",
    "infiniband.atomiceth.swapdt", "infiniband.atomiceth.cmpdt",
    "infiniband.atomicacketh.origremdt", "infiniband.deth.q_key", "infiniband.deth.srcqp",
    "infiniband.invariant.crc",
]
# tshark 4.0 does not decode these opcodes at all (it prints "Unknown").
UNKNOWN_TO_TSHARK = {0x1c, 0x1d, 0x81}


def tshark(pcap, *extra):
    cmd = [TSHARK, "-r", pcap, "--disable-heuristic", "rpcrdma_infiniband",
           "-o", 'gui.column.format:"No.","%m","op","%Cus:infiniband.bth.opcode:0:R",'
                 '"Info","%i"', *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr)
    check(p.returncode == 0, "tshark ran: %s" % " ".join(cmd))
    return p.stdout


def num(s):
    """tshark prints numbers as decimal, 0x-hex, bare hex bytes or True/False."""
    if s in ("True", "False"):
        return int(s == "True")
    if s.startswith("0x"):
        return int(s, 16)
    return int(s)


def hexbytes(s):
    return int(s.replace(":", ""), 16)


def bswap32(v):
    return int.from_bytes(v.to_bytes(4, "little"), "big")


with tempfile.TemporaryDirectory(prefix="uroce-tshark-") as tmp:
    pcap = os.path.join(tmp, "sample.pcap")
    subprocess.run([UROCE, "sample", pcap], check=True, capture_output=True)
    ours = subprocess.run([UROCE, "decode", "--json", pcap], capture_output=True, text=True)
    check(ours.returncode == 0, "uroce decode of the sample exits 0")
    ours = [json.loads(l) for l in ours.stdout.splitlines()[:-1]]

    args = ["-T", "fields", "-E", "separator=\t", "-E", "occurrence=f", "-E", "quote=n"]
    for f in FIELDS:
        args += ["-e", f]
    rows = [l.split("\t") for l in tshark(pcap, *args).splitlines()]
    check(len(rows) == len(ours) == 84, "tshark and uroce see 84 packets (%d, %d)"
          % (len(rows), len(ours)))

    compared = named = 0
    for row, o in zip(rows, ours):
        t = dict(zip(FIELDS, row))
        fr = int(t["frame.number"])
        where = "frame %d (%s)" % (fr, o["opcode_name"])
        check(fr == o["frame"], where + ": frame numbers line up")
        op = o["opcode"]
        tname = t["_ws.col.op"]
        xrc = (op >> 5) == 5
        if op in UNKNOWN_TO_TSHARK and (tname.startswith("Unknown") or tname == str(op)):
            pass  # tshark 4.0 has no name for it (prints the number); newer ones must agree
        else:
            check(tname == o["opcode_name"], where + ": tshark names it %r" % tname)
            named += 1
        info = t["_ws.col.Info"]
        if "cm" in o:
            # tshark names a CM MAD by its attribute, as uroce's line does.
            check(info.strip() == "CM: " + o["cm"]["attr"],
                  where + ": Info %r vs CM %r" % (info, o["cm"]["attr"]))
        elif not info.startswith("Unknown OpCode"):
            check(info.split("QP=")[0].strip() == o["info_name"],
                  where + ": Info %r vs %r" % (info, o["info_name"]))
        # BTH
        check(num(t["infiniband.bth.destqp"]) == o["destqp"], where + ": destqp")
        check(num(t["infiniband.bth.psn"]) == o["psn"], where + ": psn")
        check(num(t["infiniband.bth.a"]) == o["ackreq"], where + ": AckReq")
        check(num(t["infiniband.bth.se"]) == o["se"], where + ": SE")
        check(num(t["infiniband.bth.padcnt"]) == o["padcnt"], where + ": PadCnt")
        check(num(t["infiniband.bth.p_key"]) == o["pkey"], where + ": P_Key")
        if op in UNKNOWN_TO_TSHARK or xrc:
            compared += 1
            continue
        # extended headers: present in both or in neither, with equal values
        reth = o.get("reth") or o.get("atomiceth")
        check(bool(t["infiniband.reth.va"]) == bool(reth), where + ": RETH/AtomicETH presence")
        if reth:
            check(num(t["infiniband.reth.va"]) == int(reth["va"], 16), where + ": va")
            check(num(t["infiniband.reth.r_key"]) == reth["rkey"], where + ": r_key")
        if "reth" in o:
            check(num(t["infiniband.reth.dmalen"]) == o["reth"]["dmalen"], where + ": dmalen")
        check(bool(t["infiniband.aeth.syndrome"]) == ("aeth" in o), where + ": AETH presence")
        if "aeth" in o:
            check(num(t["infiniband.aeth.syndrome"]) == o["aeth"]["syndrome"], where + ": syndrome")
            check(num(t["infiniband.aeth.msn"]) == o["aeth"]["msn"], where + ": msn")
        check(bool(t["infiniband.immdt"]) == ("immdt" in o), where + ": ImmDt presence")
        if "immdt" in o:
            check(hexbytes(t["infiniband.immdt"]) == o["immdt"], where + ": immdt")
        check(bool(t["infiniband.ieth"]) == ("ieth" in o), where + ": IETH presence")
        if "ieth" in o:
            check(hexbytes(t["infiniband.ieth"]) == o["ieth"], where + ": ieth")
        check(bool(t["infiniband.atomiceth.swapdt"]) == ("atomiceth" in o),
              where + ": AtomicETH presence")
        if "atomiceth" in o:
            a = o["atomiceth"]
            check(num(t["infiniband.atomiceth.swapdt"]) == int(a["swap_add"], 16), where + ": swap")
            check(num(t["infiniband.atomiceth.cmpdt"]) == int(a["compare"], 16), where + ": cmp")
        check(bool(t["infiniband.atomicacketh.origremdt"]) == ("atomicacketh" in o),
              where + ": AtomicAckETH presence")
        if "atomicacketh" in o:
            check(num(t["infiniband.atomicacketh.origremdt"]) == int(o["atomicacketh"]["orig"], 16),
                  where + ": orig")
        check(bool(t["infiniband.deth.q_key"]) == ("deth" in o), where + ": DETH presence")
        if "deth" in o:
            check(num(t["infiniband.deth.q_key"]) == o["deth"]["qkey"], where + ": q_key")
            check(num(t["infiniband.deth.srcqp"]) == o["deth"]["srcqp"], where + ": srcqp")
        check(num(t["infiniband.invariant.crc"]) == bswap32(o["icrc_wire"]),
              where + ": ICRC trailer %s vs 0x%08x" % (t["infiniband.invariant.crc"], o["icrc_wire"]))
        compared += 1
    check(compared == 84, "all 84 packets compared")
    check(named >= 72, "tshark names at least every RC/UC/UD/XRC opcode (%d)" % named)

    # nothing malformed, no warnings, except IPv6's UDP checksum 0 note
    out = tshark(pcap, "-Y", "_ws.malformed || _ws.expert.severity >= warning",
                 "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
                 "-E", "aggregator=|", "-e", "frame.number", "-e", "ipv6.version",
                 "-e", "_ws.expert.message")
    for line in out.splitlines():
        fr, v6, msgs = (line.split("\t") + ["", ""])[:3]
        allowed = v6 == "6" and set(msgs.split("|")) == {"Illegal checksum value (0)"}
        check(allowed, "tshark flags frame %s: %s" % (fr, msgs))

print("%d checks, %d failures" % (checks, failures))
sys.exit(1 if failures else 0)

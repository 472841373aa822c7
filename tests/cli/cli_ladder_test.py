#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""CLI tests of `uroce ladder`. Without SHARED_DIR, on `uroce sample`'s
capture and modified copies: one row per RoCEv2 packet between the two
drawn addresses (the other pair with --between, so every packet is drawn
once), each arrow in the packet's direction (checked against `uroce decode
--json`), the requester on the left, the SVG parses as XML with one arrow
per row pointing the same way, a duplicated request is marked RETX (and
nothing else is), a corrupted one BAD-ICRC, pcapng frame comments appear on
their rows (escaped in the SVG), usage errors exit 2. With SHARED_DIR, the
same row and direction checks on the rxe rping capture (exit 77 when the
captures are absent).

usage: cli_ladder_test.py UROCE [SHARED_DIR]
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from checks import check, finish
from capfile import pcap_records, pcap_write, pcapng_write

UROCE = sys.argv[1]
SHARED = sys.argv[2] if len(sys.argv) > 2 else None
RPING = SHARED and os.path.join(SHARED, "captures", "real_rxe-2host_rdmacm-rping.pcap")
if SHARED and not os.path.isfile(RPING):
    print("SKIP: no reference captures (%s is absent)" % RPING)
    sys.exit(77)

ROW = re.compile(r"^ *(\d+) \|(-- .*>\||<.* --\|)(.*)$")
def run(*args):
    p = subprocess.run([UROCE, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def ladder(pcap, *extra, svg=None):
    """(left, right, {frame: (left_to_right, tail)}, stdout, svg tree)."""
    args = ["ladder", pcap, *extra] + (["--svg", svg] if svg else [])
    rc, out, err = run(*args)
    check(rc == 0, "uroce %s: exit %d %s" % (" ".join(args), rc, err))
    lines = out.splitlines()
    m = re.match(r"uroce ladder: .*: (\S+) <-> (\S+), (\d+) RoCEv2 packets$", lines[0])
    check(m is not None, "first line names the two endpoints: %r" % lines[0])
    rows = {}
    for l in lines:
        r = ROW.match(l)
        if r:
            check(int(r.group(1)) not in rows, "one row per frame")
            rows[int(r.group(1))] = (r.group(2).startswith("--"), r.group(3))
    check(m and int(m.group(3)) == len(rows), "the count on the first line is the row count")
    tree = ET.parse(svg) if svg else None
    return (m.group(1), m.group(2)) if m else (None, None), rows, out, tree


def decode(pcap):
    rc, out, err = run("decode", "--json", pcap)
    return {o["frame"]: o for o in map(json.loads, out.splitlines()[:-1])}


def check_directions(what, ends, rows, dec):
    left, right = ends
    for n, (ltr, _) in rows.items():
        o = dec[n]
        want = (o["src"], o["dst"]) == (left, right)
        check({o["src"], o["dst"]} == {left, right} and ltr == want,
              "%s frame %d: arrow %s, packet %s > %s" % (what, n, "->" if ltr else "<-",
                                                        o["src"], o["dst"]))


def svg_arrows(tree):
    ns = "{http://www.w3.org/2000/svg}"
    out = {}
    for g in tree.iter(ns + "g"):
        lines = [e for e in g.iter(ns + "line") if "pkt" in e.get("class", "").split()]
        if g.get("class") == "row":
            check(len(lines) == 1, "one arrow in each SVG row")
            e = lines[0]
            out[int(g.get("id").split("-")[1])] = (float(e.get("x1")) < float(e.get("x2")),
                                                   e.get("class"), "".join(g.itertext()))
    return out


def check_svg(what, rows, tree):
    arrows = svg_arrows(tree)
    n = sum(1 for e in tree.iter() if "pkt" in (e.get("class") or "").split())
    check(n == len(rows) and sorted(arrows) == sorted(rows),
          "%s: SVG has one arrow per row (%d arrows, %d rows)" % (what, n, len(rows)))
    check(all(arrows[f][0] == rows[f][0] for f in rows if f in arrows),
          "%s: SVG arrows point the way the text ones do" % what)
    return arrows


with tempfile.TemporaryDirectory(prefix="uroce-ladder-test-") as tmp:
    if SHARED:
        svg = os.path.join(tmp, "rping.svg")
        ends, rows, out, tree = ladder(RPING, svg=svg)
        dec = decode(RPING)
        check(ends == ("10.77.0.3", "10.77.0.2"), "rping: the client (requester) on the left")
        check(len(rows) == 41 == len(dec) and sorted(rows) == sorted(dec),
              "rping: 41 rows, one per RoCEv2 packet (%d)" % len(rows))
        check_directions("rping", ends, rows, dec)
        check_svg("rping", rows, tree)
        check("CM ConnectRequest" in out and "CM DisconnectReply" in out,
              "rping: the CM messages are named")
        check("RETX" not in out, "rping: no retransmission")
    else:
        sample = os.path.join(tmp, "sample.pcap")
        run("sample", sample)
        dec = decode(sample)
        svg = os.path.join(tmp, "sample.svg")
        ends, rows, out, tree = ladder(sample, svg=svg)
        check(ends == ("127.0.0.1", "127.0.0.2"), "sample: the IPv4 pair, requester left")
        check("4 addresses in the capture" in out and "6 packets between other addresses" in out,
              "sample: says that the IPv6 pair is not drawn")
        ends6, rows6, out6, _ = ladder(sample, "--between", "fd00::2", "fd00::1")
        check(ends6 == ("fd00::1", "fd00::2"), "--between: requester left whatever the order")
        check(len(rows) + len(rows6) == 84 == len(dec) and sorted(set(rows) | set(rows6)) ==
              sorted(dec), "sample: every RoCEv2 packet drawn once (%d + %d)"
              % (len(rows), len(rows6)))
        check_directions("sample", ends, rows, dec)
        check_directions("sample IPv6", ends6, rows6, dec)
        check_svg("sample", rows, tree)
        resp = [n for n in rows if re.search("(?i)acknowledge|response", dec[n]["opcode_name"])]
        rcreq = [n for n in rows if dec[n]["opcode"] < 0x20 and n not in resp]
        check(len(resp) > 10 and not any(rows[n][0] for n in resp) and len(rcreq) > 10 and
              all(rows[n][0] for n in rcreq), "RC requests go right, responses come back left")
        check(not re.search(r"RETX|BAD-ICRC|MALFORMED| # ", out), "sample: no marks")
        l18 = [l for l in out.splitlines() if ROW.match(l) and ROW.match(l).group(1) == "18"][0]
        check("RC Acknowledge QP=0x000011 PSN=117 ACK credits=unlimited msn=3" in l18,
              "an ACK row: syndrome and MSN: %r" % l18)
        l65 = [l for l in out.splitlines() if ROW.match(l) and ROW.match(l).group(1) == "65"][0]
        check("RNR-NAK timer=" in l65 and "msn=" in l65, "an RNR NAK row: %r" % l65)
        check(" A len=" in [l for l in out.splitlines() if l.startswith("      3 |")][0],
              "AckReq and length on a SEND Last row")

        # Frame 2 (RC SEND Middle, PSN 101) sent again after frame 5, and frame 7
        # corrupted: one RETX row (the copy), one BAD-ICRC row.
        header, recs = pcap_records(sample)
        recs.insert(5, [recs[1][0], bytearray(recs[1][1])])
        recs[7][1][-1] ^= 0x01
        retx = os.path.join(tmp, "retx.pcap")
        pcap_write(retx, header, recs)
        svg = os.path.join(tmp, "retx.svg")
        ends, rows, out, tree = ladder(retx, svg=svg)
        marked = sorted(f for f, (_, t) in rows.items() if "RETX" in t)
        check(marked == [6], "the duplicated request (frame 6) is the one RETX row: %r" % marked)
        check(sorted(f for f, (_, t) in rows.items() if "BAD-ICRC" in t) == [8],
              "the corrupted frame is marked BAD-ICRC")
        arrows = check_svg("retx", rows, tree)
        check("retx" in arrows[6][1].split() and "RETX" in arrows[6][2] and
              all("retx" not in a[1].split() for f, a in arrows.items() if f != 6),
              "SVG: the retransmission arrow has class retx and the mark")

        # pcapng comments on their rows (text and SVG, escaped).
        header, recs = pcap_records(sample)
        ng = os.path.join(tmp, "notes.pcapng")
        notes = {3: "tx wr_id=0x7 SEND len=99 first transmission",
                 14: "fault rule 1 <drop> & \"count\" 1"}
        pcapng_write(ng, recs, notes)
        svg = os.path.join(tmp, "notes.svg")
        ends, rows, out, tree = ladder(ng, svg=svg)
        got = {f: t.split(" # ", 1)[1] for f, (_, t) in rows.items() if " # " in t}
        check(got == notes, "comments on their rows: %r" % got)
        arrows = check_svg("notes", rows, tree)
        check(all(notes[f] in arrows[f][2] for f in notes), "the SVG carries the comments")
        check(len(rows) == 78, "pcapng: the same 78 rows")

        # usage and file errors
        rc, o, e = run("ladder")
        check(rc == 2 and "usage: uroce ladder" in e, "no file: exit 2")
        rc, o, e = run("ladder", os.path.join(tmp, "missing.pcap"))
        check(rc == 2 and "No such file" in e and o == "", "missing file: exit 2")
        rc, o, e = run("ladder", sample, "--between", "10.0.0.1", "127.0.0.1")
        check(rc == 2 and "no RoCEv2 packets" in e, "--between an unknown address: exit 2")
        rc, o, e = run("ladder", sample, "--svg", os.path.join(tmp, "no", "dir.svg"))
        check(rc == 2 and "cannot write" in e, "unwritable SVG: exit 2")
        rc, o, e = run("ladder", "--help")
        check(rc == 0 and "usage: uroce ladder" in o, "--help: exit 0")

finish()

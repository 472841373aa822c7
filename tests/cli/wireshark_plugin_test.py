#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The Wireshark Lua plugin (emu/cli/wireshark/uroce.lua) under real tshark
(-X lua_script:). Mode "sample": on `uroce sample`'s capture (IPv4 and IPv6)
every packet is good; a packet with one bit flipped is bad with an expert
warning, one with a changed TOS and TTL (masked fields) stays good, packets
cut by a snap length are "unchecked"; the
pcapng comment shows as uroce.annotation; `uroce wireshark-plugin` prints
the same script and installs it where tshark loads it. Mode "captures": on
UROCE_SHARED_DIR/captures, the synthetic vectors give frames 1-11 good and
12 bad, every RoCEv2 packet of the real captures is good. In both modes the
plugin's computed ICRC must equal `uroce decode --json`'s icrc_calc on every
packet, and it must mark exactly the packets uroce decode counts as RoCEv2.
Exits 77 without tshark (or, in mode captures, without the captures).

usage: wireshark_plugin_test.py UROCE LUA_SCRIPT sample|captures [SHARED_DIR]
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from checks import check, finish
from capfile import pcap_records, pcap_write, pcapng_write

UROCE, LUA, MODE = sys.argv[1], sys.argv[2], sys.argv[3]
TSHARK = shutil.which("tshark")
if not TSHARK:
    print("SKIP: tshark is not installed")
    sys.exit(77)
CAPTURES = os.path.join(sys.argv[4], "captures") if len(sys.argv) > 4 else None
if MODE == "captures" and not (CAPTURES and os.path.isdir(CAPTURES)):
    print("SKIP: no reference captures (UROCE_SHARED_DIR/captures is absent)")
    sys.exit(77)

def plugin(pcap, env=None, lua=LUA):
    """{frame: (icrc, calc, wire, experts, annotation)} for frames the plugin marked."""
    cmd = [TSHARK, "-r", pcap, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
           "-E", "aggregator=|", "-e", "frame.number", "-e", "uroce.icrc", "-e",
           "uroce.icrc.calc", "-e", "uroce.icrc.wire", "-e", "_ws.expert.message", "-e",
           "uroce.annotation"]
    if lua:
        cmd[1:1] = ["-X", "lua_script:" + lua]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    check(p.returncode == 0, "tshark on %s: %s" % (pcap, p.stderr.strip()))
    check("Lua: Error" not in p.stderr and "lua_script" not in p.stderr,
          "the plugin loads without a Lua error: %s" % p.stderr.strip())
    rows = {}
    for line in p.stdout.splitlines():
        f = line.split("\t")
        f += [""] * (6 - len(f))
        if f[1]:
            rows[int(f[0])] = (f[1], int(f[2], 16) if f[2] else None,
                               int(f[3], 16) if f[3] else None, f[4], f[5])
    return rows


def decode(pcap):
    p = subprocess.run([UROCE, "decode", "--json", pcap], capture_output=True, text=True)
    check(p.returncode in (0, 1), "uroce decode %s: exit %d" % (pcap, p.returncode))
    return {o["frame"]: o for o in map(json.loads, p.stdout.splitlines()[:-1])}


def verify(pcap, bad=(), what=None):
    """Every RoCEv2 packet good except the frames in bad; calc = uroce decode's."""
    what = what or os.path.basename(pcap)
    rows, dec = plugin(pcap), decode(pcap)
    check(len(rows) > 0 and sorted(rows) == sorted(dec),
          "%s: the plugin marks exactly uroce decode's %d RoCEv2 packets (got %d)"
          % (what, len(dec), len(rows)))
    for n, (icrc, calc, wire, experts, _) in sorted(rows.items()):
        want = "bad" if n in bad else "good"
        check(icrc == want, "%s frame %d: uroce.icrc %s, want %s" % (what, n, icrc, want))
        check(("Bad ICRC" in experts) == (n in bad),
              "%s frame %d: expert warning only on a bad ICRC (%r)" % (what, n, experts))
        o = dec.get(n)
        check(o is not None and o.get("icrc_calc") == calc and o.get("icrc_wire") == wire,
              "%s frame %d: plugin calc/wire %s/%s, uroce decode %s/%s" % (
                  what, n, calc, wire, o and o.get("icrc_calc"), o and o.get("icrc_wire")))
        check(o is not None and o.get("icrc") == ("bad" if n in bad else "ok"),
              "%s frame %d: uroce decode agrees on the verdict" % (what, n))
    return rows


def first_frame(recs, pred):
    return next(i for i, (_, d) in enumerate(recs) if pred(d))


if MODE == "captures":
    vec = os.path.join(CAPTURES, "synthetic_icrc_vectors.pcap")
    rows = verify(vec, bad={12})
    check(sorted(rows) == list(range(1, 13)), "synthetic vectors: 12 RoCEv2 frames")
    check(rows.get(12, ("",) * 4)[3].count("Bad ICRC") == 1,
          "frame 12: one Bad ICRC warning naming both values: %r" % (rows.get(12),))
    counts = {"real_huawei-hiroce_rc-send_oferby-proxy.pcap": 105,
              "real_connectx4lx_cnp_from-scapy-test-hex.pcap": 1,
              "real_rxe-2host_rdmacm-rping.pcap": 41,
              "real_rxe-2host_rdmacm-ucmatose.pcap": 7,
              "real_rxe-2host_rdmacm-reject.pcap": 2}
    for name, n in counts.items():
        rows = verify(os.path.join(CAPTURES, name))
        check(len(rows) == n, "%s: %d RoCEv2 packets checked, want %d" % (name, len(rows), n))
else:
    with tempfile.TemporaryDirectory(prefix="uroce-lua-test-") as tmp:
        sample = os.path.join(tmp, "sample.pcap")
        subprocess.run([UROCE, "sample", sample], check=True, capture_output=True)
        rows = verify(sample)
        # ATOMIC WRITE (0x1D): Wireshark 4.0 does not know it, the plugin
        # decodes its RETH and 8 bytes, as uroce decode reads them.
        p = subprocess.run([TSHARK, "-r", sample, "-X", "lua_script:" + LUA, "-Y",
                            "infiniband.bth.opcode == 29", "-T", "fields", "-e", "frame.number",
                            "-e", "uroce.atomic_write.va", "-e", "uroce.atomic_write.rkey",
                            "-e", "uroce.atomic_write.dmalen", "-e", "uroce.atomic_write.data",
                            "-e", "_ws.malformed"], capture_output=True, text=True)
        aw = [line.split("\t") for line in p.stdout.splitlines()]
        dec = decode(sample)
        check(len(aw) == 1 and len(aw[0]) >= 5 and aw[0][5:] in ([], [""]),
              "one ATOMIC WRITE in the sample, not malformed: %r" % aw)
        if len(aw) == 1 and len(aw[0]) >= 5:
            o = dec.get(int(aw[0][0]), {}).get("reth", {})
            check(int(aw[0][1], 16) == int(o.get("va", "0"), 16) and
                  int(aw[0][2], 16) == o.get("rkey") and int(aw[0][3]) == o.get("dmalen") == 8
                  and len(aw[0][4].replace(":", "")) == 16,
                  "uroce.atomic_write va/rkey/dmalen/data agree with uroce decode: %r %r"
                  % (aw[0], o))
        # FLUSH (0x1C): Wireshark 4.0 does not know it either; the plugin
        # decodes its FETH and RETH as uroce decode reads them.
        p = subprocess.run([TSHARK, "-r", sample, "-X", "lua_script:" + LUA, "-Y",
                            "infiniband.bth.opcode == 28", "-T", "fields", "-e", "frame.number",
                            "-e", "uroce.flush.plt", "-e", "uroce.flush.sel",
                            "-e", "uroce.flush.va", "-e", "uroce.flush.rkey",
                            "-e", "uroce.flush.dmalen", "-e", "_ws.malformed"],
                           capture_output=True, text=True)
        fl = [line.split("\t") for line in p.stdout.splitlines()]
        check(len(fl) == 1 and len(fl[0]) >= 6 and fl[0][6:] in ([], [""]),
              "one FLUSH in the sample, not malformed: %r" % fl)
        if len(fl) == 1 and len(fl[0]) >= 6:
            o = dec.get(int(fl[0][0]), {})
            feth, reth = o.get("feth", {}), o.get("reth", {})
            check(int(fl[0][1], 16) == feth.get("plt") and int(fl[0][2]) == feth.get("sel") and
                  int(fl[0][3], 16) == int(reth.get("va", "0"), 16) and
                  int(fl[0][4], 16) == reth.get("rkey") and int(fl[0][5]) == reth.get("dmalen"),
                  "uroce.flush plt/sel/va/rkey/dmalen agree with uroce decode: %r %r"
                  % (fl[0], o))
        v6 = [n for n, o in decode(sample).items() if o.get("ip_version") == 6]
        check(len(rows) == 84 and len(v6) == 6 and all(rows[n][0] == "good" for n in v6),
              "sample: 84 packets good, the 6 IPv6 ones among them")

        header, recs = pcap_records(sample)
        # One bit flipped in the payload of the first IPv4 packet, one in the
        # BTH PSN of the first IPv6 one: both bad.
        i4 = first_frame(recs, lambda d: d[12:14] == b"\x08\x00")
        i6 = first_frame(recs, lambda d: d[12:14] == b"\x86\xdd")
        recs[i4][1][14 + 20 + 8 + 12] ^= 0x01
        recs[i6][1][14 + 40 + 8 + 11] ^= 0x80
        # TOS and TTL of another IPv4 packet changed: masked, still good.
        recs[i4 + 1][1][14 + 1] = 0xb8
        recs[i4 + 1][1][14 + 8] = 3
        bad = os.path.join(tmp, "bad.pcap")
        pcap_write(bad, header, recs)
        verify(bad, bad={i4 + 1, i6 + 1}, what="corrupted sample")

        # Cut at a snap length of 60 bytes (headers only): every packet unchecked.
        header, recs = pcap_records(sample)
        cut = os.path.join(tmp, "cut.pcap")
        pcap_write(cut, header, [[rh[:8] + struct.pack("<I", min(60, len(d))) + rh[12:], d[:60]]
                                 for rh, d in recs])
        rows = plugin(cut)
        check(len(rows) == 84 and all(r[0] == "unchecked" and "Bad ICRC" not in r[3]
                                      for r in rows.values()), "snap length 60: all unchecked")

        # pcapng frame comments: uroce.annotation (frames without one have none).
        ng = os.path.join(tmp, "notes.pcapng")
        notes = {2: "tx wr_id=7 SEND len=99 first transmission", 5: "fault rule 1: drop <&>"}
        header, recs = pcap_records(sample)
        pcapng_write(ng, recs, notes)
        rows = plugin(ng)
        check({n: r[4] for n, r in rows.items() if r[4]} == notes,
              "uroce.annotation is the frame comment: %r" % {n: r[4] for n, r in rows.items()
                                                             if r[4]})
        check(len(rows) == 84 and all(r[0] == "good" for r in rows.values()),
              "pcapng: all 84 still good")

        # `uroce wireshark-plugin`: print gives the shipped file, install puts it
        # where tshark loads it (personal Lua plugins under $HOME).
        p = subprocess.run([UROCE, "wireshark-plugin", "print"], capture_output=True)
        with open(LUA, "rb") as f:
            check(p.returncode == 0 and p.stdout == f.read(), "print gives uroce.lua")
        env = dict(os.environ, HOME=os.path.join(tmp, "home"))
        env.pop("XDG_CONFIG_HOME", None)
        p = subprocess.run([UROCE, "wireshark-plugin", "install"], capture_output=True,
                           text=True, env=env)
        check(p.returncode == 0 and "installed " + tmp in p.stdout,
              "install into the personal folder: %r %r" % (p.stdout, p.stderr))
        p = subprocess.run([TSHARK, "-G", "plugins"], capture_output=True, text=True, env=env)
        check("uroce.lua" in p.stdout, "tshark -G plugins lists the installed uroce.lua")
        rows = plugin(bad, env=env, lua=None)
        check(len(rows) == 84 and [n for n, r in rows.items() if r[0] == "bad"]
              == sorted([i4 + 1, i6 + 1]), "the installed plugin works without -X")
        d = os.path.join(tmp, "dir", "sub")
        p = subprocess.run([UROCE, "wireshark-plugin", "install", "--dir", d],
                           capture_output=True, text=True)
        check(p.returncode == 0 and os.path.isfile(os.path.join(d, "uroce.lua")),
              "install --dir creates the folder")
        p = subprocess.run([UROCE, "wireshark-plugin", "frob"], capture_output=True, text=True)
        check(p.returncode == 2 and "usage:" in p.stderr, "bad subcommand: exit 2")

finish()

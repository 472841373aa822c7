#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""CLI tests of `uroce decode` and `uroce sample`: exact summary lines and exit
codes (0 / 1 / 2), --json output parsed with the json module, usage and file
errors. Self-contained: the input captures come from `uroce sample` and are
corrupted here on purpose.

usage: cli_decode_test.py UROCE_BINARY
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

from capfile import pcap_records, pcap_write

UROCE = sys.argv[1]
failures = 0
checks = 0


def run(*args):
    p = subprocess.run([UROCE, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)


def summary(ok, bad, malformed):
    return "roce packets: %d, icrc ok: %d, icrc bad: %d, malformed: %d" % (
        ok + bad + malformed, ok, bad, malformed)


with tempfile.TemporaryDirectory(prefix="uroce-cli-test-") as tmp:
    sample = os.path.join(tmp, "sample.pcap")

    # --help and usage errors
    rc, out, err = run("--help")
    check(rc == 0 and "decode" in out and "sample" in out, "uroce --help lists subcommands")
    rc, out, err = run()
    check(rc == 2 and "usage:" in err and out == "", "uroce without arguments: usage, exit 2")
    rc, out, err = run("frobnicate")
    check(rc == 2 and "unknown command" in err, "unknown subcommand: exit 2")
    rc, out, err = run("decode")
    check(rc == 2 and "usage: uroce decode" in err and out == "", "decode without file: exit 2")
    rc, out, err = run("decode", "--bogus", sample)
    check(rc == 2 and "unknown option" in err, "decode with a bad option: exit 2")
    rc, out, err = run("decode", "--help")
    check(rc == 0 and "usage: uroce decode" in out, "decode --help: exit 0")
    rc, out, err = run("sample")
    check(rc == 2 and "usage: uroce sample" in err, "sample without file: exit 2")
    rc, out, err = run("sample", "a.pcap", "b.pcap")
    check(rc == 2, "sample with two files: exit 2")
    rc, out, err = run("sample", os.path.join(tmp, "no", "such", "dir.pcap"))
    check(rc == 2 and "No such file or directory" in err, "sample into a missing directory")

    # missing and unreadable files
    missing = os.path.join(tmp, "missing.pcap")
    rc, out, err = run("decode", missing)
    check(rc == 2 and out == "" and "missing.pcap: No such file or directory" in err,
          "missing file: clear error, exit 2, nothing on stdout (got %d %r %r)" % (rc, out, err))
    text = os.path.join(tmp, "text.pcap")
    with open(text, "w") as f:
        f.write("not a capture\n")
    rc, out, err = run("decode", text)
    check(rc == 2 and out == "" and "not a readable pcap/pcapng file" in err,
          "non-pcap file: exit 2")
    rc, out, err = run("decode", tmp)
    check(rc == 2 and out == "", "a directory: exit 2")

    # the sample: every packet valid
    rc, out, err = run("sample", sample)
    check(rc == 0 and "wrote 84 packets" in out, "sample writes 84 packets (%r)" % out)
    rc, out, err = run("decode", sample)
    lines = out.splitlines()
    check(rc == 0, "sample decodes with exit 0 (got %d)" % rc)
    check(lines[-1] == summary(84, 0, 0), "sample summary line: %r" % lines[-1])
    check(len(lines) == 85, "one line per packet plus the summary")
    check(lines[0].startswith("1 127.0.0.1:49169 > 127.0.0.2:4791 RC Send First QP=0x000012"),
          "first line: %r" % lines[0])
    check(all(l.endswith("icrc=ok") for l in lines[:-1]), "every line says icrc=ok")

    # a missing file among good ones: nothing decoded, exit 2
    rc, out, err = run("decode", sample, missing)
    check(rc == 2 and out == "", "good + missing file: exit 2 before any output")

    # two files: lines say which file, one summary over both
    rc, out, err = run("decode", sample, sample)
    lines = out.splitlines()
    check(rc == 0 and lines[-1] == summary(168, 0, 0), "two files: totals add up")
    check(lines[0].startswith(sample + ":1 "), "two files: lines name their file")

    # JSON: one object per packet, same summary
    rc, out, err = run("decode", "--json", sample)
    lines = out.splitlines()
    check(rc == 0 and lines[-1] == summary(84, 0, 0), "--json keeps the summary line")
    objs = []
    for l in lines[:-1]:
        try:
            objs.append(json.loads(l))
        except ValueError as e:
            check(False, "JSON line does not parse: %s: %r" % (e, l))
    check(len(objs) == 84, "84 JSON objects")
    check([o["frame"] for o in objs] == list(range(1, 85)), "frame numbers 1..84")
    check(all(o["icrc"] == "ok" and o["malformed"] is False for o in objs), "JSON verdicts")
    first = objs[0]
    check(first["opcode"] == 0 and first["opcode_name"] == "Reliable Connection (RC) - SEND First"
          and first["destqp"] == 0x12 and first["src"] == "127.0.0.1" and first["dport"] == 4791
          and first["payload_len"] == 256, "first JSON object fields: %r" % first)
    cnp = [o for o in objs if o["opcode"] == 0x81]
    check(len(cnp) == 1 and cnp[0]["becn"] == 1 and cnp[0]["opcode_name"] == "CNP", "CNP in JSON")
    v6 = [o for o in objs if o.get("ip_version") == 6]
    check(len(v6) == 6 and v6[0]["src"] == "fd00::1", "IPv6 packets in JSON")
    reth = [o for o in objs if "reth" in o]
    check(all(o["reth"]["va"].startswith("0x") and isinstance(o["reth"]["rkey"], int)
              for o in reth) and len(reth) > 5, "RETH fields in JSON")
    rc, out2, err = run("decode", "--json", sample, sample)
    o2 = json.loads(out2.splitlines()[0])
    check(o2["file"] == sample and o2["frame"] == 1, "--json with two files names the file")

    # one corrupted ICRC: exit 1
    header, recs = pcap_records(sample)
    bad = os.path.join(tmp, "bad.pcap")
    recs[4][1][-1] ^= 0x01
    pcap_write(bad, header, recs)
    rc, out, err = run("decode", bad)
    lines = out.splitlines()
    check(rc == 1 and lines[-1] == summary(83, 1, 0), "one bad ICRC: %r exit %d" % (lines[-1], rc))
    check("icrc=bad (wire 0x" in lines[4], "the bad packet's line says so: %r" % lines[4])
    rc, out, err = run("decode", "--json", bad)
    check(json.loads(out.splitlines()[4])["icrc"] == "bad", "JSON says icrc bad")

    # one malformed packet (TVer 1): counted as malformed, exit 1
    header, recs = pcap_records(sample)
    recs[7][1][42 + 1] |= 0x01
    mal = os.path.join(tmp, "malformed.pcap")
    pcap_write(mal, header, recs)
    rc, out, err = run("decode", mal)
    lines = out.splitlines()
    check(rc == 1 and lines[-1] == summary(83, 0, 1), "one malformed: %r exit %d" % (lines[-1], rc))
    check("malformed: TVer not 0" in lines[7], "malformed line gives the reason: %r" % lines[7])
    rc, out, err = run("decode", "--json", mal)
    o = json.loads(out.splitlines()[7])
    check(o["malformed"] is True and o["reason"] == "bad_tver", "JSON malformed reason")

    # a non-RoCE frame (UDP to another port) is skipped, not counted
    header, recs = pcap_records(sample)
    recs[0][1][14 + 20 + 3] = 0xb6  # dport 4790
    skip = os.path.join(tmp, "skip.pcap")
    pcap_write(skip, header, recs)
    rc, out, err = run("decode", skip)
    lines = out.splitlines()
    check(rc == 0 and lines[-1] == summary(83, 0, 0) and lines[0].startswith("2 "),
          "dport 4790 skipped: %r" % lines[-1])

    # a capture cut by a snap length: the cut packet is decoded as far as it
    # goes and counted as cut (its ICRC cannot be checked), not as bad or
    # malformed; cut inside its IB headers, it is malformed
    def cut_sample(keep):
        header, recs = pcap_records(sample)
        rh = bytearray(recs[0][0])
        caplen = struct.unpack("<I", rh[8:12])[0]
        keep = keep if keep > 0 else caplen + keep
        rh[8:12] = struct.pack("<I", keep)
        recs[0] = [bytes(rh), recs[0][1][:keep]]
        path = os.path.join(tmp, "cut%d.pcap" % keep)
        pcap_write(path, header, recs)
        return path, caplen
    cut, caplen = cut_sample(-10)
    rc, out, err = run("decode", cut)
    lines = out.splitlines()
    check(rc == 0 and lines[-1] == "roce packets: 84, icrc ok: 83, icrc bad: 0, malformed: 0, cut: 1" and
          lines[0].endswith("icrc=unchecked (cut at %d of %d bytes)" % (caplen - 10, caplen)) and
          " RC Send First " in lines[0],
          "snap-length cut in the payload: %r %r" % (lines[0], lines[-1]))
    rc, out, err = run("decode", "--json", cut)
    o = json.loads(out.splitlines()[0])
    check(o["cut_at"] == caplen - 10 and o["frame_len"] == caplen and o["icrc"] == "unchecked" and
          o["malformed"] is False, "snap-length cut, JSON: %r" % out.splitlines()[0][:160])
    cut, caplen = cut_sample(14 + 20 + 8 + 8)
    rc, out, err = run("decode", cut)
    lines = out.splitlines()
    check(rc == 1 and lines[-1] == summary(83, 0, 1) and "too short for the opcode" in lines[0],
          "snap-length cut inside the BTH: %r %r" % (lines[0], lines[-1]))

    # an empty capture: zero packets, exit 0
    empty = os.path.join(tmp, "empty.pcap")
    pcap_write(empty, header, [])
    rc, out, err = run("decode", empty)
    check(rc == 0 and out == summary(0, 0, 0) + "\n", "empty capture: %r" % out)

    # a damaged capture (record runs past the end): error, exit 2, summary still printed
    damaged = os.path.join(tmp, "damaged.pcap")
    header, recs = pcap_records(sample)
    with open(damaged, "wb") as f:
        f.write(header)
        f.write(recs[0][0])
        f.write(recs[0][1][:20])
    rc, out, err = run("decode", damaged)
    check(rc == 2 and "damaged capture" in err, "truncated file: exit 2 (%d, %r)" % (rc, err))

print("%d checks, %d failures" % (checks, failures))
sys.exit(1 if failures else 0)

#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""`uroce decode` on the reference captures in UROCE_SHARED_DIR/captures: exact
summary lines and exit codes, the same results after conversion to pcapng
(with editcap, when installed), and per-opcode counts from --json.
Exits 77 (ctest SKIP_RETURN_CODE) when the captures are absent.

usage: cli_captures_test.py UROCE_BINARY UROCE_SHARED_DIR
"""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

UROCE, SHARED = sys.argv[1], sys.argv[2]
CAPS = os.path.join(SHARED, "captures")
if not os.path.isdir(CAPS):
    print("SKIP: reference captures not found at %s (set -DUROCE_SHARED_DIR)" % CAPS)
    sys.exit(77)

HUAWEI = os.path.join(CAPS, "real_huawei-hiroce_rc-send_oferby-proxy.pcap")
SYNTH = os.path.join(CAPS, "synthetic_icrc_vectors.pcap")
CNP = os.path.join(CAPS, "real_connectx4lx_cnp_from-scapy-test-hex.pcap")
failures = checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)


def decode(*args):
    p = subprocess.run([UROCE, "decode", *args], capture_output=True, text=True)
    return p.returncode, p.stdout.splitlines(), p.stderr


cases = [
    (HUAWEI, "roce packets: 105, icrc ok: 105, icrc bad: 0, malformed: 0", 0),
    (SYNTH, "roce packets: 12, icrc ok: 11, icrc bad: 1, malformed: 0", 1),
    (CNP, "roce packets: 1, icrc ok: 1, icrc bad: 0, malformed: 0", 0),
]
editcap = shutil.which("editcap")
with tempfile.TemporaryDirectory(prefix="uroce-cap-test-") as tmp:
    for path, want, want_rc in cases:
        rc, lines, err = decode(path)
        check(lines and lines[-1] == want and rc == want_rc,
              "%s: got %r exit %d" % (os.path.basename(path), lines[-1:], rc))
        if editcap:
            ng = os.path.join(tmp, os.path.basename(path) + "ng")
            subprocess.run([editcap, "-F", "pcapng", path, ng], check=True)
            rc2, lines2, _ = decode(ng)
            check(lines2 == lines and rc2 == rc, "%s as pcapng decodes the same" % path)
    if not editcap:
        print("note: editcap not installed, pcapng conversion not checked here")

rc, lines, err = decode(HUAWEI, SYNTH, CNP)
check(rc == 1 and lines[-1] == "roce packets: 118, icrc ok: 117, icrc bad: 1, malformed: 0",
      "three files together: %r" % lines[-1])

rc, lines, err = decode("--json", HUAWEI)
objs = [json.loads(l) for l in lines[:-1]]
ops = collections.Counter(o["opcode_name"] for o in objs)
check(ops == {"Reliable Connection (RC) - SEND First": 33,
              "Reliable Connection (RC) - SEND Last with Immediate": 33,
              "Reliable Connection (RC) - SEND Only with Immediate": 2,
              "Reliable Connection (RC) - Acknowledge": 37}, "Huawei opcode counts: %r" % ops)
check(all(o["icrc"] == "ok" for o in objs), "Huawei: every ICRC ok")
check({o["sport"] for o in objs} == {69, 72}, "Huawei: source ports are the QPNs")

rc, lines, err = decode(SYNTH)
check(lines[11].startswith("12 192.168.1.1:49443 > 192.168.1.2:4791 RC Send Only")
      and lines[11].endswith("icrc=bad (wire 0x48b89e2e, computed 0xb7b89e2e)"),
      "synthetic frame 12: %r" % lines[11])
check(sum(l.endswith("icrc=ok") for l in lines) == 11, "synthetic frames 1-11 ok")
check("[fe80::1]:49443 > [fe80::2]:4791 RC Send Only" in lines[10], "frame 11 is IPv6")

rc, lines, err = decode(CNP)
check(lines[0] == "1 10.0.17.1:0 > 10.0.18.1:4791 CNP QP=0x000118 PSN=0 A=0 SE=0 M=0 pad=0 "
      "BECN icrc=ok", "CNP line: %r" % lines[0])

print("%d checks, %d failures" % (checks, failures))
sys.exit(1 if failures else 0)

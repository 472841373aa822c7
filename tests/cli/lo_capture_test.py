#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""ICRC on the real wire: capture `lo` with tshark while lo_send sends one
packet of every opcode through an unconnected UDP socket with IP_PMTUDISC_DO
and the ICRC predicted over IPv4 ID 0 + DF (PROTOCOL.md section 12). The
kernel's real headers must carry ID 0 and DF, and `uroce decode` must find
every ICRC valid in tshark's pcapng capture of lo (Ethernet with zero MACs).
The packets go from and to the test's own loopback /24 (tests/lib/testnet.py).
Exits 77 when tshark is missing or may not capture on lo, or when the test's
network is taken.

usage: lo_capture_test.py UROCE LO_SEND
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.environ.get("UROCE_TEST_LIB", os.path.join(os.path.dirname(__file__), "..", "lib")))
import testnet  # noqa: E402

UROCE, LO_SEND = sys.argv[1], sys.argv[2]
TSHARK = shutil.which("tshark")
if not TSHARK:
    print("SKIP: tshark is not installed")
    sys.exit(77)
NET = testnet.claim()[0]
SRC, DST = NET + ".1", NET + ".2"  # this test's addresses: nothing else sends there

failures = checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)


with tempfile.TemporaryDirectory(prefix="uroce-lo-") as tmp:
    os.chmod(tmp, 0o777)  # dumpcap may run as another user
    cap = os.path.join(tmp, "lo.pcapng")
    n = int(subprocess.run([LO_SEND, "-n"], capture_output=True, text=True).stdout)
    # stops by itself after n packets (or 60 s)
    ts = subprocess.Popen([TSHARK, "-i", "lo", "-f", "udp and dst host %s and dst port 4791" % DST,
                           "-w", cap, "-c", str(n), "-a", "duration:60"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # wait for "Capturing on 'Loopback: lo'" (or a failure)
    started, err = False, ""
    deadline = time.time() + 20
    while time.time() < deadline:
        line = ts.stderr.readline()
        if not line:
            break
        err += line
        if "Capturing on" in line:
            started = True
            break
    if not started:
        ts.kill()
        print("SKIP: tshark cannot capture on lo here: %s" % err.strip().replace("\n", " | "))
        sys.exit(77)
    # "Capturing on" comes a little before the capture filter is live
    time.sleep(2.0)
    sent = subprocess.run([LO_SEND, SRC, DST], capture_output=True, text=True)
    check(sent.returncode == 0 and sent.stdout.strip() == str(n), "lo_send ran: %s" % sent.stderr)
    try:
        ts.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        ts.send_signal(signal.SIGINT)
        ts.communicate(timeout=20)
        check(False, "tshark did not see all %d packets within 20 s" % n)

    out = subprocess.run([UROCE, "decode", cap], capture_output=True, text=True)
    lines = out.stdout.splitlines()
    want = "roce packets: %d, icrc ok: %d, icrc bad: 0, malformed: 0" % (n, n)
    check(n > 60 and lines and lines[-1] == want and out.returncode == 0,
          "capture of lo: %r (sent %d, exit %d)" % (lines[-1:], n, out.returncode))
    hdr = subprocess.run([TSHARK, "-r", cap, "-T", "fields", "-e", "ip.id", "-e",
                          "ip.flags.df", "-e", "ip.dsfield"], capture_output=True, text=True)
    rows = [l.split("\t") for l in hdr.stdout.splitlines()]
    check(len(rows) == n and all(r[0] == "0x0000" and r[1] in ("1", "True") for r in rows),
          "kernel sent IP ID 0 with DF on every packet: %r" % rows[:3])
    check(all(r[2] == "0x02" for r in rows), "TOS as set (masked in the ICRC): %r" % rows[:1])

print("%d checks, %d failures" % (checks, failures))
sys.exit(1 if failures else 0)

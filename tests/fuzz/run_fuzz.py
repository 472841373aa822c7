#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run the libFuzzer target for a fixed time, seeded with a corpus generated
now: every frame of `uroce sample` as an Ethernet frame, as a raw IP packet
and as a bare IB packet. Crash artifacts land in ARTIFACT_DIR.

With --script (fuzz_xport), each seed is a script of that target instead:
one sample packet as a datagram to each host of the fake network, ICRC
recomputed, then a run of the network.

SECONDS may instead be runs=N: stop after N inputs (scripts/fuzz.sh uses it
for the long runs), with no time limit.

usage: run_fuzz.py FUZZER UROCE SECONDS|runs=N ARTIFACT_DIR [--script]
"""
import os
import struct
import subprocess
import sys
import tempfile

fuzzer, uroce, seconds, artifacts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
script = sys.argv[5:] == ["--script"]
os.makedirs(artifacts, exist_ok=True)
with tempfile.TemporaryDirectory(prefix="uroce-fuzz-") as tmp:
    pcap = os.path.join(tmp, "sample.pcap")
    subprocess.run([uroce, "sample", pcap], check=True, capture_output=True)
    corpus = os.path.join(tmp, "corpus")
    os.mkdir(corpus)
    with open(pcap, "rb") as f:
        blob = f.read()
    off, n = 24, 0
    while off < len(blob):
        caplen = struct.unpack("<I", blob[off + 8:off + 12])[0]
        frame = blob[off + 16:off + 16 + caplen]
        off += 16 + caplen
        ip = frame[14:]
        ib = ip[(20 if ip[0] >> 4 == 4 else 40) + 8:]
        if script:
            # step 0: datagram (to host A / B, ICRC recomputed); step 2: run
            step = lambda dst: bytes([0, dst, len(ib) & 0xff, len(ib) >> 8]) + ib
            seeds = (("a", step(2) + bytes([2, 255])), ("b", step(3) + bytes([2, 255])),
                     ("ab", step(2) + step(3) + bytes([1, 0, 4, 2, 16, 2, 255])))
        else:
            seeds = (("eth", frame), ("ip", ip), ("ib", ib))
        for kind, data in seeds:
            with open(os.path.join(corpus, "%s-%03d" % (kind, n)), "wb") as out:
                out.write(data)
        n += 1
    print("seed corpus: %d files from %d sample packets" % (len(os.listdir(corpus)), n), flush=True)
    limit = ("-runs=" + seconds[5:]) if seconds.startswith("runs=") else ("-max_total_time=" + seconds)
    cmd = [fuzzer, corpus, limit, "-timeout=10", "-print_final_stats=1",
           "-artifact_prefix=" + artifacts.rstrip("/") + "/"]
    print(" ".join(cmd), flush=True)
    sys.exit(subprocess.run(cmd).returncode)

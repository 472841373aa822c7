#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run the libFuzzer target for a fixed time, seeded with a corpus generated
now: every frame of `uroce sample` as an Ethernet frame, as a raw IP packet
and as a bare IB packet. Crash artifacts land in ARTIFACT_DIR.

usage: run_fuzz.py FUZZER UROCE SECONDS ARTIFACT_DIR
"""
import os
import struct
import subprocess
import sys
import tempfile

fuzzer, uroce, seconds, artifacts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
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
        for kind, data in (("eth", frame), ("ip", ip), ("ib", ib)):
            with open(os.path.join(corpus, "%s-%03d" % (kind, n)), "wb") as out:
                out.write(data)
        n += 1
    print("seed corpus: %d files from %d sample packets" % (3 * n, n), flush=True)
    cmd = [fuzzer, corpus, "-max_total_time=" + seconds, "-timeout=10", "-print_final_stats=1",
           "-artifact_prefix=" + artifacts.rstrip("/") + "/"]
    print(" ".join(cmd), flush=True)
    sys.exit(subprocess.run(cmd).returncode)

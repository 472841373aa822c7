# SPDX-License-Identifier: MIT
"""UDP probe traffic for the self-test of the impairment tool (impair_test.sh).

`send ADDR PORT N [GAP_US]` sends N datagrams to ADDR:PORT, each carrying its
sequence number, its send time (CLOCK_MONOTONIC, which the namespaces share)
and a hash of itself, with UDP checksum 0 (SO_NO_CHECK), as RoCEv2 senders do,
so that a corrupted datagram still arrives and is recognised by its hash.
`recv ADDR PORT IDLE_S` receives until IDLE_S seconds pass without a datagram
(up to FIRST_WAIT_S for the first one) and prints one summary line of
key=value pairs: received, unique, dup, corrupt, reordered (datagrams with a
lower sequence than one before them), missing (below the highest sequence
received), longest_gap (the longest run of consecutive missing sequences),
last (the highest), missing_hash (which ones are missing, to compare two
runs), delay_min/avg/max_ms. It only talks to the address it is given.
"""
import hashlib
import os
import socket
import struct
import sys
import time

SO_NO_CHECK = 11
HDR = struct.Struct("!IQ")


# IMPAIR_PROBE_LEAD=HEX: each datagram starts with that byte (read as a BTH
# opcode by the tool: 11 looks like an RC Acknowledge), which recv skips.
LEAD = bytes.fromhex(os.environ.get("IMPAIR_PROBE_LEAD", ""))
# How long recv waits for the first datagram.
FIRST_WAIT_S = 5


def send(addr, port, n, gap_us=0):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, SO_NO_CHECK, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
    pad = bytes(range(64))
    for i in range(n):
        body = HDR.pack(i, time.monotonic_ns()) + pad
        s.sendto(LEAD + body + hashlib.sha1(body).digest()[:8], (addr, port))
        if gap_us:
            time.sleep(gap_us / 1e6)


def recv(addr, port, idle):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # a burst of 2000 must fit while a loaded machine delays this reader:
    # force the size past rmem_max where allowed (root, as for namespaces)
    try:
        s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), 1 << 24)
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    s.bind((addr, port))
    # the sender may start seconds after this bind on a loaded machine (two
    # test suites on two cores): the idle limit counts from the first datagram
    s.settimeout(max(idle, FIRST_WAIT_S))
    seen, got, dup, corrupt, reordered, top, delays = set(), 0, 0, 0, 0, -1, []
    while True:
        try:
            data = s.recv(4096)
        except socket.timeout:
            break
        s.settimeout(idle)
        now = time.monotonic_ns()
        got += 1
        data = data[len(LEAD):]
        body, tag = data[:-8], data[-8:]
        if len(data) < HDR.size + 8 or hashlib.sha1(body).digest()[:8] != tag:
            corrupt += 1
            continue
        seq, sent = HDR.unpack(body[:HDR.size])
        if seq in seen:
            dup += 1
            continue
        seen.add(seq)
        if seq < top:
            reordered += 1
        top = max(top, seq)
        delays.append((now - sent) / 1e6)
    last = max(seen) if seen else -1
    missing = [i for i in range(last + 1) if i not in seen]
    gap, run, prev = 0, 0, None
    for i in missing:
        run = run + 1 if prev is not None and i == prev + 1 else 1
        gap = max(gap, run)
        prev = i
    d = sorted(delays) or [0]
    lost = hashlib.sha1(repr(missing).encode()).hexdigest()[:12]
    print("received=%d unique=%d dup=%d corrupt=%d reordered=%d missing=%d longest_gap=%d "
          "last=%d missing_hash=%s delay_min_ms=%.2f delay_avg_ms=%.2f delay_p50_ms=%.2f "
          "delay_max_ms=%.2f" %
          (got, len(seen), dup, corrupt, reordered, len(missing), gap, last, lost, d[0],
           sum(d) / len(d), d[len(d) // 2], d[-1]))


if __name__ == "__main__":
    if sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
             int(sys.argv[5]) if len(sys.argv) > 5 else 0)
    else:
        recv(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))

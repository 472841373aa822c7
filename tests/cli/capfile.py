# SPDX-License-Identifier: MIT
"""Capture-file helpers the tests in tests/cli share: read and write the
records of a classic little-endian pcap file (as `uroce sample` writes it),
so a test can copy, corrupt, duplicate or drop frames, and write the same
frames as pcapng with a frame comment on chosen frames (what uroce's
annotated captures look like to Wireshark). Only what the tests need: one
interface, Ethernet link type, no other options.
"""
import struct


def pcap_records(path):
    """(header, [[record header, bytearray data]]) of a classic pcap file."""
    with open(path, "rb") as f:
        blob = f.read()
    recs, off = [], 24
    while off < len(blob):
        rh = blob[off:off + 16]
        caplen = struct.unpack("<I", rh[8:12])[0]
        recs.append([rh, bytearray(blob[off + 16:off + 16 + caplen])])
        off += 16 + caplen
    return blob[:24], recs


def pcap_write(path, header, recs):
    with open(path, "wb") as f:
        f.write(header)
        for rh, data in recs:
            f.write(rh)
            f.write(data)


def _pad4(b):
    return b + b"\0" * (-len(b) % 4)


def _block(btype, body):
    total = 12 + len(body)
    return struct.pack("<II", btype, total) + body + struct.pack("<I", total)


def pcapng_write(path, recs, comments):
    """Write the pcap records recs as pcapng; comments maps a frame number
    (from 1) to its comment text (str)."""
    out = [_block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)),
           _block(1, struct.pack("<HHI", 1, 0, 65535))]
    for n, (rh, data) in enumerate(recs, 1):
        sec, usec, caplen, origlen = struct.unpack("<IIII", rh)
        ts = sec * 1000000 + usec
        body = struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, len(data), origlen)
        body += _pad4(bytes(data))
        if n in comments:
            c = comments[n].encode()
            body += struct.pack("<HH", 1, len(c)) + _pad4(c) + struct.pack("<HH", 0, 0)
        out.append(_block(6, body))
    with open(path, "wb") as f:
        f.write(b"".join(out))

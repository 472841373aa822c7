#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Send RoCEv2 packets with chosen IPv4 IDs from a raw socket (needs root).

A UDP socket cannot choose its IPv4 ID; this sender builds the IPv4 header
itself (IP_HDRINCL), so that a daemon receives what Linux rxe and hardware
RNICs send: non-zero, incrementing IDs, covered by the ICRC.

  icrc_send.py ids SRC DST ID[,ID...] [--icrc-id N] [--corrupt] [--ip-options]
                 [--gap-ms MS]
      one RC SEND Only to QP 0xabcde (no such QP: the receiver checks the
      ICRC, then drops it as no_qp) per ID, with a correct ICRC over the IPv4
      header carrying that ID (--icrc-id: computed for another ID instead;
      --corrupt: one payload bit flipped after the ICRC was computed;
      --ip-options: with 4 bytes of IPv4 options, NOPs)
  icrc_send.py gso SRC DST ID COUNT
      COUNT such SENDs in one IPv4 datagram with ID ID, as a raw socket sees
      a UDP GSO send on loopback: packet i with its ICRC for ID ID + i and
      its own lengths, the header's lengths those of the whole
  icrc_send.py replay PCAP SRC [--timing]
      every IPv4 packet of the capture whose source is SRC, sent as captured
      (addresses, ID, flags and ICRC unchanged; the kernel refills only the
      header checksum), with the capture's pacing when --timing is given
"""
import argparse
import socket
import struct
import sys
import time
import zlib

ROCE_PORT = 4791


def icrc(ip_udp_ib: bytes) -> int:
    """The ICRC of IPv4 + UDP + IB (without the ICRC): PROTOCOL.md 6."""
    b = bytearray(ip_udp_ib)
    b[1] = 0xFF  # TOS
    b[8] = 0xFF  # TTL
    b[10:12] = b"\xff\xff"  # header checksum
    b[26:28] = b"\xff\xff"  # UDP checksum
    b[28 + 4] = 0xFF  # BTH byte 4 (FECN, BECN, resv6)
    return zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xFFFFFFFF


def ipv4(src, dst, ip_id, payload_len):
    total = 20 + 8 + payload_len
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, ip_id, 0x4000, 64, 17, 0,
                       socket.inet_aton(src), socket.inet_aton(dst))


def packet(src, dst, ip_id, psn, icrc_id=None, corrupt=False):
    payload = bytes((psn + i) & 0xFF for i in range(16))
    # RC SEND Only (0x04), pad 0, P_Key 0xffff, dest QP 0xabcde, AckReq, PSN.
    bth = struct.pack("!BBHII", 0x04, 0, 0xFFFF, 0xABCDE, 0x80000000 | (psn & 0xFFFFFF))
    ib = bth + payload
    udp = struct.pack("!HHHH", 0xC123, ROCE_PORT, 8 + len(ib) + 4, 0)
    hdr_id = ip_id if icrc_id is None else icrc_id
    crc = icrc(ipv4(src, dst, hdr_id, len(ib) + 4) + udp + ib)
    if corrupt:
        ib = ib[:-1] + bytes([ib[-1] ^ 0x01])
    return ipv4(src, dst, ip_id, len(ib) + 4) + udp + ib + struct.pack("<I", crc)


def raw_socket():
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
    return s


def cmd_ids(a):
    s = raw_socket()
    ids = [int(x, 0) for x in a.ids.split(",")]
    for i, ip_id in enumerate(ids):
        p = packet(a.src, a.dst, ip_id, 100 + i,
                   None if a.icrc_id is None else int(a.icrc_id, 0), a.corrupt)
        if a.ip_options:
            # Four option bytes (NOP, NOP, NOP, end): IHL 6, 4 bytes longer.
            p = bytes([0x46]) + p[1:2] + struct.pack("!H", len(p) + 4) + p[4:20] + \
                b"\x01\x01\x01\x00" + p[20:]
        s.sendto(p, (a.dst, 0))
        if a.gap_ms:
            time.sleep(a.gap_ms / 1000.0)
    print(f"sent {len(ids)}")


def cmd_gso(a):
    first = int(a.id, 0)
    # Each packet without its IPv4 and UDP headers (28 bytes).
    ib = b"".join(packet(a.src, a.dst, (first + i) & 0xFFFF, 200 + i)[28:]
                  for i in range(a.count))
    udp = struct.pack("!HHHH", 0xC123, ROCE_PORT, 8 + len(ib), 0)
    raw_socket().sendto(ipv4(a.src, a.dst, first, len(ib)) + udp + ib, (a.dst, 0))
    print(f"sent 1 datagram of {a.count} packets")


def pcap_packets(path):
    """(time, IPv4 packet) of a classic pcap file (Ethernet or raw IP)."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        e = "<"
    elif struct.unpack(">I", data[:4])[0] in (0xA1B2C3D4, 0xA1B23C4D):
        e = ">"
    else:
        sys.exit(f"{path}: not a classic pcap file")
    nano = struct.unpack(e + "I", data[:4])[0] == 0xA1B23C4D
    linktype = struct.unpack(e + "I", data[20:24])[0]
    off = 24
    while off + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack(e + "IIII", data[off:off + 16])
        frame = data[off + 16:off + 16 + caplen]
        off += 16 + caplen
        t = sec + frac / (1e9 if nano else 1e6)
        if linktype == 1:  # Ethernet
            if len(frame) < 14 or frame[12:14] != b"\x08\x00":
                continue
            ip = frame[14:]
        elif linktype in (101, 228):  # raw IP / IPv4
            ip = frame
        else:
            sys.exit(f"{path}: link type {linktype} not handled")
        if len(ip) >= 20 and ip[0] >> 4 == 4:
            total = struct.unpack("!H", ip[2:4])[0]
            yield t, ip[:total]


def cmd_replay(a):
    s = raw_socket()
    n = 0
    t0 = w0 = None
    for t, ip in pcap_packets(a.pcap):
        if socket.inet_ntoa(ip[12:16]) != a.src or ip[9] != 17:
            continue
        if a.timing:
            if t0 is None:
                t0, w0 = t, time.monotonic()
            delay = (t - t0) - (time.monotonic() - w0)
            if delay > 0:
                time.sleep(delay)
        s.sendto(ip, (socket.inet_ntoa(ip[16:20]), 0))
        n += 1
    print(f"sent {n}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("ids")
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("ids")
    p.add_argument("--icrc-id")
    p.add_argument("--corrupt", action="store_true")
    p.add_argument("--ip-options", action="store_true")
    p.add_argument("--gap-ms", type=float, default=0)
    p.set_defaults(fn=cmd_ids)
    p = sub.add_parser("gso")
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("id")
    p.add_argument("count", type=int)
    p.set_defaults(fn=cmd_gso)
    p = sub.add_parser("replay")
    p.add_argument("pcap")
    p.add_argument("src")
    p.add_argument("--timing", action="store_true")
    p.set_defaults(fn=cmd_replay)
    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()

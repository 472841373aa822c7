#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Play Linux rxe's side of a captured RDMA CM connection against a uroce RNIC.

  rxe_peer.py PCAP CLIENT SERVER

PCAP holds an rping connection made by Linux Soft-RoCE between two hosts:
CLIENT (the active side, rxe) and SERVER. This tool owns CLIENT's address
(root: a raw socket sends with the captured IPv4 headers) and a uroce RNIC
owns SERVER's, with an rping server listening on the captured port. It sends
rxe's own CM MADs, byte for byte as the kernel built them:

  1. the ConnectRequest, unchanged (its IPv4 ID and ICRC as captured);
  2. then checks the ConnectReply that comes back: the REQ's transaction ID,
     its communication ID as the remote one, a QPN and PSN of the RNIC's,
     resources no larger than the REQ offered, a valid ICRC;
  3. sends rxe's ReadyToUse (no sooner after the REQ than in the capture)
     with the RNIC's communication ID put in
     (the one field that differs from the capture, ICRC recomputed for the
     captured IPv4 header);
  4. sends rxe's DisconnectRequest the same way (the RNIC's communication
     ID and QPN put in) and checks the DisconnectReply.

Prints one line per check and "N passed, N failed"; exit 0 only when all passed.
"""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from icrc_send import icrc, pcap_packets, raw_socket  # noqa: E402

ROCE_PORT = 4791
IP, UDP, BTH, DETH, MADH = 20, 8, 12, 8, 24
CM = IP + UDP + BTH + DETH + MADH  # the CM message inside an IPv4 packet
ATTR = {0x0010: "REQ", 0x0012: "REJ", 0x0013: "REP", 0x0014: "RTU", 0x0015: "DREQ",
        0x0016: "DREP", 0x0011: "MRA"}

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print("ok:", what)
    else:
        failed += 1
        print("FAIL:", what)


def be32(b, off):
    return struct.unpack("!I", b[off:off + 4])[0]


def be24(b, off):
    return be32(b, off) >> 8


def attr_of(ip):
    return struct.unpack("!H", ip[IP + UDP + BTH + DETH + 16:IP + UDP + BTH + DETH + 18])[0]


def tid_of(ip):
    return ip[IP + UDP + BTH + DETH + 8:IP + UDP + BTH + DETH + 16]


def reseal(ip):
    """ICRC recomputed over the (captured) IPv4 header of a patched packet."""
    body = bytes(ip[:-4])
    return body + struct.pack("<I", icrc(body))


def patch32(ip, off, v):
    b = bytearray(ip)
    b[off:off + 4] = struct.pack("!I", v)
    return reseal(b)


def patch24(ip, off, v):
    b = bytearray(ip)
    b[off:off + 3] = struct.pack("!I", v)[1:]
    return reseal(b)


def recv_mad(sock, server, client, want, timeout=5.0):
    """The next CM MAD of attribute `want` from the RNIC, as an IPv4 packet
    rebuilt around the UDP payload (a uroce RNIC sends with IPv4 ID 0, DF)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        sock.settimeout(max(0.05, end - time.monotonic()))
        try:
            data, (src, sport) = sock.recvfrom(4096)
        except socket.timeout:
            break
        if src != server or len(data) < BTH + DETH + 256 + 4:
            continue
        total = IP + UDP + len(data)
        hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 17, 0,
                          socket.inet_aton(server), socket.inet_aton(client))
        ip = hdr + struct.pack("!HHHH", sport, ROCE_PORT, UDP + len(data), 0) + data
        if attr_of(ip) == want:
            return ip
        print("  (skipped a %s)" % ATTR.get(attr_of(ip), hex(attr_of(ip))))
    return None


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: rxe_peer.py PCAP CLIENT SERVER")
    pcap, client, server = sys.argv[1:]
    mads, when = {}, {}
    for t, ip in pcap_packets(pcap):
        if (ip[9] == 17 and socket.inet_ntoa(ip[12:16]) == client and len(ip) >= CM and
                struct.unpack("!H", ip[IP + 2:IP + 4])[0] == ROCE_PORT and
                be24(ip, IP + UDP + 5) == 1):
            name = ATTR.get(attr_of(ip), "?")
            if name not in mads:
                mads[name], when[name] = ip, t
    for name in ("REQ", "RTU", "DREQ"):
        if name not in mads:
            sys.exit("%s: no %s from %s in the capture" % (pcap, name, client))
    req = mads["REQ"]
    rxe_comm = be32(req, CM + 0)
    rxe_qpn = be24(req, CM + 32)
    rxe_psn = be24(req, CM + 44)
    print("rxe's REQ: comm ID 0x%08x, QPN 0x%06x, PSN 0x%06x, IPv4 ID 0x%04x" %
          (rxe_comm, rxe_qpn, rxe_psn, struct.unpack("!H", req[4:6])[0]))

    raw = raw_socket()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((client, ROCE_PORT))

    # Each MAD leaves no earlier after the REQ than it did in the capture:
    # its IPv4 ID is the kernel's, which counts up with time between
    # packets, and a receiver that tracks IDs (the tracked ICRC mode) judges
    # it by that pace.
    t0 = time.monotonic()

    def pace(name):
        delay = (when[name] - when["REQ"]) - (time.monotonic() - t0)
        if delay > 0:
            time.sleep(delay)

    raw.sendto(req, (server, 0))
    rep = recv_mad(sock, server, client, 0x0013)
    check(rep is not None, "rxe's ConnectRequest, as captured, is answered with a ConnectReply")
    if rep is None:
        print("%d passed, %d failed" % (passed, failed))
        return 1
    body = rep[:-4]
    check(struct.unpack("<I", rep[-4:])[0] == icrc(body), "the REP's ICRC is valid")
    check(be24(rep, IP + UDP + 4 + 1) == 1 and be24(rep, IP + UDP + BTH + 5) == 1 and
          be32(rep, IP + UDP + BTH) == 0x80010000,
          "the REP goes from QP1 to QP1 with the GSI Q_Key")
    check(tid_of(rep) == tid_of(req), "the REP carries the REQ's transaction ID")
    check(be32(rep, CM + 4) == rxe_comm, "the REP names rxe's comm ID as the remote one")
    uroce_comm, uroce_qpn, uroce_psn = be32(rep, CM + 0), be24(rep, CM + 12), be24(rep, CM + 20)
    check(uroce_comm != 0 and uroce_qpn > 1,
          "the REP gives the RNIC's comm ID 0x%08x and QPN 0x%06x" % (uroce_comm, uroce_qpn))
    # IBA 12.7.8-9: the REP's responder resources at most the REQ's
    # initiator depth, its initiator depth at most the REQ's responder resources.
    check(rep[CM + 24] <= req[CM + 39] and rep[CM + 25] <= req[CM + 35],
          "the REP's resources (%d, %d) are within the REQ's (%d, %d)" %
          (rep[CM + 24], rep[CM + 25], req[CM + 39], req[CM + 35]))
    print("uroce's REP: comm ID 0x%08x, QPN 0x%06x, PSN 0x%06x" % (uroce_comm, uroce_qpn, uroce_psn))

    rtu = patch32(mads["RTU"], CM + 4, uroce_comm)
    check(be32(rtu, CM + 0) == rxe_comm, "rxe's RTU carries its own comm ID")
    pace("RTU")
    raw.sendto(rtu, (server, 0))
    # An RTU has no answer: the REP must stop coming (the REP is resent
    # only while no RTU has arrived).
    late = recv_mad(sock, server, client, 0x0013, timeout=1.5)
    check(late is None, "after rxe's RTU no REP is sent again")

    dreq = patch24(patch32(mads["DREQ"], CM + 4, uroce_comm), CM + 8, uroce_qpn)
    pace("DREQ")
    raw.sendto(dreq, (server, 0))
    drep = recv_mad(sock, server, client, 0x0016)
    check(drep is not None, "rxe's DisconnectRequest is answered with a DisconnectReply")
    if drep is not None:
        check(tid_of(drep) == tid_of(dreq), "the DREP carries the DREQ's transaction ID")
        check(be32(drep, CM + 0) == uroce_comm and be32(drep, CM + 4) == rxe_comm,
              "the DREP names both comm IDs")
        check(struct.unpack("<I", drep[-4:])[0] == icrc(drep[:-4]), "the DREP's ICRC is valid")
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

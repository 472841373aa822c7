#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run-time side of the test network allocator (tests/lib/TestNet.cmake).

CMake gives each test a loopback /24 and a port range in its environment
(UROCE_TEST_NET, UROCE_TEST_PORT_BASE, UROCE_TEST_PORT_COUNT). Before a test
starts anything it claims them: it takes an exclusive lock named after its
/24 (so that a second run of the same slot, say a second checkout whose
build directory hashes to the same slot, waits for nobody and skips) and
then probes by binding: UDP 4791 and the range's first port on the /24's
first four addresses and UDP on [::1] at the first port, TCP on every port
of the range. Whatever is taken is reported and the test is skipped with
exit 77; nothing here ever picks another address.

Python tests call claim(); shell tests (tests/lib/common.sh) take the lock
themselves and run this file as
    testnet.py lockfile   prints the lock file of this test's /24
    testnet.py probe      prints what is taken, exit 1 if anything is
"""
import errno
import fcntl
import os
import socket
import sys

LOCK_DIR = "/tmp/uroce-testnet"
ROCE_PORT = 4791
HOSTS = 4  # NET.1 .. NET.4 are the addresses tests give their daemons

_held = []  # lock files of this process, open until it exits


def env():
    """The allocation from the environment: (net, first port, port count)."""
    try:
        return (os.environ["UROCE_TEST_NET"], int(os.environ["UROCE_TEST_PORT_BASE"]),
                int(os.environ["UROCE_TEST_PORT_COUNT"]))
    except (KeyError, ValueError):
        sys.exit("testnet: UROCE_TEST_NET, UROCE_TEST_PORT_BASE and UROCE_TEST_PORT_COUNT "
                 "must be set (tests are registered with uroce_net_test() in CMake)")


def lockfile(net):
    """The lock file that stands for NET's /24 and its ports, on this machine."""
    return os.path.join(LOCK_DIR, net + ".lock")


def _bind(family, kind, addr, port, reuse=False):
    """None when ADDR:PORT can be bound now, else the error text."""
    try:
        s = socket.socket(family, kind)
    except OSError as e:
        return None if e.errno == errno.EAFNOSUPPORT else str(e)
    try:
        if reuse:  # as the TCP servers do: TIME_WAIT leftovers do not count
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, port))
        return None
    except OSError as e:
        return e.strerror
    finally:
        s.close()


def probe(net, base, count):
    """The list of "what: why" for every address or port of the allocation
    that something holds now."""
    taken = []
    for h in range(1, HOSTS + 1):
        for port in (ROCE_PORT, base):
            why = _bind(socket.AF_INET, socket.SOCK_DGRAM, "%s.%d" % (net, h), port)
            if why:
                taken.append("UDP %s.%d:%d: %s" % (net, h, port, why))
    if socket.has_ipv6 and _bind(socket.AF_INET6, socket.SOCK_DGRAM, "::1", 0) is None:
        why = _bind(socket.AF_INET6, socket.SOCK_DGRAM, "::1", base)
        if why:
            taken.append("UDP [::1]:%d: %s" % (base, why))
    for port in range(base, base + count):
        why = _bind(socket.AF_INET, socket.SOCK_STREAM, "0.0.0.0", port, reuse=True)
        if why:
            taken.append("TCP port %d: %s" % (port, why))
    return taken


def skip(msg):
    print("SKIP: " + msg, flush=True)
    sys.exit(77)


def claim():
    """Claims this test's allocation for the life of the process, or exits 77
    saying who holds it. Returns (net, first port, port count)."""
    net, base, count = env()
    what = "test network %s.0/24 with ports %d-%d" % (net, base, base + count - 1)
    os.makedirs(LOCK_DIR, exist_ok=True)
    try:
        os.chmod(LOCK_DIR, 0o1777)
    except OSError:
        pass
    path = lockfile(net)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        with open(path) as f:
            holder = f.read().strip() or "unknown"
        skip("%s is in use by another test run (%s holds %s)" % (what, holder, path))
    os.ftruncate(fd, 0)
    os.write(fd, ("pid %d %s\n" % (os.getpid(), " ".join(sys.argv))).encode())
    _held.append(fd)
    taken = probe(net, base, count)
    if taken:
        skip("%s is taken by something outside this test: %s" % (what, "; ".join(taken)))
    return net, base, count


def main():
    net, base, count = env()
    if sys.argv[1:] == ["lockfile"]:
        print(lockfile(net))
        return 0
    if sys.argv[1:] == ["probe"]:
        taken = probe(net, base, count)
        print("; ".join(taken))
        return 1 if taken else 0
    print("usage: testnet.py lockfile|probe", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())

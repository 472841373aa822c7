# SPDX-License-Identifier: MIT
"""
Run rdma-core's pyverbs tests (copied next to this file from
/usr/share/doc/rdma-core/tests) the way their run_tests.py does, and print
one machine-readable line per test:

    RESULT <PASS|FAIL|ERROR|SKIP> <test id> :: <reason>

Usage (from the directory that holds tests/):
    python3 tests/pyverbs_run.py --dev DEV [--port P] [--gid G] MODULE...

With UROCE_PV_NETDEV=IFNAME in the environment, the tests' netdev lookup
(tests/base.py, _get_ip_mac: os.path.exists of
/sys/class/infiniband/DEV/device/net/, then `ls` of it) is given IFNAME
instead of reading sysfs; the address and MAC still come from
`ip -j addr show IFNAME`, as base.py gets them. For the drop-in libraries
(LD_LIBRARY_PATH), whose sysfs view python3's own stat() and the `ls` child
never reach (docs/abi.md, "The sysfs view"); the tests are otherwise
unchanged.
"""
import os
import sys
import unittest
from importlib.machinery import SourceFileLoader

from args_parser import parser

tests = SourceFileLoader(
    'tests', os.path.join(os.path.dirname(__file__), '__init__.py')).load_module()
parser.parse_args()

netdev = os.environ.get('UROCE_PV_NETDEV')
if netdev:
    from tests.base import RDMATestCase

    def _get_ip_mac(self, dev, port, idx):
        ip_addr, mac_addr = RDMATestCase.get_ip_mac_address(netdev)
        self.args.append([dev, port, idx, ip_addr, mac_addr])

    RDMATestCase._get_ip_mac = _get_ip_mac
names = [a for a in sys.argv[1:] if not a.startswith('-')]


class Recorder(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcomes = []

    def addSuccess(self, test):
        super().addSuccess(test)
        self.outcomes.append(('PASS', test, ''))

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.outcomes.append(('FAIL', test, str(err[1]).splitlines()[0:1]))

    def addError(self, test, err):
        super().addError(test, err)
        self.outcomes.append(('ERROR', test, str(err[1]).splitlines()[0:1]))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.outcomes.append(('SKIP', test, [reason]))


suite = unittest.defaultTestLoader.loadTestsFromNames(names, tests)
result = unittest.TextTestRunner(resultclass=Recorder, verbosity=1,
                                 stream=sys.stderr).run(suite)
for status, test, reason in result.outcomes:
    why = reason[0] if reason else ''
    print(f'RESULT {status} {test.id()} :: {why}', flush=True)

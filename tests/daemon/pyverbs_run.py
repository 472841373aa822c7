# SPDX-License-Identifier: MIT
"""
Run rdma-core's pyverbs tests (copied next to this file from
/usr/share/doc/rdma-core/tests) the way their run_tests.py does, and print
one machine-readable line per test:

    RESULT <PASS|FAIL|ERROR|SKIP> <test id> :: <reason>

Usage (from the directory that holds tests/):
    python3 tests/pyverbs_run.py --dev DEV [--port P] [--gid G] MODULE...
"""
import os
import sys
import unittest
from importlib.machinery import SourceFileLoader

from args_parser import parser

tests = SourceFileLoader(
    'tests', os.path.join(os.path.dirname(__file__), '__init__.py')).load_module()
parser.parse_args()
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

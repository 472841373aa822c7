# SPDX-License-Identifier: MIT
"""The check counter the Python tests in tests/cli share: check(cond, what)
counts a check and prints "FAIL: what" when cond is false; finish() prints
"N checks, M failures" and exits 1 when any failed, else 0.
"""
import sys

counts = {"checks": 0, "failures": 0}


def check(cond, what):
    counts["checks"] += 1
    if not cond:
        counts["failures"] += 1
        print("FAIL:", what)


def finish():
    print("%d checks, %d failures" % (counts["checks"], counts["failures"]))
    sys.exit(1 if counts["failures"] else 0)

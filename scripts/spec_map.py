#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Regenerate the table of docs/spec-map.md from the code.

Every greppable citation of a specification rule in emu/, wire/ and
verbs-shim/ (`IBA 9.7.5.1`, `C9-105`, `Annex A17.9`, `RFC 8200`) becomes one
row: citation, file:line, and the comment text on that line. The text above
the table is kept. Run from anywhere: scripts/spec_map.py [--check]; with
--check it only says whether the file is current (exit 1 when it is not).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "spec-map.md")
DIRS = ["emu", "wire", "verbs-shim"]
CITE = re.compile(r"(IBA [A-Za-z]?[0-9][0-9.]*[0-9]|IBA [A-Za-z]?[0-9]+|C[0-9]+-[0-9]+(?:\.[0-9]+)*|"
                  r"Annex A[0-9]+(?:\.[0-9]+)*|RFC [0-9]+)")


def key(cite):
    kind = 0 if cite.startswith("Annex") else 1 if cite[0] == "C" else 2 if cite.startswith("IBA") else 3
    nums = [int(n) for n in re.findall(r"[0-9]+", cite)]
    return (kind, nums)


def rows():
    out = []
    for d in DIRS:
        for base, _, files in sorted(os.walk(os.path.join(ROOT, d))):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(base, f)
                rel = os.path.relpath(path, ROOT)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        cites = sorted(set(CITE.findall(line)), key=key)
                        if not cites:
                            continue
                        text = line.strip().lstrip("/*").strip().rstrip("*/").strip()
                        text = text.replace("|", "\\|")
                        for c in cites:
                            out.append((key(c), c, rel, n, text))
    out.sort(key=lambda r: (r[0], r[2], r[3]))
    return ["| %s | `%s:%d` | %s |" % (c, rel, n, t) for _, c, rel, n, t in out]


def main():
    with open(DOC, encoding="utf-8") as fh:
        doc = fh.read()
    head = doc[: doc.index("| citation |")]
    new = head + "| citation | where | what the code says there |\n|---|---|---|\n" + "\n".join(rows()) + "\n"
    if "--check" in sys.argv:
        if new != doc:
            print("docs/spec-map.md is not current: run scripts/spec_map.py")
            return 1
        print("docs/spec-map.md is current")
        return 0
    with open(DOC, "w", encoding="utf-8") as fh:
        fh.write(new)
    print("docs/spec-map.md: %d rows" % (new.count("\n| ") - 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# export_set.sh REAL_LIB [--plus FILE] SHIM_LIB...
#
# Checks that every SHIM_LIB exports exactly what REAL_LIB (Debian's
# rdma-core 44 libibverbs.so.1) exports, plus, for the SHIM_LIBs after
# `--plus FILE`, the unversioned symbols FILE lists ("TYPE name" lines, '#'
# comments): the libc hooks of liburoce.so (verbs-shim/interpose.c):
#  1. the defined dynamic symbols, as "TYPE name@@NODE" (default version),
#     "TYPE name@NODE" (compat version) or "TYPE name" (unversioned, e.g. the
#     ABS symbols naming each version node); data objects also carry their
#     size, so verbs_allow_disassociate_destroy must be a 1-byte object;
#  2. the version definitions: node names in order and each node's parent
#     (the BASE entry, i.e. the soname, is not compared).
# Any difference is printed as a diff (< only in the real library, > only in
# the shim) and fails the test. Exit 77 (skip) when REAL_LIB is absent.
set -u

if [ $# -lt 2 ]; then
	echo "usage: $0 REAL_LIB [--plus FILE] SHIM_LIB..." >&2
	exit 2
fi
real=$1
shift
if [ ! -e "$real" ]; then
	echo "SKIP: $real not installed (package libibverbs1), nothing to compare against"
	exit 77
fi
command -v readelf >/dev/null 2>&1 || { echo "readelf not found (binutils)" >&2; exit 2; }

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# Defined dynamic symbols. readelf -W prints
#   Num: Value Size Type Bind Vis Ndx Name
# UND entries are imports, not exports.
exports() {
	readelf --dyn-syms -W "$1" | awk '
		$1 ~ /^[0-9]+:$/ && NF >= 8 && $7 != "UND" {
			if ($4 == "OBJECT" && $7 != "ABS")
				print $4, $3, $8
			else
				print $4, $8
		}' | LC_ALL=C sort
}

# Version definitions: "node NAME" per entry (BASE skipped), "parent NAME"
# for each parent line, in section order.
verdefs() {
	readelf -V -W "$1" | awk '
		/^Version definition section/ { on = 1; next }
		/^Version needs section/ { on = 0 }
		on && /Name:/ && !/Flags: BASE/ { print "node", $NF }
		on && /Parent [0-9]+:/ { print "parent", $NF }'
}

exports "$real" >"$tmp/real.sym"
verdefs "$real" >"$tmp/real.ver"
nreal=$(grep -c '@' "$tmp/real.sym")
if [ "$nreal" -eq 0 ]; then
	echo "no versioned exports found in $real" >&2
	exit 2
fi

fail=0
plus=""
while [ $# -gt 0 ]; do
	lib=$1
	shift
	if [ "$lib" = --plus ]; then
		plus=$1
		shift
		continue
	fi
	cp "$tmp/real.sym" "$tmp/want.sym"
	if [ -n "$plus" ]; then
		grep -v '^#' "$plus" | grep . | cat - "$tmp/real.sym" | LC_ALL=C sort >"$tmp/want.sym"
	fi
	if [ ! -e "$lib" ]; then
		echo "FAIL: $lib does not exist"
		fail=1
		continue
	fi
	exports "$lib" >"$tmp/shim.sym"
	verdefs "$lib" >"$tmp/shim.ver"
	if diff "$tmp/want.sym" "$tmp/shim.sym" >"$tmp/sym.diff"; then
		echo "ok: $lib exports the same $(wc -l <"$tmp/shim.sym") symbols ($nreal versioned${plus:+, and the hooks of $plus})"
	else
		echo "FAIL: $lib: exported symbols differ from $real${plus:+ + $plus} (< wanted only, > shim only):"
		grep '^[<>]' "$tmp/sym.diff"
		echo "($(grep -c '^<' "$tmp/sym.diff") missing, $(grep -c '^>' "$tmp/sym.diff") extra)"
		fail=1
	fi
	if diff "$tmp/real.ver" "$tmp/shim.ver" >"$tmp/ver.diff"; then
		echo "ok: $lib defines the same $(grep -c '^node' "$tmp/shim.ver") version nodes and parents"
	else
		echo "FAIL: $lib: version definitions differ from $real (< real only, > shim only):"
		grep '^[<>]' "$tmp/ver.diff"
		fail=1
	fi
done
exit $fail

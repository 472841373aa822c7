#!/bin/sh
# SPDX-License-Identifier: MIT
#
# load_dropin.sh DROPIN_DIR
#
# Loads Debian's verbs programs and librdmacm with the drop-in
# DROPIN_DIR/libibverbs.so.1 (LD_LIBRARY_PATH) and has ld.so resolve every
# symbol of every loaded object at once (ldd -r: LD_BIND_NOW plus
# LD_WARN). Fails if the drop-in is not the libibverbs.so.1 that gets loaded,
# if a program that needs librdmacm.so.1 does not get DROPIN_DIR's (the
# forwarder, when it is built), or if ld.so reports "version ... not found", "no version information" or
# "undefined symbol" for any object (the programs themselves, librdmacm,
# libmlx5, libefa, ...). Programs that are not installed are skipped; if
# none is installed the test is skipped (exit 77).
set -u

if [ $# -ne 1 ]; then
	echo "usage: $0 DROPIN_DIR" >&2
	exit 2
fi
dir=$(cd "$1" 2>/dev/null && pwd) || { echo "FAIL: no directory $1"; exit 1; }
if [ ! -e "$dir/libibverbs.so.1" ]; then
	echo "FAIL: $dir/libibverbs.so.1 does not exist"
	exit 1
fi
command -v ldd >/dev/null 2>&1 || { echo "SKIP: ldd not installed"; exit 77; }

programs="ibv_devinfo ibv_devices ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong
ibv_srq_pingpong ibv_xsrq_pingpong ib_send_bw ib_send_lat ib_write_bw ib_write_lat
ib_read_bw ib_read_lat ib_atomic_bw ib_atomic_lat qperf rping ucmatose udaddy mckey
rdma_server rdma_client cmtime rstream riostream rcopy"
libs="/usr/lib/x86_64-linux-gnu/librdmacm.so.1 $(ls /usr/lib/python3/dist-packages/pyverbs/cmid.*.so 2>/dev/null)"

tmp=$(mktemp) || exit 2
trap 'rm -f "$tmp"' EXIT

checked=0
skipped=""
fail=0
check() {
	LD_LIBRARY_PATH="$dir" ldd -r "$1" >"$tmp" 2>&1
	if ! grep -q "libibverbs.so.1 => $dir/libibverbs.so.1 " "$tmp"; then
		echo "FAIL: $1 does not load $dir/libibverbs.so.1:"
		grep 'libibverbs' "$tmp"
		fail=1
	fi
	if [ -e "$dir/librdmacm.so.1" ] && grep -q 'librdmacm.so.1 =>' "$tmp" &&
		! grep -q "librdmacm.so.1 => $dir/librdmacm.so.1 " "$tmp"; then
		echo "FAIL: $1 does not load $dir/librdmacm.so.1:"
		grep 'librdmacm' "$tmp"
		fail=1
	fi
	if grep -E "version .* not found|no version information|undefined symbol" "$tmp" >/dev/null; then
		echo "FAIL: $1:"
		grep -E "version .* not found|no version information|undefined symbol" "$tmp" |
			sed 's/^[[:space:]]*/    /'
		fail=1
	else
		echo "ok: $1"
	fi
	checked=$((checked + 1))
}

for p in $programs; do
	path=$(command -v "$p" 2>/dev/null) || { skipped="$skipped $p"; continue; }
	check "$path"
done
for l in $libs; do
	if [ -e "$l" ]; then
		check "$l"
	else
		skipped="$skipped $l"
	fi
done

[ -n "$skipped" ] && echo "skipped (not installed):$skipped"
if [ "$checked" -eq 0 ]; then
	echo "SKIP: none of the programs is installed"
	exit 77
fi
echo "$checked objects checked"
exit $fail

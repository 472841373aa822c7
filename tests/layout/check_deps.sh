#!/bin/sh
# SPDX-License-Identifier: MIT
# check_deps.sh XPORT_LIB WIRE_LIB UROCE_CLI SHIM_SO
# Reads symbol tables with nm and checks the arrows of emu/'s layout: the
# engine (a static library) needs nothing but itself, wire/ and libc; the
# CLI has no engine or libuv in it; the shim has no engine or daemon in it.
# Prints one line per check and "N passed, N failed".
set -u
XPORT=$1 WIRE=$2 CLI=$3 SHIM=$4
command -v nm >/dev/null || { echo "SKIP: nm not found"; exit 77; }
LIBC=$(ldd "$CLI" | awk '/libc\.so/ { print $3 }')
[ -r "$LIBC" ] || { echo "SKIP: no libc found through ldd $CLI"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/uroce-layout.XXXXXX")
trap 'rm -rf "$T"' EXIT
PASS=0 FAIL=0
ok() { echo "ok: $1"; PASS=$((PASS + 1)); }
bad() { echo "FAIL: $1"; FAIL=$((FAIL + 1)); }

defined() { nm -g --defined-only "$@" 2>/dev/null | awk 'NF == 3 { print $3 }'; }
# Sanitizer runtime and linker symbols are the toolchain's, not dependencies.
nm -g --undefined-only "$XPORT" | awk '$1 == "U" { print $2 }' |
	grep -Ev '^(_GLOBAL_OFFSET_TABLE_|__(asan|ubsan|lsan|sanitizer)_.*)$' | sort -u >"$T/need"
{ defined "$XPORT"; defined "$WIRE"; nm -D --defined-only "$LIBC" | awk '{ sub(/@.*/, "", $3); print $3 }'; } |
	sort -u >"$T/have"
comm -23 "$T/need" "$T/have" >"$T/missing"
if [ -s "$T/need" ] && [ ! -s "$T/missing" ]; then
	ok "engine needs only itself, wire and libc ($(wc -l <"$T/need") undefined symbols resolved)"
else
	bad "engine needs symbols from outside wire and libc: $(tr '\n' ' ' <"$T/missing")"
fi
if grep -Eq '^(uv_|pcap_)' "$T/need"; then
	bad "engine refers to libuv or libpcap: $(grep -E '^(uv_|pcap_)' "$T/need" | tr '\n' ' ')"
else
	ok "engine refers to no uv_* or pcap_* symbol"
fi

nm "$CLI" | awk '{ print $NF }' | grep -E '^(xport_|xport__|uv_|emu_dp_|emu_dev_)' | sort -u >"$T/cli"
if [ -s "$T/cli" ]; then
	bad "uroce CLI contains engine, libuv or daemon symbols: $(head -5 "$T/cli" | tr '\n' ' ')"
else
	ok "uroce CLI contains no engine, libuv or daemon symbol"
fi

nm "$SHIM" | awk '{ print $NF }' | grep -E '^(xport_|xport__|uv_|emu_)' | sort -u >"$T/shim"
if [ -s "$T/shim" ]; then
	bad "shim contains engine or daemon symbols: $(head -5 "$T/shim" | tr '\n' ' ')"
else
	ok "shim contains no engine or daemon symbol"
fi

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]

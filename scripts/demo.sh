#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# uroce demo (run by `./quickstart.sh demo` after the build): write a capture
# with one valid RoCEv2 packet of every opcode, then decode it with uroce,
# which checks every ICRC (Wireshark shows the ICRC but does not check it).
set -euo pipefail
cd "$(dirname "$0")/.."

UROCE=build/bin/uroce
if [ ! -x "$UROCE" ]; then
	echo "demo: $UROCE not found; build first: cmake -S . -B build && cmake --build build" >&2
	exit 2
fi
OUT=${1:-build/demo.pcap} # build/ is ignored by git

echo "== uroce sample $OUT"
"$UROCE" sample "$OUT"
echo
echo "== uroce decode $OUT"
"$UROCE" decode "$OUT"
echo
echo "Each line above is one RoCEv2 packet (InfiniBand transport over UDP port 4791): addresses,"
echo "opcode, destination QP, PSN, the extended headers and the ICRC verdict uroce computed itself."
echo "Open it in Wireshark (wireshark $OUT) or try: tshark -r $OUT --disable-heuristic rpcrdma_infiniband"

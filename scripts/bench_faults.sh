#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The benchmark's sibling for lossy networks: goodput of ib_write_bw 64 KiB between two
# RNICs in network namespaces joined through the impairment tool (tests/lib/impair.c), under
# loss 1/5/20 %, duplication, corruption, reordering and delay with jitter, next to the clean
# figure (tests/e2e/goodput.sh does the work). Needs root (network namespaces).
#
#   scripts/bench_faults.sh [--smoke] [BUILD_DIR]   (default: build)
#
# It uses namespaces uroce-t90-1-{a,b,m}, 10.250.1.0/24 inside them and TCP ports
# 30100-30115 there, claimed through the test network's lock so that it never meets a test run.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=--full
B=build
for a in "$@"; do
	case $a in
	--smoke) MODE=--smoke ;;
	-h | --help)
		sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "bench_faults: unknown option $a" >&2
		exit 2
		;;
	*) B=$a ;;
	esac
done
[ -x "$B/bin/uroced" ] && [ -x "$B/bin/uroce_impair" ] || {
	echo "bench_faults: build first ($B/bin/uroced or uroce_impair missing)" >&2
	exit 2
}
B=$(cd "$B" && pwd)
export UROCE_BIN=$B/bin UROCE_LIB=$B/lib UROCE_TEST_LIB=$PWD/tests/lib \
	UROCE_TEST_NET=127.250.1 UROCE_TEST_PRIV_NET=10.250.1 UROCE_TEST_V6_NET=fd75:e2e:250:1 \
	UROCE_TEST_PORT_BASE=30100 UROCE_TEST_PORT_COUNT=16 UROCE_TEST_SLOT=90 UROCE_TEST_INDEX=1
exec bash tests/e2e/goodput.sh "$MODE"

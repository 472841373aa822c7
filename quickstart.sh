#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# uroce quick start.
#   ./quickstart.sh demo   install what is missing, build, run the demo
#   ./quickstart.sh test   install what is missing, build, run the whole test suite
#
# Packages come from apt (Debian 12 / Ubuntu 22.04 or newer). Builds go to build/
# (plus build-asan/ and build-fuzz/ for the sanitizer and fuzzing passes of "test",
# and a temporary second tree for tests/lib/concurrent.sh).
set -euo pipefail
cd "$(dirname "$0")"
JOBS=$(nproc 2>/dev/null || echo 2)

PACKAGES=(build-essential cmake pkg-config libuv1-dev libpcap-dev check libibverbs-dev
          ibverbs-utils infiniband-diags perftest qperf rdmacm-utils python3-pyverbs tshark
          clang libclang-rt-14-dev iproute2 procps gnuplot-nox ucx-utils
          openmpi-bin python3-mpi4py libfabric-bin)

install_missing() {
	local missing=()
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "quickstart: installing ${missing[*]}"
	local sudo=""
	[ "$(id -u)" -ne 0 ] && sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build() { # build DIR [cmake args...]
	local dir=$1
	shift
	cmake -S . -B "$dir" "$@" >/dev/null
	cmake --build "$dir" -j "$JOBS"
}

demo() {
	build build
	exec ./scripts/demo.sh
}

run_tests() {
	build build
	echo "== tests (build/)"
	ctest --test-dir build --output-on-failure -j "$JOBS" --timeout 600
	echo "== two test runs at once (build/ and a second tree): they must not collide"
	tests/lib/concurrent.sh build
	echo "== unit tests, and daemons and shim with real programs (e2e_sanitized), under"
	echo "   AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)"
	build build-asan -DCMAKE_BUILD_TYPE=Debug -DUROCE_ASAN=ON -DUROCE_UBSAN=ON
	ctest --test-dir build-asan --output-on-failure -j "$JOBS" -L 'unit|sanitized' --timeout 600
	echo "== fuzz targets, short runs (build-fuzz/, clang + libFuzzer)"
	build build-fuzz -DCMAKE_C_COMPILER=clang -DUROCE_FUZZ=ON -DUROCE_TESTS=ON
	ctest --test-dir build-fuzz --output-on-failure -L fuzz --timeout 600
	echo "quickstart: all tests passed"
}

case "${1:-}" in
demo) install_missing; demo ;;
test) install_missing; run_tests ;;
*) echo "usage: $0 demo|test" >&2; exit 2 ;;
esac

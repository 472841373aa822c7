#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdma-core's ibv_rc_pingpong between two uroce RNICs: the server on uroce0, the
# client on uroce1, GID index 0 (RoCEv2), through `uroce run`, with events,
# data validation, message sizes from 1 byte to 1 MiB and path MTUs 256 to
# 4096, completion timestamps (-t), device memory (-j), on-demand paging
# (-o, implicit -O, prefetch -P) and the ibv_wr_* send API (-N). Both sides must exit 0 and print their "bytes in ... seconds" and
# "iters in ... seconds" lines. Then the daemons' captures and a tshark capture
# of lo taken during the same traffic must decode with every ICRC valid.
#
#   pingpong.sh [MODE]   MODE: run (default), preload or dropin (see lib.sh)
. "$(dirname "$0")/lib.sh"
MODE=${1:-run}
need_prog ibv_rc_pingpong

# label, then extra ibv_rc_pingpong options (given to both sides)
CASES=(
	"default|"
	"events|-e"
	"validate|-c"
	"size-1|-s 1"
	"size-4096|-s 4096"
	"size-65536|-s 65536 -n 200"
	"size-1M|-s 1048576 -n 20"
	"mtu-256|-m 256"
	"mtu-1024|-m 1024"
	"mtu-4096|-m 4096"
	"timestamps|-t"
	"devmem|-j"
	"odp|-o -c"
	"odp-implicit|-O -c"
	"odp-prefetch|-o -P"
	"odp-implicit-prefetch|-O -P"
	"new-send-api|-N -e -c"
)
if [ "$MODE" != run ]; then
	# a shorter set for the other ways of loading the shim
	CASES=(
		"default|"
		"events-validate-64k|-e -c -s 65536 -n 200"
		"mtu-256|-m 256 -s 8192 -n 200"
	)
fi

# check_pp LABEL: both sides exited 0 and printed their result lines; no
# data mismatch reported with -c.
check_pp() {
	local label=$1 side ok=1
	shift
	if [ "$SERVER_RC" -ne 0 ] || [ "$CLIENT_RC" -ne 0 ]; then
		ok=0
	fi
	for side in server client; do
		grep -Eq '^[0-9]+ bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$' "$T/$label.$side" &&
			grep -Eq '^[0-9]+ iters in [0-9.]+ seconds = [0-9.]+ usec/iter$' "$T/$label.$side" ||
			ok=0
		if grep -qi 'invalid data' "$T/$label.$side"; then
			ok=0
		fi
		# -t: completion timestamps, the gaps between receives measured in
		# the device clock (ns), so never 0
		case " $* " in *" -t "*)
			grep -Eq '^Min receive completion clock cycles = [1-9][0-9]*$' "$T/$label.$side" ||
				ok=0 ;;
		esac
	done
	if [ $ok = 1 ]; then
		pass "ibv_rc_pingpong $label ($MODE): $(grep 'bytes in' "$T/$label.client") [${PAIR_MS} ms]"
	else
		fail "ibv_rc_pingpong $label ($MODE): server exit $SERVER_RC, client exit $CLIENT_RC"
		show_pair "$label" "$*"
	fi
}

start_rnics
lo_capture_start
for c in "${CASES[@]}"; do
	label=${c%%|*}
	read -r -a opts <<<"${c#*|}"
	next_tcp_port
	run_pair "$label" 60 "$MODE" \
		ibv_rc_pingpong -d uroce0 -g 0 -p "$TCP_PORT" "${opts[@]}" -- \
		ibv_rc_pingpong -d uroce1 -g 0 -p "$TCP_PORT" "${opts[@]}" "$ADDR0"
	check_pp "$label" "${opts[@]}"
done
lo_capture_stop
stop_rnics
check_captures
finish

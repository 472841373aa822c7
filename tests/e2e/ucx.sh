#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# UCX (Debian's ucx-utils, unmodified) on two uroce RNICs through `uroce run`.
# UCX opens a verbs device only when /dev/infiniband/<dev_name> is a character
# device it may read and write (the shim's view has one per RNIC), and its UD
# transport keeps a received packet only when the destination address in the
# GRH area is one of the RNIC's GIDs, reading whether that is an IPv4 or an IPv6
# header from the completion's sl (UCX_UD_VERBS_ETH_DGID_CHECK=y, its default).
#   - ucx_info -d lists both RNICs with the rc_verbs and ud_verbs transports;
#   - UCT, one RNIC (ucx_perftest gives the client the server's device):
#     rc_verbs active messages (latency) and RDMA WRITE zero-copy (put_bw),
#     ud_verbs active messages (latency);
#   - UCP, the server on uroce0 and the client on uroce1 (UCX_NET_DEVICES each,
#     UCX_TLS=rc: rc_verbs with ud_verbs for the wire-up): tag-matching
#     bandwidth with 64 KiB messages and latency, and the RNICs' counters show
#     that the data crossed from uroce1 to uroce0;
#   - Open MPI over UCX (mpi4py), one rank per RNIC: 64 KiB ping-pongs come
#     back unchanged (skipped when Open MPI or mpi4py is missing);
#   - the daemons' captures decode with every ICRC valid.
# Each ucx_perftest pair must exit 0 on both sides and print its "Final:" row.
. "$(dirname "$0")/lib.sh"
need_prog ucx_perftest
need_prog ucx_info

start_rnics

via_cmd run
"${VIA[@]}" ucx_info -d >"$T/ucx_info" 2>&1
for d in uroce0 uroce1; do
	tl=$(awk -v d="$d" '/# Memory domain:/ { md = $4 } md == d && /Transport:/ { printf "%s ", $3 }' \
		"$T/ucx_info")
	check "ucx_info -d: memory domain $d with transports: ${tl:-none}" \
		grep -qw rc_verbs <<<"$tl"
	check "ucx_info -d: $d has ud_verbs too" grep -qw ud_verbs <<<"$tl"
done

# ucx_pair LABEL "SERVER ENV" "CLIENT ENV" ARGS...: ucx_perftest's server and
# client (to $ADDR0) with ARGS, each under `env` with its own variables.
ucx_pair() {
	local label=$1 senv=$2 cenv=$3 row
	shift 3
	next_tcp_port
	# shellcheck disable=SC2086 # the variables are words on purpose
	run_pair "$label" 90 run \
		env $senv ucx_perftest -p "$TCP_PORT" "$@" -- \
		env $cenv ucx_perftest -p "$TCP_PORT" "$@" "$ADDR0"
	row=$(grep '^Final:' "$T/$label.client" | tr -s ' ')
	if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] && [ -n "$row" ]; then
		pass "ucx_perftest $*: $row [${PAIR_MS} ms]"
	else
		fail "ucx_perftest $*: server exit $SERVER_RC, client exit $CLIENT_RC, row '$row'"
		show_pair "$label"
	fi
}

ucx_pair uct_rc_lat "" "" -d uroce0:1 -x rc_verbs -t am_lat -n 2000
ucx_pair uct_rc_put "" "" -d uroce0:1 -x rc_verbs -t put_bw -D zcopy -s 65536 -n 300
ucx_pair uct_ud_lat "" "" -d uroce0:1 -x ud_verbs -t am_lat -n 2000

tx0=$(counter uroce1 xport.tx_pkts)
rx0=$(counter uroce0 xport.rx_pkts)
ucx_pair ucp_tag_bw "UCX_TLS=rc UCX_NET_DEVICES=uroce0:1" "UCX_TLS=rc UCX_NET_DEVICES=uroce1:1" \
	-t tag_bw -s 65536 -n 300
ucx_pair ucp_tag_lat "UCX_TLS=rc UCX_NET_DEVICES=uroce0:1" "UCX_TLS=rc UCX_NET_DEVICES=uroce1:1" \
	-t tag_lat -n 2000
tx=$(($(counter uroce1 xport.tx_pkts) - tx0))
rx=$(($(counter uroce0 xport.rx_pkts) - rx0))
# 300 messages of 64 KiB are 4800 packets at the 4096-byte path MTU of lo.
check "UCP from uroce1 to uroce0: uroce1 sent $tx packets, uroce0 received $rx (>= 4800 each)" \
	test "$tx" -ge 4800 -a "$rx" -ge 4800

# Open MPI (Debian's openmpi-bin, pml ucx) with mpi4py: rank 0 on uroce0,
# rank 1 on uroce1, UCX's rc transport only, 64 KiB ping-pongs whose bytes
# must come back unchanged. Skipped, saying why, where either is missing.
if command -v mpirun >/dev/null && /usr/bin/python3 -c 'import mpi4py' 2>/dev/null; then
	root=()
	[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
	tx0=$(counter uroce1 xport.tx_pkts)
	via_cmd run
	mrc=0
	# shellcheck disable=SC2016 # expanded by each rank's shell
	"${VIA[@]}" timeout -k 5 120 mpirun "${root[@]}" --oversubscribe -np 2 \
		--mca pml ucx --mca btl self -x UCX_TLS=rc \
		sh -c 'UCX_NET_DEVICES=uroce${OMPI_COMM_WORLD_RANK}:1 exec /usr/bin/python3 "$0" 200' \
		"$(dirname "$0")/mpi_pingpong.py" >"$T/mpi" 2>&1 || mrc=$?
	tx=$(($(counter uroce1 xport.tx_pkts) - tx0))
	# 200 x 64 KiB from rank 1 are 3200 packets at the 4096-byte path MTU.
	if [ "$mrc" -eq 0 ] && grep -q "^ranks 2 iters 200 .* same True$" "$T/mpi" && [ "$tx" -ge 3200 ]; then
		pass "mpirun -np 2 --mca pml ucx, mpi4py ping-pong across uroce0/uroce1: $(grep '^ranks' "$T/mpi"), uroce1 sent $tx packets"
	else
		fail "MPI ping-pong: exit $mrc, uroce1 sent $tx packets (>= 3200)"
		show "$T/mpi"
	fi
else
	echo "    (MPI skipped: mpirun or /usr/bin/python3's mpi4py is not installed)"
fi

stop_rnics
check_captures
finish

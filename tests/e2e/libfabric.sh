#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# libfabric (Debian's libfabric-bin, unmodified) on two uroce RNICs through
# `uroce run`: its verbs provider over UD, and its ofi_rxd provider, which
# builds reliable, connectionless endpoints (FI_EP_RDM) on top of them.
#   - fi_info lists each RNIC's datagram domain (uroceN-dgram) as an
#     FI_EP_DGRAM endpoint of the verbs provider and as ofi_rxd's FI_EP_RDM;
#   - fi_pingpong, the server on uroce0 and the client on uroce1, every
#     message's bytes checked (-c): verbs FI_EP_DGRAM (sizes up to the path
#     MTU), and uroce1's counters show the data leaving it;
#   - the daemons' captures decode with every ICRC valid.
# ofi_rxd's own traffic (fi_pingpong -e rdm, Open MPI's ofi MTL) runs too,
# but is not run here: now and then rxd's teardown waits for an answer from
# a peer that has already exited, and the program never ends (docs/guide.md).
# The verbs provider's connected (FI_EP_MSG) endpoints look for RNICs only on
# interfaces other than lo and are not tested here (docs/guide.md).
. "$(dirname "$0")/lib.sh"
need_prog fi_info
need_prog fi_pingpong
# The verbs provider's UD name server listens on TCP port 5678 on every
# address; fi_pingpong exchanges addresses over its own control connection,
# and two test runs at once must not meet on one port.
export FI_VERBS_DGRAM_USE_NAME_SERVER=0

start_rnics

via_cmd run
"${VIA[@]}" fi_info -p verbs -t FI_EP_DGRAM >"$T/fi_info.dgram" 2>&1
"${VIA[@]}" fi_info -p "verbs;ofi_rxd" >"$T/fi_info.rdm" 2>&1
# domain TYPE FILE: the domains fi_info listed with endpoint type TYPE.
domains() {
	awk -v t="$2" '/domain:/ { d = $2 } /type:/ && $2 == t { printf "%s ", d }' "$1"
}
for d in uroce0 uroce1; do
	check "fi_info -p verbs: $d-dgram is an FI_EP_DGRAM domain (listed: $(domains "$T/fi_info.dgram" FI_EP_DGRAM))" \
		grep -qw "$d-dgram" <<<"$(domains "$T/fi_info.dgram" FI_EP_DGRAM)"
	check "fi_info -p 'verbs;ofi_rxd': $d-dgram has FI_EP_RDM (listed: $(domains "$T/fi_info.rdm" FI_EP_RDM))" \
		grep -qw "$d-dgram" <<<"$(domains "$T/fi_info.rdm" FI_EP_RDM)"
done

# fi_pair LABEL PROVIDER EP ITERS LAST: fi_pingpong's server on uroce0 and
# client on uroce1 with data checks; both exit 0 and the client prints a row
# for every size up to LAST.
fi_pair() {
	local label=$1 prov=$2 ep=$3 iters=$4 last=$5 row
	next_tcp_port
	run_pair "$label" 120 run \
		fi_pingpong -p "$prov" -e "$ep" -d uroce0-dgram -B "$TCP_PORT" -c -I "$iters" -- \
		fi_pingpong -p "$prov" -e "$ep" -d uroce1-dgram -P "$TCP_PORT" -c -I "$iters" "$ADDR0"
	row=$(awk -v s="$last" '$1 == s' "$T/$label.client" | tr -s ' ')
	if [ "$SERVER_RC" -eq 0 ] && [ "$CLIENT_RC" -eq 0 ] && [ -n "$row" ]; then
		pass "fi_pingpong -p '$prov' -e $ep -c -I $iters: $row [${PAIR_MS} ms]"
	else
		fail "fi_pingpong -p '$prov' -e $ep: server exit $SERVER_RC, client exit $CLIENT_RC, row for $last '$row'"
		show_pair "$label"
	fi
}

tx0=$(counter uroce1 xport.tx_pkts)
fi_pair fi_dgram verbs dgram 200 4k
tx=$(($(counter uroce1 xport.tx_pkts) - tx0))
# The client sends 200 messages of each of 64, 256, 1024 and 4096 bytes (the
# last two one UD packet each at the 4096-byte path MTU): 800 packets at least.
check "verbs UD from uroce1: uroce1 sent $tx packets (>= 800)" test "$tx" -ge 800

stop_rnics
check_captures
finish

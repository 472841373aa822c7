#!/bin/sh
# SPDX-License-Identifier: MIT
# rdma-core's own tools find and describe uroce devices: ibv_devices and
# ibv_devinfo -v, both under LD_PRELOAD (`uroce run`) and with the drop-in
# libibverbs.so.1 (LD_LIBRARY_PATH), where ld.so must not complain about
# missing version information.
. "$CTL_SRC/lib.sh"

command -v ibv_devinfo >/dev/null || skip "ibv_devinfo not installed (ibverbs-utils)"
start_daemon uroce0 "$TEST_NET.1"
start_daemon uroce1 "$TEST_NET.2"

check_devinfo() { # MODE FILE
	for i in 0 1; do
		awk -v d="uroce$i" '/^hca_id:/ { on = ($2 == d) } on' "$2" >"$T/one"
		grep -q "state:.*PORT_ACTIVE (4)" "$T/one" || fail "$1: uroce$i port not active"
		grep -q "link_layer:.*Ethernet" "$T/one" || fail "$1: uroce$i link layer"
		grep -q "GID\[  0\]:.*::ffff:$TEST_NET.$((i + 1)), RoCE v2" "$T/one" ||
			fail "$1: uroce$i GID 0: $(grep GID "$T/one")"
		grep -q "active_mtu:.*4096 (5)" "$T/one" || fail "$1: uroce$i active MTU"
	done
}

# guid_of IPV4: the node GUID ibv_devices prints for a device on IPV4, the
# EUI-64 of its MAC 02:00:a:b:c:d: 0000 a ff fe b c d in hex.
guid_of() {
	echo "$1" | awk -F. '{ printf "0000%02xfffe%02x%02x%02x\n", $1, $2, $3, $4 }'
}

uroce run -- ibv_devices >"$T/devices" 2>&1 || fail "ibv_devices exit status"
grep -q "uroce0.*$(guid_of "$TEST_NET.1")" "$T/devices" &&
	grep -q "uroce1.*$(guid_of "$TEST_NET.2")" "$T/devices" ||
	fail "ibv_devices: $(cat "$T/devices")"
pass "ibv_devices (LD_PRELOAD) lists both devices"

uroce run -- ibv_devinfo -v >"$T/devinfo" 2>&1 || fail "ibv_devinfo -v exit status"
check_devinfo preload "$T/devinfo"
pass "ibv_devinfo -v (LD_PRELOAD)"

DROPIN="$UROCE_LIB/ibverbs"
[ -e "$DROPIN/libibverbs.so.1" ] || fail "no drop-in library in $DROPIN"
LD_LIBRARY_PATH="$DROPIN" ibv_devices >"$T/devices2" 2>"$T/devices2.err" ||
	fail "drop-in ibv_devices exit status"
grep -q uroce1 "$T/devices2" || fail "drop-in ibv_devices: $(cat "$T/devices2")"
LD_LIBRARY_PATH="$DROPIN" ibv_devinfo -v >"$T/devinfo2" 2>"$T/devinfo2.err" ||
	fail "drop-in ibv_devinfo exit status: $(cat "$T/devinfo2.err")"
check_devinfo drop-in "$T/devinfo2"
if grep -q "no version information" "$T/devices2.err" "$T/devinfo2.err"; then
	fail "drop-in: $(cat "$T/devinfo2.err")"
fi
pass "ibv_devices / ibv_devinfo -v (drop-in), no version warnings"

# One device selected by name.
uroce run -- ibv_devinfo -d uroce1 >"$T/one1" 2>&1 || fail "ibv_devinfo -d uroce1"
grep -q "^hca_id:.uroce1" "$T/one1" && ! grep -q uroce0 "$T/one1" ||
	fail "ibv_devinfo -d uroce1: $(cat "$T/one1")"
pass "ibv_devinfo -d uroce1"

finish

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sysfs view names the interface that holds a device's address: in a
# network namespace of its own, a veth pair with an IPv4 address on one end
# (uroce0) and an IPv6 address on the other (uroce1). Under `uroce run`,
# device/net/ and gid_attrs/ndevs/0 of each device name its own end; the
# netdev lookup of rdma-core's pyverbs tests (tests/base.py: `ls
# .../device/net/`, then `ip -j addr show`) finds uroce0's address, so
# the stock test_rdmacm tests no longer skip with "doesn't have net
# interface" and all 10 pass. Under the drop-ins alone (LD_LIBRARY_PATH)
# the stock lookup cannot see the view and they skip; given the interface
# (UROCE_PV_NETDEV, pyverbs_run.py) all 10 pass, python3 reaching the RDMA CM
# through the drop-in librdmacm.so.1.
# Skips when network namespaces cannot be created here (needs root).

E2E_NET=${UROCE_TEST_PRIV_NET:?UROCE_TEST_PRIV_NET must be set (by uroce_net_test)}
. "$(dirname "$0")/lib.sh"
need_prog ip
need_prog python3
V6NET=$UROCE_TEST_V6_NET
NS=uroce-t$UROCE_TEST_SLOT-$UROCE_TEST_INDEX-s
VA=ut${UROCE_TEST_SLOT}i${UROCE_TEST_INDEX}s
VB=ut${UROCE_TEST_SLOT}i${UROCE_TEST_INDEX}t

netns_cleanup() {
	ip netns del "$NS" 2>/dev/null # the veth pair goes with it
	ip link del "$VA" 2>/dev/null
}
netns_cleanup
if ! ip netns add "$NS" 2>"$T/netns.err"; then
	skip "cannot create network namespaces here: $(cat "$T/netns.err")"
fi
at_exit netns_cleanup
ip link add "$VA" type veth peer name "$VB" &&
	ip link set "$VA" netns "$NS" &&
	ip link set "$VB" netns "$NS" &&
	ip -n "$NS" addr add "$E2E_NET.1/24" dev "$VA" &&
	ip -n "$NS" addr add "$V6NET::2/64" dev "$VB" nodad &&
	ip -n "$NS" link set "$VA" up &&
	ip -n "$NS" link set "$VB" up &&
	ip -n "$NS" link set lo up ||
	skip "cannot set up the veth pair in the namespace"
RUNDIR=$(rundir_of "$NS")
mkdir -p "$RUNDIR"

HOST_NS=$NS RNIC_PCAP=0 start_rnic uroce0 "$E2E_NET.1"
HOST_NS=$NS RNIC_PCAP=0 start_rnic uroce1 "$V6NET::2"
in_ns() {
	ip netns exec "$NS" "$UROCE_BIN/uroce" run --rundir "$RUNDIR" -- "$@"
}

for d in uroce0:$VA uroce1:$VB; do
	dev=${d%%:*} want=${d#*:}
	net=$(in_ns ls "/sys/class/infiniband/$dev/device/net/" 2>&1)
	ndev=$(in_ns cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/ndevs/0" 2>&1)
	mtu=$(in_ns cat "/sys/class/infiniband/$dev/device/net/$want/mtu" 2>&1)
	if [ "$net" = "$want" ] && [ "$ndev" = "$want" ] && [ "$mtu" = 1500 ]; then
		pass "$dev: device/net/$net and ndevs/0 name the interface holding its address (mtu $mtu through the link)"
	else
		fail "$dev: device/net: '$net', ndevs/0: '$ndev', net/$want/mtu: '$mtu' (want $want)"
	fi
done

# rdma-core's pyverbs tests, copied as tests/daemon/pyverbs.sh does.
SRC=/usr/share/doc/rdma-core/tests
if [ ! -f "$SRC/base.py.gz" ] && [ ! -f "$SRC/base.py" ]; then
	echo "pyverbs tests not installed (python3-pyverbs): netdev lookup not checked"
	finish
fi
mkdir "$T/pv"
cp -r "$SRC" "$T/pv/tests"
gunzip -q "$T/pv"/tests/*.gz
cp "$(dirname "$0")/../daemon/pyverbs_run.py" "$T/pv/tests/"

lookup=$(cd "$T/pv" && in_ns env PYTHONPATH="$T/pv/tests" /usr/bin/python3 -c '
from tests.base import RDMATestCase
name = RDMATestCase.get_net_name("uroce0")
print(name, RDMATestCase.get_ip_mac_address(name)[0])' 2>&1)
if [ "$lookup" = "$VA $E2E_NET.1" ]; then
	pass "pyverbs' netdev lookup (tests/base.py) finds $lookup for uroce0"
else
	fail "pyverbs' netdev lookup for uroce0: '$lookup' (want '$VA $E2E_NET.1')"
fi

(cd "$T/pv" && timeout 240 ip netns exec "$NS" "$UROCE_BIN/uroce" run --rundir "$RUNDIR" -- \
	/usr/bin/python3 tests/pyverbs_run.py --dev uroce0 --port 1 --gid 0 tests.test_rdmacm) \
	>"$T/rdmacm" 2>"$T/rdmacm.log"
n=$(grep -c '^RESULT' "$T/rdmacm")
netskips=$(grep -c "^RESULT SKIP .*doesn't have net interface" "$T/rdmacm")
if [ "$n" -gt 0 ] && [ "$netskips" -eq 0 ]; then
	pass "test_rdmacm: none of $n tests skips for lack of a net interface ($(awk '$1 == "RESULT" { print $2 }' "$T/rdmacm" | sort | uniq -c | tr -s ' \n' ' '))"
else
	fail "test_rdmacm: $n results, $netskips skipped for lack of a net interface"
	show "$T/rdmacm"
fi
awk '$1 == "RESULT" { $1 = "    |"; print }' "$T/rdmacm" | head -n 10
# With the RDMA CM (docs/cm.md) all 10 pass: RC and UD (SIDR) traffic,
# sync and async, reject, external QP, and the three multicast tests
# (rdma_join_multicast and _ex, traffic to the group through the RNIC's
# interface; the leave test expects the traffic after rdma_leave_multicast
# to fail, and it does: the QPs are detached and the RNIC left the group).
pv_status() { awk -v t="tests.test_rdmacm.CMTestCase.test_rdmacm_$1" '$1 == "RESULT" && $3 == t { print $2 }' "$T/rdmacm"; }
npass=0
for t in async_read async_reject_traffic async_traffic async_traffic_external_qp \
	async_udp_traffic async_write sync_traffic async_multicast_traffic \
	async_ex_multicast_traffic async_ex_leave_multicast_traffic; do
	[ "$(pv_status "$t")" = PASS ] && npass=$((npass + 1)) || fail "test_rdmacm_$t: $(pv_status "$t")"
done
[ "$npass" -eq 10 ] &&
	pass "test_rdmacm: all 10 tests pass through the RDMA CM (RC, UD, multicast join, traffic and leave)"

# Under the drop-ins alone (LD_LIBRARY_PATH, no preload) python3 loads
# libibverbs.so.1 and librdmacm.so.1 late (dlopen of pyverbs' modules),
# after libc. Python's own stat() and the `ls` child of the netdev lookup
# reach no library on that path, so the stock lookup finds no interface and
# the tests skip for that reason; the RDMA CM itself is reached, because the
# drop-in librdmacm.so.1 loads the real one with RTLD_DEEPBIND (docs/cm.md).
pv_dropin() { # OUT [ENV...]: test_rdmacm under the drop-ins
	local out=$1
	shift
	(cd "$T/pv" && timeout 240 ip netns exec "$NS" env UROCE_RUNDIR="$RUNDIR" \
		LD_LIBRARY_PATH="$UROCE_LIB/ibverbs" "$@" \
		/usr/bin/python3 tests/pyverbs_run.py --dev uroce0 --port 1 --gid 0 tests.test_rdmacm) \
		>"$T/$out" 2>"$T/$out.log"
}
pv_dropin rdmacm.dropin
n=$(grep -c '^RESULT' "$T/rdmacm.dropin")
netskips=$(grep -c "^RESULT SKIP .*doesn't have net interface" "$T/rdmacm.dropin")
if [ "$n" -gt 0 ] && [ "$netskips" -eq "$n" ]; then
	pass "drop-in, stock netdev lookup (python's stat and ls reach no hook): all $n test_rdmacm tests skip with \"doesn't have net interface\""
else
	fail "drop-in test_rdmacm: $n results, $netskips skipped for lack of a net interface"
	show "$T/rdmacm.dropin"
fi
# The same tests with the lookup given the interface it would find (the
# one `uroce run` found above: $VA), and python's loader recorded: pyverbs'
# modules load uroce's librdmacm.so.1, which loads the real one, whose
# open() binds to the drop-in libibverbs.so.1.
pv_dropin rdmacm.dropin.nd UROCE_PV_NETDEV="$VA" LD_DEBUG=bindings,files \
	LD_DEBUG_OUTPUT="$T/pv.ld"
cat "$T"/pv.ld.* >"$T/pv.ld" 2>/dev/null
rm -f "$T"/pv.ld.*
ours="$UROCE_LIB/ibverbs/librdmacm.so.1"
grep -q "file=librdmacm.so.1 \[0\];  needed by [^ ]*/pyverbs/[^ ]*\.so \[0\]" "$T/pv.ld" &&
	grep -q "calling init: $ours\$" "$T/pv.ld" &&
	grep -q "file=[^ ]*librdmacm.so.1 \[0\];  dynamically loaded by $ours \[0\]" "$T/pv.ld" &&
	grep -qE "binding file /(usr/)?lib[^ ]*/librdmacm.so.1 \[0\] to $UROCE_LIB/ibverbs/libibverbs.so.1 \[0\]: normal symbol \`open'" "$T/pv.ld" &&
	pass "drop-in python3: pyverbs' modules load uroce's librdmacm.so.1, the real one's open() binds to the drop-in" ||
	{ fail "drop-in python3: the loader's record does not show the drop-ins in use"; grep -E "librdmacm|symbol .open'" "$T/pv.ld" | head; }
pv_dstatus() { awk -v t="tests.test_rdmacm.CMTestCase.test_rdmacm_$1" '$1 == "RESULT" && $3 == t { print $2 }' "$T/rdmacm.dropin.nd"; }
npass=0
for t in async_read async_reject_traffic async_traffic async_traffic_external_qp \
	async_udp_traffic async_write sync_traffic async_multicast_traffic \
	async_ex_multicast_traffic async_ex_leave_multicast_traffic; do
	[ "$(pv_dstatus "$t")" = PASS ] && npass=$((npass + 1)) || fail "drop-in test_rdmacm_$t: $(pv_dstatus "$t")"
done
[ "$npass" -eq 10 ] &&
	pass "drop-in test_rdmacm (netdev given): all 10 tests pass, librdmacm dlopened after libc" ||
	{ show "$T/rdmacm.dropin.nd"; show "$T/rdmacm.dropin.nd.log" 20; }

stop_rnics
finish

#!/bin/sh
# SPDX-License-Identifier: MIT
# The sysfs view under `uroce run` (verbs-shim/sysview.c, interpose.c):
# Debian's ibstat, ibstatus and ibv_devinfo -v agree on two live devices
# (sysfs_agree.py); python3 lists /sys/class/infiniband, finds each device's
# interface in device/net/ and sees a stopped daemon disappear within one
# process; the tree follows what ibv_query_* reports (GID table and types,
# P_Keys); the per-process trees are removed at exit, and a killed process's
# by the next one; programs that never touch these paths see the real
# files (cat, ls /sys/class, stat). The network-namespace case (a veth
# holding the address) is tests/e2e/sysfs_netns.sh.
. "$CTL_SRC/lib.sh"

need_prog ibstat
need_prog ibstatus
need_prog ibv_devinfo
need_prog python3

start_daemon uroce0 "$TEST_NET.1"
PID0=$LAST_PID
start_daemon uroce1 "$TEST_NET.2"
PID1=$LAST_PID

if python3 "$CTL_SRC/sysfs_agree.py" "$UROCE_BIN/uroce" uroce0 uroce1 >"$T/agree" 2>&1; then
	pass "ibstat, ibstat -l, ibstat DEV 1, ibstatus and ibv_devinfo -v agree ($(grep -c '^ok' "$T/agree") checks)"
else
	grep -v '^ok' "$T/agree"
	fail "ibstat / ibstatus / ibv_devinfo disagree"
fi

# Without the shim nothing changes: this machine has no kernel RDMA devices.
if [ ! -e /sys/class/infiniband ]; then
	ibstatus >"$T/plain" 2>&1
	grep -q "No devices" "$T/plain" || fail "ibstatus without the shim: $(cat "$T/plain")"
	pass "without the shim ibstatus still says No devices"
fi

# The tree, file by file, against the verbs answers (ibv_devinfo -v).
uroce run -- sh -c '
	d=/sys/class/infiniband/uroce1
	for f in node_type node_guid sys_image_guid fw_ver hca_type board_id node_desc \
		ports/1/state ports/1/phys_state ports/1/rate ports/1/lid ports/1/sm_lid \
		ports/1/lid_mask_count ports/1/sm_sl ports/1/cap_mask ports/1/link_layer \
		ports/1/gids/0 ports/1/gids/1 ports/1/gid_attrs/types/0 \
		ports/1/gid_attrs/ndevs/0 ports/1/pkeys/0; do
		printf "%s=%s\n" "$f" "$(cat $d/$f)"
	done
	printf "gids=%s\n" "$(ls $d/ports/1/gids | wc -l)"
	printf "types=%s\n" "$(ls $d/ports/1/gid_attrs/types | tr "\n" " ")"
	printf "net=%s\n" "$(ls $d/device/net/)"
	printf "device=%s\n" "$(readlink $d/device)"' >"$T/tree" 2>&1
uroce run -- ibv_devinfo -v -d uroce1 >"$T/devinfo1"
want() { # KEY VALUE
	grep -qxF "$1=$2" "$T/tree" || fail "view $1: want '$2', have '$(grep "^$1=" "$T/tree")'"
}
want node_type "1: CA"
want node_guid "$(awk '$1 == "node_guid:" { print $2 }' "$T/devinfo1")"
want sys_image_guid "$(awk '$1 == "sys_image_guid:" { print $2 }' "$T/devinfo1")"
want fw_ver "$(awk '$1 == "fw_ver:" { print $2 }' "$T/devinfo1")"
want hca_type uroce
want board_id uroce
want node_desc "$(hostname) uroce1"
want ports/1/state "4: ACTIVE"
want ports/1/phys_state "5: LinkUp"
want ports/1/rate "25 Gb/sec (1X EDR)"
want ports/1/lid 0x0
want ports/1/sm_lid 0x0
want ports/1/lid_mask_count 0
want ports/1/sm_sl 0
want ports/1/cap_mask "$(awk '$1 == "port_cap_flags:" { printf "0x%08x", $2 }' "$T/devinfo1")"
want ports/1/link_layer Ethernet
want ports/1/gids/0 "$(python3 -c "import ipaddress; print(ipaddress.ip_address('::ffff:$TEST_NET.2').exploded)")"
want ports/1/gids/1 0000:0000:0000:0000:0000:0000:0000:0000
want gids "$(awk '$1 == "gid_tbl_len:" { print $2 }' "$T/devinfo1")"
want ports/1/gid_attrs/types/0 "RoCE v2"
want types "0 " # only the entries in use have a type
want ports/1/gid_attrs/ndevs/0 lo
want ports/1/pkeys/0 0xffff
want net lo # 127.x.y.z lies in lo's 127.0.0.0/8
want device ../../../devices/uroce/uroce1
pass "the tree of uroce1 matches ibv_devinfo -v ($(wc -l <"$T/tree") entries)"

# Counters are read fresh on each access (no full refresh within a second):
# three datagrams too short for a BTH, sent to uroce0, are received
# packets, receive errors and "short" drops, as `uroce counters` says.
cat >"$T/cnt.py" <<'EOF'
import socket, sys, time
p = '/sys/class/infiniband/uroce0/ports/1/'
def rd(f):
    return int(open(p + f).read())
files = ['counters/port_rcv_packets', 'counters/port_rcv_errors', 'hw_counters/short']
before = [rd(f) for f in files]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(3):
    s.sendto(b'\x00' * 8, (sys.argv[1], int(sys.argv[2])))
time.sleep(0.3)
print(' '.join(str(rd(f) - b) for f, b in zip(files, before)))
EOF
got=$(uroce run -- python3 "$T/cnt.py" "$TEST_NET.1" "$CTL_PORT" 2>&1)
short=$(uroce counters uroce0 | awk '$1 ~ /(^|[.])short$/ { print $2 }')
if [ "$got" = "3 3 3" ] && [ "$short" = 3 ]; then
	pass "counters/ and hw_counters/ read fresh: +3 packets, +3 errors, +3 short (uroce counters: $short)"
else
	fail "counters after 3 short datagrams: '$got' (want '3 3 3'), uroce counters short: '$short'"
	uroce counters uroce0
fi

# python3: the class directory, device/net, a daemon going away (the same
# process looks again after uroce1 has removed its socket).
cat >"$T/view.py" <<'EOF'
import os, stat, sys, time
c = '/sys/class/infiniband'
d = '/dev/infiniband'
def nodes():
    return sorted(n for n in os.listdir(d) if n.startswith('uroce'))
print('before', sorted(os.listdir(c)))
print('net', os.listdir(c + '/uroce0/device/net'))
print('exists', os.path.exists(c + '/uroce1/ports/1/gids/0'))
# Each device's node: a character device the program may read and write.
print('nodes', nodes())
print('chr', all(stat.S_ISCHR(os.stat(d + '/' + n).st_mode) and
                 os.access(d + '/' + n, os.R_OK | os.W_OK) for n in nodes()))
os.kill(int(sys.argv[1]), 15)
for _ in range(200):
    if not os.path.exists(sys.argv[2]):
        break
    time.sleep(0.05)
print('after', sorted(os.listdir(c)))
print('gone', not os.path.exists(c + '/uroce1'))
print('nodes after', nodes())
EOF
uroce run -- python3 "$T/view.py" "$PID1" "$UROCE_RUNDIR/uroce1.sock" >"$T/view" 2>&1
wait "$PID1" 2>/dev/null
grep -qxF "before ['uroce0', 'uroce1']" "$T/view" &&
	grep -qxF "net ['lo']" "$T/view" &&
	grep -qxF "exists True" "$T/view" &&
	grep -qxF "after ['uroce0']" "$T/view" &&
	grep -qxF "gone True" "$T/view" &&
	grep -qxF "nodes ['uroce0', 'uroce1']" "$T/view" &&
	grep -qxF "chr True" "$T/view" &&
	grep -qxF "nodes after ['uroce0']" "$T/view" &&
	pass "python3: listdir, device/net/lo, /dev/infiniband nodes (character devices, rw), a stopped daemon disappears" ||
	fail "python3 view: $(cat "$T/view")"

# Per-process trees: none left behind by processes that exited; a killed
# process's tree is removed by the next process that builds one.
ls "$UROCE_RUNDIR" | grep '^sysfs\.' >"$T/left" && fail "trees left behind: $(cat "$T/left")"
uroce run -- python3 -c 'import os; os.listdir("/sys/class/infiniband"); os.kill(os.getpid(), 9)'
ls "$UROCE_RUNDIR" | grep -q '^sysfs\.' || fail "a SIGKILLed process left no tree (test is wrong)"
uroce run -- ls /sys/class/infiniband >"$T/ls" 2>&1
grep -qx uroce0 "$T/ls" || fail "ls /sys/class/infiniband: $(cat "$T/ls")"
ls "$UROCE_RUNDIR" | grep '^sysfs\.' >"$T/left" && fail "stale tree not removed: $(cat "$T/left")"
pass "per-process trees removed at exit, a killed one by the next process"

# The RDMA CM device emulation (verbs-shim/ucm.c) behind the open family:
# every entry point opens an event channel for /dev/infiniband/rdma_cm, and
# the view has class/misc/rdma_cm.
if LD_PRELOAD="$UROCE_LIB/liburoce.so" "$UCM_HOOK" >"$T/ucm" 2>&1; then
	pass "open-family hooks give the rdma_cm channel ($(grep -c '^ok' "$T/ucm") checks)"
else
	fail "shim_ucm_open contract: $(grep -v '^ok' "$T/ucm")"
fi
[ "$(uroce run -- cat /sys/class/misc/rdma_cm/abi_version 2>&1)" = 4 ] ||
	fail "rdma_cm abi_version: $(uroce run -- cat /sys/class/misc/rdma_cm/abi_version 2>&1)"

# Programs that do not touch the view are unaffected. The real directories
# can change between the two listings (a test running beside this one adds
# a veth pair to the host before it moves it into a namespace): a listing
# counts as the same if one of three attempts matches.
same_listing() {
	for _ in 1 2 3; do
		[ "$(uroce run -- ls "$@")" = "$(ls "$@")" ] && return 0
		sleep 0.2
	done
	return 1
}
[ "$(uroce run -- cat /etc/hostname)" = "$(cat /etc/hostname)" ] || fail "cat /etc/hostname"
same_listing /sys/class || fail "ls /sys/class differs"
same_listing -l /sys/class/net || fail "ls -l /sys/class/net differs"
[ "$(uroce run -- stat -c '%s %i' /etc/hostname)" = "$(stat -c '%s %i' /etc/hostname)" ] ||
	fail "stat /etc/hostname differs"
uroce run -- python3 -c 'import os; assert os.path.isdir("/sys/class/net"); assert not os.path.exists("/sys/class/infiniband_mad")' ||
	fail "python3 on other /sys paths"
pass "cat, ls, stat and python3 see the real files elsewhere"

# The drop-in: ibv_devinfo reads board_id from the view (through
# ibv_read_sysfs_file, and the drop-in's own hooks: its libibverbs.so.1
# comes before libc).
LD_LIBRARY_PATH="$UROCE_LIB/ibverbs" ibv_devinfo -d uroce0 >"$T/dropin" 2>&1
grep -q "board_id:.*uroce" "$T/dropin" || fail "drop-in ibv_devinfo board_id: $(cat "$T/dropin")"
pass "drop-in: ibv_devinfo reads board_id through the view"

stop_daemon "$PID0"
finish

/* SPDX-License-Identifier: MIT */
/*
 * sysview.c: the sysfs view of the live uroce devices. A kernel RNIC appears
 * under /sys/class/infiniband/<dev>/ (node, ports, GID table, P_Keys, the
 * parent device and its network interface); programs that do not go through
 * libibverbs alone (libibumad's ibstat, the ibstatus script, pyverbs' netdev
 * lookup, UCX) read those files directly. uroce has no kernel driver, so this
 * file writes the same tree, per process, as real files under the run
 * directory (<rundir>/sysfs.<pid>/, laid out like /sys) from what
 * ibv_query_device/port/gid/pkey report, and shim_sysview_path() translates
 * the /sys paths of the view into it. The libc hooks that call it are in
 * interpose.c (LD_PRELOAD only); ibv_read_sysfs_file() calls it directly.
 *
 * The tree is refreshed when the class directory itself is looked at (a
 * listing, a stat, a chdir) and when it is older than a second, so a stopped
 * daemon disappears and a new one appears. Trees of processes that are gone
 * (SIGKILL, exec) are removed by the next process that builds one. This file
 * does not hook anything and does not create character devices: there are
 * no umad or uverbs device files, so infiniband_mad and infiniband_verbs are
 * not part of the view; class/misc/rdma_cm is, only when the RDMA CM device
 * emulation (shim_ucm_open) is linked in. /dev/infiniband is part of the view
 * too (write_nodes): each uroce device has a node there, a link to /dev/null.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <rdma/rdma_user_cm.h>

#include "shim.h"
#include "rundir.h"
#include "uroce/counters.h"
#include "uroce/dev_counters.h"

#define VIEW_CLASS "/sys/class/infiniband"
#define VIEW_DEVICES "/sys/devices/uroce"
#define VIEW_UCM "/sys/class/misc/rdma_cm"
#define VIEW_DEV "/dev/infiniband"
#define VIEW_MAX_AGE_NS 1000000000ull
#define VIEW_PORT 1

static pthread_mutex_t view_lock = PTHREAD_MUTEX_INITIALIZER;
static char view_root[256];    /* <rundir>/sysfs.<pid>, "" until built */
static pid_t view_pid;	       /* the process view_root belongs to */
static uint64_t view_stamp;    /* CLOCK_MONOTONIC ns of the last refresh */
static __thread int view_busy; /* inside a refresh: hooks pass through */
static pthread_once_t view_once = PTHREAD_ONCE_INIT;

/* Remove a tree (depth first; symlinks are removed, never followed). */
static void rm_tree(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *e;
	DIR *d;

	if (fd < 0) {
		unlinkat(parent, name, 0);
		return;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (e->d_type == DT_DIR)
			rm_tree(dirfd(d), e->d_name);
		else if (unlinkat(dirfd(d), e->d_name, 0) && errno == EISDIR)
			rm_tree(dirfd(d), e->d_name);
	}
	closedir(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

static void view_remove_own(void)
{
	if (view_root[0] && view_pid == getpid())
		rm_tree(AT_FDCWD, view_root);
	view_root[0] = '\0';
}

static void view_atexit(void)
{
	pthread_mutex_lock(&view_lock);
	view_remove_own();
	pthread_mutex_unlock(&view_lock);
}

/* A forked child builds its own tree; the parent's stays the parent's. */
static void view_child(void)
{
	pthread_mutex_init(&view_lock, NULL);
	view_root[0] = '\0';
	view_pid = 0;
	view_busy = 0;
}

static void view_init_once(void)
{
	atexit(view_atexit);
	pthread_atfork(NULL, NULL, view_child);
}

/* Trees of processes that no longer exist, or of an earlier image of this
 * process (exec keeps the pid and runs no exit handlers). The run directory
 * is the user's, so a pid now held by another user's process (EPERM) was
 * reused: its tree is stale too. */
static void remove_stale(const char *rundir)
{
	struct dirent *e;
	DIR *d = opendir(rundir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, "sysfs.", 6))
			continue;
		pid = strtol(e->d_name + 6, &end, 10);
		if (*end || pid <= 0)
			continue;
		if (pid == getpid() || (kill((pid_t)pid, 0) && (errno == ESRCH || errno == EPERM)))
			rm_tree(dirfd(d), e->d_name);
	}
	closedir(d);
}

/* mkdir -p of root/rel (rel relative, no leading '/'). 0 or -errno. */
static int make_dirs(const char *rel)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", view_root, rel);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	for (char *p = path + strlen(view_root) + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		*p = c;
		if (!c)
			return 0;
	}
}

/* Does the file at @path hold exactly @text (@n bytes)? */
static int same_content(const char *path, const char *text, int n)
{
	char old[256];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return 0;
	r = read(fd, old, sizeof(old));
	close(fd);
	return r == n && !memcmp(old, text, (size_t)n);
}

/* Replace root/rel atomically: write <root>/.tmp, rename it into place, so
 * that a reader sees the old or the new content, never a partial one. A
 * file that already holds the text is left alone (most are, at a refresh). */
static int put_file(const char *rel, const char *fmt, ...)
{
	char path[PATH_MAX], tmp[PATH_MAX], text[256];
	va_list ap;
	int n, fd;
	ssize_t w;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(text))
		return -EOVERFLOW;
	if (snprintf(path, sizeof(path), "%s/%s", view_root, rel) >= (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s/.tmp", view_root) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if (same_content(path, text, n))
		return 0;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
	if (fd < 0)
		return -errno;
	w = write(fd, text, (size_t)n);
	close(fd);
	if (w != n || rename(tmp, path)) {
		int err = w != n ? -EIO : -errno;

		unlink(tmp);
		return err;
	}
	return 0;
}

/* Make root/rel a symlink to target, atomically. */
static int put_link(const char *rel, const char *target)
{
	char path[PATH_MAX], tmp[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", view_root, rel) >= (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s/.tmplink", view_root) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	unlink(tmp);
	if (symlink(target, tmp))
		return -errno;
	if (rename(tmp, path)) {
		int err = -errno;

		unlink(tmp);
		return err;
	}
	return 0;
}

/* Does @a lie in the subnet of @ifa_addr/@mask? (@bytes of address) */
static int in_subnet(const uint8_t *a, const uint8_t *ifa_addr, const uint8_t *mask, size_t bytes)
{
	for (size_t i = 0; i < bytes; i++)
		if ((a[i] ^ ifa_addr[i]) & mask[i])
			return 0;
	return 1;
}

/* The interface holding the device's address (getifaddrs): the one it is
 * assigned to, else the one whose subnet contains it (127.x.y.z on lo),
 * the rule the daemon uses for its MTU. 0 or -errno. */
static int ifname_of(const char *addr, char *ifname, size_t len)
{
	uint8_t a[16];
	struct ifaddrs *ifa, *i;
	int family = AF_INET, exact = 0, subnet = 0;
	size_t bytes = 4;

	if (inet_pton(AF_INET, addr, a) != 1) {
		if (inet_pton(AF_INET6, addr, a) != 1)
			return -EINVAL;
		family = AF_INET6;
		bytes = 16;
	}
	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i && !exact; i = i->ifa_next) {
		const uint8_t *ia, *im = NULL;

		if (!i->ifa_addr || !i->ifa_name || i->ifa_addr->sa_family != family)
			continue;
		if (family == AF_INET) {
			ia =
			    (const uint8_t *)&((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
			if (i->ifa_netmask)
				im =
				    (const uint8_t *)&((struct sockaddr_in *)(void *)i->ifa_netmask)
					->sin_addr;
		} else {
			ia = (const uint8_t *)&((struct sockaddr_in6 *)(void *)i->ifa_addr)
				 ->sin6_addr;
			if (i->ifa_netmask)
				im = (const uint8_t *)&(
					 (struct sockaddr_in6 *)(void *)i->ifa_netmask)
					 ->sin6_addr;
		}
		if (!memcmp(ia, a, bytes)) {
			exact = 1;
			snprintf(ifname, len, "%s", i->ifa_name);
		} else if (!subnet && im && in_subnet(a, ia, im, bytes)) {
			subnet = 1;
			snprintf(ifname, len, "%s", i->ifa_name);
		}
	}
	freeifaddrs(ifa);
	return exact || subnet ? 0 : -ENODEV;
}

static const char *port_state_name(enum ibv_port_state s)
{
	static const char *const names[] = {"NOP",   "DOWN",   "INIT",
					    "ARMED", "ACTIVE", "ACTIVE_DEFER"};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "UNKNOWN";
}

static const char *phys_state_name(uint8_t s)
{
	/* IBA 14.2.5.6, PortPhysicalState */
	static const char *const names[] = {"",
					    "Sleep",
					    "Polling",
					    "Disabled",
					    "PortConfigurationTraining",
					    "LinkUp",
					    "LinkErrorRecovery",
					    "Phy Test"};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "<unknown>";
}

static int width_of(uint8_t w)
{
	switch (w) {
	case 1:
		return 1;
	case 2:
		return 4;
	case 4:
		return 8;
	case 8:
		return 12;
	case 16:
		return 2;
	default:
		return 0;
	}
}

/* "25 Gb/sec (1X EDR)": the kernel's rate attribute, from the port's
 * active speed and width (IBA 14.2.5.6 PortInfo LinkSpeedActive). */
static int put_rate(const char *rel, const struct ibv_port_attr *pa)
{
	const char *speed = "";
	int rate; /* Gb/s * 10 per lane */
	int width = width_of(pa->active_width);

	switch (pa->active_speed) {
	case 2:
		speed = " DDR";
		rate = 50;
		break;
	case 4:
		speed = " QDR";
		rate = 100;
		break;
	case 8:
		speed = " FDR10";
		rate = 100;
		break;
	case 16:
		speed = " FDR";
		rate = 140;
		break;
	case 32:
		speed = " EDR";
		rate = 250;
		break;
	case 64:
		speed = " HDR";
		rate = 500;
		break;
	case 128:
		speed = " NDR";
		rate = 1000;
		break;
	default:
		rate = 25; /* SDR */
		break;
	}
	rate *= width;
	return put_file(rel, "%d%s Gb/sec (%dX%s)\n", rate / 10, rate % 10 ? ".5" : "", width,
			speed);
}

static void gid_text(const union ibv_gid *g, char *out, size_t len)
{
	const uint8_t *r = g->raw;

	snprintf(out, len,
		 "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", r[0],
		 r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13],
		 r[14], r[15]);
}

static void guid_text(uint64_t be_guid, char *out, size_t len)
{
	uint64_t g = be64toh(be_guid);

	snprintf(out, len, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
}

/* The device's counters, as `uroce counters` names them. */
static const char *const counter_names[] = {
#define X_NAME(sym, name, doc) name,
    XPORT_DROP_LIST(X_NAME) XPORT_CNT_LIST(X_NAME) EMU_DCNT_LIST(X_NAME)
#undef X_NAME
};
enum {
	N_DROP = 0
#define X_ONE(sym, name, doc) +1
	XPORT_DROP_LIST(X_ONE),
	N_EVENT = 0 XPORT_CNT_LIST(X_ONE),
	N_DAEMON = 0 EMU_DCNT_LIST(X_ONE),
#undef X_ONE
};

/* Drop reasons that are malformed packets (PMA PortRcvErrors, IBA 16.1.3.5). */
static const int rcv_error_drops[] = {XPORT_DROP_SHORT, XPORT_DROP_BAD_ICRC, XPORT_DROP_BAD_TVER,
				      XPORT_DROP_BAD_OPCODE, XPORT_DROP_BAD_PAD};

/*
 * ports/1/hw_counters/<name>: every counter of the device (QUERY_COUNTERS,
 * asked on the device socket, no context needed), and ports/1/counters/
 * with the PortCounters the device really counts: packets sent and
 * received, malformed packets received, packets lost locally. (There are
 * no octet counters: uroce counts payload bytes, not whole packets.) With
 * @only ("hw_counters/rx_pkts"), just that file is written.
 */
static int write_counters(const char *name, const char *only)
{
	struct uroce_query_counters_req req = {.hdr.op = UROCE_OP_QUERY_COUNTERS};
	struct uroce_query_counters_resp resp;
	char rundir[256], sock[256], p[160], rel[PATH_MAX];
	struct timeval tv = {.tv_sec = 2};
	uint64_t v[N_DROP + N_EVENT + N_DAEMON] = {0}, rcv_errors = 0;
	int fd, err;

	if (common_rundir_resolve(NULL, rundir, sizeof(rundir)) ||
	    common_rundir_sock_path(rundir, name, sock, sizeof(sock)))
		return -ENAMETOOLONG;
	fd = common_rundir_connect(sock);
	if (fd < 0)
		return fd;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	err = shim_exchange(fd, 1, &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);
	close(fd);
	if (err)
		return err;
	if ((uint64_t)resp.ndrop + resp.nevent + resp.ndaemon > UROCE_COUNTERS_MAX)
		return -EPROTO;
	/* Each list as far as both sides know it (lists only grow). */
	for (uint32_t i = 0; i < resp.ndrop && i < N_DROP; i++)
		v[i] = resp.values[i];
	for (uint32_t i = 0; i < resp.nevent && i < N_EVENT; i++)
		v[N_DROP + i] = resp.values[resp.ndrop + i];
	for (uint32_t i = 0; i < resp.ndaemon && i < N_DAEMON; i++)
		v[N_DROP + N_EVENT + i] = resp.values[resp.ndrop + resp.nevent + i];

	snprintf(p, sizeof(p), "class/infiniband/%s/ports/%d", name, VIEW_PORT);
	snprintf(rel, sizeof(rel), "%s/hw_counters", p);
	if ((err = make_dirs(rel)) < 0)
		return err;
	snprintf(rel, sizeof(rel), "%s/counters", p);
	if ((err = make_dirs(rel)) < 0)
		return err;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		snprintf(rel, sizeof(rel), "%s/hw_counters/%s", p, counter_names[i]);
		if (only && strcmp(rel + strlen(p) + 1, only))
			continue;
		if ((err = put_file(rel, "%" PRIu64 "\n", v[i])) < 0)
			return err;
	}
	for (size_t i = 0; i < sizeof(rcv_error_drops) / sizeof(rcv_error_drops[0]); i++)
		rcv_errors += v[rcv_error_drops[i]];
	{
		const struct {
			const char *file;
			uint64_t value;
		} pma[] = {
		    {"port_xmit_packets", v[N_DROP + XPORT_CNT_TX_PKTS]},
		    {"port_rcv_packets", v[N_DROP + XPORT_CNT_RX_PKTS]},
		    {"port_rcv_errors", rcv_errors},
		    {"port_xmit_discards", v[N_DROP + XPORT_CNT_TX_ERR]},
		};

		for (size_t i = 0; i < sizeof(pma) / sizeof(pma[0]); i++) {
			snprintf(rel, sizeof(rel), "%s/counters/%s", p, pma[i].file);
			if (only && strcmp(rel + strlen(p) + 1, only))
				continue;
			if ((err = put_file(rel, "%" PRIu64 "\n", pma[i].value)) < 0)
				return err;
		}
	}
	return 0;
}

/* Write class/infiniband/<dev>/... and devices/uroce/<dev>/net/<ifname>
 * from the device's own verbs answers. 0 or -errno (the device is then left
 * out of the view). */
static int write_device(struct ibv_device *ibdev)
{
	struct shim_device *sd = SHIM_CONTAINER_OF(ibdev, struct shim_device, dev);
	const char *name = ibdev->name;
	char d[128], p[160], rel[PATH_MAX], text[128], host[64], ifname[IF_NAMESIZE + 1] = "";
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_context *ctx;
	int err = 0;

	ctx = ibv_open_device(ibdev);
	if (!ctx)
		return -errno;
	if (ibv_query_device(ctx, &da) || shim_query_port(ctx, VIEW_PORT, &pa, sizeof(pa))) {
		err = -errno;
		goto out_close;
	}
	ifname_of(sd->addr, ifname, sizeof(ifname));
	snprintf(d, sizeof(d), "class/infiniband/%s", name);
	snprintf(p, sizeof(p), "%s/ports/%d", d, VIEW_PORT);

#define PUT(...)                                       \
	do {                                           \
		if ((err = put_file(__VA_ARGS__)) < 0) \
			goto out_close;                \
	} while (0)
#define REL(...) ((void)snprintf(rel, sizeof(rel), __VA_ARGS__), rel)
#define DIRS(...)                                            \
	do {                                                 \
		if ((err = make_dirs(REL(__VA_ARGS__))) < 0) \
			goto out_close;                      \
	} while (0)

	DIRS("%s/gids", p);
	DIRS("%s/gid_attrs/types", p);
	DIRS("%s/gid_attrs/ndevs", p);
	DIRS("%s/pkeys", p);
	DIRS("devices/uroce/%s/net", name);

	PUT(REL("%s/node_type", d), "%d: %s\n", IBV_NODE_CA, "CA");
	guid_text(ibv_get_device_guid(ibdev), text, sizeof(text));
	PUT(REL("%s/node_guid", d), "%s\n", text);
	guid_text(da.sys_image_guid, text, sizeof(text));
	PUT(REL("%s/sys_image_guid", d), "%s\n", text);
	PUT(REL("%s/fw_ver", d), "%s\n", da.fw_ver);
	PUT(REL("%s/hw_rev", d), "0x%x\n", da.hw_ver);
	PUT(REL("%s/hca_type", d), "%s\n", "uroce");
	PUT(REL("%s/board_id", d), "%s\n", "uroce");
	if (gethostname(host, sizeof(host)))
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	PUT(REL("%s/node_desc", d), "%s %s\n", host, name);

	PUT(REL("%s/state", p), "%d: %s\n", pa.state, port_state_name(pa.state));
	PUT(REL("%s/phys_state", p), "%u: %s\n", pa.phys_state, phys_state_name(pa.phys_state));
	if ((err = put_rate(REL("%s/rate", p), &pa)) < 0)
		goto out_close;
	PUT(REL("%s/lid", p), "0x%x\n", pa.lid);
	PUT(REL("%s/sm_lid", p), "0x%x\n", pa.sm_lid);
	PUT(REL("%s/lid_mask_count", p), "%u\n", pa.lmc);
	PUT(REL("%s/sm_sl", p), "%u\n", pa.sm_sl);
	PUT(REL("%s/cap_mask", p), "0x%08x\n", pa.port_cap_flags);
	PUT(REL("%s/link_layer", p), "%s\n",
	    pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand");

	for (int i = 0; i < pa.gid_tbl_len; i++) {
		struct ibv_gid_entry ent;
		union ibv_gid gid;
		char gt[64];

		if (ibv_query_gid(ctx, VIEW_PORT, i, &gid)) {
			err = -errno;
			goto out_close;
		}
		gid_text(&gid, gt, sizeof(gt));
		PUT(REL("%s/gids/%d", p, i), "%s\n", gt);
		/* Only the entries in use have a type and a netdev; the
		 * kernel's files of empty entries fail to read. */
		if (ibv_query_gid_ex(ctx, VIEW_PORT, (uint32_t)i, &ent, 0) == 0) {
			PUT(REL("%s/gid_attrs/types/%d", p, i), "%s\n",
			    ent.gid_type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : "IB/RoCE v1");
			if (ifname[0])
				PUT(REL("%s/gid_attrs/ndevs/%d", p, i), "%s\n", ifname);
		}
	}
	for (int i = 0; i < pa.pkey_tbl_len; i++) {
		__be16 pkey;

		if (ibv_query_pkey(ctx, VIEW_PORT, i, &pkey)) {
			err = -errno;
			goto out_close;
		}
		PUT(REL("%s/pkeys/%d", p, i), "0x%04x\n", be16toh(pkey));
	}
#undef PUT
#undef DIRS

	/* The parent device, as in the kernel a relative link into devices/. */
	snprintf(text, sizeof(text), "../../../devices/uroce/%s", name);
	if ((err = put_link(REL("%s/device", d), text)) < 0)
		goto out_close;
	/* Its net/ holds the interface owning the address: only that one. */
	snprintf(rel, sizeof(rel), "%s/devices/uroce/%s/net", view_root, name);
	{
		DIR *nd = opendir(rel);
		struct dirent *e;

		while (nd && (e = readdir(nd)))
			if (e->d_name[0] != '.' && strcmp(e->d_name, ifname))
				unlinkat(dirfd(nd), e->d_name, 0);
		if (nd)
			closedir(nd);
	}
	if (ifname[0]) {
		char target[IF_NAMESIZE + 32];

		snprintf(target, sizeof(target), "/sys/class/net/%s", ifname);
		err = put_link(REL("devices/uroce/%s/net/%s", name, ifname), target);
	}
#undef REL
	err = write_counters(name, NULL);
out_close:
	ibv_close_device(ctx);
	return err < 0 ? err : 0;
}

static int listed(struct ibv_device **list, const char *name)
{
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(list[i]->name, name))
			return 1;
	return 0;
}

/* Drop what is no longer true: device directories of devices gone or not
 * written, and the links to kernel devices (made again below). */
static void prune(const char *sub, struct ibv_device **list, const int *ok)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", view_root, sub);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		int keep = 0;

		if (e->d_name[0] == '.')
			continue;
		for (int i = 0; list && list[i]; i++)
			if (!strcmp(list[i]->name, e->d_name))
				keep = ok[i] && e->d_type == DT_DIR;
		if (!keep)
			rm_tree(dirfd(d), e->d_name);
	}
	closedir(d);
}

/* Kernel RDMA devices, if the machine has any, are listed beside the uroce
 * ones as links to their real sysfs directories (a uroce name wins). */
static void link_kernel_devices(struct ibv_device **list)
{
	char real[PATH_MAX], rel[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(VIEW_CLASS);

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || listed(list, e->d_name))
			continue;
		snprintf(rel, sizeof(rel), "%s/%s", VIEW_CLASS, e->d_name);
		if (!realpath(rel, real))
			continue;
		snprintf(rel, sizeof(rel), "class/infiniband/%s", e->d_name);
		put_link(rel, real);
	}
	closedir(d);
}

/* The index in @list of the device whose node is @name, or -1. */
static int node_of(struct ibv_device **list, const char *name)
{
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(list[i]->dev_name, name))
			return i;
	return -1;
}

/*
 * /dev/infiniband: a kernel RNIC has a character device there (uverbsN), and
 * some programs check for the node of a device before they use it (UCX: a
 * character device named after ibv_device's dev_name that it may read and
 * write). A uroce device's node in the view is a link to /dev/null, a
 * character device anyone may open and that does nothing: the device's
 * driver is this library, and no verb goes through the node. The machine's
 * own nodes, if it has any (a kernel RNIC's uverbsN and umadN, rdma_cm), are
 * linked beside them; with the RDMA CM emulation rdma_cm is always there
 * (open() of it reaches shim_ucm_open before the view).
 */
static void write_nodes(struct ibv_device **list, const int *ok)
{
	char path[PATH_MAX], rel[PATH_MAX];
	struct dirent *e;
	int have_cm = 0;
	DIR *d;

	/* Links of devices gone, and the machine's (made again below). */
	snprintf(path, sizeof(path), "%s/dev/infiniband", view_root);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		int i = node_of(list, e->d_name);

		if (e->d_name[0] != '.' && (i < 0 || !ok[i]))
			unlinkat(dirfd(d), e->d_name, 0);
	}
	if (d)
		closedir(d);
	d = opendir(VIEW_DEV);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || node_of(list, e->d_name) >= 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", VIEW_DEV, e->d_name);
		snprintf(rel, sizeof(rel), "dev/infiniband/%s", e->d_name);
		if (!put_link(rel, path))
			have_cm |= !strcmp(e->d_name, "rdma_cm");
	}
	if (d)
		closedir(d);
	for (int i = 0; list && list[i]; i++) {
		if (!ok[i])
			continue;
		snprintf(rel, sizeof(rel), "dev/infiniband/%s", list[i]->dev_name);
		put_link(rel, "/dev/null");
	}
	if (shim_ucm_open && !have_cm)
		put_link("dev/infiniband/rdma_cm", "/dev/null");
}

/* Build or bring up to date the tree. Under view_lock, with view_busy set. */
static void view_refresh(void)
{
	struct ibv_device **list;
	char rundir[256];
	int n = 0, *ok;

	list = ibv_get_device_list(&n);
	if (!list)
		return;
	if (!view_root[0]) {
		if (n == 0 || common_rundir_resolve(NULL, rundir, sizeof(rundir)))
			goto out_free;
		remove_stale(rundir);
		if (snprintf(view_root, sizeof(view_root), "%s/sysfs.%d", rundir, (int)getpid()) >=
			(int)sizeof(view_root) ||
		    mkdir(view_root, 0700)) {
			view_root[0] = '\0';
			goto out_free;
		}
		view_pid = getpid();
		if (make_dirs("class/infiniband") || make_dirs("devices/uroce") ||
		    make_dirs("dev/infiniband") ||
		    (shim_ucm_open && (make_dirs("class/misc/rdma_cm") ||
				       put_file("class/misc/rdma_cm/abi_version", "%d\n",
						RDMA_USER_CM_ABI_VERSION)))) {
			view_remove_own();
			goto out_free;
		}
	}
	ok = calloc((size_t)n + 1, sizeof(*ok));
	if (!ok)
		goto out_free;
	for (int i = 0; i < n; i++)
		ok[i] = write_device(list[i]) == 0;
	prune("class/infiniband", list, ok);
	prune("devices/uroce", list, ok);
	link_kernel_devices(list);
	write_nodes(list, ok);
	free(ok);
	view_stamp = shim_now_ns();
out_free:
	ibv_free_device_list(list);
}

/* Which part of the view a path names: 0 none, 1 inside, 2 the class
 * directory itself (a listing: always refreshed). */
static int view_kind(const char *path)
{
	size_t n;

	if (!strncmp(path, VIEW_DEV, n = sizeof(VIEW_DEV) - 1))
		return !path[n] ? 2 : path[n] == '/' ? 1 : 0;
	if (strncmp(path, "/sys/", 5))
		return 0;
	if (!strncmp(path, VIEW_CLASS, n = sizeof(VIEW_CLASS) - 1)) {
		const char *rest = path + n;

		while (*rest == '/')
			rest++;
		if (!*rest)
			return 2;
		return path[n] == '/' ? 1 : 0;
	}
	if (!strncmp(path, VIEW_DEVICES, n = sizeof(VIEW_DEVICES) - 1))
		return path[n] == '/' || !path[n] ? 1 : 0;
	if (shim_ucm_open && !strncmp(path, VIEW_UCM, n = sizeof(VIEW_UCM) - 1))
		return path[n] == '/' || !path[n] ? 1 : 0;
	return 0;
}

/* Is @path in a device's counters (ports/N/counters or hw_counters)? Its
 * device name then goes to @name, and *@only is the counter file below the
 * port ("hw_counters/rx_pkts"), or NULL for the directories. */
static int view_counters_of(const char *path, char *name, size_t len, const char **only)
{
	const char *dir;
	const char *dev, *end, *rest;

	if (strncmp(path, VIEW_CLASS "/", sizeof(VIEW_CLASS)))
		return 0;
	dev = path + sizeof(VIEW_CLASS);
	end = strchr(dev, '/');
	if (!end || (size_t)(end - dev) >= len || strncmp(end, "/ports/", 7))
		return 0;
	rest = end + 7;
	while (*rest >= '0' && *rest <= '9')
		rest++;
	dir = rest + 1;
	if (strncmp(rest, "/counters", 9) == 0)
		rest += 9;
	else if (strncmp(rest, "/hw_counters", 12) == 0)
		rest += 12;
	else
		return 0;
	if (*rest && *rest != '/')
		return 0;
	*only = *rest && rest[1] && !strchr(rest + 1, '/') ? dir : NULL;
	memcpy(name, dev, (size_t)(end - dev));
	name[end - dev] = '\0';
	return 1;
}

const char *shim_sysview_path(const char *path, char *buf, size_t len)
{
	char name[UROCE_NAME_MAX];
	const char *only;
	int kind, n;

	if (!path || view_busy || !(kind = view_kind(path)))
		return path;
	pthread_once(&view_once, view_init_once);
	pthread_mutex_lock(&view_lock);
	if (view_root[0] && view_pid != getpid())
		view_root[0] = '\0'; /* a child of vfork or clone: start over */
	if (!view_root[0] || kind == 2 || shim_now_ns() - view_stamp >= VIEW_MAX_AGE_NS) {
		int saved = errno;

		view_busy = 1;
		view_refresh();
		view_busy = 0;
		errno = saved;
	} else if (view_counters_of(path, name, sizeof(name), &only)) {
		int saved = errno;

		/* Counters are read fresh each time, as the kernel's are. */
		view_busy = 1;
		n = write_counters(name, only);
		if (n == -ENOENT || n == -ECONNREFUSED)
			view_stamp = 0; /* the daemon is gone: refresh next time */
		view_busy = 0;
		errno = saved;
	}
	if (!view_root[0]) {
		/* No uroce device has been seen: the real /sys answers. */
		pthread_mutex_unlock(&view_lock);
		return path;
	}
	/* "/sys/class/..." -> "<root>/class/...", "/sys/devices/..." likewise;
	 * "/dev/infiniband/..." -> "<root>/dev/infiniband/...". */
	n = snprintf(buf, len, "%s%s", view_root, path[1] == 's' ? path + 4 : path);
	pthread_mutex_unlock(&view_lock);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return buf;
}

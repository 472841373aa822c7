/* SPDX-License-Identifier: MIT */
/*
 * The describer: text and JSON renderings of a wire_decoded. Output goes
 * through a tiny bounded appender with snprintf semantics (the returned
 * length is what the whole rendering needs). Extended headers are printed
 * only for packets that passed validation, so nothing is read out of bounds
 * whatever the input was.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <wire/aeth.h>
#include <wire/describe.h>
#include <wire/mad.h>

struct wire_out {
	char *buf;
	size_t size;
	size_t len; /* length the full output would have */
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
wire_out_printf(struct wire_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *dst = o->len < o->size ? o->buf + o->len : NULL;
	size_t room = o->len < o->size ? o->size - o->len : 0;

	va_start(ap, fmt);
	n = vsnprintf(dst, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static int wire_out_done(struct wire_out *o)
{
	if (o->size)
		o->buf[o->len < o->size ? o->len : o->size - 1] = '\0';
	return o->len > INT32_MAX ? INT32_MAX : (int)o->len;
}

/* IPv4 dotted quad or RFC 5952 IPv6 text. */
static void wire_out_addr(struct wire_out *o, unsigned version, const uint8_t *a)
{
	int best = -1, best_len = 0;

	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (version == 4) {
		wire_out_printf(o, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
		return;
	}
	/* RFC 5952 5: IPv4-mapped addresses (RoCEv2 GIDs of IPv4 ports) in mixed notation. */
	if (!memcmp(a, v4mapped, sizeof(v4mapped))) {
		wire_out_printf(o, "::ffff:%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
		return;
	}
	/* Longest run (>= 2) of zero 16-bit groups becomes "::". */
	for (int i = 0; i < 8;) {
		int j = i;

		while (j < 8 && a[2 * j] == 0 && a[2 * j + 1] == 0)
			j++;
		if (j - i > best_len && j - i >= 2) {
			best = i;
			best_len = j - i;
		}
		i = j > i ? j : i + 1;
	}
	for (int i = 0; i < 8; i++) {
		if (i == best) {
			wire_out_printf(o, "::");
			i += best_len - 1;
			continue;
		}
		if (i > 0 && i != best + best_len)
			wire_out_printf(o, ":");
		wire_out_printf(o, "%x", (unsigned)(a[2 * i] << 8 | a[2 * i + 1]));
	}
}

static void wire_out_endpoint(struct wire_out *o, const struct wire_frame *f, const uint8_t *a,
			      uint16_t port)
{
	if (f->ip_version == 6)
		wire_out_printf(o, "[");
	wire_out_addr(o, f->ip_version, a);
	wire_out_printf(o, f->ip_version == 6 ? "]:%u" : ":%u", port);
}

/* The AETH syndrome in words: "ACK credits=8", "RNR NAK timer=1280us", "NAK PSN Sequence Error". */
static void wire_out_syndrome(struct wire_out *o, uint8_t syn)
{
	unsigned v = wire_aeth_syndrome_value(syn);

	switch (wire_aeth_syndrome_type(syn)) {
	case WIRE_AETH_ACK:
		if (v == WIRE_AETH_CREDITS_INVALID)
			wire_out_printf(o, "ACK credits=unlimited");
		else
			wire_out_printf(o, "ACK credits=%" PRId32, wire_aeth_credits(v));
		break;
	case WIRE_AETH_RNR_NAK:
		wire_out_printf(o, "RNR-NAK timer=%" PRIu32 "us", wire_aeth_rnr_usec(v));
		break;
	case WIRE_AETH_NAK:
		wire_out_printf(o, "NAK \"%s\"", wire_aeth_nak_name(v));
		break;
	case WIRE_AETH_RESERVED:
	default:
		wire_out_printf(o, "reserved-type value=%u", v);
		break;
	}
}

static void wire_out_cm(struct wire_out *o, const uint8_t *mad, size_t len);
static const uint8_t *wire_gsi_mad(const struct wire_pkt *p, size_t *len);

static int wire_have_bth(const struct wire_decoded *d)
{
	return d->pkt.ib && d->pkt.len >= WIRE_BTH_BYTES;
}

int wire_describe(char *buf, size_t size, const struct wire_decoded *d)
{
	struct wire_out o = {.buf = buf, .size = size};
	const struct wire_frame *f = &d->frame;
	const struct wire_pkt *p = &d->pkt;
	const struct wire_bth *bth = wire_pkt_bth(p);

	if (f->ip_version) {
		wire_out_endpoint(&o, f, f->src, f->sport);
		wire_out_printf(&o, " > ");
		wire_out_endpoint(&o, f, f->dst, f->dport);
		wire_out_printf(&o, " ");
	}
	if (d->reason == WIRE_R_NOT_ROCE) {
		wire_out_printf(&o, "not RoCEv2");
		return wire_out_done(&o);
	}
	if (wire_have_bth(d)) {
		if (p->info)
			wire_out_printf(&o, "%s", p->info->info_name);
		else
			wire_out_printf(&o, "Unknown opcode 0x%02x", p->opcode);
		wire_out_printf(&o, " QP=0x%06" PRIx32 " PSN=%" PRIu32 " A=%u SE=%u M=%u pad=%u",
				wire_bth_get_destqp(bth), wire_bth_get_psn(bth),
				wire_bth_get_ackreq(bth), wire_bth_get_se(bth),
				wire_bth_get_mig(bth), wire_bth_get_padcnt(bth));
		if (wire_bth_get_fecn(bth))
			wire_out_printf(&o, " FECN");
		if (wire_bth_get_becn(bth))
			wire_out_printf(&o, " BECN");
	}
	if (d->reason == WIRE_R_OK) {
		const struct wire_reth *reth = wire_pkt_reth(p);
		const struct wire_aeth *aeth = wire_pkt_aeth(p);
		const struct wire_atmeth *atm = wire_pkt_atmeth(p);
		const struct wire_atmack *ack = wire_pkt_atmack(p);
		const struct wire_deth *deth = wire_pkt_deth(p);
		const struct wire_immdt *imm = wire_pkt_immdt(p);
		const struct wire_ieth *ieth = wire_pkt_ieth(p);
		const struct wire_xrceth *xrc = wire_pkt_xrceth(p);
		const struct wire_feth *feth = wire_pkt_feth(p);

		if (xrc)
			wire_out_printf(&o, " XRCETH srqn=0x%06" PRIx32, wire_xrceth_get_srqn(xrc));
		if (deth)
			wire_out_printf(&o, " DETH qkey=0x%08" PRIx32 " srcqp=0x%06" PRIx32,
					wire_deth_get_qkey(deth), wire_deth_get_srcqp(deth));
		if (feth)
			wire_out_printf(&o, " FETH sel=%u plt=%u", wire_feth_get_sel(feth),
					wire_feth_get_plt(feth));
		if (reth)
			wire_out_printf(
			    &o, " RETH va=0x%016" PRIx64 " rkey=0x%08" PRIx32 " dmalen=%" PRIu32,
			    wire_reth_get_va(reth), wire_reth_get_rkey(reth),
			    wire_reth_get_dmalen(reth));
		if (atm)
			wire_out_printf(&o,
					" AtomicETH va=0x%016" PRIx64 " rkey=0x%08" PRIx32
					" swap_add=0x%016" PRIx64 " compare=0x%016" PRIx64,
					wire_atmeth_get_va(atm), wire_atmeth_get_rkey(atm),
					wire_atmeth_get_swap_add(atm),
					wire_atmeth_get_compare(atm));
		if (aeth) {
			wire_out_printf(&o, " AETH syndrome=0x%02x ", wire_aeth_get_syndrome(aeth));
			wire_out_syndrome(&o, wire_aeth_get_syndrome(aeth));
			wire_out_printf(&o, " msn=%" PRIu32, wire_aeth_get_msn(aeth));
		}
		if (ack)
			wire_out_printf(&o, " AtomicAckETH orig=0x%016" PRIx64,
					wire_atmack_get_orig(ack));
		if (imm)
			wire_out_printf(&o, " ImmDt=0x%08" PRIx32, wire_immdt_get_imm(imm));
		if (ieth)
			wire_out_printf(&o, " IETH rkey=0x%08" PRIx32, wire_ieth_get_rkey(ieth));
		if (p->info->mask & WIRE_PAYLOAD_MASK)
			wire_out_printf(&o, " len=%zu", p->payload_len);
		{
			size_t mad_len;
			const uint8_t *mad = wire_gsi_mad(p, &mad_len);

			if (mad)
				wire_out_cm(&o, mad, mad_len);
		}
	} else {
		wire_out_printf(&o, "%smalformed: %s", wire_have_bth(d) ? " " : "",
				wire_reason_desc(d->reason));
	}
	/* Masked in the ICRC, so a damaged IPv4 header checksum is worth its own word. */
	if (f->ip_version == 4 && !f->ip_csum_ok)
		wire_out_printf(&o, " ip-checksum=bad");
	wire_out_printf(&o, " icrc=%s", wire_icrc_status_name(d->icrc));
	if (d->icrc == WIRE_ICRC_BAD)
		wire_out_printf(&o, " (wire 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")",
				d->pkt.icrc, d->icrc_calc);
	return wire_out_done(&o);
}

static void wire_json_str(struct wire_out *o, const char *key, const char *s)
{
	/* All strings we emit come from static tables: no escaping needed beyond quotes. */
	wire_out_printf(o, ",\"%s\":\"", key);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			wire_out_printf(o, "\\%c", *s);
		else
			wire_out_printf(o, "%c", *s);
	}
	wire_out_printf(o, "\"");
}

static void wire_json_addr(struct wire_out *o, const char *key, unsigned version, const uint8_t *a)
{
	wire_out_printf(o, ",\"%s\":\"", key);
	wire_out_addr(o, version, a);
	wire_out_printf(o, "\"");
}

/* A UD packet to the GSI QP carries a MAD; NULL payload otherwise. */
static const uint8_t *wire_gsi_mad(const struct wire_pkt *p, size_t *len)
{
	const struct wire_deth *deth = wire_pkt_deth(p);

	if (!deth || !(p->info->mask & WIRE_PAYLOAD_MASK) ||
	    wire_bth_get_destqp(wire_pkt_bth(p)) != WIRE_GSI_QPN)
		return NULL;
	*len = p->payload_len;
	return p->ib + p->payload_off;
}

/* The RDMA CM's IP header: "ip=10.77.0.3:47448>10.77.0.2:7174" (dport from the service ID). */
static void wire_out_cm_ip(struct wire_out *o, const struct wire_cm_msg *m)
{
	unsigned v = wire_cm_ip_get_ipv(m->ip);
	const uint8_t *src = v == 4 ? m->ip->src + 12 : m->ip->src;
	const uint8_t *dst = v == 4 ? m->ip->dst + 12 : m->ip->dst;

	if (v != 4 && v != 6) {
		wire_out_printf(o, " ip=version-%u", v);
		return;
	}
	wire_out_printf(o, v == 6 ? " ip=[" : " ip=");
	wire_out_addr(o, v, src);
	wire_out_printf(o, v == 6 ? "]:%u>[" : ":%u>", wire_cm_ip_get_sport(m->ip));
	wire_out_addr(o, v, dst);
	wire_out_printf(o, v == 6 ? "]:%u" : ":%u", (unsigned)(m->service_id & 0xffff));
}

/* " CM ConnectRequest lcid=0x... sid=0x... qpn=0x... psn=0x... ip=..." */
static void wire_out_cm(struct wire_out *o, const uint8_t *mad, size_t len)
{
	struct wire_cm_msg m;
	enum wire_reason r = wire_cm_parse(mad, len, &m);

	if (r == WIRE_R_MAD_CLASS) {
		wire_out_printf(o, " MAD class=0x%02x", mad[1]);
		return;
	}
	if (r != WIRE_R_OK) {
		wire_out_printf(o, " MAD malformed: %s", wire_reason_desc(r));
		return;
	}
	wire_out_printf(o, " CM %s tid=0x%016" PRIx64 " lcid=0x%08" PRIx32, m.attr_name, m.tid,
			m.local_comm_id);
	if (m.attr_id != WIRE_CM_ATTR_REQ && m.attr_id != WIRE_CM_ATTR_SIDR_REQ &&
	    m.attr_id != WIRE_CM_ATTR_SIDR_REP)
		wire_out_printf(o, " rcid=0x%08" PRIx32, m.remote_comm_id);
	if (m.service_id)
		wire_out_printf(o, " sid=0x%016" PRIx64, m.service_id);
	if (m.attr_id == WIRE_CM_ATTR_REQ || m.attr_id == WIRE_CM_ATTR_REP ||
	    m.attr_id == WIRE_CM_ATTR_DREQ || m.attr_id == WIRE_CM_ATTR_SIDR_REP)
		wire_out_printf(o, " qpn=0x%06" PRIx32, m.qpn);
	/* Annex A14: an XRC initiator's request (transport service type 3,
	 * extended transport type 1), and the target QPN its reply carries in
	 * the EE context's field. */
	if (m.attr_id == WIRE_CM_ATTR_REQ &&
	    wire_cm_get(mad, WIRE_CM_REQ_TRANSPORT_SERVICE_TYPE) == 3)
		wire_out_printf(o, " xrc=%u",
				(unsigned)wire_cm_get(mad, WIRE_CM_REQ_EXTENDED_TRANSPORT_TYPE));
	if (m.attr_id == WIRE_CM_ATTR_REP && m.eecn)
		wire_out_printf(o, " eecn=0x%06" PRIx32, m.eecn);
	if (m.attr_id == WIRE_CM_ATTR_REQ || m.attr_id == WIRE_CM_ATTR_REP)
		wire_out_printf(o, " psn=0x%06" PRIx32, m.starting_psn);
	if (m.attr_id == WIRE_CM_ATTR_REJ) {
		const char *why = wire_cm_rej_name(m.rej_reason);

		wire_out_printf(o, " reason=%u (%s)", m.rej_reason, why ? why : "unknown");
	}
	if (m.attr_id == WIRE_CM_ATTR_SIDR_REP)
		wire_out_printf(o, " status=%u", m.sidr_status);
	if (m.has_ip)
		wire_out_cm_ip(o, &m);
}

static void wire_json_cm(struct wire_out *o, const uint8_t *mad, size_t len)
{
	struct wire_cm_msg m;
	enum wire_reason r = wire_cm_parse(mad, len, &m);

	if (r != WIRE_R_OK) {
		wire_out_printf(o, ",\"mad\":{");
		wire_out_printf(o, "\"reason\":\"%s\"", wire_reason_name(r));
		if (len >= WIRE_MAD_HDR_BYTES)
			wire_out_printf(o, ",\"mgmt_class\":%u", mad[1]);
		wire_out_printf(o, "}");
		return;
	}
	wire_out_printf(o, ",\"cm\":{\"attr_id\":%u", m.attr_id);
	wire_json_str(o, "attr", m.attr_name);
	wire_out_printf(o,
			",\"method\":%u,\"tid\":\"0x%016" PRIx64 "\",\"local_comm_id\":%" PRIu32
			",\"remote_comm_id\":%" PRIu32 ",\"service_id\":\"0x%016" PRIx64
			"\",\"qpn\":%" PRIu32 ",\"starting_psn\":%" PRIu32,
			m.method, m.tid, m.local_comm_id, m.remote_comm_id, m.service_id, m.qpn,
			m.starting_psn);
	/* Every numeric field of this message, by its table name. */
	wire_out_printf(o, ",\"fields\":{");
	for (unsigned f = 0, n = 0; f < WIRE_CM_FIELD_COUNT; f++) {
		const struct wire_cm_field_info *fi = wire_cm_field((enum wire_cm_field)f);
		uint64_t v;

		if (fi->attr_id != m.attr_id || fi->width > 64)
			continue;
		v = wire_cm_get(mad, (enum wire_cm_field)f);
		if (fi->width > 32)
			wire_out_printf(o, "%s\"%s\":\"0x%016" PRIx64 "\"", n++ ? "," : "",
					fi->name, v);
		else
			wire_out_printf(o, "%s\"%s\":%" PRIu64, n++ ? "," : "", fi->name, v);
	}
	wire_out_printf(o, "}");
	if (m.attr_id == WIRE_CM_ATTR_REJ)
		wire_out_printf(o, ",\"reject_reason\":%u", m.rej_reason);
	if (m.attr_id == WIRE_CM_ATTR_SIDR_REP)
		wire_out_printf(o, ",\"sidr_status\":%u", m.sidr_status);
	if (m.has_ip) {
		unsigned v = wire_cm_ip_get_ipv(m.ip);

		wire_out_printf(o, ",\"ip\":{\"version\":%u", v);
		if (v == 4 || v == 6) {
			wire_json_addr(o, "src", v, v == 4 ? m.ip->src + 12 : m.ip->src);
			wire_json_addr(o, "dst", v, v == 4 ? m.ip->dst + 12 : m.ip->dst);
		}
		wire_out_printf(o, ",\"sport\":%u,\"dport\":%u}", wire_cm_ip_get_sport(m.ip),
				(unsigned)(m.service_id & 0xffff));
	}
	wire_out_printf(o, "}");
}

int wire_describe_json(char *buf, size_t size, const struct wire_decoded *d)
{
	struct wire_out o = {.buf = buf, .size = size};
	const struct wire_frame *f = &d->frame;
	const struct wire_pkt *p = &d->pkt;
	const struct wire_bth *bth = wire_pkt_bth(p);

	wire_out_printf(&o, "{\"malformed\":%s",
			d->reason != WIRE_R_OK && d->reason != WIRE_R_NOT_ROCE ? "true" : "false");
	wire_json_str(&o, "reason", wire_reason_name(d->reason));
	if (f->ip_version) {
		wire_out_printf(&o, ",\"ip_version\":%u", f->ip_version);
		wire_json_addr(&o, "src", f->ip_version, f->src);
		wire_json_addr(&o, "dst", f->ip_version, f->dst);
		wire_out_printf(&o, ",\"sport\":%u,\"dport\":%u", f->sport, f->dport);
		if (f->ip_version == 4)
			wire_out_printf(&o, ",\"ip_csum_ok\":%s", f->ip_csum_ok ? "true" : "false");
	}
	if (d->reason != WIRE_R_NOT_ROCE && wire_have_bth(d)) {
		wire_out_printf(&o, ",\"opcode\":%u", p->opcode);
		wire_json_str(&o, "opcode_name", p->info ? p->info->name : "Unknown");
		wire_json_str(&o, "info_name", p->info ? p->info->info_name : "Unknown");
		wire_out_printf(&o,
				",\"destqp\":%" PRIu32 ",\"psn\":%" PRIu32
				",\"ackreq\":%u,\"se\":%u,\"mig\":%u,\"padcnt\":%u,\"tver\":%u"
				",\"pkey\":%u,\"fecn\":%u,\"becn\":%u",
				wire_bth_get_destqp(bth), wire_bth_get_psn(bth),
				wire_bth_get_ackreq(bth), wire_bth_get_se(bth),
				wire_bth_get_mig(bth), wire_bth_get_padcnt(bth),
				wire_bth_get_tver(bth), wire_bth_get_pkey(bth),
				wire_bth_get_fecn(bth), wire_bth_get_becn(bth));
	}
	if (d->reason == WIRE_R_OK) {
		const struct wire_reth *reth = wire_pkt_reth(p);
		const struct wire_aeth *aeth = wire_pkt_aeth(p);
		const struct wire_atmeth *atm = wire_pkt_atmeth(p);
		const struct wire_atmack *ack = wire_pkt_atmack(p);
		const struct wire_deth *deth = wire_pkt_deth(p);
		const struct wire_immdt *imm = wire_pkt_immdt(p);
		const struct wire_ieth *ieth = wire_pkt_ieth(p);
		const struct wire_xrceth *xrc = wire_pkt_xrceth(p);
		const struct wire_feth *feth = wire_pkt_feth(p);

		wire_out_printf(&o, ",\"payload_len\":%zu", p->payload_len);
		if (xrc)
			wire_out_printf(&o, ",\"xrceth\":{\"srqn\":%" PRIu32 "}",
					wire_xrceth_get_srqn(xrc));
		if (deth)
			wire_out_printf(&o,
					",\"deth\":{\"qkey\":%" PRIu32 ",\"srcqp\":%" PRIu32 "}",
					wire_deth_get_qkey(deth), wire_deth_get_srcqp(deth));
		if (feth)
			wire_out_printf(&o, ",\"feth\":{\"sel\":%u,\"plt\":%u}",
					wire_feth_get_sel(feth), wire_feth_get_plt(feth));
		if (reth)
			wire_out_printf(&o,
					",\"reth\":{\"va\":\"0x%016" PRIx64 "\",\"rkey\":%" PRIu32
					",\"dmalen\":%" PRIu32 "}",
					wire_reth_get_va(reth), wire_reth_get_rkey(reth),
					wire_reth_get_dmalen(reth));
		if (atm)
			wire_out_printf(
			    &o,
			    ",\"atomiceth\":{\"va\":\"0x%016" PRIx64 "\",\"rkey\":%" PRIu32
			    ",\"swap_add\":\"0x%016" PRIx64 "\",\"compare\":\"0x%016" PRIx64 "\"}",
			    wire_atmeth_get_va(atm), wire_atmeth_get_rkey(atm),
			    wire_atmeth_get_swap_add(atm), wire_atmeth_get_compare(atm));
		if (aeth) {
			uint8_t syn = wire_aeth_get_syndrome(aeth);

			wire_out_printf(&o, ",\"aeth\":{\"syndrome\":%u", syn);
			wire_json_str(&o, "type",
				      wire_aeth_type_name(wire_aeth_syndrome_type(syn)));
			wire_out_printf(&o, ",\"value\":%u,\"msn\":%" PRIu32 "}",
					wire_aeth_syndrome_value(syn), wire_aeth_get_msn(aeth));
		}
		if (ack)
			wire_out_printf(&o, ",\"atomicacketh\":{\"orig\":\"0x%016" PRIx64 "\"}",
					wire_atmack_get_orig(ack));
		if (imm)
			wire_out_printf(&o, ",\"immdt\":%" PRIu32, wire_immdt_get_imm(imm));
		if (ieth)
			wire_out_printf(&o, ",\"ieth\":%" PRIu32, wire_ieth_get_rkey(ieth));
		{
			size_t mad_len;
			const uint8_t *mad = wire_gsi_mad(p, &mad_len);

			if (mad)
				wire_json_cm(&o, mad, mad_len);
		}
	}
	wire_json_str(&o, "icrc", wire_icrc_status_name(d->icrc));
	if (d->pkt.len >= WIRE_BTH_BYTES + WIRE_ICRC_BYTES)
		wire_out_printf(&o, ",\"icrc_wire\":%" PRIu32, d->pkt.icrc);
	if (d->icrc != WIRE_ICRC_UNCHECKED)
		wire_out_printf(&o, ",\"icrc_calc\":%" PRIu32, d->icrc_calc);
	wire_out_printf(&o, "}");
	return wire_out_done(&o);
}

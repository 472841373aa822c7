// SPDX-License-Identifier: MIT
/*
 * CM MADs (see wire/mad.h): the field table generated from
 * WIRE_CM_FIELD_LIST, bit-exact get/set of any field up to 64 bits wide,
 * attribute and reject-reason names, and the parser that turns a UD
 * payload into a struct wire_cm_msg. Pure: no I/O, no allocation, no
 * mutable state.
 */
#include <string.h>

#include <wire/mad.h>

static const struct wire_cm_field_info wire_cm_fields[WIRE_CM_FIELD_COUNT] = {
#define WIRE_CM_FIELD_ROW(msg, field, byte_off, bit_off, bits, str) \
	[WIRE_CM_##msg##_##field] = {.attr_id = WIRE_CM_ATTR_##msg, \
				     .byte = (byte_off),            \
				     .bit = (bit_off),              \
				     .width = (bits),               \
				     .name = (str)},
    WIRE_CM_FIELD_LIST(WIRE_CM_FIELD_ROW)
#undef WIRE_CM_FIELD_ROW
};

/* Every field lies inside the 232 bytes of MAD data. */
#define WIRE_CM_FIELD_FITS(msg, field, byte_off, bit_off, bits, str)                 \
	_Static_assert((byte_off)*8 + (bit_off) + (bits) <= WIRE_MAD_DATA_BYTES * 8, \
		       #msg "." #field " inside the MAD");
WIRE_CM_FIELD_LIST(WIRE_CM_FIELD_FITS)
#undef WIRE_CM_FIELD_FITS

const struct wire_cm_field_info *wire_cm_field(enum wire_cm_field f)
{
	return (unsigned)f < WIRE_CM_FIELD_COUNT ? &wire_cm_fields[f] : NULL;
}

const char *wire_cm_attr_name(uint16_t attr_id)
{
	switch (attr_id) {
#define WIRE_CM_ATTR_CASE(sym, id, name) \
	case (id):                       \
		return name;
		WIRE_CM_ATTR_LIST(WIRE_CM_ATTR_CASE)
#undef WIRE_CM_ATTR_CASE
	}
	return NULL;
}

const char *wire_cm_rej_name(uint16_t reason)
{
	switch (reason) {
#define WIRE_CM_REJ_CASE(sym, code, name) \
	case (code):                      \
		return name;
		WIRE_CM_REJ_LIST(WIRE_CM_REJ_CASE)
#undef WIRE_CM_REJ_CASE
	}
	return NULL;
}

/*
 * A field is a run of bits counted from the most significant bit of its
 * first byte (IBA's notation), most significant bit first. Both directions
 * go bit by bit: exact for any offset and width, and CM MADs are few.
 */
uint64_t wire_cm_get(const uint8_t *mad, enum wire_cm_field f)
{
	const struct wire_cm_field_info *fi = wire_cm_field(f);
	const uint8_t *p;
	uint64_t v = 0;

	if (!fi || fi->width > 64)
		return 0;
	p = mad + WIRE_MAD_HDR_BYTES + fi->byte;
	for (unsigned pos = fi->bit; pos < fi->bit + fi->width; pos++)
		v = (v << 1) | ((p[pos / 8] >> (7 - pos % 8)) & 1u);
	return v;
}

void wire_cm_set(uint8_t *mad, enum wire_cm_field f, uint64_t v)
{
	const struct wire_cm_field_info *fi = wire_cm_field(f);
	uint8_t *p;
	unsigned end;

	if (!fi || fi->width > 64)
		return;
	p = mad + WIRE_MAD_HDR_BYTES + fi->byte;
	end = fi->bit + fi->width;
	for (unsigned i = 0; i < fi->width; i++) {
		unsigned pos = end - 1 - i; /* bit position from the MSB of p[0] */
		uint8_t m = (uint8_t)(0x80u >> (pos % 8));

		if ((v >> i) & 1)
			p[pos / 8] |= m;
		else
			p[pos / 8] &= (uint8_t)~m;
	}
}

void wire_cm_init(uint8_t *mad, uint16_t attr_id, uint64_t tid)
{
	struct wire_mad_hdr *h = (struct wire_mad_hdr *)mad;

	memset(mad, 0, WIRE_MAD_BYTES);
	h->base_version = WIRE_MAD_BASE_VERSION;
	h->mgmt_class = WIRE_MGMT_CLASS_CM;
	h->class_version = WIRE_CM_CLASS_VERSION;
	h->method = WIRE_MAD_METHOD_SEND;
	wire_mad_set_tid(h, tid);
	wire_mad_set_attr_id(h, attr_id);
}

/* The fields the summary takes from each message. */
static void wire_cm_summary(const uint8_t *mad, struct wire_cm_msg *m)
{
	switch (m->attr_id) {
	case WIRE_CM_ATTR_REQ:
		m->local_comm_id = (uint32_t)wire_cm_get(mad, WIRE_CM_REQ_LOCAL_COMM_ID);
		m->service_id = wire_cm_get(mad, WIRE_CM_REQ_SERVICE_ID);
		m->qpn = (uint32_t)wire_cm_get(mad, WIRE_CM_REQ_LOCAL_QPN);
		m->starting_psn = (uint32_t)wire_cm_get(mad, WIRE_CM_REQ_STARTING_PSN);
		if (wire_cm_service_id_is_ip(m->service_id)) {
			m->has_ip = true;
			m->ip = (const struct wire_cm_ip_hdr *)wire_cm_field_ptr(
			    mad, WIRE_CM_REQ_PRIVATE_DATA);
		}
		break;
	case WIRE_CM_ATTR_MRA:
		m->local_comm_id = (uint32_t)wire_cm_get(mad, WIRE_CM_MRA_LOCAL_COMM_ID);
		m->remote_comm_id = (uint32_t)wire_cm_get(mad, WIRE_CM_MRA_REMOTE_COMM_ID);
		break;
	case WIRE_CM_ATTR_REJ:
		m->local_comm_id = (uint32_t)wire_cm_get(mad, WIRE_CM_REJ_LOCAL_COMM_ID);
		m->remote_comm_id = (uint32_t)wire_cm_get(mad, WIRE_CM_REJ_REMOTE_COMM_ID);
		m->rej_reason = (uint16_t)wire_cm_get(mad, WIRE_CM_REJ_REASON);
		break;
	case WIRE_CM_ATTR_REP:
		m->local_comm_id = (uint32_t)wire_cm_get(mad, WIRE_CM_REP_LOCAL_COMM_ID);
		m->remote_comm_id = (uint32_t)wire_cm_get(mad, WIRE_CM_REP_REMOTE_COMM_ID);
		m->qpn = (uint32_t)wire_cm_get(mad, WIRE_CM_REP_LOCAL_QPN);
		m->eecn = (uint32_t)wire_cm_get(mad, WIRE_CM_REP_LOCAL_EECN);
		m->starting_psn = (uint32_t)wire_cm_get(mad, WIRE_CM_REP_STARTING_PSN);
		break;
	case WIRE_CM_ATTR_RTU:
		m->local_comm_id = (uint32_t)wire_cm_get(mad, WIRE_CM_RTU_LOCAL_COMM_ID);
		m->remote_comm_id = (uint32_t)wire_cm_get(mad, WIRE_CM_RTU_REMOTE_COMM_ID);
		break;
	case WIRE_CM_ATTR_DREQ:
		m->local_comm_id = (uint32_t)wire_cm_get(mad, WIRE_CM_DREQ_LOCAL_COMM_ID);
		m->remote_comm_id = (uint32_t)wire_cm_get(mad, WIRE_CM_DREQ_REMOTE_COMM_ID);
		m->qpn = (uint32_t)wire_cm_get(mad, WIRE_CM_DREQ_REMOTE_QPN);
		break;
	case WIRE_CM_ATTR_DREP:
		m->local_comm_id = (uint32_t)wire_cm_get(mad, WIRE_CM_DREP_LOCAL_COMM_ID);
		m->remote_comm_id = (uint32_t)wire_cm_get(mad, WIRE_CM_DREP_REMOTE_COMM_ID);
		break;
	case WIRE_CM_ATTR_SIDR_REQ:
		m->local_comm_id = (uint32_t)wire_cm_get(mad, WIRE_CM_SIDR_REQ_REQUEST_ID);
		m->service_id = wire_cm_get(mad, WIRE_CM_SIDR_REQ_SERVICE_ID);
		if (wire_cm_service_id_is_ip(m->service_id)) {
			m->has_ip = true;
			m->ip = (const struct wire_cm_ip_hdr *)wire_cm_field_ptr(
			    mad, WIRE_CM_SIDR_REQ_PRIVATE_DATA);
		}
		break;
	case WIRE_CM_ATTR_SIDR_REP:
		m->local_comm_id = (uint32_t)wire_cm_get(mad, WIRE_CM_SIDR_REP_REQUEST_ID);
		m->sidr_status = (uint8_t)wire_cm_get(mad, WIRE_CM_SIDR_REP_STATUS);
		m->qpn = (uint32_t)wire_cm_get(mad, WIRE_CM_SIDR_REP_QPN);
		m->service_id = wire_cm_get(mad, WIRE_CM_SIDR_REP_SERVICE_ID);
		break;
	default: /* ClassPortInfo, LAP, APR: the header says enough */
		break;
	}
}

enum wire_reason wire_cm_parse(const uint8_t *payload, size_t len, struct wire_cm_msg *m)
{
	const struct wire_mad_hdr *h = (const struct wire_mad_hdr *)payload;

	memset(m, 0, sizeof(*m));
	if (len != WIRE_MAD_BYTES)
		return WIRE_R_MAD_SHORT;
	if (h->base_version != WIRE_MAD_BASE_VERSION)
		return WIRE_R_MAD_VERSION;
	if (h->mgmt_class != WIRE_MGMT_CLASS_CM)
		return WIRE_R_MAD_CLASS;
	if (h->class_version != WIRE_CM_CLASS_VERSION)
		return WIRE_R_MAD_VERSION;
	m->method = h->method;
	m->attr_id = wire_mad_get_attr_id(h);
	m->tid = wire_mad_get_tid(h);
	m->attr_name = wire_cm_attr_name(m->attr_id);
	if (!m->attr_name)
		return WIRE_R_MAD_ATTR;
	wire_cm_summary(payload, m);
	return WIRE_R_OK;
}

/* SPDX-License-Identifier: MIT */
/*
 * Names and descriptions of wire_reason values, generated from
 * WIRE_REASON_LIST so they cannot drift from the enum.
 */
#include <wire/reason.h>

static const char *const wire_reason_names[WIRE_R_COUNT] = {
#define WIRE__REASON_NAME(sym, key, desc) [WIRE_R_##sym] = key,
    WIRE_REASON_LIST(WIRE__REASON_NAME)
#undef WIRE__REASON_NAME
};

static const char *const wire_reason_descs[WIRE_R_COUNT] = {
#define WIRE__REASON_DESC(sym, key, desc) [WIRE_R_##sym] = desc,
    WIRE_REASON_LIST(WIRE__REASON_DESC)
#undef WIRE__REASON_DESC
};

const char *wire_reason_name(enum wire_reason r)
{
	return (unsigned)r < WIRE_R_COUNT ? wire_reason_names[r] : "invalid";
}

const char *wire_reason_desc(enum wire_reason r)
{
	return (unsigned)r < WIRE_R_COUNT ? wire_reason_descs[r] : "invalid reason";
}

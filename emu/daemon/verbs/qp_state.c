/* SPDX-License-Identifier: MIT */
/*
 * The QP state machine of IBA 10.3.1 (figure 124) as a table: for every
 * (current state, next state) pair, whether the transition exists and which
 * attributes ibv_modify_qp must (required) and may (optional) carry, per QP
 * type (RC, UC, UD and the XRC initiator and target QPs). The values are the
 * attribute rules of IBA 11.2.5.2 table 94 as Linux applies them
 * (drivers/infiniband/core/verbs.c, qp_state_table), so a program that passes
 * on hardware passes here and a wrong mask fails with EINVAL as it does
 * there. Pure: no I/O, no allocation.
 */
#define _GNU_SOURCE
#include <errno.h>

#include "verbs.h"

/* XI, XT: the XRC initiator (XRC_SEND) and target (XRC_RECV) QPs. */
enum { T_RC, T_UC, T_UD, T_XI, T_XT, T_COUNT };

struct transition {
	int valid;
	uint32_t req[T_COUNT];
	uint32_t opt[T_COUNT];
};

#define S(x) UROCE_QPS_##x
#define A(x) UROCE_QP_##x

/* clang-format off */
/* Attributes RESET->INIT requires and INIT->INIT allows. */
#define INIT_ATTRS_CONN (A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS))
#define INIT_ATTRS {						\
		[T_RC] = INIT_ATTRS_CONN,			\
		[T_UC] = INIT_ATTRS_CONN,			\
		[T_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),	\
		[T_XI] = INIT_ATTRS_CONN,			\
		[T_XT] = INIT_ATTRS_CONN,			\
	}
/* Optional attributes of every transition into RTS (from RTR, RTS, SQD). */
#define TO_RTS_OPT_UC (A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) | A(PATH_MIG_STATE))
#define TO_RTS_OPT {						\
		[T_RC] = TO_RTS_OPT_UC | A(MIN_RNR_TIMER),	\
		[T_UC] = TO_RTS_OPT_UC,				\
		[T_UD] = A(CUR_STATE) | A(QKEY),		\
		[T_XI] = TO_RTS_OPT_UC,				\
		[T_XT] = TO_RTS_OPT_UC | A(MIN_RNR_TIMER),	\
	}
/* Every state but RESET may go to RESET and to ERR, with no attributes. */
#define TO_RESET_AND_ERR		\
	[S(RESET)] = { .valid = 1 },	\
	[S(ERR)] = { .valid = 1 }

static const struct transition table[UROCE_QPS_COUNT][UROCE_QPS_COUNT] = {
	[S(RESET)] = {
		[S(RESET)] = { .valid = 1 },
		[S(INIT)] = {
			.valid = 1,
			.req = INIT_ATTRS,
		},
	},
	[S(INIT)] = {
		TO_RESET_AND_ERR,
		[S(INIT)] = {
			.valid = 1,
			.opt = INIT_ATTRS,
		},
		[S(RTR)] = {
			.valid = 1,
			.req = {
				[T_RC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) |
					 A(RQ_PSN) | A(MAX_DEST_RD_ATOMIC) |
					 A(MIN_RNR_TIMER),
				[T_UC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) |
					 A(RQ_PSN),
				[T_XI] = A(AV) | A(PATH_MTU) | A(DEST_QPN) |
					 A(RQ_PSN),
				[T_XT] = A(AV) | A(PATH_MTU) | A(DEST_QPN) |
					 A(RQ_PSN) | A(MAX_DEST_RD_ATOMIC) |
					 A(MIN_RNR_TIMER),
			},
			.opt = {
				[T_RC] = A(ALT_PATH) | A(ACCESS_FLAGS) |
					 A(PKEY_INDEX),
				[T_UC] = A(ALT_PATH) | A(ACCESS_FLAGS) |
					 A(PKEY_INDEX),
				[T_UD] = A(PKEY_INDEX) | A(QKEY),
				[T_XI] = A(ALT_PATH) | A(ACCESS_FLAGS) |
					 A(PKEY_INDEX),
				[T_XT] = A(ALT_PATH) | A(ACCESS_FLAGS) |
					 A(PKEY_INDEX),
			},
		},
	},
	[S(RTR)] = {
		TO_RESET_AND_ERR,
		[S(RTS)] = {
			.valid = 1,
			.req = {
				[T_RC] = A(TIMEOUT) | A(RETRY_CNT) |
					 A(RNR_RETRY) | A(SQ_PSN) |
					 A(MAX_QP_RD_ATOMIC),
				[T_UC] = A(SQ_PSN),
				[T_UD] = A(SQ_PSN),
				[T_XI] = A(TIMEOUT) | A(RETRY_CNT) |
					 A(RNR_RETRY) | A(SQ_PSN) |
					 A(MAX_QP_RD_ATOMIC),
				[T_XT] = A(TIMEOUT) | A(SQ_PSN),
			},
			.opt = TO_RTS_OPT,
		},
	},
	[S(RTS)] = {
		TO_RESET_AND_ERR,
		[S(RTS)] = {
			.valid = 1,
			.opt = TO_RTS_OPT,
		},
		[S(SQD)] = {
			.valid = 1,
			.opt = {
				[T_RC] = A(EN_SQD_ASYNC_NOTIFY),
				[T_UC] = A(EN_SQD_ASYNC_NOTIFY),
				[T_UD] = A(EN_SQD_ASYNC_NOTIFY),
				[T_XI] = A(EN_SQD_ASYNC_NOTIFY),
				[T_XT] = A(EN_SQD_ASYNC_NOTIFY),
			},
		},
	},
	[S(SQD)] = {
		TO_RESET_AND_ERR,
		[S(RTS)] = {
			.valid = 1,
			.opt = TO_RTS_OPT,
		},
		[S(SQD)] = {
			.valid = 1,
			.opt = {
				[T_RC] = A(PORT) | A(AV) | A(TIMEOUT) |
					 A(RETRY_CNT) | A(RNR_RETRY) |
					 A(MAX_QP_RD_ATOMIC) |
					 A(MAX_DEST_RD_ATOMIC) | A(ALT_PATH) |
					 A(ACCESS_FLAGS) | A(PKEY_INDEX) |
					 A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
				[T_UC] = A(AV) | A(ALT_PATH) | A(ACCESS_FLAGS) |
					 A(PKEY_INDEX) | A(PATH_MIG_STATE),
				[T_UD] = A(PKEY_INDEX) | A(QKEY),
				[T_XI] = A(PORT) | A(AV) | A(TIMEOUT) |
					 A(RETRY_CNT) | A(RNR_RETRY) |
					 A(MAX_QP_RD_ATOMIC) | A(ALT_PATH) |
					 A(ACCESS_FLAGS) | A(PKEY_INDEX) |
					 A(PATH_MIG_STATE),
				[T_XT] = A(PORT) | A(AV) | A(TIMEOUT) |
					 A(MAX_DEST_RD_ATOMIC) | A(ALT_PATH) |
					 A(ACCESS_FLAGS) | A(PKEY_INDEX) |
					 A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
			},
		},
	},
	[S(SQE)] = {
		TO_RESET_AND_ERR,
		[S(RTS)] = {
			.valid = 1,
			.opt = {
				/* RC has no SQE state (IBA 10.3.1.9). */
				[T_UC] = A(CUR_STATE) | A(ACCESS_FLAGS),
				[T_UD] = A(CUR_STATE) | A(QKEY),
			},
		},
	},
	[S(ERR)] = {
		TO_RESET_AND_ERR,
	},
};
/* clang-format on */

#undef S
#undef A
#undef INIT_ATTRS_CONN
#undef INIT_ATTRS
#undef TO_RTS_OPT_UC
#undef TO_RTS_OPT
#undef TO_RESET_AND_ERR

const char *emu_qp_state_name(uint32_t state)
{
	return state < UROCE_QPS_COUNT ? xport_qp_state_name(state) : "INVALID";
}

static int type_index(uint32_t qp_type)
{
	switch (qp_type) {
	case UROCE_QPT_RC:
		return T_RC;
	case UROCE_QPT_UC:
		return T_UC;
	case UROCE_QPT_UD:
		return T_UD;
	case UROCE_QPT_XRC_SEND:
		return T_XI;
	case UROCE_QPT_XRC_RECV:
		return T_XT;
	default:
		return -1;
	}
}

int emu_qp_state_masks(uint32_t qp_type, uint32_t cur, uint32_t next, uint32_t *req, uint32_t *opt)
{
	int t = type_index(qp_type);
	const struct transition *tr;

	*req = 0;
	*opt = 0;
	if (t < 0 || cur >= UROCE_QPS_COUNT || next >= UROCE_QPS_COUNT)
		return 0;
	tr = &table[cur][next];
	if (!tr->valid)
		return 0;
	/* The SQE state does not exist for RC and XRC QPs. */
	if (cur == UROCE_QPS_SQE && (t == T_RC || t == T_XI || t == T_XT))
		return next == UROCE_QPS_RESET || next == UROCE_QPS_ERR;
	*req = tr->req[t];
	*opt = tr->opt[t];
	return 1;
}

uint32_t emu_qp_state_user_mask(uint32_t qp_type, uint32_t mask)
{
	/* uverbs modify_qp_mask(): what an XRC QP has no use for is dropped. */
	switch (qp_type) {
	case UROCE_QPT_XRC_SEND:
		return mask & ~(uint32_t)(UROCE_QP_MAX_DEST_RD_ATOMIC | UROCE_QP_MIN_RNR_TIMER);
	case UROCE_QPT_XRC_RECV:
		return mask & ~(uint32_t)(UROCE_QP_MAX_QP_RD_ATOMIC | UROCE_QP_RETRY_CNT |
					  UROCE_QP_RNR_RETRY);
	default:
		return mask;
	}
}

int emu_qp_state_check(uint32_t qp_type, uint32_t cur, uint32_t next, uint32_t mask)
{
	uint32_t req, opt;

	/* Current-state hint only where IBA lets the consumer give it. */
	if ((mask & UROCE_QP_CUR_STATE) && cur != UROCE_QPS_RTR && cur != UROCE_QPS_RTS &&
	    cur != UROCE_QPS_SQD && cur != UROCE_QPS_SQE)
		return -EINVAL;
	if (!emu_qp_state_masks(qp_type, cur, next, &req, &opt))
		return -EINVAL;
	if ((mask & req) != req)
		return -EINVAL;
	if (mask & ~(req | opt | UROCE_QP_STATE))
		return -EINVAL;
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The completion queue entry, as the CQ ring holds it and as the shim
 * turns it into a struct ibv_wc. Part of the uapi (uapi.h includes it), and
 * the one completion type there is: the transport engine builds these and
 * hands them to the daemon, which writes them into the ring unchanged.
 */
#ifndef UROCE_CQE_H
#define UROCE_CQE_H

#include <stdint.h>

enum uroce_cqe_flags {
	UROCE_CQE_SOLICITED = 1 << 0, /* the message asked for an event */
};

/* Completion queue entry (64 bytes). */
struct uroce_cqe {
	uint64_t wr_id;
	uint32_t status; /* enum uroce_wc_status */
	uint32_t opcode; /* enum uroce_wc_opcode */
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data; /* network order, or invalidated rkey */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags; /* enum uroce_wc_flags */
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
	uint8_t flags; /* enum uroce_cqe_flags */
	uint8_t reserved0;
	/* When the daemon wrote it into the ring: the device clock (the
	 * daemon's CLOCK_MONOTONIC in ns; hca_core_clock 1 GHz) and the wall
	 * clock (CLOCK_REALTIME in ns). */
	uint64_t timestamp_ns;
	uint64_t wallclock_ns;
};

#define UROCE_CQE_BYTES 64

_Static_assert(sizeof(struct uroce_cqe) == UROCE_CQE_BYTES, "CQE layout");

#endif /* UROCE_CQE_H */

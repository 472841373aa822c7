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

/*
 * What a UD receive completion says in sl: whether the packet came in an
 * IPv4 or an IPv6 header. Annex A17.4.5.1 has a RoCEv2 UD completion report
 * it, and struct ibv_wc has no field for it; these are the L3 header type
 * codes mlx5 reports in the same place (its CQE's flags_rqpn bits 24-25,
 * returned in sl), which UCX's UD transport reads to find the destination
 * address in the 40-byte GRH area. RoCEv2 carries no SL.
 */
enum uroce_cqe_l3 {
	UROCE_CQE_L3_IPV6 = 1,
	UROCE_CQE_L3_IPV4 = 2,
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
	/* UD receive: the packet's L3 header type (enum uroce_cqe_l3) */
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

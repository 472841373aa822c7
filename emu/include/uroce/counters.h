/* SPDX-License-Identifier: MIT */
/*
 * The transport engine's counters, as X-macro lists: one list of reasons a
 * received packet is dropped, and one list of events worth counting
 * (packets, retries, NAKs, duplicates...). Each list generates an enum here
 * and a name table in emu/xport.c, so a new reason is one line. The engine
 * keeps one array of each per device and per QP (drops found before the
 * destination QP is known are counted on the device only).
 */
#ifndef UROCE_COUNTERS_H
#define UROCE_COUNTERS_H

/* X(symbol, "name", "what it means") */
#define XPORT_DROP_LIST(X)                                                                    \
	X(SHORT, "short", "packet shorter than the headers its opcode needs")                 \
	X(BAD_ICRC, "bad_icrc", "ICRC does not match")                                        \
	X(BAD_TVER, "bad_tver", "BTH transport version is not 0")                             \
	X(BAD_OPCODE, "bad_opcode", "opcode unknown or not supported")                        \
	X(BAD_PAD, "bad_pad",                                                                 \
	  "pad count larger than the payload area or on a payload-less opcode")               \
	X(MULTICAST, "multicast", "QP 0xFFFFFF to a unicast GID, or a multicast GID to a QP") \
	X(NO_QP, "no_qp", "destination QP does not exist")                                    \
	X(QP_TYPE, "qp_type", "opcode transport does not match the QP type")                  \
	X(QP_STATE, "qp_state", "QP state does not accept this packet")                       \
	X(BAD_ADDR, "bad_addr", "source or destination address is not the QP's path")         \
	X(BAD_PKEY, "bad_pkey", "P_Key does not match the QP's partition")                    \
	X(BAD_QKEY, "bad_qkey", "DETH Q_Key does not match the QP's Q_Key")                   \
	X(CNP, "cnp", "congestion notification (counted, no rate control yet)")               \
	X(OUT_OF_SEQ, "out_of_seq", "request beyond the expected PSN after the one NAK")      \
	X(DUP_NO_RES, "dup_no_res", "duplicate READ/atomic with no responder resource left")  \
	X(DUP_OTHER, "dup_other", "duplicate request of another kind")                        \
	X(RESP_BUSY, "resp_busy", "request arrived while the responder's queue was full")     \
	X(RNR, "rnr", "SEND with no receive WQE (RNR NAK sent on RC)")                        \
	X(NO_RECV_WQE, "no_recv_wqe", "UC/UD SEND with no receive WQE")                       \
	X(UC_MSG, "uc_msg", "UC packet of a message already dropped")                         \
	X(REQ_ERR, "req_err", "request answered with a NAK (invalid, access, operational)")   \
	X(RESP_NO_WQE, "resp_no_wqe", "response with no outstanding request")                 \
	X(RESP_DUP, "resp_dup", "response older than the oldest unacknowledged PSN")          \
	X(RESP_GAP, "resp_gap", "READ/atomic response beyond the expected PSN")               \
	X(RESP_BAD, "resp_bad", "response that does not fit the request it acknowledges")     \
	X(RESP_RNR_WAIT, "resp_rnr_wait", "PSN NAK received while waiting for the RNR timer") \
	X(UD_TOO_LONG, "ud_too_long", "UD message larger than the receive WQE")               \
	X(COMP_BUSY, "comp_busy", "response arrived while the completer's queue was full")    \
	X(BAD_SPORT, "bad_sport",                                                             \
	  "UDP source port is not the one the connected QP's peer sends from")

/* X(symbol, "name", "what it counts") */
#define XPORT_CNT_LIST(X)                                                                          \
	X(TX_PKTS, "tx_pkts", "packets sent")                                                      \
	X(TX_BYTES, "tx_bytes", "payload bytes sent")                                              \
	X(RX_PKTS, "rx_pkts", "packets received (before checks)")                                  \
	X(RX_BYTES, "rx_bytes", "payload bytes of accepted packets")                               \
	X(TX_ERR, "tx_err", "send_packet failures (packet lost locally)")                          \
	X(ICRC_ID_GUESSED, "icrc_id_guessed", "ICRC matched with any solved IPv4 ID (mode any)")   \
	X(RETRY_TIMEOUT, "retry_timeout", "retransmission timer expiries that retried")            \
	X(RETRY_NAK_SEQ, "retry_nak_seq", "retries caused by a PSN sequence error NAK")            \
	X(RETRY_IMPLIED, "retry_implied", "retries caused by an implied NAK (skipped response)")   \
	X(RETRY_RNR, "retry_rnr", "retries after an RNR wait")                                     \
	X(RETX_PKTS, "retx_pkts", "packets sent again by go-back-N")                               \
	X(RNR_NAK_RCVD, "rnr_nak_rcvd", "RNR NAKs received")                                       \
	X(RNR_NAK_SENT, "rnr_nak_sent", "RNR NAKs sent")                                           \
	X(SEQ_NAK_SENT, "seq_nak_sent", "PSN sequence error NAKs sent")                            \
	X(SEQ_NAK_RCVD, "seq_nak_rcvd", "PSN sequence error NAKs received")                        \
	X(ERR_NAK_SENT, "err_nak_sent", "fatal NAKs sent (invalid request, access, operational)")  \
	X(ERR_NAK_RCVD, "err_nak_rcvd", "fatal NAKs received")                                     \
	X(ACK_SENT, "ack_sent", "Acknowledge packets sent")                                        \
	X(ACK_RCVD, "ack_rcvd", "Acknowledge packets received")                                    \
	X(DUP_REQ, "dup_req", "duplicate requests received")                                       \
	X(DUP_ACKED, "dup_acked", "duplicate SEND/WRITE packets acknowledged again")               \
	X(READ_REPLAYED, "read_replayed", "READ responses regenerated for a duplicate READ")       \
	X(ATOMIC_REPLAYED, "atomic_replayed",                                                      \
	  "atomic results re-sent from the responder resource")                                    \
	X(ATOMIC_EXECUTED, "atomic_executed", "atomic operations executed")                        \
	X(FLUSH_EXECUTED, "flush_executed", "FLUSH requests executed as responder")                \
	X(FLUSH_REPLAYED, "flush_replayed", "FLUSH answers re-sent for a duplicate FLUSH")         \
	X(READ_RESP_SENT, "read_resp_sent", "READ response packets sent")                          \
	X(MSG_RCVD, "msg_rcvd", "messages (SEND/WRITE/READ/atomic) executed as responder")         \
	X(SEND_CQE, "send_cqe", "send completions pushed")                                         \
	X(RECV_CQE, "recv_cqe", "receive completions pushed")                                      \
	X(FLUSHED, "flushed", "work requests completed with IBV_WC_WR_FLUSH_ERR")                  \
	X(QP_ERROR, "qp_error", "transitions to the Error state caused by the transport")          \
	X(DEFERRED, "deferred", "requests queued while READ responses were being streamed")        \
	X(UD_OVERSIZE, "ud_oversize", "UD sends longer than the MTU, completed without sending")   \
	X(GSI_RX, "gsi_rx", "management datagrams received on QP1 (the GSI QP)")                   \
	X(GSI_TX, "gsi_tx", "management datagrams sent from QP1")                                  \
	X(DUP_SILENT, "dup_silent", "duplicate SEND/WRITE packets without AckReq, not answered")   \
	X(NAK_ECHO, "nak_echo", "NAKs and implied NAKs about a loss already being sent again")     \
	X(RETRY_FAST, "retry_fast", "resends after the adaptive timer (no retry_cnt spent)")       \
	X(RETRY_SPURIOUS, "retry_spurious", "rewinds undone: the original arrived after all")      \
	X(HELD, "held", "requests beyond the expected PSN held until the gap before them fills")   \
	X(FLOW_WAIT, "flow_wait", "messages that waited for the device's in-flight budget")        \
	X(MW_BIND, "mw_bind", "memory window binds executed")                                      \
	X(INV_LOCAL, "inv_local", "R_Keys invalidated by LOCAL_INV")                               \
	X(INV_REMOTE, "inv_remote", "R_Keys invalidated by a received SEND with Invalidate")       \
	X(INV_REFUSED, "inv_refused", "SEND with Invalidate whose R_Key could not be invalidated") \
	X(ICRC_EXACT, "icrc_exact", "ICRC checked over the real IP header (raw socket, IPv6)")     \
	X(ICRC_ID0, "icrc_id0",                                                                    \
	  "IPv4 ICRC matched with DF and the ID a uroce peer sends: 0, or the packet's index in a "  \
	  "GSO datagram (header not seen)")                                                          \
	X(ICRC_ID_TRACKED, "icrc_id_tracked", "ICRC matched with an ID following the sender's")    \
	X(ICRC_ID_FIRST, "icrc_id_first", "ICRC matched with any ID: first packet of a sender")    \
	X(ICRC_ID_RESYNC, "icrc_id_resync", "ICRC matched with an ID following a rejected one")    \
	X(ICRC_ID_REJECTED_WINDOW, "icrc_id_rejected_window",                                      \
	  "ICRC matched only with an ID outside the sender's window (dropped as bad_icrc)")        \
	X(ICRC_ID_UNTRACKED, "icrc_id_untracked", "first-seen senders the full tracker forgot")    \
	X(ICRC_ID_EVICTED, "icrc_id_evicted", "idle senders the ID tracker forgot for new ones")   \
	X(SPORT_LEARNED, "sport_learned",                                                          \
	  "connected QPs that learned their peer's UDP source port from a valid packet")          \
	X(ICRC_ID_GSO, "icrc_id_gso",                                                              \
	  "ICRC matched with the ID after the last of a uroce peer: a GSO datagram cut on the way") \
	X(XRC_SRQ_REFUSED, "xrc_srq_refused",                                                      \
	  "XRC requests NAKed for their XRC SRQ (none such, another XRC domain)")                   \
	X(RNR_HELD, "rnr_held",                                                                    \
	  "requests that waited for a receive WQE before being answered (--rnr-hold-us)")          \
	X(RNR_HELD_TAKEN, "rnr_held_taken",                                                        \
	  "of those, the ones a receive WQE posted in time served without an RNR NAK")

enum xport_drop {
#define XPORT_DROP_ENUM(sym, name, doc) XPORT_DROP_##sym,
	XPORT_DROP_LIST(XPORT_DROP_ENUM)
#undef XPORT_DROP_ENUM
	    XPORT_DROP_COUNT
};

enum xport_cnt {
#define XPORT_CNT_ENUM(sym, name, doc) XPORT_CNT_##sym,
	XPORT_CNT_LIST(XPORT_CNT_ENUM)
#undef XPORT_CNT_ENUM
	    XPORT_CNT_COUNT
};

#endif /* UROCE_COUNTERS_H */

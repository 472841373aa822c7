/* SPDX-License-Identifier: MIT */
/*
 * The daemon's own counters (network, rings, DMA, CQs, capture, waiting), as
 * an X-macro list beside the transport engine's lists (xport_counters.h).
 * The daemon keeps one array per device; `uroce counters` prints them by
 * these names, in this order (the order is the wire order of the
 * QUERY_COUNTERS response, so new counters go at the end).
 */
#ifndef EMU_DEV_COUNTERS_H
#define EMU_DEV_COUNTERS_H

/* X(symbol, "name", "what it counts") */
#define EMU_DCNT_LIST(X)                                                                          \
	X(RX_DATAGRAMS, "rx_datagrams", "UDP datagrams received")                                 \
	X(RX_BATCHES, "rx_batches", "recvmmsg calls that returned datagrams")                     \
	X(RX_LOCAL, "rx_local",                                                                   \
	  "datagrams read at once because this daemon had just sent them (no epoll)")             \
	X(RX_NOT_OURS, "rx_not_ours", "datagrams for another address (dropped)")                  \
	X(RX_NO_PKTINFO, "rx_no_pktinfo", "datagrams without a destination address (dropped)")    \
	X(RX_TRUNCATED, "rx_truncated", "datagrams larger than the receive buffer (dropped)")     \
	X(RX_ERRORS, "rx_errors", "recvmmsg failures")                                            \
	X(TX_DATAGRAMS, "tx_datagrams", "UDP datagrams sent")                                     \
	X(TX_BATCHES, "tx_batches", "sendmmsg calls")                                             \
	X(TX_DROPPED, "tx_dropped", "datagrams the kernel refused (buffer full, unreachable)")    \
	X(TX_NO_ROUTE, "tx_no_route", "packets without a usable destination address")             \
	X(SQ_WQES, "sq_wqes", "send WQEs taken from SQ rings")                                    \
	X(RQ_WQES, "rq_wqes", "receive WQEs taken from RQ and SRQ rings")                         \
	X(BAD_SEND_WQE, "bad_send_wqe", "malformed send WQEs (completed with an error)")          \
	X(BAD_RECV_WQE, "bad_recv_wqe", "malformed receive WQEs (fail when used)")                \
	X(RING_CORRUPT, "ring_corrupt", "producer indices out of range (QP moved to error)")      \
	X(DMA_CALLS, "dma_calls", "process_vm_readv/writev calls")                                \
	X(DMA_BYTES, "dma_bytes", "bytes copied to or from application memory")                   \
	X(DMA_FAULTS, "dma_faults", "copies that failed in the owning process")                   \
	X(KEY_ERRORS, "key_errors", "L_Key/R_Key uses refused (key, PD, range, access)")          \
	X(ATOMICS, "atomics", "atomic operations executed on application memory")                 \
	X(CQES, "cqes", "completions written to CQ rings")                                        \
	X(CQ_OVERFLOW, "cq_overflow", "completions lost to a full CQ")                            \
	X(QP_FATAL, "qp_fatal", "QPs moved to the error state by the transport")                  \
	X(DOORBELLS, "doorbells", "doorbell eventfd wake-ups")                                    \
	X(SLEEPS, "sleeps", "times the daemon blocked in its event loop")                         \
	X(TIMER_FIRES, "timer_fires", "transport timer expiries delivered")                       \
	X(PCAP_FRAMES, "pcap_frames", "frames written to the capture file")                       \
	X(PCAP_ERRORS, "pcap_errors", "capture frames, writes or files that failed")              \
	X(CM_RX, "cm_rx", "CM MADs received on QP1")                                              \
	X(CM_RX_MALFORMED, "cm_rx_malformed",                                                     \
	  "MADs on QP1 that are not well-formed CM MADs (dropped)")                               \
	X(CM_UNMATCHED, "cm_unmatched", "CM MADs for no known connection or service (dropped)")   \
	X(CM_TX, "cm_tx", "CM MADs sent from QP1")                                                \
	X(CM_TX_ERR, "cm_tx_err", "CM MADs that could not be sent")                               \
	X(CM_REJ_SENT, "cm_rej_sent",                                                             \
	  "ConnectRejects sent (no listener, consumer reject, timeout)")                          \
	X(CM_DREP_SENT, "cm_drep_sent", "DisconnectReplies sent")                                 \
	X(CM_SIDR_REP_SENT, "cm_sidr_rep_sent", "SIDR replies sent (no listener: unsupported)")   \
	X(FAULT_DROPPED, "fault_dropped", "packets a fault rule dropped")                         \
	X(FAULT_DUPLICATED, "fault_duplicated", "packets a fault rule duplicated")                \
	X(FAULT_DELAYED, "fault_delayed", "packets a fault rule delayed")                         \
	X(FAULT_REORDERED, "fault_reordered", "packets a fault rule held back (reorder)")         \
	X(FAULT_CORRUPTED, "fault_corrupted", "packets a fault rule corrupted (bad ICRC)")        \
	X(FAULT_FORGED, "fault_forged", "responses a fault rule replaced by a forged reply")      \
	X(WC_ERRORS, "wc_errors", "completions with an error status (flushes not counted)")       \
	X(ASYNC_LOST, "async_lost", "async events lost: the application's event pipe was full")   \
	X(COMP_EVENTS_LOST, "comp_events_lost", "completion channel events lost (pipe full)")     \
	X(COMP_EVENTS_MEM, "comp_events_mem",                                                     \
	  "completion events handed to a waiting thread in memory, not through the pipe")         \
	X(CQ_OVERRUNS, "cq_overruns", "CQs that overran (CQ error, their QPs moved to Error)")    \
	X(MTU_CLAMPED, "mtu_clamped", "path MTUs above the active MTU clamped at modify_qp")      \
	X(CM_REQ_SENT, "cm_req_sent", "ConnectRequests sent (first sends)")                       \
	X(CM_REQ_RCVD, "cm_req_rcvd", "ConnectRequests given to a listener")                      \
	X(CM_REP_SENT, "cm_rep_sent", "ConnectReplies sent (first sends)")                        \
	X(CM_REP_RCVD, "cm_rep_rcvd", "ConnectReplies that answered our ConnectRequest")          \
	X(CM_RTU_SENT, "cm_rtu_sent", "ReadyToUse messages sent")                                 \
	X(CM_DREQ_SENT, "cm_dreq_sent", "DisconnectRequests sent (first sends)")                  \
	X(CM_ESTABLISHED, "cm_established", "connections established (either side)")              \
	X(CM_RESENT, "cm_resent", "CM requests resent after their response timeout")              \
	X(CM_TIMEOUTS, "cm_timeouts", "CM requests unanswered after every retry")                 \
	X(CM_DUPLICATES, "cm_duplicates",                                                         \
	  "CM MADs seen again or late (answered again or ignored)")                               \
	X(CM_EVENTS_LOST, "cm_events_lost", "rdma_cm events lost: the channel's socket was full") \
	X(DM_BYTES, "dm_bytes", "bytes the data path copied to or from device memory")            \
	X(ODP_PREFETCH, "odp_prefetch", "ibv_advise_mr prefetches done")                          \
	X(PCAP_FILES, "pcap_files", "capture files started after the first (--pcap-size)")        \
	X(RX_BAD_IP, "rx_bad_ip",                                                                 \
	  "raw-socket datagrams with IP options, fragments or bad lengths (dropped)")             \
	X(TX_GSO_SENDS, "tx_gso_sends", "UDP GSO datagrams sent (each holds 2 or more packets)")  \
	X(TX_GSO_SEGMENTS, "tx_gso_segments", "packets sent inside UDP GSO datagrams")            \
	X(TX_GSO_TAILS, "tx_gso_tails",                                                           \
	  "GSO datagrams ended by a packet shorter than the others (a message's last)")           \
	X(RX_GSO_DATAGRAMS, "rx_gso_datagrams",                                                   \
	  "received datagrams that held several packets (GRO, or a GSO send over loopback)")      \
	X(RX_GSO_SEGMENTS, "rx_gso_segments", "packets taken out of such datagrams")              \
	X(RX_GSO_BAD, "rx_gso_bad",                                                               \
	  "datagrams too long for one packet that do not split into 4 KiB-MTU packets (dropped)") \
	X(RX_RAW_DATAGRAMS, "rx_raw_datagrams",                                                   \
	  "exact ICRC mode: datagrams of raw sockets (on loopback only IPv4 ID not 0)")           \
	X(TX_MCAST, "tx_mcast", "datagrams sent to a multicast group")                            \
	X(RX_MCAST, "rx_mcast", "datagrams received for a multicast group the RNIC joined")       \
	X(RX_MCAST_NO_QP, "rx_mcast_no_qp",                                                       \
	  "multicast datagrams for a joined group with no QP attached (dropped)")                 \
	X(CQE_NO_CQ, "cqe_no_cq",                                                                 \
	  "XRC receive completions lost: their XRC SRQ was destroyed during the message")         \
	X(CM_REQ_HELD, "cm_req_held",                                                             \
	  "ConnectRequests that found no listener, held for one about to listen")                 \
	X(CM_REQ_HELD_TAKEN, "cm_req_held_taken",                                                 \
	  "held ConnectRequests that a listen started in time took")                              \
	X(DMA_IN_PLACE, "dma_in_place",                                                           \
	  "bytes written to application memory straight from received packets (not staged)")      \
	X(SQ_PREREAD, "sq_preread",                                                               \
	  "small send payloads taken from the WQE, where the shim copied them at the post")       \
	X(SQ_LOOKS, "sq_looks",                                                                   \
	  "looks at a send queue: its doorbell rang, its sends completed or its state changed")   \
	X(ACK_HOLDS, "ack_holds",                                                                 \
	  "send batches of only ACKs that waited for a request (--ack-hold-us)")                  \
	X(RX_BEFORE_TIMERS, "rx_before_timers",                                                   \
	  "datagrams read just before transport timers were due to fire (answers, not losses)")   \
	X(PCAP_DROPPED, "pcap_dropped",                                                           \
	  "frames not captured: the capture buffer was full (the file was not keeping up)")       \
	X(FAULT_LOG_ERRORS, "fault_log_errors",                                                   \
	  "--fault-log lines not written (its buffer was full) and writes that failed")           \
	X(DMA_MAPPED_BYTES, "dma_mapped_bytes",                                                   \
	  "bytes copied to or from registered memory the daemon maps (no process_vm call)")       \
	X(MR_MAPS_OVER_BUDGET, "mr_maps_over_budget",                                             \
	  "MRs left to process_vm_*: mapping them would pass --map-budget")                       \
	X(TIME_WORK_NS, "time_work_ns",                                                           \
	  "--profile: ns in received batches and data-path passes that found work (all below)")   \
	X(TIME_IDLE_NS, "time_idle_ns",                                                           \
	  "--profile: ns in data-path passes that found nothing (not the yield or wait after)")   \
	X(TIME_TX_NS, "time_tx_ns",                                                               \
	  "--profile: ns in sendmmsg (UDP/IP send; on loopback also the delivery to the peer)")   \
	X(TIME_RX_NS, "time_rx_ns", "--profile: ns in recvmmsg")                                  \
	X(TIME_DMA_NS, "time_dma_ns",                                                             \
	  "--profile: ns copying to and from registered memory (memcpy, process_vm_*; with "      \
	  "a payload's ICRC folded on the way)")                                                  \
	X(TIME_ICRC_NS, "time_icrc_ns", "--profile: ns computing and checking ICRCs")

enum emu_dcnt {
#define EMU_DCNT_ENUM(sym, name, doc) EMU_DCNT_##sym,
	EMU_DCNT_LIST(EMU_DCNT_ENUM)
#undef EMU_DCNT_ENUM
	    EMU_DCNT_COUNT
};

#endif /* EMU_DEV_COUNTERS_H */

/* SPDX-License-Identifier: MIT */
/*
 * The RNIC's Communication Manager (emu/daemon/cm): the IB CM that owns
 * QP1's connection-management MADs (IBA 12), as a kernel's ib_cm does for a
 * hardware RNIC. It sits above the data path (it sends and receives through
 * the engine's GSI QP) and below the control path, which will give
 * applications the RDMA CM on top of it. Today it answers what a CM with no
 * listeners answers: a ConnectRequest gets a ConnectReject (invalid service
 * ID), a DisconnectRequest for an unknown connection a DisconnectReply, a
 * SIDR request a SIDR reply "unsupported"; every MAD is counted, malformed
 * ones are dropped.
 */
#ifndef UROCE_CM_H
#define UROCE_CM_H

#include "dp.h"

/* cm.c */
/* Take QP1's MADs for this device (once the data path is set up). */
void emu_cm_start(struct emu_dev *dev);

#endif /* UROCE_CM_H */

/* SPDX-License-Identifier: MIT */
/*
 * Version of uroce, shared by the daemon, the CLI and the verbs shim.
 */
#ifndef UROCE_VERSION_H
#define UROCE_VERSION_H

#define UROCE_VERSION_STRING "0.1.0"

#endif

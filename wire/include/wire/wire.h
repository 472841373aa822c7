/* SPDX-License-Identifier: MIT */
/*
 * Everything in the wire library in one include. The library is pure:
 * libc only, no I/O, no malloc, no mutable globals; any program (daemon,
 * CLI, fuzzer, test) can link it alone.
 */
#ifndef WIRE_WIRE_H
#define WIRE_WIRE_H

#include <wire/bytes.h>
#include <wire/bth.h>
#include <wire/ext.h>
#include <wire/opcode.h>
#include <wire/psn.h>
#include <wire/aeth.h>
#include <wire/crc32.h>
#include <wire/inet.h>
#include <wire/icrc.h>
#include <wire/gso.h>
#include <wire/reason.h>
#include <wire/frame.h>
#include <wire/validate.h>
#include <wire/decode.h>
#include <wire/describe.h>
#include <wire/build.h>
#include <wire/mad.h>

#endif /* WIRE_WIRE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/* vmscope trace format: frames, writer, reader, stored messages. */
#ifndef VMSCOPE_TRACEFMT_H
#define VMSCOPE_TRACEFMT_H

#include "crc32c.h"
#include "frame.h"
#include "msg.h"
#include "reader.h"
#include "trace.h"
#include "writer.h"

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/* vmscoped's log: one line per event on stderr (the journal under systemd). */
#ifndef VMSCOPE_DAEMON_DMLOG_H
#define VMSCOPE_DAEMON_DMLOG_H

__attribute__((format(printf, 1, 2)))
void dm_log(const char *fmt, ...);

#endif

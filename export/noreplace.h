/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Move a finished output into place without ever replacing what is at
 * the destination: the one helper for every "write under a temporary
 * name, then rename" in the tree (grep renameat2).
 *
 * renameat2(RENAME_NOREPLACE) first. Some file systems do not have it and
 * say EINVAL (9p, as the test VMs' shared folders are); then, on EINVAL
 * only:
 * - a file: link() to the destination, which fails with EEXIST when
 *   anything is there, then unlink() of the temporary name;
 * - a folder (no hard links to folders): mkdir() of the destination,
 *   which fails with EEXIST when anything is there, then rename() over
 *   that empty folder of our own. A process killed between the two
 *   leaves an empty folder under the asked name (never a complete-looking
 *   output).
 */
#ifndef VMSCOPE_EXPORT_NOREPLACE_H
#define VMSCOPE_EXPORT_NOREPLACE_H

/* 0, or -errno (-EEXIST when @to exists); on failure @from is untouched. */
int ex_rename_noreplace(const char *from, const char *to);

#endif

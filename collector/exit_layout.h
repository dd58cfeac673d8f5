/*
 * The running kernel's layout of what the host module reads for kvm_exit's
 * details (struct vcpu_svm's vmcb pointer, struct vmcb's control area),
 * from its BTF (/sys/kernel/btf/vmlinux and kvm_amd's split BTF), passed to
 * the module by VMSCOPE_IOC_SET_EXIT_LAYOUT before probing starts; the
 * module accepts only its own compile-time layout (vmscope/events.h).
 */
#ifndef VMSCOPE_EXIT_LAYOUT_H
#define VMSCOPE_EXIT_LAYOUT_H

#include <stddef.h>

#include <vmscope/events.h>

/*
 * Fills *l from the BTF under btf_dir (NULL: /sys/kernel/btf). 0: found
 * (flags VMSCOPE_EXIT_LAYOUT_SVM); -1: not found, l->flags 0, why says
 * what was missing. VMSCOPE_TEST_EXIT_LAYOUT_SKEW (tests only) adds its
 * value to the vmcb pointer's offset.
 */
int exit_layout_read(const char *btf_dir, struct vmscope_exit_layout *l,
		     char *why, size_t why_len);

/*
 * Reads the layout and passes it to the module on fd; says on stderr
 * (prefixed by who) when there is no BTF. 0, or -1 when the ioctl
 * failed (an older module: it is not fatal for the caller).
 */
int exit_layout_send(int fd, const char *who);

/* "perf", "calibrating", "direct", ... for VMSCOPE_EXIT_MODE_* */
const char *exit_mode_name(unsigned int mode);
/* Why direct mode is refused (VMSCOPE_EXIT_REFUSED_*), or NULL. */
const char *exit_refused_name(unsigned int refused);

#endif

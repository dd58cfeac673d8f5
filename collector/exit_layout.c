/* The kvm_exit details' layout from the running kernel's BTF (exit_layout.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <bpf/btf.h>
#include <vmscope/ioctl.h>

#include "exit_layout.h"

/* Member @name of struct @t: byte offset and size, or -1. */
static int member(const struct btf *btf, const struct btf_type *t, const char *name,
		  __u32 *off, __u32 *size, __u32 *type_id)
{
	const struct btf_member *m = btf_members(t);

	for (unsigned short i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);
		__u32 bits = btf_member_bit_offset(t, i);
		__s64 sz;

		if (!n || strcmp(n, name))
			continue;
		if (bits % 8 || btf_member_bitfield_size(t, i))
			return -1;
		sz = btf__resolve_size(btf, m->type);
		if (sz < 0)
			return -1;
		*off = bits / 8;
		*size = (__u32)sz;
		if (type_id)
			*type_id = m->type;
		return 0;
	}
	return -1;
}

/* Whether type @id is (after typedefs and qualifiers) a pointer to struct @name. */
static int ptr_to_struct(const struct btf *btf, __u32 id, const char *name)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, id));

	if (!t || !btf_is_ptr(t))
		return 0;
	t = btf__type_by_id(btf, btf__resolve_type(btf, t->type));
	return t && btf_is_struct(t) && !strcmp(btf__name_by_offset(btf, t->name_off), name);
}

static const struct btf_type *find_struct(const struct btf *btf, const char *name)
{
	__s32 id = btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT);

	return id < 0 ? NULL : btf__type_by_id(btf, (__u32)id);
}

int exit_layout_read(const char *btf_dir, struct vmscope_exit_layout *l,
		     char *why, size_t why_len)
{
	char path[512];
	struct btf *base = NULL, *btf = NULL;
	const struct btf_type *svm, *vmcb, *ctl;
	__u32 size, tid, ctl_size = 0;
	int rc = -1;

	memset(l, 0, sizeof(*l));
	if (!btf_dir)
		btf_dir = "/sys/kernel/btf";
	snprintf(path, sizeof(path), "%s/vmlinux", btf_dir);
	base = btf__parse(path, NULL);
	if (!base) {
		snprintf(why, why_len, "no BTF at %s: %s", path, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/kvm_amd", btf_dir);
	btf = btf__parse_split(path, base);
	if (!btf) {
		snprintf(why, why_len, "no kvm_amd BTF at %s: %s", path, strerror(errno));
		goto out;
	}
	svm = find_struct(btf, "vcpu_svm");
	vmcb = find_struct(btf, "vmcb");
	ctl = find_struct(btf, "vmcb_control_area");
	if (!svm || !vmcb || !ctl) {
		snprintf(why, why_len, "%s: no struct %s", path,
			 !svm ? "vcpu_svm" : !vmcb ? "vmcb" : "vmcb_control_area");
		goto out;
	}
	if (member(btf, svm, "vcpu", &l->vcpu_svm_vcpu, &size, NULL) ||
	    member(btf, svm, "vmcb", &l->vcpu_svm_vmcb, &l->vcpu_svm_vmcb_size, &tid) ||
	    member(btf, vmcb, "control", &l->vmcb_control, &ctl_size, NULL) ||
	    member(btf, ctl, "exit_code", &l->exit_code, &size, NULL) ||
	    member(btf, ctl, "exit_code_hi", &l->exit_code_hi, &size, NULL) ||
	    member(btf, ctl, "exit_info_1", &l->exit_info_1, &size, NULL) ||
	    member(btf, ctl, "exit_info_2", &l->exit_info_2, &size, NULL) ||
	    member(btf, ctl, "exit_int_info", &l->exit_int_info, &size, NULL) ||
	    member(btf, ctl, "exit_int_info_err", &l->exit_int_info_err, &size, NULL)) {
		snprintf(why, why_len, "%s: a member of vcpu_svm, vmcb or vmcb_control_area "
			 "is missing", path);
		goto out;
	}
	/* the module compares offsets; a pointer of another type is size 0 */
	if (!ptr_to_struct(btf, tid, "vmcb"))
		l->vcpu_svm_vmcb_size = 0;
	const char *skew = getenv("VMSCOPE_TEST_EXIT_LAYOUT_SKEW");

	if (skew)
		l->vcpu_svm_vmcb += (__u32)strtol(skew, NULL, 0);
	l->flags = VMSCOPE_EXIT_LAYOUT_SVM;
	rc = 0;
out:
	btf__free(btf);
	btf__free(base);
	return rc;
}

int exit_layout_send(int fd, const char *who)
{
	struct vmscope_exit_layout l;
	char why[600];

	if (exit_layout_read(NULL, &l, why, sizeof(why)))
		fprintf(stderr, "%s: kvm_exit layout: %s; the module relies on its "
			"calibration alone\n", who, why);
	if (ioctl(fd, VMSCOPE_IOC_SET_EXIT_LAYOUT, &l) < 0) {
		fprintf(stderr, "%s: passing the kvm_exit layout: %s\n", who,
			strerror(errno));
		return -1;
	}
	return 0;
}

const char *exit_mode_name(unsigned int mode)
{
	static const char *const names[] = {
		[VMSCOPE_EXIT_MODE_NONE] = "off",
		[VMSCOPE_EXIT_MODE_PERF] = "perf",
		[VMSCOPE_EXIT_MODE_CALIBRATING] = "calibrating",
		[VMSCOPE_EXIT_MODE_DIRECT] = "direct",
		[VMSCOPE_EXIT_MODE_VERIFY] = "verify",
		[VMSCOPE_EXIT_MODE_RECAL] = "recalibrate",
	};

	return mode < sizeof(names) / sizeof(names[0]) ? names[mode] : "unknown";
}

const char *exit_refused_name(unsigned int refused)
{
	switch (refused) {
	case VMSCOPE_EXIT_REFUSED_DISABLED:
		return "disabled (exit_direct=0)";
	case VMSCOPE_EXIT_REFUSED_LAYOUT:
		return "layout";
	case VMSCOPE_EXIT_REFUSED_MISMATCH:
		return "mismatch";
	case VMSCOPE_EXIT_REFUSED_ASKED:
		return "perf-asked";
	default:
		return NULL;
	}
}

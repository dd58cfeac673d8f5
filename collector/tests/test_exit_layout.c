/* SPDX-License-Identifier: GPL-2.0 */
/*
 * exit_layout.c against BTF made here with libbpf: a vmlinux with struct
 * kvm_vcpu and a kvm_amd split BTF with struct vcpu_svm (vcpu, vmcb),
 * struct vmcb (control) and struct vmcb_control_area, at the offsets of
 * 6.1's headers; the layout read must be those offsets. Then the
 * failures: no kvm_amd BTF, vcpu_svm.vmcb not a pointer to struct vmcb
 * (size 0, which the module refuses), and the tests' skew variable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "../../tests/lib/check.h"
#include "exit_layout.h"

static void write_btf(const char *dir, const char *name, const struct btf *btf)
{
	char path[512];
	__u32 size;
	const void *raw = btf__raw_data(btf, &size);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || !raw || fwrite(raw, 1, size, f) != size) {
		perror(path);
		exit(1);
	}
	fclose(f);
}

/* vcpu_size: sizeof(struct kvm_vcpu); good: vmcb is a struct vmcb * */
static void make(const char *dir, unsigned int vcpu_size, int good)
{
	struct btf *base = btf__new_empty(), *amd;
	int u8, u32, u64, vcpu, vmcb, ctl, svm, ptr, arr;

	u8 = btf__add_int(base, "u8", 1, 0);
	u32 = btf__add_int(base, "u32", 4, 0);
	u64 = btf__add_int(base, "u64", 8, 0);
	vcpu = btf__add_struct(base, "kvm_vcpu", vcpu_size);
	btf__add_field(base, "cpu", u32, 0, 0);
	write_btf(dir, "vmlinux", base);

	amd = btf__new_empty_split(base);
	arr = btf__add_array(amd, u32, u8, 0x70);
	ctl = btf__add_struct(amd, "vmcb_control_area", 0x400);
	btf__add_field(amd, "pad", arr, 0, 0);
	btf__add_field(amd, "exit_code", u32, 0x70 * 8, 0);
	btf__add_field(amd, "exit_code_hi", u32, 0x74 * 8, 0);
	btf__add_field(amd, "exit_info_1", u64, 0x78 * 8, 0);
	btf__add_field(amd, "exit_info_2", u64, 0x80 * 8, 0);
	btf__add_field(amd, "exit_int_info", u32, 0x88 * 8, 0);
	btf__add_field(amd, "exit_int_info_err", u32, 0x8c * 8, 0);
	vmcb = btf__add_struct(amd, "vmcb", 0x1000);
	btf__add_field(amd, "control", ctl, 0, 0);
	ptr = btf__add_ptr(amd, good ? vmcb : ctl);
	svm = btf__add_struct(amd, "vcpu_svm", vcpu_size + 64);
	btf__add_field(amd, "vcpu", vcpu, 0, 0);
	btf__add_field(amd, "vmcb", ptr, vcpu_size * 8, 0);
	(void)svm;
	write_btf(dir, "kvm_amd", amd);
	btf__free(amd);
	btf__free(base);
}

int main(void)
{
	char dir[] = "/tmp/test-exit-layout-XXXXXX", why[600], path[600];
	struct vmscope_exit_layout l;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	make(dir, 6552, 1);
	CHECK(exit_layout_read(dir, &l, why, sizeof(why)) == 0);
	CHECK(l.flags == VMSCOPE_EXIT_LAYOUT_SVM);
	CHECK(l.vcpu_svm_vcpu == 0 && l.vcpu_svm_vmcb == 6552 && l.vcpu_svm_vmcb_size == 8);
	CHECK(l.vmcb_control == 0 && l.exit_code == 0x70 && l.exit_code_hi == 0x74);
	CHECK(l.exit_info_1 == 0x78 && l.exit_info_2 == 0x80);
	CHECK(l.exit_int_info == 0x88 && l.exit_int_info_err == 0x8c && !l.reserved);

	setenv("VMSCOPE_TEST_EXIT_LAYOUT_SKEW", "8", 1);
	CHECK(exit_layout_read(dir, &l, why, sizeof(why)) == 0 && l.vcpu_svm_vmcb == 6560);
	unsetenv("VMSCOPE_TEST_EXIT_LAYOUT_SKEW");

	make(dir, 6552, 0);
	CHECK(exit_layout_read(dir, &l, why, sizeof(why)) == 0 && l.vcpu_svm_vmcb_size == 0);

	snprintf(path, sizeof(path), "%s/kvm_amd", dir);
	unlink(path);
	CHECK(exit_layout_read(dir, &l, why, sizeof(why)) == -1 && l.flags == 0);
	CHECK(strstr(why, "no kvm_amd BTF") != NULL);
	snprintf(path, sizeof(path), "%s/vmlinux", dir);
	unlink(path);
	CHECK(exit_layout_read(dir, &l, why, sizeof(why)) == -1 && strstr(why, "no BTF at"));
	rmdir(dir);

	CHECK(!strcmp(exit_mode_name(VMSCOPE_EXIT_MODE_DIRECT), "direct"));
	CHECK(!strcmp(exit_mode_name(99), "unknown"));
	CHECK(exit_refused_name(VMSCOPE_EXIT_REFUSED_NONE) == NULL);
	return check_result("test_exit_layout");
}

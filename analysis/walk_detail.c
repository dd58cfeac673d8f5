// SPDX-License-Identifier: GPL-2.0
/*
 * An exit's detail (walk.h, struct an_detail): the first kvm_pio,
 * kvm_mmio or kvm_msr record of its vCPU between its kvm_exit and its
 * entry. The first, because a userspace MMIO read is recorded twice in
 * one exit (KVM's "unsatisfied read" before QEMU's part, the completed
 * read after it), both with the same address; and the exit is what the
 * guest's access caused, which one record names.
 */
#include "walk_int.h"

/* kvm_mmio's type (the kernel's KVM_TRACE_MMIO_*): 0 unsatisfied read,
 * 1 read, 2 write */
#define MMIO_WRITE	2

void an_walk_detail(struct an_walk *w, uint8_t role, const uint8_t *p, struct vcpu *v)
{
	struct an_detail *d = &v->detail;

	/* only inside an exit: a record between an entry and the next exit
	 * belongs to no exit the report counts */
	if ((v->st != V_EXIT && v->st != V_USER) || d->kind != AN_DETAIL_NONE)
		return;
	switch (role) {
	case R_PIO:
		d->kind = AN_DETAIL_PIO;
		d->write = mg_get(&w->fpio[D_PIO_WRITE], p) != 0;
		d->addr = mg_get(&w->fpio[D_PIO_PORT], p);
		d->size = (uint32_t)mg_get(&w->fpio[D_PIO_SIZE], p);
		break;
	case R_MMIO:
		d->kind = AN_DETAIL_MMIO;
		d->write = mg_get(&w->fmmio[D_MMIO_TYPE], p) == MMIO_WRITE;
		d->addr = mg_get(&w->fmmio[D_MMIO_GPA], p);
		d->size = (uint32_t)mg_get(&w->fmmio[D_MMIO_LEN], p);
		break;
	case R_MSR:
		d->kind = AN_DETAIL_MSR;
		d->write = mg_get(&w->fmsr[D_MSR_WRITE], p) != 0;
		d->addr = mg_get(&w->fmsr[D_MSR_ECX], p);
		break;
	}
}

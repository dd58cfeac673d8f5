// SPDX-License-Identifier: GPL-2.0
/*
 * An exit's detail (walk.h, struct an_detail): the first kvm_pio,
 * kvm_mmio or kvm_msr record of its vCPU between its kvm_exit and its
 * entry. The first, because a userspace MMIO read is recorded twice in
 * one exit (KVM's "unsatisfied read" before QEMU's part, the completed
 * read after it), both with the same address; and the exit is what the
 * guest's access caused, which one record names.
 */
#include "exit_reason.h"
#include "walk_int.h"

/* kvm_mmio's type (the kernel's KVM_TRACE_MMIO_*): 0 unsatisfied read,
 * 1 read, 2 write */
#define MMIO_WRITE	2
/* kvm_page_fault's error_code: AMD's NPF error code (a #PF error code) and
 * Intel's EPT violation exit qualification both say a write in bit 1 */
#define NPF_WRITE	2

void an_walk_detail(struct an_walk *w, uint8_t role, const uint8_t *p, struct vcpu *v)
{
	struct an_detail *d = role == R_NPF ? &v->fault : &v->detail;
	const struct reason *r = &w->reason[v->reason];

	/* only inside an exit: a record between an entry and the next exit
	 * belongs to no exit the report counts */
	if ((v->st != V_EXIT && v->st != V_USER) || d->kind != AN_DETAIL_NONE)
		return;
	/* kvm_page_fault's address is guest-physical only in an NPF or EPT
	 * violation exit (KVM also records a #PF it intercepts: a guest
	 * virtual address) */
	if (role == R_NPF && (v->reason >= w->nreason || !r->valid ||
			      !an_exit_is_npf(r->isa, r->code)))
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
	case R_NPF:
		d->kind = AN_DETAIL_NPF;
		d->write = (mg_get(&w->fnpf[D_NPF_ERR], p) & NPF_WRITE) != 0;
		d->addr = mg_get(&w->fnpf[D_NPF_ADDR], p);
		break;
	}
}

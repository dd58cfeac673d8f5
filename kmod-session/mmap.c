// SPDX-License-Identifier: GPL-2.0
/*
 * mmap of /dev/vmscope-{host,guest}: CPU c's buffer at offset c * cpu_stride,
 * read-only. Each mapping holds a session reference (taken here, on
 * vma open for fork/split, dropped on close), so buffers outlive a stop or
 * the file's close until the last unmap.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include "session.h"

static void vmscope_vma_open(struct vm_area_struct *vma)
{
	struct vmscope_session *s = vma->vm_private_data;

	kref_get(&s->ref);
}

static void vmscope_vma_close(struct vm_area_struct *vma)
{
	vmscope_session_put(vma->vm_private_data);
}

static const struct vm_operations_struct vmscope_vm_ops = {
	.open = vmscope_vma_open,
	.close = vmscope_vma_close,
};

int vmscope_session_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct vmscope_session *s = READ_ONCE(file->private_data);
	unsigned long len = vma->vm_end - vma->vm_start;
	unsigned long stride_pages, cpu;
	int ret;

	if (!s)
		return -ENODATA;
	/* the buffers are the writers'; readers only look */
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	stride_pages = s->cfg.cpu_stride >> PAGE_SHIFT;
	cpu = vma->vm_pgoff / stride_pages;
	if (vma->vm_pgoff % stride_pages || cpu >= nr_cpu_ids ||
	    !cpu_possible(cpu) || !s->mem[cpu])
		return -ENXIO;
	if (len > s->cfg.cpu_stride)
		return -EINVAL;
	vma->vm_flags &= ~VM_MAYWRITE;
	ret = remap_vmalloc_range(vma, s->mem[cpu], 0);
	if (ret)
		return ret;
	vma->vm_ops = &vmscope_vm_ops;
	vma->vm_private_data = s;
	kref_get(&s->ref);
	return 0;
}

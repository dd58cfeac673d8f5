// SPDX-License-Identifier: GPL-2.0
/*
 * mmap of /dev/vmscope-{host,guest}: channel k's buffer of CPU c at offset
 * chan[k].offset + c * chan[k].cpu_stride (vmscope/ioctl.h), read-only.
 * Each mapping holds a session reference (taken here, on vma open for
 * fork/split, dropped on close), so buffers outlive a stop or the file's
 * close until the last unmap.
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

/* The channel whose buffers lie at page offset @pgoff, or NULL. */
static struct vmscope_session_chan *
mmap_chan(struct vmscope_session *s, unsigned long pgoff,
	  const struct vmscope_chan_cfg **cfg)
{
	unsigned int k;

	for (k = 0; k < s->cfg.nr_chans; k++) {
		const struct vmscope_chan_cfg *c = &s->cfg.chan[k];
		unsigned long first = c->offset >> PAGE_SHIFT;
		unsigned long pages = (c->cpu_stride >> PAGE_SHIFT) * nr_cpu_ids;

		if (pgoff >= first && pgoff - first < pages) {
			*cfg = c;
			return &s->ch[k];
		}
	}
	return NULL;
}

int vmscope_session_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct vmscope_session *s = READ_ONCE(file->private_data);
	unsigned long len = vma->vm_end - vma->vm_start;
	const struct vmscope_chan_cfg *cfg;
	struct vmscope_session_chan *c;
	unsigned long stride_pages, rel, cpu;
	int ret;

	if (!s)
		return -ENODATA;
	/* the buffers are the writers'; readers only look */
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	c = mmap_chan(s, vma->vm_pgoff, &cfg);
	if (!c)
		return -ENXIO;
	stride_pages = cfg->cpu_stride >> PAGE_SHIFT;
	rel = vma->vm_pgoff - (cfg->offset >> PAGE_SHIFT);
	cpu = rel / stride_pages;
	if (rel % stride_pages || !cpu_possible(cpu) || !c->mem[cpu])
		return -ENXIO;
	if (len > cfg->cpu_stride)
		return -EINVAL;
	vma->vm_flags &= ~VM_MAYWRITE;
	ret = remap_vmalloc_range(vma, c->mem[cpu], 0);
	if (ret)
		return ret;
	vma->vm_ops = &vmscope_vm_ops;
	vma->vm_private_data = s;
	kref_get(&s->ref);
	return 0;
}

/* Reading `vmscope stats`'s counters from the host module (stats_view.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "decode.h"
#include "stats_view.h"

static void add_totals(struct stats_view *v, const struct vmscope_probe_stats *st)
{
	v->exit_reason_missed += st->exit_reason_missed;
	v->timing_n[0] += st->exit_timing_n;
	v->timing_gap_ns[0] += st->exit_timing_gap_ns;
	v->timing_probe_ns[0] += st->exit_timing_probe_ns;
	v->timing_n[1] += st->entry_timing_n;
	v->timing_gap_ns[1] += st->entry_timing_gap_ns;
	v->timing_probe_ns[1] += st->entry_timing_probe_ns;
	for (unsigned int e = 0; e < v->nev; e++) {
		v->seen[e] += st->seen[e];
		v->matched[e] += st->matched[e];
	}
}

/* Every CPU's probe counters; returns the CPU count (nr_cpu_ids) or 0. */
static unsigned int read_counters(int fd, bool per_cpu, struct stats_view *v)
{
	struct vmscope_probe_stats st;
	unsigned int ncpu = 1;

	for (unsigned int cpu = 0; cpu < ncpu; cpu++) {
		memset(&st, 0, sizeof(st));
		st.cpu = cpu;
		if (ioctl(fd, VMSCOPE_IOC_GET_STATS, &st) < 0) {
			if (errno == EINVAL && cpu > 0)
				continue;	/* not a possible CPU */
			perror("vmscope stats: stats ioctl");
			return 0;
		}
		if (cpu == 0) {
			v->first = st;
			ncpu = st.nr_cpu_ids;
			if (per_cpu && !(v->per_cpu = calloc((size_t)ncpu * v->nev + 1,
							     sizeof(*v->per_cpu)))) {
				fprintf(stderr, "vmscope stats: out of memory\n");
				return 0;
			}
		}
		add_totals(v, &st);
		for (unsigned int e = 0; per_cpu && e < v->nev; e++)
			if (st.seen[e])
				v->per_cpu[v->n_per_cpu++] = (struct stats_cpu_count){
					.cpu = cpu, .event = e,
					.seen = st.seen[e], .matched = st.matched[e],
				};
	}
	return ncpu;
}

static void read_rb(int fd, unsigned int ncpu, struct stats_rb *rb)
{
	struct vmscope_rb_stats rs;

	for (unsigned int cpu = 0; cpu < ncpu; cpu++) {
		memset(&rs, 0, sizeof(rs));
		rs.cpu = cpu;
		if (ioctl(fd, VMSCOPE_IOC_GET_RB_STATS, &rs) < 0 || !rs.active)
			continue;	/* impossible CPU, old module, no session */
		if (rs.active > rb->active)	/* a session may start meanwhile */
			rb->active = rs.active;
		rb->full += rs.lost_full;
		rb->too_big += rs.lost_too_big;
		rb->overwritten += rs.lost_overwritten;
		rb->delivered += rs.subbufs_delivered;
	}
}

static int read_last(int fd, unsigned int ncpu, struct stats_view *v)
{
	struct vmscope_last_event le;

	v->last = calloc((size_t)v->nev * ncpu + 1, sizeof(*v->last));
	if (!v->last) {
		fprintf(stderr, "vmscope stats: out of memory\n");
		return -1;
	}
	for (unsigned int e = 0; e < v->nev; e++) {
		for (unsigned int cpu = 0; cpu < ncpu; cpu++) {
			struct stats_last *l = &v->last[v->n_last];

			memset(&le, 0, sizeof(le));
			le.cpu = cpu;
			le.event = e;
			if (ioctl(fd, VMSCOPE_IOC_GET_LAST, &le) < 0 || !le.seq)
				continue;
			if (vmscope_format_event(&v->descs[e], le.payload, sizeof(le.payload),
						 l->text, sizeof(l->text)) < 0)
				snprintf(l->text, sizeof(l->text), "(undecodable)");
			l->event = e;
			l->cpu = cpu;
			l->ts = le.timestamp;
			v->n_last++;
		}
	}
	return 0;
}

int stats_view_read(int fd, const struct vmscope_event_desc *descs, unsigned int nev,
		    bool per_cpu, bool last, struct stats_view *v)
{
	unsigned int ncpu;

	memset(v, 0, sizeof(*v));
	v->descs = descs;
	v->nev = nev;
	ncpu = read_counters(fd, per_cpu, v);
	if (!ncpu)
		return -1;
	v->have_exit_mode = ioctl(fd, VMSCOPE_IOC_GET_EXIT_MODE, &v->exit_mode) == 0;
	v->exit_mode.why[sizeof(v->exit_mode.why) - 1] = 0;
	read_rb(fd, ncpu, &v->rb);
	return last ? read_last(fd, ncpu, v) : 0;
}

void stats_view_free(struct stats_view *v)
{
	free(v->per_cpu);
	free(v->last);
	v->per_cpu = NULL;
	v->last = NULL;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * guest-recv: a minimal host-side receiver of `vmscope agent` streams, for
 * the VM tests, built on collector/guest_link (the collector's `record`
 * integrates the same parser).
 *
 *   guest-recv PORT OUTDIR [CONNECTIONS]
 *
 * Accepts connections one after the other (CONNECTIONS of them, default
 * 1) and for each feeds guest_link; appends to OUTDIR:
 *   hello.txt    per connection: token, sync, CPUs, tasks, irqs, cursors
 *   tasks.txt    the state dump's tasks: "pid tgid ppid comm"
 *   chunks.txt   "conn cpu seq records lost_before" per chunk
 *   records.txt  "cpu ts name text" per record, decoded with the hello's
 *                descriptors
 *   gaps.txt     per CPU at each reconnect: what the agent says it sent on
 *                earlier connections minus what is in chunks.txt (also
 *                from an earlier run of this tool: it reads chunks.txt at
 *                start), i.e. what a broken connection lost:
 *                "conn cpu lost_chunks lost_records"
 *   losses.txt   the agent's LossRecords
 * and prints one line per connection: "connection N: ... end: clean|why".
 * Exit 0 when every connection parsed cleanly to a frame boundary.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include <vmscope/events.h>
#include <vmscope/ringbuf_abi.h>

#include "decode.h"
#include "guest_link.h"
#include "rb_decode.h"
#include "reader_desc.h"

#define MAX_CPUS 4096

struct recv {
	FILE *hello, *tasks, *chunks, *records, *gaps, *losses;
	unsigned conn;
	struct vr_events *ev;		/* the current connection's hello's */
	/* stored so far, over every connection and earlier runs */
	unsigned long long stored_chunks[MAX_CPUS], stored_records[MAX_CPUS];
};

static int on_hello(void *arg, const Vmscope__Trace__GuestHello *h)
{
	struct recv *r = arg;
	const Vmscope__Trace__GuestStateDump *s = h->state;

	vr_events_free(r->ev);
	r->ev = NULL;
	if (vr_events_from_pb(&r->ev, h->events))
		return -ENOMEM;
	fprintf(r->hello, "conn %u agent_connection %u token %#llx sync %d "
		"period_ns %llu cpus %u nr_cpu_ids %u tasks %zu irqs %zu "
		"events %zu kernel %s\n", r->conn, h->connection,
		(unsigned long long)h->token, h->sync_available,
		(unsigned long long)h->sync_period_ns, s->nr_cpus, s->nr_cpu_ids,
		s->n_tasks, s->n_irqs, h->events->n_events,
		h->kernel ? h->kernel->release : "?");
	for (size_t i = 0; i < s->n_irqs; i++)
		fprintf(r->hello, "irq %u %s\n", s->irqs[i]->irq, s->irqs[i]->name);
	for (size_t i = 0; i < h->n_cursors; i++) {
		const Vmscope__Trace__GuestCpuCursor *c = h->cursors[i];
		long long lc, lr;

		fprintf(r->hello, "cursor cpu %u next_seq %llu chunks_sent %llu "
			"records_sent %llu\n", c->cpu,
			(unsigned long long)c->next_seq,
			(unsigned long long)c->chunks_sent,
			(unsigned long long)c->records_sent);
		if (!h->connection || c->cpu >= MAX_CPUS)
			continue;
		/* sent before this connection minus what we kept (negative:
		 * the agent's cursors are wrong, which the test catches) */
		lc = (long long)(c->chunks_sent - r->stored_chunks[c->cpu]);
		lr = (long long)(c->records_sent - r->stored_records[c->cpu]);
		fprintf(r->gaps, "%u %u %lld %lld\n", r->conn, c->cpu, lc, lr);
		fflush(r->gaps);
	}
	if (h->connection == 0)
		for (size_t i = 0; i < s->n_tasks; i++)
			fprintf(r->tasks, "%d %d %d %s\n", s->tasks[i]->pid,
				s->tasks[i]->tgid, s->tasks[i]->ppid,
				s->tasks[i]->comm);
	fflush(r->hello);
	fflush(r->tasks);
	return 0;
}

/* The records of a chunk, decoded with the hello's descriptors. */
static void decode_chunk(struct recv *r, const Vmscope__Trace__StreamChunk *c)
{
	struct vmscope_rb_iter it;
	struct vmscope_rb_rec rec;
	char text[512];
	int e, i;

	if (vmscope_rb_iter_init_records(&it, c->records.data, c->records.len,
					 c->begin_ts, c->end_ts, c->nr_records) < 0) {
		fprintf(r->records, "%u - BAD-CHUNK seq %llu\n", c->origin->cpu,
			(unsigned long long)c->seq);
		return;
	}
	while ((e = vmscope_rb_iter_next(&it, &rec)) > 0) {
		i = vr_events_index(r->ev, rec.id);
		if (i < 0 || vmscope_format_event(&r->ev->desc[i], rec.payload,
						  rec.size, text, sizeof(text)) < 0) {
			fprintf(r->records, "%u %llu UNDECODABLE id %u\n",
				c->origin->cpu, (unsigned long long)rec.ts, rec.id);
			continue;
		}
		fprintf(r->records, "%u %llu %s %s\n", c->origin->cpu,
			(unsigned long long)rec.ts, r->ev->desc[i].name, text);
	}
	if (e < 0)
		fprintf(r->records, "%u - BAD-RECORDS seq %llu (%d)\n",
			c->origin->cpu, (unsigned long long)c->seq, -e);
}

static int on_chunk(void *arg, const Vmscope__Trace__StreamChunk *c,
		    uint64_t gap)
{
	struct recv *r = arg;

	decode_chunk(r, c);
	fflush(r->records);
	/* written last: chunks.txt is what this receiver kept */
	fprintf(r->chunks, "%u %u %llu %u %llu %llu\n", r->conn, c->origin->cpu,
		(unsigned long long)c->seq, c->nr_records,
		(unsigned long long)c->lost_before, (unsigned long long)gap);
	fflush(r->chunks);
	if (c->origin->cpu < MAX_CPUS) {
		r->stored_chunks[c->origin->cpu]++;
		r->stored_records[c->origin->cpu] += c->nr_records;
	}
	return 0;
}

static int on_loss(void *arg, const Vmscope__Trace__LossRecord *l)
{
	struct recv *r = arg;

	fprintf(r->losses, "%u %u kind %d events %llu subbufs %llu %s\n", r->conn,
		l->origin->cpu, (int)l->kind, (unsigned long long)l->events,
		(unsigned long long)l->subbufs, l->detail);
	fflush(r->losses);
	return 0;
}

static const struct guest_link_ops ops = { on_hello, on_chunk, on_loss };

static FILE *open_out(const char *dir, const char *name, const char *mode)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, mode);
	if (!f && !(errno == ENOENT && *mode == 'r'))
		fprintf(stderr, "guest-recv: %s: %s\n", path, strerror(errno));
	return f;
}

/* What an earlier run of this tool kept (it was killed and restarted). */
static void load_stored(struct recv *r, const char *dir)
{
	FILE *f = open_out(dir, "chunks.txt", "r");
	unsigned conn, cpu, recs;
	unsigned long long seq, lost, gap;

	if (!f)
		return;
	while (fscanf(f, "%u %u %llu %u %llu %llu", &conn, &cpu, &seq, &recs,
		      &lost, &gap) == 6) {
		if (cpu < MAX_CPUS) {
			r->stored_chunks[cpu]++;
			r->stored_records[cpu] += recs;
		}
		if (conn >= r->conn)
			r->conn = conn + 1;
	}
	fclose(f);
}

static int serve(struct recv *r, int cfd, unsigned cid)
{
	struct guest_link *gl = guest_link_new(0, 0, &ops, r);
	struct guest_link_stats st;
	static uint8_t buf[1 << 16];
	int e = 0, ok;
	ssize_t n;

	while ((n = read(cfd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			e = -errno;
			break;
		}
		e = guest_link_feed(gl, buf, (size_t)n);
		if (e)
			break;
	}
	guest_link_stats(gl, &st);
	ok = !e && guest_link_at_boundary(gl);
	printf("connection %u from cid %u: %llu frames, %llu chunks, %llu records, "
	       "%llu losses, %llu seq gaps; end: %s\n", r->conn, cid,
	       (unsigned long long)st.frames, (unsigned long long)st.chunks,
	       (unsigned long long)st.records, (unsigned long long)st.losses,
	       (unsigned long long)st.seq_gaps,
	       ok ? "clean" : e < 0 && !guest_link_error(gl)[0] ? strerror(-e) :
	       guest_link_error(gl)[0] ? guest_link_error(gl) : "cut mid-frame");
	fflush(stdout);
	guest_link_free(gl);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct sockaddr_vm addr = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY };
	struct recv *r = calloc(1, sizeof(*r));
	unsigned conns = 1, bad = 0;
	int lfd, one = 1;

	if (argc < 3 || argc > 4 || !r) {
		fprintf(stderr, "usage: guest-recv PORT OUTDIR [CONNECTIONS]\n");
		return 2;
	}
	addr.svm_port = (unsigned)atoi(argv[1]);
	if (argc == 4)
		conns = (unsigned)atoi(argv[3]);
	load_stored(r, argv[2]);
	r->hello = open_out(argv[2], "hello.txt", "a");
	r->tasks = open_out(argv[2], "tasks.txt", "a");
	r->chunks = open_out(argv[2], "chunks.txt", "a");
	r->records = open_out(argv[2], "records.txt", "a");
	r->gaps = open_out(argv[2], "gaps.txt", "a");
	r->losses = open_out(argv[2], "losses.txt", "a");
	if (!r->hello || !r->tasks || !r->chunks || !r->records || !r->gaps ||
	    !r->losses)
		return 1;
	lfd = socket(AF_VSOCK, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(lfd, 1) < 0) {
		perror("guest-recv: listen");
		return 1;
	}
	printf("listening on port %u\n", addr.svm_port);
	fflush(stdout);
	for (unsigned i = 0; i < conns; i++, r->conn++) {
		struct sockaddr_vm peer;
		socklen_t plen = sizeof(peer);
		int cfd = accept(lfd, (struct sockaddr *)&peer, &plen);

		if (cfd < 0) {
			perror("guest-recv: accept");
			return 1;
		}
		if (serve(r, cfd, peer.svm_cid))
			bad++;
		close(cfd);
	}
	vr_events_free(r->ev);
	return bad ? 1 : 0;
}

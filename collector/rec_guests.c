/* SPDX-License-Identifier: GPL-2.0 */
/* Guest agent connections of a recording: see rec_guests.h. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "guest_link.h"
#include "rec_guests.h"

/* One VM's guest side: at most one live connection at a time. */
struct rg_vm {
	struct rec *r;
	unsigned int idx;
	uint32_t cid;
	int fd;				/* the live connection, or -1 */
	pthread_t t;
	bool has_thread;
	int live;			/* atomic */
	unsigned int conns;		/* connections accepted so far */
	/* what this recording queued per guest CPU, over every connection:
	 * a reconnect's cursors minus these is what a broken one lost */
	struct guest_link_kept kept[REC_GUEST_CPUS];
	uint8_t *hello;			/* packed GuestHello, under mu */
	size_t hello_len;
};

struct rec_guests {
	int lfd;			/* listening socket, or the hand-over one */
	bool handoff;			/* lfd passes connections (SCM_RIGHTS) */
	pthread_t lt;
	bool has_lt;
	pthread_mutex_t mu;
	struct rg_vm *vm;		/* [nvms] */
};

/*
 * Over the cap while the recording stops: the writer still drains until
 * every reader is done, and a reader parses only the read it was in when
 * the stop came (64 KiB: it may complete one frame of at most
 * GUEST_LINK_MAX_FRAME_DEF, about 4 MiB, and hold some thousand loss
 * records), so that is queued beyond the cap, by at most this much, rather
 * than dropped unrecorded.
 */
#define DRAIN_SLACK (8u << 20)

static int queue_wait(struct rec *r, size_t bytes)
{
	/* the writer is behind: stop reading this connection, so the
	 * guest's ring buffer fills and its mode decides (bounded here) */
	while (__atomic_load_n(&r->queued, __ATOMIC_RELAXED) + bytes > r->qcap) {
		if (__atomic_load_n(&r->draining, __ATOMIC_ACQUIRE))
			return __atomic_load_n(&r->queued, __ATOMIC_RELAXED) + bytes <=
				       r->qcap + DRAIN_SLACK ? 0 : -ECANCELED;
		__atomic_add_fetch(&r->stalls, 1, __ATOMIC_RELAXED);
		usleep(1000);
	}
	return 0;
}

static int queue_loss(struct rg_vm *v, uint32_t cpu, uint32_t kind, uint64_t events,
		      uint64_t subbufs, const char *detail)
{
	struct node *n;

	/* counted in the bound like a chunk: a guest sending nothing but
	 * LossRecords must not grow the queue while the writer is behind */
	if (queue_wait(v->r, sizeof(*n)))
		return -ECANCELED;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	cds_wfcq_node_init(&n->qn);
	n->kind = NODE_LOSS;
	n->guest = true;
	n->vm = v->idx;
	n->cpu = cpu;
	n->loss_kind = kind;
	n->loss_events = events;
	n->loss_subbufs = subbufs;
	n->loss_detail = detail;
	rec_enqueue(v->r, n);
	return 0;
}

/*
 * A connection's hello (packed) or its end (the reason) for the live
 * consumer (rec_opts.tap), queued in the connection's order with its
 * chunks. Counted in the bound, never refused: one each per connection,
 * a few KiB at most.
 */
static int queue_news(struct rg_vm *v, uint8_t kind, const void *data, size_t len)
{
	struct node *n;

	if (!v->r->o->tap)
		return 0;
	n = calloc(1, sizeof(*n) + len + 1);
	if (!n)
		return -ENOMEM;
	cds_wfcq_node_init(&n->qn);
	n->kind = kind;
	n->guest = true;
	n->vm = v->idx;
	n->len = (uint32_t)len;
	memcpy(n->data, data, len);
	rec_enqueue(v->r, n);
	return 0;
}

static int on_hello(void *arg, const Vmscope__Trace__GuestHello *h)
{
	struct rg_vm *v = arg;
	struct rec_guests *g = v->r->g;
	size_t len = vmscope__trace__guest_hello__get_packed_size(h);
	uint8_t *p = malloc(len ? len : 1);

	if (!p)
		return -ENOMEM;
	vmscope__trace__guest_hello__pack(h, p);
	if (queue_news(v, NODE_HELLO, p, len)) {
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_lock(&g->mu);
	free(v->hello);
	v->hello = p;
	v->hello_len = len;
	pthread_mutex_unlock(&g->mu);
	__atomic_store_n(&v->r->meta_dirty, 1, __ATOMIC_RELEASE);
	fprintf(stderr, "vmscope record: guest of VM %u (cid %u) connected: agent "
		"connection %u, kernel %s, %u CPUs, sync %s\n", v->idx, v->cid,
		h->connection, h->kernel && h->kernel->release ? h->kernel->release : "?",
		h->state ? h->state->nr_cpus : 0, h->sync_available ? "on" : "off");
	/* A reconnect within this recording: what the agent says it sent
	 * before minus what we queued is what the broken connection lost.
	 * (On our first connection, earlier ones went to another receiver.) */
	if (v->conns < 2)
		return 0;
	for (size_t i = 0; i < h->n_cursors; i++) {
		const Vmscope__Trace__GuestCpuCursor *c = h->cursors[i];
		uint64_t records, chunks;
		int e;

		if (c->cpu >= REC_GUEST_CPUS)
			continue;
		records = guest_link_reconnect_loss(&v->kept[c->cpu], c, &chunks);
		e = records ? queue_loss(v, c->cpu, VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_STREAM,
					 records, chunks,
					 "guest stream broke: sent but not received") : 0;
		if (e)
			return e;
	}
	return 0;
}

static int on_chunk(void *arg, const Vmscope__Trace__StreamChunk *c, uint64_t gap)
{
	struct rg_vm *v = arg;
	uint32_t cpu = c->origin->cpu;
	size_t len = c->records.len;
	struct node *n;

	(void)gap;	/* the chunk's seq and lost_before say it again */
	if (cpu >= REC_GUEST_CPUS)
		return -ERANGE;
	if (queue_wait(v->r, node_pool_need(&v->r->pool, len)))
		return -ECANCELED;
	n = node_pool_get(&v->r->pool, len);
	if (!n)
		return -ENOMEM;
	n->kind = NODE_CHUNK;
	n->guest = true;
	n->vm = v->idx;		/* by peer CID, never the claimed origin.vm */
	n->cpu = cpu;
	n->nr_records = c->nr_records;
	n->len = (uint32_t)len;
	n->seq = c->seq;
	n->begin_ts = c->begin_ts;
	n->end_ts = c->end_ts;
	n->lost_before = c->lost_before;
	memcpy(n->data, c->records.data, len);
	v->kept[cpu].chunks++;
	v->kept[cpu].records += c->nr_records;
	rec_enqueue(v->r, n);
	return 0;
}

static int on_loss(void *arg, const Vmscope__Trace__LossRecord *l)
{
	struct rg_vm *v = arg;

	if (l->origin->cpu >= REC_GUEST_CPUS)
		return -ERANGE;
	return queue_loss(v, l->origin->cpu, l->kind, l->events, l->subbufs,
			  "reported by the guest agent");
}

static const struct guest_link_ops ops = { on_hello, on_chunk, on_loss };

static void *conn_main(void *arg)
{
	struct rg_vm *v = arg;
	struct rec *r = v->r;
	struct guest_link *gl = guest_link_new(v->idx, 0, &ops, v);
	struct pollfd p = { .fd = v->fd, .events = POLLIN };
	static __thread uint8_t buf[1 << 16];
	struct guest_link_stats st;
	const char *why = "closed by the guest";
	char ebuf[160];
	int e = gl ? 0 : -ENOMEM;

	while (!e) {
		ssize_t n;

		if (__atomic_load_n(&r->draining, __ATOMIC_ACQUIRE)) {
			why = "recording stopped";
			break;
		}
		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(v->fd, buf, sizeof(buf));
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			e = -errno;
			break;
		}
		e = guest_link_feed(gl, buf, (size_t)n);
	}
	if (e == -ECANCELED) {
		why = "recording stopped";
	} else if (e == -ERANGE) {
		snprintf(ebuf, sizeof(ebuf), "guest CPU number at or above %d", REC_GUEST_CPUS);
		why = ebuf;
	} else if (e) {
		snprintf(ebuf, sizeof(ebuf), "bad stream: %s",
			 gl && guest_link_error(gl)[0] ? guest_link_error(gl) : strerror(-e));
		why = ebuf;
	} else if (gl && !guest_link_at_boundary(gl) && !strcmp(why, "closed by the guest")) {
		why = "closed by the guest mid-frame";
	}
	if (gl)
		guest_link_stats(gl, &st);
	else
		memset(&st, 0, sizeof(st));
	fprintf(stderr, "vmscope record: guest of VM %u (cid %u): connection ended (%s) "
		"after %" PRIu64 " chunks, %" PRIu64 " records, %" PRIu64 " loss reports\n",
		v->idx, v->cid, why, st.chunks, st.records, st.losses);
	guest_link_free(gl);
	close(v->fd);
	/* before the producer count drops: the writer still takes it */
	if (queue_news(v, NODE_GONE, why, strlen(why)))
		fprintf(stderr, "vmscope record: guest of VM %u: out of memory telling "
			"the live view the connection ended\n", v->idx);
	__atomic_store_n(&v->live, 0, __ATOMIC_RELEASE);
	__atomic_sub_fetch(&r->readers_left, 1, __ATOMIC_RELEASE);
	rec_wake_writer(r);
	return NULL;
}

/*
 * The next connection handed over on @lfd (one descriptor per message), or
 * -1; *closed when the sender has gone (vmscoped exited: no more come).
 */
static int take_handed(int lfd, bool *closed)
{
	char data[1];
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	int fd = -1;
	ssize_t n = recvmsg(lfd, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		*closed = true;
	if (n <= 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)) && fd < 0)
			memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	return fd;
}

static void accept_one(struct rec *r, int lfd, bool *closed)
{
	struct rec_guests *g = r->g;
	struct sockaddr_vm peer = { 0 };
	socklen_t plen = sizeof(peer);
	struct rg_vm *v = NULL;
	int fd;

	if (g->handoff) {
		/* the peer is what the kernel says of this socket, not the sender */
		fd = take_handed(lfd, closed);
		if (fd >= 0 && (getpeername(fd, (struct sockaddr *)&peer, &plen) ||
				peer.svm_family != AF_VSOCK)) {
			fprintf(stderr, "vmscope record: a handed-over connection is not "
				"a connected vsock socket: closed\n");
			close(fd);
			return;
		}
	} else {
		fd = accept4(lfd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
	}
	if (fd < 0)
		return;
	for (unsigned int i = 0; i < r->o->nvms; i++)
		if (g->vm[i].cid && g->vm[i].cid == peer.svm_cid)
			v = &g->vm[i];
	if (!v || __atomic_load_n(&v->live, __ATOMIC_ACQUIRE)) {
		fprintf(stderr, "vmscope record: refused a guest connection from cid %u: %s\n",
			peer.svm_cid, v ? "its VM has a live connection" :
			"not a VM of this recording");
		close(fd);
		return;
	}
	if (v->has_thread)	/* the previous connection's thread ended */
		pthread_join(v->t, NULL);
	v->has_thread = false;
	v->fd = fd;
	v->conns++;
	__atomic_store_n(&v->live, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&r->readers_left, 1, __ATOMIC_RELAXED);
	if (pthread_create(&v->t, NULL, conn_main, v)) {
		__atomic_sub_fetch(&r->readers_left, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&v->live, 0, __ATOMIC_RELEASE);
		close(fd);
		fprintf(stderr, "vmscope record: no thread for the guest of cid %u\n",
			peer.svm_cid);
		return;
	}
	v->has_thread = true;
}

static void *listen_main(void *arg)
{
	struct rec *r = arg;
	struct pollfd p = { .fd = r->g->lfd, .events = POLLIN };
	bool closed = false;

	while (!__atomic_load_n(&r->draining, __ATOMIC_ACQUIRE)) {
		if (poll(&p, 1, 100) > 0)
			accept_one(r, r->g->lfd, &closed);
		if (closed && p.fd >= 0) {	/* poll() skips a negative fd */
			fprintf(stderr, "vmscope record: the guest connection hand-over "
				"ended (vmscoped exited): no new guest connection\n");
			p.fd = -1;
		}
	}
	for (unsigned int i = 0; i < r->o->nvms; i++)
		if (r->g->vm[i].has_thread)
			pthread_join(r->g->vm[i].t, NULL);
	__atomic_sub_fetch(&r->readers_left, 1, __ATOMIC_RELEASE);
	rec_wake_writer(r);
	return NULL;
}

int rg_start(struct rec *r, uint32_t port)
{
	struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY,
				 .svm_port = port };
	struct rec_guests *g = calloc(1, sizeof(*g));
	unsigned int with_cid = 0;
	sigset_t all, old;

	if (!g || !(g->vm = calloc(r->o->nvms + 1, sizeof(*g->vm)))) {
		free(g);
		fprintf(stderr, "vmscope record: out of memory\n");
		return -1;
	}
	pthread_mutex_init(&g->mu, NULL);
	g->lfd = -1;
	r->g = g;
	for (unsigned int i = 0; i < r->o->nvms; i++) {
		g->vm[i].r = r;
		g->vm[i].idx = i;
		g->vm[i].cid = r->o->vms[i].cid;
		g->vm[i].fd = -1;
		with_cid += g->vm[i].cid != 0;
	}
	if (!with_cid)		/* no VM whose agent could connect */
		return 0;
	if (r->o->guest_handoff_fd >= 0) {
		g->lfd = r->o->guest_handoff_fd;
		g->handoff = true;
	} else {
		g->lfd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (g->lfd < 0 || bind(g->lfd, (struct sockaddr *)&a, sizeof(a)) ||
		    listen(g->lfd, 8)) {
			fprintf(stderr, "vmscope record: listening on vsock port %u: %s\n",
				port, strerror(errno));
			return -1;
		}
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	__atomic_add_fetch(&r->readers_left, 1, __ATOMIC_RELAXED);
	if (pthread_create(&g->lt, NULL, listen_main, r)) {
		__atomic_sub_fetch(&r->readers_left, 1, __ATOMIC_RELAXED);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		fprintf(stderr, "vmscope record: no listener thread\n");
		return -1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	g->has_lt = true;
	if (g->handoff)
		fprintf(stderr, "vmscope record: waiting for guest agents handed over on "
			"fd %d (%u VM%s with a CID)\n", g->lfd, with_cid,
			with_cid == 1 ? "" : "s");
	else
		fprintf(stderr, "vmscope record: waiting for guest agents on vsock port "
			"%u (%u VM%s with a CID)\n", port, with_cid,
			with_cid == 1 ? "" : "s");
	return 0;
}

void rg_stop(struct rec *r)
{
	if (!r->g)
		return;
	if (r->g->has_lt)
		pthread_join(r->g->lt, NULL);
	r->g->has_lt = false;
	if (r->g->lfd >= 0)
		close(r->g->lfd);
	r->g->lfd = -1;
}

Vmscope__Trace__GuestHello *rg_hello(struct rec *r, unsigned int vm)
{
	Vmscope__Trace__GuestHello *h = NULL;

	if (!r->g || vm >= r->o->nvms)
		return NULL;
	pthread_mutex_lock(&r->g->mu);
	if (r->g->vm[vm].hello)
		h = vmscope__trace__guest_hello__unpack(NULL, r->g->vm[vm].hello_len,
							r->g->vm[vm].hello);
	pthread_mutex_unlock(&r->g->mu);
	return h;
}

unsigned int rg_connected(struct rec *r, int vm)
{
	unsigned int n = 0;

	for (unsigned int i = 0; r->g && i < r->o->nvms; i++)
		if ((vm < 0 || (unsigned int)vm == i) &&
		    __atomic_load_n(&r->g->vm[i].live, __ATOMIC_ACQUIRE))
			n++;
	return n;
}

void rg_free(struct rec *r)
{
	if (!r->g)
		return;
	for (unsigned int i = 0; i < r->o->nvms; i++)
		free(r->g->vm[i].hello);
	pthread_mutex_destroy(&r->g->mu);
	free(r->g->vm);
	free(r->g);
	r->g = NULL;
}

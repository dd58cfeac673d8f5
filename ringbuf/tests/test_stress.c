// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Stress test: NPROD producer threads, each the "CPU" of its own buffer,
 * each interrupted by two per-thread timer signals whose handlers write to
 * the same buffer (nesting up to three deep, also between reserve and
 * commit), and one reader thread racing them. Every record carries its
 * stream (producer, nesting level), a per-stream sequence number, its
 * timestamp and a checksum over the whole payload, so the reader detects
 * torn, duplicated, reordered or mis-timestamped records.
 *
 * At the end: per buffer, attempts == read + lost exactly; in discard mode
 * also per stream, successful writes == records read.
 *
 * Bounded by iteration count (ITERS per producer), not by time.
 * Usage: test-ringbuf-stress discard|flight [iters [spin]]
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rb_test_util.h"

#define NPROD		3
#define NLEVEL		3		/* thread, SIGALRM handler, SIGRTMIN handler */
#define NSTREAM		(NPROD * NLEVEL)
#define SB_SHIFT	10		/* 1 KiB sub-buffers: many switches */
#define N_SHIFT		3		/* 8 of them */

struct payload_head {
	uint32_t stream;
	uint32_t len;
	uint64_t seq;
	uint64_t ts;
	uint64_t csum;
};

static struct vmscope_rb_buf *bufs[NPROD];
static unsigned mode;
static unsigned long iters = 60000;
static unsigned spin = 400;

/* written by each producer after it finished, read after join/done flag */
static uint64_t attempts[NSTREAM], written_ok[NSTREAM], dropped[NSTREAM];
static atomic_int producers_done;

/* reader side */
static uint64_t rd_count[NSTREAM];
static uint64_t rd_last_seq[NSTREAM];
static bool rd_seen[NSTREAM];
static uint64_t rd_subbufs, rd_overwrite_gaps;

/* per-thread producer state; each level's counter is only touched by that
 * level (a handler is not re-entered while it runs) */
static __thread unsigned my_id;
static __thread uint64_t my_seq[NLEVEL], my_ok[NLEVEL], my_drop[NLEVEL];
static __thread volatile sig_atomic_t my_active;
static __thread volatile uint64_t spin_sink;
static __thread timer_t my_t1, my_t2;
static __thread volatile sig_atomic_t my_open;	/* reservations open now */
static __thread uint64_t my_inside;	/* signals that found one open */
static uint64_t inside[NPROD];

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint8_t filler(uint32_t stream, uint64_t seq, uint32_t i)
{
	return (uint8_t)(mix(((uint64_t)stream << 48) ^ (seq << 8) ^ i));
}

static uint64_t checksum(const uint8_t *p, uint32_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	uint32_t i;

	/* skip the csum field itself */
	for (i = 0; i < len; i++)
		if (i < offsetof(struct payload_head, csum) ||
		    i >= offsetof(struct payload_head, csum) + 8)
			h = mix(h ^ p[i]) + i;
	return h;
}

/* One record of stream (my_id, level): reserve, fill slowly, commit. */
static void emit(unsigned level)
{
	uint32_t stream = my_id * NLEVEL + level;
	uint64_t seq = my_seq[level]++;
	uint32_t len = sizeof(struct payload_head) + (uint32_t)(mix(seq ^ stream) % 97);
	struct vmscope_rb_ctx ctx;
	struct payload_head h;
	uint8_t *p;
	uint32_t i;
	int rc;

	rc = vmscope_rb_reserve(bufs[my_id], &ctx, 1 + level, len);
	if (rc) {
		if (rc == -ENOSPC)
			my_drop[level]++;
		else
			abort();
		return;
	}
	my_open++;
	p = ctx.payload;
	h.stream = stream;
	h.len = len;
	h.seq = seq;
	h.ts = ctx.ts;
	h.csum = 0;
	memcpy(p, &h, sizeof(h));
	/* byte by byte on purpose: a wide window for signals to land in */
	for (i = sizeof(h); i < len; i++)
		p[i] = filler(stream, seq, i);
	h.csum = checksum(p, len);
	memcpy(p + offsetof(struct payload_head, csum), &h.csum, 8);
	vmscope_rb_commit(&ctx);
	my_open--;
	my_ok[level]++;
}

static void arm(timer_t t, long ns);

static void on_signal(int sig)
{
	int saved = errno;
	unsigned level = sig == SIGALRM ? 1 : 2;

	if (my_active) {
		if (my_open)
			my_inside++;
		/* the second signal often lands inside this handler */
		if (level == 1 && my_seq[1] % 2 == 0)
			arm(my_t2, 1000 + (long)(mix(my_seq[1]) % 3000));
		emit(level);
		if (my_seq[level] % 3 == 0)
			emit(level);	/* sometimes two in a row */
	}
	errno = saved;
}

static timer_t make_timer(int sig)
{
	struct sigevent sev;
	timer_t t;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = sig;
	sev._sigev_un._tid = gettid();	/* SIGEV_THREAD_ID target */
	if (timer_create(CLOCK_MONOTONIC, &sev, &t)) {
		perror("timer_create");
		exit(2);
	}
	return t;
}

/* One-shot in ns: signals are armed by iteration count, so their number
 * is bounded by the work done (no signal storm in slow sanitizer builds)
 * while the short random delay lands them anywhere, including between a
 * reserve and its commit. timer_settime is async-signal-safe. */
static void arm(timer_t t, long ns)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = ns;
	timer_settime(t, 0, &its, NULL);
}

static void *producer(void *arg)
{
	sigset_t set;
	unsigned long i;
	unsigned l;

	my_id = (unsigned)(uintptr_t)arg;
	vmscope_rb_user_cpu = my_id;
	my_active = 1;
	my_t1 = make_timer(SIGALRM);
	my_t2 = make_timer(SIGRTMIN);
	for (i = 0; i < iters; i++) {
		unsigned k;

		if (i % 8 == 0)
			arm(my_t1, 1000 + (long)(mix(i + my_id) % 20000));
		if (i % 16 == 4)
			arm(my_t2, 1000 + (long)(mix(i ^ my_id) % 20000));
		emit(0);
		/* other work between events, so the reader keeps up part of
		 * the time and signals land in and out of reservations */
		for (k = 0; k < spin; k++)
			spin_sink = mix(spin_sink + k);
	}
	/* no handler may write after the final flush */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigaddset(&set, SIGRTMIN);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	timer_delete(my_t1);
	timer_delete(my_t2);
	my_active = 0;
	vmscope_rb_flush(bufs[my_id]);
	for (l = 0; l < NLEVEL; l++) {
		attempts[my_id * NLEVEL + l] = my_seq[l];
		written_ok[my_id * NLEVEL + l] = my_ok[l];
		dropped[my_id * NLEVEL + l] = my_drop[l];
	}
	inside[my_id] = my_inside;
	atomic_fetch_add_explicit(&producers_done, 1, memory_order_release);
	return NULL;
}

static void check_record(const struct vmscope_rb_rec *r)
{
	struct payload_head h;

	if (r->size < sizeof(h)) {
		CHECK(!"short record");
		return;
	}
	memcpy(&h, r->payload, sizeof(h));
	if (h.stream >= NSTREAM || h.len != r->size) {
		CHECK(!"bad stream or length");
		return;
	}
	CHECK_EQ(r->id, 1 + h.stream % NLEVEL);
	CHECK_EQ(h.ts, r->ts);
	CHECK_EQ(h.csum, checksum(r->payload, r->size));
	if (rd_seen[h.stream] && h.seq <= rd_last_seq[h.stream]) {
		fprintf(stderr, "stream %u: seq %llu after %llu (duplicate or reordered)\n",
			h.stream, (unsigned long long)h.seq,
			(unsigned long long)rd_last_seq[h.stream]);
		check_failures++;
	}
	rd_seen[h.stream] = true;
	rd_last_seq[h.stream] = h.seq;
	rd_count[h.stream]++;
}

/* Decode and verify one sub-buffer; returns records. */
static unsigned check_subbuf(const void *sb, uint32_t size)
{
	struct vmscope_rb_iter it;
	struct vmscope_rb_rec r;
	uint64_t prev = 0;
	unsigned n = 0;
	int rc;

	rc = vmscope_rb_iter_init(&it, sb, size);
	CHECK_EQ(rc, 0);
	if (rc)
		return 0;
	while ((rc = vmscope_rb_iter_next(&it, &r)) == 1) {
		CHECK(r.ts >= prev);
		prev = r.ts;
		check_record(&r);
		n++;
	}
	CHECK_EQ(rc, 0);
	return n;
}

static void *reader(void *arg)
{
	uint64_t next_seq[NPROD] = {0}, last_lost[NPROD] = {0};
	bool final = false;

	(void)arg;
	for (;;) {
		bool got_any = false;
		unsigned c;

		if (!final && atomic_load_explicit(&producers_done,
						   memory_order_acquire) == NPROD)
			final = true;	/* one more full pass drains all */
		for (c = 0; c < NPROD; c++) {
			struct vmscope_rb_subbuf_ref ref;
			const struct vmscope_rb_subbuf_hdr *h;

			if (vmscope_rb_get_subbuf(bufs[c], &ref))
				continue;
			got_any = true;
			h = ref.ptr;
			if (mode == VMSCOPE_RB_MODE_DISCARD)
				CHECK_EQ(h->seq, next_seq[c]);	/* never a gap */
			else if (h->seq != next_seq[c])
				rd_overwrite_gaps += h->seq - next_seq[c];
			CHECK(h->seq >= next_seq[c]);
			CHECK(h->lost_before >= last_lost[c]);
			next_seq[c] = h->seq + 1;
			last_lost[c] = h->lost_before;
			check_subbuf(ref.ptr, ref.size);
			if (mode == VMSCOPE_RB_MODE_FLIGHT && (rd_subbufs & 7) == 0) {
				/* hold it while writers lap the buffer, then
				 * check that it is still intact */
				sched_yield();
				CHECK_EQ(h->seq, next_seq[c] - 1);
				{
					struct vmscope_rb_iter it;
					struct vmscope_rb_rec r;
					uint64_t sum = 0;

					CHECK_EQ(vmscope_rb_iter_init(&it, ref.ptr, ref.size), 0);
					while (vmscope_rb_iter_next(&it, &r) == 1) {
						struct payload_head ph;

						memcpy(&ph, r.payload, sizeof(ph));
						CHECK_EQ(ph.csum, checksum(r.payload, r.size));
						sum++;
					}
					(void)sum;
				}
			}
			vmscope_rb_put_subbuf(bufs[c]);
			rd_subbufs++;
			/* a slow reader now and then, so buffers fill up */
			if ((rd_subbufs & 63) == 0)
				usleep(200);
		}
		if (final && !got_any)
			break;
		if (!got_any)
			sched_yield();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t prod[NPROD], rd;
	struct sigaction sa;
	uint64_t total_att = 0, total_rd = 0, total_lost = 0;
	unsigned p, l;

	if (argc < 2 || (strcmp(argv[1], "discard") && strcmp(argv[1], "flight"))) {
		fprintf(stderr, "usage: %s discard|flight [iters]\n", argv[0]);
		return 2;
	}
	mode = strcmp(argv[1], "flight") ? VMSCOPE_RB_MODE_DISCARD : VMSCOPE_RB_MODE_FLIGHT;
	if (argc > 2)
		iters = strtoul(argv[2], NULL, 0);
	if (argc > 3)
		spin = (unsigned)strtoul(argv[3], NULL, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGRTMIN, &sa, NULL);

	for (p = 0; p < NPROD; p++)
		bufs[p] = rb_test_new(SB_SHIFT, N_SHIFT, mode, p);
	pthread_create(&rd, NULL, reader, NULL);
	for (p = 0; p < NPROD; p++)
		pthread_create(&prod[p], NULL, producer, (void *)(uintptr_t)p);
	for (p = 0; p < NPROD; p++)
		pthread_join(prod[p], NULL);
	pthread_join(rd, NULL);

	for (p = 0; p < NPROD; p++) {
		uint64_t att = 0, rdn = 0, ok = 0, drop = 0, lost;

		for (l = 0; l < NLEVEL; l++) {
			unsigned s = p * NLEVEL + l;

			att += attempts[s];
			ok += written_ok[s];
			drop += dropped[s];
			rdn += rd_count[s];
			CHECK_EQ(attempts[s], written_ok[s] + dropped[s]);
			if (mode == VMSCOPE_RB_MODE_DISCARD)
				CHECK_EQ(rd_count[s], written_ok[s]);
		}
		lost = vmscope_rb_lost(bufs[p]);
		CHECK_EQ(att, rdn + lost);
		CHECK_EQ(drop, bufs[p]->ctrl->lost_full);
		CHECK_EQ(ok, rdn + bufs[p]->ctrl->lost_overwritten);
		printf("cpu %u: attempts %llu (nested %llu + %llu, %llu signals inside a reservation) read %llu dropped %llu overwritten %llu (%llu sub-buffers)\n",
		       p, (unsigned long long)att,
		       (unsigned long long)attempts[p * NLEVEL + 1],
		       (unsigned long long)attempts[p * NLEVEL + 2],
		       (unsigned long long)inside[p],
		       (unsigned long long)rdn,
		       (unsigned long long)bufs[p]->ctrl->lost_full,
		       (unsigned long long)bufs[p]->ctrl->lost_overwritten,
		       (unsigned long long)bufs[p]->ctrl->subbufs_overwritten);
		total_att += att;
		total_rd += rdn;
		total_lost += lost;
		CHECK(attempts[p * NLEVEL + 1] > 0);	/* nesting did happen */
	}
	printf("%s: attempts %llu = read %llu + lost %llu; sub-buffers read %llu, overwrite gaps %llu\n",
	       argv[1], (unsigned long long)total_att, (unsigned long long)total_rd,
	       (unsigned long long)total_lost, (unsigned long long)rd_subbufs,
	       (unsigned long long)rd_overwrite_gaps);
	/* the point of the exercise: handlers did interrupt open reservations */
	CHECK(inside[0] + inside[1] + inside[2] > 0);
	for (p = 0; p < NPROD; p++)
		rb_test_free(bufs[p]);
	return check_result("ringbuf-stress");
}

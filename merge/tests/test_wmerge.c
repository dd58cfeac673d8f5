// SPDX-License-Identifier: GPL-2.0
/*
 * The online merge's ordering stage (wmerge.h):
 *
 * - random streams pushed in a random interleaving through queues of 8:
 *   the output is exactly the (key, stream) merge, no record late;
 * - against the two-pass merge: a synthetic trace (tests/synth.c, 2 VMs,
 *   a guest clock step, forgeries) merged by mg_sync + mg_merge; each
 *   input stream's records, keyed by the host time the merged trace gave
 *   them, pushed in a random interleaving through queues of 16: released
 *   in exactly the merged trace's order (stream and original timestamp of
 *   every record);
 * - a stalled stream: forced (full queue) and by lag, declared late, its
 *   records below what was released refused and counted, never reordered;
 *   the rest stays in order; no queue ever holds more than its capacity.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tracefmt/tests/util.h"
#include "merge.h"
#include "out.h"
#include "synth.h"
#include "wmerge.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A record of the tests: where it came from and its place in the
 * expected output. */
struct rec {
	size_t stream, pos;
	uint64_t key;
};

/* One input stream: its keys and expected output positions, in order. */
struct in {
	uint64_t *key;
	size_t *pos;
	size_t n, next;
};

/*
 * Push the streams through @m in a random interleaving, releasing what
 * can be released after each push, advancing a stream's watermark to its
 * next key now and then (a source that knows it). The k-th record out
 * must be the one at position k. Returns the records released.
 */
static size_t drive(struct wm *m, struct in *in, size_t n)
{
	size_t out = 0, live = n;
	bool *ended = calloc(n, sizeof(*ended));

	CHECK(ended != NULL);
	if (!ended)
		return 0;
	for (;;) {
		struct rec r;
		size_t i;
		uint64_t key;
		enum wm_pop p;

		while ((p = wm_pop(m, false, &r, &i, &key)) == WM_ITEM) {
			CHECK_EQ(r.pos, out);
			CHECK_EQ(r.stream, i);
			CHECK_EQ(key, r.key);
			out++;
		}
		if (p == WM_DONE)
			break;
		CHECK(live > 0);
		if (!live)
			break;
		/* a random stream that can take a record */
		size_t pick = n, k0 = next_rand() % n;

		for (size_t k = 0; k < n; k++) {
			size_t j = (k0 + k) % n;

			if (!ended[j] && !wm_full(m, j)) {
				pick = j;
				break;
			}
		}
		/* every live queue full: the least head is releasable */
		CHECK(pick < n);
		if (pick == n)
			break;
		struct in *s = &in[pick];

		if (s->next == s->n) {
			wm_end(m, pick);
			ended[pick] = true;
			live--;
			continue;
		}
		r.stream = pick;
		r.pos = s->pos[s->next];
		r.key = s->key[s->next];
		CHECK_EQ(wm_push(m, pick, s->key[s->next], &r), 0);
		s->next++;
		if (s->next < s->n && next_rand() % 4 == 0)
			wm_advance(m, pick, s->key[s->next]);
	}
	for (size_t k = 0; k < n; k++)
		CHECK(m->s[k].n == 0);
	free(ended);
	return out;
}

/* Random sorted streams with ties, against a stable (key, stream) sort. */
static void run_random(unsigned int round)
{
	enum { N = 5 };
	struct in in[N];
	size_t total = 0, done;
	struct wm m;

	for (size_t i = 0; i < N; i++) {
		uint64_t k = next_rand() % 100;

		in[i].n = (round + i) % 3 == 0 ? 0 : next_rand() % 500;
		in[i].next = 0;
		in[i].key = malloc((in[i].n + 1) * sizeof(uint64_t));
		in[i].pos = malloc((in[i].n + 1) * sizeof(size_t));
		for (size_t j = 0; j < in[i].n; j++) {
			k += next_rand() % 40;	/* steps of 0: ties in a stream */
			in[i].key[j] = k;
		}
		total += in[i].n;
	}
	/* expected positions: a k-way merge by (key, stream), by hand */
	size_t at[N] = { 0 };

	for (size_t p = 0; p < total; p++) {
		size_t best = N;

		for (size_t i = 0; i < N; i++)
			if (at[i] < in[i].n &&
			    (best == N || in[i].key[at[i]] < in[best].key[at[best]]))
				best = i;
		in[best].pos[at[best]++] = p;
	}
	CHECK_EQ(wm_init(&m, N, 8, sizeof(struct rec), 0), 0);
	done = drive(&m, in, N);
	CHECK_EQ(done, total);
	CHECK_EQ(m.st.late, 0);
	CHECK_EQ(m.st.stalls, 0);
	CHECK_EQ(m.st.clamped, 0);
	CHECK(m.st.peak <= 8);
	wm_free(&m);
	for (size_t i = 0; i < N; i++) {
		free(in[i].key);
		free(in[i].pos);
	}
}

/* The trace's stream of (side, vm, cpu), or SIZE_MAX. */
struct origin_of {
	bool guest;
	uint32_t vm, cpu;
};

static void run_two_pass(const char *dir, uint64_t seed)
{
	char in_path[512], out_path[512], err[256];
	struct mg_opts o = { 0 };
	struct mg_result r;
	struct vr_trace *t;
	struct synth s;
	struct mr *mr;
	struct vr_item it;
	struct mo_origin org;
	bool has;
	size_t n, total = 0, cap = 1 << 16;
	struct origin_of *og;
	struct in *in;
	struct wm m;
	struct { size_t stream; uint64_t key; } *seq = malloc(cap * sizeof(*seq));

	synth_defaults(&s, seed);
	snprintf(in_path, sizeof(in_path), "%s/t%llu", dir, (unsigned long long)seed);
	snprintf(out_path, sizeof(out_path), "%s/t%llu.merged", dir, (unsigned long long)seed);
	CHECK_EQ(synth_write_sync(&s, in_path, &o, &t, &r, err, sizeof(err)), 0);
	if (!t || !seq)
		return;
	CHECK_EQ(mg_merge(t, out_path, &r, err, sizeof(err)), 0);
	/* the merged times never went back, so they are the heap's keys */
	CHECK_EQ(r.n.clamped, 0);
	mg_result_free(&r);

	/* each input stream's origin, from its first item */
	n = vr_trace_nr_streams(t);
	og = calloc(n, sizeof(*og));
	in = calloc(n, sizeof(*in));
	for (size_t i = 0; i < n; i++) {
		struct vr_stream *vs;
		const struct vr_stream_stats *st;

		CHECK_EQ(vr_stream_open(&vs, t, i), 0);
		CHECK_EQ(vr_stream_next(vs, &it), 1);
		st = vr_stream_stats(vs);
		og[i].guest = st->origin.side == VMSCOPE__TRACE__SIDE__SIDE_GUEST;
		og[i].vm = st->origin.vm;
		og[i].cpu = st->origin.cpu;
		vr_stream_close(vs);
		for (size_t j = 0; j < i; j++)	/* one stream per origin */
			CHECK(og[j].guest != og[i].guest || og[j].vm != og[i].vm ||
			      og[j].cpu != og[i].cpu);
	}
	/* the merged order, each record by its input stream */
	CHECK_EQ(mr_open(&mr, out_path, 0, err, sizeof(err)), 0);
	while (mr && mr_next(mr, &it, &org, &has) == 1) {
		size_t i;

		CHECK(it.kind == VR_EVENT && has);
		if (it.kind != VR_EVENT || !has)
			continue;
		for (i = 0; i < n; i++)
			if (og[i].guest == (org.origin != 0) && og[i].cpu == org.cpu &&
			    (!og[i].guest || og[i].vm == org.origin - 1))
				break;
		CHECK(i < n);
		if (i == n)
			continue;
		if (total == cap) {
			cap *= 2;
			seq = realloc(seq, cap * sizeof(*seq));
			if (!seq)
				abort();
		}
		seq[total].stream = i;
		seq[total++].key = it.ts;
		in[i].n++;
	}
	mr_close(mr);
	CHECK(total > 50000);
	for (size_t i = 0; i < n; i++) {
		in[i].key = malloc((in[i].n + 1) * sizeof(uint64_t));
		in[i].pos = malloc((in[i].n + 1) * sizeof(size_t));
		in[i].n = 0;
	}
	for (size_t p = 0; p < total; p++) {
		struct in *x = &in[seq[p].stream];

		x->key[x->n] = seq[p].key;
		x->pos[x->n++] = p;
	}
	CHECK_EQ(wm_init(&m, n, 16, sizeof(struct rec), 0), 0);
	CHECK_EQ(drive(&m, in, n), total);
	CHECK_EQ(m.st.late + m.st.stalls + m.st.clamped, 0);
	CHECK(m.st.peak <= 16);
	printf("two-pass seed %llu: %zu records from %zu streams in the merged trace's order\n",
	       (unsigned long long)seed, total, n);
	wm_free(&m);
	for (size_t i = 0; i < n; i++) {
		free(in[i].key);
		free(in[i].pos);
	}
	free(in);
	free(og);
	free(seq);
	vr_trace_close(t);
}

/* Pop everything releasable; the keys must not go back. */
static size_t drain(struct wm *m, bool force, uint64_t *last, size_t *from)
{
	struct rec r;
	size_t i, got = 0;
	uint64_t key;

	while (wm_pop(m, force, &r, &i, &key) == WM_ITEM) {
		CHECK(key >= *last);
		*last = key;
		if (from)
			from[got] = i;
		got++;
	}
	return got;
}

static void run_stall(void)
{
	struct rec r = { 0 };
	uint64_t last = 0, key;
	size_t from[16], i;
	struct wm m;

	/* forced: stream 2 stops at 10 while 0 and 1 fill their queues */
	CHECK_EQ(wm_init(&m, 3, 4, sizeof(r), 0), 0);
	CHECK_EQ(wm_push(&m, 2, 10, &r), 0);
	for (uint64_t k = 20; k < 24; k++) {
		CHECK_EQ(wm_push(&m, 0, k, &r), 0);
		CHECK_EQ(wm_push(&m, 1, k, &r), 0);
	}
	CHECK_EQ(wm_push(&m, 0, 24, &r), -ENOSPC);
	CHECK_EQ(drain(&m, false, &last, from), 1);	/* 10, then wait for 2 */
	CHECK_EQ(from[0], 2);
	CHECK_EQ(wm_pop(&m, false, &r, &i, &key), WM_WAIT);
	CHECK_EQ(m.st.stalls, 0);
	CHECK_EQ(wm_pop(&m, true, &r, &i, &key), WM_ITEM);	/* 2 declared late */
	CHECK_EQ(m.st.stalls, 1);
	CHECK(i == 0 && key == 20);
	last = key;
	/* no longer waited for; 1's 23 waits for 0, which may still push 23 */
	CHECK_EQ(drain(&m, false, &last, from), 6);
	CHECK(from[0] == 1 && from[1] == 0 && from[2] == 1);	/* (key, stream) */
	CHECK_EQ(wm_push(&m, 2, 15, &r), WM_LATE);	/* below 23: refused */
	CHECK_EQ(m.st.late, 1);
	CHECK_EQ(wm_push(&m, 2, 30, &r), 0);		/* caught up: waited for again */
	CHECK_EQ(wm_push(&m, 0, 25, &r), 0);
	CHECK_EQ(wm_push(&m, 1, 40, &r), 0);
	/* 23, 25; 2's 30 waits for 0, which may still push 25..30 */
	CHECK_EQ(drain(&m, false, &last, from), 2);
	CHECK(from[0] == 1 && from[1] == 0);
	wm_end(&m, 0);
	wm_end(&m, 2);
	CHECK_EQ(drain(&m, false, &last, from), 2);	/* 30, 40 */
	CHECK(from[0] == 2 && from[1] == 1);
	wm_end(&m, 1);
	CHECK_EQ(wm_pop(&m, false, &r, &i, &key), WM_DONE);
	CHECK(m.st.peak <= 4);
	CHECK_EQ(m.st.released, 12);
	CHECK_EQ(m.st.pushed, 12);
	wm_free(&m);

	/* by lag: stream 1 stops at 5 while 0 goes on */
	last = 0;
	CHECK_EQ(wm_init(&m, 2, 1000, sizeof(r), 100), 0);
	CHECK_EQ(wm_push(&m, 1, 5, &r), 0);
	for (uint64_t k = 6; k <= 105; k++)
		CHECK_EQ(wm_push(&m, 0, k, &r), 0);
	CHECK_EQ(drain(&m, false, &last, NULL), 1);	/* 100 behind: not yet */
	CHECK_EQ(m.st.stalls, 0);
	CHECK_EQ(wm_push(&m, 0, 106, &r), 0);		/* 101 behind: late */
	CHECK_EQ(drain(&m, false, &last, NULL), 101);
	CHECK_EQ(m.st.stalls, 1);
	CHECK_EQ(wm_push(&m, 1, 7, &r), WM_LATE);
	CHECK_EQ(m.st.late, 1);
	wm_free(&m);

	/* a key that goes back within its stream waits at the previous one */
	last = 0;
	CHECK_EQ(wm_init(&m, 1, 4, sizeof(r), 0), 0);
	CHECK_EQ(wm_push(&m, 0, 10, &r), 0);
	CHECK_EQ(wm_push(&m, 0, 5, &r), 0);
	CHECK_EQ(m.st.clamped, 1);
	wm_end(&m, 0);
	CHECK_EQ(drain(&m, false, &last, NULL), 2);
	CHECK_EQ(last, 10);
	wm_free(&m);
}

int main(void)
{
	char dir[256];

	for (unsigned int round = 0; round < 200; round++)
		run_random(round);
	run_stall();
	CHECK_EQ(tf_test_mkdir(dir, sizeof(dir)) >= 0, 1);
	run_two_pass(dir, 1);
	run_two_pass(dir, 3);
	tf_test_rmdir(dir);
	return check_result("merge-wmerge");
}

// SPDX-License-Identifier: GPL-2.0
/*
 * vmscoped's /metrics (daemon-metrics): the snapshot frame's encoder and
 * parser (round trip, the guest's figures present, absent and present at
 * 0, every refusal: another version by name at any length), the store's bound and removal, the
 * exact text of a rendered store, and the HTTP server of libmicrohttpd on
 * loopback answering a plain socket client (HTTP/1.1 answers, also to
 * HTTP/1.0 requests, as RFC 9110 allows).
 *
 *   test_metrics            the checks
 *   test_metrics --dump F   the sample store rendered into F (for promtool)
 *   test_metrics --frame F  domain "web"'s sample snapshot as a frame into F
 *                           (daemon-metrics-test.sh's fake recorder sends it)
 *   test_metrics --trigger F  a stall trigger's frame into F (the same
 *                           recorder sends it twice after the snapshot)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../tests/lib/check.h"
#include "metrics_frame.h"
#include "metrics_http.h"
#include "metrics_render.h"
#include "metrics_store.h"
#include "trigger_frame.h"
#include "util_endian.h"

/* Domain "web", three exits of reason EPT_VIOLATION (3 ns, 5 ns and one
 * over 4.3 s) and two of a name to escape; its guest's steal and stalls
 * (one class 0: present, as 0); no bound. */
static void sample_web(struct ol_msnap *s)
{
	memset(s, 0, sizeof(*s));
	s->seq = 7;
	s->end_ns = 123456789;
	s->guest_ns = 2500000000ull;
	s->kernel_ns = 1500;
	s->user_ns = 20;
	s->halted_ns = 1000000000;
	s->preempted_ns = 0;
	s->events_lost = 4;
	s->n_reasons = 2;
	strcpy(s->r[0].name, "EPT_VIOLATION");
	s->r[0].count = 3;
	s->r[0].sum_ns = 3 + 5 + 5000000000ull;
	s->r[0].bucket[0] = 1;
	s->r[0].bucket[1] = 1;
	strcpy(s->r[1].name, "a\"b\\c");
	s->r[1].count = 2;
	s->r[1].sum_ns = 2 * 4294967295ull;
	s->r[1].bucket[15] = 2;
	s->has_steal = true;
	s->steal_ns = 12000000;
	s->has_stall = true;
	s->stall_ns[0][0] = 3000000000ull;
	s->stall_ns[0][1] = 250;
	s->stall_ns[1][0] = 1;
	s->stall_ns[1][1] = 0;
}

/* Domain "db": no exit yet, a bound of 1.5 us; no agent: no steal, no
 * stalls. */
static void sample_db(struct ol_msnap *s)
{
	memset(s, 0, sizeof(*s));
	s->has_bound = true;
	s->bound_ns = 1500;
}

static void sample_store(struct mstore *st)
{
	struct ol_msnap s;

	ms_init(st);
	sample_web(&s);
	CHECK(!ms_put(st, 20, "web", "6f1c2a3e-0000-4000-8000-000000000001", &s));
	sample_db(&s);
	CHECK(!ms_put(st, 10, "db", "", &s));
	/* web: two exit triggers and a stall trigger; one suppressed */
	CHECK(!ms_trigger(st, 20, OL_TG_EXIT));
	CHECK(!ms_trigger(st, 20, OL_TG_STALL));
	CHECK(!ms_trigger(st, 20, OL_TG_EXIT));
	ms_trigger_suppressed(st);
	/* web: two snapshot windows written */
	CHECK(!ms_snapshot(st, 20));
	CHECK(!ms_snapshot(st, 20));
	/* a domain without an entry: not counted */
	CHECK_EQ(ms_trigger(st, 99, OL_TG_EXIT), -ENOENT);
	CHECK_EQ(ms_snapshot(st, 99), -ENOENT);
}

static char *rendered(struct mstore *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f && !ms_render(st, f));
	fclose(f);
	return buf;
}

#define WEB "domain=\"web\",uuid=\"6f1c2a3e-0000-4000-8000-000000000001\""
#define DB "domain=\"db\",uuid=\"\""
#define EPT WEB ",reason=\"EPT_VIOLATION\""
#define ESC WEB ",reason=\"a\\\"b\\\\c\""

static const char expected[] =
	"# HELP vmscope_exits_total VM exits completed (kvm_exit .. the vCPU's next kvm_entry), "
	"by exit reason.\n"
	"# TYPE vmscope_exits_total counter\n"
	"vmscope_exits_total{" EPT "} 3\n"
	"vmscope_exits_total{" ESC "} 2\n"
	"# HELP vmscope_exit_latency_seconds VM exit latency (kvm_exit .. kvm_entry) by exit "
	"reason; buckets 4^k-1 ns.\n"
	"# TYPE vmscope_exit_latency_seconds histogram\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"0.000000003\"} 1\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"0.000000015\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"0.000000063\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"0.000000255\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"0.000001023\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"0.000004095\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"0.000016383\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"0.000065535\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"0.000262143\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"0.001048575\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"0.004194303\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"0.016777215\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"0.067108863\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"0.268435455\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"1.073741823\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"4.294967295\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" EPT ",le=\"+Inf\"} 3\n"
	"vmscope_exit_latency_seconds_sum{" EPT "} 5.000000008\n"
	"vmscope_exit_latency_seconds_count{" EPT "} 3\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"0.000000003\"} 0\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"0.000000015\"} 0\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"0.000000063\"} 0\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"0.000000255\"} 0\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"0.000001023\"} 0\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"0.000004095\"} 0\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"0.000016383\"} 0\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"0.000065535\"} 0\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"0.000262143\"} 0\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"0.001048575\"} 0\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"0.004194303\"} 0\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"0.016777215\"} 0\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"0.067108863\"} 0\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"0.268435455\"} 0\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"1.073741823\"} 0\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"4.294967295\"} 2\n"
	"vmscope_exit_latency_seconds_bucket{" ESC ",le=\"+Inf\"} 2\n"
	"vmscope_exit_latency_seconds_sum{" ESC "} 8.58993459\n"
	"vmscope_exit_latency_seconds_count{" ESC "} 2\n"
	"# HELP vmscope_vcpu_seconds_total vCPU time summed over the domain's vCPUs: in the "
	"guest, in exits handled in the host kernel, in userspace exits, halted.\n"
	"# TYPE vmscope_vcpu_seconds_total counter\n"
	"vmscope_vcpu_seconds_total{" DB ",state=\"guest\"} 0\n"
	"vmscope_vcpu_seconds_total{" WEB ",state=\"guest\"} 2.5\n"
	"vmscope_vcpu_seconds_total{" DB ",state=\"exit_kernel\"} 0\n"
	"vmscope_vcpu_seconds_total{" WEB ",state=\"exit_kernel\"} 0.0000015\n"
	"vmscope_vcpu_seconds_total{" DB ",state=\"exit_user\"} 0\n"
	"vmscope_vcpu_seconds_total{" WEB ",state=\"exit_user\"} 0.00000002\n"
	"vmscope_vcpu_seconds_total{" DB ",state=\"halted\"} 0\n"
	"vmscope_vcpu_seconds_total{" WEB ",state=\"halted\"} 1\n"
	"# HELP vmscope_vcpu_preempted_seconds_total Time the domain's vCPU threads were "
	"preempted off their host CPU.\n"
	"# TYPE vmscope_vcpu_preempted_seconds_total counter\n"
	"vmscope_vcpu_preempted_seconds_total{" DB "} 0\n"
	"vmscope_vcpu_preempted_seconds_total{" WEB "} 0\n"
	"# HELP vmscope_guest_steal_seconds_total Steal time the guest kernel accounted, summed "
	"over the domain's vCPUs between their clock-sync readings; absent without two "
	"readings.\n"
	"# TYPE vmscope_guest_steal_seconds_total counter\n"
	"vmscope_guest_steal_seconds_total{" WEB "} 0.012\n"
	"# HELP vmscope_guest_stall_seconds_total Time guest threads (not the idle one) were "
	"stalled, their vCPU thread off its host CPU, by their state and its cause; absent "
	"without the guest's agent.\n"
	"# TYPE vmscope_guest_stall_seconds_total counter\n"
	"vmscope_guest_stall_seconds_total{" WEB ",state=\"running\",cause=\"preempted\"} 3\n"
	"vmscope_guest_stall_seconds_total{" WEB ",state=\"running\",cause=\"blocked_in_host\"} "
	"0.00000025\n"
	"vmscope_guest_stall_seconds_total{" WEB ",state=\"runnable\",cause=\"preempted\"} "
	"0.000000001\n"
	"vmscope_guest_stall_seconds_total{" WEB ",state=\"runnable\",cause=\"blocked_in_host\"} "
	"0\n"
	"# HELP vmscope_events_lost_total Events lost: ring buffer losses and records too late "
	"to order.\n"
	"# TYPE vmscope_events_lost_total counter\n"
	"vmscope_events_lost_total{" DB "} 0\n"
	"vmscope_events_lost_total{" WEB "} 4\n"
	"# HELP vmscope_sync_bound_seconds Width of the host-guest clock alignment's bound at "
	"the domain's latest guest record; absent without one.\n"
	"# TYPE vmscope_sync_bound_seconds gauge\n"
	"vmscope_sync_bound_seconds{" DB "} 0.0000015\n"
	"# HELP vmscope_triggers_total Triggers admitted by the rate limit: an exit or a "
	"guest-thread stall over its threshold.\n"
	"# TYPE vmscope_triggers_total counter\n"
	"vmscope_triggers_total{" DB ",kind=\"exit\"} 0\n"
	"vmscope_triggers_total{" DB ",kind=\"stall\"} 0\n"
	"vmscope_triggers_total{" WEB ",kind=\"exit\"} 2\n"
	"vmscope_triggers_total{" WEB ",kind=\"stall\"} 1\n"
	"# HELP vmscope_snapshots_total Snapshot windows written around the admitted "
	"triggers.\n"
	"# TYPE vmscope_snapshots_total counter\n"
	"vmscope_snapshots_total{" DB "} 0\n"
	"vmscope_snapshots_total{" WEB "} 2\n"
	"# HELP vmscoped_metrics_domains Domains whose series are served.\n"
	"# TYPE vmscoped_metrics_domains gauge\n"
	"vmscoped_metrics_domains 2\n"
	"# HELP vmscoped_metrics_refused_snapshots_total Snapshots not served: their domain was "
	"beyond the 64 served.\n"
	"# TYPE vmscoped_metrics_refused_snapshots_total counter\n"
	"vmscoped_metrics_refused_snapshots_total 0\n"
	"# HELP vmscoped_metrics_bad_frames_total Frames from recorders (snapshots, triggers) "
	"that did not parse (that feed was closed).\n"
	"# TYPE vmscoped_metrics_bad_frames_total counter\n"
	"vmscoped_metrics_bad_frames_total 0\n"
	"# HELP vmscoped_triggers_suppressed_total Triggers refused by a domain's rate limit.\n"
	"# TYPE vmscoped_triggers_suppressed_total counter\n"
	"vmscoped_triggers_suppressed_total 1\n";

static void test_render(void)
{
	struct mstore st;
	char *text;

	sample_store(&st);
	text = rendered(&st);
	EXPECT(text && !strcmp(text, expected), "rendered:\n%s", text ? text : "(none)");
	free(text);
	ms_destroy(&st);
}

static void test_store(void)
{
	struct mstore st;
	struct ol_msnap s;
	char name[32];
	char *text;

	ms_init(&st);
	sample_db(&s);
	for (unsigned int i = 0; i < MS_MAX_DOMAINS; i++) {
		snprintf(name, sizeof(name), "d%u", i);
		CHECK_EQ(ms_put(&st, 1000 + i, name, "", &s), 0);
	}
	/* the same session again replaces, one more is refused and counted */
	s.bound_ns = 7;
	CHECK_EQ(ms_put(&st, 1000, "d0", "", &s), 0);
	CHECK_EQ(st.n, MS_MAX_DOMAINS);
	CHECK_EQ(ms_put(&st, 5000, "late", "", &s), -ENOSPC);
	CHECK_EQ(st.refused, 1);
	text = rendered(&st);
	CHECK(text && strstr(text, "vmscope_sync_bound_seconds{domain=\"d0\",uuid=\"\"} "
			     "0.000000007\n"));
	CHECK(text && !strstr(text, "\"late\""));
	snprintf(name, sizeof(name), "vmscoped_metrics_domains %d\n", MS_MAX_DOMAINS);
	CHECK(text && strstr(text, name));
	CHECK(text && strstr(text, "vmscoped_metrics_refused_snapshots_total 1\n"));
	free(text);
	/* a session's series end; an unknown session's removal is nothing */
	ms_remove(&st, 1000);
	ms_remove(&st, 99);
	CHECK_EQ(st.n, MS_MAX_DOMAINS - 1);
	CHECK_EQ(ms_trigger(&st, 1001, OL_TG_STALL), 0);
	CHECK_EQ(ms_put(&st, 1001, "d1", "", &s), 0);
	CHECK_EQ(ms_put(&st, 5000, "late", "", &s), 0);
	ms_bad_frame(&st);
	text = rendered(&st);
	CHECK(text && !strstr(text, "domain=\"d0\""));
	CHECK(text && strstr(text, "domain=\"late\""));
	CHECK(text && strstr(text, "vmscoped_metrics_bad_frames_total 1\n"));
	/* a snapshot keeps the domain's trigger counts; a new entry starts at 0 */
	CHECK(text && strstr(text, "vmscope_triggers_total{domain=\"d1\",uuid=\"\",kind=\"stall\"} "
			     "1\n"));
	CHECK(text && strstr(text, "vmscope_triggers_total{domain=\"late\",uuid=\"\","
			     "kind=\"stall\"} 0\n"));
	free(text);
	/* empty: the families and the daemon's own series only */
	for (unsigned int i = 1; i < MS_MAX_DOMAINS; i++)
		ms_remove(&st, 1000 + i);
	ms_remove(&st, 5000);
	text = rendered(&st);
	CHECK(text && !strstr(text, "domain="));
	CHECK(text && strstr(text, "vmscoped_metrics_domains 0\n"));
	free(text);
	ms_destroy(&st);
}

/*
 * A snapshot @s or else a trigger @t encoded, @v written at @off over
 * @width bytes (0: nothing), its length changed by @cut, parsed: refused
 * with @why in the reason. One damage routine for both frames.
 */
static void damaged(const struct ol_msnap *s, const struct ol_trig *t, size_t off, uint64_t v,
		    int width, long cut, const char *why)
{
	static uint8_t buf[(OL_MX_FRAME_MAX > OL_TG_FRAME_MAX ? OL_MX_FRAME_MAX :
			    OL_TG_FRAME_MAX) + 16];
	struct ol_msnap out_s;
	struct ol_trig out_t;
	char w[160] = "";
	size_t n = s ? ol_msnap_encode(s, buf) : ol_trig_encode(t, buf);
	int bad;

	if (width == 1)
		buf[off] = (uint8_t)v;
	else if (width == 2)
		le_put16(buf + off, (uint16_t)v);
	else if (width == 4)
		le_put32(buf + off, (uint32_t)v);
	else if (width == 8)
		le_put64(buf + off, v);
	n = (size_t)((long)n + cut);
	bad = s ? ol_msnap_parse(buf, n, &out_s, w, sizeof(w)) :
		  ol_trig_parse(buf, n, &out_t, w, sizeof(w));
	EXPECT(bad && strstr(w, why), "expected a refusal with '%s', got '%s'", why, w);
}

static void refused(const struct ol_msnap *s, size_t off, uint64_t v, int width, long cut,
		    const char *why)
{
	damaged(s, NULL, off, v, width, cut, why);
}

static void test_frame(void)
{
	static uint8_t buf[OL_MX_FRAME_MAX];
	struct ol_msnap s, out;
	char why[160];
	size_t n, r0 = OL_MX_HEAD;	/* the first reason's name length */
	size_t r0c = r0 + 1 + strlen("EPT_VIOLATION");	/* its count */

	sample_web(&s);
	n = ol_msnap_encode(&s, buf);
	CHECK_EQ(n, OL_MX_HEAD + 2 * (1 + 18 * 8) + 13 + 5);
	CHECK(!ol_msnap_parse(buf, n, &out, why, sizeof(why)));
	CHECK(!memcmp(&out, &s, sizeof(s)));
	sample_db(&s);
	n = ol_msnap_encode(&s, buf);
	CHECK_EQ(n, OL_MX_HEAD);
	CHECK(!ol_msnap_parse(buf, n, &out, why, sizeof(why)) && out.has_bound &&
	      out.bound_ns == 1500 && !out.has_steal && !out.has_stall);
	CHECK(!memcmp(&out, &s, sizeof(s)));
	/* the guest's figures: present and 0 is not absent */
	s.has_steal = s.has_stall = true;
	n = ol_msnap_encode(&s, buf);
	CHECK(!ol_msnap_parse(buf, n, &out, why, sizeof(why)) && out.has_steal &&
	      out.has_stall && !out.steal_ns && !memcmp(&out, &s, sizeof(s)));
	CHECK_EQ(le_get16(buf + 6), 7);
	/* each field in its place: the stall classes [state][cause] in order */
	sample_web(&s);
	n = ol_msnap_encode(&s, buf);
	CHECK_EQ(le_get64(buf + 12 + 9 * 8), 12000000);
	CHECK_EQ(le_get64(buf + 12 + 10 * 8), 3000000000ull);
	CHECK_EQ(le_get64(buf + 12 + 11 * 8), 250);
	CHECK_EQ(le_get64(buf + 12 + 12 * 8), 1);
	CHECK_EQ(le_get64(buf + 12 + 13 * 8), 0);
	/* a full frame: 31 reasons of 47-byte names */
	memset(&s, 0, sizeof(s));
	s.n_reasons = OL_MX_REASONS;
	for (int i = 0; i < OL_MX_REASONS; i++)
		snprintf(s.r[i].name, OL_MX_NAME, "%02d%045d", i, 0);
	n = ol_msnap_encode(&s, buf);
	CHECK_EQ(n, OL_MX_FRAME_MAX);
	CHECK(!ol_msnap_parse(buf, n, &out, why, sizeof(why)) && !memcmp(&out, &s, sizeof(s)));

	sample_web(&s);
	refused(&s, 0, 0, 0, -(long)ol_msnap_encode(&s, buf) + OL_MX_HEAD - 1, "at least");
	refused(&s, 0, 0x4d534d57, 4, 0, "magic");
	/* another build's frames: named by their version, whatever their length */
	refused(&s, 4, 1, 2, 0, "frame version 1 (this daemon reads 2");
	refused(&s, 4, 1, 2, -(long)ol_msnap_encode(&s, buf) + 12 + 9 * 8,
		"frame version 1 (this daemon reads 2");
	refused(&s, 4, 3, 2, 0, "frame version 3 (this daemon reads 2");
	refused(&s, 4, 1, 2, -(long)ol_msnap_encode(&s, buf) + 6, "frame version 1");
	refused(&s, 0, 0, 0, -(long)ol_msnap_encode(&s, buf) + 5, "at least");
	refused(&s, 6, 8, 2, 0, "flags");
	refused(&s, 6, 0x8007, 2, 0, "flags");
	refused(&s, 8, 32, 4, 0, "32 reasons");
	refused(&s, 8, 3, 4, 0, "cut short");
	refused(&s, 8, 1, 4, 0, "after the last reason");
	refused(&s, 12 + 8 * 8, 5, 8, 0, "bound without");
	refused(&s, 6, 4, 2, 0, "steal time without");		/* web's steal, no flag */
	refused(&s, 6, 2, 2, 0, "stall time without");		/* web's stalls, no flag */
	sample_db(&s);
	for (int k = 0; k < 4; k++)
		refused(&s, 12 + (10 + k) * 8, 1, 8, 0, "stall time without");
	refused(&s, 12 + 9 * 8, 1, 8, 0, "steal time without");
	sample_web(&s);
	refused(&s, r0, 0, 1, 0, "name of 0 bytes");
	refused(&s, r0, 48, 1, 0, "name of 48 bytes");
	refused(&s, r0 + 1, 0x7f, 1, 0, "byte 0x7f");
	refused(&s, r0 + 1, 0x0a, 1, 0, "byte 0x0a");
	refused(&s, r0c, 1, 8, 0, "more than its count");
	refused(&s, 0, 0, 0, -1, "cut short");
	refused(&s, 0, 0, 0, 1, "after the last reason");
	strcpy(s.r[1].name, s.r[0].name);
	refused(&s, 0, 0, 0, 0, "twice");
	sample_web(&s);
	CHECK(ol_msnap_parse(buf, OL_MX_FRAME_MAX + 1, &out, why, sizeof(why)) &&
	      strstr(why, "at most"));
}

static void trig_refused(const struct ol_trig *t, size_t off, uint64_t v, int width, long cut,
			 const char *why)
{
	damaged(NULL, t, off, v, width, cut, why);
}

static void test_trigger_frame(void)
{
	static uint8_t buf[OL_TG_FRAME_MAX];
	struct ol_trig t = { .kind = OL_TG_STALL, .vcpu = 3, .start_ns = 1234567890123ull,
			     .dur_ns = 50000000, .threshold_ns = 20000000 }, out;
	char w[160] = "", long_text[100];
	size_t n;

	strcpy(t.what, "running, preempted");
	strcpy(t.task, "stress/812");
	strcpy(t.host_task, "hog/4242");
	n = ol_trig_encode(&t, buf);
	CHECK_EQ(n, OL_TG_HEAD + 1 + 18 + 1 + 10 + 1 + 8);
	CHECK(!ol_trig_parse(buf, n, &out, w, sizeof(w)));
	CHECK(out.kind == t.kind && out.vcpu == 3 && out.start_ns == t.start_ns &&
	      out.dur_ns == t.dur_ns && out.threshold_ns == t.threshold_ns);
	CHECK(!strcmp(out.what, t.what) && !strcmp(out.task, t.task) &&
	      !strcmp(out.host_task, t.host_task));
	/* each head field at its offset */
	CHECK_EQ(le_get32(buf), OL_TG_MAGIC);
	CHECK_EQ(le_get16(buf + 4), 1);
	CHECK_EQ(buf[6], OL_TG_STALL);
	CHECK_EQ(le_get32(buf + 8), 3);
	CHECK_EQ(le_get64(buf + 12), t.start_ns);
	CHECK_EQ(le_get64(buf + 20), t.dur_ns);
	CHECK_EQ(le_get64(buf + 28), t.threshold_ns);
	/* empty texts; a text cut to 63 bytes; a byte not printable sent as '?' */
	memset(long_text, 'x', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	t.kind = OL_TG_EXIT;
	t.task[0] = '\0';
	snprintf(t.host_task, sizeof(t.host_task), "%.63s", long_text);
	strcpy(t.what, "a\tb");
	n = ol_trig_encode(&t, buf);
	CHECK(!ol_trig_parse(buf, n, &out, w, sizeof(w)));
	CHECK(!strcmp(out.what, "a?b") && !out.task[0] && strlen(out.host_task) == 63);
	/* refusals */
	strcpy(t.what, "cpuid");
	strcpy(t.host_task, "vCPU thread/7");
	n = ol_trig_encode(&t, buf);
	CHECK(!ol_trig_parse(buf, n, &out, w, sizeof(w)));
	trig_refused(&t, 0, 0, 0, -(long)n + 3, "not a trigger frame");
	trig_refused(&t, 4, 2, 2, 0, "trigger frame version 2");
	trig_refused(&t, 4, 0, 2, 0, "version 0");
	trig_refused(&t, 0, 0, 0, -(long)n + 6, "of 6 bytes: cut short");
	trig_refused(&t, 4, 2, 2, -(long)n + 6, "version 2");
	trig_refused(&t, 0, 0, 0, -(long)n + OL_TG_HEAD - 1, "cut short");
	trig_refused(&t, 6, 0, 1, 0, "trigger kind 0");
	trig_refused(&t, 6, 3, 1, 0, "trigger kind 3");
	trig_refused(&t, 7, 1, 1, 0, "byte 7 is 1");
	trig_refused(&t, 20, t.threshold_ns, 8, 0, "does not cross");
	trig_refused(&t, OL_TG_HEAD, 64, 1, 0, "what of 64 bytes");
	trig_refused(&t, OL_TG_HEAD + 1, 0x7f, 1, 0, "what: byte 0x7f");
	trig_refused(&t, OL_TG_HEAD + 1, 0x0a, 1, 0, "byte 0x0a");
	trig_refused(&t, 0, 0, 0, -1, "cut short in its host task");
	trig_refused(&t, 0, 0, 0, -(long)(1 + strlen(t.host_task)), "before its host task");
	trig_refused(&t, 0, 0, 0, 1, "1 bytes after its end");
}

static void test_addr(void)
{
	struct sockaddr_storage sa;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&sa;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&sa;
	char why[160];

	CHECK(!mh_parse_addr("9464", &sa, why, sizeof(why)) && sa.ss_family == AF_INET &&
	      a4->sin_addr.s_addr == htonl(INADDR_LOOPBACK) && ntohs(a4->sin_port) == 9464);
	CHECK(!mh_parse_addr("0.0.0.0:80", &sa, why, sizeof(why)) && sa.ss_family == AF_INET &&
	      a4->sin_addr.s_addr == htonl(INADDR_ANY) && ntohs(a4->sin_port) == 80);
	CHECK(!mh_parse_addr("[::1]:9100", &sa, why, sizeof(why)) && sa.ss_family == AF_INET6 &&
	      !memcmp(&a6->sin6_addr, &in6addr_loopback, 16) && ntohs(a6->sin6_port) == 9100);
	CHECK(mh_parse_addr("localhost:80", &sa, why, sizeof(why)) && strstr(why, "numeric"));
	CHECK(mh_parse_addr("1.2.3.4:65536", &sa, why, sizeof(why)) && strstr(why, "port"));
	CHECK(mh_parse_addr(":80", &sa, why, sizeof(why)));
	CHECK(mh_parse_addr("1.2.3.4:", &sa, why, sizeof(why)));
	CHECK(mh_parse_addr("", &sa, why, sizeof(why)));
}

/* One HTTP/1.0 request to 127.0.0.1:@port; the whole answer (free it). */
static char *http(uint16_t port, const char *request)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char chunk[4096];
	ssize_t n;

	if (fd < 0 || !f || connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    write(fd, request, strlen(request)) != (ssize_t)strlen(request)) {
		EXPECT(0, "connecting to port %u: %s", port, strerror(errno));
	} else {
		while ((n = read(fd, chunk, sizeof(chunk))) > 0)
			fwrite(chunk, 1, (size_t)n, f);
	}
	if (fd >= 0)
		close(fd);
	if (f)
		fclose(f);
	return buf;
}

static void test_http(void)
{
	struct sockaddr_storage sa;
	struct mh_server *m;
	struct mstore st;
	char why[200], *a, *body, *text;
	uint16_t port;

	sample_store(&st);
	CHECK(!mh_parse_addr("0", &sa, why, sizeof(why)));
	m = mh_start(&sa, &st, why, sizeof(why));
	REQUIRE(m, "%s", why);
	port = mh_port(m);
	CHECK(port != 0);
	a = http(port, "GET /metrics HTTP/1.0\r\n\r\n");
	body = a ? strstr(a, "\r\n\r\n") : NULL;
	text = rendered(&st);
	EXPECT(a && !strncmp(a, "HTTP/1.1 200 OK\r\n", 17), "answer: %.200s", a ? a : "(none)");
	CHECK(a && strstr(a, "\r\nContent-Type: " MR_CONTENT_TYPE "\r\n"));
	EXPECT(body && text && !strcmp(body + 4, text), "body:\n%s", body ? body : "(none)");
	free(a);
	a = http(port, "GET /other HTTP/1.0\r\n\r\n");
	CHECK(a && !strncmp(a, "HTTP/1.1 404 ", 13));
	free(a);
	a = http(port, "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n");
	CHECK(a && !strncmp(a, "HTTP/1.1 405 ", 13) && strstr(a, "\r\nAllow: GET, HEAD\r\n"));
	free(a);
	/* the server reads the store as it is now */
	ms_remove(&st, 20);
	a = http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	CHECK(a && !strncmp(a, "HTTP/1.1 200 OK\r\n", 17) && !strstr(a, "domain=\"web\"") &&
	      strstr(a, "domain=\"db\""));
	free(a);
	free(text);
	/* a port in use is refused */
	((struct sockaddr_in *)&sa)->sin_port = htons(port);
	CHECK(!mh_start(&sa, &st, why, sizeof(why)) && strstr(why, "could not listen"));
	mh_stop(m);
	ms_destroy(&st);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--frame")) {
		static uint8_t buf[OL_MX_FRAME_MAX];
		struct ol_msnap s;
		FILE *f = fopen(argv[2], "w");
		size_t n;

		sample_web(&s);
		n = ol_msnap_encode(&s, buf);
		return !f || fwrite(buf, 1, n, f) != n || fclose(f);
	}
	if (argc == 3 && !strcmp(argv[1], "--trigger")) {
		static uint8_t buf[OL_TG_FRAME_MAX];
		struct ol_trig t = { .kind = OL_TG_STALL, .vcpu = 1, .start_ns = 5000000000ull,
				     .dur_ns = 50000000, .threshold_ns = 20000000 };
		FILE *f = fopen(argv[2], "w");
		size_t n;

		strcpy(t.what, "running, preempted");
		strcpy(t.task, "stress/812");
		strcpy(t.host_task, "hog/4242");
		n = ol_trig_encode(&t, buf);
		return !f || fwrite(buf, 1, n, f) != n || fclose(f);
	}
	if (argc == 3 && !strcmp(argv[1], "--dump")) {
		struct mstore st;
		FILE *f = fopen(argv[2], "w");

		sample_store(&st);
		if (!f || ms_render(&st, f) || fclose(f))
			return 1;
		return check_result("test_metrics --dump");
	}
	test_frame();
	test_trigger_frame();
	test_render();
	test_store();
	test_addr();
	test_http();
	return check_result("daemon-metrics");
}

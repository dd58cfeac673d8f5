/*
 * `vmscope stats`: a made-up view printed as text and as JSON; each JSON
 * field the --help lists holds what the text line says.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tests/lib/check.h"
#include "stats_view.h"

static struct vmscope_event_desc descs[2];

static void make_view(struct stats_view *v)
{
	static struct stats_cpu_count rows[] = {
		{ .cpu = 1, .event = 0, .seen = 7, .matched = 5 },
	};
	static struct stats_last last[] = {
		{ .event = 1, .cpu = 0, .ts = 123, .text = "seq 3" },
	};

	strcpy(descs[0].name, "kvm_exit");
	strcpy(descs[1].name, "sync_t3");
	memset(v, 0, sizeof(*v));
	v->descs = descs;
	v->nev = 2;
	v->first.state = VMSCOPE_STATE_ENABLED | VMSCOPE_STATE_KVM_ATTACHED;
	v->first.attached = 1;
	v->first.attach_count = 2;
	v->first.sync_collisions = 0;
	v->seen[0] = 10;
	v->matched[0] = 8;
	v->seen[1] = 4;
	v->matched[1] = 4;
	v->exit_reason_missed = 1;
	v->timing_n[0] = 4;
	v->timing_gap_ns[0] = 10;
	v->timing_probe_ns[0] = 6;
	v->have_exit_mode = true;
	v->exit_mode.mode = VMSCOPE_EXIT_MODE_DIRECT;
	v->exit_mode.calibrations = 1;
	v->rb = (struct stats_rb){ .active = 2, .full = 1, .too_big = 2, .overwritten = 3,
				   .delivered = 9 };
	v->per_cpu = rows;
	v->n_per_cpu = 1;
	v->last = last;
	v->n_last = 1;
}

static long long get(json_object *o, const char *path)
{
	char buf[128], *save, *k;
	json_object *c = o;

	snprintf(buf, sizeof(buf), "%s", path);
	for (k = strtok_r(buf, ".", &save); k && c; k = strtok_r(NULL, ".", &save))
		if (!json_object_object_get_ex(c, k, &c))
			c = NULL;
	if (!c) {
		fprintf(stderr, "no %s in the JSON\n", path);
		return -999;
	}
	return json_object_get_int64(c);
}

/* What the JSON holds at each path (the view of make_view). */
static const struct {
	const char *path;
	long long v;
} want[] = {
	{ "state.enabled", 1 },
	{ "state.kvm_attached", 1 },
	{ "state.sched_attached", 0 },
	{ "kvm_attach_count", 2 },
	{ "sync_collisions", 0 },
	{ "exit_reason_missed", 1 },
	{ "timing.exit.n", 4 },
	{ "exit_mode.calibrations", 1 },
	{ "ringbuf.sessions", 2 },
	{ "ringbuf.lost", 6 },
	{ "ringbuf.subbufs_delivered", 9 },
	{ "events.kvm_exit.seen", 10 },
	{ "events.kvm_exit.matched", 8 },
	{ "events.kvm_exit.attached", 1 },
	{ "events.sync_t3.attached", 0 },
};

static void test_json(const struct stats_view *v)
{
	json_object *o = stats_view_json(v), *p, *e;
	const char *text;

	CHECK(o);
	text = json_object_to_json_string(o);
	p = json_tokener_parse(text);	/* what a script reads back */
	CHECK(p);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		EXPECT(get(p, want[i].path) == want[i].v, "%s: %lld, want %lld", want[i].path,
		       get(p, want[i].path), want[i].v);
	CHECK(!json_object_object_get_ex(json_object_object_get(p, "timing"), "entry", NULL));
	CHECK(!strcmp(json_object_get_string(json_object_object_get(
		json_object_object_get(p, "exit_mode"), "mode")), "direct"));
	CHECK(json_object_object_get_ex(json_object_object_get(p, "exit_mode"), "refused", &e) &&
	      e == NULL);
	e = json_object_array_get_idx(json_object_object_get(p, "per_cpu"), 0);
	CHECK(e && get(e, "cpu") == 1 && get(e, "matched") == 5 &&
	      !strcmp(json_object_get_string(json_object_object_get(e, "event")), "kvm_exit"));
	e = json_object_array_get_idx(json_object_object_get(p, "last"), 0);
	CHECK(e && get(e, "ts") == 123 &&
	      !strcmp(json_object_get_string(json_object_object_get(e, "text")), "seq 3"));
	json_object_put(p);
	json_object_put(o);
}

/* The text lines the VM tests read by column before --json. */
static void test_text(const struct stats_view *v)
{
	char path[] = "/var/tmp/test_stats_json.XXXXXX", buf[4096];
	int fd = mkstemp(path), out = dup(1);
	ssize_t n;

	CHECK(fd >= 0 && out >= 0);
	fflush(stdout);
	dup2(fd, 1);
	stats_view_print(v);
	fflush(stdout);
	dup2(out, 1);
	close(out);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	unlink(path);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = 0;
	CHECK(strstr(buf, "cpu 1   kvm_exit               seen 7 matched 5\n") == buf);
	CHECK(strstr(buf, "\nstate: enabled kvm-attached\n"));
	CHECK(strstr(buf, "\nexit_timing n 4 gap_ns_avg 2.5 probe_ns_avg 1.5\n"));
	CHECK(strstr(buf, "\nexit_mode direct compared 0 mismatches 0 reasons 0 calibrations 1 "
		     "fallbacks 0 direct_exits 0 layout no-btf refused no\n"));
	CHECK(strstr(buf, "\nringbuf: recording (2 sessions), lost 6 (full 1 too_big 2 "
		     "overwritten 3) subbufs_delivered 9\n"));
	CHECK(strstr(buf, "\nkvm_exit               yes                  10              8\n"));
	CHECK(strstr(buf, "\nlast sync_t3 cpu 0 ts 123: seq 3\n"));
}

int main(void)
{
	struct stats_view v;

	make_view(&v);
	test_json(&v);
	test_text(&v);
	return check_result("test_stats_json");
}

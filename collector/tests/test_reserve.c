/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recorder's reserve: (1) REC_RESERVE_PER_STREAM and REC_RESERVE_BASE
 * bound the final Statistics and Summary, packed with every field at its
 * largest, for any number of streams; (2) on a real full tmpfs (root), the
 * held room is what a writer gets back once it is released, and a hold
 * that cannot grow says -ENOSPC and keeps what it held.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../tests/lib/check.h"
#include "file.pb-c.h"
#include "reserve.h"
#include "tracefmt.h"

/* Statistics and Summary frames for n streams, every number at its most. */
static uint64_t final_frames_bytes(unsigned int n)
{
	Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;
	Vmscope__Trace__StreamStats *ss = calloc(n, sizeof(*ss)), **ssp = calloc(n, sizeof(*ssp));
	Vmscope__Trace__FileSummary *fs = calloc(n, sizeof(*fs)), **fsp = calloc(n, sizeof(*fsp));
	Vmscope__Trace__Statistics st = VMSCOPE__TRACE__STATISTICS__INIT;
	Vmscope__Trace__Summary sum = VMSCOPE__TRACE__SUMMARY__INIT;
	char name[32];	/* the recorder's stream names fit in 31 characters */
	uint64_t bytes;

	CHECK(ss && ssp && fs && fsp);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	o.side = (Vmscope__Trace__Side)-1;	/* a negative enum: 10 bytes */
	o.vm = o.cpu = o.channel = UINT32_MAX;
	for (unsigned int i = 0; i < n; i++) {
		vmscope__trace__stream_stats__init(&ss[i]);
		ss[i].origin = &o;
		ss[i].chunks = ss[i].records = ss[i].bytes = UINT64_MAX;
		ss[i].lost_events = ss[i].lost_subbufs = UINT64_MAX;
		ss[i].first_ts = ss[i].last_ts = UINT64_MAX;
		ssp[i] = &ss[i];
		vmscope__trace__file_summary__init(&fs[i]);
		fs[i].name = name;
		fs[i].role = (Vmscope__Trace__FileRole)-1;
		fs[i].origin = &o;
		fs[i].frames = fs[i].bytes = UINT64_MAX;
		fs[i].closed_cleanly = 1;
		fsp[i] = &fs[i];
	}
	st.realtime_ns = st.write_errors = st.bytes_written = UINT64_MAX;
	st.streams = ssp;
	st.n_streams = n;
	sum.stop_realtime_ns = sum.stop_ts = UINT64_MAX;
	sum.final_stats = &st;
	sum.files = fsp;
	sum.n_files = n;
	bytes = 2 * TF_FRAME_HDR_SIZE + protobuf_c_message_get_packed_size(&st.base) +
		protobuf_c_message_get_packed_size(&sum.base);
	free(ss);
	free(ssp);
	free(fs);
	free(fsp);
	return bytes;
}

static void check_bound(void)
{
	static const unsigned int ns[] = { 0, 1, 2, 17, 64, 1000, 20000 };

	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		uint64_t b = final_frames_bytes(ns[i]);
		/* the session's share is for the last SessionMetadata */
		uint64_t held = rec_reserve_need(0, ns[i]);

		if (b > held)
			fprintf(stderr, "%u streams: final frames %llu bytes, held %llu\n",
				ns[i], (unsigned long long)b, (unsigned long long)held);
		CHECK(b <= held);
	}
	CHECK(rec_reserve_need(1000, 0) == 2000 + REC_RESERVE_BASE);
}

static int fill(int dfd, const char *name)
{
	static char block[4096];
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int e = 0;

	CHECK(fd >= 0);
	memset(block, 1, sizeof(block));
	while (!e)
		if (write(fd, block, sizeof(block)) < 0)
			e = errno;
	close(fd);
	return e;
}

static void check_tmpfs(void)
{
	char dir[] = "/tmp/test-reserve-XXXXXX";
	struct rec_reserve rs = { -1, 0 };
	struct stat sb;
	int dfd;

	CHECK(mkdtemp(dir) != NULL);
	if (mount("rec-reserve-test", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=512k")) {
		printf("real tmpfs: skipped (mount: %s)\n", strerror(errno));
		rmdir(dir);
		return;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dfd >= 0);
	CHECK(rec_reserve_hold(&rs, dfd, 128 << 10) == 0);
	CHECK(rec_reserve_hold(&rs, dfd, 64 << 10) == 0);	/* holds more already */
	CHECK(fstatat(dfd, REC_RESERVE_NAME, &sb, 0) == 0 && sb.st_blocks * 512 >= 128 << 10);
	CHECK(fill(dfd, "streams") == ENOSPC);
	/* a guest's hello wants more: the disk has none, the old room stays */
	CHECK(rec_reserve_hold(&rs, dfd, 192 << 10) == -ENOSPC);
	CHECK(rs.bytes == 128 << 10);
	CHECK(rec_reserve_release(&rs) == 0);
	CHECK(fstatat(dfd, REC_RESERVE_NAME, &sb, 0) < 0 && errno == ENOENT);
	CHECK(rec_reserve_release(&rs) == 0);	/* nothing held: nothing to do */

	/* the released room is there for the final frames */
	static char meta[120 << 10];
	int fd = openat(dfd, "metadata", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

	CHECK(fd >= 0 && write(fd, meta, sizeof(meta)) == (ssize_t)sizeof(meta));
	close(fd);
	close(dfd);
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	printf("real tmpfs: checked\n");
}

int main(void)
{
	check_bound();
	check_tmpfs();
	return check_result("rec-reserve");
}

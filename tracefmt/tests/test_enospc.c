/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Disk full. Through the writer's I/O seam, the disk "fills" after every
 * possible number of bytes (writes are cut short there, then fail with
 * ENOSPC, as the kernel does): the append or flush that hits it reports
 * -ENOSPC, every later append and close report it too, the file holds
 * exactly the complete frames that fit (the writer cuts the partial one
 * off) and reads back as a clean end, and frames/frames_lost add up.
 * Then the same for real on a 64 KiB tmpfs when we may mount one (root).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

struct disk {
	uint64_t cap;	/* bytes the "disk" holds */
};

static ssize_t full_pwrite(void *ctx, int fd, const void *b, size_t n, off_t off)
{
	struct disk *d = ctx;

	if ((uint64_t)off >= d->cap) {
		errno = ENOSPC;
		return -1;
	}
	if (n > d->cap - (uint64_t)off)
		n = d->cap - (uint64_t)off;
	return pwrite(fd, b, n, off);
}

#define N 60

static void grow_disk(void *ctx)
{
	((struct disk *)ctx)->cap += 1 << 20;
}

struct other {
	int dfd;
};

static void remove_other(void *ctx)
{
	CHECK_EQ(unlinkat(((struct other *)ctx)->dfd, "other", 0), 0);
}

/*
 * Write N frames until the disk is full; check everything above. With
 * make_room, room is then made and the writer resumed: R more frames go
 * after the last complete one, and the file still reads clean.
 */
#define R 3
static void run(int dfd, const char *name, const struct tf_io *io, int expect_full,
		void (*make_room)(void *), void *room_ctx)
{
	struct tf_writer_opts o = { .buf_size = 4096, .io = io };
	struct tf_writer *w;
	struct tf_writer_stats st;
	uint8_t p[7000];
	int first_err = 0;
	size_t accepted = 0;

	CHECK_EQ(tf_writer_create(&w, dfd, name, &o), 0);
	for (size_t i = 0; i < N; i++) {
		uint32_t sz = (uint32_t)(i * 997 % 2900);	/* some > buf/2 */

		if (i == 17)
			sz = 6000;	/* > buffer: the direct-write path */
		for (size_t k = 0; k < sz; k++)
			p[k] = tf_test_payload_byte(i, k);
		int r = tf_writer_append(w, tf_test_type(i), p, sz);

		if (r == 0 && !first_err)
			accepted++;
		if (r && !first_err)
			first_err = r;
		if (first_err)
			CHECK_EQ(r, first_err);	/* sticky */
	}
	int rc = tf_writer_flush(w);

	if (!first_err)
		first_err = rc;
	if (expect_full)
		CHECK_EQ(first_err, -ENOSPC);
	if (make_room && first_err) {
		CHECK_EQ(tf_writer_append(w, 1, p, 10), first_err);	/* still sticky */
		make_room(room_ctx);
		CHECK_EQ(tf_writer_resume(w), 0);
		/* frames go on from the last one the file holds: the reader
		 * below checks each frame's seq, type and bytes by position */
		tf_writer_get_stats(w, &st);
		for (size_t i = st.frames_held; i < st.frames_held + R; i++) {
			for (size_t k = 0; k < 100; k++)
				p[k] = tf_test_payload_byte(i, k);
			CHECK_EQ(tf_writer_append(w, tf_test_type(i), p, 100), 0);
			accepted++;
		}
		CHECK_EQ(tf_writer_flush(w), 0);
		first_err = 0;
	} else if (make_room) {
		CHECK_EQ(tf_writer_resume(w), -EINVAL);	/* nothing to resume */
	}
	tf_writer_get_stats(w, &st);
	CHECK_EQ(tf_writer_close(w), first_err);

	size_t len;
	uint8_t *img = util_read_all(dfd, name, &len);
	struct tf_end_info end;
	size_t got = tf_test_read_all(img, len, &end);

	CHECK_EQ(end.kind, TF_END_CLEAN);
	CHECK_EQ(len, st.durable);
	CHECK_EQ(got + st.frames_lost, accepted);
	/* what a summary lists: the frames the file holds */
	CHECK_EQ(st.frames_held, got);
	free(img);
	unlinkat(dfd, name, 0);
}

int main(void)
{
	char dir[64];
	int dfd = tf_test_mkdir(dir, sizeof(dir));
	struct disk d;
	struct tf_io io = { .pwrite = full_pwrite, .ctx = &d };
	int runs = 0;

	/* A fill point at every byte of the ~90 KB would be slow through the
	 * file system: every byte of the first 6 KB (several frames and
	 * buffer flushes), then a stride that is prime to the frame sizes. */
	for (d.cap = 0; d.cap < 60000; d.cap += d.cap < 6000 ? 1 : 97) {
		uint64_t cap = d.cap;

		/* every other fill point also resumes after making room */
		run(dfd, "f.vtf", &io, 1, runs % 2 ? grow_disk : NULL, &d);
		d.cap = cap;
		runs++;
		if (check_failures) {
			fprintf(stderr, "disk of %llu bytes\n", (unsigned long long)d.cap);
			break;
		}
	}
	printf("%d simulated disk sizes\n", runs);

	/* for real, when a tmpfs may be mounted */
	char mnt[128];

	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	mkdir(mnt, 0700);
	if (mount("tracefmt-test", mnt, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k") == 0) {
		int mfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		char big[70000];

		/* fill the "disk" partly with another file first */
		int ofd = openat(mfd, "other", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

		memset(big, 1, sizeof(big));
		CHECK(write(ofd, big, 20000) == 20000);
		close(ofd);
		run(mfd, "real.vtf", NULL, 1, NULL, NULL);
		printf("real tmpfs ENOSPC: checked\n");
		unlinkat(mfd, "other", 0);
		/* again, and resume once the other file is gone */
		struct other oth = { mfd };

		ofd = openat(mfd, "other", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		CHECK(write(ofd, big, 20000) == 20000);
		close(ofd);
		run(mfd, "real2.vtf", NULL, 1, remove_other, &oth);
		printf("real tmpfs ENOSPC, resumed after making room: checked\n");
		unlinkat(mfd, "real2.vtf", 0);
		close(mfd);
		umount2(mnt, MNT_DETACH);
	} else {
		printf("real tmpfs ENOSPC: skipped (mount: %s)\n", strerror(errno));
	}
	rmdir(mnt);
	close(dfd);
	tf_test_rmdir(dir);
	return check_result("tracefmt-enospc");
}

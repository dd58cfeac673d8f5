/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vd_read_pid and vd_read_cid on a fake libvirt run folder: a running
 * domain's pid and CID from NAME.pid and the status XML; no vsock: CID 0;
 * missing files -ENOENT; a junk pid file and unreadable XML -EINVAL.
 * vd_running_pid (`record --domain`, `top --domain`) on the same folder
 * and a fake config folder: a domain whose pid file names this process
 * is running; one only in the config folder, or whose pid file names a
 * process that has exited, is not running (-ESRCH); one in neither is
 * unknown (-ENOENT); each sentence names the domain.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../tests/lib/check.h"
#include "domrun.h"

static char dir[] = "/tmp/vmscope-domrun-XXXXXX";

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

int main(void)
{
	char why[200];
	uint32_t cid = 99;
	pid_t pid = 0;
	int rc;

	if (!mkdtemp(dir))
		return 1;
	put("web1.pid", "4242");
	put("web1.xml", "<domstatus state='running' pid='4242'><domain type='kvm' id='1'>"
	    "<name>web1</name><devices><vsock model='virtio'><cid auto='yes' address='5'/>"
	    "</vsock></devices></domain></domstatus>\n");
	put("plain.pid", "17\n");
	put("plain.xml", "<domstatus><domain><name>plain</name></domain></domstatus>");
	put("junk.pid", "12x");
	put("neg.pid", "-5\n");
	put("two.pid", "5\n\n");
	put("junk.xml", "<domstatus><domain>");

	rc = vd_read_pid(dir, "web1", &pid);
	EXPECT(rc == 0 && pid == 4242, "web1 pid: rc %d pid %d", rc, (int)pid);
	rc = vd_read_cid(dir, "web1", &cid, why, sizeof(why));
	EXPECT(rc == 0 && cid == 5, "web1 cid: rc %d cid %u (%s)", rc, cid, why);
	rc = vd_read_pid(dir, "plain", &pid);
	EXPECT(rc == 0 && pid == 17, "plain pid (newline): rc %d pid %d", rc, (int)pid);
	rc = vd_read_cid(dir, "plain", &cid, why, sizeof(why));
	EXPECT(rc == 0 && cid == 0, "plain cid: rc %d cid %u", rc, cid);
	EXPECT(vd_read_pid(dir, "nosuch", &pid) == -ENOENT, "missing pid file");
	rc = vd_read_cid(dir, "nosuch", &cid, why, sizeof(why));
	EXPECT(rc == -ENOENT && strstr(why, "nosuch.xml"), "missing xml: %d %s", rc, why);
	EXPECT(vd_read_pid(dir, "junk", &pid) == -EINVAL, "junk pid accepted");
	EXPECT(vd_read_pid(dir, "neg", &pid) == -EINVAL, "negative pid accepted");
	EXPECT(vd_read_pid(dir, "two", &pid) == -EINVAL, "two lines accepted");
	EXPECT(vd_read_cid(dir, "junk", &cid, why, sizeof(why)) == -EINVAL, "junk xml accepted");

	/* vd_running_pid: this process as a running domain's QEMU; a pid
	 * that existed and is gone (a child, reaped) */
	char conf[256], text[32];
	pid_t gone = fork();

	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	snprintf(conf, sizeof(conf), "%s/conf", dir);
	mkdir(conf, 0700);
	snprintf(text, sizeof(text), "%d", (int)getpid());
	put("live.pid", text);
	snprintf(text, sizeof(text), "%d\n", (int)gone);
	put("stale.pid", text);
	put("conf/defined.xml", "<domain><name>defined</name></domain>");
	snprintf(text, sizeof(text), "pid %d,", (int)gone);
	pid = 0;
	rc = vd_running_pid(dir, conf, "live", &pid, why, sizeof(why));
	EXPECT(rc == 0 && pid == getpid(), "live: rc %d pid %d (%s)", rc, (int)pid, why);
	rc = vd_running_pid(dir, conf, "stale", &pid, why, sizeof(why));
	EXPECT(rc == -ESRCH && strstr(why, "stale is not running") && strstr(why, text),
	       "stale pid file: rc %d: %s", rc, why);
	rc = vd_running_pid(dir, conf, "defined", &pid, why, sizeof(why));
	EXPECT(rc == -ESRCH && strstr(why, "domain defined is not running"),
	       "defined, not running: rc %d: %s", rc, why);
	rc = vd_running_pid(dir, conf, "nosuch", &pid, why, sizeof(why));
	EXPECT(rc == -ENOENT && strstr(why, "no domain nosuch"), "unknown: rc %d: %s", rc, why);
	rc = vd_running_pid(dir, conf, "junk", &pid, why, sizeof(why));
	EXPECT(rc == -EINVAL && strstr(why, "domain junk") && strstr(why, "not a pid"),
	       "junk: rc %d: %s", rc, why);
	unlink(strcat(conf, "/defined.xml"));
	snprintf(conf, sizeof(conf), "%s/conf", dir);
	rmdir(conf);

	static const char *const files[] = { "web1.pid", "web1.xml", "plain.pid", "plain.xml",
					     "junk.pid", "junk.xml", "neg.pid", "two.pid",
					     "live.pid", "stale.pid" };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[256];

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
	return check_failures ? 1 : 0;
}

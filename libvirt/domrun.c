/* SPDX-License-Identifier: GPL-2.0 */
/* A running domain's pid and CID from libvirt's run folder: see domrun.h. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domrun.h"
#include "domxml.h"
#include "util_fs.h"
#include "util_number.h"

int vd_read_pid(const char *run_dir, const char *name, pid_t *pid)
{
	char path[PATH_MAX], buf[32];
	unsigned long long v;
	ssize_t n;

	if (snprintf(path, sizeof(path), "%s/%s.pid", run_dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	n = util_read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (n && buf[n - 1] == '\n')	/* libvirt's ends without one; a line may */
		buf[n - 1] = '\0';
	/* a thread id: at most FUTEX_TID_MASK */
	if (util_parse_ull(buf, 1, 0x3fffffff, &v))
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

int vd_running_pid(const char *run_dir, const char *conf_dir, const char *name, pid_t *pid,
		   char *why, size_t whylen)
{
	char conf[PATH_MAX];
	int e = vd_read_pid(run_dir, name, pid);

	if (e == -ENOENT) {
		/* libvirt removes the pid file when the domain stops; the
		 * definition stays in the config folder */
		snprintf(conf, sizeof(conf), "%s/%s.xml", conf_dir, name);
		if (!access(conf, F_OK)) {
			snprintf(why, whylen, "domain %s is not running (no %s.pid in %s)", name,
				 name, run_dir);
			return -ESRCH;
		}
		snprintf(why, whylen, "no domain %s (no %s.pid in %s, no %s.xml in %s); "
			 "`virsh list --all` lists them", name, name, run_dir, name, conf_dir);
		return -ENOENT;
	}
	if (e) {
		snprintf(why, whylen, "domain %s: %s/%s.pid: %s", name, run_dir, name,
			 e == -EINVAL ? "not a pid" : strerror(-e));
		return e;
	}
	if (kill(*pid, 0) && errno == ESRCH) {
		snprintf(why, whylen, "domain %s is not running (its pid file names pid %d, "
			 "which does not exist)", name, (int)*pid);
		return -ESRCH;
	}
	return 0;
}

int vd_read_cid(const char *run_dir, const char *name, uint32_t *cid, char *why,
		size_t whylen)
{
	char path[PATH_MAX];
	struct vd_domain d;
	size_t len;
	char *xml;
	FILE *f;
	int rc;

	if (snprintf(path, sizeof(path), "%s/%s.xml", run_dir, name) >= (int)sizeof(path))
		return vd_why(why, whylen, -ENAMETOOLONG, "path too long");
	f = fopen(path, "re");
	if (!f)
		return vd_why(why, whylen, -errno, "%s: %s", path, strerror(errno));
	xml = malloc(VD_XML_MAX + 1);
	len = xml ? fread(xml, 1, VD_XML_MAX + 1, f) : 0;
	fclose(f);
	if (!xml)
		return vd_why(why, whylen, -ENOMEM, "out of memory");
	rc = vd_parse(xml, len, &d, why, whylen);
	free(xml);
	/* a refused vmscope:trace does not matter here: the CID was read */
	if (rc == VD_MALFORMED)
		return -EINVAL;
	*cid = d.cid;
	return 0;
}

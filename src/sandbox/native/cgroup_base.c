/* Where the sandboxes' cgroups go, decided once per process: a cgroup v2
 * directory that is ours to manage, cgroup v1 as root, or none (the limits
 * fall back to rlimits) with the reason.
 *
 * OURS: where systemd runs, every cgroup belongs to one of its units, and
 * systemd owns the attributes of its units' cgroups: whenever it realizes a
 * unit of a slice it writes the cgroup.subtree_control of its siblings
 * anew, enabling only the controllers its own units asked for. Every
 * controller we enabled there, and every limit we wrote below (memory.max,
 * pids.max, cpu.max), is then gone, silently: the files vanish and the
 * kernel limits nothing. Only below a unit with Delegate=yes does systemd
 * keep out. So a cgroup we can write is not enough: the unit that holds us
 * must be delegated (its xattr, its manager's word over D-Bus, or the
 * cgroup handed to our uid, which systemd does only with Delegate=), or
 * systemd gives us a scope of our own that is (systemd_scope.c). Outside
 * systemd (a container's cgroup namespace, an init of another kind) a
 * writable cgroup with the controllers is ours, as before. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sandbox/native/native.h"

bool nat_cg_has_token(const char *list, const char *tok)
{
	size_t n = strlen(tok);
	for (const char *p = list; p && *p;) {
		const char *e = strpbrk(p, ", \n");
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && strncmp(p, tok, n) == 0)
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

bool nat_cg_read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool ok = fgets(buf, (int)n, f) != NULL;
	fclose(f);
	if (!ok)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

/* The mount point of the hierarchy with `ctrl` (v1) or of cgroup2 (ctrl
 * NULL), and the mount's root inside the hierarchy. */
static bool find_mount(const char *ctrl, char *mnt, size_t mn, char *root, size_t rn)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return false;
	char line[4096];
	bool found = false;
	while (!found && fgets(line, sizeof line, f)) {
		char *save = NULL, *fields[12] = {0};
		int nf = 0;
		for (char *t = strtok_r(line, " \n", &save); t && nf < 12; t = strtok_r(NULL, " \n", &save))
			fields[nf++] = t;
		int dash = -1;
		for (int i = 6; i < nf; i++)
			if (strcmp(fields[i], "-") == 0) {
				dash = i;
				break;
			}
		if (dash < 0 || dash + 3 >= nf + 1 || !fields[dash + 1])
			continue;
		const char *fstype = fields[dash + 1];
		const char *super = dash + 3 < nf ? fields[dash + 3] : "";
		if (ctrl ? (strcmp(fstype, "cgroup") == 0 && nat_cg_has_token(super, ctrl))
			 : strcmp(fstype, "cgroup2") == 0) {
			snprintf(mnt, mn, "%s", fields[4]);
			snprintf(root, rn, "%s", fields[3]);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* Our own cgroup in the hierarchy with `ctrl` (NULL: the v2 "0::" line). */
static bool own_path(const char *ctrl, char *out, size_t n)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return false;
	char line[4096];
	bool found = false;
	while (!found && fgets(line, sizeof line, f)) {
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		char *nl = strchr(c2 + 1, '\n');
		if (nl)
			*nl = '\0';
		bool match = ctrl ? nat_cg_has_token(c1 + 1, ctrl) : (strncmp(line, "0:", 2) == 0 && c1[1] == '\0');
		if (match) {
			snprintf(out, n, "%s", c2 + 1);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* Our own cgroup's directory for ctrl (NULL: v2), e.g.
 * /sys/fs/cgroup/memory/user.slice; *mnt_len: the length of its mount
 * point's part. */
static bool own_dir_at(const char *ctrl, char *out, size_t n, size_t *mnt_len)
{
	char mnt[PATH_MAX], root[PATH_MAX], path[PATH_MAX];
	if (!find_mount(ctrl, mnt, sizeof mnt, root, sizeof root) || !own_path(ctrl, path, sizeof path))
		return false;
	const char *rel = path;
	size_t rl = strlen(root);
	if (strcmp(root, "/") != 0) {
		if (strncmp(path, root, rl) != 0 || (path[rl] != '/' && path[rl] != '\0'))
			return false; /* our cgroup is outside what is mounted */
		rel = path + rl;
	}
	if (strcmp(rel, "/") == 0)
		rel = "";
	if (mnt_len)
		*mnt_len = strlen(mnt);
	return snprintf(out, n, "%s%s", mnt, rel) < (int)n;
}

bool nat_cg_own_dir(const char *ctrl, char *out, size_t n)
{
	return own_dir_at(ctrl, out, n, NULL);
}

bool nat_cgroup_unit_of(const char *path, const char **name, size_t *name_len, size_t *unit_end,
			bool *user_manager)
{
	bool found = false, under_user = false;
	*user_manager = false;
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		size_t len = strcspn(p, "/");
		if (!len)
			break;
		bool service = len > 8 && !strncmp(p + len - 8, ".service", 8);
		bool scope = len > 6 && !strncmp(p + len - 6, ".scope", 6);
		if (service || scope) {
			found = true;
			*name = p;
			*name_len = len;
			*unit_end = (size_t)(p + len - path);
			*user_manager = under_user; /* user@UID.service itself is the system manager's */
			if (service && !strncmp(p, "user@", 5))
				under_user = true;
		}
		p += len;
	}
	return found;
}

static bool xattr_says_delegated(const char *dir)
{
	/* systemd marks a delegated unit's cgroup (trusted.* readable by root
	 * only; user.* from newer versions, for everyone). */
	static const char *const names[] = {"user.delegate", "trusted.delegate"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char v[8];
		ssize_t n = getxattr(dir, names[i], v, sizeof v);
		if (n == 1 && v[0] == '1')
			return true;
	}
	return false;
}

/* The controllers and rights a base needs: memory and pids in its
 * cgroup.controllers, and the directory and its cgroup.subtree_control
 * writable by us. */
static bool v2_dir_fit(const char *dir, char *why, size_t wn)
{
	char path[PATH_MAX + 32], line[512];
	snprintf(path, sizeof path, "%s/cgroup.controllers", dir);
	if (!nat_cg_read_line(path, line, sizeof line) || !nat_cg_has_token(line, "memory") ||
	    !nat_cg_has_token(line, "pids")) {
		snprintf(why, wn, "cgroup v2 %.300s has no memory/pids controllers (it has: %.100s)", dir,
			 line[0] ? line : "none");
		return false;
	}
	snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
	if (access(dir, W_OK) != 0 || access(path, W_OK) != 0) {
		snprintf(why, wn, "cgroup v2 %.300s is not delegated to this user (not writable)", dir);
		return false;
	}
	return true;
}

/* Whether the unit holding dir lets us manage what is below it. */
static bool delegated(const char *dir, size_t mnt_len, char *how, size_t hn, char *why, size_t wn)
{
	const char *name;
	size_t name_len, unit_end;
	bool user_manager;
	if (access("/run/systemd/system", F_OK) != 0) {
		snprintf(how, hn, "no systemd manages it");
		return true;
	}
	if (!nat_cgroup_unit_of(dir + mnt_len, &name, &name_len, &unit_end, &user_manager)) {
		snprintf(why, wn, "cgroup %s is no unit's but systemd's own (not delegated)", dir + mnt_len);
		return false;
	}
	char unit[128], unit_dir[PATH_MAX];
	snprintf(unit, sizeof unit, "%.*s", (int)name_len, name);
	snprintf(unit_dir, sizeof unit_dir, "%.*s", (int)(mnt_len + unit_end), dir);
	if (xattr_says_delegated(unit_dir)) {
		snprintf(how, hn, "%s is delegated (Delegate=yes)", unit);
		return true;
	}
	int d = nat_systemd_unit_delegated(user_manager, unit, why, wn);
	if (d == 1) {
		snprintf(how, hn, "%s is delegated (Delegate=yes, said %s)", unit,
			 user_manager ? "your systemd user manager" : "systemd");
		return true;
	}
	/* Without the manager's word: systemd hands a system unit's cgroup to
	 * its User= only when the unit is delegated. The user manager's units
	 * are all the user's, delegated or not: no such sign there. */
	struct stat st;
	if (d < 0 && !user_manager && geteuid() != 0 && stat(unit_dir, &st) == 0 && st.st_uid == geteuid()) {
		snprintf(how, hn, "%s is delegated (its cgroup is this user's)", unit);
		return true;
	}
	if (d == 0)
		snprintf(why, wn, "%s (cgroup %s) is not delegated: systemd rewrites its controllers at will", unit,
			 dir + mnt_len);
	return false;
}

static struct nat_cg_base base;
static pthread_once_t base_once = PTHREAD_ONCE_INIT;

static void v1_or_none(const char *v2_why)
{
	char dir[PATH_MAX];
	if (geteuid() == 0 && nat_cg_own_dir("memory", dir, sizeof dir) && access(dir, W_OK) == 0) {
		base.mode = NAT_CG_V1;
		snprintf(base.how, sizeof base.how, "cgroup v1 as root");
		return;
	}
	base.mode = NAT_CG_NONE;
	snprintf(base.why, sizeof base.why, "%s; %s",
		 geteuid() == 0 ? "no writable cgroup v1 memory hierarchy"
				: "cgroup v1 needs root and cgroup v2 has no delegated cgroup for this user",
		 v2_why);
}

static void decide(void)
{
	char dir[PATH_MAX], why[512] = "", how[256] = "", root_ctrls[256] = "";
	size_t mnt_len = 0;
	if (!own_dir_at(NULL, dir, sizeof dir, &mnt_len)) {
		v1_or_none("no cgroup v2 hierarchy is mounted");
		return;
	}
	/* A hybrid host's v2 hierarchy has no controllers: nothing to ask for. */
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%.*s/cgroup.controllers", (int)mnt_len, dir);
	bool unified = nat_cg_read_line(path, root_ctrls, sizeof root_ctrls) && nat_cg_has_token(root_ctrls, "memory") &&
		       nat_cg_has_token(root_ctrls, "pids");
	if (!unified) {
		snprintf(why, sizeof why, "cgroup v2 at %.*s has no memory/pids controllers", (int)mnt_len, dir);
		v1_or_none(why);
		return;
	}
	bool fit = v2_dir_fit(dir, why, sizeof why);
	if (fit && delegated(dir, mnt_len, how, sizeof how, why, sizeof why)) {
		base.mode = NAT_CG_V2;
		snprintf(base.dir, sizeof base.dir, "%s", dir);
		snprintf(base.how, sizeof base.how, "%s", how);
		return;
	}
	/* Not ours: ask systemd for a scope that is (systemd_scope.c). */
	char scope_why[512] = "";
	if (access("/run/systemd/system", F_OK) == 0) {
		char unit[128];
		if (nat_systemd_scope(geteuid() != 0, unit, sizeof unit, scope_why, sizeof scope_why) == 0) {
			if (own_dir_at(NULL, dir, sizeof dir, &mnt_len) && v2_dir_fit(dir, scope_why, sizeof scope_why)) {
				base.mode = NAT_CG_V2;
				base.scope = true;
				snprintf(base.dir, sizeof base.dir, "%s", dir);
				snprintf(base.how, sizeof base.how, "%s, a scope of %s with Delegate=yes", unit,
					 geteuid() != 0 ? "your systemd user manager" : "systemd");
				return;
			}
		}
	}
	if (scope_why[0]) {
		size_t n = strlen(why);
		snprintf(why + n, sizeof why - n, "; no delegated scope from systemd: %s", scope_why);
	}
	v1_or_none(why);
}

const struct nat_cg_base *nat_cgroup_base(void)
{
	pthread_once(&base_once, decide);
	return &base;
}

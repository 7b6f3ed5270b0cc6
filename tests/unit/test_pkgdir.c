/* The user's packages directory: which names `packages add`
 * passes to pip, the listing from *.dist-info, removal by RECORD (inside
 * the directory only), and when sandboxes get the directory. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "packages/packages.h"

static void put(const char *dir, const char *rel, const char *text)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	for (char *s = p + strlen(dir) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static bool exists(const char *dir, const char *rel)
{
	char p[4096];
	struct stat st;
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	return lstat(p, &st) == 0;
}

int main(void)
{
	static const char *const good[] = {"sympy", "mpmath==1.3.0", "Foo_Bar.baz", "x[extra1,extra2]>=2.0",
					   "pkg~=1.4.2", "a", "n0==1.0.post1", "z!=2.*"};
	static const char *const bad[] = {"", "-e", "--target=/tmp", "../x", "/tmp/x.whl", "http://x/y.whl",
					  "git+https://x/y", "x y", "x==", "x;os_name=='posix'", "x @ file:///t",
					  "x==1;rm", "x-", ".x", "x[a", "x==1 ", "x\n"};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		CHECK(sb_packages_valid_requirement(good[i]));
		if (!sb_packages_valid_requirement(good[i]))
			fprintf(stderr, "  refused: '%s'\n", good[i]);
	}
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		CHECK(!sb_packages_valid_requirement(bad[i]));
		if (sb_packages_valid_requirement(bad[i]))
			fprintf(stderr, "  accepted: '%s'\n", bad[i]);
	}

	/* Where: XDG_DATA_HOME wins; else HOME's (not as root). */
	char dir[4096];
	setenv("XDG_DATA_HOME", "/x/data", 1);
	CHECK(sb_packages_dir(dir, sizeof dir, NULL) == 0 && !strcmp(dir, "/x/data/sagebox/site-packages"));
	setenv("XDG_DATA_HOME", "relative", 1);
	setenv("HOME", "/home/u", 1);
	CHECK(sb_packages_dir(dir, sizeof dir, NULL) == 0 &&
	      !strcmp(dir, geteuid() ? "/home/u/.local/share/sagebox/site-packages"
				     : "/var/lib/sagebox/site-packages"));

	char tmpl[] = "/tmp/sagebox-test-packages.XXXXXX";
	char *d = mkdtemp(tmpl);
	CHECK(d != NULL);
	if (!d)
		return check_summary();
	chmod(d, 0755);
	char why[512], sub[600];
	/* Absent: not bound, nothing to say. Empty: bound (what is added
	 * later shows in the sandboxes already running). */
	snprintf(sub, sizeof sub, "%s/data/sagebox/site-packages", d);
	CHECK(!sb_packages_bindable(sub, why, sizeof why) && why[0] == '\0');
	struct sb_error err = {0};
	mode_t old_mask = umask(077);
	CHECK(sb_packages_make_dir(sub, &err) == 0);
	umask(old_mask);
	struct stat st;
	CHECK(stat(sub, &st) == 0 && (st.st_mode & 07777) == 0755); /* whatever the umask */
	snprintf(why, sizeof why, "%s/data", d);
	CHECK(stat(why, &st) == 0 && (st.st_mode & 07777) == 0755);
	CHECK(sb_packages_bindable(sub, why, sizeof why));
	chmod(sub, 0700); /* an existing directory is left as it is */
	CHECK(sb_packages_make_dir(sub, &err) == 0 && stat(sub, &st) == 0 && (st.st_mode & 07777) == 0700);
	CHECK(sb_packages_make_dir("relative/dir", &err) == -1 && strstr(err.msg, "not an absolute path"));
	CHECK(sb_packages_bindable(d, why, sizeof why));
	json_t *l = sb_packages_list(d);
	CHECK(json_array_size(l) == 0);
	json_decref(l);

	put(d, "alpha/__init__.py", "A = 1\n");
	put(d, "alpha/__pycache__/__init__.cpython-311.pyc", "x");
	put(d, "alpha/sub/mod.py", "\n");
	put(d, "bin/alpha-cli", "#!/bin/sh\n");
	put(d, "Alpha-1.2.dist-info/METADATA", "Metadata-Version: 2.1\nName: Alpha\nVersion: 1.2\n\nName: Not\n");
	put(d, "Alpha-1.2.dist-info/RECORD",
	    "alpha/__init__.py,sha256=x,6\nalpha/sub/mod.py,,\n../../bin/alpha-cli,,\n/etc/passwd,,\n"
	    "../../../outside,,\nalpha/../../escape,,\nAlpha-1.2.dist-info/RECORD,,\n");
	put(d, "beta/__init__.py", "\n");
	put(d, "beta-0.3.dist-info/METADATA", "Name: beta\nVersion: 0.3\n");
	/* as pip writes it: every file of the dist-info listed too */
	put(d, "beta-0.3.dist-info/RECORD",
	    "beta/__init__.py,,\nbeta-0.3.dist-info/METADATA,,\nbeta-0.3.dist-info/RECORD,,\n");
	CHECK(sb_packages_bindable(d, why, sizeof why));
	l = sb_packages_list(d);
	CHECK(json_array_size(l) == 2);
	CHECK(!strcmp(json_string_value(json_object_get(json_array_get(l, 0), "name")), "Alpha"));
	CHECK(!strcmp(json_string_value(json_object_get(json_array_get(l, 0), "version")), "1.2"));
	CHECK(!strcmp(json_string_value(json_object_get(json_array_get(l, 1), "name")), "beta"));
	json_decref(l);

	/* Not readable by others: not bound, and why says so. */
	chmod(d, 0700);
	CHECK(!sb_packages_bindable(d, why, sizeof why));
	CHECK(strstr(why, "not readable by others") != NULL);
	/* Writable by others: any local user could plant a module. */
	chmod(d, 0777);
	CHECK(!sb_packages_bindable(d, why, sizeof why));
	CHECK(strstr(why, "writable by others") != NULL);
	chmod(d, 0755);
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s/data'", d);
	CHECK(system(cmd) == 0);

	char removed[256];
	CHECK(sb_packages_remove(d, "gamma", removed, sizeof removed, &err) == -1);
	CHECK(strstr(err.msg, "no package 'gamma'") != NULL);
	CHECK(strstr(err.hint, "packages list") != NULL);
	CHECK(sb_packages_remove(d, "ALPHA", removed, sizeof removed, &err) == 0);
	CHECK(!strcmp(removed, "Alpha 1.2"));
	CHECK(!exists(d, "alpha/__init__.py") && !exists(d, "alpha/sub") && !exists(d, "bin/alpha-cli"));
	CHECK(!exists(d, "Alpha-1.2.dist-info"));
	CHECK(exists(d, "alpha/__pycache__/__init__.cpython-311.pyc")); /* not in RECORD: left */
	CHECK(exists(d, "beta/__init__.py") && exists(d, "beta-0.3.dist-info/RECORD"));
	CHECK(sb_packages_remove(d, "beta", removed, sizeof removed, &err) == 0);
	CHECK(!exists(d, "beta") && !exists(d, "beta-0.3.dist-info"));
	l = sb_packages_list(d);
	CHECK(json_array_size(l) == 0);
	json_decref(l);

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
	CHECK(system(cmd) == 0);
	return check_summary();
}

/* The image: present or not, its ID and digest. sagebox never pulls: a
 * pull during a run would fetch unreviewed code from the network on the
 * model's behalf (and the sandbox has none anyway). */
#include "sandbox/podman/podman.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PM_BUILD_TAG "localhost/sagebox-sage:deb12"

static bool contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; hay && *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return true;
	return false;
}

/* The repository part of a reference: "docker.io/a/b:tag" -> "docker.io/a/b". */
static void repo_of(const char *ref, char *out, size_t n)
{
	snprintf(out, n, "%s", ref);
	char *at = strchr(out, '@');
	if (at)
		*at = '\0';
	char *slash = strrchr(out, '/');
	char *colon = strrchr(slash ? slash : out, ':');
	if (colon)
		*colon = '\0';
}

int pm_image_inspect(const struct pm_self *pm, struct pm_image *img,
		     struct sb_error *err)
{
	const enum pm_engine eng = pm->eng;
	memset(img, 0, sizeof *img);
	const char *exe = pm->exe;
	const char *pargv[] = {exe, "--log-level=error", "image", "inspect", "--", pm->image, NULL};
	const char *dargv[] = {exe, "image", "inspect", "--", pm->image, NULL};
	struct pm_out o;
	if (pm_run(exe, eng == PM_DOCKER ? dargv : pargv, eng, PM_HELPER_TIMEOUT_MS, &o) < 0) {
		bool missing = !o.spawn_errno && !o.timed_out &&
			       (contains_ci(o.err, "not known") || contains_ci(o.err, "no such image") ||
				contains_ci(o.err, "no such object"));
		char d[512];
		pm_out_describe(&o, d, sizeof d);
		pm_out_free(&o);
		if (missing)
			return 0;
		return sb_fail(err, "'%s image inspect %s' failed (%s)", exe, pm->image, d);
	}
	json_t *j = json_loads(o.out, 0, NULL);
	pm_out_free(&o);
	json_t *first = json_array_get(j, 0);
	if (!json_is_object(first)) {
		json_decref(j);
		return sb_fail(err, "cannot read '%s image inspect %s' output", exe, pm->image);
	}
	const char *id = json_string_value(json_object_get(first, "Id"));
	if (!id || !id[0]) {
		json_decref(j);
		return sb_fail(err, "'%s image inspect %s' shows no image ID", exe, pm->image);
	}
	img->present = true;
	snprintf(img->id, sizeof img->id, "%s", id);
	const char *dg = json_string_value(json_object_get(first, "Digest"));
	if (dg)
		snprintf(img->digest, sizeof img->digest, "%s", dg);
	json_t *size = json_object_get(first, "Size");
	if (json_is_integer(size))
		img->size = (uint64_t)json_integer_value(size);
	/* A pinned reference for the same repository, if the engine knows one. */
	char repo[512];
	repo_of(pm->image, repo, sizeof repo);
	size_t i;
	json_t *rd;
	json_array_foreach(json_object_get(first, "RepoDigests"), i, rd) {
		const char *s = json_string_value(rd);
		const char *at = s ? strchr(s, '@') : NULL;
		if (!at)
			continue;
		if (!img->digest[0])
			snprintf(img->digest, sizeof img->digest, "%s", at + 1);
		if ((size_t)(at - s) == strlen(repo) && strncmp(s, repo, strlen(repo)) == 0) {
			snprintf(img->repo_digest, sizeof img->repo_digest, "%s", s);
			break;
		}
	}
	json_decref(j);
	return 0;
}

bool pm_image_floating(const char *image)
{
	/* Only a digest pins content; any tag (":latest" most of all) can be
	 * moved to different content by whoever controls the registry. */
	return strchr(image, '@') == NULL;
}

int pm_refuse_missing_image(const struct pm_self *pm, struct sb_error *err)
{
	const enum pm_engine eng = pm->eng;
	const char *exe = pm->exe;
	sb_fail(err, "image '%s' is not present in %s's local storage, and sagebox never pulls images "
		     "(--pull=never)",
		pm->image, pm_engine_name(eng));
	if (strcmp(pm->image, PM_BUILD_TAG) == 0)
		return sb_hint(err, "build it (no registry needed, a few minutes): sagebox image build --tag %s",
			       PM_BUILD_TAG);
	return sb_hint(err, "get it with: %s pull %s   -- or, without a registry, build one from Debian's "
			    "sagemath package: sagebox image build --tag %s, then use --image %s",
		       exe, pm->image, PM_BUILD_TAG, PM_BUILD_TAG);
}

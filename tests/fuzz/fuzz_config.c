/* Fuzz target: the settings parsers (config/config.c): the INI file (inih
 * and the line counting around it), the SAGEBOX_* variables and every
 * setting's value check, and the flag-to-key mapping.
 *
 * Input: the config file, then optionally "\0" followed by environment
 * entries separated by "\0" (e.g. "SAGEBOX_MEMORY=1g"), each also tried as
 * a command-line flag. Checked: a failure names what was wrong; settings
 * that were accepted can be shown (status, --help-settings: the JSON of
 * the settings must exist, so every accepted value is UTF-8), and each
 * value shown is accepted again unchanged (what status prints is a valid
 * config). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config/config.h"
#include "util/fd.h"

#define MAX_ENV 16

/* Every shown value, set again through sb_config_set, gives the same JSON. */
static void roundtrip(const struct sb_config *cfg, json_t *shown)
{
	struct sb_config again = *cfg;
	const char *key;
	json_t *v;
	json_object_foreach(shown, key, v) {
		if (!strcmp(key, "config_file"))
			continue;
		char text[PATH_MAX + 32];
		if (json_is_string(v))
			snprintf(text, sizeof text, "%s", json_string_value(v));
		else if (json_is_integer(v))
			snprintf(text, sizeof text, "%lld", (long long)json_integer_value(v));
		else if (json_is_boolean(v)) /* an on/off setting (service) */
			snprintf(text, sizeof text, "%s", json_is_true(v) ? "true" : "false");
		else if (json_is_real(v))
			snprintf(text, sizeof text, "%.17g", json_real_value(v));
		else if (json_is_array(v)) { /* share: the resolved directories, set again comma-separated */
			size_t i, off = 0;
			json_t *d;
			text[0] = '\0';
			json_array_foreach(v, i, d) {
				if (!json_is_string(d))
					abort();
				off += (size_t)snprintf(text + off, sizeof text - off, "%s%s", i ? "," : "", json_string_value(d));
				if (off >= sizeof text)
					abort();
			}
		} else
			abort();
		struct sb_error err = {0};
		if (sb_config_set(&again, key, text, "roundtrip", &err) < 0) {
			fprintf(stderr, "shown %s = '%s' is refused: %s\n", key, text, err.msg);
			abort();
		}
	}
	json_t *back = sb_config_to_json(&again);
	if (!json_equal(back, shown))
		abort();
	json_decref(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *zero = memchr(data, '\0', size);
	size_t ini_len = zero ? (size_t)(zero - data) : size;

	/* The environment: NUL-separated entries after the file. */
	char *envbuf = NULL;
	char *envp[MAX_ENV + 1] = {0};
	if (zero) {
		size_t n = size - ini_len - 1;
		envbuf = malloc(n + 1);
		memcpy(envbuf, zero + 1, n);
		envbuf[n] = '\0';
		size_t k = 0;
		for (char *e = envbuf; e < envbuf + n && k < MAX_ENV; e += strlen(e) + 1)
			envp[k++] = e;
		for (size_t i = 0; i < k; i++) {
			char flag[96];
			snprintf(flag, sizeof flag, "%.*s", (int)strcspn(envp[i], "="), envp[i]);
			const char *key = sb_config_key_for_flag(flag);
			if (key && strncmp(flag, "--", 2))
				abort();
		}
	}

	SB_AUTO_FD fd = memfd_create("fuzz-config", MFD_CLOEXEC);
	if (fd < 0 || sb_write_all(fd, data, ini_len) < 0)
		abort();
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);

	struct sb_config cfg;
	struct sb_error err = {0};
	if (sb_config_load(&cfg, path, envp, &err) < 0) {
		if (!err.msg[0])
			abort();
	} else {
		json_t *shown = sb_config_to_json(&cfg);
		if (!shown) {
			fprintf(stderr, "settings accepted but not shown: config_to_json failed\n");
			abort();
		}
		roundtrip(&cfg, shown);
		json_decref(shown);
	}
	free(envbuf);
	return 0;
}

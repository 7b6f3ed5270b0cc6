#include "core/handle.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static bool instance_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

bool sb_instance_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n < 1 || n > SB_INSTANCE_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!instance_char(s[i]))
			return false;
	return true;
}

void sb_instance_default(char out[SB_INSTANCE_MAX + 1])
{
	char host[256] = "";
	if (gethostname(host, sizeof host) < 0)
		host[0] = '\0';
	host[sizeof host - 1] = '\0';
	size_t n = 0;
	for (const char *p = host; *p && *p != '.' && n < SB_INSTANCE_MAX; p++) {
		char c = (char)tolower((unsigned char)*p);
		out[n++] = instance_char(c) ? c : '-';
	}
	out[n] = '\0';
	if (!n)
		snprintf(out, SB_INSTANCE_MAX + 1, "sagebox");
}

int sb_handle_new(char out[SB_HANDLE_LEN], char kind, const char *instance)
{
	unsigned char r[SB_HANDLE_SECRET_HEX / 2];
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		return -1;
	int n = snprintf(out, SB_HANDLE_LEN, "%c_%.*s_", kind, SB_INSTANCE_MAX, instance);
	for (size_t i = 0; i < sizeof r && n > 0 && (size_t)n < SB_HANDLE_LEN; i++)
		n += snprintf(out + n, SB_HANDLE_LEN - (size_t)n, "%02x", r[i]);
	return 0;
}

bool sb_handle_parse(const char *id, char kind, char instance[SB_INSTANCE_MAX + 1])
{
	if (!id || !islower((unsigned char)id[0]) || id[1] != '_' || (kind && id[0] != kind))
		return false;
	const char *inst = id + 2, *sep = strchr(inst, '_');
	if (!sep || sep == inst || sep - inst > SB_INSTANCE_MAX)
		return false;
	for (const char *p = inst; p < sep; p++)
		if (!instance_char(*p))
			return false;
	const char *secret = sep + 1;
	if (strlen(secret) != SB_HANDLE_SECRET_HEX || strspn(secret, "0123456789abcdef") != SB_HANDLE_SECRET_HEX)
		return false;
	if (instance) {
		memcpy(instance, inst, (size_t)(sep - inst));
		instance[sep - inst] = '\0';
	}
	return true;
}

bool sb_handle_elsewhere(const char *id, const char *self, char instance[SB_INSTANCE_MAX + 1])
{
	char inst[SB_INSTANCE_MAX + 1];
	if (!sb_handle_parse(id, 0, inst) || !strcmp(inst, self))
		return false;
	if (instance)
		snprintf(instance, SB_INSTANCE_MAX + 1, "%s", inst);
	return true;
}

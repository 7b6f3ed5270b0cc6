/* Handles that name their instance (core/handle.h): the grammar a router
 * parses, unguessable secrets, and what is not a handle. */
#include <string.h>

#include "check.h"
#include "core/handle.h"

int main(void)
{
	char a[SB_HANDLE_LEN], b[SB_HANDLE_LEN], inst[SB_INSTANCE_MAX + 1];
	CHECK(sb_handle_new(a, SB_HANDLE_SESSION, "node-1") == 0 && sb_handle_new(b, SB_HANDLE_SESSION, "node-1") == 0);
	CHECK(!strncmp(a, "s_node-1_", 9) && strlen(a) == 9 + SB_HANDLE_SECRET_HEX);
	CHECK(strcmp(a, b) != 0); /* 128 random bits each */
	CHECK(sb_handle_parse(a, SB_HANDLE_SESSION, inst) && !strcmp(inst, "node-1"));
	CHECK(sb_handle_parse(a, 0, NULL));
	CHECK(!sb_handle_parse(a, SB_HANDLE_JOB, NULL));
	/* The longest instance fits. */
	const char *longest = "abcdefghijklmnopqrstuvwxyz012345";
	CHECK(sb_instance_name_ok(longest) && sb_handle_new(a, SB_HANDLE_JOB, longest) == 0);
	CHECK(strlen(a) == SB_HANDLE_LEN - 1 && sb_handle_parse(a, SB_HANDLE_JOB, inst) && !strcmp(inst, longest));
	/* Not handles: the old form, wrong lengths, case, characters. */
	const char *bad[] = {"s_0123456789abcdef0123456789abcdef", "s__0123456789abcdef0123456789abcdef",
			     "s_a_0123456789abcdef0123456789abcde", "s_a_0123456789abcdef0123456789abcdef0",
			     "s_a_0123456789ABCDEF0123456789abcdef", "s_A_0123456789abcdef0123456789abcdef",
			     "s_a.b_0123456789abcdef0123456789abcdef", "S_a_0123456789abcdef0123456789abcdef",
			     "s_abcdefghijklmnopqrstuvwxyz0123456_0123456789abcdef0123456789abcdef", "Hello", "", NULL};
	for (int i = 0; bad[i]; i++)
		CHECK(!sb_handle_parse(bad[i], 0, inst));
	CHECK(!sb_handle_parse(NULL, 0, inst));
	/* elsewhere: a handle of another instance only. */
	CHECK(sb_handle_elsewhere("j_b_0123456789abcdef0123456789abcdef", "a", inst) && !strcmp(inst, "b"));
	CHECK(!sb_handle_elsewhere("j_a_0123456789abcdef0123456789abcdef", "a", inst));
	CHECK(!sb_handle_elsewhere("j_b_0123", "a", inst));
	/* Instance names. */
	CHECK(sb_instance_name_ok("a") && sb_instance_name_ok("sagebox-0") && sb_instance_name_ok("-"));
	CHECK(!sb_instance_name_ok("") && !sb_instance_name_ok("A") && !sb_instance_name_ok("a_b") &&
	      !sb_instance_name_ok("a.b") && !sb_instance_name_ok("abcdefghijklmnopqrstuvwxyz0123456"));
	char def[SB_INSTANCE_MAX + 1];
	sb_instance_default(def);
	CHECK(sb_instance_name_ok(def));
	return check_summary();
}

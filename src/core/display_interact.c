/* The interact kind ("interact"): Sage's @interact, its declaration
 * (core/interact.h: its id, its controls) checked and rebuilt by the host,
 * and its first rendering, the items the driver sent after it up to its
 * end record, which its entry holds:
 *
 *   {"kind":"interact", "id", "controls":[...], "manual",
 *    "session_id" (the session whose interact_update moves it)
 *      or "note" (a stateless call: the controls need a session),
 *    "items":[entries as "display"'s, which display_out.c adds]}
 *
 * The model gets a line naming the controls; the rendering's own lines
 * follow it, as any item's. */
#include <stdlib.h>
#include <string.h>

#include "core/display_item.h"
#include "core/interact.h"

#define NO_SESSION_NOTE                                                                                           \
	"The controls need a session: this call had none, so this is the first rendering only. Run it in a session " \
	"(session_open) to move them."

static int check(struct sb_display_item *it, const struct sb_display_ctx *c, char *why, size_t whyn)
{
	char w[200];
	it->value = sb_interact_parse(it->data, it->len, w, sizeof w);
	if (it->value)
		return 0;
	snprintf(why, whyn, "an interact whose declaration is wrong: %s", w);
	return 1;
}

static json_t *entry(const struct sb_display *d, const struct sb_display_item *it)
{
	json_t *e = json_pack("{s:s, s:O, s:O, s:O}", "kind", "interact", "id", json_object_get(it->value, "id"),
			      "controls", json_object_get(it->value, "controls"), "manual",
			      json_object_get(it->value, "manual"));
	if (!e)
		return NULL;
	if (d->session[0])
		json_object_set_new(e, "session_id", json_string(d->session));
	else
		json_object_set_new(e, "note", json_string(NO_SESSION_NOTE));
	return e;
}

static void text(FILE *out, const struct sb_display *d, const struct sb_display_item *it)
{
	char *controls = sb_interact_summary(it->value);
	if (d->session[0])
		fprintf(out,
			"[interact %u (%s): %s. Viewers that render MCP Apps show these controls and the user may move "
			"them, which runs the function again in session %s; its first rendering follows]\n",
			it->index, json_string_value(json_object_get(it->value, "id")), controls ? controls : "",
			d->session);
	else
		fprintf(out,
			"[interact %u: %s. Its controls need a session (this call had none: run it with a session_id "
			"to let the user move them); its first rendering follows]\n",
			it->index, controls ? controls : "");
	free(controls);
}

static void schema(json_t *props)
{
	json_object_set_new(props, "id", json_pack("{s:s}", "type", "string"));
	json_object_set_new(props, "session_id", json_pack("{s:s}", "type", "string"));
	json_object_set_new(props, "note", json_pack("{s:s}", "type", "string"));
	json_object_set_new(props, "manual", json_pack("{s:s}", "type", "boolean"));
	json_object_set_new(props, "controls", json_pack("{s:s, s:{s:s}}", "type", "array", "items", "type", "object"));
	json_object_set_new(props, "items", json_pack("{s:s, s:{s:s}}", "type", "array", "items", "type", "object"));
}

const struct sb_display_kind sb_display_interact_kind = {
	.name = "interact", .wire = 'i', .cls = SB_DCLASS_ITEM, .opens_group = true,
	.check = check, .json = entry, .text = text, .schema = schema,
};

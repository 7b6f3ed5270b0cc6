/* What a job displayed, into a result: structuredContent's "display" (an
 * entry per item, in order), each kind's own list ("figures"), the MCP
 * content blocks (a figure's image), the model's lines, and per class what
 * was not shown and why. The one place that does it: every kind speaks
 * through its row. */
#include "core/display_out.h"

#include <stdio.h>

#include "core/display.h"
#include "core/display_caps.h"
#include "core/display_kinds.h"

static const char *const drop_names[SB_DROPS] = {
	[SB_DROP_OVER_COUNT] = "over_count",
	[SB_DROP_TOO_BIG] = "too_big",
	[SB_DROP_OVER_TOTAL] = "over_total",
	[SB_DROP_INVALID] = "invalid",
};

void sb_display_drop_text(const struct sb_display *d, enum sb_display_class c, enum sb_drop why, char *buf, size_t n)
{
	const struct sb_display_class_row *row = &sb_display_classes[c];
	switch (why) {
	case SB_DROP_OVER_COUNT:
		snprintf(buf, n, "a result carries at most %u %s", row->caps.max_count, row->nouns);
		return;
	case SB_DROP_TOO_BIG:
		snprintf(buf, n, "larger than %zu KiB%s", row->caps.max_one_bytes >> 10, row->too_big);
		return;
	case SB_DROP_OVER_TOTAL:
		snprintf(buf, n, "a result carries at most %zu KiB of %s", row->caps.max_total_bytes >> 10, row->nouns);
		return;
	case SB_DROP_INVALID:
	case SB_DROPS:
		break;
	}
	const char *detail = d->by_class[c].invalid_why;
	snprintf(buf, n, "%s (%s)", row->invalid, detail[0] ? detail : "malformed");
}

static void not_shown_json(const struct sb_display *d, enum sb_display_class c, json_t *o)
{
	if (!sb_display_dropped(d, c))
		return;
	const struct sb_display_tally *t = &d->by_class[c];
	json_t *a = json_array();
	for (int i = 0; i < SB_DROPS; i++) {
		if (!t->dropped[i])
			continue;
		char why[160];
		sb_display_drop_text(d, c, (enum sb_drop)i, why, sizeof why);
		json_array_append_new(a, json_pack("{s:s, s:s, s:i, s:i}", "reason", drop_names[i], "message", why,
						   "count", (int)t->dropped[i], "first", (int)t->first_dropped[i]));
	}
	json_object_set_new(o, sb_display_classes[c].not_shown_key, a);
}

json_t *sb_display_entries(const struct sb_display *d, long group)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < d->n; i++) {
		if (d->v[i].group != group)
			continue;
		json_t *e = d->v[i].kind->json(d, &d->v[i]);
		if (!e)
			continue;
		/* A group's own items are entries as the list's are: the list
		 * makes them, so a kind that opens one never calls back here. */
		if (d->v[i].kind->opens_group)
			json_object_set_new(e, "items", sb_display_entries(d, (long)i));
		json_array_append_new(a, e);
	}
	return a;
}

void sb_display_to_json(const struct sb_display *d, json_t *o)
{
	if (d->n)
		json_object_set_new(o, "display", sb_display_entries(d, -1));
	for (size_t k = 0; k < sb_display_kinds_count; k++) {
		const struct sb_display_kind *kind = sb_display_kinds[k];
		json_t *a = NULL;
		for (size_t i = 0; kind->list_key && i < d->n; i++) {
			if (d->v[i].kind != kind)
				continue;
			if (!a)
				a = json_array();
			json_t *e = kind->list_entry(&d->v[i]);
			if (e)
				json_array_append_new(a, e);
		}
		if (a)
			json_object_set_new(o, kind->list_key, a);
	}
	for (int c = 0; c < SB_DCLASSES; c++)
		not_shown_json(d, (enum sb_display_class)c, o);
}

void sb_display_content(const struct sb_display *d, json_t **content)
{
	for (size_t i = 0; i < d->n; i++) {
		json_t *block = d->v[i].kind->content ? d->v[i].kind->content(&d->v[i]) : NULL;
		if (!block)
			continue;
		if (!*content)
			*content = json_array();
		json_array_append_new(*content, block);
	}
}

/* The display items' drops first, then the figures' (as a reader meets
 * them: the figures' lines come with the items'). */
static const enum sb_display_class text_order[SB_DCLASSES] = {SB_DCLASS_ITEM, SB_DCLASS_FIGURE};

void sb_display_text(FILE *out, const struct sb_display *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct sb_display_item *it = &d->v[i];
		if (!it->is_picture && it->kind->text)
			it->kind->text(out, d, it);
	}
	char line[200];
	for (int k = 0; k < SB_DCLASSES; k++) {
		enum sb_display_class c = text_order[k];
		const struct sb_display_class_row *row = &sb_display_classes[c];
		const struct sb_display_tally *t = &d->by_class[c];
		for (int why = 0; why < SB_DROPS; why++) {
			unsigned n = t->dropped[why];
			if (!n)
				continue;
			sb_display_drop_text(d, c, (enum sb_drop)why, line, sizeof line);
			if (n == 1)
				fprintf(out, "[%s %u not shown: %s]\n", row->noun, t->first_dropped[why], line);
			else
				fprintf(out, "[%u %s not shown, the first is %s %u: %s]\n", n, row->nouns, row->first_noun,
					t->first_dropped[why], line);
		}
	}
}

static json_t *not_shown_schema(void)
{
	return json_pack("{s:s, s:{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}}}", "type", "array", "items", "type",
			 "object", "properties", "reason", "type", "string", "message", "type", "string", "count",
			 "type", "integer", "first", "type", "integer");
}

void sb_display_schema(json_t *properties)
{
	json_t *names = json_array(), *props = json_object();
	json_object_set_new(props, "kind", json_pack("{s:s, s:o}", "type", "string", "enum", names));
	for (size_t k = 0; k < sb_display_kinds_count; k++) {
		const struct sb_display_kind *kind = sb_display_kinds[k];
		json_array_append_new(names, json_string(kind->name));
		kind->schema(props);
		if (kind->list_key)
			json_object_set_new(properties, kind->list_key, kind->list_schema());
	}
	/* What was displayed, in order; a figure's bytes are its image
	 * content block, which its entry names. */
	json_object_set_new(properties, "display",
			    json_pack("{s:s, s:{s:s, s:[s], s:o}}", "type", "array", "items", "type", "object",
				      "required", "kind", "properties", props));
	for (int c = 0; c < SB_DCLASSES; c++)
		json_object_set_new(properties, sb_display_classes[c].not_shown_key, not_shown_schema());
}

/* Figures in a tool result: an MCP image content block per figure shown
 * (PNG, base64; image content exists since revision 2024-11-05), and a text
 * line naming each, because some clients show images to the user without
 * passing them to the model (LM Studio) or pass them a turn late (Claude
 * Desktop). structuredContent carries only their metadata
 * (sb_figures_to_json), never the bytes a second time.
 *
 * Stateless calls and session calls build their results with the same
 * functions; a session sets each figure's saved_path first. */
#ifndef SAGEBOX_TOOLS_FIGURES_H
#define SAGEBOX_TOOLS_FIGURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/figure.h"
#include "tools/tool.h"

/* "[figure 1: 800×600 PNG]", or with saved_path (may be NULL)
 * "[figure 1: 800×600 PNG, saved as /work/figure-1.png]". */
void sb_figure_line(char *buf, size_t n, const struct sb_figure *f, const char *saved_path);
/* Something was displayed (a figure or a display item, shown or not). */
bool sb_figures_any(const struct sb_figures *figs);
/* In display order, a line per figure shown (naming its saved_path when
 * set) and per display item the model reads ("$$ LaTeX $$"; text items are
 * in stdout), then a line per reason some were not shown, each ending in
 * "\n". */
void sb_figures_text(FILE *out, const struct sb_figures *figs);
/* Append an image block per figure shown, in order. */
void sb_tool_result_figures(struct sb_tool_result *r, const struct sb_figures *figs);

#endif

/* What runs inside the sandbox for a job: the embedded driver, started by
 * the sandbox's python, reading the code on stdin. */
#ifndef SAGEBOX_COMMAND_H
#define SAGEBOX_COMMAND_H

#include "config/config.h"
#include "core/job.h"

extern const char sb_driver_py[];

/* argv for a fresh job (static storage except the config's strings; valid
 * while cfg lives). out must hold 8 entries. */
void sb_command_once(const struct sb_config *cfg, enum sb_lang lang, const char *argv_out[8]);

#endif

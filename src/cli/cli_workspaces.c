/* sagebox workspaces list|show|rm|export|import: the named workspaces on
 * disk, for the user (never a tool: the model can list its workspaces and
 * open them, not delete, export or import them). An operator of the HTTP
 * service runs it as the service's user with --token NAME for the
 * workspaces of that token's client. The store is workspaces/store.h; the
 * copies are transfer.h's walks, which take regular files and directories
 * only and never follow a link. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/exit_status.h"
#include "util/fd.h"
#include "workspaces/fsafe.h"
#include "workspaces/store.h"
#include "workspaces/transfer.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sagebox workspaces list [--all] [--json]\n"
		"       sagebox workspaces show NAME [--json]\n"
		"       sagebox workspaces rm NAME\n"
		"       sagebox workspaces export NAME DIR\n"
		"       sagebox workspaces import DIR NAME\n"
		"\n"
		"The named workspaces a model's sessions keep on disk (session_open with\n"
		"workspace: NAME): their files, and the variables session_save saved.\n"
		"They are in $XDG_DATA_HOME/sagebox/workspaces (default\n"
		"~/.local/share/sagebox/workspaces; as root without XDG_DATA_HOME:\n"
		"/var/lib/sagebox/workspaces), one directory per client.\n"
		"\n"
		"  list          your workspaces: size, files, last used, open or not\n"
		"  show          one workspace: its files and its saved variables\n"
		"  rm            delete one (refused while a session has it open)\n"
		"  export        copy its files into DIR (new, or an empty directory)\n"
		"  import        make workspace NAME (new) from the files in DIR\n"
		"\n"
		"Only regular files and directories are copied, and of a file's mode\n"
		"only whether it is executable; links, FIFOs and devices are skipped,\n"
		"never followed.\n"
		"\n"
		"  --token NAME  the workspaces of the HTTP client with this token name\n"
		"                (run as the HTTP service's user), not the local user's\n"
		"  --all         list: every client's\n"
		"  --json        as JSON\n");
}

struct opts {
	bool json, all, help;
	const char *token;
	const char *args[3];
	int nargs;
};

static int parse(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof *o);
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			o->json = true;
		else if (!strcmp(argv[i], "--all"))
			o->all = true;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			o->help = true;
		else if (!strcmp(argv[i], "--token") && i + 1 < argc)
			o->token = argv[++i];
		else if (!strncmp(argv[i], "--token=", 8))
			o->token = argv[i] + 8;
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "sagebox workspaces: unknown option '%s'\n", argv[i]);
			return -1;
		} else if (o->nargs < 3) {
			o->args[o->nargs++] = argv[i];
		} else {
			fprintf(stderr, "sagebox workspaces: too many arguments\n");
			return -1;
		}
	}
	return 0;
}

static double mib(json_t *v)
{
	return (double)json_integer_value(v) / (1 << 20);
}

static void when(char *out, size_t n, json_t *v)
{
	time_t t = (time_t)json_integer_value(v);
	struct tm tm;
	if (t <= 0 || !localtime_r(&t, &tm) || !strftime(out, n, "%Y-%m-%d %H:%M", &tm))
		snprintf(out, n, "never");
}

static void print_one(const char *client, json_t *w)
{
	char used[32];
	when(used, sizeof used, json_object_get(w, "last_used"));
	json_t *held = json_object_get(w, "held_by");
	printf("%-24s %9.1f MiB %7lld  %-16s %s%s%s%s%s\n", json_string_value(json_object_get(w, "name")),
	       mib(json_object_get(w, "bytes")), (long long)json_integer_value(json_object_get(w, "entries")), used,
	       client ? client : "", json_is_object(held) ? " open" : "",
	       json_is_object(held) && json_string_length(json_object_get(held, "session")) ? " in " : "",
	       json_is_object(held) ? json_string_value(json_object_get(held, "session")) : "",
	       json_is_object(json_object_get(w, "state")) ? " (saved variables)" : "");
}

static int cmd_list(struct sb_ws_store *st, const char *client, const struct opts *o)
{
	json_t *out = json_object();
	json_t *clients = o->all ? sb_ws_clients(st) : json_pack("[s]", client);
	size_t i;
	json_t *c;
	json_array_foreach(clients, i, c)
		json_object_set_new(out, json_string_value(c), sb_ws_list(st, json_string_value(c)));
	json_decref(clients);
	if (o->json) {
		sb_cli_print_json(o->all ? out : json_incref(json_object_get(out, client)));
		if (!o->all)
			json_decref(out);
		return 0;
	}
	const char *k;
	json_t *list;
	size_t shown = 0;
	json_object_foreach(out, k, list) {
		json_t *w;
		json_array_foreach(list, i, w) {
			if (!shown++)
				printf("%-24s %13s %7s  %-16s\n", "NAME", "SIZE", "ENTRIES", "LAST USED");
			print_one(o->all ? k : NULL, w);
		}
	}
	if (!shown)
		printf("no workspaces%s in %s\n", o->all ? "" : " of this client", st->root);
	json_decref(out);
	return 0;
}

struct listing {
	json_t *files;
	unsigned more;
};

static int list_fn(void *ctx, const char *rel, const struct stat *st)
{
	struct listing *l = ctx;
	if (json_array_size(l->files) >= 500) {
		l->more++;
		return 0;
	}
	json_array_append_new(l->files, json_pack("{s:s, s:s, s:I}", "path", rel, "type",
						   S_ISDIR(st->st_mode) ? "directory" : S_ISREG(st->st_mode) ? "file" : "other",
						   "size", (json_int_t)st->st_size));
	return 0;
}

static int cmd_show(struct sb_ws_store *st, const char *client, const char *name, const struct opts *o)
{
	struct sb_error err = {0};
	json_t *info = sb_ws_info(st, client, name);
	struct sb_ws ws;
	if (!info || sb_ws_open(st, client, name, false, &ws, &err)) {
		json_decref(info);
		if (!err.msg[0])
			sb_fail(&err, "no workspace named %s", name);
		sb_cli_print_error(&err);
		return SB_EXIT_USAGE;
	}
	struct listing l = {json_array(), 0};
	sb_fs_walk(ws.files_fd, list_fn, &l);
	sb_ws_close(&ws);
	json_object_set_new(info, "files", l.files);
	json_object_set_new(info, "files_more", json_integer(l.more));
	if (o->json) {
		sb_cli_print_json(info);
		return 0;
	}
	print_one(NULL, info);
	size_t i;
	json_t *f;
	json_array_foreach(l.files, i, f)
		printf("  %s%s  %lld\n", json_string_value(json_object_get(f, "path")),
		       !strcmp(json_string_value(json_object_get(f, "type")), "directory") ? "/" : "",
		       (long long)json_integer_value(json_object_get(f, "size")));
	if (l.more)
		printf("  ... and %u more\n", l.more);
	json_t *state = json_object_get(info, "state");
	if (json_is_object(state)) {
		char at[32];
		when(at, sizeof at, json_object_get(state, "saved_at"));
		printf("saved variables (%s, %s):", at, json_string_value(json_object_get(state, "lang")));
		json_array_foreach(json_object_get(state, "saved"), i, f)
			printf("%s%s", i ? ", " : " ", json_string_value(f));
		printf("\n");
		json_array_foreach(json_object_get(state, "not_saved"), i, f)
			printf("  not saved: %s (%s)\n", json_string_value(json_object_get(f, "name")),
			       json_string_value(json_object_get(f, "why")));
	}
	json_decref(info);
	return 0;
}

static void print_skipped(json_t *skipped, unsigned more)
{
	size_t i;
	json_t *v;
	json_array_foreach(skipped, i, v)
		printf("  skipped %s: %s\n", json_string_value(json_object_get(v, "path")),
		       json_string_value(json_object_get(v, "why")));
	if (more)
		printf("  skipped %u more\n", more);
}

/* ws (held) into dir, a new or empty directory. */
static int export_into(struct sb_ws *ws, const char *name, const char *dir)
{
	struct sb_error err = {0};
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "sagebox: cannot make %s: %s\n", dir, strerror(errno));
		return SB_EXIT_USAGE;
	}
	SB_AUTO_FD dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat dst;
	if (dfd < 0 || fstat(dfd, &dst) < 0) {
		fprintf(stderr, "sagebox: cannot open %s as a directory: %s\n", dir, strerror(errno));
		return SB_EXIT_USAGE;
	}
	DIR *d = fdopendir(fcntl(dfd, F_DUPFD_CLOEXEC, 0));
	int entries = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		entries += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	if (entries) {
		fprintf(stderr, "sagebox: %s is not empty: export writes into a new or empty directory\n", dir);
		return SB_EXIT_USAGE;
	}
	json_t *skipped = json_array();
	unsigned more = 0;
	uint64_t bytes = 0, n = 0;
	struct sb_ws_copy_modes modes = {0644, 0755, 0755};
	int rc = SB_EXIT_USAGE;
	if (sb_ws_copy_tree(ws->files_fd, dfd, &modes, UINT64_MAX, UINT64_MAX, skipped, &more, &bytes, &n, &err)) {
		sb_cli_print_error(&err);
	} else {
		printf("exported workspace %s to %s: %llu files and directories, %.1f MiB\n", name, dir,
		       (unsigned long long)n, (double)bytes / (1 << 20));
		print_skipped(skipped, more);
		rc = 0;
	}
	json_decref(skipped);
	return rc;
}

static int cmd_export(struct sb_ws_store *st, const char *client, const char *name, const char *dir)
{
	struct sb_error err = {0};
	struct sb_ws ws;
	struct sb_ws_holder h = {.pid = (long)getpid(), .since = (long long)time(NULL)};
	snprintf(h.session, sizeof h.session, "sagebox workspaces export");
	if (sb_ws_open(st, client, name, false, &ws, &err) || sb_ws_hold(&ws, &h, &err)) {
		sb_ws_close(&ws);
		sb_cli_print_error(&err);
		return SB_EXIT_USAGE;
	}
	int rc = export_into(&ws, name, dir);
	sb_ws_close(&ws);
	return rc;
}

/* src into a new workspace name of client, under the client's lock: made
 * aside and renamed into place, so that a workspace appears whole or not. */
static int import_locked(struct sb_ws_store *st, const struct sb_config *cfg, const char *client, int src,
			 const char *dir, const char *name)
{
	struct sb_error err = {0};
	SB_AUTO_FD cfd = sb_fs_open_beneath(st->root_fd, client, O_PATH | O_DIRECTORY, 0);
	char tmp[64];
	snprintf(tmp, sizeof tmp, "+import.%ld", (long)getpid());
	struct stat s;
	if (cfd >= 0 && fstatat(cfd, name, &s, AT_SYMLINK_NOFOLLOW) == 0) {
		fprintf(stderr, "sagebox: a workspace named %s exists: remove it first (sagebox workspaces rm %s)\n",
			name, name);
		return SB_EXIT_USAGE;
	}
	SB_AUTO_FD wsdir = -1;
	if (cfd < 0 || mkdirat(cfd, tmp, 0700) < 0 || (wsdir = sb_fs_mkdirs_beneath(cfd, tmp, 0700, false)) < 0 ||
	    mkdirat(wsdir, "files", 0700) < 0) {
		fprintf(stderr, "sagebox: cannot make workspace %s: %s\n", name, strerror(errno));
		return SB_EXIT_USAGE;
	}
	SB_AUTO_FD into = sb_fs_open_beneath(wsdir, "files", O_PATH | O_DIRECTORY, 0);
	uint64_t cap = sb_ws_cap_for(st, client, name, cfg->workspace_bytes, cfg->workspaces_total_bytes);
	json_t *skipped = json_array();
	unsigned more = 0;
	uint64_t bytes = 0, n = 0;
	struct sb_ws_copy_modes modes = {0600, 0700, 0700};
	int rc = SB_EXIT_USAGE;
	if (into < 0 || sb_ws_copy_tree(src, into, &modes, cap, SB_WS_ENTRIES_MAX, skipped, &more, &bytes, &n, &err)) {
		if (err.errnum == ENOSPC || !err.msg[0])
			sb_fail(&err, "%s does not fit: a workspace may hold %.1f MiB here (workspace_size, and what "
				      "workspaces_total leaves) and %u files and directories", dir,
				(double)cap / (1 << 20), SB_WS_ENTRIES_MAX);
		sb_cli_print_error(&err);
		sb_fs_remove_at(cfd, tmp);
	} else if (renameat2(cfd, tmp, cfd, name, RENAME_NOREPLACE) < 0) {
		fprintf(stderr, "sagebox: cannot make workspace %s: %s\n", name, strerror(errno));
		sb_fs_remove_at(cfd, tmp);
	} else {
		struct sb_ws ws;
		if (!sb_ws_open(st, client, name, false, &ws, &err)) {
			ws.bytes = bytes;
			ws.entries = n;
			sb_ws_meta_write(&ws, NULL);
			sb_ws_close(&ws);
		}
		printf("imported %s as workspace %s: %llu files and directories, %.1f MiB\n", dir, name,
		       (unsigned long long)n, (double)bytes / (1 << 20));
		print_skipped(skipped, more);
		rc = 0;
	}
	json_decref(skipped);
	return rc;
}

static int cmd_import(struct sb_ws_store *st, const struct sb_config *cfg, const char *client, const char *dir,
		      const char *name)
{
	struct sb_error err = {0};
	if (!sb_ws_name_check(name, &err)) {
		sb_cli_print_error(&err);
		return SB_EXIT_USAGE;
	}
	SB_AUTO_FD src = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (src < 0) {
		fprintf(stderr, "sagebox: cannot open %s as a directory: %s\n", dir, strerror(errno));
		return SB_EXIT_USAGE;
	}
	int cl = sb_ws_client_lock(st, client, &err);
	if (cl < 0) {
		sb_cli_print_error(&err);
		return SB_EXIT_FAILURE;
	}
	int rc = import_locked(st, cfg, client, src, dir, name);
	sb_ws_client_unlock(cl);
	return rc;
}

int sb_cli_workspaces(int argc, char **argv)
{
	struct sb_config cfg;
	int nrest = 0;
	char **rest = sb_cli_settings(argc, argv, &cfg, &nrest);
	if (!rest)
		return SB_EXIT_USAGE;
	struct opts o;
	int bad = parse(nrest - 1, rest + 1, &o); /* (rest[0]: the command's name) */
	free(rest);
	if (bad || !o.nargs || o.help) {
		usage(bad || (!o.nargs && !o.help) ? stderr : stdout);
		return bad || (!o.nargs && !o.help) ? SB_EXIT_USAGE : 0;
	}
	if (!strcmp(o.args[0], "--help") || !strcmp(o.args[0], "help")) {
		usage(stdout);
		return 0;
	}
	const char *cmd = o.args[0];
	static const struct {
		const char *name;
		int nargs;
		bool create;
	} cmds[] = {{"list", 1, false}, {"show", 2, false}, {"rm", 2, false}, {"export", 3, false}, {"import", 3, true}};
	size_t k = 0;
	while (k < sizeof cmds / sizeof *cmds && strcmp(cmds[k].name, cmd))
		k++;
	if (k == sizeof cmds / sizeof *cmds || o.nargs != cmds[k].nargs) {
		if (k == sizeof cmds / sizeof *cmds)
			fprintf(stderr, "sagebox workspaces: unknown command '%s'\n\n", cmd);
		else
			fprintf(stderr, "sagebox workspaces %s: wrong number of arguments\n\n", cmd);
		usage(stderr);
		return SB_EXIT_USAGE;
	}
	struct sb_error err = {0};
	char client[SB_WS_CLIENT_MAX] = SB_WS_CLIENT_LOCAL;
	if (o.token && sb_ws_client_of_token(o.token, client, sizeof client, &err)) {
		sb_cli_print_error(&err);
		return SB_EXIT_USAGE;
	}
	struct sb_ws_store st;
	if (sb_ws_store_open(&st, cmds[k].create, &err)) {
		if (err.errnum == ENOENT && !cmds[k].create) {
			if (!strcmp(cmd, "list")) {
				if (o.json)
					sb_cli_print_json(o.all ? json_object() : json_array());
				else
					printf("no workspaces yet\n");
				return 0;
			}
			fprintf(stderr, "sagebox: no workspace named %s (there are none yet)\n", o.args[1]);
			return SB_EXIT_USAGE;
		}
		sb_cli_print_error(&err);
		return SB_EXIT_FAILURE;
	}
	int rc;
	if (!strcmp(cmd, "list"))
		rc = cmd_list(&st, client, &o);
	else if (!strcmp(cmd, "show"))
		rc = cmd_show(&st, client, o.args[1], &o);
	else if (!strcmp(cmd, "rm")) {
		rc = sb_ws_remove(&st, client, o.args[1], &err) ? SB_EXIT_USAGE : 0;
		if (rc)
			sb_cli_print_error(&err);
		else
			printf("removed workspace %s\n", o.args[1]);
	} else if (!strcmp(cmd, "export"))
		rc = cmd_export(&st, client, o.args[1], o.args[2]);
	else
		rc = cmd_import(&st, &cfg, client, o.args[1], o.args[2]);
	sb_ws_store_close(&st);
	return rc;
}

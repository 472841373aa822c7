/* SPDX-License-Identifier: MIT */
/*
 * `uroce wireshark-plugin install [--dir DIR] | path | print`: put the
 * Wireshark Lua plugin that checks ICRCs (wireshark/uroce.lua, compiled into
 * this binary) where Wireshark loads it. The folder is the "Personal Lua
 * Plugins" line of `tshark -G folders` (so it follows Wireshark's own rules
 * for $HOME and versions), else ~/.local/lib/wireshark/plugins, which is that
 * folder on Linux for Wireshark 3.x and 4.x. The file is written under a
 * temporary name and renamed, so a running Wireshark never reads half of it.
 * This file does not check ICRCs itself; `uroce decode` does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define CLI_WS_FILE "uroce.lua"
#define CLI_WS_FOLDER_KEY "Personal Lua Plugins:"

static void cli_ws_usage(FILE *out)
{
	fprintf(out,
		"usage: uroce wireshark-plugin install [--dir DIR] | path | print\n"
		"  install   write the ICRC-checking Lua plugin (" CLI_WS_FILE ") into DIR, by\n"
		"            default Wireshark's personal Lua plugin folder (tshark -G folders)\n"
		"  path      print where install would write it\n"
		"  print     write the plugin to stdout (for tshark -X lua_script:FILE)\n");
}

/* Wireshark's personal Lua plugin folder into dir: 0, or -ENOENT when
 * neither tshark nor $HOME says where it is. */
static int cli_ws_folder(char *dir, size_t len)
{
	char line[4096];
	const char *home;
	FILE *p = popen("tshark -G folders 2>/dev/null", "r");
	int found = 0;

	if (p) {
		while (fgets(line, sizeof(line), p)) {
			char *v;

			if (found || strncmp(line, CLI_WS_FOLDER_KEY, strlen(CLI_WS_FOLDER_KEY)))
				continue;
			v = line + strlen(CLI_WS_FOLDER_KEY);
			v += strspn(v, " \t");
			v[strcspn(v, "\r\n")] = '\0';
			if (*v && (size_t)snprintf(dir, len, "%s", v) < len)
				found = 1;
		}
		pclose(p);
	}
	if (found)
		return 0;
	home = getenv("HOME");
	if (!home || !*home ||
	    (size_t)snprintf(dir, len, "%s/.local/lib/wireshark/plugins", home) >= len)
		return -ENOENT;
	return 0;
}

/* mkdir -p: 0 or -errno. */
static int cli_ws_mkdirs(const char *dir)
{
	char buf[4096];
	size_t n = strlen(dir);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, n + 1);
	for (char *s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Write the plugin to dir/uroce.lua through a temporary file: 0 or -errno. */
static int cli_ws_write(const char *dir, char *path, size_t len)
{
	char tmp[4200];
	FILE *f;
	int err = cli_ws_mkdirs(dir);

	if (err)
		return err;
	if ((size_t)snprintf(path, len, "%s/%s", dir, CLI_WS_FILE) >= len ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	if (fwrite(cli_wireshark_lua, 1, cli_wireshark_lua_len, f) != cli_wireshark_lua_len) {
		err = -EIO;
		fclose(f);
	} else if (fclose(f)) {
		err = -errno;
	}
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int cli_wireshark_plugin(int argc, char **argv)
{
	char dir[4096], path[4200];
	const char *explicit_dir = NULL;
	int err;

	if (argc < 2) {
		cli_ws_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		cli_ws_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(argv[1], "print") && argc == 2) {
		fwrite(cli_wireshark_lua, 1, cli_wireshark_lua_len, stdout);
		return fflush(stdout) ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	}
	if (!strcmp(argv[1], "install") && argc == 4 && !strcmp(argv[2], "--dir"))
		explicit_dir = argv[3];
	else if (!(argc == 2 && (!strcmp(argv[1], "install") || !strcmp(argv[1], "path")))) {
		fprintf(stderr, "uroce wireshark-plugin: bad arguments\n");
		cli_ws_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (explicit_dir) {
		if ((size_t)snprintf(dir, sizeof(dir), "%s", explicit_dir) >= sizeof(dir)) {
			fprintf(stderr, "uroce wireshark-plugin: directory name too long\n");
			return CLI_EXIT_USAGE;
		}
	} else if (cli_ws_folder(dir, sizeof(dir))) {
		fprintf(stderr, "uroce wireshark-plugin: cannot tell where Wireshark's personal "
				"Lua plugins are (no tshark, no $HOME); use --dir DIR\n");
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "path")) {
		printf("%s/%s\n", dir, CLI_WS_FILE);
		return CLI_EXIT_OK;
	}
	err = cli_ws_write(dir, path, sizeof(path));
	if (err) {
		fprintf(stderr, "uroce wireshark-plugin: cannot write %s/%s: %s\n", dir,
			CLI_WS_FILE, strerror(-err));
		return CLI_EXIT_USAGE;
	}
	printf("installed %s (Wireshark loads it at its next start; check with "
	       "tshark -G plugins | grep uroce)\n",
	       path);
	return CLI_EXIT_OK;
}

/* pmucanary image: build (or find in the cache) the guest kernel + initramfs. */
#include "commands.h"
#include "image.h"
#include "inject.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>

static int image_inject(const char *disk, const char *out, const char *agent, gboolean tcg,
			gboolean json);

int cmd_image(int argc, char **argv)
{
	g_autofree char *inject = NULL;
	gboolean tcg = FALSE;
	g_autofree char *kernel = NULL, *modules = NULL, *agent = NULL, *out = NULL;
	gboolean compress = FALSE, json = FALSE;
	GOptionEntry entries[] = {
		{ "kernel", 'k', 0, G_OPTION_ARG_FILENAME, &kernel,
		  "guest kernel (default: newest readable /boot/vmlinuz-*)", "PATH" },
		{ "modules", 'm', 0, G_OPTION_ARG_FILENAME, &modules,
		  "module tree (default: /lib/modules/<release>)", "DIR" },
		{ "agent", 'a', 0, G_OPTION_ARG_FILENAME, &agent,
		  "guest agent binary (default: guest-images/pmucanary-agent next to pmucanary)", "PATH" },
		{ "out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
		  "image cache directory (default: /var/cache/pmucanary/images as root)", "DIR" },
		{ "compress", 'z', 0, G_OPTION_ARG_NONE, &compress, "gzip the initramfs", NULL },
		{ "json", 0, 0, G_OPTION_ARG_NONE, &json, "print the manifest as JSON", NULL },
		{ "inject", 0, 0, G_OPTION_ARG_FILENAME, &inject,
		  "put the agent into a copy (qcow2 overlay) of a distribution disk image; "
		  "--out names the overlay (default DISK.pmucanary.qcow2)", "DISK" },
		{ "tcg", 0, 0, G_OPTION_ARG_NONE, &tcg,
		  "with --inject: libguestfs's appliance under TCG even where KVM works", NULL },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- build the guest initramfs for a kernel");
	g_autoptr(image_info) info = NULL;
	struct image_options opt = { 0 };
	gint64 t0;
	int ret;

	g_option_context_add_main_entries(ctx, entries, NULL);
	g_option_context_set_description(ctx,
		"Prints the image directory: vmlinuz, initramfs.cpio, manifest.json.\n"
		"The directory is named after a hash of its inputs; a second call finds it.");
	if (!cli_parse(ctx, "image", &argc, &argv))
		return EXIT_USAGE;
	if (argc > 1) {
		fprintf(stderr, "pmucanary image: unexpected argument '%s'\n", argv[1]);
		return EXIT_USAGE;
	}
	if (inject)
		return image_inject(inject, out, agent, tcg, json);
	/* Given, it must be one: "no modules dir" is only the default's fallback. */
	if (modules && !g_file_test(modules, G_FILE_TEST_IS_DIR)) {
		fprintf(stderr, "pmucanary image: --modules %s: no such directory\n", modules);
		return EXIT_USAGE;
	}
	opt.kernel = kernel;
	opt.modules_dir = modules;
	opt.agent = agent;
	opt.out_dir = out;
	opt.compress = compress;
	t0 = g_get_monotonic_time();
	ret = image_build(&opt, &info);
	if (ret < 0) {
		fprintf(stderr, "pmucanary image: %s\n", pc_errmsg());
		return pc_errno_bad_path(ret) ? EXIT_USAGE : EXIT_INFRA;
	}
	pc_info("image: %s in %.1f ms (%u modules)", info->cached ? "found" : "built",
		(g_get_monotonic_time() - t0) / 1000.0, info->modules->len);
	if (json) {
		json_t *j = image_manifest_json(info);

		json_object_set_new(j, "cached", json_boolean(info->cached));
		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
		json_decref(j);
	} else {
		printf("%s\n", info->dir);
	}
	return EXIT_CLEAN;
}

/* --inject: the disk image keeps its bytes; what was found goes to stdout. */
static int image_inject(const char *disk, const char *out, const char *agent, gboolean tcg,
			gboolean json)
{
	struct inject_options opt = { .disk = disk, .out = out, .agent = agent, .force_tcg = tcg };
	g_autoptr(inject_report) r = NULL;
	int ret = inject_disk(&opt, &r);

	if (ret < 0) {
		fprintf(stderr, "pmucanary image: %s\n", pc_errmsg());
		return ret == -EIO || ret == -ENOMEM ? EXIT_INFRA : EXIT_USAGE;
	}
	if (json) {
		json_t *j = inject_report_json(r);

		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
		json_decref(j);
		return EXIT_CLEAN;
	}
	{
		g_autoptr(GString) text = inject_report_text(r);

		fputs(text->str, stdout);
	}
	return EXIT_CLEAN;
}

/* Replay kernels: real PMU bugs' shapes on a software PMU, in real kernels
 * (design.md "kernel"; `pmucanary lab --kernel replay:NAME[+NAME...][:LABEL]`).
 *
 * Our machines have no hardware PMU, so the real bugs (PEBS armed across VM
 * entry in 2012, guest-only precise events in 2025...) cannot fire here. A
 * replay kernel is Debian's linux-source-6.1 with the lab-host config
 * (guest-images/kconfig/lab-host.config) and one or more patches from
 * guest-images/replay/NAME.patch: a rule over the attr of a software event
 * that is scheduled in on a CPU, and what KVM does to a guest it enters on
 * that CPU (or to the host). A CI lab or a vendor boots one as a lab host
 * to prove that its rig sees kernel-made harm before its clean verdicts
 * mean anything.
 *
 * Each patch starts with a header that `lab --list-replays` prints:
 *
 *   pmucanary replay kernel patch
 *   Replay: NAME          (= the file name without .patch)
 *   Replays: the real commit or bug it stands for
 *   Rule: the attrs it acts on, in one line
 *   Harm: the verdicts it should give
 *   <a blank line, then free text, then the unified diff>
 *
 * `stock` names the lab-host kernel with no patch (the "fixed" world). */
#ifndef PMUCANARY_REPLAY_H
#define PMUCANARY_REPLAY_H

#include <glib.h>

#define REPLAY_PREFIX "replay:"
#define REPLAY_STOCK "stock"
#define REPLAY_MAX_PATCHES 8
#define REPLAY_HEADER_FIRST "pmucanary replay kernel patch"

struct replay {
	char *name;    /* "pebs-2012-harm" */
	char *path;    /* the .patch file */
	char *replays; /* the header's fields */
	char *rule;
	char *harm;
};
void replay_free(struct replay *r);
typedef struct replay replay;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(replay, replay_free)

/* Reads one patch's header. -EINVAL naming PATH:LINE and the field for a
 * header that is not one (a missing or repeated field, an unknown one, a
 * Replay that is not the file's name, no diff after it); open()'s errno
 * when it cannot be read. */
int replay_read(const char *path, struct replay **out);

/* <image_guest_images_dir()>/replay; NULL when that cannot be found. */
char *replay_dir(void);

/* Every DIR/NAME.patch, read with replay_read(), sorted by name: a
 * GPtrArray of struct replay *. The first bad header fails the whole list. */
int replay_list(const char *dir, GPtrArray **out);

/* Splits a LIST ("pebs-2012-harm+pebs-2012-fix", or "stock") into the
 * patch paths under dir, in the order given: -EINVAL naming the unknown or
 * repeated name and the ones there are. "stock" stands alone. */
int replay_patches(const char *dir, const char *list, GPtrArray **paths);

/* Builds (or finds cached) the lab-host kernel with LIST's patches and sets
 * *image to its bzImage. -EINVAL for a bad LIST (see replay_patches),
 * image_build_kernel()'s errors otherwise. */
int replay_kernel(const char *list, char **image);

#endif

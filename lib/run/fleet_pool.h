/* The libvirt fleet behind the runner's guest interface (runner.h
 * struct runner_guests). */
#ifndef PMUCANARY_FLEET_POOL_H
#define PMUCANARY_FLEET_POOL_H

#include "runner.h"

#include <stdbool.h>

/* The real guests: a libvirt fleet on uri (NULL: qemu:///system), under
 * TCG when tcg or when /dev/kvm is missing. Connects lazily in start().
 * keep_disks: disk guests' overlays stay after the run (run --keep). */
int runner_fleet_guests(const char *uri, bool tcg, bool keep_disks, struct runner_guests *out);
void runner_fleet_guests_free(struct runner_guests *g);

#endif

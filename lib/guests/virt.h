/* The one wrapper around the libvirt C API.
 *
 * Every libvirt call of the project goes through here; a failure becomes
 * -errno with a pc_fail() message built from virGetLastError(). The first
 * virt_connect() registers libvirt's default event loop and runs it on a
 * detached thread, so callbacks (lifecycle, stream) arrive on that thread. */
#ifndef PMUCANARY_VIRT_H
#define PMUCANARY_VIRT_H

#include <glib.h>
#include <libvirt/libvirt.h>
#include <stdbool.h>

/* Registers the default event implementation and starts its thread (once). */
int virt_event_loop_start(void);

int virt_connect(const char *uri, virConnectPtr *out);
void virt_close(virConnectPtr conn);
/* true when the hypervisor accepts type='kvm' for x86_64. */
bool virt_kvm_supported(virConnectPtr conn);
/* Whether <cpu mode=NAME> is supported for virttype ("kvm"/"qemu"). */
bool virt_cpu_mode_supported(virConnectPtr conn, const char *virttype, const char *mode);
/* 9000000 for 9.0.0, 0 on error. */
unsigned long virt_lib_version(virConnectPtr conn);
unsigned long virt_hv_version(virConnectPtr conn);

/* A transient domain; autodestroy: gone when this connection closes. */
int virt_domain_create(virConnectPtr conn, const char *xml, bool autodestroy,
		       virDomainPtr *out);
/* 0 also when the domain is already gone or stopped. */
int virt_domain_destroy(virDomainPtr dom);
int virt_domain_lookup(virConnectPtr conn, const char *name, virDomainPtr *out);
int virt_domain_suspend(virDomainPtr dom);
int virt_domain_resume(virDomainPtr dom);
int virt_domain_inject_nmi(virDomainPtr dom);
/* Saves dom's memory and device state to path (the domain stops; a
 * transient one is gone). */
int virt_domain_save(virDomainPtr dom, const char *path);
/* Starts the domain saved at path, running, and looks it up by its name
 * (the saved XML's: a restore cannot rename, nor change the UUID). Not
 * AUTODESTROY: libvirt has no such restore flag. */
int virt_domain_restore(virConnectPtr conn, const char *path, const char *name, virDomainPtr *out);
/* VIR_DOMAIN_RUNNING etc., or -errno. */
int virt_domain_state(virDomainPtr dom, int *reason);
const char *virt_domain_name(virDomainPtr dom);
/* The domain's UUID as text into buf (VIR_UUID_STRING_BUFLEN); "" on error. */
void virt_domain_uuid(virDomainPtr dom, char *buf);
void virt_domain_free(virDomainPtr dom);
/* Domains whose name starts with prefix, running or only defined
 * (virDomainPtr, owned). */
int virt_domains_list(virConnectPtr conn, const char *prefix, GPtrArray **out);
/* <metadata> element of namespace uri, or NULL (no pc_fail) when absent. */
char *virt_domain_metadata(virDomainPtr dom, const char *uri);

typedef void (*virt_lifecycle_cb)(virDomainPtr dom, int event, int detail, void *opaque);
typedef void (*virt_reboot_cb)(virDomainPtr dom, void *opaque);
/* Registers for lifecycle and reboot events on every domain. */
int virt_events_register(virConnectPtr conn, virt_lifecycle_cb life, virt_reboot_cb reboot,
			 void *opaque, int ids[2]);
void virt_events_deregister(virConnectPtr conn, const int ids[2]);

/* cb runs on the event thread when the connection closes (libvirtd died,
 * keepalive timeout); reason is a VIR_CONNECT_CLOSE_REASON_*. */
typedef void (*virt_close_cb)(int reason, void *opaque);
int virt_on_close(virConnectPtr conn, virt_close_cb cb, void *opaque);
void virt_on_close_clear(virConnectPtr conn);

/* Opens the channel named name of dom as a non-blocking stream and calls cb
 * on the event thread whenever it is readable, hung up or failed. */
typedef void (*virt_stream_cb)(virStreamPtr st, int events, void *opaque);
int virt_channel_open(virConnectPtr conn, virDomainPtr dom, const char *name,
		      virt_stream_cb cb, void *opaque, virStreamPtr *out);
/* >0 bytes, 0 end of stream, -EAGAIN nothing now, -EIO failed. */
int virt_stream_recv(virStreamPtr st, char *buf, size_t len);
/* Sends all of buf (short lines; retries EAGAIN briefly). */
int virt_stream_send(virStreamPtr st, const char *buf, size_t len);
/* Another reference (virt_stream_close or virt_stream_unref drops it). */
virStreamPtr virt_stream_ref(virStreamPtr st);
void virt_stream_unref(virStreamPtr st);
/* Stops callbacks (allowed from inside the callback). */
void virt_stream_unwatch(virStreamPtr st);
/* Removes the callback, aborts and frees. NULL is fine. */
void virt_stream_close(virStreamPtr st);

#endif

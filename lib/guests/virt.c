/* The one wrapper around the libvirt C API (see virt.h). */
#include "virt.h"
#include "log.h"

#include <errno.h>
#include <libvirt/virterror.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

/* libvirt error codes to errno, for callers that branch on the kind. */
static int virt_errno(const virError *e)
{
	if (!e)
		return EIO;
	switch (e->code) {
	case VIR_ERR_NO_DOMAIN:
		return ENOENT;
	case VIR_ERR_NO_SUPPORT:
		return EOPNOTSUPP;
	case VIR_ERR_OPERATION_INVALID:
		return EINVAL;
	case VIR_ERR_NO_CONNECT:
	case VIR_ERR_SYSTEM_ERROR:
	case VIR_ERR_RPC:
		return ECONNREFUSED;
	case VIR_ERR_OPERATION_TIMEOUT:
	case VIR_ERR_AGENT_UNRESPONSIVE:
		return ETIMEDOUT;
	case VIR_ERR_AUTH_FAILED:
	case VIR_ERR_ACCESS_DENIED:
		return EACCES;
	case VIR_ERR_CONFIG_UNSUPPORTED:
	case VIR_ERR_XML_ERROR:
	case VIR_ERR_XML_DETAIL:
	case VIR_ERR_INVALID_ARG:
		return EINVAL;
	default:
		return EIO;
	}
}

/* Turns the thread's last libvirt error into pc_fail(). */
static int virt_fail(const char *what)
{
	const virError *e = virGetLastError();
	int err = virt_errno(e);
	int ret = pc_fail(err, "%s: %s", what, e && e->message ? e->message : "libvirt error");

	virResetLastError();
	return ret;
}

static void virt_quiet_error(void *opaque, virErrorPtr e)
{
	/* errors are reported through pc_fail(), not printed by libvirt */
	if (e && e->message)
		pc_debug("libvirt: %s", e->message);
}

static void *virt_event_thread(void *arg)
{
	for (;;) {
		if (virEventRunDefaultImpl() < 0) {
			pc_warn("libvirt event loop: %s", virGetLastErrorMessage());
			usleep(10000);
		}
	}
	return NULL;
}

static pthread_once_t virt_once = PTHREAD_ONCE_INIT;
static int virt_once_rc;

static void virt_init_once(void)
{
	pthread_t th;
	pthread_attr_t attr;

	virSetErrorFunc(NULL, virt_quiet_error);
	if (virInitialize() < 0 || virEventRegisterDefaultImpl() < 0) {
		virt_once_rc = -EIO;
		return;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	virt_once_rc = -pthread_create(&th, &attr, virt_event_thread, NULL);
	pthread_attr_destroy(&attr);
}

int virt_event_loop_start(void)
{
	pthread_once(&virt_once, virt_init_once);
	if (virt_once_rc < 0)
		return pc_fail(-virt_once_rc, "cannot start the libvirt event loop");
	return 0;
}

int virt_connect(const char *uri, virConnectPtr *out)
{
	int rc = virt_event_loop_start();
	virConnectPtr c;

	if (rc < 0)
		return rc;
	c = virConnectOpen(uri);
	if (!c) {
		g_autofree char *what = g_strdup_printf("cannot connect to %s", uri ? uri : "libvirt");
		return virt_fail(what);
	}
	/* A dead libvirtd is noticed within ~15 s instead of never. */
	if (virConnectSetKeepAlive(c, 5, 3) < 0)
		virResetLastError();
	*out = c;
	return 0;
}

void virt_close(virConnectPtr conn)
{
	if (conn)
		virConnectClose(conn);
}

bool virt_kvm_supported(virConnectPtr conn)
{
	char *caps = virConnectGetDomainCapabilities(conn, NULL, "x86_64", NULL, "kvm", 0);
	bool ok = caps != NULL;

	if (!caps)
		virResetLastError();
	free(caps);
	return ok;
}

bool virt_cpu_mode_supported(virConnectPtr conn, const char *virttype, const char *mode)
{
	char *caps = virConnectGetDomainCapabilities(conn, NULL, "x86_64", NULL, virttype, 0);
	g_autofree char *needle = g_strdup_printf("<mode name='%s' supported='yes'", mode);
	bool ok = caps && strstr(caps, needle);

	if (!caps)
		virResetLastError();
	free(caps);
	return ok;
}

unsigned long virt_lib_version(virConnectPtr conn)
{
	unsigned long v = 0;

	if (virConnectGetLibVersion(conn, &v) < 0)
		virResetLastError();
	return v;
}

unsigned long virt_hv_version(virConnectPtr conn)
{
	unsigned long v = 0;

	if (virConnectGetVersion(conn, &v) < 0)
		virResetLastError();
	return v;
}

int virt_domain_create(virConnectPtr conn, const char *xml, bool autodestroy, virDomainPtr *out)
{
	virDomainPtr d = virDomainCreateXML(conn, xml, autodestroy ? VIR_DOMAIN_START_AUTODESTROY : 0);

	if (!d)
		return virt_fail("cannot start the domain");
	*out = d;
	return 0;
}

int virt_domain_destroy(virDomainPtr dom)
{
	if (!dom)
		return 0;
	if (virDomainDestroy(dom) < 0) {
		const virError *e = virGetLastError();

		if (e && (e->code == VIR_ERR_NO_DOMAIN || e->code == VIR_ERR_OPERATION_INVALID)) {
			virResetLastError();
			return 0;
		}
		return virt_fail("cannot destroy the domain");
	}
	return 0;
}

int virt_domain_lookup(virConnectPtr conn, const char *name, virDomainPtr *out)
{
	virDomainPtr d = virDomainLookupByName(conn, name);

	if (!d)
		return virt_fail(name);
	*out = d;
	return 0;
}

int virt_domain_suspend(virDomainPtr dom)
{
	return virDomainSuspend(dom) < 0 ? virt_fail("cannot suspend the domain") : 0;
}

int virt_domain_resume(virDomainPtr dom)
{
	return virDomainResume(dom) < 0 ? virt_fail("cannot resume the domain") : 0;
}

/* The domain's memory and device state to path; the domain stops (its
 * STOPPED/SAVED event follows). */
int virt_domain_save(virDomainPtr dom, const char *path)
{
	return virDomainSaveFlags(dom, path, NULL, 0) < 0 ? virt_fail("cannot save the domain") : 0;
}

int virt_domain_restore(virConnectPtr conn, const char *path, const char *name, virDomainPtr *out)
{
	virDomainPtr d;

	if (virDomainRestoreFlags(conn, path, NULL, VIR_DOMAIN_SAVE_RUNNING) < 0)
		return virt_fail(path);
	d = virDomainLookupByName(conn, name);
	if (!d)
		return virt_fail(name);
	*out = d;
	return 0;
}

int virt_domain_inject_nmi(virDomainPtr dom)
{
	return virDomainInjectNMI(dom, 0) < 0 ? virt_fail("cannot inject an NMI") : 0;
}

int virt_domain_state(virDomainPtr dom, int *reason)
{
	int state = 0, r = 0;

	if (virDomainGetState(dom, &state, &r, 0) < 0)
		return virt_fail("cannot get the domain state");
	if (reason)
		*reason = r;
	return state;
}

const char *virt_domain_name(virDomainPtr dom)
{
	const char *n = dom ? virDomainGetName(dom) : NULL;

	return n ? n : "?";
}

void virt_domain_uuid(virDomainPtr dom, char *buf)
{
	buf[0] = 0;
	if (dom && virDomainGetUUIDString(dom, buf) < 0) {
		buf[0] = 0;
		virResetLastError();
	}
}

void virt_domain_free(virDomainPtr dom)
{
	if (dom)
		virDomainFree(dom);
}

int virt_domains_list(virConnectPtr conn, const char *prefix, GPtrArray **out)
{
	virDomainPtr *doms = NULL;
	int n = virConnectListAllDomains(conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE |
					 VIR_CONNECT_LIST_DOMAINS_INACTIVE);
	GPtrArray *arr;

	if (n < 0)
		return virt_fail("cannot list domains");
	arr = g_ptr_array_new_with_free_func((GDestroyNotify)virt_domain_free);
	for (int i = 0; i < n; i++) {
		const char *name = virDomainGetName(doms[i]);

		if (name && g_str_has_prefix(name, prefix))
			g_ptr_array_add(arr, doms[i]);
		else
			virDomainFree(doms[i]);
	}
	free(doms);
	*out = arr;
	return 0;
}

char *virt_domain_metadata(virDomainPtr dom, const char *uri)
{
	char *m = virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, uri, VIR_DOMAIN_AFFECT_LIVE);
	char *ret;

	if (!m) {
		virResetLastError();
		return NULL;
	}
	ret = g_strdup(m);
	free(m);
	return ret;
}

struct virt_events {
	virt_lifecycle_cb life;
	virt_reboot_cb reboot;
	void *opaque;
};

static int virt_life_trampoline(virConnectPtr conn, virDomainPtr dom, int event, int detail,
				void *opaque)
{
	struct virt_events *ev = opaque;

	ev->life(dom, event, detail, ev->opaque);
	return 0;
}

static void virt_reboot_trampoline(virConnectPtr conn, virDomainPtr dom, void *opaque)
{
	struct virt_events *ev = opaque;

	if (ev->reboot)
		ev->reboot(dom, ev->opaque);
}

int virt_events_register(virConnectPtr conn, virt_lifecycle_cb life, virt_reboot_cb reboot,
			 void *opaque, int ids[2])
{
	struct virt_events *a = g_new0(struct virt_events, 1);
	struct virt_events *b;

	a->life = life;
	a->reboot = reboot;
	a->opaque = opaque;
	b = g_memdup2(a, sizeof(*a));
	ids[0] = virConnectDomainEventRegisterAny(conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
						  VIR_DOMAIN_EVENT_CALLBACK(virt_life_trampoline),
						  a, g_free);
	if (ids[0] < 0) {
		g_free(a);
		g_free(b);
		return virt_fail("cannot register for lifecycle events");
	}
	ids[1] = virConnectDomainEventRegisterAny(conn, NULL, VIR_DOMAIN_EVENT_ID_REBOOT,
						  VIR_DOMAIN_EVENT_CALLBACK(virt_reboot_trampoline),
						  b, g_free);
	if (ids[1] < 0) {
		g_free(b);
		virConnectDomainEventDeregisterAny(conn, ids[0]);
		ids[0] = -1;
		return virt_fail("cannot register for reboot events");
	}
	return 0;
}

void virt_events_deregister(virConnectPtr conn, const int ids[2])
{
	for (int i = 0; i < 2; i++)
		if (ids[i] >= 0 && virConnectDomainEventDeregisterAny(conn, ids[i]) < 0)
			virResetLastError();
}

struct virt_close {
	virt_close_cb cb;
	void *opaque;
};

static void virt_close_trampoline(virConnectPtr conn, int reason, void *opaque)
{
	struct virt_close *c = opaque;

	c->cb(reason, c->opaque);
}

int virt_on_close(virConnectPtr conn, virt_close_cb cb, void *opaque)
{
	struct virt_close *c = g_new0(struct virt_close, 1);

	c->cb = cb;
	c->opaque = opaque;
	if (virConnectRegisterCloseCallback(conn, virt_close_trampoline, c, g_free) < 0) {
		g_free(c);
		return virt_fail("cannot watch the libvirt connection");
	}
	return 0;
}

void virt_on_close_clear(virConnectPtr conn)
{
	if (virConnectUnregisterCloseCallback(conn, virt_close_trampoline) < 0)
		virResetLastError();
}

int virt_channel_open(virConnectPtr conn, virDomainPtr dom, const char *name,
		      virt_stream_cb cb, void *opaque, virStreamPtr *out)
{
	virStreamPtr st = virStreamNew(conn, VIR_STREAM_NONBLOCK);

	if (!st)
		return virt_fail("cannot create a stream");
	if (virDomainOpenChannel(dom, name, st, 0) < 0) {
		int rc = virt_fail("cannot open the heartbeat channel");

		virStreamFree(st);
		return rc;
	}
	if (virStreamEventAddCallback(st, VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_ERROR |
					  VIR_STREAM_EVENT_HANGUP,
				      (virStreamEventCallback)cb, opaque, NULL) < 0) {
		int rc = virt_fail("cannot watch the heartbeat channel");

		virStreamAbort(st);
		virStreamFree(st);
		return rc;
	}
	*out = st;
	return 0;
}

int virt_stream_recv(virStreamPtr st, char *buf, size_t len)
{
	int n = virStreamRecv(st, buf, len);

	if (n == -2)
		return -EAGAIN;
	if (n < 0)
		return virt_fail("heartbeat channel");
	return n;
}

int virt_stream_send(virStreamPtr st, const char *buf, size_t len)
{
	size_t done = 0;
	int tries = 0;

	while (done < len) {
		int n = virStreamSend(st, buf + done, len - done);

		if (n == -2) {
			if (++tries > 200)
				return pc_fail(EAGAIN, "heartbeat channel: guest not reading");
			usleep(5000);
			continue;
		}
		if (n < 0)
			return virt_fail("cannot send to the guest");
		done += n;
	}
	return 0;
}

virStreamPtr virt_stream_ref(virStreamPtr st)
{
	if (st && virStreamRef(st) < 0) {
		virResetLastError();
		return NULL;
	}
	return st;
}

void virt_stream_unref(virStreamPtr st)
{
	if (st)
		virStreamFree(st);
}

void virt_stream_unwatch(virStreamPtr st)
{
	if (st && virStreamEventRemoveCallback(st) < 0)
		virResetLastError();
}

void virt_stream_close(virStreamPtr st)
{
	if (!st)
		return;
	if (virStreamEventRemoveCallback(st) < 0)
		virResetLastError();
	if (virStreamAbort(st) < 0)
		virResetLastError();
	virStreamFree(st);
}

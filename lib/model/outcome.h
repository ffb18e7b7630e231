/* The fixed vocabulary of the matrix (design.md "outcome").
 *
 * One table: OK, the errno outcomes perf_event_open is known to return, the
 * harms, INFRA and REJECTED. INFRA means "could not test"; REJECTED means the
 * profile's own parser refused the spec, so perf never called the kernel.
 * Neither is a kernel verdict, and REJECTED never stands for an errno. */
#ifndef PMUCANARY_OUTCOME_H
#define PMUCANARY_OUTCOME_H

#include <stdbool.h>

#define OUTCOME_TABLE(X)                                      \
	X(OK,               OUTCOME_CLASS_OK,    0)           \
	X(EOPNOTSUPP,       OUTCOME_CLASS_ERRNO, EOPNOTSUPP)  \
	X(EINVAL,           OUTCOME_CLASS_ERRNO, EINVAL)      \
	X(ENOENT,           OUTCOME_CLASS_ERRNO, ENOENT)      \
	X(EACCES,           OUTCOME_CLASS_ERRNO, EACCES)      \
	X(EPERM,            OUTCOME_CLASS_ERRNO, EPERM)       \
	X(ENODEV,           OUTCOME_CLASS_ERRNO, ENODEV)      \
	X(EBUSY,            OUTCOME_CLASS_ERRNO, EBUSY)       \
	X(E2BIG,            OUTCOME_CLASS_ERRNO, E2BIG)       \
	X(EFAULT,           OUTCOME_CLASS_ERRNO, EFAULT)      \
	X(ENOSPC,           OUTCOME_CLASS_ERRNO, ENOSPC)      \
	X(EOVERFLOW,        OUTCOME_CLASS_ERRNO, EOVERFLOW)   \
	X(ENOMEM,           OUTCOME_CLASS_ERRNO, ENOMEM)      \
	X(ESRCH,            OUTCOME_CLASS_ERRNO, ESRCH)       \
	X(ENOSYS,           OUTCOME_CLASS_ERRNO, ENOSYS)      \
	X(EIO,              OUTCOME_CLASS_ERRNO, EIO)         \
	X(EAGAIN,           OUTCOME_CLASS_ERRNO, EAGAIN)      \
	X(EMFILE,           OUTCOME_CLASS_ERRNO, EMFILE)      \
	X(EBADF,            OUTCOME_CLASS_ERRNO, EBADF)       \
	X(EUNKNOWN,         OUTCOME_CLASS_ERRNO, -1)          \
	X(GUEST_CRASH,      OUTCOME_CLASS_HARM,  0)           \
	X(GUEST_HANG,       OUTCOME_CLASS_HARM,  0)           \
	X(GUEST_REBOOT,     OUTCOME_CLASS_HARM,  0)           \
	X(GUEST_CORRUPTION, OUTCOME_CLASS_HARM,  0)           \
	X(GUEST_OOPS,       OUTCOME_CLASS_HARM,  0)           \
	X(HOST_WARN,        OUTCOME_CLASS_HARM,  0)           \
	X(HOST_CRASH,       OUTCOME_CLASS_HARM,  0)           \
	X(HOST_HANG,        OUTCOME_CLASS_HARM,  0)           \
	X(INFRA,            OUTCOME_CLASS_INFRA, 0)           \
	X(REJECTED,         OUTCOME_CLASS_REJECTED, 0)

enum outcome_class {
	OUTCOME_CLASS_OK,
	OUTCOME_CLASS_ERRNO,
	OUTCOME_CLASS_HARM,
	OUTCOME_CLASS_INFRA,
	OUTCOME_CLASS_REJECTED,    /* the profile's parser refused the spec */
	OUTCOME_CLASS_COUNT
};

#define OUTCOME_ENUM(name, cls, err) OUTCOME_##name,
enum outcome {
	OUTCOME_TABLE(OUTCOME_ENUM)
	OUTCOME_COUNT
};
#undef OUTCOME_ENUM

const char *outcome_name(enum outcome o);
/* Returns OUTCOME_COUNT when name is not an outcome. */
enum outcome outcome_from_name(const char *name);
enum outcome_class outcome_class(enum outcome o);
const char *outcome_class_name(enum outcome_class c);
/* errno (positive) to its outcome; 0 is OK; unknown errnos are EUNKNOWN. */
enum outcome outcome_from_errno(int err);
/* The errno an errno outcome stands for, or 0. */
int outcome_errno(enum outcome o);
bool outcome_is_harm(enum outcome o);

#endif

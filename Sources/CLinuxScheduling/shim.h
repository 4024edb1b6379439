/*
 * Linux's sched_setattr and sched_getattr for Swift, imported only by AppShellConcurrency.
 *
 * Glibc before 2.41 has no wrapper for either, and Swift cannot call the variadic syscall(2):
 * these two functions call it for the calling thread. They set and read a SCHED_OTHER thread's
 * nice value and its time slice (sched_attr.sched_runtime, which the kernel takes as the slice of
 * a fair-class thread since Linux 6.12 and ignores before; it clamps it to 0.1-100 ms, and reads
 * back the slice in use, 0 before 6.12).
 */
#ifndef APPSHELL_CLINUXSCHEDULING_SHIM_H
#define APPSHELL_CLINUXSCHEDULING_SHIM_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's struct sched_attr (linux/sched/types.h), first version plus utilization clamps. */
struct appshell_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
    uint32_t sched_util_min;
    uint32_t sched_util_max;
};

/* SCHED_OTHER at `nice` with a slice of `slice_nanoseconds` (0: the kernel's default) for the
 * calling thread. Returns 0, or -1 with errno set (ENOSYS where seccomp or the kernel refuses). */
static inline int appshell_set_fair_scheduling(int nice, uint64_t slice_nanoseconds) {
    struct appshell_sched_attr attributes;
    memset(&attributes, 0, sizeof attributes);
    attributes.size = sizeof attributes;
    attributes.sched_policy = 0; /* SCHED_OTHER */
    attributes.sched_nice = nice;
    attributes.sched_runtime = slice_nanoseconds;
    return (int)syscall(SYS_sched_setattr, 0, &attributes, 0);
}

/* The calling thread's policy, nice value and slice (0 where the kernel keeps no custom slice).
 * Returns 0, or -1 with errno set. */
static inline int appshell_get_scheduling(uint32_t *policy, int32_t *nice, uint64_t *slice_nanoseconds) {
    struct appshell_sched_attr attributes;
    memset(&attributes, 0, sizeof attributes);
    if (syscall(SYS_sched_getattr, 0, &attributes, (unsigned int)sizeof attributes, 0) != 0) return -1;
    *policy = attributes.sched_policy;
    *nice = attributes.sched_nice;
    *slice_nanoseconds = attributes.sched_runtime;
    return 0;
}

#endif

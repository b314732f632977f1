/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of the kernel to build ring/ring.c in user space for
 * unit tests (the tools/testing/radix-tree approach).  Force-included.
 */
#ifndef _KSHIM_H
#define _KSHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/types.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define __user
#define __percpu
#define unlikely(x) __builtin_expect(!!(x), 0)
#define likely(x) __builtin_expect(!!(x), 1)
#define GFP_KERNEL 0
#define notrace
#define NOKPROBE_SYMBOL(fn)

#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define smp_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define smp_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

static inline void *kcalloc(size_t n, size_t sz, int gfp)
{
	(void)gfp;
	return calloc(n, sz);
}
static inline void kfree(const void *p) { free((void *)p); }
static inline void *vmalloc_user(unsigned long sz) { return calloc(1, sz); }
static inline void vfree(const void *p) { free((void *)p); }

/* tests set these to play the running task and CPU */
extern int kshim_cpu, kshim_in_task, kshim_pid, kshim_tgid;
extern int kshim_fault_after;	/* copy_to_user fails after N calls; -1 never */
/* run once by the next copy_to_user, after its copy: a writer in between */
extern void (*kshim_copy_hook)(void);
struct kshim_task { int pid, tgid; };
static inline struct kshim_task *kshim_current(void)
{
	static struct kshim_task t;

	t.pid = kshim_pid;
	t.tgid = kshim_tgid;
	return &t;
}
#define current kshim_current()
#define in_task() (kshim_in_task)
#define raw_smp_processor_id() (kshim_cpu)

static inline unsigned long copy_to_user(void *to, const void *from,
					 unsigned long n)
{
	if (kshim_fault_after == 0)
		return n;
	if (kshim_fault_after > 0)
		kshim_fault_after--;
	memcpy(to, from, n);
	if (kshim_copy_hook) {
		void (*hook)(void) = kshim_copy_hook;

		kshim_copy_hook = NULL;
		hook();
	}
	return 0;
}

#endif

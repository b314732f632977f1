// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_mm.ko: memory instrumentation points.
 *
 *  fault_user    a page fault taken in user mode (exceptions:page_fault_user)
 *  fault_kernel  a page fault taken in kernel mode, e.g. copy_to_user()
 *                touching a not yet present user page
 *                (exceptions:page_fault_kernel)
 *  page_alloc    2^order pages from the page allocator (kmem:mm_page_alloc)
 *  page_free     2^order pages given back (kmem:mm_page_free)
 *
 * No kernel address leaves the kernel: a fault's address is recorded only
 * when it is a user virtual address (MAGNET_FAULT_F_ADDR), its instruction
 * pointer only for a fault in user mode; page events carry order, gfp
 * flags, migrate type and node, never a struct page pointer or a frame
 * number.  The abstract ID is the faulting process (tgid) for faults, 0
 * for page events.  Handlers run in any context (faults with interrupts
 * possibly off, page events also in interrupts): no sleeping, no
 * allocation, no locks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mm.h>
#include <linux/gfp.h>
#include <linux/sched.h>
#include <trace/events/kmem.h>

#include "mtp.h"
#include "mm_compat.h"

#ifdef MMM_HAVE_FAULT_TP
/* exceptions:page_fault_user and page_fault_kernel */
static void mmm_fault(void *data, unsigned long address, struct pt_regs *regs,
		      unsigned long error_code)
{
	struct mtp_hook *h = data;
	struct magnet_fault_payload p = {
		.error_code = error_code,
		.flags = mmm_fault_flags(error_code),
	};

	if (mmm_user_addr(address)) {
		p.address = address;
		p.flags |= MAGNET_FAULT_F_ADDR;
	}
	if (regs && user_mode(regs))
		p.ip = instruction_pointer(regs);
	magnet_add(READ_ONCE(h->pt), current->tgid, &p, sizeof(p));
}
#endif

/* kmem:mm_page_alloc; @page is NULL when the allocation failed */
static void mmm_page_alloc(void *data, struct page *page, unsigned int order,
			   gfp_t gfp_flags, int migratetype)
{
	struct mtp_hook *h = data;
	struct magnet_page_payload p = {
		.order = order,
		.gfp_flags = (__force u32)gfp_flags,
		.migratetype = migratetype,
		.node = page ? page_to_nid(page) : NUMA_NO_NODE,
		.flags = page ? 0 : MAGNET_PAGE_F_FAILED,
	};

	magnet_add(READ_ONCE(h->pt), 0, &p, sizeof(p));
}

/* kmem:mm_page_free */
static void mmm_page_free(void *data, struct page *page, unsigned int order)
{
	struct mtp_hook *h = data;
	struct magnet_page_payload p = {
		.order = order,
		.migratetype = -1,
		.node = page_to_nid(page),
	};

	magnet_add(READ_ONCE(h->pt), 0, &p, sizeof(p));
}

static struct mtp_hook mmm_hooks[] = {
#ifdef MMM_HAVE_FAULT_TP
	MTP_HOOK("fault_user", MEMORY, FAULT, "exceptions", "page_fault_user",
		 mmm_fault),
	MTP_HOOK("fault_kernel", MEMORY, FAULT, "exceptions",
		 "page_fault_kernel", mmm_fault),
#endif
	MTP_HOOK("page_alloc", MEMORY, PAGE, "kmem", "mm_page_alloc",
		 mmm_page_alloc),
	MTP_HOOK("page_free", MEMORY, PAGE, "kmem", "mm_page_free",
		 mmm_page_free),
};

/* Never called: the handlers must match TP_PROTO of the kernel's headers. */
static inline void __maybe_unused mmm_check_types(void)
{
#ifdef MMM_HAVE_FAULT_TP
	mmm_check_fault_types(mmm_fault);
#endif
	check_trace_callback_type_mm_page_alloc(mmm_page_alloc);
	check_trace_callback_type_mm_page_free(mmm_page_free);
}

static int __init mmm_init(void)
{
	return mtp_register(mmm_hooks, ARRAY_SIZE(mmm_hooks), THIS_MODULE);
}

static void __exit mmm_exit(void)
{
	mtp_unregister(mmm_hooks, ARRAY_SIZE(mmm_hooks));
}

module_init(mmm_init);
module_exit(mmm_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("MAGNET");
MODULE_DESCRIPTION("MAGNET memory instrumentation points");

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Architecture and kernel-version differences of magnet_mm.ko.
 *
 * Page faults: the exceptions:page_fault_user / page_fault_kernel
 * tracepoints are x86 only (arch/x86/include/asm/trace/exceptions.h),
 * same prototype in 6.1 and 6.12: (address, regs, error_code) with the
 * X86_PF_* error code bits.  Other architectures get no fault points.
 */
#ifndef _MAGNET_PROBES_MM_COMPAT_H
#define _MAGNET_PROBES_MM_COMPAT_H

#include <linux/types.h>
#include <linux/ptrace.h>
#include <magnet/magnet.h>

#ifdef CONFIG_X86
#include <asm/trap_pf.h>
#include <asm/trace/exceptions.h>
#include <asm/processor.h>

#define MMM_HAVE_FAULT_TP	1

static __always_inline u32 mmm_fault_flags(unsigned long error_code)
{
	u32 f = 0;

	if (error_code & X86_PF_WRITE)
		f |= MAGNET_FAULT_F_WRITE;
	if (error_code & X86_PF_USER)
		f |= MAGNET_FAULT_F_USER;
	if (error_code & X86_PF_PROT)
		f |= MAGNET_FAULT_F_PROT;
	if (error_code & X86_PF_INSTR)
		f |= MAGNET_FAULT_F_INSTR;
	return f;
}

/* A user virtual address: below the top of the user address space. */
static __always_inline bool mmm_user_addr(unsigned long address)
{
	return address < TASK_SIZE_MAX;
}

#define mmm_check_fault_types(fn)					\
	do {								\
		check_trace_callback_type_page_fault_user(fn);		\
		check_trace_callback_type_page_fault_kernel(fn);	\
	} while (0)

#endif /* CONFIG_X86 */

#endif /* _MAGNET_PROBES_MM_COMPAT_H */

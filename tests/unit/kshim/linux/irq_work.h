/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KSHIM_IRQ_WORK_H
#define _KSHIM_IRQ_WORK_H
/* @queued: how often the writer asked for a deferred wake-up */
struct irq_work { int pending; unsigned long queued; };
static inline bool irq_work_queue(struct irq_work *w)
{
	w->queued++;
	return true;
}
#endif

/* shim */
#ifndef _KSHIM_IRQ_WORK_H
#define _KSHIM_IRQ_WORK_H
struct irq_work { int pending; };
#endif

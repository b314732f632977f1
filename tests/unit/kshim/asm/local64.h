/* shim */
#ifndef _KSHIM_LOCAL64_H
#define _KSHIM_LOCAL64_H
typedef struct { long long v; } local64_t;
#define local64_read(l) ((l)->v)
#define local64_set(l, x) ((l)->v = (x))
#define local64_inc(l) ((l)->v++)
#endif

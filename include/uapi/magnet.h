/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * MAGNET user-space API: the one header shared by the kernel modules,
 * libmagnet, magnetctl and any third-party decoder.
 *
 * It holds three contracts, each versioned by MAGNET_ABI_VERSION:
 *
 *  1. The generic netlink family "magnet" (commands, attributes, the
 *     multicast group).  See docs/NETLINK.md.
 *  2. The event-record format written to every stream.  Records are in
 *     the byte order of the traced machine; the SYSINFO record that starts
 *     every stream carries MAGNET_ENDIAN_MAGIC so that a decoder on another
 *     machine can tell.  See docs/FORMAT.md, which specifies every byte.
 *  3. The ioctl numbers of stream files (magnetfs).  See docs/IOCTL.md.
 *
 * No field of any record or attribute ever holds a kernel pointer.
 */
#ifndef _UAPI_MAGNET_H
#define _UAPI_MAGNET_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <linux/types.h>
#include <sys/ioctl.h>
#endif
#include <linux/ioctl.h>

/* Bumped when a record layout, an attribute's meaning or an ioctl changes. */
#define MAGNET_ABI_VERSION	1
#define MAGNET_FORMAT_MAJOR	1
#define MAGNET_FORMAT_MINOR	2	/* 1: SYSINFO flags = buffer mode, 2: clock_id 2 */

/* ------------------------------------------------------------------ */
/* Event records                                                       */
/* ------------------------------------------------------------------ */

/*
 * Every record starts with this 32-byte header, is 8-byte aligned and
 * its total length (header + payload + padding) is in @size.
 *
 * @size:        bytes of the whole record, a multiple of 8, >= 32.
 * @event:       event ID: 0..MAGNET_EVENT_MAX.  IDs below
 *               MAGNET_EVENT_FIRST_PROBE are the core's own records.
 * @cpu:         CPU that produced the record (whose ring it is in).
 * @abstract_id: what the event is about.  For network events: the inode
 *               number of the socket (what fstat() shows an application
 *               for its socket fd), 0 when there is no socket.
 * @timestamp:   nanoseconds of the stream's clock, named in SYSINFO
 *               (enum magnet_clock; CLOCK_MONOTONIC by default).
 * @pid:         thread ID of the task the event happened in.  In
 *               interrupt and softirq context, where the interrupted
 *               task is not the event's: for an event about a local
 *               socket, the socket's last user (the task of its last
 *               event in task context, docs/PROBES.md "Which process an
 *               event names"), else 0.
 * @tgid:        its process ID (the same task).
 */
struct magnet_rec_hdr {
	__u16 size;
	__u16 event;
	__u32 cpu;
	__u64 abstract_id;
	__u64 timestamp;
	__u32 pid;
	__u32 tgid;
};

#define MAGNET_REC_HDR_SIZE	32
#define MAGNET_REC_ALIGN	8
#define MAGNET_REC_MAX		4096	/* largest record, header included */
#define MAGNET_PAYLOAD_MAX	(MAGNET_REC_MAX - MAGNET_REC_HDR_SIZE)

/* Event IDs: a 10-bit space as in the MAGNET paper. */
#define MAGNET_EVENT_BITS	10
#define MAGNET_EVENT_MAX	((1 << MAGNET_EVENT_BITS) - 1)

enum magnet_core_event {
	MAGNET_EVENT_SYSINFO	= 0,	/* first record of every stream read */
	MAGNET_EVENT_LOST	= 1,	/* events dropped on this CPU before here */
	MAGNET_EVENT_EVENTDEF	= 2,	/* names an event ID */
	MAGNET_EVENT_SYNTH	= 3,	/* synthesizer output (docs/SYNTH.md) */
	MAGNET_EVENT_CORR	= 4,	/* correlator: struct magnet_corr_rec */
	MAGNET_EVENT_APP	= 5,	/* application event, below */
	/* 6..15 reserved for the core (markers, ...) */
	MAGNET_EVENT_FIRST_PROBE = 16,
};

/*
 * Application events (docs/INTERPOSER.md): core event 5, written into a
 * stream by user space with write(2) on the stream file (docs/IOCTL.md),
 * e.g. by the interposer libmagnet_preload.so.  record.abstract_id is the
 * socket's inode number (fstat() st_ino), the key the network probes use;
 * record.cpu/pid/tgid/timestamp are the kernel's, filled at the write
 * (timestamp: when the record entered the ring); the call's own times are
 * in the payload, on the same clock (CLOCK_MONOTONIC).
 */

/* struct magnet_app_payload.call */
enum magnet_app_call {
	MAGNET_APP_SEND		= 0,
	MAGNET_APP_SENDTO	= 1,
	MAGNET_APP_SENDMSG	= 2,
	MAGNET_APP_WRITE	= 3,
	MAGNET_APP_WRITEV	= 4,
	MAGNET_APP_RECV		= 5,
	MAGNET_APP_RECVFROM	= 6,
	MAGNET_APP_RECVMSG	= 7,
	MAGNET_APP_READ		= 8,
	MAGNET_APP_READV	= 9,
	__MAGNET_APP_CALL_MAX,
};

/* struct magnet_app_payload.flags: direction */
#define MAGNET_APP_F_TX		0x1
#define MAGNET_APP_F_RX		0x2

/*
 * APP payload, 48 bytes.  @entry_ns/@exit_ns: CLOCK_MONOTONIC when the
 * call was entered and when it returned; @ret: its return value (bytes,
 * or -errno); @req: bytes asked for (the iovecs summed); @fd: the file
 * descriptor; @msg_flags: the flags argument (0 for write/read).
 * The kernel refuses a record with @call >= __MAGNET_APP_CALL_MAX, a
 * @flags other than the call's direction, @reserved != 0,
 * @entry_ns > @exit_ns or @exit_ns after the write.
 */
struct magnet_app_payload {
	__u64 entry_ns;
	__u64 exit_ns;
	__s64 ret;
	__u64 req;
	__s32 fd;
	__u16 call;		/* enum magnet_app_call */
	__u16 flags;		/* MAGNET_APP_F_TX or MAGNET_APP_F_RX */
	__u32 msg_flags;
	__u32 reserved;		/* 0 */
};

#define MAGNET_APP_REC_SIZE	(MAGNET_REC_HDR_SIZE + 48)
/* Largest write(2) of application records to a stream file. */
#define MAGNET_APP_WRITE_MAX	(64u << 10)

#define MAGNET_ENDIAN_MAGIC	0x01234567u
#define MAGNET_ENDIAN_SWAPPED	0x67452301u

/*
 * The clock of a stream's record timestamps (MAGNET_A_STREAM_CLOCK, fixed
 * at creation; SYSINFO.clock_id names it in the trace).
 *
 * MONOTONIC (the default): CLOCK_MONOTONIC, one order across CPUs, the
 *   clock user space reads with clock_gettime(), the clock of every time
 *   in a payload (SYNTH, CORR, APP).  A per-CPU ring extrapolates it from
 *   the TSC between readings of ktime_get_mono_fast_ns() 256 us apart
 *   where the kernel trusts the TSC (within 0.5 us plus NTP's correction
 *   over 256 us), else reads ktime_get_mono_fast_ns() per event
 *   (docs/FORMAT.md, "Clocks").
 * LOCAL: the kernel's local_clock() (sched_clock, ns since boot), ftrace's
 *   default clock: the cheaper read where the kernel distrusts the TSC
 *   (its CLOCK_MONOTONIC then comes from a slower clocksource such as the
 *   HPET), monotonic on each CPU, across CPUs only to within the clock's
 *   skew.  Probe events only: synthesizers, correlators and
 *   application writes, whose payload times are CLOCK_MONOTONIC, refuse a
 *   LOCAL stream.
 */
enum magnet_clock {
	MAGNET_CLOCK_MONOTONIC	= 1,	/* CLOCK_MONOTONIC, ns */
	MAGNET_CLOCK_LOCAL	= 2,	/* local_clock(), ns, per CPU */
	__MAGNET_CLOCK_MAX,
};

/*
 * SYSINFO payload.  The first record of every stream file each time it
 * is opened, so that a trace file is self-describing.
 */
struct magnet_sysinfo {
	__u32 endian;		/* MAGNET_ENDIAN_MAGIC in writer byte order */
	__u16 format_major;
	__u16 format_minor;
	__u32 abi_version;
	__u32 clock_id;		/* enum magnet_clock */
	__u64 clock_hz;		/* timestamp ticks per second */
	__u64 wall_ns_at_zero;	/* CLOCK_REALTIME ns when timestamp was 0 */
	__u32 nr_cpus;		/* nr_cpu_ids: cpu fields are below this */
	__u32 ptr_size;		/* sizeof(void *) of the traced kernel */
	__u32 page_size;
	__u32 subbuf_size;	/* the stream's ring geometry */
	__u32 subbuf_count;
	__u32 flags;		/* MAGNET_STREAM_F_* of the stream */
	char stream[32];	/* stream name, NUL-terminated */
	char release[64];	/* utsname()->release */
};

/* LOST payload: @count events were dropped on record.cpu just before. */
struct magnet_lost {
	__u64 count;
};

/* Layers of the instrumentation points (EVENTDEF.layer, PROBE_LAYER). */
enum magnet_layer {
	MAGNET_LAYER_OTHER	= 0,
	MAGNET_LAYER_SOCKET	= 1,
	MAGNET_LAYER_TRANSPORT	= 2,
	MAGNET_LAYER_NETWORK	= 3,
	MAGNET_LAYER_DEVICE	= 4,
	MAGNET_LAYER_SCHED	= 5,
	MAGNET_LAYER_MEMORY	= 6,
	MAGNET_LAYER_CORE	= 7,
	__MAGNET_LAYER_MAX,
};

/* What a probe's payload holds (EVENTDEF.payload, PROBE_PAYLOAD). */
enum magnet_payload_type {
	MAGNET_PAYLOAD_NONE	= 0,
	MAGNET_PAYLOAD_NET	= 1,	/* struct magnet_net_payload */
	MAGNET_PAYLOAD_RAW	= 2,	/* opaque bytes */
	MAGNET_PAYLOAD_SCHED_SWITCH = 3, /* struct magnet_sched_switch_payload */
	MAGNET_PAYLOAD_SCHED_PROC = 4,	/* struct magnet_sched_proc_payload */
	MAGNET_PAYLOAD_SCHED_EXEC = 5,	/* struct magnet_sched_exec_payload */
	MAGNET_PAYLOAD_FAULT	= 6,	/* struct magnet_fault_payload */
	MAGNET_PAYLOAD_PAGE	= 7,	/* struct magnet_page_payload */
	MAGNET_PAYLOAD_TCP	= 8,	/* struct magnet_tcp_payload */
	MAGNET_PAYLOAD_IP	= 9,	/* struct magnet_ip_payload [+ bytes] */
	MAGNET_PAYLOAD_KPROBE	= 10,	/* struct magnet_kprobe_payload */
	MAGNET_PAYLOAD_SCHED_SWITCH_END = 11, /* struct magnet_sched_switch_end_payload */
	__MAGNET_PAYLOAD_MAX,
};

#define MAGNET_NAME_MAX		32	/* probe and stream names, NUL included */

/*
 * EVENTDEF payload: names event @id.  For all registered probes, after
 * SYSINFO when the stream is opened, and again whenever a probe registers
 * or unregisters (docs/FORMAT.md).  record.abstract_id is also @id.
 */
struct magnet_eventdef {
	__u16 id;
	__u16 layer;		/* enum magnet_layer */
	__u16 payload;		/* enum magnet_payload_type */
	__u16 reserved;
	char name[MAGNET_NAME_MAX];
};

/*
 * SYNTH payload (docs/SYNTH.md, docs/FORMAT.md): the statistics of one key
 * of synthesizer @name over [@period_start, @period_end), exact integer
 * moments of the quantity's samples and the mean and population variance
 * derived from them (floors; see MAGNET_SYNTH_F_*).  Key fields not in
 * @group are 0.  @sum and @sumsq are 128-bit: _lo the low 64 bits.
 * record.abstract_id is @abstract_id; record.cpu/pid/tgid are magnetk's.
 */
struct magnet_synth_payload {
	char name[MAGNET_NAME_MAX];	/* the synthesizer */
	__u64 period_start;		/* ns, first period's start */
	__u64 period_end;		/* ns, end (exclusive) */
	__u64 count;			/* samples */
	__u64 min;
	__u64 max;
	__u64 sum_lo;
	__u64 sum_hi;
	__u64 sumsq_lo;
	__u64 sumsq_hi;
	__u64 mean;			/* floor(sum / count) */
	__u64 variance;			/* floor(population variance) */
	__u64 cgroup;			/* key: cgroup v2 ID */
	__u64 abstract_id;		/* key */
	__u32 event;			/* key: event ID */
	__u32 cpu;			/* key */
	__u32 pid;			/* key */
	__u32 tgid;			/* key */
	__u32 group;			/* MAGNET_SYNTH_K_* bits: the key */
	__u32 flags;			/* MAGNET_SYNTH_F_* */
	__u32 quantity;			/* enum magnet_synth_quantity */
	__u32 reserved;			/* 0 */
};

/* magnet_synth_payload.flags */
#define MAGNET_SYNTH_F_PARTIAL	0x01	/* open period cut by deletion */
#define MAGNET_SYNTH_F_MERGED	0x02	/* covers more than one period */
#define MAGNET_SYNTH_F_OVERFLOW	0x04	/* sum or sumsq wrapped at 2^128 */
#define MAGNET_SYNTH_F_VAR_SAT	0x08	/* variance above 2^64-1: saturated */

/* Bits of magnet_net_payload.flags */
#define MAGNET_NET_F_TX		0x01	/* transmit */
#define MAGNET_NET_F_RX		0x02	/* receive */
#define MAGNET_NET_F_ERROR	0x04	/* a failed call: len 0, err = -errno */

/*
 * Payload of the network probes.
 * @len:     bytes at this layer: socket layer, the bytes the call moved
 *           (send: the bytes handed to the stack; recv: bytes returned);
 *           transport send: bytes the application asked to send;
 *           transport receive, IP and device: skb->len, headers of that
 *           layer included.
 * @ifindex: network device, 0 when not known at this layer.
 * @proto:   IPPROTO_* at transport, ETH_P_* (host order) at IP/device.
 * @gso_size: for a GSO/TSO packet (one skb the stack will cut into
 *           wire-sized segments later), the payload bytes per segment;
 *           0 for a packet that goes out as it is.
 * @gso_segs: number of segments of that GSO packet, 0 when not GSO.
 * @err:     with MAGNET_NET_F_ERROR (socket layer): the failed call's
 *           negated errno (-EMSGSIZE, -EAGAIN, ...); @len is then 0.
 */
struct magnet_net_payload {
	__u32 len;
	__u32 ifindex;
	__u16 proto;
	__u16 flags;
	union {
		__u16 gso_size;
		__s16 err;
	};
	__u16 gso_segs;
};

/*
 * Payloads of the probe library (docs/PROBES.md).  Task IDs are global
 * (initial PID namespace) thread and process IDs; comm fields are
 * NUL-padded task names.  No field holds a kernel address.
 */
#define MAGNET_COMM_LEN		16

/*
 * sched_switch: @prev stops running on @cpu, @next starts.
 * @prev_state: 0 when @prev was preempted while runnable, else its
 * TASK_* state bits (1 interruptible sleep, 2 uninterruptible, ...).
 */
struct magnet_sched_switch_payload {
	__u32 prev_pid;
	__u32 prev_tgid;
	__u32 next_pid;
	__u32 next_tgid;
	__u32 prev_state;
	__s32 prev_prio;
	__s32 next_prio;
	__u32 cpu;
	char prev_comm[MAGNET_COMM_LEN];
	char next_comm[MAGNET_COMM_LEN];
};

/*
 * sched_switch_end: the end of a context switch, in the new task (the
 * entry of finish_task_switch(), where a switched-in or newly forked task
 * starts): @switch_ns from the switch's start in the old task (the
 * sched:sched_switch tracepoint, after the next task was picked) to here,
 * on this CPU (sched_clock(), interrupts off throughout: local_clock()
 * without a stable TSC stalls within a tick); @prev_*, @next_*
 * the tasks switched out and in.  The papers' context-switch duration.
 */
struct magnet_sched_switch_end_payload {
	__u64 switch_ns;
	__u32 prev_pid;
	__u32 prev_tgid;
	__u32 next_pid;
	__u32 next_tgid;
	__u32 cpu;
	__u32 reserved;
};

/*
 * sched_fork: @pid/@tgid the child, @ppid/@ptgid the task that forked it.
 * sched_exit: @pid/@tgid the exiting thread, @ppid/@ptgid its parent
 * process, @exit_code the wait status (code << 8 | signal).
 */
struct magnet_sched_proc_payload {
	__u32 pid;
	__u32 tgid;
	__u32 ppid;
	__u32 ptgid;
	__s32 exit_code;
	__u32 flags;		/* MAGNET_SCHED_F_* */
	char comm[MAGNET_COMM_LEN];
};

#define MAGNET_SCHED_F_THREAD	0x1	/* fork: a thread (same tgid) */

/* sched_exec: @pid now runs @filename (tail kept if longer). */
struct magnet_sched_exec_payload {
	__u32 pid;
	__u32 tgid;
	__u32 old_pid;		/* thread ID before exec (a non-leader exec) */
	__u32 reserved;
	char comm[MAGNET_COMM_LEN];
	char filename[64];
};

/*
 * Page faults.  @address is a user virtual address, present only with
 * MAGNET_FAULT_F_ADDR (never a kernel address); @ip is the user
 * instruction pointer of a fault in user mode, else 0.  @error_code is the
 * architecture's raw code (x86: X86_PF_* bits).
 */
struct magnet_fault_payload {
	__u64 address;
	__u64 ip;
	__u32 error_code;
	__u32 flags;		/* MAGNET_FAULT_F_* */
};

#define MAGNET_FAULT_F_WRITE	0x01	/* write access */
#define MAGNET_FAULT_F_USER	0x02	/* fault in user mode */
#define MAGNET_FAULT_F_PROT	0x04	/* page present: protection fault */
#define MAGNET_FAULT_F_INSTR	0x08	/* instruction fetch */
#define MAGNET_FAULT_F_ADDR	0x10	/* @address holds a user address */

/*
 * Page allocator: 2^@order pages allocated or freed.  No page pointer and
 * no frame number.  @migratetype and @gfp_flags are -1/0 on free.
 */
struct magnet_page_payload {
	__u32 order;
	__u32 gfp_flags;	/* gfp_t bits of the allocation */
	__s32 migratetype;	/* MIGRATE_* of the allocation */
	__s32 node;		/* NUMA node of the pages, -1 unknown */
	__u32 flags;		/* MAGNET_PAGE_F_* */
	__u32 reserved;
};

#define MAGNET_PAGE_F_FAILED	0x1	/* allocation failed */

/*
 * TCP connection state at a segment (the papers' magnet_tcp): ports in
 * host order, windows in bytes, @srtt_us smoothed RTT, @rto_us the
 * retransmission timeout, sequence numbers as the kernel keeps them,
 * @tcp_flags the segment's header flags (FIN 0x01 SYN 0x02 RST 0x04
 * PSH 0x08 ACK 0x10 URG 0x20 ECE 0x40 CWR 0x80).
 */
struct magnet_tcp_payload {
	__u16 sport;
	__u16 dport;
	__u8 family;		/* AF_INET / AF_INET6 */
	__u8 state;		/* TCP_ESTABLISHED ... */
	__u8 ca_state;		/* TCP_CA_Open ... */
	__u8 tcp_flags;
	__u32 len;		/* segment payload bytes */
	__u32 snd_wnd;
	__u32 rcv_wnd;
	__u32 snd_cwnd;		/* packets */
	__u32 snd_ssthresh;	/* packets */
	__u32 srtt_us;
	__u32 rto_us;
	__u32 packets_out;
	__u32 retrans_out;
	__u32 write_seq;
	__u32 copied_seq;
	__u32 snd_nxt;
	__u32 snd_una;
	__u32 rcv_nxt;
	__u32 mss_cache;
};

/*
 * IPv4 header of a packet (the papers' magnet_ip), host order.  @hdr_len
 * bytes of the packet from its IP header on follow the struct when the
 * probe module is asked for them (magnet_tcpip.ko hdr_bytes=N).
 */
struct magnet_ip_payload {
	__u8 version;
	__u8 ihl;		/* header length in 32-bit words */
	__u8 tos;
	__u8 ttl;
	__u8 protocol;
	__u8 frag_flags;	/* DF 0x2, MF 0x1 */
	__u16 frag_off;		/* fragment offset, 8-byte units */
	__u16 id;
	__u16 tot_len;
	__u32 ifindex;
	__u32 len;		/* skb->len */
	__u16 hdr_len;		/* packet bytes that follow */
	__u16 flags;		/* MAGNET_NET_F_TX / _RX */
};

/*
 * Run-time kprobe (MAGNET_CMD_KPROBE_NEW): the asked-for arguments and,
 * for a kretprobe, the return value.  @valid has bit i for arg[i] and
 * MAGNET_KPROBE_V_RET for @ret.  A value that is a kernel address is
 * replaced by a keyed hash of it and its bit set in @hashed.
 */
struct magnet_kprobe_payload {
	__u16 valid;
	__u16 hashed;
	__u32 reserved;
	__u64 arg[6];
	__u64 ret;
};

#define MAGNET_KPROBE_NARGS	6
#define MAGNET_KPROBE_V_RET	0x40

/*
 * Correlator output (docs/CORRELATE.md): one record per chain of events
 * with the same abstract ID that a correlator matched, in record.event
 * MAGNET_EVENT_CORR.  record.abstract_id is the chain's key,
 * record.pid/tgid those of the chain's first event, record.timestamp the
 * time the record was written.  The payload is struct magnet_corr_rec
 * followed by @nsteps struct magnet_corr_step, one per step of the chain
 * in chain order.
 */
#define MAGNET_CORR_STEPS_MIN	2
#define MAGNET_CORR_STEPS_MAX	8
#define MAGNET_CORR_ALTS_MAX	4	/* points per step (p1|p2|...) */

#define MAGNET_CORR_F_EXPIRED	0x1	/* window passed before the last step */
#define MAGNET_CORR_F_RESTART	0x2	/* a new first-step event for the key */
#define MAGNET_CORR_F_SKIP	0x4	/* an event of a later step came first */
#define MAGNET_CORR_F_FLUSH	0x8	/* the correlator was deleted */

struct magnet_corr_rec {
	__u32 corr_id;		/* the correlator's ID (CORR_GET) */
	__u16 nsteps;		/* steps of the chain, 2..8 */
	__u16 reached;		/* steps reached; == nsteps: complete */
	__u32 flags;		/* MAGNET_CORR_F_*; 0 when complete */
	__u32 reserved;
	__u64 start;		/* timestamp of the first step's event */
};

/*
 * Step i: @delta_ns = first event of step i - first event of step i-1
 * (0 for step 0 and for steps not reached): the time the data spent
 * between the two layers.  @count events of the step joined the chain,
 * carrying @bytes (the payload's length field for network payloads, else
 * 0); @event is the event ID of the step's first event (0: not reached).
 */
struct magnet_corr_step {
	__u64 delta_ns;
	__u32 count;
	__u32 bytes;
	__u16 event;
	__u16 reserved[3];
};

/* ------------------------------------------------------------------ */
/* Generic netlink family                                              */
/* ------------------------------------------------------------------ */

/*
 * The family's commands and attribute sets, its name, version and
 * multicast group: generated from its specification, docs/magnet.yaml
 * (scripts/ynl-regen.sh, the kernel's ynl-gen-c), which documents each
 * attribute.  What follows here are the values the attributes carry.
 */
#include "magnet_genl.h"

#define MAGNET_CMD_UNSPEC	0	/* no command has it */

/*
 * Filters (docs/FILTERS.md), nested in MAGNET_A_FILTER.  A key attribute
 * left out is a wildcard.  Among the filters matching an event the most
 * specific (most keys given) wins, then the higher PRIORITY, then the
 * older filter; only that one acts.
 */
enum magnet_filter_action {
	MAGNET_FILTER_DELIVER	= 0,	/* to STREAMs, or the point's stream */
	MAGNET_FILTER_DROP	= 1,	/* refuse the event */
	__MAGNET_FILTER_ACTION_MAX,
};

/* enum magnet_filter_attr: magnet_genl.h */

#define MAGNET_FILTER_STREAMS_MAX	4	/* STREAM attributes per filter */
#define MAGNET_FILTERS_MAX		256

/*
 * Synthesizers (docs/SYNTH.md), nested in MAGNET_A_SYNTH: statistics of a
 * quantity of the events of one point, per key, per period, written as
 * SYNTH records into a stream and queryable (SYNTH_GET with VALUES).
 */
enum magnet_synth_quantity {
	MAGNET_SYNTH_Q_SIZE	= 0,	/* record size in bytes (hdr.size) */
	MAGNET_SYNTH_Q_FIELD	= 1,	/* unsigned payload field */
	MAGNET_SYNTH_Q_INTERVAL	= 2,	/* ns since the key's previous event */
	__MAGNET_SYNTH_Q_MAX,
};

/* Group-by keys (MAGNET_SYNTH_A_GROUP) */
#define MAGNET_SYNTH_K_EVENT	0x01
#define MAGNET_SYNTH_K_CPU	0x02
#define MAGNET_SYNTH_K_AID	0x04
#define MAGNET_SYNTH_K_PID	0x08
#define MAGNET_SYNTH_K_TGID	0x10
#define MAGNET_SYNTH_K_CGROUP	0x20
#define MAGNET_SYNTH_K_ALL	0x3f

/* enum magnet_synth_attr: magnet_genl.h */

#define MAGNET_SYNTHS_MAX		64
#define MAGNET_SYNTH_KEYS_DEFAULT	1024
#define MAGNET_SYNTH_KEYS_MAX		65536
#define MAGNET_SYNTH_PERIOD_MIN		10000000ull	/* 10 ms */
#define MAGNET_SYNTH_PERIOD_MAX		3600000000000ull	/* 1 h */

/*
 * Correlators (docs/CORRELATE.md), nested in MAGNET_A_CORR.  A chain of
 * STEPs (each a nest of 1..4 MAGNET_CORR_STEP_A_EVENT, the points that
 * may make that step), matched per abstract ID within WINDOW ns; records
 * (MAGNET_EVENT_CORR) go to STREAM.
 */
/* enum magnet_corr_attr: magnet_genl.h */

/* enum magnet_corr_step_attr: magnet_genl.h */

#define MAGNET_CORRS_MAX		16
#define MAGNET_CORR_WINDOW_MIN		1000ull			/* 1 us */
#define MAGNET_CORR_WINDOW_MAX		10000000000ull		/* 10 s */
#define MAGNET_CORR_PENDING_MAX		4096	/* open chains per correlator */

/* Stream geometry limits, checked with an extack message each. */
#define MAGNET_SUBBUF_SIZE_MIN		4096
#define MAGNET_SUBBUF_SIZE_MAX		(16u << 20)
#define MAGNET_SUBBUF_SIZE_DEFAULT	(256u << 10)
#define MAGNET_SUBBUF_COUNT_MIN		2
#define MAGNET_SUBBUF_COUNT_MAX		64
#define MAGNET_SUBBUF_COUNT_DEFAULT	2
#define MAGNET_STREAM_BYTES_MAX		(256u << 20)	/* per CPU */
#define MAGNET_STREAMS_MAX		64

/*
 * Buffer modes of a stream (MAGNET_A_STREAM_MODE), fixed at creation.
 * GLOBAL: one ring shared by all CPUs (writers serialize on a spinlock),
 * in global time order; default: one ring per CPU, lock-free.
 * OVERWRITE: a full ring reuses its oldest sub-buffer (flight recorder;
 * the events overwritten unread are counted); read only while frozen by
 * MAGNET_CMD_STREAM_SNAPSHOT; default: a full ring drops new events.
 */
#define MAGNET_STREAM_F_GLOBAL		0x1
#define MAGNET_STREAM_F_OVERWRITE	0x2
#define MAGNET_STREAM_F_ALL		(MAGNET_STREAM_F_GLOBAL | MAGNET_STREAM_F_OVERWRITE)

enum magnet_snapshot_op {
	MAGNET_SNAPSHOT_FREEZE	= 1,	/* stop writers, allow reads */
	MAGNET_SNAPSHOT_RESUME	= 2,	/* writers go on, reads refused */
};

/*
 * Run-time kprobes, nested in MAGNET_A_KPROBE.  KPROBE_NEW creates a
 * point named NAME (its event ID comes back in MAGNET_A_PROBE_ID) that
 * records the arguments of ARGS and, for a kretprobe, the return value
 * (struct magnet_kprobe_payload); KPROBE_DEL removes it (NAME).
 */
/* enum magnet_kprobe_attr: magnet_genl.h */
#define MAGNET_KPROBES_MAX		64	/* run-time kprobes at once */

/* ------------------------------------------------------------------ */
/* Stream file ioctls (magnetfs)                                       */
/* ------------------------------------------------------------------ */

#define MAGNET_IOC_MAGIC	0xB7

/*
 * statfs() f_type of a magnetfs mount (mount -t magnetfs none
 * /sys/kernel/magnet): one file per stream, the same files as
 * /sys/kernel/debug/magnet/<stream>.
 */
#define MAGNETFS_MAGIC		0x4d474e54	/* "MGNT" */
#define MAGNETFS_DEFAULT_DIR	"/sys/kernel/magnet"

/* Per-stream counters, as the netlink STREAM_GET reports them. */
struct magnet_stream_stats {
	__u64 produced;
	__u64 written;
	__u64 lost;
	__u64 read;
	__u64 bytes;
	__u64 switches;		/* sub-buffer switches */
	__u64 fill;		/* bytes written and not yet read */
	/* appended with the buffer modes: see MAGNET_IOC_GET_STATS */
	__u64 overwritten;	/* events overwritten unread (overwrite mode) */
	__u64 overwritten_bytes;
	__u64 frozen_lost;	/* events refused while frozen (in @lost) */
	/* appended with spans: lost events no LOST record reports yet */
	__u64 lost_pending;
};

/* The first layout (ABI 1 as released): the 7 counters up to @fill. */
#define MAGNET_STREAM_STATS_SIZE_V1	56

/*
 * Statistics of the stream this file reads.  The struct size is part of
 * the ioctl number; the kernel accepts every size from
 * MAGNET_STREAM_STATS_SIZE_V1 on, fills what it knows up to that size and
 * zeroes the rest, so binaries built against an older header keep
 * working (their number carries their size).
 */
#define MAGNET_IOC_GET_STATS	_IOR(MAGNET_IOC_MAGIC, 0x01, struct magnet_stream_stats)
#define MAGNET_IOC_GET_STATS_V1	_IOC(_IOC_READ, MAGNET_IOC_MAGIC, 0x01, MAGNET_STREAM_STATS_SIZE_V1)
/* Write pending LOST records on every CPU so a reader sees all losses. */
#define MAGNET_IOC_FLUSH	_IO(MAGNET_IOC_MAGIC, 0x02)
/*
 * The read rule of one open file (docs/IOCTL.md): a read completes when
 * at least WATERMARK bytes and MIN_EVENTS probe events are in the stream
 * (and at least one record), or when TIMEOUT milliseconds have passed
 * (then with what there is), or when the stream is deleted.
 * WATERMARK: 0..subbuf_size * subbuf_count (one CPU's ring), default 0.
 * TIMEOUT: 0 (none, the default) .. MAGNET_TIMEOUT_MAX_MS.
 * MIN_EVENTS: 0..subbuf_size * subbuf_count / MAGNET_REC_HDR_SIZE.
 */
#define MAGNET_TIMEOUT_MAX_MS		(24ll * 3600 * 1000)
#define MAGNET_IOC_GET_WATERMARK	_IOR(MAGNET_IOC_MAGIC, 0x10, __u64)
#define MAGNET_IOC_SET_WATERMARK	_IOW(MAGNET_IOC_MAGIC, 0x11, __u64)
#define MAGNET_IOC_GET_TIMEOUT		_IOR(MAGNET_IOC_MAGIC, 0x12, __s64)
#define MAGNET_IOC_SET_TIMEOUT		_IOW(MAGNET_IOC_MAGIC, 0x13, __s64)
#define MAGNET_IOC_GET_MIN_EVENTS	_IOR(MAGNET_IOC_MAGIC, 0x14, __u64)
#define MAGNET_IOC_SET_MIN_EVENTS	_IOW(MAGNET_IOC_MAGIC, 0x15, __u64)

/*
 * Sub-buffer consumers: records moved to their destination without a copy
 * into a read buffer and without being looked at (docs/IOCTL.md, "Spans").
 * mmap() the rings read-only (MAP_SHARED, PROT_READ): ring R (the CPU's
 * number; 0 for a global-ring stream) at file offset
 * R * MAGNET_RING_STRIDE(subbuf_size, subbuf_count, page size).  Then
 * MAGNET_IOC_GET_SPAN holds the readable part of one ring's oldest
 * sub-buffer, whole records, until MAGNET_IOC_PUT_SPAN consumes it.
 * One span at a time per open file.
 */
#define MAGNET_RING_STRIDE(size, count, page)				\
	((((__u64)(size) * (count)) + (page) - 1) / (page) * (page))

struct magnet_span {
	__u32 flags;		/* in: MAGNET_SPAN_PARTIAL; out: MAGNET_SPAN_* */
	__u32 ring;		/* out: the ring (CPU) the span is in */
	__u64 offset;		/* out: file offset of its first byte in the mapping */
	__u64 len;		/* out: bytes of whole records (0: metadata only) */
	__u64 events;		/* out: events among them */
	/*
	 * in: a buffer for pending SYSINFO/EVENTDEF records (the ones
	 * read() returns first); out: bytes stored there.  They precede
	 * the span's records in the stream.
	 */
	__u64 meta_buf;		/* in: user pointer */
	__u32 meta_len;		/* in: its size; out: bytes stored */
	__u32 reserved;		/* 0 */
};

/* in: also the sub-buffer being written, up to what is committed */
#define MAGNET_SPAN_PARTIAL	0x1
/* out: the span ends a closed sub-buffer (a whole finished one, or its rest) */
#define MAGNET_SPAN_CLOSED	0x2

/*
 * GET: 0 and a span (or metadata only, @len 0); EAGAIN nothing to hold
 * now (poll() for the read rule); ENODATA the end: the stream was
 * deleted and everything was taken, or a frozen overwrite stream's
 * records were all taken (where read() returns 0); EBUSY this file holds a span
 * already, or a running overwrite stream; ENOBUFS metadata pending and
 * @meta_len cannot hold its next record; EINVAL unknown flags or
 * reserved not 0.  PUT: 0, or EINVAL when no span is held.
 */
#define MAGNET_IOC_GET_SPAN		_IOWR(MAGNET_IOC_MAGIC, 0x16, struct magnet_span)
#define MAGNET_IOC_PUT_SPAN		_IO(MAGNET_IOC_MAGIC, 0x17)
/* 0x18..0x1f: reserved for more read tuning. */

/* ------------------------------------------------------------------ */
/* Per-socket statistics: the sockstat file (docs/SOCKSTAT.md)         */
/* ------------------------------------------------------------------ */

/*
 * /sys/kernel/magnet/sockstat and /sys/kernel/debug/magnet/sockstat,
 * mode 0444.  Each open file is one client: it watches sockets given by
 * descriptor in the caller's own file table, and may subscribe to one.
 * The kernel dispatches on the ioctl number (_IOC_NR), copying
 * _IOC_SIZE bytes: a larger struct from a newer header is zero-filled
 * beyond what the kernel knows, a smaller one (at least
 * MAGNET_SOCK_STATS_SIZE_V1) is truncated; @size says what was filled.
 */
#define MAGNET_SOCKSTAT_NAME		"sockstat"
#define MAGNET_SOCK_STATS_VERSION	2
#define MAGNET_SOCK_STATS_SIZE_V1	248	/* the send side */
#define MAGNET_SOCK_STATS_SIZE_V2	360	/* + failed sends, the receive side */
#define MAGNET_SOCK_PERIOD_MIN_MS	10
#define MAGNET_SOCK_PERIOD_MAX_MS	60000
#define MAGNET_SOCK_WATCH_MAX		32	/* sockets watched system-wide */
/* watches held by one user (real uid of the file's opener) without
 * CAP_NET_ADMIN, over all its files: EDQUOT beyond */
#define MAGNET_SOCK_WATCH_USER_MAX	8

#define MAGNET_SOCK_F_TCP	0x1	/* the TCP fields are valid */
#define MAGNET_SOCK_F_GONE	0x2	/* a probe module left: counts stopped */
#define MAGNET_SOCK_F_CLOSED	0x4	/* the socket was closed (BY_ID) */
#define MAGNET_SOCK_F_LAYERS	0x8	/* the layer correlator runs */
#define MAGNET_SOCK_F_RX_LAYERS	0x10	/* the receive layer correlator runs */
/* layer_*[i]: from step i to step i + 1 of the chain
 * tcp_send|udp_send, ip_send, dev_send, sock_send (docs/CORRELATE.md) */
#define MAGNET_SOCK_LAYERS	3
/*
 * rx_layer_*[i]: from step i to step i + 1 of the chain
 * dev_recv, ip_recv, udp_recv|tcp_recv, sock_recv
 */
#define MAGNET_SOCK_RX_LAYERS	3

struct magnet_sock_stats {
	__u32 size;		/* out: bytes filled by the kernel */
	__u32 version;		/* out: MAGNET_SOCK_STATS_VERSION */
	__s32 fd;		/* in: STATS: the socket; BY_ID: -1 */
	__u32 flags;		/* out: MAGNET_SOCK_F_* */
	__u64 abstract_id;	/* in: BY_ID; out: the socket's inode */
	__u64 start_ns;		/* CLOCK_MONOTONIC: counting started */
	__u64 now_ns;		/* CLOCK_MONOTONIC: figures read */
	__u64 seq;		/* subscription: period number, from 1 */
	/* socket layer (point sock_send): calls and bytes */
	__u64 sock_calls;
	__u64 sock_bytes;
	/* device layer (point dev_send): frames and bytes */
	__u64 dev_frames;
	__u64 dev_bytes;
	/* intervals between the application's sends, ns */
	__u64 ival_count;
	__u64 ival_mean;
	__u64 ival_var;		/* population variance, ns^2 */
	__u64 ival_min;
	__u64 ival_max;
	__u64 missed;		/* events not counted (NMI, reordered, ...) */
	/* TCP, read from the socket (MAGNET_SOCK_F_TCP) */
	__u64 unsent;		/* written, not yet sent: write_seq - snd_nxt */
	__u64 unacked;		/* sent, not yet acked: snd_nxt - snd_una */
	__u32 srtt_us;
	__u32 rttvar_us;
	__u32 snd_cwnd;		/* segments */
	__u32 mss;
	__u32 total_retrans;
	__u32 tcp_state;
	/* any socket */
	__u32 wmem_queued;	/* bytes in the send queue */
	__u32 sndbuf;
	__u64 sub_dropped;	/* summaries dropped: the reader fell behind */
	/* time between the layers, per send (MAGNET_SOCK_F_LAYERS) */
	__u64 chains;		/* sends paired through every layer */
	__u64 chains_partial;	/* closed early: coalesced, restarted, expired */
	__u64 layer_mean[MAGNET_SOCK_LAYERS];	/* ns, floor, over @chains */
	__u64 layer_last[MAGNET_SOCK_LAYERS];	/* ns, the last complete send */
	/* version 2 (MAGNET_SOCK_STATS_SIZE_V2) */
	__u64 sock_errors;	/* failed send calls (MAGNET_NET_F_ERROR) */
	/* receive side: sock_recv calls that returned data, and bytes */
	__u64 rx_sock_calls;
	__u64 rx_sock_bytes;
	__u64 rx_sock_errors;	/* failed receive calls (EAGAIN, ...) */
	/* dev_recv: frames for the socket and their bytes */
	__u64 rx_dev_frames;
	__u64 rx_dev_bytes;
	/* time between the receive layers, per datagram or segment read */
	__u64 rx_chains;	/* paired from dev_recv to sock_recv */
	__u64 rx_chains_partial; /* closed early: restarted, expired */
	__u64 rx_layer_mean[MAGNET_SOCK_RX_LAYERS];	/* ns, floor */
	__u64 rx_layer_last[MAGNET_SOCK_RX_LAYERS];	/* ns */
};

struct magnet_sock_sub {
	__s32 fd;		/* a socket this file watches */
	__u32 period_ms;	/* 0: end the subscription */
};

#define MAGNET_IOC_SOCK_WATCH		_IOW(MAGNET_IOC_MAGIC, 0x20, __s32)
#define MAGNET_IOC_SOCK_UNWATCH		_IOW(MAGNET_IOC_MAGIC, 0x21, __s32)
#define MAGNET_IOC_SOCK_STATS		_IOWR(MAGNET_IOC_MAGIC, 0x22, struct magnet_sock_stats)
#define MAGNET_IOC_SOCK_STATS_BY_ID	_IOWR(MAGNET_IOC_MAGIC, 0x23, struct magnet_sock_stats)
#define MAGNET_IOC_SOCK_SUBSCRIBE	_IOW(MAGNET_IOC_MAGIC, 0x24, struct magnet_sock_sub)

#endif /* _UAPI_MAGNET_H */

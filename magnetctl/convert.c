// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl convert --to pcapng [-o OUT] FILE...: the records that carry
 * packet bytes (magnet_tcpip.ko's ip_hdr_send / ip_hdr_recv with
 * hdr_bytes=N: struct magnet_ip_payload, then the first hdr_len bytes of
 * the packet from its IP header on) as a pcapng file (IETF
 * draft-ietf-opsawg-pcapng) that tshark and Wireshark read:
 *   - one Section Header Block (shb_os: the traced kernel's release);
 *   - one Interface Description Block per (ifindex, event), written before
 *     its first packet: LINKTYPE_RAW (101, packets start at the IP
 *     header), if_name "ifN:EVENT", if_tsresol 9 (ns);
 *   - one Enhanced Packet Block per record: the wall-clock time (SYSINFO's
 *     wall_ns_at_zero + timestamp), the bytes recorded (captured length)
 *     of the packet's IP total length (original length), epb_flags with
 *     the direction, and a comment "EVENT cpu=C pid=P tgid=T socket=ID".
 * The FILEs are merged in time order as magnetctl dump does.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magnetctl.h"
#include "output.h"

#define NSEC_PER_SEC	1000000000ull

#define PCAPNG_SHB	0x0A0D0D0Au
#define PCAPNG_IDB	0x00000001u
#define PCAPNG_EPB	0x00000006u
#define PCAPNG_MAGIC	0x1A2B3C4Du
#define LINKTYPE_RAW	101

#define OPT_END		0
#define OPT_COMMENT	1
#define SHB_OS		3
#define SHB_USERAPPL	4
#define IF_NAME		2
#define IF_DESCRIPTION	3
#define IF_TSRESOL	9
#define EPB_FLAGS	2

#define MAX_IFACES	1024

struct iface {
	unsigned int ifindex;
	char event[MAGNET_NAME_MAX];
};

struct conv {
	FILE *f;
	struct iface ifs[MAX_IFACES];
	unsigned int nifs;
	unsigned long long wall_ns_at_zero, clock_hz;
	bool have_sysinfo, shb_done;
	char release[65];
	unsigned long long packets, skipped;
	/* the block being built */
	unsigned char *blk;
	size_t len, cap;
};

static int put(struct conv *c, const void *p, size_t n)
{
	if (c->len + n > c->cap) {
		size_t cap = c->cap ? c->cap : 512;
		unsigned char *nb;

		while (cap < c->len + n)
			cap *= 2;
		nb = realloc(c->blk, cap);
		if (!nb)
			return -ENOMEM;
		c->blk = nb;
		c->cap = cap;
	}
	memcpy(c->blk + c->len, p, n);
	c->len += n;
	return 0;
}

static int put32(struct conv *c, uint32_t v)
{
	return put(c, &v, 4);
}

static int put16(struct conv *c, uint16_t v)
{
	return put(c, &v, 2);
}

static int pad4(struct conv *c)
{
	static const unsigned char z[4];

	return put(c, z, (4 - c->len % 4) % 4);
}

static int put_opt(struct conv *c, uint16_t code, const void *v, size_t n)
{
	if (n > 0xffff)
		n = 0xffff;
	return put16(c, code) ?: put16(c, (uint16_t)n) ?: put(c, v, n) ?:
	       pad4(c);
}

static int put_opt_str(struct conv *c, uint16_t code, const char *s)
{
	return put_opt(c, code, s, strlen(s));
}

static void begin(struct conv *c, uint32_t type)
{
	c->len = 0;
	put32(c, type);
	put32(c, 0);		/* total length, set by finish() */
}

/* End of options, the trailing length; write the block out. */
static int finish(struct conv *c, bool opts)
{
	uint32_t total;

	if (opts && (put16(c, OPT_END) || put16(c, 0)))
		return -ENOMEM;
	if (pad4(c))
		return -ENOMEM;
	total = (uint32_t)c->len + 4;
	if (put32(c, total))
		return -ENOMEM;
	memcpy(c->blk + 4, &total, 4);
	if (fwrite(c->blk, 1, c->len, c->f) != c->len)
		return -EIO;
	return 0;
}

static int write_shb(struct conv *c)
{
	char app[64];
	int64_t section_len = -1;

	snprintf(app, sizeof(app), "magnetctl %s", MAGNET_VERSION_STRING);
	begin(c, PCAPNG_SHB);
	put32(c, PCAPNG_MAGIC);
	put16(c, 1);
	put16(c, 0);
	put(c, &section_len, 8);
	if (c->release[0])
		put_opt_str(c, SHB_OS, c->release);
	put_opt_str(c, SHB_USERAPPL, app);
	put_opt_str(c, OPT_COMMENT,
		    "MAGNET trace: packet header bytes of the TCP/IP state probes");
	c->shb_done = true;
	return finish(c, true);
}

/* The interface of (ifindex, event), its IDB written on first use. */
static int iface_id(struct conv *c, unsigned int ifindex, const char *event,
		    unsigned int layer, uint32_t *id)
{
	char name[MAGNET_NAME_MAX + 16], desc[160];
	uint8_t tsresol = 9;
	unsigned int i;
	int ret;

	for (i = 0; i < c->nifs; i++) {
		if (c->ifs[i].ifindex == ifindex &&
		    !strcmp(c->ifs[i].event, event)) {
			*id = i;
			return 0;
		}
	}
	if (c->nifs == MAX_IFACES)
		return -ENOSPC;
	c->ifs[i].ifindex = ifindex;
	snprintf(c->ifs[i].event, sizeof(c->ifs[i].event), "%s", event);
	snprintf(name, sizeof(name), "if%u:%s", ifindex, event);
	snprintf(desc, sizeof(desc),
		 "MAGNET event %s (layer %s) on the device of ifindex %u",
		 event, magnet_layer_name(layer), ifindex);
	begin(c, PCAPNG_IDB);
	put16(c, LINKTYPE_RAW);
	put16(c, 0);
	put32(c, 0);		/* snaplen: no limit */
	put_opt_str(c, IF_NAME, name);
	put_opt_str(c, IF_DESCRIPTION, desc);
	put_opt(c, IF_TSRESOL, &tsresol, 1);
	ret = finish(c, true);
	if (ret)
		return ret;
	*id = c->nifs++;
	return 0;
}

static bool ip_field(const struct magnet_rec *r, const char *name,
		     unsigned long long *v)
{
	const struct magnet_field *f;
	unsigned int i, n;

	f = magnet_payload_fields(MAGNET_PAYLOAD_IP, &n);
	for (i = 0; f && i < n; i++) {
		if (!strcmp(f[i].name, name)) {
			*v = r->u.fields[i];
			return true;
		}
	}
	return false;
}

static int convert_rec(struct conv *c, const struct magnet_rec *r)
{
	unsigned long long hdr_len = 0, ifindex = 0, tot_len = 0, len = 0;
	unsigned long long flags = 0, ns, wall;
	uint32_t id, epb_flags, orig;
	char comment[160];
	int ret;

	if (r->kind == MAGNET_REC_SYSINFO) {
		c->wall_ns_at_zero = r->u.sysinfo.wall_ns_at_zero;
		c->clock_hz = r->u.sysinfo.clock_hz;
		c->have_sysinfo = true;
		if (!c->release[0])
			snprintf(c->release, sizeof(c->release), "%s",
				 r->u.sysinfo.release);
		return 0;
	}
	if (r->kind != MAGNET_REC_FIELDS || r->payload_type != MAGNET_PAYLOAD_IP)
		return 0;
	ip_field(r, "hdr_len", &hdr_len);
	ip_field(r, "ifindex", &ifindex);
	ip_field(r, "tot_len", &tot_len);
	ip_field(r, "len", &len);
	ip_field(r, "flags", &flags);
	if (!hdr_len ||
	    sizeof(struct magnet_ip_payload) + hdr_len > r->payload_len) {
		c->skipped++;
		return 0;
	}
	if (!c->shb_done) {
		ret = write_shb(c);
		if (ret)
			return ret;
	}
	ret = iface_id(c, (unsigned int)ifindex, r->name, r->layer, &id);
	if (ret)
		return ret;
	ns = r->hdr.timestamp;
	if (c->clock_hz && c->clock_hz != NSEC_PER_SEC)
		ns = (unsigned long long)((unsigned __int128)ns * NSEC_PER_SEC /
					  c->clock_hz);
	wall = c->wall_ns_at_zero + ns;
	/* the IP total length; a GSO super-packet's may be 0: its skb length */
	orig = (uint32_t)(tot_len >= hdr_len ? tot_len :
			  len >= hdr_len ? len : hdr_len);
	/* epb_flags bits 0-1: 1 inbound, 2 outbound */
	epb_flags = flags & MAGNET_NET_F_TX ? 2 : flags & MAGNET_NET_F_RX ? 1 : 0;
	snprintf(comment, sizeof(comment),
		 "%s cpu=%u pid=%u tgid=%u socket=%llu ifindex=%llu len=%llu",
		 r->name, r->hdr.cpu, r->hdr.pid, r->hdr.tgid,
		 (unsigned long long)r->hdr.abstract_id, ifindex, len);
	begin(c, PCAPNG_EPB);
	put32(c, id);
	put32(c, (uint32_t)(wall >> 32));
	put32(c, (uint32_t)wall);
	put32(c, (uint32_t)hdr_len);
	put32(c, orig);
	put(c, (const unsigned char *)r->payload +
	    sizeof(struct magnet_ip_payload), hdr_len);
	pad4(c);
	put_opt(c, EPB_FLAGS, &epb_flags, 4);
	put_opt_str(c, OPT_COMMENT, comment);
	ret = finish(c, true);
	if (!ret)
		c->packets++;
	return ret;
}

static int convert_pcapng(const char *out, int argc, char **argv)
{
	struct conv *c;
	struct magnet_sorted *st;
	const struct magnet_rec *rec;
	int i, ret, err = 0, code = MC_EXIT_OK;
	bool to_stdout = !out || !strcmp(out, "-");

	for (i = 0; i < argc; i++) {
		FILE *f = fopen(argv[i], "r");

		if (!f) {
			mc_error("convert: %s: %s", argv[i], strerror(errno));
			return MC_EXIT_FILE;
		}
		fclose(f);
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		mc_error("convert: out of memory");
		return MC_EXIT_FILE;
	}
	ret = magnet_sorted_open((const char *const *)argv, argc, &st);
	if (ret) {
		mc_error("convert: %s", strerror(-ret));
		free(c);
		return MC_EXIT_FILE;
	}
	c->f = to_stdout ? stdout : fopen(out, "w");
	if (!c->f) {
		mc_error("convert: %s: %s", out, strerror(errno));
		magnet_sorted_close(st);
		free(c);
		return MC_EXIT_FILE;
	}
	while ((ret = magnet_sorted_next(st, &rec)) > 0) {
		err = convert_rec(c, rec);
		if (err)
			break;
	}
	if (!err && !c->shb_done)
		err = write_shb(c);	/* no packets: a valid empty file */
	if (ret < 0) {
		mc_error("convert: %s", magnet_sorted_errmsg(st));
		code = MC_EXIT_FILE;
	} else if (err) {
		mc_error("convert: %s: %s", to_stdout ? "standard output" : out,
			 err == -ENOSPC ? "more than 1024 interfaces" :
			 strerror(-err));
		code = MC_EXIT_FILE;
	}
	if (!to_stdout && fclose(c->f) && code == MC_EXIT_OK) {
		mc_error("convert: %s: %s", out, strerror(errno));
		code = MC_EXIT_FILE;
	}
	if (code == MC_EXIT_OK && !c->packets)
		fprintf(stderr,
			"magnetctl: convert: no packet bytes in the trace (%llu ip_hdr records without them): "
			"load magnet_tcpip with hdr_bytes=N\n", c->skipped);
	if (code == MC_EXIT_OK && !to_stdout) {
		out_open_object(NULL);
		out_string("file", "%s: ", out);
		out_uint("packets", "%llu packets", c->packets);
		out_uint("interfaces", " on %llu interfaces", c->nifs);
		out_uint("skipped", " (%llu ip_hdr records without packet bytes)\n",
			 c->skipped);
		out_close_object();
	}
	magnet_sorted_close(st);
	free(c->blk);
	free(c);
	return code;
}

#define CONVERT_USAGE "Usage: magnetctl convert --to pcapng [-o OUT] FILE...\n" \
	"       magnetctl convert --to ctf -o DIR FILE...\n" \
	"       magnetctl convert --to perfetto [-o OUT] FILE...\n"

int do_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "to",		required_argument, NULL, 't' },
		{ "output",	required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *to = NULL, *out = NULL;
	/* getopt_long over "convert ARGS...": options anywhere, --opt=V too */
	char **gv = argv - 1;
	int c, i;

	if (argc >= 1 && !strcmp(argv[0], "help")) {
		printf(CONVERT_USAGE);
		return MC_EXIT_OK;
	}
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc + 1, gv, ":o:", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			to = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case ':':
			return mc_usage_error("convert: %s needs a value", gv[optind - 1]);
		default:
			return mc_option_error("convert", gv[optind - 1]);
		}
	}
	i = optind - 1;
	argc -= i;
	argv += i;
	if (!to)
		return mc_usage_error("convert: missing --to FORMAT (pcapng, ctf, perfetto)");
	if (strcmp(to, "pcapng") && strcmp(to, "ctf") && strcmp(to, "perfetto"))
		return mc_usage_error("convert: unknown format '%s' (pcapng, ctf, perfetto)",
				      to);
	if (argc < 1)
		return mc_usage_error("convert: missing FILE");
	if (!strcmp(to, "ctf"))
		return convert_ctf(out, argc, argv);
	if (!strcmp(to, "perfetto"))
		return convert_perfetto(out, argc, argv);
	return convert_pcapng(out, argc, argv);
}

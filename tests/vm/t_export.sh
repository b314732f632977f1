#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# magnetctl export, the Prometheus exporter (docs/PROMETHEUS.md), scraped
# by a real Prometheus server (Debian's prometheus) on the loopback
# address while UDP traffic flows between two namespaces with four
# network probes, a filter, a synthesizer and a correlator:
#  1. bad arguments: exit codes and messages naming them;
#  2. promtool check metrics accepts the exposition;
#  3. after the traffic, Prometheus's query API returns what magnetctl -j
#     shows: stream counters, probe hits, filter counters, the
#     synthesizer's per-key totals, the correlator's counters; the
#     per-step latency histograms (--corr-stream) hold every completed
#     chain and export read every CORR record (the synthesizer and the
#     correlator start at udp_send, so that the scrapes' own TCP traffic
#     does not move the counters compared); every panel query of the
#     Grafana dashboard (docs/grafana/magnet-dashboard.json) answers with
#     data, and its variables list this exporter and synthesizer;
#  4. an exporter without CAP_NET_ADMIN leaves filters and synthesizers
#     out and says so (magnet_export_denied);
#  5. with MAGNET unloaded a scrape says magnet_up 0.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
need_tools udp_flood udp_sink
need_cmd prometheus promtool python3
dmesg_mark
netns_setup || bail_out "network namespaces"
magnet_load || bail_out "cannot load the modules"
R=$MAGNET_RESULTS
PORT=19743
PROM=19090
N=300
PROBES="sock_send udp_send ip_send dev_send"
PD=$(mktemp -d /tmp/magnet-prom.XXXXXX)
on_exit "rm -rf $PD"

# scrape URL FILE: GET URL into FILE (python: no curl in every guest)
scrape() {
	python3 -c 'import sys, urllib.request
open(sys.argv[2], "wb").write(urllib.request.urlopen(sys.argv[1], timeout=10).read())' "$1" "$2"
}

# ---- 1. bad arguments -----------------------------------------------------
msg=$("$MAGNETCTL" export --listen nonsense 2>&1)
check_eq "--listen without a port: exit 1" 1 $?
check "  ... the message names it" grep -q "'nonsense': expected ADDR:PORT" <<<"$msg"
msg=$("$MAGNETCTL" export --corr-stream nosuch 2>&1)
check_eq "--corr-stream of no stream: exit 5" 5 $?
check "  ... the message names it" grep -q "corr-stream nosuch" <<<"$msg"
msg=$("$MAGNETCTL" export --max-keys x 2>&1)
check_eq "--max-keys x: exit 1" 1 $?

# ---- set-up ----------------------------------------------------------------
check "stream create net" magnetctl stream create net subbuf-size 1M subbuf-count 4
check "stream create corr" magnetctl stream create corr
# shellcheck disable=SC2086
check "probes enabled into net" magnetctl probe enable $PROBES stream net
check "filter add half: dev_send every 2" magnetctl filter add half event dev_send every 2
# UDP only: the scrapes (TCP over loopback) must not feed them, so that
# the counters stand still once the traffic is over
check "synth add sb: udp_send bytes per socket" \
	magnetctl synth add sb probe udp_send by id value size period 500ms stream net
check "correlate add c: the UDP send chain" \
	magnetctl correlate add c chain udp_send,ip_send,dev_send window 50ms stream corr
bg exp "$MAGNETCTL" export --listen 127.0.0.1:$PORT --corr-stream corr
wait_line "$(out exp)" '^export: serving' 10 || bail_out "export did not start"
msg=$("$MAGNETCTL" export --listen 127.0.0.1:$PORT 2>&1)
check_eq "a second exporter on the same port: exit 3" 3 $?
check "  ... the message says why" grep -q "Address already in use" <<<"$msg"
bg rec "$MAGNETCTL" record net -o "$R/net.trace"
record_started rec || bail_out "record did not start"
cat >"$PD/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: magnet
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
bg prom prometheus --config.file="$PD/prometheus.yml" --storage.tsdb.path="$PD/data" \
	--web.listen-address=127.0.0.1:$PROM --log.level=warn
check "prometheus is ready" python3 -c 'import sys, time, urllib.request
for i in range(120):
    try:
        urllib.request.urlopen("http://127.0.0.1:%s/-/ready" % sys.argv[1], timeout=2); sys.exit(0)
    except Exception:
        time.sleep(1)
sys.exit(1)' $PROM

# ---- traffic ---------------------------------------------------------------
udp_sink_start sink 5002 "$N" || bail_out "udp_sink did not start"
check "UDP: $N datagrams of 1000 bytes" udp_send u "$N" 1000
bg_wait sink 20
sleep 1
# shellcheck disable=SC2086
check "probes disabled" magnetctl probe disable $PROBES
kill -INT "${BG_PID[rec]}"
bg_wait rec 20
check_eq "record stops" 0 $?
sleep 4		# the scrapes after the last change

# ---- 2. the exposition -------------------------------------------------------
check "scrape /metrics" scrape "http://127.0.0.1:$PORT/metrics" "$R/metrics.txt"
check "promtool check metrics" sh -c "promtool check metrics <'$R/metrics.txt' >'$R/promtool.out' 2>&1"
diag "$(head -5 "$R/promtool.out")"

# ---- 3. Prometheus's view = magnetctl's ---------------------------------------
magnetctl -j stream show net >"$R/stream.json"
magnetctl -j probe list >"$R/probes.json"
magnetctl -j filter show half >"$R/filter.json"
magnetctl -j synth show sb values >"$R/synth.json"
magnetctl -j synth show sb >"$R/synthinfo.json"
magnetctl -j correlate show c >"$R/corr.json"
python3 - "$R" "$PROM" "$N" "$MAGNET_REPO/docs/grafana/magnet-dashboard.json" "$PORT" >"$R/check.tap" <<'PY'
import json, sys, urllib.parse, urllib.request
R, prom, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = []
def ok(cond, what, why=""):
    out.append(("ok" if cond else "not ok") + " - " + what + ("" if cond else " # " + str(why)[:300]))
def q(expr):
    u = "http://127.0.0.1:%s/api/v1/query?%s" % (prom, urllib.parse.urlencode({"query": expr}))
    d = json.load(urllib.request.urlopen(u, timeout=10))
    return {tuple(sorted((k, v) for k, v in r["metric"].items() if k not in ("__name__", "job", "instance"))):
            float(r["value"][1]) for r in d["data"]["result"]}
def one(expr):
    v = q(expr)
    return list(v.values())[0] if len(v) == 1 else v
st = json.load(open(R + "/stream.json"))
st = st[0] if isinstance(st, list) else st
ok(one("magnet_up") == 1, "magnet_up 1 while MAGNET is loaded")
for f in ("produced", "written", "lost", "read"):
    got = one('magnet_stream_%s_total{stream="net"}' % f)
    ok(got == st[f], "stream net %s: Prometheus %s = magnetctl %s" % (f, got, st[f]), (got, st[f]))
ok(st["written"] >= 3 * n, "the stream recorded the traffic (%d events)" % st["written"], st["written"])
probes = {p["name"]: p for p in json.load(open(R + "/probes.json"))}
for p in ("sock_send", "udp_send", "ip_send", "dev_send"):
    got = one('magnet_probe_hits_total{probe="%s"}' % p)
    ok(got == probes[p]["hits"] and got >= n, "probe %s hits: %s = magnetctl's" % (p, got), (got, probes[p]["hits"]))
fl = json.load(open(R + "/filter.json"))
fl = fl[0] if isinstance(fl, list) else fl
for f in ("matched", "delivered", "dropped"):
    got = one('magnet_filter_%s_total{filter="half"}' % f)
    ok(got == fl[f], "filter half %s: %s = magnetctl's" % (f, got), (got, fl[f]))
ok(fl["matched"] >= n and fl["dropped"] > 0, "the filter matched dev_send and dropped half", fl)
vals = json.load(open(R + "/synth.json"))
vals = vals.get("values", vals) if isinstance(vals, dict) else vals
tot = q('magnet_synth_samples_total{synth="sb"}')
want = {(("id", str(v["id"])), ("synth", "sb"), ("unit", "bytes")): float(v["total_count"]) for v in vals}
ok(tot == want and sum(want.values()) >= n, "synth sb: a series per socket, samples = magnetctl's total_count (%d keys)" % len(want),
   (tot, want))
si = json.load(open(R + "/synthinfo.json"))
si = si[0] if isinstance(si, list) else si
got = one('magnet_synth_missed_total{synth="sb"}')
ok(got == si["missed"], "synth sb missed: %s = magnetctl's" % got, (got, si["missed"]))
c = json.load(open(R + "/corr.json"))
c = c[0] if isinstance(c, list) else c
for f in ("completed", "expired", "records"):
    got = one('magnet_corr_%s_total{correlator="c"}' % f)
    ok(got == c[f], "correlator c %s: %s = magnetctl's" % (f, got), (got, c[f]))
ok(c["completed"] >= n * 9 // 10, "the correlator completed the chains (%d)" % c["completed"], c)
got = one('magnet_export_corr_records_total{stream="corr"}')
ok(got == c["records"], "export read every CORR record (%s)" % got, (got, c["records"]))
cnt = q('magnet_corr_step_latency_seconds_count{correlator="c"}')
steps = {dict(k)["step"]: v for k, v in cnt.items()}
ok(sorted(steps) == ["1", "2"] and steps["2"] == c["completed"],
   "histograms for steps 1-2; step 2 counts every completed chain", (steps, c["completed"]))
names = {dict(k)["step"]: (dict(k)["from"], dict(k)["to"]) for k in cnt}
ok(names.get("1") == ("udp_send", "ip_send") and names.get("2") == ("ip_send", "dev_send"),
   "steps named by their events", names)
inf = one('magnet_corr_step_latency_seconds_bucket{correlator="c",step="2",le="+Inf"}')
ok(inf == steps.get("2"), "the +Inf bucket is the count", (inf, steps.get("2")))
# the Grafana dashboard (docs/grafana/magnet-dashboard.json): every panel's
# query, its variables as Grafana fills them with "All", answers with data
dash = json.load(open(sys.argv[4]))
subst = {"$instance": ".*", "$synth": ".*", "$__rate_interval": "1m"}
for p in dash["panels"]:
    for t in p["targets"]:
        e = t["expr"]
        for k, v in subst.items():
            e = e.replace(k, v)
        try:
            u = "http://127.0.0.1:%s/api/v1/query?%s" % (prom, urllib.parse.urlencode({"query": e}))
            d = json.load(urllib.request.urlopen(u, timeout=10))
            res = d["data"]["result"] if d.get("status") == "success" else None
        except Exception as ex:
            res, d = None, ex
        ok(bool(res) and "$" not in e, "dashboard panel '%s' has data (%d series)" % (p["title"], len(res or [])), (e, d))
for var in dash["templating"]["list"]:
    q_ = var.get("definition", "")
    if not q_.startswith("label_values("):
        continue
    metric, label = [x.strip() for x in q_[len("label_values("):-1].split(",")]
    u = "http://127.0.0.1:%s/api/v1/label/%s/values?%s" % (prom, label, urllib.parse.urlencode({"match[]": metric}))
    vals_ = json.load(urllib.request.urlopen(u, timeout=10)).get("data", [])
    want_ = {"instance": "127.0.0.1:" + sys.argv[5], "synth": "sb"}[label]
    ok(want_ in vals_, "dashboard variable $%s lists %s" % (var["name"], want_), vals_)
print("\n".join(out))
PY
tap_import "$R/check.tap" $?

# an exporter without CAP_NET_ADMIN: public objects only, and it says so
bg exp_u setpriv --reuid=65534 --regid=65534 --clear-groups "$MAGNETCTL" export --listen 127.0.0.1:$((PORT + 1))
wait_line "$(out exp_u)" '^export: serving' 10 || bail_out "unprivileged export did not start"
check "scrape the unprivileged exporter" scrape "http://127.0.0.1:$((PORT + 1))/metrics" "$R/metrics-u.txt"
check "  ... magnet_up 1, filters and synthesizers denied" sh -c "grep -qx 'magnet_up 1' '$R/metrics-u.txt' &&
	grep -qx 'magnet_export_denied{object=\"filter\"} 1' '$R/metrics-u.txt' &&
	grep -qx 'magnet_export_denied{object=\"synth\"} 1' '$R/metrics-u.txt'"
check "  ... no filter or synthesizer series, the stream's are there" sh -c "! grep -q '^magnet_\(filter\|synth\)_' '$R/metrics-u.txt' &&
	grep -q '^magnet_stream_written_total{stream=\"net\"}' '$R/metrics-u.txt'"
kill -INT "${BG_PID[exp_u]}"
bg_wait exp_u 10

kill "${BG_PID[prom]}" 2>/dev/null
bg_wait prom 30
kill -INT "${BG_PID[exp]}"
bg_wait exp 10
check_eq "export ends on SIGINT with 0" 0 $?
check "correlate del c" magnetctl correlate del c
check "synth del sb" magnetctl synth del sb
check "filter del half" magnetctl filter del half
check "stream delete net" magnetctl stream delete net
check "stream delete corr" magnetctl stream delete corr
check "modules unload" magnet_unload

# ---- 5. not loaded --------------------------------------------------------------
bg exp2 "$MAGNETCTL" export --listen 127.0.0.1:$PORT
wait_line "$(out exp2)" '^export: serving' 10 || bail_out "export did not start"
check "scrape without MAGNET" scrape "http://127.0.0.1:$PORT/metrics" "$R/metrics0.txt"
check "  ... magnet_up 0" grep -qx "magnet_up 0" "$R/metrics0.txt"
kill -INT "${BG_PID[exp2]}"
bg_wait exp2 10
check_dmesg_clean
done_testing

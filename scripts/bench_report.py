#!/usr/bin/env python3
# Writes docs/bench.md and the plots docs/bench-latency.svg and
# docs/bench-bandwidth.svg from one run of scripts/bench.sh: the Google
# Benchmark JSON of bench_control, bench_legacy and bench_datapath, and the
# output of perftest.  Python 3 standard library only.
#
#   bench_report.py RESULTS_DIR DOCS_DIR
import json
import math
import statistics
import os
import platform
import re
import sys

# ----------------------------------------------------------------- input


def load_gb(path):
    """Google Benchmark JSON -> {name: entry}, the median when repeated.

    Names lose their /manual_time or /real_time suffix."""
    if not os.path.exists(path):
        return {}, {}
    with open(path) as f:
        d = json.load(f)
    runs = {}
    reps = {}
    for b in d.get("benchmarks", []):
        name = b.get("run_name", b["name"])
        name = re.sub(r"/(iterations|repeats):\d+", "", name)
        name = re.sub(r"/(manual_time|real_time)$", "", name)
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                runs[name] = b
            elif b.get("aggregate_name") == "cv":
                runs.setdefault(name + "#cv", b)
        else:
            runs.setdefault(name, b)
            reps.setdefault(name, []).append(b)
    REPS.update(reps)
    return runs, d.get("context", {})


# name -> every repetition's entry (all files loaded)
REPS = {}


def rep_ratios(name, num_key, den_key):
    """Per repetition num/den of one benchmark's counters, sorted."""
    out = []
    for e in REPS.get(name, []):
        if e.get("error_occurred"):
            continue
        a, b = e.get(num_key), e.get(den_key)
        if a is not None and b:
            out.append(a / b)
    return sorted(out)


def qvr_num(text):
    """A number of bench/qemu_vs_rxe.sh's output, three significant digits."""
    v = float(text)
    return "%.3g" % v if v < 1000 else "%.0f" % v


def load_meta(path):
    meta = {}
    if os.path.exists(path):
        for line in open(path):
            k, _, v = line.rstrip("\n").partition("=")
            meta[k] = v
    return meta


LAT_COLS = ["bytes", "iters", "t_min", "t_max", "t_typical", "t_avg", "t_stdev", "p99", "p999"]
BW_COLS = ["bytes", "iters", "bw_peak", "bw_avg", "msg_rate"]


def test_name(tag):
    """"ib_write_lat-sweep", "ib_write_lat@2", "ib_write_lat~base@2" -> "ib_write_lat"."""
    return re.split(r"[-@~]", tag)[0]


def load_perftest(d):
    """perftest client outputs -> {test: {"rows": {size: {...}}, "status", "args"}}."""
    res = {}
    if not os.path.isdir(d):
        return res
    for fn in sorted(os.listdir(d)):
        if not fn.endswith(".client"):
            continue
        test = fn[: -len(".client")]
        cols = LAT_COLS if test_name(test).endswith("_lat") else BW_COLS
        rows = {}
        for line in open(os.path.join(d, fn), errors="replace"):
            f = line.split()
            if len(f) < len(cols) or not re.fullmatch(r"\d+", f[0]) or not re.fullmatch(r"\d+", f[1]):
                continue
            try:
                vals = [float(x) for x in f[: len(cols)]]
            except ValueError:
                continue
            r = dict(zip(cols, vals))
            if "msg_rate" in r:
                r["gbps"] = r["msg_rate"] * 1e6 * r["bytes"] / 1e9
            rows[int(r["bytes"])] = r
        base = os.path.join(d, test)
        status = open(base + ".status").read().strip() if os.path.exists(base + ".status") else "?"
        args = open(base + ".args").read().strip() if os.path.exists(base + ".args") else ""
        res[test] = {"rows": rows, "status": status, "args": args}
    return res


def median_runs(pt_all):
    """Tags "test@k" are repeated runs of one test: keep the median run (by
    t_typical at its smallest size for latency, by bandwidth at its
    largest for bandwidth) and the range of that value over the runs."""
    groups = {}
    for tag, p in pt_all.items():
        groups.setdefault(tag.split("@")[0], []).append(p)
    out, ranges = {}, {}
    for name, runs in groups.items():
        is_lat = test_name(name).endswith("_lat")

        def metric(p):
            if not p["rows"]:
                return None
            if is_lat:
                return p["rows"][min(p["rows"])]["t_typical"]
            return p["rows"][max(p["rows"])]["gbps"]
        good = sorted((metric(p), i) for i, p in enumerate(runs) if metric(p) is not None)
        if not good:
            out[name] = runs[0]
            continue
        out[name] = runs[good[(len(good) - 1) // 2][1]]
        out[name]["runs"] = len(good)
        ranges[name] = (good[0][0], good[-1][0], len(good))
    return out, ranges


# ------------------------------------------------------------ formatting


def fmt_us(us):
    if us is None or (isinstance(us, float) and math.isnan(us)):
        return "–"
    if us < 10:
        return "%.2f µs" % us
    if us < 100:
        return "%.1f µs" % us
    if us < 1000:
        return "%.0f µs" % us
    if us < 10000:
        return "%.2f ms" % (us / 1000)
    if us < 100000:
        return "%.1f ms" % (us / 1000)
    return "%.0f ms" % (us / 1000)


def fmt_ns(ns):
    return fmt_us(None if ns is None else ns / 1000.0)


def fmt_ratio(r):
    if r is None:
        return "–"
    if r >= 10:
        return "%.0f" % r
    if r >= 0.1:
        return "%.2f" % r
    return "%.3f" % r


def fmt_gbps(g):
    if g is None:
        return "–"
    if g >= 10:
        return "%.1f" % g
    if g >= 0.1:
        return "%.2f" % g
    if g >= 0.001:
        return "%.4f" % g
    return "%.2g" % g


def fmt_size(n):
    n = int(n)
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return "%d MiB" % (n >> 20)
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return "%d KiB" % (n >> 10)
    return "%d B" % n


def tpc(m):
    try:
        return str(int(m["siblings"]) // int(m["cores"]))
    except (TypeError, ValueError, ZeroDivisionError):
        return "?"


def pct_range(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "?"
    lo, hi = round(100 * min(xs)), round(100 * max(xs))
    return "%d %%" % lo if lo == hi else "%d–%d %%" % (lo, hi)


def minmax(xs):
    xs = [x for x in xs if x is not None]
    return (min(xs), max(xs)) if xs else (float("nan"), float("nan"))


def verdict(ok):
    return "**met**" if ok else "**not met**"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def div(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


# ------------------------------------------------------------- machine


def machine():
    info = {}
    try:
        cpuinfo = open("/proc/cpuinfo").read()
    except OSError:
        cpuinfo = ""

    def field(name):
        m = re.search(r"^%s\s*:\s*(.*)$" % re.escape(name), cpuinfo, re.M)
        return m.group(1).strip() if m else None

    info["cpu"] = field("model name") or platform.processor() or "?"
    fam, model, step = field("cpu family"), field("model"), field("stepping")
    if fam:
        info["cpu"] += " (family %s, model %s, stepping %s)" % (fam, model, step)
    flags = field("flags") or ""
    info["virt"] = "virtual machine (hypervisor flag set)" if " hypervisor" in " " + flags else "bare metal"
    info["cpus"] = os.cpu_count()
    info["cores"] = field("cpu cores")
    info["siblings"] = field("siblings")
    info["mhz"] = field("cpu MHz")
    info["kernel"] = platform.release()
    try:
        os_rel = dict(
            l.rstrip("\n").split("=", 1) for l in open("/etc/os-release") if "=" in l)
        info["os"] = os_rel.get("PRETTY_NAME", "?").strip('"')
    except OSError:
        info["os"] = "?"
    try:
        mem = open("/proc/meminfo").readline().split()
        info["mem"] = "%.1f GiB" % (int(mem[1]) / 1048576)
    except (OSError, IndexError, ValueError):
        info["mem"] = "?"
    return info


# ----------------------------------------------------------------- plots

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
          "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"]


def previous_run(path):
    """What the bench.md this run replaces measured, for the plots: its
    date and source, and the data path's typical latency (µs) and
    bandwidth (GB/s) per size: {"lat"|"bw": {"send"|"write"|"read":
    {size: value}}}.  None when there is no such file or table."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20}
    out = {"date": "", "source": "", "lat": {}, "bw": {}}
    m = re.search(r"^\| date \(UTC\) \| ([^|]+) \|", text, re.M)
    if m:
        out["date"] = m.group(1).strip()
    m = re.search(r"^\| build \|[^|]*source ([0-9a-f]+)", text, re.M)
    if m:
        out["source"] = m.group(1)
    # The table that follows each caption, columns by header name.
    tables = [("lat", "Latency, typical (min):",
               {"send": "SEND one-way", "write": "RDMA WRITE one-way", "read": "RDMA READ"}),
              ("bw", "Bandwidth, GB/s",
               {"write": "RDMA WRITE", "read": "RDMA READ", "send": "SEND"})]
    for kind, caption, cols in tables:
        at = text.find("\n" + caption)
        if at < 0:
            continue
        rows = []
        for line in text[at:].splitlines()[1:]:
            if line.startswith("|"):
                rows.append([c.strip() for c in line.strip().strip("|").split("|")])
            elif rows:
                break
        if len(rows) < 3:
            continue
        head = rows[0]
        for key, name in cols.items():
            if name not in head:
                continue
            j = head.index(name)
            vals = {}
            for r in rows[2:]:
                sm = re.match(r"^(\d+) (B|KiB|MiB)$", r[0]) if r else None
                vm = re.match(r"^([0-9.]+)\s*(µs|ms)?", r[j]) if len(r) > j else None
                if not sm or not vm:
                    continue
                v = float(vm.group(1)) * (1000.0 if vm.group(2) == "ms" else 1.0)
                vals[int(sm.group(1)) * units[sm.group(2)]] = v
            if vals:
                out[kind][key] = vals
    return out if out["lat"] or out["bw"] else None


def svg_plot(path, title, ylabel, series, ymin=None, ymax=None):
    """Log-log line plot.  series: [(label, [(x, y)], dashed)] or
    [(label, [(x, y)], dashed, of)]: a faint dotted line in the colour of
    series number `of` (the same measure from the previous run)."""
    W, H = 900, 560
    L, R, T, B = 80, 250, 50, 60
    pts = [p for e in series for p in e[1] if p[1] and p[1] > 0]
    if not pts:
        return False
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    x0, x1 = math.log2(min(xs)), math.log2(max(xs))
    y0 = math.floor(math.log10(ymin if ymin else min(ys)))
    y1 = math.ceil(math.log10(ymax if ymax else max(ys)))
    if x1 == x0:
        x1 = x0 + 1
    if y1 == y0:
        y1 = y0 + 1

    def X(x):
        return L + (math.log2(x) - x0) / (x1 - x0) * (W - L - R)

    def Y(y):
        y = min(max(y, 10 ** y0), 10 ** y1)
        return T + (y1 - math.log10(y)) / (y1 - y0) * (H - T - B)

    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
         'font-family="sans-serif" font-size="12">' % (W, H, W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>' % (L, title)]
    # Grid and ticks.
    for e in range(y0, y1 + 1):
        y = Y(10 ** e)
        o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, y, W - R, y))
        lab = ("%g" % (10 ** e)) if -3 <= e <= 5 else "1e%d" % e
        o.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (L - 6, y + 4, lab))
        for k in range(2, 10):
            if e < y1:
                yy = Y(k * 10 ** e)
                o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#f3f3f3"/>'
                         % (L, yy, W - R, yy))
    xe = int(math.ceil(x0))
    while xe <= x1:
        x = X(2 ** xe)
        o.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>'
                 % (x, T, x, H - B, "#ddd" if xe % 2 == 0 else "#f3f3f3"))
        if xe % 2 == 1 or x1 - x0 < 12:
            lab = fmt_size(2 ** xe).replace(" ", "")
            o.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (x, H - B + 18, lab))
        xe += 1
    o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>'
             % (L, T, W - L - R, H - T - B))
    o.append('<text x="%d" y="%d" text-anchor="middle">message size (bytes)</text>'
             % ((L + W - R) // 2, H - 15))
    o.append('<text x="18" y="%d" text-anchor="middle" transform="rotate(-90 18 %d)">%s</text>'
             % ((T + H - B) // 2, (T + H - B) // 2, ylabel))
    # Lines and legend.
    ly = T + 8
    for i, e in enumerate(series):
        label, s, dashed = e[0], e[1], e[2]
        faint = len(e) > 3
        s = sorted(p for p in s if p[1] and p[1] > 0)
        if not s:
            continue
        c = COLORS[(e[3] if faint else i) % len(COLORS)]
        dash = (' stroke-dasharray="2 3" stroke-opacity="0.55"' if faint
                else ' stroke-dasharray="6 4"' if dashed else "")
        width = 1.5 if faint else 2
        o.append('<polyline fill="none" stroke="%s" stroke-width="%g"%s points="%s"/>'
                 % (c, width, dash, " ".join("%.1f,%.1f" % (X(x), Y(y)) for x, y in s)))
        if not faint:
            for x, y in s:
                o.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (X(x), Y(y), c))
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%g"%s/>'
                 % (W - R + 12, ly, W - R + 40, ly, c, width, dash))
        o.append('<text x="%d" y="%d">%s</text>' % (W - R + 46, ly + 4, label))
        ly += 20
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")
    return True


# ----------------------------------------------------------------- report

VERBS = [
    ("pd", "alloc + dealloc PD"),
    ("mr_4k", "reg + dereg MR, 4 KiB"),
    ("mr_1m", "reg + dereg MR, 1 MiB"),
    ("cq", "create + destroy CQ"),
    ("qp", "create QP, modify to INIT, RTR, RTS; destroy"),
    ("xrcd", "open + close XRCD"),
    ("xrc_reg", "XRC register (new receive QP) + unregister"),
]
CHAINS = [1, 8, 32, 100, 256, 1000]  # a QP's chain of 1000 (4000 commands) is not measured
BACKENDS = ["inproc", "daemon"]  # "kernel" joins when the qemu run measured it
BACKEND_TITLES = {
    "inproc": "In-process core",
    "daemon": "uabid (daemon)",
    "kernel": "Kernel module, in a qemu TCG guest",
}


def speed_targets(rtt, dpv):
    """Issue 20's ratios: the control call over uabid against in-process,
    the event mode against polling and one bare wake-up."""
    rows = []

    def rt(name):
        e = rtt.get(name)
        if not e or e.get("error_occurred"):
            return None
        return e.get("real_time")

    # The floor of a call into another process: the call in-process plus
    # one cache line there and back (BM_LineRoundTrip) per call.
    line = rt("BM_LineRoundTrip")
    for bm, what, calls in (("BM_PdAllocDealloc", "PD alloc + dealloc", 2),
                            ("BM_Counters", "DEVICE COUNTERS", 1)):
        inp = rt(bm + "/inproc")
        slot = rt(bm + "/daemon/default")
        sock = rt(bm + "/daemon/socket")
        if inp and slot:
            r = slot / inp
            txt = "%.2f µs over the slot vs %.2f µs in-process = %.1f ×" % (
                slot / 1e3, inp / 1e3, r)
            if line:
                floor = inp + calls * line
                txt += ("; the floor (in-process + %d cache line round trip%s of %.2f µs) "
                        "%.2f µs = %.1f ×, the slot %.2f × the floor" % (
                            calls, "s" if calls > 1 else "", line / 1e3, floor / 1e3,
                            floor / inp, slot / floor))
            if sock:
                txt += " (the socket: %.2f µs = %.0f ×)" % (sock / 1e3, sock / inp)
            rows.append(("a control call through uabid ≤ 4 × in-process, %s" % what, txt,
                         verdict(r <= 4.0)))
    ev = dpv("lat/send_event/2", "typ_us")
    po = dpv("lat/send_poll/2", "typ_us")
    efd = dpv("lat/eventfd", "typ_us")
    if ev is not None and po is not None and efd:
        r = (ev - po) / efd
        rows.append(("event mode − polling ≤ 1.5 × a bare eventfd wake-up (SEND 2 B, half "
                     "round trips, typical)",
                     "%.2f µs − %.2f µs = %.2f µs vs %.2f µs = %.2f ×"
                     % (ev, po, ev - po, efd, r), verdict(r <= 1.5)))
    return rows


def main():
    res_dir, docs = sys.argv[1], sys.argv[2]
    os.makedirs(docs, exist_ok=True)
    meta = load_meta(os.path.join(res_dir, "meta.env"))
    ctl, ctx = load_gb(os.path.join(res_dir, "control.json"))
    # bench_control again, on the kernel backend inside the qemu guest.
    kctl, _ = load_gb(os.path.join(res_dir, "control-kernel.json"))
    ctl.update(kctl)
    if any(n.startswith("ctl/kernel/") for n in kctl):
        BACKENDS.append("kernel")
    tr, _ = load_gb(os.path.join(res_dir, "translate.json"))
    dp, _ = load_gb(os.path.join(res_dir, "datapath.json"))
    rtt, _ = load_gb(os.path.join(res_dir, "rtt.json"))
    pt_all = load_perftest(os.path.join(res_dir, "perftest"))
    pt, pt_range = median_runs(pt_all)
    m = machine()

    def c(name, key):
        e = ctl.get(name)
        if not e or e.get("error_occurred"):
            return None
        return e.get(key)

    # In-process, all the work runs on the calling thread: its CPU time is
    # the cost, without the time a loaded machine gives to other tasks.
    # Over uabid the work is in another process: wall-clock time.
    def key(b, k):
        return {"op_ns": "op_cpu_ns", "create_ns": "create_cpu_ns"}[k] if b == "inproc" else k

    def cv_median(src, prefix):
        cvs = sorted(e["real_time"] for n, e in src.items()
                     if n.endswith("#cv") and n.startswith(prefix) and e.get("real_time") is not None)
        return cvs[len(cvs) // 2] if cvs else None

    errors = [n for src in (ctl, tr, dp) for n, e in src.items() if e.get("error_occurred")]

    md = []
    w = md.append
    w("# Benchmarks")
    w("")
    w("Written by `make bench` (`scripts/bench.sh`, report by `scripts/bench_report.py`) "
      "from one run; every number and ratio below was measured in that run, side by side. "
      "Do not edit by hand: run `make bench` again (`UABI_BENCH_QUICK=1 make bench` for a "
      "short pass). Runs made by hand to explain a change (before and after, with their "
      "own dates and commands) are kept in [bench-history.md](bench-history.md).")
    w("")
    w("## Machine and run")
    w("")
    rows = [
        ("CPU", m["cpu"]),
        ("CPUs", "%s online; %s cores, %s thread(s) per core; %s"
         % (m["cpus"], m["cores"] or "?", tpc(m), m["virt"])),
        ("memory", m["mem"]),
        ("kernel", m["kernel"]),
        ("OS", m["os"]),
        ("date (UTC)", meta.get("date", "?")),
        ("load average (1, 5, 15 min)", "at start %s; at end %s"
         % (meta.get("load_start", "?"), meta.get("load_end", "?"))),
        ("mode", "%s: Google Benchmark min time %s, %s repetition(s)%s"
         % (meta.get("mode", "?"), meta.get("min_time", "?"), meta.get("repetitions", "?"),
            ", medians shown" if meta.get("repetitions", "1") != "1" else "")),
        ("build", "RelWithDebInfo (-O2), %s; source %s" % (meta.get("compiler", "?"),
                                                          meta.get("git", "?"))),
        ("backends", "in-process core; uabid (a private daemon of this run, default "
         "adaptive polling); kernel module (`rdma_uabi.ko`): %s"
         % meta.get("kernel_bench", "not measured")),
        ("run time", "%s s" % meta.get("seconds", "?")),
    ]
    w(table(["", ""], rows))
    w("")
    if ctx.get("library_build_type") == "debug":
        w("Google Benchmark prints a \"Library was built as DEBUG\" warning: Debian's "
          "libbenchmark 1.7.1 package says so of itself; it concerns the timing loop's own "
          "code, not ours, and applies alike to every variant compared.")
        w("")
    if errors:
        w("**Errors in this run** (skipped benchmarks): " + ", ".join("`%s`" % e for e in errors))
        w("")

    # ---------------------------------------------------------- targets
    targets = []

    def cm_key(b, what):
        # In-process: this thread's CPU time (all of the work); else wall-clock.
        return what + ("_cpu_us" if b == "inproc" else "_us")

    def cmtime_ratio(b, mode):
        """(median, sorted per-repetition values) of mode ÷ single, setup."""
        name = "cmtime/%s" % b
        per = rep_ratios(name, mode + "_" + cm_key(b, "setup"), "single_" + cm_key(b, "setup"))
        if not per:
            r = div(c(name, mode + "_" + cm_key(b, "setup")), c(name, "single_" + cm_key(b, "setup")))
            return None if r is None else (r, [r])
        m = len(per) // 2
        return (per[m] if len(per) % 2 else (per[m - 1] + per[m]) / 2, per)

    def pair_ratio(b, v, k):
        """legacy / new of counter k: the median of the per-repetition
        ratios (both measured in the same iterations), else of the medians."""
        name = "ctl/%s/%s/pair" % (b, v)
        per = rep_ratios(name, "legacy_" + k, k)
        if per:
            m = len(per) // 2
            return per[m] if len(per) % 2 else (per[m - 1] + per[m]) / 2
        return div(c(name, "legacy_" + k), c(name, k))

    for b in BACKENDS:
        k = key(b, "op_ns")
        rs = []
        for v, _ in VERBS:
            name = "ctl/%s/%s/pair" % (b, v)
            per = rep_ratios(name, "legacy_" + k, k)
            if per:
                rs.append((per[(len(per) - 1) // 2] if len(per) % 2 else
                           (per[len(per) // 2 - 1] + per[len(per) // 2]) / 2, v, per))
            else:
                r = div(c(name, "legacy_" + k), c(name, k))
                if r is not None:
                    rs.append((r, v, [r]))
        if not rs:
            continue
        worst = max(rs)
        gmean = math.exp(sum(math.log(r[0]) for r in rs) / len(rs))
        text = "worst: %s × (%s); geometric mean over the %d verbs %s ×" % (
            fmt_ratio(worst[0]), worst[1], len(rs), fmt_ratio(gmean))
        if len(worst[2]) > 1:
            text += "; %s per repetition: %s to %s" % (
                worst[1], fmt_ratio(worst[2][0]), fmt_ratio(worst[2][-1]))
        ok = worst[0] <= 1.05
        v = verdict(ok)
        if not ok:
            v += " by %.0f %% on %s" % (100 * (worst[0] / 1.05 - 1), worst[1])
            if len(worst[2]) > 1 and worst[2][0] <= 1.05:
                v += " (some repetitions meet it: not distinguishable from noise in this run)"
            elif len(worst[2]) == 1:
                v += " (one repetition: spread not measured)"
        targets.append(("legacy ≤ 1.05 × new, %s (per verb, create + destroy; %s; median of "
                        "the per-repetition ratios)"
                        % (b + (" in qemu TCG" if b == "kernel" else ""),
                           "CPU time" if b == "inproc" else "wall-clock"), text, v))
    chain_miss = []
    chain_ratios = []
    for v, _ in VERBS:
        r = div(c("ctl/daemon/%s/chain:100" % v, "create_ns"), c("ctl/daemon/%s/pair" % v, "create_ns"))
        if r is not None:
            chain_ratios.append((r, v))
            if r > 0.1:
                chain_miss.append((r, v))
    if chain_ratios:
        best = min(chain_ratios)
        worst = max(chain_ratios)
        targets.append(("chain of 100 creates ≤ 1/10 of 100 single calls, daemon",
                        "%d of %d verbs; from %s (%s) to %s (%s)"
                        % (len(chain_ratios) - len(chain_miss), len(chain_ratios),
                           fmt_ratio(best[0]), best[1], fmt_ratio(worst[0]), worst[1]),
                        verdict(not chain_miss) + ("" if not chain_miss else
                                                   ": " + ", ".join("%s %s ×" % (v, fmt_ratio(r)) for r, v in chain_miss))))
    speed_more = []  # issue 20's, beside speed_targets()
    # Flat: the cost per create in a chain of 100, 256 or 1000 commands is
    # at most 1.25 × that in a chain of 32 (it may fall: a round trip is
    # shared by more objects; it must not grow).
    # Beside it, the same ratio between the fastest repetitions: a burst
    # of load from elsewhere only ever adds time, so on a loaded machine
    # the fastest repetition is the closest to the work itself.
    def rep_min(name, k):
        xs = [e.get(k) for e in REPS.get(name, []) if not e.get("error_occurred")]
        xs = [x for x in xs if x is not None]
        return min(xs) if xs else None

    for b in BACKENDS:
        growth, growth_min = [], []
        for v, _ in VERBS:
            base = c("ctl/%s/%s/chain:32" % (b, v), key(b, "create_ns"))
            base_min = rep_min("ctl/%s/%s/chain:32" % (b, v), key(b, "create_ns"))
            for n in CHAINS:
                if n <= 32:
                    continue
                name = "ctl/%s/%s/chain:%d" % (b, v, n)
                r = div(c(name, key(b, "create_ns")), base)
                if r is not None:
                    growth.append((r, v, n))
                r = div(rep_min(name, key(b, "create_ns")), base_min)
                if r is not None:
                    growth_min.append((r, v, n))
        if growth:
            worst = max(growth)
            txt = "worst: %s × (%s, chain:%d)" % (fmt_ratio(worst[0]), worst[1], worst[2])
            if growth_min and len(REPS.get("ctl/%s/pd/chain:32" % b, [])) > 1:
                wm = max(growth_min)
                txt += "; between the fastest repetitions: worst %s × (%s, chain:%d)" % (
                    fmt_ratio(wm[0]), wm[1], wm[2])
            speed_more.append(("chain cost per object flat from 32 to 1000 commands, %s (per create, "
                            "chain:N ÷ chain:32 ≤ 1.25 for N = 100, 256, 1000; %s; medians)"
                            % (b, "CPU time" if b == "inproc" else "wall-clock"),
                            txt, verdict(worst[0] <= 1.25)))
    cm = cmtime_ratio("inproc", "chain")
    if cm is not None:
        speed_more.append(("cmtime with chains ≤ 0.6 × single calls, in-process (setup, CPU time; "
                        "median of the per-repetition ratios)",
                        "%s × (chain_born %s ×)%s" % (
                            fmt_ratio(cm[0]), fmt_ratio(cmtime_ratio("inproc", "chain_born")[0]),
                            "; per repetition %s to %s" % (fmt_ratio(cm[1][0]), fmt_ratio(cm[1][-1]))
                            if len(cm[1]) > 1 else ""),
                        verdict(cm[0] <= 0.6)))

    def dpv(name, key):
        e = dp.get(name)
        if not e or e.get("error_occurred"):
            return None
        return e.get(key)

    pvm64 = dpv("bw/process_vm_writev/65536", "GBps")
    pvmr64 = dpv("bw/process_vm_readv/65536", "GBps")
    wbw = pt.get("ib_write_bw", {}).get("rows", {}).get(65536)
    if wbw and pvm64:
        r = wbw["gbps"] / pvm64
        txt = "%.2f GB/s vs %.2f GB/s = %.0f %%" % (wbw["gbps"], pvm64, 100 * r)
        if "ib_write_bw" in pt_range and pt_range["ib_write_bw"][2] > 1:
            lo_, hi_, n_ = pt_range["ib_write_bw"]
            txt += " (median of %d runs, %.0f–%.0f %%)" % (n_, 100 * lo_ / pvm64, 100 * hi_ / pvm64)
        ow = dpv("bw/write/65536", "GBps")
        if ow:
            txt += "; bench_datapath RDMA WRITE: %.0f %%" % (100 * ow / pvm64)
        targets.append(("`ib_write_bw` 64 KiB ≥ 70 % of `process_vm_writev` 64 KiB", txt,
                        verdict(r >= 0.70)))
    slat = pt.get("ib_send_lat", {}).get("rows", {}).get(2)
    if slat:
        txt = "t_typical %.2f µs (t_min %.2f µs)" % (slat["t_typical"], slat["t_min"])
        if "ib_send_lat" in pt_range and pt_range["ib_send_lat"][2] > 1:
            lo_, hi_, n_ = pt_range["ib_send_lat"]
            txt += " (median of %d runs, %.2f–%.2f µs)" % (n_, lo_, hi_)
        targets.append(("`ib_send_lat` 2 B ≤ 2 µs typical", txt, verdict(slat["t_typical"] <= 2.0)))
    w("## Targets (issue 8)")
    w("")
    w(table(["target", "measured", "verdict"], targets))
    w("")
    # The data path's small messages (bench_datapath, typical one-way).
    def lat(op, n):
        return dpv("lat/%s/%d" % (op, n), "typ_us")
    wr = [(div(lat("write", n), lat("send", n)), n) for n in (2, 4, 8, 16, 32, 64, 128, 256)]
    wr = [(r, n) for r, n in wr if r is not None]
    if wr:
        worst = max(wr)
        speed_more.append(("RDMA WRITE ≤ 256 B one-way latency ≤ 1.2 × SEND of the size "
                           "(bench_datapath, typical)",
                           "worst: %s × at %d B (WRITE %s, SEND %s)" % (
                               fmt_ratio(worst[0]), worst[1], fmt_us(lat("write", worst[1])),
                               fmt_us(lat("send", worst[1]))),
                           verdict(worst[0] <= 1.2)))
    # lat/send_vs_write/N: SEND and WRITE in alternating blocks of one
    # benchmark, so both see the same moments of the host; lat/send and
    # lat/write (apart in time) when it is missing.
    def pair(n):
        k = "lat/send_vs_write/%d" % n
        sv, wv = dpv(k, "send_typ_us"), dpv(k, "write_typ_us")
        if sv is not None and wv is not None:
            return sv, wv, "alternating blocks, lat/send_vs_write"
        return lat("send", n), lat("write", n), "lat/send and lat/write"
    sw = [(div(*pair(n)[:2]), n) for n in (128, 256, 512, 1024, 2048)]
    sw = [(r, n) for r, n in sw if r is not None]
    if sw:
        worst = max(sw)
        sv, wv, how = pair(worst[1])
        speed_more.append(("SEND of 129 B to 2 KiB no slower than RDMA WRITE of the size "
                           "(bench_datapath, typical; 128 B to 2 KiB; %s)" % how,
                           "worst: SEND ÷ WRITE %s × at %d B (SEND %s, WRITE %s)" % (
                               fmt_ratio(worst[0]), worst[1], fmt_us(sv), fmt_us(wv)),
                           verdict(worst[0] <= 1.0)))
    qvr = load_meta(os.path.join(res_dir, "qemu_vs_rxe.env"))
    for qk, what, unit, goal, ok in (
            ("write_bw", "`ib_write_bw` 64 KiB on `rdma_uabi.ko` ≥ 10 × rxe's, one qemu TCG guest "
             "boot (BW average, medians over %s rounds)" % qvr.get("rounds", "?"), "MiB/s",
             "≥ 10", lambda r: r >= 10),
            ("send_lat", "`ib_send_lat` 2 B on `rdma_uabi.ko` ≤ 1/5 of rxe's, one qemu TCG guest "
             "boot (t_typical, medians over %s rounds)" % qvr.get("rounds", "?"), "µs",
             "≤ 0.2", lambda r: r <= 0.2)):
        if "ratio_" + qk in qvr:
            r = float(qvr["ratio_" + qk])
            speed_more.append((what, "%s %s on the module vs %s %s on rxe = %s ×" % (
                qvr_num(qvr["module_" + qk]), unit, qvr_num(qvr["rxe_" + qk]), unit, fmt_ratio(r)),
                verdict(ok(r))))
    speed = speed_targets(rtt, dpv) + speed_more
    if speed:
        w("## Targets (issue 20)")
        w("")
        w("`bench/bench_daemon_rtt.cpp` (one message executed again and again; uabid busy: "
          "the benchmark keeps it polling) and `bench/bench_datapath.cpp` (lat/send_poll, "
          "lat/send_event, lat/eventfd: the same two pinned processes; half round trips, "
          "typical = median sample). docs/daemon.md, \"Request slot\"; docs/datapath.md, "
          "\"Completion events\".")
        w("")
        w(table(["target", "measured", "verdict"], speed))
        w("")

    # ---------------------------------------------------- observations
    obs = []

    def legacy_ratios(b):
        rs = [(pair_ratio(b, v, key(b, "op_ns")), v) for v, _ in VERBS]
        return [(r, v) for r, v in rs if r is not None]
    lo, ld = legacy_ratios("inproc"), legacy_ratios("daemon")
    if lo:
        faster = [v for r, v in lo if r < 1]
        text = ("**Legacy against new.** In-process, the legacy path is faster than the new one "
                "on %d of %d verbs (legacy ÷ new from %s to %s): the translator writes each "
                "new-uAPI message straight into a fixed buffer, where the client library builds "
                "a `Command` (its own buffer) per call, copies it into a `Message` and returns "
                "a `Result` (docs/legacy-abi.md); translating one command costs tens of "
                "nanoseconds (\"Translation alone\" below)."
                % (len(faster), len(lo), fmt_ratio(min(lo)[0]), fmt_ratio(max(lo)[0])))
        if ld:
            text += (" Over uabid both paths are one round trip per call, which dominates: "
                     "legacy ÷ new from %s to %s." % (fmt_ratio(min(ld)[0]), fmt_ratio(max(ld)[0])))
        lk = legacy_ratios("kernel") if "kernel" in BACKENDS else []
        if lk:
            text += (" On the kernel module in the qemu guest, legacy ÷ new from %s to %s: "
                     "one ioctl per call either way, and the client library's extra work is "
                     "emulated instruction by instruction there, which magnifies it."
                     % (fmt_ratio(min(lk)[0]), fmt_ratio(max(lk)[0])))
        obs.append(text)
    pd_single = c("ctl/daemon/pd/pair", "create_ns")
    pd_chain = c("ctl/daemon/pd/chain:256", "create_ns")
    if pd_single and pd_chain:
        text = ("**Chains.** One uabid round trip costs about %s here (a PD alloc by single "
                "calls, %s, less its cost per object in a chain of 256, %s). A chain pays it "
                "once per message, so the cost per object falls toward the core's own work "
                "per object, which chains do not remove." % (
                    fmt_ns(pd_single - pd_chain), fmt_ns(pd_single), fmt_ns(pd_chain)))
        if chain_miss:
            parts = ["%s: %s in-process against %s over uabid" % (
                v, fmt_ns(c("ctl/inproc/%s/chain:100" % v, "create_cpu_ns")),
                fmt_ns(c("ctl/daemon/%s/chain:100" % v, "create_ns"))) for _, v in chain_miss]
            text += (" The verbs that miss the 1/10 target are those whose work per object is "
                     "large next to a round trip; per create, the same chain of 100 costs "
                     + "; ".join(parts) + " (table \"Chains of 100 against single calls\").")
        obs.append(text)
    cold = c("ctl/inproc/cq_first_touch", "create_ns")
    warm = c("ctl/inproc/cq/pair", "create_ns")  # wall-clock, as the cold run
    faults = c("ctl/inproc/cq_first_touch", "faults")
    dcold = c("ctl/daemon/cq_first_touch", "create_ns")
    dwarm = c("ctl/daemon/cq/pair", "create_ns")
    if cold and warm:
        obs.append(
            "**CQs and the arena.** A CQ's rings come from the device's shared memory, "
            "zero: a freed ring is zeroed as it leaves the 256 freed runs that rest before "
            "reuse, unless no producer marked it written (docs/datapath.md, \"The arena\"), "
            "as none of these benchmarks' CQs is (%s page faults per CQ of 64 entries in the "
            "cold run). The first 100 CQs on a fresh arena cost %s each in-process (%s over "
            "uabid) against %s (%s) once freed rings are reused (the heap is first fit). The "
            "benchmarks run `cq_first_touch` first on each backend, so every other number is "
            "the steady state of a running daemon."
            % ("%.0f" % faults if faults is not None else "?", fmt_ns(cold), fmt_ns(dcold),
               fmt_ns(warm), fmt_ns(dwarm)))
    s2 = dpv("lat/send/2", "typ_us")
    e = dp.get("bw/process_vm_writev/2")
    pc2 = e["real_time"] / e["msgs"] / 1000.0 if e and e.get("msgs") and not e.get("error_occurred") else None
    w2 = dpv("lat/write/2", "typ_us")
    if s2 and pc2:
        t = ("**Small messages.** One `process_vm_writev` of 2 bytes costs %s on this machine "
             "(a system call that pins the peer's page). RDMA WRITE of 2 bytes, one such call "
             "per direction, is %s one-way." % (fmt_us(pc2), fmt_us(w2)))
        if s2 < pc2:
            t += (" SEND of 2 bytes is %s one-way, below one call: the data path moves small "
                  "SEND payloads without that system call." % fmt_us(s2))
        else:
            t += " SEND of 2 bytes is %s one-way." % fmt_us(s2)
        if slat:
            t += (" `ib_send_lat` (unmodified perftest) measured %s typical at 2 bytes."
                  % fmt_us(slat["t_typical"]))
        obs.append(t)
    g64, p64 = dpv("bw/write/65536", "GBps"), pvm64
    if g64 and p64:
        obs.append("**Large messages.** From 32 KiB up, bench_datapath's RDMA WRITE and READ "
                   "run at %s of `process_vm_writev`/`readv` between the same processes "
                   "(64 KiB: %s)."
                   % ("%.0f–%.0f %%" % tuple(100 * x for x in minmax(
                       [div(dpv("bw/%s/%d" % (op, sz), "GBps"),
                            dpv("bw/process_vm_%s/%d" % ("writev" if op == "write" else "readv", sz), "GBps"))
                        for op in ("write", "read") for sz in (32768, 65536, 262144, 1048576)])),
                      "%.0f %%" % (100 * g64 / p64)))
    if obs:
        w("## What the numbers say")
        w("")
        for o in obs:
            w("- " + o)
        w("")

    # ----------------------------------------------------- control path
    w("## Control path, verb by verb")
    w("")
    w("`bench/bench_control.cpp`. Each variant creates a batch of objects, then destroys them, "
      "on one context: **new** = `uabi::Context` calls, one message each (100 objects per "
      "batch); **legacy** = the bytes rdma-core 44 wrote in `write()` mode (`legacy::Encoder`) "
      "run by `legacy::Translator` over the same backend (100 per batch); new and legacy run "
      "side by side, a batch of each in every iteration (alternating which goes first), and "
      "legacy ÷ new is the median of the per-repetition ratios; **chain:N** = one "
      "`uabi::Chain` message of N creates (for a QP: create + the three modifies, by chain "
      "reference), then one of N destroys. Times are per object (create + destroy, or the "
      "create step alone): in-process the CPU time of the calling thread, over uabid "
      "wall-clock time; the QP's destination is a fixed number (the software "
      "device does not check it at modify time). XRC: the legacy side is the OFED 1.5 "
      "dialect (`create_xrc_rcv_qp` / `unreg_xrc_rcv_qp`), the new side "
      "`REG_RCV_QP(0xFFFFFFFF)` / `UNREG_RCV_QP`.")
    w("")
    for b in BACKENDS:
        w("### %s" % BACKEND_TITLES[b])
        w("")
        cvm = cv_median(ctl, "ctl/%s/" % b)
        if b == "inproc":
            w("CPU time of the calling thread (all of the work happens on it). ")
        elif b == "kernel":
            w("Wall-clock time in the guest: the calling thread and the module's ioctl, on a "
              "CPU that qemu emulates (TCG, no KVM here), so absolute times are the "
              "emulator's and only the ratios carry over; the guest's kernel runs without "
              "the allocator debugging the tests turn on; the module is loaded with "
              "`heap_mib=64` (64 MiB of rings per user instead of 16: room for the chain of "
              "1000 CQs). ")
        else:
            w("Wall-clock time (the work is in uabid). ")
        if cvm is not None:
            w("Run-to-run spread: the median coefficient of variation of the wall-clock "
              "time over the repetitions is %.0f %%." % (100 * cvm))
        w("")
        w("Per object, create + destroy:")
        w("")
        rows = []
        for v, label in VERBS:
            new = c("ctl/%s/%s/pair" % (b, v), key(b, "op_ns"))
            old = c("ctl/%s/%s/pair" % (b, v), "legacy_" + key(b, "op_ns"))
            rows.append([label, fmt_ns(new), fmt_ns(old), fmt_ratio(pair_ratio(b, v, key(b, "op_ns")))] +
                        [fmt_ns(c("ctl/%s/%s/chain:%d" % (b, v, n), key(b, "op_ns"))) for n in CHAINS])
        w(table(["verb", "new", "legacy", "legacy / new"] + ["chain:%d" % n for n in CHAINS], rows))
        w("")
        w("The create step alone (for a QP: create, INIT, RTR, RTS), per object:")
        w("")
        rows = []
        for v, label in VERBS:
            new = c("ctl/%s/%s/pair" % (b, v), key(b, "create_ns"))
            old = c("ctl/%s/%s/pair" % (b, v), "legacy_" + key(b, "create_ns"))
            rows.append([label, fmt_ns(new), fmt_ns(old), fmt_ratio(pair_ratio(b, v, key(b, "create_ns")))] +
                        [fmt_ns(c("ctl/%s/%s/chain:%d" % (b, v, n), key(b, "create_ns"))) for n in CHAINS])
        w(table(["verb", "new", "legacy", "legacy / new"] + ["chain:%d" % n for n in CHAINS], rows))
        w("")
        w("Chain cost per object ÷ single calls (new path); create step, then create + destroy:")
        w("")
        rows = []
        for v, label in VERBS:
            nc = c("ctl/%s/%s/pair" % (b, v), key(b, "create_ns"))
            no = c("ctl/%s/%s/pair" % (b, v), key(b, "op_ns"))
            rows.append([label] + ["%s / %s" % (
                fmt_ratio(div(c("ctl/%s/%s/chain:%d" % (b, v, n), key(b, "create_ns")), nc)),
                fmt_ratio(div(c("ctl/%s/%s/chain:%d" % (b, v, n), key(b, "op_ns")), no))) for n in CHAINS])
        w(table(["verb"] + ["chain:%d" % n for n in CHAINS], rows))
        w("")
        if b == "inproc":
            rows = []
            for v, label in VERBS:
                f = c("ctl/inproc/%s/pair" % v, "faults")
                rows.append([label, "%.1f" % f if f is not None else "–"])
            w("Page faults per create, in-process (the core's first touches of arena pages "
              "happen in this process; `getrusage`):")
            w("")
            w(table(["verb", "minor faults per create"], rows))
            w("")

    w("### Chains of 100 against single calls, uabid (the target)")
    w("")
    w("Per create (for a QP: create, INIT, RTR, RTS): 100 single calls over uabid, one chain "
      "of 100 over uabid, and the same chain in-process (CPU time: the client's and the "
      "core's work, without the transport).")
    w("")
    rows = []
    for v, label in VERBS:
        sc = c("ctl/daemon/%s/pair" % v, "create_ns")
        ch = c("ctl/daemon/%s/chain:100" % v, "create_ns")
        ip = c("ctl/inproc/%s/chain:100" % v, "create_cpu_ns")
        r = div(ch, sc)
        rows.append([label, fmt_ns(sc), fmt_ns(ch), fmt_ns(ip), fmt_ratio(r),
                     "–" if r is None else ("met" if r <= 0.1 else "not met")])
    w(table(["verb", "single call, uabid", "chain of 100, uabid", "chain of 100, in-process",
             "chain ÷ single (≤ 0.1)", "target"], rows))
    w("")

    if tr:
        w("### Translation alone")
        w("")
        w("`bench/bench_legacy.cpp`, `Translator::translate_only()`: every check of a legacy "
          "command and the encoding of its new-uAPI message, not executed (CPU time).")
        w("")
        rows = []
        for n, e in sorted(tr.items()):
            if n.endswith("#cv") or e.get("error_occurred"):
                continue
            t = e.get("cpu_time")
            unit = e.get("time_unit", "ns")
            scale = {"ns": 1, "us": 1e3, "ms": 1e6}.get(unit, 1)
            rows.append([n.replace("BM_Translate_", ""), "%.0f ns" % (t * scale)])
        w(table(["command", "time"], rows))
        w("")

    # ----------------------------------------------------------- cmtime
    w("## cmtime: 1000 connected RC QP pairs")
    w("")
    w("Two contexts (the two ends, as two processes would hold them; driven from one thread), "
      "each with a PD and a CQ. Per connection, each end creates an RC QP and walks it to RTS "
      "with the other end's QP number. **single**: 8 calls per connection (2 creates, 6 "
      "modifies). **chain**: per 250 connections, each end creates its 250 QPs with their INIT "
      "modifies in one message, then moves them to RTR and RTS in another (4 messages per "
      "250 connections). **chain_born**: the same, QPs created directly in INIT "
      "(create-with-attributes). Teardown: one destroy per QP, or chains of 500 destroys. "
      "The three modes run side by side, each once per iteration in a rotating order; "
      "÷ single is the median of the per-repetition ratios. In-process: this thread's CPU "
      "time (all of the work); over uabid and in the guest: wall-clock time.")
    w("")
    rows = []
    msgs = {"single": ("8", "2"), "chain": ("0.016", "0.004"), "chain_born": ("0.016", "0.004")}
    for b in BACKENDS:
        for mode in ["single", "chain", "chain_born"]:
            s = c("cmtime/%s" % b, mode + "_" + cm_key(b, "setup"))
            t = c("cmtime/%s" % b, mode + "_" + cm_key(b, "teardown"))
            r = cmtime_ratio(b, mode)
            rows.append([b, mode, msgs[mode][0], fmt_us(s), fmt_ratio(r[0] if r else None),
                         fmt_us(None if s is None else s * 1000), msgs[mode][1], fmt_us(t)])
    w(table(["backend", "mode", "messages per connection", "setup per connection", "÷ single",
             "setup of all 1000", "teardown messages per connection", "teardown per connection"],
            rows))
    w("")

    # -------------------------------------------------------- data path
    sizes = sorted({int(n.split("/")[-1]) for n in dp if n.startswith("bw/write/") and not n.endswith("#cv")})
    w("## Data path, two processes")
    w("")
    w("`bench/bench_datapath.cpp`: a process and its forked peer, each with its own context on "
      "uabid, connected by an RC QP through the software device via our `libibverbs.so.1` "
      "(the verbs API, linked directly); every copy is a `process_vm_writev`/`readv` by the "
      "initiator. Next to each size, in the same run: `memcpy` within one process and "
      "`process_vm_writev`/`readv` between the same two processes and buffers, the machine's "
      "limits. Latency: SEND and RDMA WRITE are ping-pongs (WRITE: the peer polls the last "
      "byte in memory, as `ib_write_lat`), reported as half the round trip like perftest; "
      "READ and atomics are one work request posted and polled. Typical = median. "
      "lat/send_vs_write (128 B to 2 KiB, for the target): SEND and WRITE ping-pongs of "
      "one size in alternating blocks of 64 inside one benchmark, so that both see the "
      "same moments of the host (docs/datapath.md, \"SENDs up to 2 KiB\"). "
      "Bandwidth: a window of 128 work requests, every 32nd signaled, bursts of up to 1024 "
      "timed to their last completion. Waits poll without pause, as perftest's do: on a "
      "machine with more runnable tasks than CPUs, a round trip stalls whenever one side "
      "is not running, which the typical (median) value mostly hides and the mean does not.")
    cvd = cv_median(dp, "")
    if cvd is not None:
        w("")
        w("Run-to-run spread: the median coefficient of variation of the time per iteration "
          "over the repetitions is %.0f %%." % (100 * cvd))
    w("")
    w("Latency, typical (min):")
    w("")
    rows = []
    for s in sizes:
        def lat(op):
            t, mn = dpv("lat/%s/%d" % (op, s), "typ_us"), dpv("lat/%s/%d" % (op, s), "min_us")
            return "–" if t is None else "%s (%s)" % (fmt_us(t), fmt_us(mn))

        def per_call(op):
            e = dp.get("bw/%s/%d" % (op, s))
            if not e or e.get("error_occurred") or not e.get("msgs"):
                return "–"
            return fmt_us(e["real_time"] / e["msgs"] / 1000.0)
        rows.append([fmt_size(s), lat("send"), lat("write"), lat("read"),
                     per_call("process_vm_writev"), per_call("memcpy")])
    w(table(["size", "SEND one-way", "RDMA WRITE one-way", "RDMA READ",
             "`process_vm_writev` per call", "`memcpy` per call"], rows))
    w("")
    fa, cs = dpv("lat/atomic_fa/8", "typ_us"), dpv("lat/atomic_cs/8", "typ_us")
    fab = dpv("bw/atomic_fa/8", "GBps")
    w("Atomics (8 bytes): FETCH_AND_ADD %s typical (min %s), CMP_AND_SWP %s typical (min %s); "
      "FETCH_AND_ADD streamed: %s million per second."
      % (fmt_us(fa), fmt_us(dpv("lat/atomic_fa/8", "min_us")), fmt_us(cs),
         fmt_us(dpv("lat/atomic_cs/8", "min_us")),
         "–" if fab is None else "%.2f" % (fab * 1e9 / 8 / 1e6)))
    w("")
    w("Bandwidth, GB/s (10⁹ bytes per second), and the data path ÷ the copy it is made of:")
    w("")
    rows = []
    for s in sizes:
        g = {op: dpv("bw/%s/%d" % (op, s), "GBps") for op in
             ["memcpy", "process_vm_writev", "process_vm_readv", "write", "read", "send"]}
        rows.append([fmt_size(s)] + [fmt_gbps(g[k]) for k in
                                     ["memcpy", "process_vm_writev", "process_vm_readv", "write", "read", "send"]] +
                    [fmt_ratio(div(g["write"], g["process_vm_writev"])),
                     fmt_ratio(div(g["read"], g["process_vm_readv"])),
                     fmt_ratio(div(g["send"], g["process_vm_writev"]))])
    w(table(["size", "memcpy", "process_vm_writev", "process_vm_readv", "RDMA WRITE", "RDMA READ",
             "SEND", "WRITE ÷ writev", "READ ÷ readv", "SEND ÷ writev"], rows))
    w("")

    # --------------------------------------------------------- perftest
    w("## perftest under the drop-in library")
    w("")
    w("Debian's unmodified perftest binaries, server and client as two processes, each run as "
      "`uabi run -- ib_… -p PORT [ARGS]` (our `libibverbs.so.1` preloaded, the run's uabid). "
      "perftest prints bandwidth in MiB/s as \"MB/sec\"; GB/s below is its message rate × "
      "size. Its latency tests report half the round trip for SEND and WRITE, the whole "
      "operation for READ and atomics.")
    w("")
    show = [2, 64, 1024, 4096, 65536, 1048576, 8388608]
    lat_rows, bw_rows = [], []
    order = ["ib_send_lat", "ib_write_lat", "ib_read_lat", "ib_atomic_lat",
             "ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_atomic_bw"]
    tags = [t for t in order if t in pt] + [t + "-sweep" for t in order if t + "-sweep" in pt]
    for tag in tags:
        p = pt[tag]
        is_lat = tag.split("-")[0].endswith("_lat")
        rowset = lat_rows if is_lat else bw_rows
        name = "`%s`" % p["args"]
        if p.get("runs", 1) > 1 and tag in pt_range:
            lo_, hi_, n_ = pt_range[tag]
            name += " (median of %d runs; %s from %s to %s)" % (
                n_, "t_typical" if is_lat else "GB/s",
                ("%.2f" if is_lat else "%.2f") % lo_, ("%.2f" if is_lat else "%.2f") % hi_)
        if not p["rows"]:
            rowset.append([name, "no result (%s)" % p["status"]] + [""] * (5 if is_lat else 4))
            continue
        for sz in sorted(p["rows"]):
            if not tag.endswith("-sweep") or sz in show:
                r = p["rows"][sz]
                if is_lat:
                    rowset.append([name, fmt_size(sz), "%.2f" % r["t_min"], "%.2f" % r["t_typical"],
                                   "%.2f" % r["t_avg"], "%.2f" % r["p99"], "%d" % r["iters"]])
                else:
                    rowset.append([name, fmt_size(sz), "%.0f" % r["bw_avg"], fmt_gbps(r["gbps"]),
                                   "%.4f" % r["msg_rate"], "%d" % r["iters"]])
    if lat_rows:
        w(table(["command", "size", "t_min µs", "t_typical µs", "t_avg µs", "99 % µs", "iterations"], lat_rows))
        w("")
    if bw_rows:
        w(table(["command", "size", "BW average MiB/s", "GB/s", "Mpps", "iterations"], bw_rows))
        w("")
    if any(t.endswith("-sweep") for t in pt):
        w("The first run of each test uses perftest's defaults (the targets are read from "
          "those); `-a` sweeps every size from 2 bytes to 8 MiB with fewer iterations, for the "
          "plots (a selection of sizes shown here).")
        w("")
    rows = []

    def pr(test, size, key):
        r = pt.get(test, {}).get("rows", {}).get(size)
        return None if r is None else r[key]
    for test, base, label in [("ib_write_bw", "process_vm_writev", "`ib_write_bw` ÷ `process_vm_writev`"),
                              ("ib_read_bw", "process_vm_readv", "`ib_read_bw` ÷ `process_vm_readv`"),
                              ("ib_send_bw", "process_vm_writev", "`ib_send_bw` ÷ `process_vm_writev`")]:
        a, b = pr(test, 65536, "gbps"), dpv("bw/%s/65536" % base, "GBps")
        rows.append([label + ", 64 KiB", "%s / %s GB/s" % (fmt_gbps(a), fmt_gbps(b)), fmt_ratio(div(a, b))])
    for test, mine in [("ib_send_lat", "send"), ("ib_write_lat", "write"), ("ib_read_lat", "read")]:
        a, b = pr(test, 2, "t_typical"), dpv("lat/%s/2" % mine, "typ_us")
        rows.append(["`%s` ÷ bench_datapath %s, 2 B typical" % (test, mine.upper()),
                     "%s / %s" % (fmt_us(a), fmt_us(b)), fmt_ratio(div(a, b))])
    pc = None
    e = dp.get("bw/process_vm_writev/2")
    if e and e.get("msgs"):
        pc = e["real_time"] / e["msgs"] / 1000.0
    a = pr("ib_send_lat", 2, "t_typical")
    rows.append(["`ib_send_lat` 2 B typical ÷ one `process_vm_writev` of 2 B",
                 "%s / %s" % (fmt_us(a), fmt_us(pc)), fmt_ratio(div(a, pc))])
    w("Ratios:")
    w("")
    w(table(["ratio", "values", "ratio"], rows))
    w("")

    # ------------------------------------------------ before and after
    if meta.get("baseline"):
        base = meta["baseline"]
        w("## Before and after: this tree against %s" % base)
        w("")
        w("`UABI_BENCH_BASELINE=%s`: that commit's uabid, `uabi` and `libibverbs.so.1` were built "
          "from `git archive` and each test below ran on it and on this tree in alternation, "
          "round after round, each build with its own uabid, `-n 20000`, pinned as above. "
          "Median of the rounds (range in brackets). Ratio: this tree ÷ %s (latency: lower "
          "is better; bandwidth: higher is better)." % (base, base))
        w("")
        rows = []
        for t, size, key, unit in [("ib_write_bw", 65536, "gbps", "GB/s"),
                                   ("ib_send_bw", 65536, "gbps", "GB/s"),
                                   ("ib_write_lat", 2, "t_typical", "µs typical"),
                                   ("ib_send_lat", 2, "t_typical", "µs typical")]:
            vals = {}
            for side in ("base", "new"):
                xs = sorted(p["rows"][size][key] for tag, p in pt_all.items()
                            if tag.split("@")[0] == "%s~%s" % (t, side) and size in p["rows"])
                vals[side] = xs
            if not vals["base"] or not vals["new"]:
                rows.append(["`%s` %s" % (t, fmt_size(size)), "no result", "", "", ""])
                continue
            mb, mn = statistics.median(vals["base"]), statistics.median(vals["new"])
            r = mn / mb
            better = (r - 1) if key == "gbps" else (1 - r)
            rows.append(["`%s` %s, %s" % (t, fmt_size(size), unit),
                         "%.2f (%.2f–%.2f)" % (mb, vals["base"][0], vals["base"][-1]),
                         "%.2f (%.2f–%.2f)" % (mn, vals["new"][0], vals["new"][-1]),
                         "%.3f" % r,
                         "%+.1f %%" % (100 * better)])
        w(table(["test", base, "this tree", "ratio", "change (+ = better)"], rows))
        w("")

    # ------------------------------------------------------------ plots
    lat_series, bw_series = [], []
    for op, label in [("send", "SEND one-way"), ("write", "RDMA WRITE one-way"), ("read", "RDMA READ")]:
        lat_series.append(("bench " + label, [(s, dpv("lat/%s/%d" % (op, s), "typ_us")) for s in sizes], False))
    for test in ["ib_send_lat", "ib_write_lat", "ib_read_lat"]:
        p = pt.get(test + "-sweep") or pt.get(test)
        if p and p["rows"]:
            lat_series.append((test, [(s, r["t_typical"]) for s, r in p["rows"].items()], True))
    for op in ["process_vm_writev", "memcpy"]:
        pts = []
        for s in sizes:
            e = dp.get("bw/%s/%d" % (op, s))
            if e and e.get("msgs") and not e.get("error_occurred"):
                pts.append((s, e["real_time"] / e["msgs"] / 1000.0))
        lat_series.append((op + " (1 call)", pts, True))
    for op, label in [("memcpy", "memcpy"), ("process_vm_writev", "process_vm_writev"),
                      ("process_vm_readv", "process_vm_readv"), ("write", "bench RDMA WRITE"),
                      ("read", "bench RDMA READ"), ("send", "bench SEND")]:
        bw_series.append((label, [(s, dpv("bw/%s/%d" % (op, s), "GBps")) for s in sizes],
                          op in ("memcpy", "process_vm_writev", "process_vm_readv")))
    for test in ["ib_write_bw", "ib_read_bw", "ib_send_bw"]:
        p = pt.get(test + "-sweep") or pt.get(test)
        if p and p["rows"]:
            bw_series.append((test, [(s, r["gbps"]) for s, r in p["rows"].items()], True))
    # The same measures of the data path from the previous run, faint
    # beside this run's (the bench.md this report is about to replace).
    prev = previous_run(os.path.join(docs, "bench.md"))
    if prev:
        when = prev["date"][:16].replace("T", " ") or "?"
        for i, (op, label) in enumerate([("send", "SEND"), ("write", "WRITE"), ("read", "READ")]):
            pts = sorted(prev["lat"].get(op, {}).items())
            if pts:
                lat_series.append(("%s, previous run" % label, pts, False, i))
        for op, label, of in [("write", "WRITE", 3), ("read", "READ", 4), ("send", "SEND", 5)]:
            pts = sorted(prev["bw"].get(op, {}).items())
            if pts:
                bw_series.append(("%s, previous run" % label, pts, False, of))
    made = []
    if svg_plot(os.path.join(docs, "bench-latency.svg"),
                "Latency against message size (typical; two processes, uabid)", "µs", lat_series):
        made.append("bench-latency.svg")
    if svg_plot(os.path.join(docs, "bench-bandwidth.svg"),
                "Bandwidth against message size (two processes, uabid)", "GB/s", bw_series):
        made.append("bench-bandwidth.svg")
    # The module against Linux's rxe, perftest in one qemu guest boot
    # (bench/qemu_vs_rxe.sh).
    if "ratio_write_bw" in qvr or "ratio_send_lat" in qvr:
        w("## The kernel module against Linux's rxe, in one qemu guest")
        w("")
        w("`bench/qemu_vs_rxe.sh`: one boot of Debian's kernel %s under qemu TCG (-smp %s, "
          "emulated: absolute numbers are the emulator's, the ratios are the point), with "
          "`rdma_uabi.ko` and `rdma_rxe` (rxe bound to a virtio NIC on qemu's user-mode "
          "network, nothing leaves the guest). Debian's unmodified perftest, "
          "server and client as two processes of the guest: on the module under `uabi run` "
          "(`-d uabi_sw0`), on rxe with Debian's libibverbs and rxe provider (`-d rxe0`, "
          "RoCE v2 GID, rxe's loopback)%s; the backends alternate, %s rounds "
          "(`ib_write_bw -s 65536 -n %s`, `ib_send_lat -s 2 -n %s`, both `-F`). Medians "
          "(range). A run that perftest could not time (it prints 0 or inf when its "
          "calibration of the cycle counter fails, as on an overloaded host) is left out and "
          "counted. The guest ran %s s; host load at start %s, at end %s."
          % (qvr.get("kernel", "?"), qvr.get("smp", "?"),
             ", and on the module's own RoCE device on the same NIC (next section)"
             if "kroce" in qvr.get("backends", "").split() else "", qvr.get("rounds", "?"),
             qvr.get("bw_iters", "?"), qvr.get("lat_iters", "?"), qvr.get("guest_seconds", "?"),
             qvr.get("load_start", "?"), qvr.get("load_end", "?")))
        w("")
        rows = []
        for qk, what, unit, target in (("write_bw", "`ib_write_bw` 64 KiB, BW average", "MiB/s",
                                         "≥ 10"),
                                        ("send_lat", "`ib_send_lat` 2 B, t_typical", "µs",
                                         "≤ 0.2")):
            if "ratio_" + qk not in qvr:
                continue
            def cell(be):
                z = int(qvr.get(be + "_" + qk + "_untimed", "0"))
                return "%s %s (%s)%s" % (
                    qvr_num(qvr[be + "_" + qk]), unit,
                    "–".join(qvr_num(x) for x in qvr[be + "_" + qk + "_range"].split("-")),
                    "; %d more run%s untimed, left out" % (z, "s" if z > 1 else "") if z else "")
            rows.append([what, cell("module"), cell("rxe"), fmt_ratio(float(qvr["ratio_" + qk])),
                         target])
        w(table(["test", "rdma_uabi.ko", "rxe", "module ÷ rxe", "target"], rows))
        w("")
    # The module's own RoCE device (wire forced) against rxe, same boot.
    if "kroce_ratio_write_bw" in qvr or "kroce_ratio_send_lat" in qvr:
        w("## The kernel module's RoCE device against Linux's rxe, in one qemu guest")
        w("")
        w("The same boot as the section above (issue 18's measure): `uabi link add kroce0 "
          "netdev eth0` on the NIC rxe0 is bound to, perftest under `uabi run` with "
          "`UABI_WIRE_FORCE=1` and the RoCE v2 GID of kroce0 (`-d kroce0 -x GIDX`): every "
          "message is RoCEv2 packets sent from one process's UDP socket to the guest's "
          "address, received by the module's socket at port 4791 in the kernel and read by "
          "the other process from its relay (docs/wire.md, \"The kernel module's own RoCE "
          "device\"). rxe and the module's device cannot both hold port 4791 of the guest: "
          "before each rxe run the guest deletes kroce0 and loads `rdma_rxe` (adding rxe0), "
          "before each kroce0 run it deletes rxe0 and unloads `rdma_rxe`. rxe sends to its own "
          "address through its loopback (the packet goes from its send path to its receive "
          "path in the kernel); kroce0's packets cross the guest's UDP/IP stack on `lo`. "
          "kroce0 relayed %s datagrams (dropped %s) in the `ib_write_bw` runs, %s (dropped %s) "
          "in the `ib_send_lat` runs."
          % (qvr.get("kroce_write_bw_relayed", "?"), qvr.get("kroce_write_bw_dropped", "?"),
             qvr.get("kroce_send_lat_relayed", "?"), qvr.get("kroce_send_lat_dropped", "?")))
        w("")
        rows = []
        for qk, what, unit in (("write_bw", "`ib_write_bw` 64 KiB, BW average", "MiB/s"),
                               ("send_lat", "`ib_send_lat` 2 B, t_typical", "µs")):
            if "kroce_ratio_" + qk not in qvr:
                continue
            def cell(be):
                if be + "_" + qk not in qvr:
                    return "–"
                z = int(qvr.get(be + "_" + qk + "_untimed", "0"))
                return "%s %s (%s)%s" % (
                    qvr_num(qvr[be + "_" + qk]), unit,
                    "–".join(qvr_num(x) for x in qvr[be + "_" + qk + "_range"].split("-")),
                    "; %d more run%s untimed, left out" % (z, "s" if z > 1 else "") if z else "")
            rows.append([what, cell("kroce"), cell("rxe"),
                         fmt_ratio(float(qvr["kroce_ratio_" + qk])), cell("module")])
        w(table(["test", "kroce0 (wire)", "rxe", "kroce0 ÷ rxe", "uabi_sw0 (shared memory)"],
                rows))
        w("")

    # RoCEv2 between two namespaces (scripts/bench_wire.sh), when this run
    # could make them (root).
    wire = os.path.join(res_dir, "wire.md")
    w("## RoCEv2 between two namespaces (issue 18's targets)")
    w("")
    if os.path.exists(wire):
        w("Two network namespaces joined by a veth pair, in the same run: a plain UDP "
          "stream and ping-pong on the veth against perftest across RoCE devices, on "
          "the in-process backend and on uabid (each host's uabid owns port 4791 and "
          "either steers each QP's datagrams straight to its process's socket or, with "
          "UABI_WIRE_STEER=0, relays them; docs/wire.md). `scripts/bench_wire.sh`. "
          "The UDP ping-pong runs twice: with both sides sleeping in `recv` (the "
          "yardstick the target was first measured against) and with both spinning on "
          "their sockets, as perftest spins on its CQ; on an idle virtual machine the "
          "sleeping one pays for waking a halted CPU on every message, so the spinning "
          "one is the stricter comparison. The engine ACKs every RC message, which UDP "
          "does not; a receiver that polls sends the ACK with its next packets (docs/wire.md, "
          "\"Held ACKs\").")
        w("")
        with open(wire) as f:
            for line in f.read().rstrip().splitlines():
                w(line)
    else:
        w("Not measured in this run (`scripts/bench_wire.sh` needs root).")
    w("")
    if made:
        w("## Plots")
        w("")
        if prev:
            w("Faint dotted lines: bench_datapath's SEND, RDMA WRITE and RDMA READ in the "
              "previous run (%s UTC, source %s), as the bench.md this run replaced gave "
              "them, beside this run's in the same colour."
              % (prev["date"][:16].replace("T", " ") or "?", prev["source"] or "?"))
            w("")
        for f in made:
            w("![%s](%s)" % (f, f))
            w("")

    with open(os.path.join(docs, "bench.md"), "w") as f:
        f.write("\n".join(md).rstrip() + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Turns the cache benchmark's results.json (CacheBench) into docs/benchmarks.md and two plots.

usage: report.py RESULTS_JSON DOCS_DIR
"""
import json
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MODES = ["Lru", "Offheap", "File", "PersistentFile", "MetaOnly"]


def pct(x):
    return "n/a" if x is None else f"{100 * x:.1f}%"


def mib(n):
    return f"{n / 2**20:.0f} MiB"


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = f"{kb / 2**20:.0f} GiB"
    except OSError:
        pass
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    return {
        "cpu": f"{os.cpu_count()} x {cpu}",
        "memory": mem,
        "os": f"{platform.system()} {platform.release()}",
        "java": java[1].strip() if len(java) > 1 else "?",
    }


def gc(r):
    if r.get("gcTimeFraction") is None:
        return "n/a | n/a | n/a | n/a"
    return (f"{100 * r['gcTimeFraction']:.1f}% | {r['gcPauses']} | {r['gcPauseP99Millis']:.1f} ms | "
            f"{r['gcPauseMaxMillis']:.1f} ms")


def throughput_plot(runs, path):
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.38
    xs = range(len(MODES))
    for i, loading in enumerate(["fits", "large"]):
        ops = [next((r["opsPerSecond"] for r in runs if r["mode"] == m and r["loading"] == loading), 0)
               for m in MODES]
        bars = ax.bar([x + (i - 0.5) * width for x in xs], ops, width,
                      label="working set fits the cache" if loading == "fits" else "working set ~3x the cache")
        for b, m in zip(bars, MODES):
            r = next((r for r in runs if r["mode"] == m and r["loading"] == loading), None)
            ratio = r and r.get("dataReadHitRatio")
            ax.annotate(pct(ratio) if ratio is not None else "no data cache",
                        (b.get_x() + b.get_width() / 2, b.get_height()),
                        ha="center", va="bottom", fontsize=7, rotation=90, xytext=(0, 2),
                        textcoords="offset points")
    ax.set_xticks(list(xs), MODES)
    ax.set_yscale("log")  # misses on slow storage: the large working set is ~100x slower
    ax.set_ylabel("random gets / s (4 client threads, log)")
    ax.set_title("Throughput per cache mode (labels: data reads served from cache)")
    ax.legend(fontsize=8, loc="upper left")
    ax.margins(y=0.25)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def gc_plot(runs, path):
    """GC time share and pause p99 of the RegionServer per mode, both loadings."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    width = 0.38
    xs = range(len(MODES))
    for ax, key, scale, title in ((axes[0], "gcTimeFraction", 100, "GC time (% of the measured interval)"),
                                  (axes[1], "gcPauseP99Millis", 1, "GC pause p99 (ms)")):
        for i, loading in enumerate(["fits", "large"]):
            vals = [next(((r.get(key) or 0) * scale for r in runs
                          if r["mode"] == m and r["loading"] == loading), 0) for m in MODES]
            ax.bar([x + (i - 0.5) * width for x in xs], vals, width,
                   label="working set fits the cache" if loading == "fits" else "working set ~3x the cache")
        ax.set_xticks(list(xs), MODES, fontsize=8)
        ax.set_title(title)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def gc_reading(runs):
    """The rule 'LRU while it fits, an L2 under churn' as this run's numbers say it."""
    def run(m, l):
        return next((r for r in runs if r["mode"] == m and r["loading"] == l), None)
    lru_fits, lru_large = run("Lru", "fits"), run("Lru", "large")
    l2_large = [r for r in (run(m, "large") for m in ("Offheap", "File", "PersistentFile")) if r]
    if not (lru_fits and lru_large and l2_large) or lru_large.get("gcTimeFraction") is None:
        return None
    fits = sorted((r for r in runs if r["loading"] == "fits" and r.get("dataReadHitRatio") is not None),
                  key=lambda r: -r["opsPerSecond"])
    gc_l2 = [r["gcTimeFraction"] * 100 for r in l2_large]
    p99_l2 = [r["gcPauseP99Millis"] for r in l2_large]
    return ("- GC under churn (most reads of the large working set miss and evict a block): Lru's RegionServer "
            f"spent {lru_large['gcTimeFraction'] * 100:.1f}% of the interval in {lru_large['gcPauses']} "
            f"GC pauses (p99 {lru_large['gcPauseP99Millis']:.1f} ms), the L2 modes "
            f"{min(gc_l2):.1f}-{max(gc_l2):.1f}% (pause p99 {min(p99_l2):.1f}-{max(p99_l2):.1f} ms): "
            "the blocks churn outside the heap. The churn here is bound by the storage "
            f"({lru_large['opsPerSecond']:,.0f} gets/s), so the absolute GC times are small. While the "
            "working set fits, the fastest mode "
            f"in this run was {fits[0]['mode']} ({fits[0]['opsPerSecond']:,.0f} gets/s; Lru "
            f"{lru_fits['opsPerSecond']:,.0f}), with GC {lru_fits['gcTimeFraction'] * 100:.1f}% for Lru: "
            "on this machine the modes are within the run-to-run noise when everything is cached, so "
            "our numbers do not show Lru ahead there.")


def restart_plot(restarts, path):
    with_ratios = any(r.get("dataReadHitRatios") for r in restarts)
    fig, axes = plt.subplots(2 if with_ratios else 1, 1, figsize=(8, 6 if with_ratios else 3.6),
                             sharex=True, squeeze=False)
    ax = axes[0][0]
    for r in restarts:
        s = r["bucketSeconds"]
        xs = [s * (i + 1) for i in range(len(r["opsPerSecond"]))]
        ax.plot(xs, r["opsPerSecond"], marker="o", label=r["mode"])
        if with_ratios:
            ratios = [None if x is None else 100 * x for x in r.get("dataReadHitRatios", [])]
            axes[1][0].plot(xs[:len(ratios)], ratios, marker="o", label=r["mode"])
    ax.set_ylabel("random gets / s")
    ax.set_title("After a graceful restart (working set fits the cache)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    if with_ratios:
        axes[1][0].set_ylabel("data reads from cache, %")
        axes[1][0].set_ylim(0, 105)
        axes[1][0].legend(fontsize=8)
    axes[-1][0].set_xlabel("seconds after the restarted RegionServer serves again (5 s buckets)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    results_path, docs = sys.argv[1], sys.argv[2]
    with open(results_path) as f:
        res = json.load(f)
    runs, restarts = res["runs"], res["restarts"]
    os.makedirs(docs, exist_ok=True)
    throughput_plot(runs, os.path.join(docs, "benchmarks-throughput.png"))
    gc_plot(runs, os.path.join(docs, "benchmarks-gc.png"))
    restart_plot(restarts, os.path.join(docs, "benchmarks-restart.png"))
    m = machine()
    rows = res["rows"]
    out = []
    out.append("# Block cache benchmark")
    out.append("")
    out.append("Generated by `make bench-cache` (operator/hbase-it `CacheBench` + "
               "`operator/hbase-it/bench/report.py`) on "
               f"{datetime.fromtimestamp(os.path.getmtime(results_path), timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}"
               " (the run's end). Not a test: numbers vary "
               "between runs and machines.")
    out.append("")
    out.append("## Setup")
    out.append("")
    out.append(f"- Machine: {m['cpu']}, {m['memory']} RAM, {m['os']}, {m['java']}.")
    st = res.get("storage")
    if st:
        out.append("- HBase 2.6.4-hadoop3 (the Maven-built classpath of images/hbase), one ZooKeeper, one "
                   "HMaster and one RegionServer as local processes started through "
                   "`images/hbase/entrypoint.sh`, loopback only. The root dir (HFiles, WALs) is on "
                   "`slowfs` (`make slowfs`, a FUSE loopback): every read of an HFile waits "
                   f"{st['latencyConfiguredMillis']} ms and bypasses the page cache, as a read from an "
                   "object store or from HDFS on other nodes does; writes pass at local speed. Measured "
                   f"through the mount: random {st['probeReadBytes'] // 1024} KiB reads from "
                   f"{st['probeThreads']} threads, p50 {st['readP50Millis']:.1f} ms, p99 "
                   f"{st['readP99Millis']:.1f} ms, {st['megabytesPerSecond']:.1f} MiB/s.")
    else:
        out.append("- HBase 2.6.4-hadoop3 (the Maven-built classpath of images/hbase), one ZooKeeper, one "
                   "HMaster and one RegionServer as local processes started through "
                   "`images/hbase/entrypoint.sh`, root dir on the local filesystem, loopback only.")
    out.append("- RegionServer settings: what the operator's planner renders for a 2 GiB container, "
               "with a block cache of about 256 MiB in each mode (Lru: heap 640 MiB, L1 = 0.4 x heap; "
               "Offheap/File/PersistentFile: `memory.bucketCache: 256Mi`; MetaOnly: no data cache).")
    out.append(f"- Table: {rows:,} rows of {res['valueBytes']} random bytes in 8 regions "
               f"(~{rows * (res['valueBytes'] + 48) / 2**20:.0f} MiB of HFiles, 64 KiB blocks), "
               f"loaded in {res.get('loadSeconds', '?')} s.")
    out.append(f"- Load: single-row random gets from {res['threads']} client threads; "
               f"{res['warmupSeconds']} s warm-up, then {res['measureSeconds']} s measured. "
               f"'fits': the first {res['fitsRows']:,} rows "
               f"(~{res['fitsRows'] * (res['valueBytes'] + 48) / 2**20:.0f} MiB, warmed by a scan); "
               "'large': every row (~3x the cache).")
    out.append("- Hit ratios come from the RegionServer's /jmx counters (deltas over the measured "
               "interval). 'Data reads from cache' corrects the raw data ratio for the double-counted "
               "misses of HBase 2.6.4's combined L1+L2 cache (see `CacheSample`). GC: the "
               "RegionServer JVM's `GcTimeMillis` (JMX) over the measured interval, and the pauses its "
               "GC log (`-Xlog:gc`) records in it.")
    out.append("")
    out.append("## Throughput and hit ratios")
    out.append("")
    out.append("| mode | working set | cache | gets/s | data reads from cache | raw data hit ratio "
               "| L1 hit ratio | L2 hit ratio | evictions | failed insertions | GC time | GC pauses "
               "| pause p99 | pause max |")
    out.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for mode in MODES:
        for loading in ["fits", "large"]:
            r = next((r for r in runs if r["mode"] == mode and r["loading"] == loading), None)
            if r is None:
                continue
            out.append(
                f"| {mode} | {loading} ({mib(r['workingSetBytes'])}) | "
                f"{mib(r['cacheBytes']) if mode != 'MetaOnly' else 'index/bloom only'} | "
                f"{r['opsPerSecond']:,.0f} | {pct(r['dataReadHitRatio'])} | {pct(r['dataHitRatio'])} | "
                f"{pct(r['l1HitRatio'])} | {pct(r['l2HitRatio'])} | {r['evictions']:,} | "
                f"{r['failedInsertions']:,} | {gc(r)} |")
    out.append("")
    out.append("![throughput](benchmarks-throughput.png)")
    out.append("")
    if any(r.get("gcTimeFraction") is not None for r in runs):
        out.append("![gc](benchmarks-gc.png)")
        out.append("")
    out.append("## First minute after a graceful restart")
    out.append("")
    out.append("The RegionServer is stopped with SIGTERM after the 'fits' run and started again with "
               "the same settings (and, for PersistentFile, the same cache files); reads of the 'fits' "
               "working set start as soon as all regions are online again.")
    out.append("")
    out.append("| mode | L2 used at start | gets/s, first 5 s | gets/s, first minute | "
               "data reads from cache, first 5 s | first 10 s | first minute |")
    out.append("|---|---:|---:|---:|---:|---:|---:|")
    for r in restarts:
        ratios = r.get("dataReadHitRatios") or [None, None]
        at_start = mib(r["l2UsedBytesAtStart"]) if "l2UsedBytesAtStart" in r else "?"
        out.append(f"| {r['mode']} | {at_start} | {r['opsPerSecond'][0]:,.0f} | "
                   f"{r['meanOpsPerSecond']:,.0f} | {pct(ratios[0])} | {pct(ratios[1])} | "
                   f"{pct(r['dataReadHitRatio'])} |")
    out.append("")
    out.append("![restart](benchmarks-restart.png)")
    out.append("")
    out.append("## Reading these numbers")
    out.append("")
    if st:
        out.append(f"- A miss costs a {st['latencyConfiguredMillis']} ms storage read, a hit well under a "
                   "millisecond: throughput follows the share of data reads served from cache, and "
                   "MetaOnly (no data cache) is bound by the storage. The restart table above is the "
                   "first minute after a restart with the 'fits' working set; `make bench-restart` "
                   "measures it with a working set the storage cannot serve in a minute "
                   "([bench-restart.md](bench-restart.md)).")
    else:
        out.append("- The HFiles sit on the local filesystem of a machine with plenty of RAM, so a block "
                   "cache miss is served from the OS page cache, not from disk or HDFS: misses cost CPU "
                   "(read, checksum, decode) rather than I/O latency. On real storage the gap between "
                   "cached and uncached reads, and between PersistentFile and File after a restart, is "
                   "much larger than here (`make bench-cache` runs on slowfs unless "
                   "`BENCH_ARGS=-Dbench.latencyMillis=0`).")
    reading = gc_reading(runs)
    if reading:
        out.append(reading)
    loads = [r["loadAverage"] for r in runs + restarts if r.get("loadAverage") is not None]
    busy = (f" The machine's 1-minute load average at the end of the runs was "
            f"{min(loads):.1f} to {max(loads):.1f}." if loads else "")
    out.append("- Client, RegionServer, HMaster and ZooKeeper share the cores with whatever else runs "
               "on the machine, so absolute throughput is low and noisy; compare modes within one run."
               + busy)
    out.append("")
    with open(os.path.join(docs, "benchmarks.md"), "w") as f:
        f.write("\n".join(out))
    print(f"wrote {docs}/benchmarks.md and three plots")


if __name__ == "__main__":
    main()

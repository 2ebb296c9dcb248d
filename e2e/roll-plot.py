#!/usr/bin/env python3
"""A picture of make e2e's rolls: per second the reader's reads and p99, the whole cluster's data
reads served from cache, and each RegionServer restart marked.

Inputs (all written by make e2e into e2e/target): reader*.log (the reader's "R <epoch ms> ok= fail=
p99=" line per second), jmx-samples.csv (every RegionServer's /jmx data-block counters every 2 s,
summed here into 5 s buckets; a new startTime is a restart).

usage: roll-plot.py TARGET_DIR OUT_PNG [FROM_ISO TO_ISO]
"""
import csv
import glob
import os
import re
import sys
from datetime import datetime, timezone

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from timeaxis import time_axis  # noqa: E402

R = re.compile(r"^R (\d+) ok=(\d+) fail=(\d+) p50=[\d.]+ p99=([\d.]+)")


def ts(ms):
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def reader(paths):
    out = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                m = R.match(line)
                if m:
                    out[int(m.group(1))] = (ts(int(m.group(1))), int(m.group(2)), int(m.group(3)), float(m.group(4)))
    return [out[k] for k in sorted(out)]


def cluster_cached(path):
    """Per sample instant: the share of every server's data reads since the last sample served
    from cache (a restarted server counts from its start), and the restarts (time, pod)."""
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            at = datetime.fromisoformat(r["at"].replace("Z", "+00:00")[:26] + "+00:00")
            rows.append((at, r["pod"], int(r["startTime"]), int(r["dataHits"]), int(r["dataMisses"])))
    rows.sort()
    last = {}
    buckets = {}
    restarts = []
    for at, pod, start, hits, misses in rows:
        if start <= 0:
            continue  # a server that did not answer (restarting): no sample
        prev = last.get(pod)
        if prev is None or prev[0] != start:
            if prev is not None:
                restarts.append((ts(start), pod))
            dh, dm = (hits, misses) if prev is not None else (0, 0)
        else:
            dh, dm = hits - prev[1], misses - prev[2]
        last[pod] = (start, hits, misses)
        key = at.replace(microsecond=0, second=at.second - at.second % 5)
        h, n = buckets.get(key, (0, 0))
        buckets[key] = (h + max(dh, 0), n + max(dh, 0) + max(dm, 0))
    series = [(k, h / n) for k, (h, n) in sorted(buckets.items()) if n > 0]
    return series, restarts


def main(target, out, window=None):
    # the suite saves its reader's log per reader pod (reader-steps-*.log) and at the end (reader.log)
    reads = reader(sorted(glob.glob(f"{target}/reader*.log")))
    cached, restarts = cluster_cached(f"{target}/jmx-samples.csv")
    if window:
        lo, hi = window
        reads = [r for r in reads if lo <= r[0] <= hi]
        cached = [c for c in cached if lo <= c[0] <= hi]
        restarts = [r for r in restarts if lo <= r[0] <= hi]
    fig, (a, b, c) = plt.subplots(3, 1, figsize=(14, 8), sharex=True)
    t = [r[0] for r in reads]
    a.plot(t, [r[1] for r in reads], linewidth=0.8, label="reads ok")
    a.plot(t, [r[2] for r in reads], linewidth=0.8, color="red", label="reads failed")
    a.set_ylabel("reads / s")
    a.legend(fontsize=8, loc="lower left")
    b.plot(t, [r[3] for r in reads], linewidth=0.8, color="purple")
    b.set_yscale("log")
    b.axhline(200, color="grey", linestyle=":", linewidth=0.8)
    b.set_ylabel("reader p99 (ms)")
    c.plot([x[0] for x in cached], [x[1] for x in cached], linewidth=0.8, color="green")
    c.set_ylim(min([0.8] + [x[1] for x in cached]), 1.005)
    c.set_ylabel("cluster's data reads\nfrom cache (5 s)")
    for when, pod in restarts:
        for ax in (a, b, c):
            ax.axvline(when, color="orange", linewidth=0.6, alpha=0.7)
        a.annotate(pod.rsplit("-", 1)[-1], (when, a.get_ylim()[1]), fontsize=6, color="darkorange",
                   ha="center", va="bottom", annotation_clip=False)
    time_axis(c)
    fails = sum(r[2] for r in reads)
    fig.suptitle(f"{os.environ.get('ROLL_PLOT_WHAT', 'make e2e')} on kind: the reader (200 gets/s over the whole table) and the cluster's cache; "
                 f"orange: a RegionServer restart (pod ordinal above); {sum(r[1] for r in reads)} reads, {fails} failed",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(out, dpi=80)
    print(f"{out}: {len(reads)} s of reads, {len(restarts)} restarts, {len(cached)} cache samples")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 5):
        sys.exit(__doc__)
    w = None
    if len(sys.argv) == 5:
        w = tuple(datetime.fromisoformat(x.replace("Z", "+00:00")) for x in sys.argv[3:5])
    main(sys.argv[1], sys.argv[2], w)

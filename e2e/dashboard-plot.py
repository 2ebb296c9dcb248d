#!/usr/bin/env python3
"""Draws the chart's Grafana dashboard panels from what Prometheus answered in the kind suite.

make e2e (step 17) saves every dashboard query's series over the run to
e2e/target/prometheus-panels.json; this draws one plot per panel, as the dashboard would, into a
PNG (no Grafana runs here).

usage: dashboard-plot.py PANELS_JSON OUT_PNG
"""
import json
import re
import sys
from collections import OrderedDict
from datetime import datetime, timezone

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from timeaxis import time_axis  # noqa: E402

PERCENT = re.compile(r"ratio|hit_count|gc_time")


def legend(fmt, metric):
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: metric.get(m.group(1), ""), fmt) or metric.get("__name__", "")


def main(src, out):
    with open(src) as f:
        queries = json.load(f)
    panels = OrderedDict()
    for q in queries:
        panels.setdefault(q["panel"], []).append(q)
    n = len(panels)
    cols = 3
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 2.8 * rows), squeeze=False)
    t0 = None
    for ax, (title, qs) in zip(axes.flat, panels.items()):
        timeline = all(q["expr"].rstrip().endswith("== 1") for q in qs)
        labels = []
        for q in qs:
            for s in q["result"]:
                ts = [datetime.fromtimestamp(float(t), tz=timezone.utc) for t, _ in s["values"]]
                vs = [float(v) for _, v in s["values"]]
                if not ts:
                    continue
                t0 = min(t0, ts[0]) if t0 else ts[0]
                name = legend(q["legend"], s["metric"])
                if timeline:
                    # a state timeline: a bar where the state held
                    row = len(labels)
                    labels.append(name)
                    ax.scatter(ts, [row] * len(ts), marker="|", s=60)
                else:
                    ax.plot(ts, vs, label=name, linewidth=1)
        if timeline:
            ax.set_yticks(range(len(labels)))
            ax.set_yticklabels(labels, fontsize=6)
        else:
            if ax.lines and len(ax.lines) <= 8:
                ax.legend(fontsize=6, loc="best")
            if any(PERCENT.search(q["expr"]) for q in qs) and not any("percentile" in q["expr"] for q in qs):
                top = max([1.0] + [max(line.get_ydata(), default=0) for line in ax.lines])
                ax.set_ylim(bottom=0, top=top * 1.03)
        ax.set_title(title, fontsize=9)
        time_axis(ax, maxticks=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle(
        "hbase-cache-operator dashboard panels, from Prometheus during make e2e on kind"
        + (f" (from {t0:%Y-%m-%d %H:%M} UTC)" if t0 else ""),
        fontsize=11,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    fig.savefig(out, dpi=80)
    print(f"{out}: {n} panels")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])

#!/usr/bin/env python3
"""Turns OperatorScaleBench's operator.json into docs/bench-operator.md and docs/bench-operator.png.

usage: operator-report.py OPERATOR_JSON DOCS_DIR
"""
import json
import os
import sys
from datetime import datetime

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "hbase-it", "bench"))

GOALS = {"idle writes/min": 0, "reconcile p99 (ms)": 200, "RSS at 200 servers (MiB)": 300}


def fmt(v, unit=""):
    if v is None:
        return "n/a"
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return f"{v:,}{unit}" if isinstance(v, int) else f"{v:,.1f}{unit}"


def verbs(w):
    return ", ".join(f"{k} {fmt(v)}" for k, v in w["requestsPerMinuteByVerb"].items()) or "none"


def operator_heap(p):
    """The operator's live heap at most: the whole JVM's heap after GC less the simulation's,
    measured before the operator started. When that comes out negative (garbage of an earlier
    scale point still reachable at the first measurement), the subtraction says nothing and the
    whole JVM's figure is the only bound."""
    v = p.get("operatorHeapAtMostMiB")
    return v if v is not None and v > 0 else None


NOISY_START = "<!-- noisy-neighbour: start (operator-report.py) -->"
NOISY_END = "<!-- noisy-neighbour: end -->"


def noisy_section(n, date):
    """The noisy-neighbour row (NoisyNeighbourPoint), between markers: a run of that row alone
    (-Dbench.points=noisy) replaces this section of docs/bench-operator.md and nothing else."""
    b, x, sc = n["baseline"], n.get("noisy", {}), n.get("stallAndChurn", {})
    dead = n.get("operatorExitedAfterSeconds") is not None
    out = [NOISY_START, "## A noisy neighbour\n"]
    out.append(
        f"Measured {date:%Y-%m-%d %H:%M} UTC. {n['quietPolicies']} quiet policies "
        f"({n['quietRegionServers']} simulated RegionServers) and the operator in a process of "
        "its own, from its jar, under the chart's JVM options (as in the point above), first alone, "
        "then beside one noisy tenant: its 16 Ready pods' info ports stall (the operator's "
        "production scraper asks a socket server of the benchmark that sends the headers of a "
        "1 GB body and then a byte every 2 s, or a body of no declared length at that pace), "
        "its policy's `spec.hbase.zookeeperZnodeParent` is patched to a new value every 2 s "
        f"({fmt(x.get('churnPatches'))} patches), and then its namespace gets "
        f"{n.get('floodConfigMaps', 320)} ConfigMaps of 1 MiB that no policy names. Windows of "
        f"{b['seconds']} s: alone, beside the stall and the churn, beside all three (the row); "
        "reconcile time as above, the noisy namespace's own series left out. "
        "`make bench-operator BENCH_ARGS=-Dbench.points=noisy` runs this row alone.\n")
    out.append(
        "| window | operator running | quiet reconciles | quiet reconcile p50 / p99 | process "
        "CPU (cores) | RSS at the end | peak RSS | load average |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, w in (("alone (baseline)", b), ("beside the stall and the churn", sc),
                    ("beside all three (the row)", x)):
        if not w:
            continue
        out.append(
            f"| {name} | {'yes' if w.get('operatorRunning') else '**no**'} | "
            f"{fmt(w.get('quietReconciles'))} | {fmt(w.get('quietReconcileP50Ms'), ' ms')} / "
            f"{fmt(w.get('quietReconcileP99Ms'), ' ms')} | {fmt(w.get('processCpuCores'))} | "
            f"{fmt(w.get('rssMiB'), ' MiB')} | {fmt(w.get('peakRssMiB'), ' MiB')} | "
            f"{w.get('loadAverage', 'n/a')} |")
    out.append("")
    out.append(
        f"- Quiet p99 beside the noisy tenant / alone: "
        f"{fmt(n.get('quietP99Ratio')) + 'x' if n.get('quietP99Ratio') is not None else 'n/a'} "
        f"(goal <= 2x: {'met' if n.get('goalP99WithinTwice') else '**not met**'}).")
    out.append(
        f"- Peak RSS of the operator's process: {fmt(n.get('operatorProcessPeakRssMiB'), ' MiB')} "
        f"(goal under the chart's 512 Mi limit: {'met' if n.get('goalRssUnderLimit') else '**not met**'}).")
    if sc.get("quietReconcileP99Ms") is not None and b.get("quietReconcileP99Ms"):
        out.append(
            "- Beside the stall and the churn alone: quiet p99 "
            f"{fmt(round(sc['quietReconcileP99Ms'] / b['quietReconcileP99Ms'], 2))}x the "
            "baseline's.")
    degraded = sc.get("noisyPolicyDegraded") or x.get("noisyPolicyDegraded")
    if degraded:
        out.append(f"- The noisy policy's Degraded condition: `{degraded[:300]}`.")
    if not dead:
        out.append(
            f"- The noisy namespace's stalled asks held at once: "
            f"{fmt(x.get('noisyStalledAsksHeldAtOnce'))} (its share of the scrape pool: 4 of 16).")
    if n.get("operatorExitedAfterSeconds") is not None:
        out.append(
            f"- The operator's process exited {n['operatorExitedAfterSeconds']} s after the noisy "
            "tenant came (its log: `operator/core/target/bench/operator-process-noisy-*.log`).")
    out.append(f"- Flooding the namespace with the ConfigMaps took {n.get('configMapFloodSeconds')} s.\n")
    out.append(NOISY_END)
    return out


def splice_noisy(docs, section):
    """Puts the noisy-neighbour section into the existing docs/bench-operator.md: in place of the
    one between the markers, else before the goals."""
    path = os.path.join(docs, "bench-operator.md")
    with open(path) as f:
        text = f.read()
    block = "\n".join(section)
    if NOISY_START in text and NOISY_END in text:
        before = text[:text.index(NOISY_START)]
        after = text[text.index(NOISY_END) + len(NOISY_END):]
        text = before + block + after
    elif "## Against the goals" in text:
        i = text.index("## Against the goals")
        text = text[:i] + block + "\n\n" + text[i:]
    else:
        text = text + "\n" + block + "\n"
    with open(path, "w") as f:
        f.write(text)


def main(path, docs):
    with open(path) as f:
        r = json.load(f)
    # the points whose operator ran in the benchmark's JVM (requests counted, threads profiled),
    # and those where it ran in a process of its own, from its jar (its memory alone)
    pts = [p for p in r["points"] if not p.get("operatorOwnProcess")]
    own = [p for p in r["points"] if p.get("operatorOwnProcess")]
    noisy = r.get("noisyNeighbour")
    date = datetime.fromisoformat(r["date"][:19])
    if not pts and noisy:
        # the noisy-neighbour row alone: its section of the existing report, the rest untouched
        splice_noisy(docs, noisy_section(noisy, date))
        return
    if not pts:
        sys.exit("operator-report.py: the report needs a point with the operator in the benchmark's "
                 "JVM (a bench.points entry without 'p'); the measurements are in " + path)
    # the whole report and its plot (the noisy row alone needs neither)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from report import machine

    m = machine()
    out = []
    out.append("# The operator at scale\n")
    out.append(
        "Generated by `make bench-operator` (operator/core `OperatorScaleBench` + "
        "`operator/core/bench/operator-report.py`) on "
        f"{datetime.fromisoformat(r['date'][:19]):%Y-%m-%d %H:%M} UTC (the run's end). Not a test: numbers vary between runs "
        "and machines.\n")
    out.append("## Setup\n")
    out.append(
        f"- Machine: {m['cpu']}, {m['memory']} RAM, {m['os']}, {m['java']}; "
        f"a real kube-apiserver and etcd ({r['kubernetes']}, kube-api-test) on the same cores.")
    out.append(
        "- Per scale point: StatefulSets of simulated RegionServer pods, one `BlockCachePolicy` "
        "(PersistentFile, 1Gi L2, default 30 s metrics interval) each. The kubelet and HBase are "
        "simulated as in the operator ITs (`FakeKube`: a pod is Ready about 1 s after its create; "
        "`SimulatedHBase`: regions, load reports, drains and /jmx answers from memory, 5 regions per "
        "server). The operator is the production `BlockCacheOperator` watching all namespaces, on "
        "its own client, in the benchmark's JVM.")
    out.append(
        "- Requests are counted on the operator's client (LIST and WATCH told from GET by path and "
        "query); reconcile time is the operator's own histogram "
        "(`operator_sdk_controllers_execution_reconcile_seconds`) read as "
        "`histogram_quantile(q, sum by (le) (...))` over the window's increase.")
    out.append(
        "- CPU and memory: 'JVM' is the whole benchmark JVM (operator plus the simulated "
        "kubelets and HBase, so an upper bound for the operator); 'API server' is kube-apiserver "
        "plus etcd, which also serve the simulated kubelets (one look per StatefulSet per second). "
        "In brackets, the operator's live objects at most: the heap after a full GC with the "
        "operator running less the same measured before it started (the simulation's own state "
        "only grows meanwhile).")
    jvm = r["machine"].get("jvmArguments")
    if jvm:
        out.append(
            "- The benchmark JVM runs as the chart runs the operator: "
            f"`{' '.join(a for a in jvm if a.startswith('-XX'))}` "
            f"(max heap {r['machine']['maxHeapMiB']} MiB, GC {', '.join(r['machine']['gc'])}): the "
            "chart's `javaOpts` under its 512Mi memory limit, where the JVM picks the Serial GC "
            "itself (MaxRAM stands for the container's limit).")
    if own:
        out.append(
            "- Then the largest point again with the operator in a process of its own, started "
            "from its runnable jar (`operator/target/hbase-cache-operator.jar`, as the image runs "
            "it) with the same JVM options, on its own client (`BridgedOperator`). Its two seams "
            "to HBase go over HTTP on the loopback to the benchmark's simulated clusters "
            "(`HBaseBridge`): each admin call and /jmx sample is one local HTTP round trip, and "
            "the HBase client's classes are not loaded (in production they are, so its metaspace "
            "is larger there). Its memory is the operator's alone: RSS and peak RSS from "
            "`/proc/<pid>/status`, heap after a full GC and Native Memory Tracking from `jcmd`.")
    out.append(f"- Idle window: {r['idleSeconds']} s after the statuses settled.\n")

    out.append("## Results\n")
    out.append(
        "| RegionServers (StatefulSets) | first roll of all | idle: API writes/min | idle: API "
        "requests/min by verb | idle: reconciles/min | idle: reconcile p50 / p99 | idle: /jmx "
        "scrapes/min | rolling: API requests/min by verb | rolling: reconcile p50 / p99 | JVM CPU "
        "idle / rolling (cores) | API server CPU idle / rolling (cores) | heap after GC "
        "(operator) | RSS |")
    out.append("|---|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    for p in pts:
        i, ro = p["idle"], p["rolling"]
        out.append(
            f"| {p['regionServers']} ({p['statefulSets']}) | {fmt(p['rollSeconds'], ' s')} | "
            f"{fmt(i['writesPerMinute'])} | {verbs(i)} | "
            f"{fmt(round(i['reconciles'] * 60 / i['seconds'], 1))} | "
            f"{fmt(i['reconcileP50Ms'], ' ms')} / {fmt(i['reconcileP99Ms'], ' ms')} | "
            f"{fmt(i['scrapesPerMinute'])} | {verbs(ro)} | "
            f"{fmt(ro['reconcileP50Ms'], ' ms')} / {fmt(ro['reconcileP99Ms'], ' ms')} | "
            f"{fmt(i['jvmCpuCores'])} / {fmt(ro['jvmCpuCores'])} | "
            f"{fmt(i['apiServerAndEtcdCpuCores'])} / {fmt(ro['apiServerAndEtcdCpuCores'])} | "
            f"{fmt(p['heapAfterGcMiB'], ' MiB')} (<= {fmt(operator_heap(p) or p['heapAfterGcMiB'], ' MiB')}) | "
            f"{fmt(p['rssMiB'], ' MiB')} |")
    out.append("")
    spec = [p for p in pts if "specRoll" in p]
    if spec:
        out.append(
            "Then, after the idle window, the roll users start every day: a spec change "
            "(`tuning.writerThreads`) on every policy at once. The first roll above also creates "
            "each policy's ConfigMap and PodDisruptionBudget and recreates each StatefulSet with "
            "its cache volume template; this one only rolls.\n")
        out.append(
            "| RegionServers (StatefulSets) | spec-change roll of all | pods restarted (most "
            "down in one StatefulSet) | API requests/min by verb | reconciles | reconcile p50 / "
            "p99 | status patches: the API server's own p50 / p99 | JVM CPU (cores) | API server "
            "CPU (cores) |")
        out.append("|---|---:|---:|---|---:|---:|---:|---:|---:|")
        for p in spec:
            s2 = p["specRoll"]
            out.append(
                f"| {p['regionServers']} ({p['statefulSets']}) | {fmt(s2['rollSeconds'], ' s')} | "
                f"{s2['podsRestarted']} ({s2['mostDownInOneStatefulSet']}) | {verbs(s2)} | "
                f"{fmt(s2['reconciles'])} | "
                f"{fmt(s2['reconcileP50Ms'], ' ms')} / {fmt(s2['reconcileP99Ms'], ' ms')} | "
                f"{fmt(s2.get('statusPatches'))}: {fmt(s2.get('apiServerStatusPatchP50Ms'), ' ms')} / "
                f"{fmt(s2.get('apiServerStatusPatchP99Ms'), ' ms')} | "
                f"{fmt(s2['jvmCpuCores'])} | {fmt(s2['apiServerAndEtcdCpuCores'])} |")
        out.append("")
        out.append(
            "The status patches' own time is the API server's `apiserver_request_duration_seconds` "
            "for `PATCH blockcachepolicies/status` (every one of them is the operator's): from the "
            "request received to the answer written, without the client or the network. In the "
            "first roll of all: "
            + "; ".join(
                f"{p['regionServers']} servers {fmt(p['rolling'].get('statusPatches'))} patches, "
                f"{fmt(p['rolling'].get('apiServerStatusPatchP50Ms'), ' ms')} / "
                f"{fmt(p['rolling'].get('apiServerStatusPatchP99Ms'), ' ms')}"
                for p in pts)
            + ".\n")
        changes = [p for p in spec if p["specRoll"].get("statusChanges")]
        if changes:
            out.append("## What the status writes of the spec-change roll changed\n")
            out.append(
                "A watch on the policies compares each status with the one before, field by field "
                "(`StatusChanges`): status writes per pod restarted, at each scale point.\n")
            out.append("| RegionServers | status writes | per restart |")
            out.append("|---|---:|---:|")
            for p in changes:
                c = p["specRoll"]["statusChanges"]
                out.append(f"| {p['regionServers']} | {fmt(c['statusWrites'])} | "
                           f"{fmt(c.get('statusWritesPerRestart'))} |")
            out.append("")
            c = changes[-1]["specRoll"]["statusChanges"]
            out.append(
                f"At {changes[-1]['regionServers']} servers, the fields changed together most "
                "often (a row is one kind of write):\n")
            out.append("| fields changed in one write | writes |")
            out.append("|---|---:|")
            for k, v in c["fieldsChangedTogether"].items():
                fields = " ".join(f.replace("status.", "") for f in k.split(" "))
                if len(fields) > 160:
                    fields = fields[:157] + "..."
                out.append(f"| `{fields}` | {fmt(v)} |")
            out.append("")
    big = pts[-1]
    profiles = [("the first roll of all", big["rolling"].get("reconcileThreads"))]
    if "specRoll" in big:
        profiles.append(("the spec-change roll", big["specRoll"].get("reconcileThreads")))
    for during, where in profiles:
        if not where:
            continue
        out.append(f"## Where a rolling reconcile spends its time: {during}\n")
        out.append(
            f"At {big['regionServers']} servers, during {during}, every 50 ms the "
            "stacks of the reconciler threads inside `reconcile()` "
            f"({where['busyThreadSamples']:,} samples): the operator's innermost frame, what it "
            "called, and the frame on top (`Unsafe.park`: waiting for an answer over HTTP). A "
            "wall-clock profile: a thread waiting counts as much as one computing. The reconciler "
            f"threads' own CPU: at least {fmt(where['cpuMsPerReconcile'], ' ms')} per reconcile "
            "(a thread's CPU before its first sample and after its last is not seen, and JOSDK's "
            "executor replaces its threads).\n")
        out.append("| where | share of busy samples |")
        out.append("|---|---:|")
        for k, v in where["percentByPlace"].items():
            out.append(f"| `{k}` | {v}% |")
        out.append("")
    nmt = big.get("nativeMemoryCommittedMiB")
    if nmt:
        out.append(f"## Where the memory of the benchmark JVM goes at {big['regionServers']} servers\n")
        out.append(
            "Native Memory Tracking's committed memory after the idle window (MiB), beside the RSS "
            f"({fmt(big['rssMiB'], ' MiB')}); of the {fmt(big['heapAfterGcMiB'], ' MiB')} of "
            f"live objects in the heap, at most {fmt(operator_heap(big) or big['heapAfterGcMiB'], ' MiB')} "
            "are the operator's. The RSS beyond NMT's total is memory the JVM does not track (the C "
            "library's allocator, the JVM's own code).\n")
        out.append("| category | committed |")
        out.append("|---|---:|")
        for k, v in nmt.items():
            if v >= 1:
                out.append(f"| {k} | {v} |")
        out.append("")
    slow = [p for p in pts if "oneSlowServer" in p]
    if slow:
        p = slow[-1]
        s = p["oneSlowServer"]
        out.append("## One slow RegionServer\n")
        out.append(
            f"At {p['regionServers']} servers, one RegionServer's /jmx answered after 10 s for "
            f"{s['seconds']} s. Its own policy's reconciles: {s['slowPolicyReconciles']}, median "
            f"{fmt(s['slowPolicyReconcileP50Ms'], ' ms')}. All other policies' reconciles: "
            f"{s['reconciles']}, p50 {fmt(s['reconcileP50Ms'], ' ms')}, p99 "
            f"{fmt(s['reconcileP99Ms'], ' ms')} (idle before: p99 "
            f"{fmt(p['idle']['reconcileP99Ms'], ' ms')}).\n")
    if own:
        out.append("## The operator alone, in its own process\n")
        out.append(
            "| RegionServers (StatefulSets) | first roll of all: time, reconcile p50 / p99 | "
            "spec-change roll: time, reconcile p50 / p99 | status writes per restart | process "
            "CPU idle / rolling (cores) | heap after GC | RSS after the idle window | peak RSS "
            "(both rolls) | threads |")
        out.append("|---|---|---|---:|---:|---:|---:|---:|---:|")
        for p in own:
            o, sr = p["operatorProcess"], p.get("specRoll", {})
            out.append(
                f"| {p['regionServers']} ({p['statefulSets']}) | {fmt(p['rollSeconds'], ' s')}, "
                f"{fmt(p['rolling']['reconcileP50Ms'], ' ms')} / "
                f"{fmt(p['rolling']['reconcileP99Ms'], ' ms')} | "
                f"{fmt(sr.get('rollSeconds'), ' s')}, {fmt(sr.get('reconcileP50Ms'), ' ms')} / "
                f"{fmt(sr.get('reconcileP99Ms'), ' ms')} | "
                f"{fmt(sr.get('statusChanges', {}).get('statusWritesPerRestart'))} | "
                f"{fmt(p['idle']['jvmCpuCores'])} / {fmt(p['rolling']['jvmCpuCores'])} | "
                f"{fmt(o['heapAfterGcMiB'], ' MiB')} | {fmt(o['rssMiB'], ' MiB')} | "
                f"{fmt(sr.get('operatorProcessPeakRssMiB'), ' MiB')} | {fmt(o['threads'])} |")
        out.append("")
        out.append(
            "Its reconcile times are not the operator's alone: every HBase call and /jmx sample "
            "is a loopback HTTP request with JSON both ways (`HBaseBridge`), and this process, the "
            "benchmark's JVM and the API server share the same 2 cores. The reconcile figures of "
            "the points above (operator in the benchmark's JVM) are the ones to read for latency; "
            "this point is for memory.\n")
        p = own[-1]
        out.append(
            f"Native Memory Tracking's committed memory of the operator's process at "
            f"{p['regionServers']} servers after the idle window (MiB), beside its RSS "
            f"({fmt(p['operatorProcess']['rssMiB'], ' MiB')}):\n")
        out.append("| category | committed |")
        out.append("|---|---:|")
        for k, v in p["operatorProcess"]["nativeMemoryCommittedMiB"].items():
            if v >= 1:
                out.append(f"| {k} | {v} |")
        out.append("")
    if noisy:
        out.extend(noisy_section(noisy, date))
        out.append("")
    out.append("## Against the goals (issue 12)\n")
    out.append(
        f"- Idle API writes: {fmt(big['idle']['writesPerMinute'])} per minute at "
        f"{big['regionServers']} servers (goal 0).")
    out.append(
        f"- Reconcile p99 idle: {fmt(big['idle']['reconcileP99Ms'], ' ms')}, while rolling: "
        f"{fmt(big['rolling']['reconcileP99Ms'], ' ms')} in the first roll"
        + (f", {fmt(big['specRoll']['reconcileP99Ms'], ' ms')} in the spec-change roll"
           if "specRoll" in big else "")
        + " (goal < 200 ms)"
        + (f"; the API server's own p99 for the status patches in that roll: "
           f"{fmt(big['specRoll'].get('apiServerStatusPatchP99Ms'), ' ms')}"
           if "specRoll" in big else "")
        + ".")
    if own:
        p = own[-1]
        out.append(
            f"- Memory at {p['regionServers']} servers, the operator in its own process: RSS "
            f"{fmt(p['operatorProcess']['rssMiB'], ' MiB')} after the idle window, at most "
            f"{fmt(p.get('specRoll', {}).get('operatorProcessPeakRssMiB'), ' MiB')} over both "
            f"rolls, live heap {fmt(p['operatorProcess']['heapAfterGcMiB'], ' MiB')} (goal RSS "
            "< 300 MiB; the HBase client's classes, loaded in production, are not in it).")
    out.append(
        f"- Memory at {big['regionServers']} servers, in the benchmark's JVM: the operator's live heap "
        + (f"at most {fmt(operator_heap(big), ' MiB')}" if operator_heap(big) else
           "is not separable from the simulation's in this run (the simulation's heap measured "
           "before the operator started was larger than the whole JVM's after: garbage of the "
           "previous scale point), so bounded only by the whole JVM's")
        + "; heap after GC of the whole JVM "
        f"{fmt(big['heapAfterGcMiB'], ' MiB')}, its RSS {fmt(big['rssMiB'], ' MiB')} with the "
        "chart's JVM settings (goal RSS < 300 MiB for the operator; this JVM also holds the "
        "simulation: its heap, its threads and its clients).")
    out.append(
        "- Scraping: a policy's servers are asked at once on a pool shared by all policies (16 "
        "threads, at most 4 of them for one namespace's asks; each ask ends within 10 s, twice the "
        "5 s timeout, whatever the server sends, and reads at most 4 MiB); a reconcile waits for "
        "its info servers 15 s at most; policies reconcile in parallel (JOSDK's executor), so a "
        "slow server delays only its own policy's reconcile and holds only its namespace's share "
        "of the pool (see above, and the noisy neighbour).\n")
    out.append("![operator at scale](bench-operator.png)\n")
    with open(os.path.join(docs, "bench-operator.md"), "w") as f:
        f.write("\n".join(out))

    xs = [p["regionServers"] for p in pts]
    fig, ax = plt.subplots(1, 3, figsize=(14, 4))
    ax[0].plot(xs, [p["idle"]["reconcileP99Ms"] or 0 for p in pts], "o-", label="idle p99")
    ax[0].plot(xs, [p["rolling"]["reconcileP99Ms"] or 0 for p in pts], "s-",
               label="first roll p99")
    if all("specRoll" in p for p in pts):
        ax[0].plot(xs, [p["specRoll"]["reconcileP99Ms"] or 0 for p in pts], "d-",
                   label="spec-change roll p99")
        ax[0].plot(xs, [p["specRoll"].get("apiServerStatusPatchP99Ms") or 0 for p in pts], "d--",
                   label="its status patches, API server's own p99")
    ax[0].plot(xs, [p["idle"]["reconcileP50Ms"] or 0 for p in pts], "o--", label="idle p50")
    ax[0].set_title("reconcile time (ms)")
    ax[0].legend()
    ax[1].plot(xs, [sum(p["idle"]["requestsPerMinuteByVerb"].values()) for p in pts], "o-",
               label="idle, all")
    ax[1].plot(xs, [p["idle"]["writesPerMinute"] for p in pts], "o--", label="idle, writes")
    ax[1].plot(xs, [sum(p["rolling"]["requestsPerMinuteByVerb"].values()) for p in pts], "s-",
               label="rolling, all")
    ax[1].set_title("operator's API requests per minute")
    ax[1].legend()
    ax[2].plot(xs, [p["rssMiB"] for p in pts], "o-", label="RSS (benchmark JVM)")
    ax[2].plot(xs, [p["heapAfterGcMiB"] for p in pts], "s-", label="heap after GC (JVM)")
    if all(operator_heap(p) for p in pts):
        ax[2].plot(xs, [operator_heap(p) for p in pts], "^-",
                   label="heap after GC (operator, at most)")
    if own:
        ax[2].plot([p["regionServers"] for p in own],
                   [p.get("specRoll", {}).get("operatorProcessPeakRssMiB") or 0 for p in own],
                   "r*", markersize=12, label="peak RSS (operator alone)")
        ax[2].axhline(300, color="grey", linestyle=":", label="goal: 300 MiB")
    ax[2].set_title("memory (MiB)")
    ax[2].legend()
    for a in ax:
        a.set_xlabel("RegionServers")
        a.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(docs, "bench-operator.png"), dpi=100)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

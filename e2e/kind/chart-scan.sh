#!/usr/bin/env bash
# The manifest scan a platform team runs on a chart before adopting it: checkov's Kubernetes checks
# on `helm template` of both charts in their main value sets (below). Every finding must be in the
# skip list charts/scan-skips.txt with its reason; a finding that is not fails this script (a new
# finding), and so does a skip-list line that matches no finding any more (a stale one). `make lint`
# runs it. checkov (tools.sh checkov: its CHECKOV_VERSION from PyPI) goes into a venv under
# $BIN_DIR on first use (~2 min). Prints each value set's counts, then "N passed, M failed" (N:
# checks passed; M: new findings plus stale skip lines). CHART_SCAN_KEEP=DIR keeps the rendered
# manifests and checkov's JSON there.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SKIPS=$REPO_ROOT/charts/scan-skips.txt
have helm || "$E2E_KIND_DIR/tools.sh" helm >/dev/null
"$E2E_KIND_DIR/tools.sh" checkov >/dev/null
venv=$BIN_DIR/checkov-venv

out=${CHART_SCAN_KEEP:-$(mktemp -d)}
mkdir -p "$out"
[ -n "${CHART_SCAN_KEEP:-}" ] || trap 'rm -rf "$out"' EXIT
OP=$REPO_ROOT/charts/hbase-cache-operator
HB=$REPO_ROOT/charts/hbase
# the main value sets: each chart's defaults and its other modes. --kube-version: the Kubernetes
# the kind tests run (a helm built without helm's own ldflags would assume 1.20)
render() { # render NAME CHART RELEASE NAMESPACE [helm args...]
  local name=$1 chart=$2 rel=$3 ns=$4; shift 4
  helm template "$rel" "$chart" -n "$ns" --kube-version "$K8S_VERSION" "$@" >"$out/$name.yaml" \
    || die "helm template $chart $* failed"
}
render operator "$OP" hbase-cache-operator hbase-cache-system
render operator-namespace "$OP" hbase-cache-operator team-a --set scope=Namespace
render operator-prerequisites "$OP" hco-prerequisites hbase-cache-system --set scope=Prerequisites
render operator-monitoring "$OP" hbase-cache-operator hbase-cache-system --set replicaCount=2 \
  --set monitoring.serviceMonitor.enabled=true --set monitoring.podMonitor.enabled=true \
  --set monitoring.prometheusRule.enabled=true --set monitoring.grafanaDashboard.enabled=true
render hbase "$HB" hbase hbase
render hbase-kerberos "$HB" hbase hbase --set security.kerberos.enabled=true

files=()
for f in "$out"/*.yaml; do files+=(-f "$f"); done
# --skip-download: no call to Prisma Cloud (no registry but PyPI is reachable here; the checks are local)
rc=0
"$venv/bin/checkov" "${files[@]}" --framework kubernetes --skip-download -o json >"$out/checkov.json" 2>"$out/checkov.err" || rc=$?
# checkov exits 1 when a check failed; anything else (or no JSON) is its own failure
if [ "$rc" -gt 1 ] || ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out/checkov.json" 2>/dev/null; then
  tail -20 "$out/checkov.err" >&2
  die "checkov failed (exit $rc)"
fi
python3 - "$out/checkov.json" "$SKIPS" <<'PY'
import fnmatch, json, os, sys
report, skips_file = sys.argv[1], sys.argv[2]
d = json.load(open(report))
reports = d if isinstance(d, list) else [d]
passed, failed = [], []
for r in reports:
    passed += r["results"]["passed_checks"]
    failed += r["results"]["failed_checks"]
# skip list: CHECK_ID RESOURCE_GLOB REASON... (# starts a comment line)
skips = []
for n, line in enumerate(open(skips_file), 1):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    parts = line.split(None, 2)
    if len(parts) < 3 or len(parts[2]) < 10:
        sys.exit(f"{skips_file}:{n}: expected CHECK_ID RESOURCE_GLOB REASON (a reason of some words): {line}")
    skips.append({"line": n, "check": parts[0], "glob": parts[1], "reason": parts[2], "used": 0})
def value_set(f):
    return os.path.basename(f["file_path"]).removesuffix(".yaml")
def skip_of(f):
    for s in skips:
        if s["check"] == f["check_id"] and fnmatch.fnmatchcase(f["resource"], s["glob"]):
            return s
    return None
sets = sorted({value_set(f) for f in passed + failed})
new = []
print("checkov %s, Kubernetes checks on helm template (charts/scan-skips.txt: the findings left, each with its reason)" % reports[0]["summary"].get("checkov_version", "?"))
for vs in sets:
    p = sum(1 for f in passed if value_set(f) == vs)
    fs = [f for f in failed if value_set(f) == vs]
    listed = 0
    for f in fs:
        s = skip_of(f)
        if s:
            s["used"] += 1
            listed += 1
        else:
            new.append((vs, f))
    print(f"  {vs:24} passed {p:4}, failed {len(fs):3} ({listed} in the skip list, {len(fs) - listed} new)")
for vs, f in new:
    print(f"  NEW  {vs}: {f['check_id']} {f['resource']}: {f['check_name']}")
stale = [s for s in skips if not s["used"]]
for s in stale:
    print(f"  STALE {skips_file}:{s['line']}: {s['check']} {s['glob']} matches no finding (remove it)")
print(f"  findings in the skip list: {sum(s['used'] for s in skips)} ({sum(1 for s in skips if s['used'])} lines); new: {len(new)}; stale lines: {len(stale)}")
print(f"{len(passed)} passed, {len(new) + len(stale)} failed")
sys.exit(1 if new or stale else 0)
PY

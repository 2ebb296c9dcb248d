#!/usr/bin/env bash
# make demo: the quickstart on kind, end to end, and the cluster left running.
#
#   1. kind cluster $KIND_CLUSTER (reused when it exists; node image
#      KIND_NODE_IMAGE, tools into ./bin when missing: e2e/kind/cluster-up.sh)
#   2. HBase and operator images built (SKIP_MVN=1 reuses the Maven outputs, SKIP_IMAGES=1 builds
#      nothing) and loaded into kind
#   3. charts/hbase (e2e/kind/hbase-up.sh) and the operator (e2e/kind/operator-up.sh:
#      charts/hbase-cache-operator, whose templates hold the CRD; the same install as make e2e; names and namespaces in e2e/kind/lib.sh)
#   4. kubectl apply -f examples/persistent-file.yaml into the HBase namespace, and a wait for its
#      roll (every RegionServer restarted with a 640Mi file L2 on a 2Gi PVC): phase Idle, Ready=True
#   5. a client pod loads a 200 MB table (50,000 rows x 4 KiB, 6 regions) and another reads it
#      (random Gets, 200/s, DEMO_READ_SECONDS=480)
#   6. after two metrics intervals (30 s each): `kubectl get bcp` with the hit ratio and the
#      per-RegionServer status
#   7. DEMO_ROLLS (2) manual restarts while the reader reads: what each roll cost the whole
#      cluster (status.rollout.lastRoll: seconds, slowest pod, share of every RegionServer's reads
#      served from cache) and what the reader saw. The first roll's drains go to servers that
#      never had those regions; from the second on they go where the last roll cached them.
#   8. the rolls as a picture, e2e/target/demo/roll.png (e2e/roll-plot.py, matplotlib from PyPI):
#      reads per second, the reader's p99, the cluster's data reads from cache (every
#      RegionServer's /jmx every 5 s through the API server's proxy), each restart marked
#
# Takes about 7.5 minutes here (2 vCPU, images and node image already built; a cold first run also
# builds the node image, ~20 min): cluster 25 s, image builds ~1 min, loads ~50 s, charts ~1 min,
# the policy's first roll ~1.5 min, load + reads ~1.5 min, two rolls ~1 min each. Delete with
# `make kind-down`.
. "$(dirname "${BASH_SOURCE[0]}")/kind/lib.sh"
NS=$HBASE_NAMESPACE
OP_NS=$OPERATOR_NAMESPACE
READ_SECONDS=${DEMO_READ_SECONDS:-480}
ROLLS=${DEMO_ROLLS:-2}
CTX=$KUBE_CONTEXT
k() { kubectl --context "$CTX" -n "$NS" "$@"; }
t_all=$SECONDS
step() { log "== $*"; }

step "kind cluster $KIND_CLUSTER"
"$E2E_KIND_DIR/cluster-up.sh" >/dev/null

step "images"
"$E2E_KIND_DIR/docker.sh"
if [ "${SKIP_IMAGES:-0}" != 1 ]; then
  "$E2E_KIND_DIR/hbase-image.sh" >/dev/null
  "$E2E_KIND_DIR/operator-image.sh" >/dev/null
fi
# hbase-up.sh and operator-up.sh load the images into kind

step "charts/hbase"
"$E2E_KIND_DIR/hbase-up.sh" 2>&1 | grep -vE '^(NAME|hbase|kube-system|local-path)' >&2 || true
k wait --for=condition=Ready pod -l app.kubernetes.io/instance=hbase --timeout=5m >/dev/null

step "charts/hbase-cache-operator (e2e/kind/operator-up.sh: the CRD with the chart, release $OPERATOR_RELEASE)"
"$E2E_KIND_DIR/operator-up.sh"

step "kubectl apply -f examples/persistent-file.yaml (namespace $NS)"
k apply -f "$REPO_ROOT/examples/persistent-file.yaml" >&2
t0=$SECONDS
last=""
while :; do
  gen=$(k get bcp persistent-file -o jsonpath='{.metadata.generation}')
  line=$(k get bcp persistent-file -o jsonpath='{.status.observedGeneration} {.status.rollout.phase} {.status.rollout.progress} {.status.rollout.currentPod} {.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true)
  read -r obs phase progress _ <<<"$line"
  ready=${line##* }
  if [ "$line" != "$last" ]; then
    log "roll: phase=${phase:-?} updated=${progress:-?} pod=$(k get bcp persistent-file -o jsonpath='{.status.rollout.currentPod}') Ready=$ready ($((SECONDS - t0))s)"
    last=$line
  fi
  if [ "$obs" = "$gen" ] && [ "$phase" = Idle ] && [ "$ready" = True ]; then break; fi
  if [ $((SECONDS - t0)) -gt "${DEMO_ROLL_TIMEOUT:-1200}" ]; then
    k get bcp persistent-file -o yaml >&2
    kubectl --context "$CTX" -n "$OP_NS" logs -l app.kubernetes.io/instance="$OPERATOR_RELEASE" --tail=40 >&2 || true
    die "the policy's roll did not finish within ${DEMO_ROLL_TIMEOUT:-1200}s"
  fi
  sleep 5
done
log "the policy's roll finished in $((SECONDS - t0))s"
k get bcp persistent-file -o json | jq -r '.status.rollout.lastRoll // empty
  | "status.rollout.lastRoll: \(.restarts) restarts in \(.seconds) s, slowest \(.slowestPod // "-") \(.slowestPodSeconds // "-") s from delete to regions home, \(.coldRestarts) cold"' >&2
k get pods -l app.kubernetes.io/component=regionserver -o wide >&2

step "load a table and read it (in-cluster client pods, e2e/workload)"
"$REPO_ROOT/e2e/workload/build.sh" >/dev/null
"$REPO_ROOT/e2e/workload/pod.sh" demo-load load usertable 50000 4096 6 >/dev/null
k wait --for=jsonpath='{.status.phase}'=Succeeded pod/demo-load --timeout=10m >/dev/null \
  || { k logs demo-load >&2; die "the load failed"; }
k logs demo-load | grep -E '^(put|flushed|regions|warm-up|LOAD)' >&2
k delete pod demo-load --wait=false >/dev/null
"$REPO_ROOT/e2e/workload/pod.sh" demo-read read usertable 50000 2 200 "$READ_SECONDS" >/dev/null
k wait --for=jsonpath='{.status.phase}'=Running pod/demo-read --timeout=3m >/dev/null
t_read=$SECONDS
# two metrics intervals (30 s each) and HBase's own metrics refresh after the reads started
wait_s=$(( READ_SECONDS < 75 ? READ_SECONDS : 75 ))
log "reading (200 random Gets/s over the whole table); status after ${wait_s}s"
sleep "$wait_s"
reads=$(k logs demo-read | awk '/^R /{for(i=3;i<=4;i++){split($i,a,"=");s[a[1]]+=a[2]}} END{printf "%d ok, %d failed", s["ok"], s["fail"]}')
log "reader so far: $reads in $((SECONDS - t_read))s"

step "kubectl get bcp"
k get bcp
echo
echo "per RegionServer (status.regionServers):"
k get bcp persistent-file -o json | jq -r '
  (["POD","READY","HIT RATIO","CUMULATIVE","L2 USED","RETAINED","RESTARTED AT"] | @tsv),
  (.status.regionServers[] | [.pod, .ready, (.hitRatio // "-"), (.cumulativeHitRatio // "-"),
     ((.l2UsedBytes // 0) / 1048576 | floor | tostring + "Mi"), (.retainedFraction // "-"), (.restartedAt // "-")] | @tsv)' \
  | column -t -s $'\t'
echo
k get bcp persistent-file -o json | jq -r '.status.cache | "aggregate: hitRatio \(.hitRatio), L1 \(.l1HitRatio), L2 \(.l2HitRatio), cumulative \(.cumulativeHitRatio), used \((.usedBytes // 0) / 1048576 | floor)Mi of \((.sizeBytes // 0) / 1048576 | floor)Mi, sampled \(.sampledAt)"'

# A manual restart while the reader reads; prints the roll's figures and the reader's.
roll_with_reads() { # roll_with_reads N
  local before t0 from to
  before=$(k get bcp persistent-file -o jsonpath='{.status.rollout.lastRoll.finishedAt}')
  from=$(date +%s%3N)
  t0=$SECONDS
  k annotate bcp persistent-file cache.hbase.dev/restart="demo-$1-$(date -u +%FT%TZ)" --overwrite >/dev/null
  while [ "$(k get bcp persistent-file -o jsonpath='{.status.rollout.lastRoll.finishedAt}')" = "$before" ]; do
    [ $((SECONDS - t0)) -gt "${DEMO_ROLL_TIMEOUT:-1200}" ] && die "roll $1 did not finish within ${DEMO_ROLL_TIMEOUT:-1200}s"
    sleep 3
  done
  to=$(date +%s%3N)
  k get bcp persistent-file -o json | jq -r '.status.rollout.lastRoll
    | "  operator (status.rollout.lastRoll): \(.restarts) restarts in \(.seconds) s, slowest \(.slowestPod) \(.slowestPodSeconds) s from delete to regions home;"
      + " data reads of all RegionServers during the roll: \(.dataReads // "-"), served from cache: \(.cachedReadRatio // "-")"'
  k logs demo-read | awk -v from="$from" -v to="$to" '
    /^R / && $2 >= from && $2 <= to {
      for (i = 3; i <= 8; i++) { split($i, a, "="); v[a[1]] = a[2] }
      n++; ok += v["ok"]; fail += v["fail"]; if (v["p99"] + 0 > worst) worst = v["p99"] + 0
      if (v["max"] + 0 > max) max = v["max"] + 0
    }
    END { printf "  reader during the roll: %d reads in %d s, %d failed, worst second p99 %.0f ms, slowest read %.0f ms\n", ok + fail, n, fail, worst, max }'
}
# Every RegionServer's data-block counters every 5 s (through the API server's pod proxy), as
# make e2e's JmxSampler writes them: e2e/roll-plot.py draws the rolls from them and the reader's log
PLOT_DIR=$REPO_ROOT/e2e/target/demo
mkdir -p "$PLOT_DIR"
rm -f "$PLOT_DIR"/reader*.log
echo "at,pod,startTime,dataHits,dataMisses" > "$PLOT_DIR/jmx-samples.csv"
sample_jmx() {
  local bean='Hadoop%3Aservice%3DHBase%2Cname%3DRegionServer%2Csub%3DServer' pod
  while :; do
    for pod in $(k get pods -l app.kubernetes.io/component=regionserver -o jsonpath='{.items[*].metadata.name}'); do
      kubectl --context "$CTX" get --raw "/api/v1/namespaces/$NS/pods/$pod:16030/proxy/jmx?qry=$bean" 2>/dev/null \
        | jq -r --arg at "$(date -u +%FT%T.%6NZ)" --arg pod "$pod" \
          '.beans[0] | select(. != null and .regionServerStartTime != null)
           | [$at, $pod, .regionServerStartTime, .blockCacheDataHitCount, .blockCacheDataMissCount] | @csv' \
        2>/dev/null | tr -d '"' >> "$PLOT_DIR/jmx-samples.csv" || true
    done
    sleep 5
  done
}
sample_jmx &
sampler=$!
trap 'kill $sampler 2>/dev/null || true' EXIT
plot_from=$(date -u +%FT%TZ)

for i in $(seq 1 "$ROLLS"); do
  if [ "$i" = 1 ]; then
    step "roll 1 of $ROLLS while the reader reads (kubectl annotate bcp persistent-file cache.hbase.dev/restart=...): its drains go to servers that never cached these regions"
  else
    step "roll $i of $ROLLS while the reader reads: the drains go where the last roll cached the regions"
  fi
  roll_with_reads "$i"
done

kill "$sampler" 2>/dev/null || true
k logs demo-read > "$PLOT_DIR/reader.log"
step "the rolls as a picture (e2e/roll-plot.py): reads per second, the reader's p99, the cluster's reads from cache, each restart"
make -C "$REPO_ROOT" --no-print-directory plot-venv >&2
ROLL_PLOT_WHAT="make demo" "$BIN_DIR/bench-venv/bin/python" "$REPO_ROOT/e2e/roll-plot.py" "$PLOT_DIR" "$PLOT_DIR/roll.png" "$plot_from" "$(date -u +%FT%TZ)" \
  || log "could not draw the picture (see above); the figures are printed above"

echo
log "demo done in $((SECONDS - t_all))s; the reader pod demo-read runs until ${READ_SECONDS}s are up; the rolls' picture: $PLOT_DIR/roll.png"
cat >&2 <<EOF

The cluster is still running (kind cluster $KIND_CLUSTER, kubectl context $CTX):
  kubectl --context $CTX -n $NS get bcp -w
  kubectl --context $CTX -n $NS annotate bcp persistent-file cache.hbase.dev/restart="\$(date -u +%FT%TZ)" --overwrite   # roll once more
  kubectl --context $CTX -n $OP_NS logs -l app.kubernetes.io/instance=$OPERATOR_RELEASE
Delete it with:  make kind-down KIND_CLUSTER=$KIND_CLUSTER
EOF

#!/usr/bin/env bash
# Install (or upgrade) charts/hbase into the kind cluster $KIND_CLUSTER and wait until every pod is
# Ready; prints the wall time from `helm upgrade --install` to all-Ready and the pods' memory.
#   HBASE_NAMESPACE, HBASE_RELEASE, HBASE_IMAGE (loaded into kind first; defaults in lib.sh)
#   HELM_ARGS (extra, e.g. "--set regionserver.replicas=1")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
NS=$HBASE_NAMESPACE
REL=$HBASE_RELEASE
CTX=$KUBE_CONTEXT
docker image inspect "$HBASE_IMAGE" >/dev/null 2>&1 || die "image $HBASE_IMAGE not built (make hbase-image)"
"$E2E_KIND_DIR/load-images.sh" "$HBASE_IMAGE"
t0=$SECONDS
# The namespace enforces Pod Security "restricted": the API server refuses any pod of the chart,
# the operator or the test clients that does not meet it.
kubectl --context "$CTX" create namespace "$NS" --dry-run=client -o yaml | kubectl --context "$CTX" apply -f - >/dev/null
kubectl --context "$CTX" label --overwrite namespace "$NS" pod-security.kubernetes.io/enforce=restricted \
  pod-security.kubernetes.io/warn=restricted >/dev/null
# shellcheck disable=SC2086
helm --kube-context "$CTX" upgrade --install "$REL" "$REPO_ROOT/charts/hbase" -n "$NS" --create-namespace \
  --set image.repository="${HBASE_IMAGE%:*}" --set image.tag="${HBASE_IMAGE##*:}" \
  --wait --timeout "${HBASE_TIMEOUT:-15m}" ${HELM_ARGS:-} >&2 || {
    kubectl --context "$CTX" -n "$NS" get pods -o wide >&2
    kubectl --context "$CTX" -n "$NS" get events --sort-by=.lastTimestamp 2>/dev/null | tail -30 >&2
    die "helm install of charts/hbase did not become Ready"; }
# helm --wait covers the StatefulSets' readiness; check every pod of the release once more
kubectl --context "$CTX" -n "$NS" wait --for=condition=Ready pod --timeout=5m \
  -l "app.kubernetes.io/instance=$REL,app.kubernetes.io/component in (zookeeper,master,regionserver)" >&2
log "charts/hbase: install to all pods Ready in $((SECONDS - t0))s"
kubectl --context "$CTX" -n "$NS" get pods -o wide >&2
"$E2E_KIND_DIR/memory.sh" >&2 || true

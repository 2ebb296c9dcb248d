#!/usr/bin/env bash
# Install (or upgrade) the operator into the kind cluster $KIND_CLUSTER: `kubectl apply -f crds/`
# (Helm never upgrades CRDs), `kind load docker-image $OPERATOR_IMAGE`, then
# `helm upgrade --install` of charts/hbase-cache-operator into $OPERATOR_NAMESPACE and wait for Ready.
#   OPERATOR_NAMESPACE (default hbase-cache-system)  OPERATOR_RELEASE (default hco)
#   OPERATOR_HELM_ARGS (extra, e.g. "--set watchNamespaces={hbase}")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
NS=${OPERATOR_NAMESPACE:-hbase-cache-system}
REL=${OPERATOR_RELEASE:-hco}
OPERATOR_IMAGE=${OPERATOR_IMAGE:-hbase-cache/operator:0.1.0}
CTX=kind-$KIND_CLUSTER
docker image inspect "$OPERATOR_IMAGE" >/dev/null 2>&1 || die "image $OPERATOR_IMAGE not built (make operator-image)"
# server-side: no last-applied annotation (large schemas); force: take the fields over from Helm,
# which installed the CRD on the first install but never upgrades it
kubectl --context "$CTX" apply --server-side --force-conflicts -f "$REPO_ROOT/crds/" >&2
"$E2E_KIND_DIR/load-images.sh" "$OPERATOR_IMAGE"
# the image ID as a pod annotation: a rebuilt image under the same tag rolls the Deployment
image_id=$(docker image inspect -f '{{.Id}}' "$OPERATOR_IMAGE" | sed 's/^sha256://' | cut -c1-12)
t0=$SECONDS
# shellcheck disable=SC2086
helm --kube-context "$CTX" upgrade --install "$REL" "$REPO_ROOT/charts/hbase-cache-operator" -n "$NS" --create-namespace \
  --set image.repository="${OPERATOR_IMAGE%:*}" --set image.tag="${OPERATOR_IMAGE##*:}" \
  --set-string podAnnotations.image-id="$image_id" \
  --wait --timeout "${OPERATOR_TIMEOUT:-5m}" ${OPERATOR_HELM_ARGS:-} >&2 || {
    kubectl --context "$CTX" -n "$NS" get pods -o wide >&2
    kubectl --context "$CTX" -n "$NS" logs -l app.kubernetes.io/instance="$REL" --tail=50 >&2 || true
    die "helm install of charts/hbase-cache-operator did not become Ready"; }
log "charts/hbase-cache-operator: install to Ready in $((SECONDS - t0))s"
kubectl --context "$CTX" -n "$NS" get pods -o wide >&2

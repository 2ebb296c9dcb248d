#!/usr/bin/env bash
# The one way the operator is installed on kind (make kind-operator, make demo, make e2e and the e2e
# suite all run this script): `kind load docker-image $OPERATOR_IMAGE`, then `helm upgrade --install
# $OPERATOR_RELEASE charts/hbase-cache-operator` into $OPERATOR_NAMESPACE (the chart creates and
# upgrades the CRD: templates/crds.yaml) and a wait for Ready and for the CRD to be Established.
# A CRD left by an older install (kubectl apply -f crds/, before the chart owned it) is first marked
# as this release's, as docs say to do on upgrade, so that Helm adopts it.
#   OPERATOR_RELEASE, OPERATOR_NAMESPACE, OPERATOR_IMAGE: defaults in lib.sh
#   OPERATOR_HELM_ARGS (extra, e.g. "--set watchNamespaces={hbase}")  OPERATOR_TIMEOUT (default 5m)
#   OPERATOR_MONITORING=1: also the Prometheus Operator's ServiceMonitor, PodMonitor and
#     PrometheusRule CRDs (from its Go module: tools.sh monitoring-crds), and the chart with all its
#     monitoring objects on (ServiceMonitor, PodMonitor, PrometheusRule, Grafana dashboard ConfigMap);
#     make e2e does this and its Prometheus scrapes what those objects say
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
NS=$OPERATOR_NAMESPACE
REL=$OPERATOR_RELEASE
CTX=$KUBE_CONTEXT
CRD=blockcachepolicies.cache.hbase.dev
docker image inspect "$OPERATOR_IMAGE" >/dev/null 2>&1 || die "image $OPERATOR_IMAGE not built (make operator-image)"
# every kind test runs the image a release publishes: Jib's build (operator-image.sh), whose layers
# say so in the image's history
docker history --no-trunc --format '{{.CreatedBy}}' "$OPERATOR_IMAGE" | grep '^jib-maven-plugin' >/dev/null \
  || die "$OPERATOR_IMAGE was not built by Jib (make operator-image builds the image a release publishes)"
if kubectl --context "$CTX" get "crd/$CRD" >/dev/null 2>&1 \
  && [ -z "$(kubectl --context "$CTX" get "crd/$CRD" -o jsonpath='{.metadata.annotations.meta\.helm\.sh/release-name}')" ]; then
  log "CRD $CRD exists without a Helm owner: marked as release $REL's (namespace $NS) for Helm to adopt"
  kubectl --context "$CTX" label --overwrite "crd/$CRD" app.kubernetes.io/managed-by=Helm >&2
  kubectl --context "$CTX" annotate --overwrite "crd/$CRD" meta.helm.sh/release-name="$REL" meta.helm.sh/release-namespace="$NS" >&2
fi
# a loop, not `kubectl wait --for=condition=Established`: that fails at once ("status.conditions
# accessor error: <nil>") when it reads the CRD before the API server has written its status
established() { # established CRD_NAME: waits up to 120 s
  for _ in $(seq 120); do
    [ "$(kubectl --context "$CTX" get "crd/$1" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null)" = True ] && return 0
    sleep 1
  done
  die "CRD $1 not Established within 120s"
}
monitoring_args=()
if [ "${OPERATOR_MONITORING:-0}" = 1 ]; then
  "$E2E_KIND_DIR/tools.sh" monitoring-crds >/dev/null
  kubectl --context "$CTX" apply --server-side --force-conflicts -f "$BIN_DIR/monitoring-crds-$PROMETHEUS_OPERATOR_VERSION/" >&2
  for c in servicemonitors podmonitors prometheusrules; do established "$c.monitoring.coreos.com"; done
  monitoring_args=(--set monitoring.serviceMonitor.enabled=true --set monitoring.podMonitor.enabled=true
    --set monitoring.prometheusRule.enabled=true --set monitoring.grafanaDashboard.enabled=true)
fi
"$E2E_KIND_DIR/load-images.sh" "$OPERATOR_IMAGE"
# the image ID as a pod annotation: a rebuilt image under the same tag rolls the Deployment
image_id=$(docker image inspect -f '{{.Id}}' "$OPERATOR_IMAGE" | sed 's/^sha256://' | cut -c1-12)
t0=$SECONDS
# shellcheck disable=SC2086
helm --kube-context "$CTX" upgrade --install "$REL" "$REPO_ROOT/charts/hbase-cache-operator" -n "$NS" --create-namespace \
  --set image.repository="${OPERATOR_IMAGE%:*}" --set image.tag="${OPERATOR_IMAGE##*:}" \
  --set-string podAnnotations.image-id="$image_id" "${monitoring_args[@]}" \
  --wait --timeout "${OPERATOR_TIMEOUT:-5m}" ${OPERATOR_HELM_ARGS:-} >&2 || {
    kubectl --context "$CTX" -n "$NS" get pods -o wide >&2
    kubectl --context "$CTX" -n "$NS" logs -l app.kubernetes.io/instance="$REL" --tail=50 >&2 || true
    die "helm install of charts/hbase-cache-operator did not become Ready"; }
established "$CRD"
log "charts/hbase-cache-operator (release $REL, namespace $NS): install to Ready in $((SECONDS - t0))s"
# The image's uid has a name: Hadoop's login (every HBase connection, Kerberos or not) fails for a
# uid without an /etc/passwd entry (operator/core/pom.xml, profile jib)
# (the newest Running pod: an upgrade's old pod may still be terminating)
pod=$(kubectl --context "$CTX" -n "$NS" get pods -l app.kubernetes.io/instance="$REL" --field-selector=status.phase=Running \
  --sort-by=.metadata.creationTimestamp -o jsonpath='{.items[-1:].metadata.name}')
user=$(kubectl --context "$CTX" -n "$NS" exec "$pod" -c operator -- id -un 2>&1) \
  || die "the operator's uid has no name in its image (id -un: $user): Hadoop's login would fail"
log "operator pod $pod runs $OPERATOR_IMAGE (Jib) as user $user"
kubectl --context "$CTX" -n "$NS" get pods -o wide >&2

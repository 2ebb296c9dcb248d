#!/usr/bin/env bash
# `make publish-check`: the release path, end to end, with a real registry. A local CNCF
# distribution registry (registry.sh) stands in for ghcr.io; publish.sh (the release workflow's
# script) pushes the Jib-built operator image and the OCI chart to it; then, on a kind cluster of
# its own whose containerd pulls localhost:5000 through a mirror to that registry, the operator is
# installed as a user installs it:
#   helm install hbase-cache-operator oci://localhost:5000/charts/hbase-cache-operator --version V
# with no --set and no `kind load`. Checks: the node did not have the image before, the running
# pod's image digest is the one Jib pushed (the packaged chart names it by digest), its uid has a
# name in the image (Hadoop's login needs one), the chart's CRD is served, the operator reconciles
# a policy (its status written), and the published image plans a policy with no checkout:
# `kubectl run --rm -i --image=<it> -- plan -f - ...` (docs/operations/install.md), in a plain
# namespace and in one that enforces Pod Security restricted. Report: target/publish-check.md. KEEP_CLUSTER=1 keeps the cluster
# and the registry. PUBLISH_CPU_SHARES=N gives its containers (the kind node, the registry) that CPU
# weight (docker update --cpu-shares; 1024 is Docker's default): .ci/run runs this after make
# test-hbase, beside the kind suite, and gives them 128, as it nices the job's own processes.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export KIND_CLUSTER=${PUBLISH_CLUSTER:-hbase-cache-oci}
KUBE_CONTEXT=kind-$KIND_CLUSTER
REGISTRY_NAME=${REGISTRY_NAME:-hbase-cache-registry}
REGISTRY_PORT=${REGISTRY_PORT:-5000}
export REGISTRY_NAME REGISTRY_PORT
NS=hbase-cache-system
report=$REPO_ROOT/target/publish-check.md
mkdir -p "$REPO_ROOT/target"
t_start=$SECONDS
lines=()
note() { lines+=("$*"); log "$*"; }
cleanup() {
  if [ "${KEEP_CLUSTER:-0}" != 1 ]; then
    kind delete cluster --name "$KIND_CLUSTER" >/dev/null 2>&1 || true
    "$E2E_KIND_DIR/registry.sh" down >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

# 1. a kind cluster whose containerd reads registry hosts from /etc/containerd/certs.d
cfg=$(mktemp)
cat >"$cfg" <<'EOF'
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
containerdConfigPatches:
- |-
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "/etc/containerd/certs.d"
EOF
t0=$SECONDS
KIND_CONFIG=$cfg "$E2E_KIND_DIR/cluster-up.sh" >/dev/null
rm -f "$cfg"
note "kind cluster \`$KIND_CLUSTER\` in $((SECONDS - t0)) s"

# 2. the registry, and each node's mirror for localhost:$REGISTRY_PORT (kind's local-registry recipe)
reg=$("$E2E_KIND_DIR/registry.sh" up)
for node in $(kind get nodes --name "$KIND_CLUSTER"); do
  docker exec "$node" mkdir -p "/etc/containerd/certs.d/localhost:$REGISTRY_PORT"
  printf '[host."http://%s:5000"]\n  capabilities = ["pull", "resolve"]\n' "$REGISTRY_NAME" \
    | docker exec -i "$node" tee "/etc/containerd/certs.d/localhost:$REGISTRY_PORT/hosts.toml" >/dev/null
done
# inside the node, localhost:$REGISTRY_PORT is nothing: a pull of localhost:$REGISTRY_PORT/... can
# only succeed through the mirror
node=$KIND_CLUSTER-control-plane
if docker exec "$node" curl -fsS -m 3 "http://localhost:$REGISTRY_PORT/v2/" >/dev/null 2>&1; then
  die "the node reaches localhost:$REGISTRY_PORT itself: the check would not show the mirror at work"
fi
note "registry \`$REGISTRY_NAME\` (CNCF distribution $REGISTRY_VERSION, built from Go modules): pushed to at $reg, pulled from by the kind node through the mirror \`localhost:$REGISTRY_PORT\` -> \`http://$REGISTRY_NAME:5000\`"

if [ -n "${PUBLISH_CPU_SHARES:-}" ]; then
  docker update --cpu-shares "$PUBLISH_CPU_SHARES" $(kind get nodes --name "$KIND_CLUSTER") "$REGISTRY_NAME" >/dev/null \
    || die "docker update --cpu-shares $PUBLISH_CPU_SHARES of the kind node and the registry failed"
  note "its containers at CPU weight $PUBLISH_CPU_SHARES (Docker's default: 1024)"
fi

# 3. the JRE base where Jib pulls it from: the local registry plays the public one
base=$("$E2E_KIND_DIR/base-image.sh")
base_ref=$reg/base/jre:17
docker tag "$base" "$base_ref" && docker push -q "$base_ref" >/dev/null || die "docker push $base_ref failed"
note "JRE base \`$base\` pushed as \`$base_ref\` (the base Jib reads from a registry)"

# 4. publish: what the release workflow runs, against this registry
t0=$SECONDS
REGISTRY=$reg PLAIN_HTTP=1 BASE_IMAGE=$base_ref "$E2E_KIND_DIR/publish.sh" >/dev/null
# shellcheck disable=SC1091
. "$REPO_ROOT/target/publish.env"
note "published in $((SECONDS - t0)) s: image \`$IMAGE_TAG\` = \`$IMAGE_REF\` (Jib, no Dockerfile), chart \`$CHART_REF\` $CHART_VERSION ($CHART_DIGEST)"
digest=${IMAGE_REF##*@}
repo=${IMAGE_TAG#"$reg"/}; repo=${repo%:*}
size=$(curl -fsS -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
  -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
  "http://$reg/v2/$repo/manifests/$digest" | tr -d ' \n' | grep -oE '"size":[0-9]+' | cut -d: -f2 | awk '{s += $1} END {print s}')
note "image in the registry: $((size / 1024 / 1024)) MiB (config and layers, compressed)"

# 5. install as a user would
if docker exec "$node" crictl images -o json | grep -q "${IMAGE_TAG%:*}"; then
  die "the node already has ${IMAGE_TAG%:*} before the install: the check would not show a pull"
fi
t0=$SECONDS
helm --kube-context "$KUBE_CONTEXT" install hbase-cache-operator "$CHART_REF" --version "$CHART_VERSION" \
  --plain-http -n "$NS" --create-namespace --wait --timeout "${OPERATOR_TIMEOUT:-5m}" >&2 || {
    kubectl --context "$KUBE_CONTEXT" -n "$NS" get pods -o wide >&2
    kubectl --context "$KUBE_CONTEXT" -n "$NS" get events --sort-by=.lastTimestamp >&2 | tail -20
    die "helm install $CHART_REF did not become Ready"; }
note "\`helm install hbase-cache-operator $CHART_REF --version $CHART_VERSION --plain-http\`: Ready in $((SECONDS - t0)) s"
pod=$(kubectl --context "$KUBE_CONTEXT" -n "$NS" get pods -l app.kubernetes.io/instance=hbase-cache-operator -o jsonpath='{.items[0].metadata.name}')
image=$(kubectl --context "$KUBE_CONTEXT" -n "$NS" get pod "$pod" -o jsonpath='{.spec.containers[0].image}')
image_id=$(kubectl --context "$KUBE_CONTEXT" -n "$NS" get pod "$pod" -o jsonpath='{.status.containerStatuses[0].imageID}')
pulled=$(kubectl --context "$KUBE_CONTEXT" -n "$NS" get events --field-selector "involvedObject.name=$pod,reason=Pulled" -o jsonpath='{.items[0].message}')
[ "$image" = "$IMAGE_TAG@$digest" ] || die "the chart's pod runs $image, not the published $IMAGE_TAG@$digest"
case $image_id in *"$digest") ;; *) die "the pod's imageID $image_id is not the pushed digest $digest" ;; esac
note "pod \`$pod\` runs \`$image\` (the packaged chart's image.digest), imageID \`$image_id\` (the digest Jib pushed); kubelet: \"$pulled\""
# Hadoop's login (every HBase connection) fails for a uid without an /etc/passwd entry
user=$(kubectl --context "$KUBE_CONTEXT" -n "$NS" exec "$pod" -- id -un 2>&1) \
  || die "the published image's uid has no name (id -un: $user): Hadoop's login would fail"
note "the operator's uid in the published image: \`$(kubectl --context "$KUBE_CONTEXT" -n "$NS" exec "$pod" -- id 2>&1)\`"

# 6. the chart's CRD is served and the operator acts on a policy
t0=$SECONDS
kubectl --context "$KUBE_CONTEXT" create namespace demo >/dev/null
kubectl --context "$KUBE_CONTEXT" -n demo apply -f "$REPO_ROOT/examples/persistent-file.yaml" >/dev/null
cond=
for _ in $(seq 60); do
  cond=$(kubectl --context "$KUBE_CONTEXT" -n demo get bcp -o jsonpath='{range .items[0].status.conditions[?(@.type=="Valid")]}{.status} {.reason}: {.message}{end}' 2>/dev/null)
  [ -n "$cond" ] && break
  sleep 1
done
[ -n "$cond" ] || die "the operator wrote no Valid condition on examples/persistent-file.yaml within 60 s"
note "examples/persistent-file.yaml (no StatefulSet behind it here) in namespace demo: Valid=$cond, $((SECONDS - t0)) s"

# 7. the planner from the published image, no checkout: the policy on standard input
plan_out=$REPO_ROOT/target/publish-check-plan.txt
t0=$SECONDS
kubectl --context "$KUBE_CONTEXT" -n default run bcp-plan --rm -i --restart=Never --image="$IMAGE_TAG@$digest" \
  --pod-running-timeout=3m -- plan -f - --memory-limit 16Gi <"$REPO_ROOT/examples/persistent-file.yaml" >"$plan_out" 2>&1 \
  || { cat "$plan_out" >&2; die "kubectl run ... plan -f - from the published image failed"; }
for want in 'heap: ' 'pvcSize: 2Gi' 'HBASE_HEAPSIZE: ' 'hbase.bucketcache.persistent.path: '; do
  grep -q "$want" "$plan_out" || { cat "$plan_out" >&2; die "the plan from the published image lacks '$want'"; }
done
note "\`kubectl run --rm -i --image=<published> -- plan -f - --memory-limit 16Gi < examples/persistent-file.yaml\`: the plan in $((SECONDS - t0)) s ($(grep -c . "$plan_out") lines, $(grep -m1 '^heap: ' "$plan_out"))"
# the same in a namespace that enforces Pod Security restricted, with the overrides install.md gives
kubectl --context "$KUBE_CONTEXT" create namespace plan-restricted >/dev/null
kubectl --context "$KUBE_CONTEXT" label namespace plan-restricted pod-security.kubernetes.io/enforce=restricted >/dev/null
overrides=$(printf '{"spec":{"securityContext":{"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}},"containers":[{"name":"bcp-plan","image":"%s","args":["plan","-f","-","--memory-limit","16Gi"],"stdin":true,"stdinOnce":true,"securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}}}]}}' "$IMAGE_TAG@$digest")
t0=$SECONDS
kubectl --context "$KUBE_CONTEXT" -n plan-restricted run bcp-plan --rm -i --restart=Never --image="$IMAGE_TAG@$digest" \
  --pod-running-timeout=3m --overrides="$overrides" <"$REPO_ROOT/examples/persistent-file.yaml" >"$plan_out" 2>&1 \
  || { cat "$plan_out" >&2; die "kubectl run ... plan in a restricted namespace failed"; }
grep -q 'pvcSize: 2Gi' "$plan_out" || { cat "$plan_out" >&2; die "no plan from the published image in a restricted namespace"; }
note "the same in a namespace enforcing Pod Security \`restricted\` (--overrides of docs/operations/install.md): the plan in $((SECONDS - t0)) s"

{
  echo "# make publish-check ($(date -u +%FT%TZ))"
  echo
  echo "The release path with a real registry: Jib image and OCI chart pushed by \`e2e/kind/publish.sh\`"
  echo "(as \`.github/workflows/release.yml\` runs it), installed from the registry on kind."
  echo
  for l in "${lines[@]}"; do echo "- $l"; done
  echo "- total $((SECONDS - t_start)) s"
} >"$report"
log "report: $report"
cat "$report"

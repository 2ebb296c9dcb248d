#!/usr/bin/env bash
# Create (or reuse) a one-node kind cluster named $KIND_CLUSTER (default in lib.sh).
# Node image: $KIND_NODE_IMAGE when set; else, when ../shared/kind-offline exists next to the repo
# (this workplace: no container registry), kind-offline/node:v1.34.4, built by that folder's
# build-node-image.sh when missing (about 19 min cold, seconds warm); else kind's own default
# (kindest/node:v1.34.0 for kind v0.30.0, pulled from Docker Hub).
# Also: installs kind/helm into ./bin (tools.sh), makes Docker available (docker.sh), copies the
# node's kubectl into ./bin when there is none, and prints the kubectl context.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
"$E2E_KIND_DIR/tools.sh" kind helm >/dev/null
"$E2E_KIND_DIR/docker.sh"

image=${KIND_NODE_IMAGE:-}
if [ -z "$image" ] && offline_kit; then
  image=kind-offline/node:$K8S_VERSION
  if ! docker image inspect "$image" >/dev/null 2>&1; then
    offline_lock "the node image"
    if ! docker image inspect "$image" >/dev/null 2>&1; then
      log "building $image with $KIND_OFFLINE_DIR/build-node-image.sh (cold: ~19 min)"
      t0=$SECONDS
      # One more try on failure: the kit's version checks pipe into `grep -q` under pipefail and can
      # fail by chance (SIGPIPE; seen once on this machine, "built coredns does not report v1.12.1");
      # the kit keeps what it built, so a retry redoes only the failed step.
      KO_K8S_VERSION=$K8S_VERSION "$KIND_OFFLINE_DIR/build-node-image.sh" >&2 \
        || { log "build-node-image.sh failed; trying once more"; KO_K8S_VERSION=$K8S_VERSION "$KIND_OFFLINE_DIR/build-node-image.sh" >&2; } \
        || die "build-node-image.sh failed twice"
      log "node image built in $((SECONDS - t0))s"
    fi
    offline_unlock
  fi
fi

if kind get clusters 2>/dev/null | grep -qx "$KIND_CLUSTER"; then
  log "kind cluster $KIND_CLUSTER already exists"
else
  t0=$SECONDS
  args=(create cluster --name "$KIND_CLUSTER" --wait 5m)
  [ -n "$image" ] && args+=(--image "$image")
  [ -n "${KIND_CONFIG:-}" ] && args+=(--config "$KIND_CONFIG")
  log "kind ${args[*]}"
  kind "${args[@]}" >&2 || die "kind create cluster failed"
  log "cluster $KIND_CLUSTER created in $((SECONDS - t0))s"
fi

node=$KIND_CLUSTER-control-plane
if [ ! -x "$BIN_DIR/kubectl" ] && ! have kubectl; then
  # the node's own kubectl matches the cluster version and works on the host (static Go binary)
  docker cp "$node:/usr/bin/kubectl" "$BIN_DIR/kubectl" && log "copied kubectl from $node into $BIN_DIR"
fi
kubectl --context "$KUBE_CONTEXT" wait --for=condition=Ready node --all --timeout=180s >&2
kubectl --context "$KUBE_CONTEXT" get nodes -o wide >&2
echo "$KUBE_CONTEXT"

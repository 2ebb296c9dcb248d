#!/usr/bin/env bash
# Create (or reuse) a one-node kind cluster named $KIND_CLUSTER (default in lib.sh).
# Node image: node-image.sh ($KIND_NODE_IMAGE; else, with ../shared/kind-offline next to the repo,
# kind-offline/node:v1.34.4 built when missing; else kind's own default, kindest/node:v1.34.0 for
# kind v0.30.0, pulled from Docker Hub).
# Also: installs kind/helm into ./bin (tools.sh), makes Docker available (docker.sh), copies the
# node's kubectl into ./bin when there is none, and prints the kubectl context.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
"$E2E_KIND_DIR/tools.sh" kind helm >/dev/null
"$E2E_KIND_DIR/docker.sh"

image=$("$E2E_KIND_DIR/node-image.sh") || die "no node image"

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

#!/usr/bin/env bash
# Print the kind node image (empty: kind's own default):
#   1. $KIND_NODE_IMAGE when set;
#   2. else, when ../shared/kind-offline exists next to the repo (no registry on this machine):
#      kind-offline/node:$K8S_VERSION, built by its build-node-image.sh when missing (after the
#      Kubernetes build `make test` did for kube-api-test: ~6 min; without it ~19 min; seconds warm);
#   3. else nothing: kind's own default (kindest/node, pulled from Docker Hub).
# cluster-up.sh uses it; .ci/run builds it beside make test, so make e2e finds the image built.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
image=${KIND_NODE_IMAGE:-}
if [ -z "$image" ] && offline_kit; then
  image=kind-offline/node:$K8S_VERSION
  if ! docker image inspect "$image" >/dev/null 2>&1; then
    offline_lock "the node image"
    if ! docker image inspect "$image" >/dev/null 2>&1; then
      mkdir -p "$(dirname "$KIND_BINARIES_LOCK")"
      exec 8>>"$KIND_BINARIES_LOCK"
      flock -n 8 || { log "waiting for the node image's Go builds .ci/run started beside the tests"; flock 8; }
      log "building $image with $KIND_OFFLINE_DIR/build-node-image.sh (cold: ~6-19 min)"
      t0=$SECONDS
      # One more try on failure: the kit's version checks pipe into `grep -q` under pipefail and can
      # fail by chance (SIGPIPE; seen once on this machine, "built coredns does not report v1.12.1");
      # the kit keeps what it built, so a retry redoes only the failed step.
      KO_K8S_VERSION=$K8S_VERSION "$KIND_OFFLINE_DIR/build-node-image.sh" >&2 \
        || { log "build-node-image.sh failed; trying once more"; KO_K8S_VERSION=$K8S_VERSION "$KIND_OFFLINE_DIR/build-node-image.sh" >&2; } \
        || die "build-node-image.sh failed twice"
      log "node image built in $((SECONDS - t0))s"
      exec 8>&-
    fi
    offline_unlock
  fi
fi
echo "$image"

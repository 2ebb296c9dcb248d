#!/usr/bin/env bash
# Load locally built images into the kind cluster $KIND_CLUSTER: load-images.sh IMAGE...
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ $# -gt 0 ] || die "usage: load-images.sh IMAGE..."
for img in "$@"; do
  t0=$SECONDS
  kind load docker-image --name "$KIND_CLUSTER" "$img" >&2 || die "kind load docker-image $img failed"
  log "loaded $img into $KIND_CLUSTER in $((SECONDS - t0))s"
done

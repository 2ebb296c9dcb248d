#!/usr/bin/env bash
# Delete the kind cluster $KIND_CLUSTER (default in lib.sh); nothing to do when it does not exist.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
have kind || "$E2E_KIND_DIR/tools.sh" kind >/dev/null
if kind get clusters 2>/dev/null | grep -qx "$KIND_CLUSTER"; then
  kind delete cluster --name "$KIND_CLUSTER" >&2
else
  log "no kind cluster named $KIND_CLUSTER"
fi

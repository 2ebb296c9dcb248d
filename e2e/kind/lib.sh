# shellcheck shell=bash
# Shared settings for the e2e/kind scripts. Source it; do not run it.
# Everything is overridable from the environment.
set -euo pipefail

E2E_KIND_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$E2E_KIND_DIR/../.." && pwd)
BIN_DIR=${BIN_DIR:-$REPO_ROOT/bin}

KIND_VERSION=${KIND_VERSION:-v0.30.0}
HELM_VERSION=${HELM_VERSION:-v3.19.0}
K8S_VERSION=${K8S_VERSION:-v1.34.4}
KIND_CLUSTER=${KIND_CLUSTER:-hbase-cache}
# The offline tooling of this workplace, when it sits next to the repo (../shared/kind-offline).
KIND_OFFLINE_DIR=${KIND_OFFLINE_DIR:-$(cd "$REPO_ROOT/.." && pwd)/shared/kind-offline}

export PATH="$BIN_DIR:$PATH:/usr/local/go/bin"

log() { printf '[e2e/kind %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { printf '[e2e/kind] ERROR: %s\n' "$*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }
offline_kit() { [ -d "$KIND_OFFLINE_DIR" ] && [ -x "$KIND_OFFLINE_DIR/build-node-image.sh" ]; }

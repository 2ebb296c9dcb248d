# shellcheck shell=bash
# Shared settings for the e2e/kind scripts, e2e/demo.sh, e2e/e2e.sh and the e2e suite (which reads
# them through `bash -c '. e2e/kind/lib.sh; ...'`). Source it; do not run it.
# The one place for names and defaults: every one is overridable from the environment (the Makefile
# passes through only what the user set, e.g. `make demo HBASE_IMAGE=...`).
set -euo pipefail

E2E_KIND_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$E2E_KIND_DIR/../.." && pwd)
BIN_DIR=${BIN_DIR:-$REPO_ROOT/bin}

# tools and the node image
KIND_VERSION=${KIND_VERSION:-v0.30.0}
HELM_VERSION=${HELM_VERSION:-v3.19.0}
K8S_VERSION=${K8S_VERSION:-v1.34.4}
REGISTRY_VERSION=${REGISTRY_VERSION:-v3.1.2}
PROMETHEUS_OPERATOR_VERSION=${PROMETHEUS_OPERATOR_VERSION:-v0.78.2}
# the cluster: `make demo`/`make kind-*` use hbase-cache; e2e/e2e.sh sets E2E_SUITE=1 before sourcing
# this file and gets its own (it deletes it at the end), so the suite never touches the demo's
if [ "${E2E_SUITE:-0}" = 1 ]; then KIND_CLUSTER=${KIND_CLUSTER:-hbase-cache-e2e}; fi
KIND_CLUSTER=${KIND_CLUSTER:-hbase-cache}
KUBE_CONTEXT=kind-$KIND_CLUSTER
# images (built locally, loaded with `kind load docker-image`)
HBASE_IMAGE=${HBASE_IMAGE:-hbase-cache/hbase:2.6.4}
# the operator: by default under the name the chart installs by default (its values.yaml
# image.repository, Chart.yaml appVersion), the name a release publishes it under; built by Jib as a
# release builds it (operator-image.sh) and loaded into kind, never pulled
OPERATOR_CHART_DIR=$REPO_ROOT/charts/hbase-cache-operator
OPERATOR_IMAGE=${OPERATOR_IMAGE:-$(sed -n 's/^  repository: *//p' "$OPERATOR_CHART_DIR/values.yaml" | head -1):$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$OPERATOR_CHART_DIR/Chart.yaml")}
# the JRE base of the HBase and KDC Dockerfiles and of the operator image (Jib) (base-image.sh): JRE_IMAGE when set, else the offline kit's, else
# the public one
JRE_IMAGE=${JRE_IMAGE:-}
JRE_IMAGE_OFFLINE=${KO_IMAGE_JRE:-kind-offline/jre:17}
JRE_IMAGE_PUBLIC=eclipse-temurin:17-jre
# releases and namespaces (one operator release name for make demo, make kind-operator and make e2e)
HBASE_NAMESPACE=${HBASE_NAMESPACE:-hbase}
HBASE_RELEASE=${HBASE_RELEASE:-hbase}
OPERATOR_NAMESPACE=${OPERATOR_NAMESPACE:-hbase-cache-system}
OPERATOR_RELEASE=${OPERATOR_RELEASE:-hbase-cache-operator}
export KIND_CLUSTER HBASE_IMAGE OPERATOR_IMAGE HBASE_NAMESPACE HBASE_RELEASE OPERATOR_NAMESPACE OPERATOR_RELEASE
# Kerberos (make e2e-secured: kdc-up.sh): the demo KDC's image, namespace and realm
KDC_IMAGE=${KDC_IMAGE:-hbase-cache/kdc:1}
KDC_NAMESPACE=${KDC_NAMESPACE:-hbase-kdc}
KERBEROS_REALM=${KERBEROS_REALM:-EXAMPLE.COM}
export KDC_IMAGE KDC_NAMESPACE KERBEROS_REALM

# The offline tooling of this workplace, when it sits next to the repo (../shared/kind-offline).
KIND_OFFLINE_DIR=${KIND_OFFLINE_DIR:-$(cd "$REPO_ROOT/.." && pwd)/shared/kind-offline}

export PATH="$BIN_DIR:$PATH:/usr/local/go/bin"

log() { printf '[e2e/kind %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { printf '[e2e/kind] ERROR: %s\n' "$*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }
offline_kit() { [ -d "$KIND_OFFLINE_DIR" ] && [ -x "$KIND_OFFLINE_DIR/build-node-image.sh" ]; }
# The kind-offline builds share output directories (its Kubernetes build serves the node image and
# kube-api-test alike), and .ci/run runs make e2e beside make test: one build at a time, across
# processes. .ci/kube-api-test-binaries.sh takes the same lock.
KIND_OFFLINE_LOCK=${KIND_OFFLINE_LOCK:-${XDG_CACHE_HOME:-$HOME/.cache}/hbase-cache-operator.kind-offline.lock}
offline_lock() { # offline_lock WHAT: holds the lock on fd 9 until offline_unlock
  mkdir -p "$(dirname "$KIND_OFFLINE_LOCK")"
  exec 9>>"$KIND_OFFLINE_LOCK"
  flock -n 9 || { log "waiting for another kind-offline build to finish before $1"; flock 9; }
}
offline_unlock() { exec 9>&-; }
# Held by .ci/run's kind_binaries while it builds the node image's Go parts that need neither
# Docker nor the Kubernetes build (beside that build, from the start of the run): node-image.sh
# waits for it before kind-offline's build-node-image.sh, which would otherwise build them again
# into the same directories
KIND_BINARIES_LOCK=${KIND_BINARIES_LOCK:-${XDG_CACHE_HOME:-$HOME/.cache}/hbase-cache-operator.kind-binaries.lock}

#!/usr/bin/env bash
# Install kind and helm into ./bin of the repo with `go install` when missing (or of another
# version), and helm-unittest when asked. Needs only Go and the Go module proxy. prometheus (with
# promtool) comes from Debian's package instead (apt-get download; building it from Go modules
# takes many minutes).
# registry is the CNCF distribution registry (`go install`), for the publish check (publish-check.sh).
# monitoring-crds are the Prometheus Operator's ServiceMonitor, PodMonitor and PrometheusRule CRDs,
# taken from its Go module (the module zip holds the repository's example/ directory), for
# operator-up.sh with OPERATOR_MONITORING=1.
# checkov is checkov from PyPI in a venv ($BIN_DIR/checkov-venv), for chart-scan.sh (make lint).
# Usage: e2e/kind/tools.sh [kind|helm|helm-unittest|prometheus|registry|monitoring-crds|checkov ...]   (default: kind helm)
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
have go || die "go not found (install Go >= 1.24, e.g. apt-get install golang-go or from go.dev)"
mkdir -p "$BIN_DIR"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} CGO_ENABLED=${CGO_ENABLED:-0}
export GOFLAGS="${GOFLAGS:-} -trimpath -buildvcs=false"

install_kind() {
  if [ -x "$BIN_DIR/kind" ] && "$BIN_DIR/kind" version 2>/dev/null | grep -q "kind $KIND_VERSION "; then
    return 0
  fi
  log "go install sigs.k8s.io/kind@$KIND_VERSION -> $BIN_DIR"
  local t0=$SECONDS
  (cd /tmp && GOBIN="$BIN_DIR" go install "sigs.k8s.io/kind@$KIND_VERSION") || die "go install kind failed"
  log "kind installed in $((SECONDS - t0))s"
}
# The Kubernetes version helm assumes without a cluster (helm template, helm lint): helm's Makefile
# sets it from its client-go module (v0.34 for helm v3.19: 1.34); a plain `go install` leaves helm's
# fallback, 1.20, and `helm template` then refuses a chart whose kubeVersion asks for more (ours:
# >=1.29). The stamp names the build, so a helm built without these flags is rebuilt.
HELM_K8S_MAJOR=${HELM_K8S_MAJOR:-1}
HELM_K8S_MINOR=${HELM_K8S_MINOR:-34}
install_helm() {
  local stamp=$BIN_DIR/.helm.stamp want="$HELM_VERSION k8s $HELM_K8S_MAJOR.$HELM_K8S_MINOR"
  if [ -x "$BIN_DIR/helm" ] && [ "$("$BIN_DIR/helm" version --template '{{.Version}}' 2>/dev/null)" = "$HELM_VERSION" ] \
    && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  log "go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION -> $BIN_DIR (a few minutes on a cold Go cache)"
  local t0=$SECONDS
  # helm's Makefile normally injects the version and the Kubernetes version; do the same so that
  # `helm version` is right and `helm template` assumes the Kubernetes an official helm does
  local k8s="-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=$HELM_K8S_MAJOR -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$HELM_K8S_MINOR"
  k8s="$k8s -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=$HELM_K8S_MAJOR -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$HELM_K8S_MINOR"
  (cd /tmp && GOBIN="$BIN_DIR" go install \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean $k8s" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION") || die "go install helm failed"
  echo "$want" >"$stamp"
  log "helm installed in $((SECONDS - t0))s"
}

# helm-unittest: `go install ...@version` refuses it (its go.mod has a replace directive), so it is
# built from the wrapper module in tools/helm-unittest, which repeats that replace.
HELM_UNITTEST_DIR=$E2E_KIND_DIR/tools/helm-unittest
install_helm_unittest() {
  local stamp=$BIN_DIR/.helm-unittest.stamp want
  want=$(cat "$HELM_UNITTEST_DIR/go.mod" "$HELM_UNITTEST_DIR/go.sum" | sha256sum | cut -c1-16)
  if [ -x "$BIN_DIR/helm-unittest" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  log "go build helm-unittest ($(grep -oE 'helm-unittest/helm-unittest v[0-9.]+' "$HELM_UNITTEST_DIR/go.mod" | head -1 | cut -d' ' -f2)) -> $BIN_DIR (about 2-3 min on a cold Go cache)"
  local t0=$SECONDS
  go build -C "$HELM_UNITTEST_DIR" -ldflags "-s -w" -o "$BIN_DIR/helm-unittest" \
    github.com/helm-unittest/helm-unittest/cmd/helm-unittest || die "building helm-unittest failed"
  echo "$want" >"$stamp"
  log "helm-unittest built in $((SECONDS - t0))s"
}

# Prometheus and promtool from Debian's package, unpacked (not installed: no service, no user).
install_prometheus() {
  if [ -x "$BIN_DIR/promtool" ] && [ -x "$BIN_DIR/prometheus" ]; then
    return 0
  fi
  have apt-get || die "apt-get not found: put prometheus and promtool (2.x) into $BIN_DIR"
  local d; d=$(mktemp -d)
  log "apt-get download prometheus -> $BIN_DIR/{prometheus,promtool}"
  if ! (cd "$d" && apt-get download prometheus >/dev/null 2>&1); then
    [ "$(id -u)" = 0 ] || die "apt-get download prometheus failed (run apt-get update as root?)"
    apt-get update -qq >/dev/null && (cd "$d" && apt-get download prometheus >/dev/null) \
      || die "apt-get download prometheus failed"
  fi
  dpkg-deb -x "$d"/prometheus_*.deb "$d/x" || die "dpkg-deb -x failed"
  install -m 0755 "$d/x/usr/bin/prometheus" "$d/x/usr/bin/promtool" "$BIN_DIR/"
  rm -rf "$d"
}

# The CNCF distribution registry, a static binary (CGO off), run in a FROM-scratch image by
# registry.sh: a real OCI registry on this machine, which has no access to any public one.
install_registry() {
  if [ -x "$BIN_DIR/registry" ] && "$BIN_DIR/registry" --version 2>/dev/null | grep -q " $REGISTRY_VERSION"; then
    return 0
  fi
  log "go install github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION -> $BIN_DIR (a few minutes on a cold Go cache)"
  local t0=$SECONDS
  (cd /tmp && GOBIN="$BIN_DIR" go install \
    -ldflags "-s -w -X github.com/distribution/distribution/v3/version.version=$REGISTRY_VERSION" \
    "github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION") || die "go install registry failed"
  log "registry installed in $((SECONDS - t0))s"
}

# checkov (PyPI) in a venv of its own, for the manifest scan of the charts (chart-scan.sh, make lint)
CHECKOV_VERSION=${CHECKOV_VERSION:-3.3.30}
CHECKOV_VENV=$BIN_DIR/checkov-venv
install_checkov() {
  if [ -x "$CHECKOV_VENV/bin/checkov" ] && [ "$("$CHECKOV_VENV/bin/checkov" --version 2>/dev/null)" = "$CHECKOV_VERSION" ]; then
    return 0
  fi
  log "pip install checkov==$CHECKOV_VERSION into $CHECKOV_VENV (a few minutes the first time)"
  local t0=$SECONDS
  python3 -m venv "$CHECKOV_VENV" || die "python3 -m venv $CHECKOV_VENV failed (python3-venv installed?)"
  "$CHECKOV_VENV/bin/pip" install -q --disable-pip-version-check "checkov==$CHECKOV_VERSION" >&2 || die "pip install checkov failed"
  log "checkov installed in $((SECONDS - t0))s"
}

MONITORING_CRDS_DIR=$BIN_DIR/monitoring-crds-$PROMETHEUS_OPERATOR_VERSION
install_monitoring_crds() {
  [ -s "$MONITORING_CRDS_DIR/monitoring.coreos.com_prometheusrules.yaml" ] && return 0
  log "go mod download github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION -> $MONITORING_CRDS_DIR"
  local dir
  dir=$(cd /tmp && go mod download -json \
    "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -d "$dir/example/prometheus-operator-crd" ] || die "no example/prometheus-operator-crd in the module ($dir)"
  mkdir -p "$MONITORING_CRDS_DIR"
  for k in servicemonitors podmonitors prometheusrules; do
    install -m 0644 "$dir/example/prometheus-operator-crd/monitoring.coreos.com_$k.yaml" "$MONITORING_CRDS_DIR/"
  done
}

want=${*:-kind helm}
# one installer at a time per tool in ./bin (.ci/run's jobs install into the same one): a lock per
# tool, not one for the whole list, so that a job asking for kind does not wait while another builds
# helm-unittest (on a new machine that wait was minutes of the kind images' critical path)
for t in $want; do
  exec 8>>"$BIN_DIR/.tools.$t.lock"
  flock -n 8 || { log "waiting for another tools.sh installing $t into $BIN_DIR"; flock 8; }
  case $t in
    kind) install_kind ;;
    helm) install_helm ;;
    helm-unittest) install_helm_unittest ;;
    prometheus) install_prometheus ;;
    registry) install_registry ;;
    monitoring-crds) install_monitoring_crds ;;
    checkov) install_checkov ;;
    *) die "unknown tool $t (kind|helm|helm-unittest|prometheus|registry|monitoring-crds|checkov)" ;;
  esac
  exec 8>&-
done
for t in $want; do
  case $t in
    kind) "$BIN_DIR/kind" version ;;
    helm) "$BIN_DIR/helm" version --short ;;
    helm-unittest) echo "helm-unittest: $BIN_DIR/helm-unittest" ;;
    prometheus) "$BIN_DIR/promtool" --version | head -1 ;;
    registry) "$BIN_DIR/registry" --version ;;
    monitoring-crds) echo "monitoring-crds: $MONITORING_CRDS_DIR" ;;
    checkov) echo "checkov $("$CHECKOV_VENV/bin/checkov" --version): $CHECKOV_VENV/bin/checkov" ;;
  esac
done

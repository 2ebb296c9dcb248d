#!/usr/bin/env bash
# Install kind and helm into ./bin of the repo with `go install` when missing (or of another
# version). Needs only Go and the Go module proxy. Usage: e2e/kind/tools.sh [kind|helm ...]
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
install_helm() {
  if [ -x "$BIN_DIR/helm" ] && [ "$("$BIN_DIR/helm" version --template '{{.Version}}' 2>/dev/null)" = "$HELM_VERSION" ]; then
    return 0
  fi
  log "go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION -> $BIN_DIR (a few minutes on a cold Go cache)"
  local t0=$SECONDS
  # helm's Makefile normally injects the version; do the same so `helm version` is right
  (cd /tmp && GOBIN="$BIN_DIR" go install \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION") || die "go install helm failed"
  log "helm installed in $((SECONDS - t0))s"
}

want=${*:-kind helm}
for t in $want; do
  case $t in
    kind) install_kind ;;
    helm) install_helm ;;
    *) die "unknown tool $t (kind|helm)" ;;
  esac
done
for t in $want; do
  case $t in
    kind) "$BIN_DIR/kind" version ;;
    helm) "$BIN_DIR/helm" version --short ;;
  esac
done

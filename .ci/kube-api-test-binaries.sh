#!/usr/bin/env bash
# kube-api-test needs kube-apiserver, etcd and kubectl under ${KUBE_API_TEST_DIR:-~/.kubeapitest}/k8s/<ver>-<os>-<arch>/;
# RollIT's StatefulSet-controller test also runs kube-controller-manager from there.
# - already there: nothing to do;
# - ../shared/kind-offline present (this project's offline machines): build them from Go modules
#   (its Kubernetes build makes kube-controller-manager too; it is copied next to the others);
# - otherwise: kube-api-test downloads its three on the first test run (normal online path) and
#   kube-controller-manager is fetched from dl.k8s.io in the same version.
#
# KUBE_API_TEST_K8S_VERSION=1.30.14 (an older Kubernetes than kind-offline's own, for the API-server
# tests on the oldest version the README claims; `make test-api-oldest`): only that version's
# kube-apiserver, etcd and kubectl, built with kind-offline in a cache of its own
# (~/.cache/kind-offline-k8s-<version>), so that kind-offline's own outputs (the node image's
# Kubernetes) are never replaced by it; no kube-controller-manager (the API-server tests need none).
set -euo pipefail
dir=${KUBE_API_TEST_DIR:-$HOME/.kubeapitest}/k8s
shared=${KIND_OFFLINE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/shared/kind-offline}
lock=${KIND_OFFLINE_LOCK:-${XDG_CACHE_HOME:-$HOME/.cache}/hbase-cache-operator.kind-offline.lock}
if [ -n "${KUBE_API_TEST_K8S_VERSION:-}" ]; then
  v=${KUBE_API_TEST_K8S_VERSION#v}
  d="$dir/$v-linux-amd64"
  if [ -x "$d/kube-apiserver" ] && [ -x "$d/etcd" ] && [ -x "$d/kubectl" ]; then
    echo "kube-api-test binaries: $d"; exit 0
  fi
  [ -x "$shared/kube-api-test-binaries.sh" ] \
    || { echo "kube-api-test binaries: no $shared to build Kubernetes $v with" >&2; exit 1; }
  mkdir -p "$(dirname "$lock")"
  exec 9>>"$lock"
  flock -n 9 || { echo "kube-api-test binaries: waiting for another build to finish"; flock 9; }
  echo "kube-api-test binaries: building Kubernetes $v from Go modules with $shared"
  KO_K8S_VERSION=v$v KO_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/kind-offline-k8s-$v \
    "$shared/kube-api-test-binaries.sh" | tail -1
  exit 0
fi
for d in "$dir"/*/; do
  if [ -x "$d/kube-apiserver" ] && [ -x "$d/etcd" ] && [ -x "$d/kubectl" ] && [ -x "$d/kube-controller-manager" ]; then
    echo "kube-api-test binaries: $d"; exit 0
  fi
done
# one maker at a time across processes (make test starts this beside Maven, whose own step runs it
# again; e2e/kind/lib.sh offline_lock takes the same lock for the kind-offline builds)
mkdir -p "$(dirname "$lock")"
exec 9>>"$lock"
flock -n 9 || { echo "kube-api-test binaries: waiting for another build to finish"; flock 9; }
if [ -x "$shared/kube-api-test-binaries.sh" ]; then
  echo "kube-api-test binaries: building from Go modules with $shared (8-11 min cold)"
  out=$("$shared/kube-api-test-binaries.sh" | tail -1)
  kcm=${KO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kind-offline}/out/k8s/kube-controller-manager
  [ -x "$kcm" ] || { echo "kube-api-test binaries: no $kcm after the Kubernetes build" >&2; exit 1; }
  install -m 0755 "$kcm" "$out/kube-controller-manager"
  echo "kube-api-test binaries: $out (with kube-controller-manager)"
else
  version=1.34.4
  d="$dir/$version-linux-amd64"
  if [ -x "$d/kube-controller-manager" ]; then
    echo "kube-api-test binaries: kube-api-test downloads its own on first use; kube-controller-manager already in $d"
    exit 0
  fi
  echo "kube-api-test binaries: kube-api-test downloads its own on first use; kube-controller-manager v$version from dl.k8s.io"
  mkdir -p "$d"
  curl -fsSL --retry 3 --max-time 600 -o "$d/.kube-controller-manager.part" \
    "https://dl.k8s.io/release/v$version/bin/linux/amd64/kube-controller-manager"
  chmod 0755 "$d/.kube-controller-manager.part"
  mv -f "$d/.kube-controller-manager.part" "$d/kube-controller-manager"
fi

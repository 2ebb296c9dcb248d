#!/usr/bin/env bash
# kube-api-test needs kube-apiserver, etcd and kubectl under ${KUBE_API_TEST_DIR:-~/.kubeapitest}/k8s/<ver>-<os>-<arch>/.
# - already there: nothing to do;
# - ../shared/kind-offline present (this project's offline machines): build them from Go modules;
# - otherwise: kube-api-test downloads them itself on the first test run (normal online path).
set -euo pipefail
dir=${KUBE_API_TEST_DIR:-$HOME/.kubeapitest}/k8s
for d in "$dir"/*/; do
  if [ -x "$d/kube-apiserver" ] && [ -x "$d/etcd" ] && [ -x "$d/kubectl" ]; then
    echo "kube-api-test binaries: $d"; exit 0
  fi
done
shared=$(cd "$(dirname "$0")/../.." && pwd)/shared/kind-offline
if [ -x "$shared/kube-api-test-binaries.sh" ]; then
  echo "kube-api-test binaries: building from Go modules with $shared (8-11 min cold)"
  "$shared/kube-api-test-binaries.sh"
else
  echo "kube-api-test binaries: none found; kube-api-test will download them on first use"
fi

#!/usr/bin/env bash
# What `make test` needs besides Maven, made beside it (the Makefile starts this in the background
# and waits for it after Maven): on a new machine a Kubernetes build for kube-api-test (~9 min) and
# the Go builds of helm and helm-unittest plus promtool for the chart checks (~5 min), which would
# otherwise run before and after Maven. Seconds where they are already there.
#   1. kube-api-test's binaries: the tests on a real API server wait for them after the compile
#      (operator/core/pom.xml, profile kube-api-test-binaries, runs .ci/kube-api-test-binaries.sh
#      again: it waits on the same lock);
#   2. the chart checks' tools into ./bin (e2e/kind/tools.sh; chart-test.sh asks for them again
#      and finds them), niced: Maven's compile and the ITs come first.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
.ci/kube-api-test-binaries.sh
echo "kube-api-test binaries ready after $((SECONDS - t0)) s"
nice -n 10 e2e/kind/tools.sh helm helm-unittest prometheus
echo "chart-test tools ready after $((SECONDS - t0)) s"

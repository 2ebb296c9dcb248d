#!/usr/bin/env bash
# What `make test` needs besides Maven, made beside it (the Makefile starts this in the background):
# on a new machine a Kubernetes build for kube-api-test (~9 min) and the Go builds of helm and
# helm-unittest plus promtool for the chart checks (~5 min), which would otherwise run before and
# after Maven. Seconds where they are already there. A head start only: what fails here is tried
# again, with its own error, by the step that needs it:
#   1. kube-api-test's binaries: the tests on a real API server wait for them after the compile
#      (operator/core/pom.xml, execution kube-api-test-binaries, runs .ci/kube-api-test-binaries.sh
#      again: it waits on the same lock);
#   2. the chart checks' tools into ./bin (e2e/kind/tools.sh, niced: Maven comes first), only those
#      chart-test.sh will ask for (no helm when one is on PATH, none that CHART_UNITTEST=0 or
#      PROMTOOL=0 skip); chart-test.sh asks for them again and finds them.
set -uo pipefail
cd "$(dirname "$0")/.."
. e2e/kind/lib.sh
t0=$SECONDS
if .ci/kube-api-test-binaries.sh; then
  echo "kube-api-test binaries ready after $((SECONDS - t0)) s"
else
  echo "kube-api-test binaries: not made here (Maven's step tries again)"
fi
tools=()
have helm || tools+=(helm)
[ "${CHART_UNITTEST:-1}" = 0 ] || tools+=(helm-unittest)
[ "${PROMTOOL:-1}" = 0 ] || tools+=(prometheus)
if [ ${#tools[@]} = 0 ] || nice -n 10 e2e/kind/tools.sh "${tools[@]}"; then
  echo "chart-test tools ready after $((SECONDS - t0)) s"
else
  echo "chart-test tools: not all made here (chart-test.sh tries again)"
fi

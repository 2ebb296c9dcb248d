#!/usr/bin/env bash
# Chart checks without a cluster: `helm lint` of both charts (several value sets, the values
# schemas), the operator chart's files/crds/ identical to the generated crds/, then the helm-unittest
# suites in charts/*/tests: every assertion on rendered templates lives there (helm-unittest is built
# into ./bin on first use; CHART_UNITTEST=0 skips them), and promtool's checks and unit tests of the
# operator chart's alerts (promtool from Debian's prometheus package into ./bin; PROMTOOL=0 skips
# them). Prints "N passed, M failed"; exits non-zero on any failure.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
have helm || "$E2E_KIND_DIR/tools.sh" helm >/dev/null
HB=$REPO_ROOT/charts/hbase
OP=$REPO_ROOT/charts/hbase-cache-operator
pass=0 fail=0
ok()  { pass=$((pass + 1)); printf '  ok   %s\n' "$1"; }
bad() { fail=$((fail + 1)); printf '  FAIL %s\n' "$1"; }
check() { local name=$1; shift; if "$@" >/dev/null 2>&1; then ok "$name"; else bad "$name"; fi; }

echo "helm lint"
check "lint charts/hbase" helm lint --strict "$HB"
check "lint charts/hbase (1 RegionServer, extra site properties)" helm lint --strict "$HB" --set regionserver.replicas=1 --set siteProperties.hbase\\.regionserver\\.handler\\.count=8
check "lint charts/hbase-cache-operator" helm lint --strict "$OP"
check "lint charts/hbase-cache-operator (namespaced)" helm lint --strict "$OP" --set 'watchNamespaces={hbase,other}'
check "lint charts/hbase-cache-operator (scope Namespace, NetworkPolicy)" helm lint --strict "$OP" --set scope=Namespace --set metrics.networkPolicy.enabled=true
check "lint charts/hbase-cache-operator (scope Prerequisites)" helm lint --strict "$OP" --set scope=Prerequisites
check "lint charts/hbase-cache-operator (monitoring objects on)" helm lint --strict "$OP" --set monitoring.serviceMonitor.enabled=true --set monitoring.podMonitor.enabled=true --set monitoring.prometheusRule.enabled=true --set monitoring.grafanaDashboard.enabled=true
check "schema rejects a bad heap size" bash -c "! helm lint '$HB' --set regionserver.heapSize=lots"
check "schema rejects unknown operator values" bash -c "! helm lint '$OP' --set nosuch=1"

echo "the operator image's user"
# the uid Jib sets (operator/core/pom.xml), the one its /etc/passwd names and the chart's runAsUser
# must agree: Hadoop's login in the HBase client fails for a uid without a name
uid_jib=$(sed -n 's#^ *<user>\([0-9]*\)</user>.*#\1#p' "$REPO_ROOT/operator/core/pom.xml")
uid_chart=$(sed -n 's/^  runAsUser: *//p' "$OP/values.yaml")
check "Jib's user ($uid_jib) = the chart's runAsUser ($uid_chart), named in the image's /etc/passwd" \
  bash -c "[ -n '$uid_jib' ] && [ '$uid_jib' = '$uid_chart' ] && grep -q '^[a-z][-a-z0-9]*:x:$uid_jib:' '$REPO_ROOT/operator/core/src/main/jib/etc/passwd'"

echo "CRDs"
crd=blockcachepolicies.cache.hbase.dev-v1.yml
check "charts/hbase-cache-operator/files/crds/$crd == crds/$crd (make crds copies it)" cmp "$REPO_ROOT/crds/$crd" "$OP/files/crds/$crd"
check "the chart renders the CRD with helm.sh/resource-policy: keep" bash -c "helm template x '$OP' --show-only templates/crds.yaml | grep -q 'helm.sh/resource-policy: keep'"

if [ "${CHART_UNITTEST:-1}" != 0 ]; then
  echo "helm-unittest suites (charts/*/tests/*_test.yaml)"
  "$E2E_KIND_DIR/tools.sh" helm-unittest >/dev/null || die "could not build helm-unittest (CHART_UNITTEST=0 skips it)"
  if out=$(helm-unittest --color=false "$HB" "$OP" 2>&1); then
    ok "helm-unittest: $(grep -E '^Tests:' <<<"$out" | sed 's/  */ /g')"
  else
    echo "$out" | grep -vE '^\s*$' | tail -40
    bad "helm-unittest: $(grep -E '^Tests:' <<<"$out" | sed 's/  */ /g')"
  fi
fi

if [ "${PROMTOOL:-1}" != 0 ]; then
  echo "alerts (promtool on the PrometheusRule's spec, charts/hbase-cache-operator/tests/alerts)"
  "$E2E_KIND_DIR/tools.sh" prometheus >/dev/null || die "could not install promtool (PROMTOOL=0 skips it)"
  rules=$(mktemp -d)
  helm template hco "$OP" --set monitoring.prometheusRule.enabled=true --set monitoring.serviceMonitor.enabled=true \
    --show-only templates/prometheusrule.yaml | awk '/^spec:/{f=1;next} f{sub(/^  /,""); print}' >"$rules/rules.yaml"
  cp "$OP/tests/alerts/alerts_test.yaml" "$rules/"
  check "promtool check rules: the PrometheusRule's rules parse" "$BIN_DIR/promtool" check rules "$rules/rules.yaml"
  if out=$("$BIN_DIR/promtool" test rules "$rules/alerts_test.yaml" 2>&1); then
    ok "promtool test rules: each alert fires when meant to, and only then"
  else
    echo "$out" | tail -30
    bad "promtool test rules"
  fi
  rm -rf "$rules"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

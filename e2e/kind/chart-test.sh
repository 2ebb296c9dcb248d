#!/usr/bin/env bash
# Chart checks without a cluster: `helm lint` of both charts (several value sets), the operator
# chart's crds/ identical to the generated crds/, and `helm template` assertions on what the
# operator and users rely on, then the helm-unittest suites in charts/*/tests (helm-unittest is built
# into ./bin on first use; CHART_UNITTEST=0 skips them). Prints "N passed, M failed"; exits non-zero
# on any failure.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
have helm || "$E2E_KIND_DIR/tools.sh" helm >/dev/null
HB=$REPO_ROOT/charts/hbase
OP=$REPO_ROOT/charts/hbase-cache-operator
pass=0 fail=0
ok()  { pass=$((pass + 1)); printf '  ok   %s\n' "$1"; }
bad() { fail=$((fail + 1)); printf '  FAIL %s\n' "$1"; }
check() { local name=$1; shift; if "$@" >/dev/null 2>&1; then ok "$name"; else bad "$name"; fi; }
# doc KIND NAME < rendered: print that one document of a multi-document YAML stream
doc() { awk -v k="kind: $1" -v n="  name: $2" '
  /^---/ { if (hit) print buf; buf=""; hk=0; hn=0; hit=0; next }
  { buf = buf $0 "\n"; if ($0 == k) hk=1; if ($0 == n && !seen_meta) hn=1; if (hk && hn) hit=1 }
  END { if (hit) print buf }'; }
count() { grep -c -- "$1" || true; }
nogrep() { ! grep -qE -- "$1"; }
# containers KIND NAME: number of containers in a pod template
containers() { awk '/^      containers:/{c=1; next} /^      [a-zA-Z]/{c=0} c && /^      - name: /{n++} END{print n+0}'; }

echo "helm lint"
check "lint charts/hbase" helm lint --strict "$HB"
check "lint charts/hbase (1 RegionServer, extra site properties)" helm lint --strict "$HB" --set regionserver.replicas=1 --set siteProperties.hbase\\.regionserver\\.handler\\.count=8
check "lint charts/hbase-cache-operator" helm lint --strict "$OP"
check "lint charts/hbase-cache-operator (namespaced)" helm lint --strict "$OP" --set 'watchNamespaces={hbase,other}'
check "schema rejects a bad heap size" bash -c "! helm lint '$HB' --set regionserver.heapSize=lots"
check "schema rejects unknown operator values" bash -c "! helm lint '$OP' --set nosuch=1"

echo "CRDs"
crd=blockcachepolicies.cache.hbase.dev-v1.yml
check "charts/hbase-cache-operator/crds/$crd == crds/$crd (make crds copies it)" cmp "$REPO_ROOT/crds/$crd" "$OP/crds/$crd"

echo "charts/hbase templates"
r=$(helm template hbase "$HB" -n hbase)
rs=$(doc StatefulSet hbase-regionserver <<<"$r")
check "RegionServer StatefulSet: 3 replicas by default" grep -q '^  replicas: 3$' <<<"$rs"
check "RegionServer StatefulSet: exactly one container" test "$(containers <<<"$rs")" = 1
check "RegionServer container has a memory limit" grep -A2 '^          limits:' <<<"$rs"
check "RegionServer hbase-site.xml from the ConfigMap volume 'hbase-site'" grep -q 'name: hbase-site$' <<<"$(grep -A1 -- '- name: hbase-site' <<<"$rs")"
check "RegionServer mounts hbase-site at /etc/hbase" grep -q '{name: hbase-site, mountPath: /etc/hbase}' <<<"$rs"
check "RegionServer env HBASE_HEAPSIZE" grep -q 'name: HBASE_HEAPSIZE' <<<"$rs"
check "RegionServer POD_FQDN from the downward API" grep -q 'value: "$(POD_NAME).hbase-regionserver.$(POD_NAMESPACE).svc.cluster.local"' <<<"$rs"
check "RegionServer readiness = registered (rs-status not initializing)" grep -q 'RegionServer is initializing' <<<"$rs"
check "replicas value honoured" grep -q '^  replicas: 1$' <<<"$(helm template hbase "$HB" --set regionserver.replicas=1 | doc StatefulSet hbase-regionserver)"
site=$(doc ConfigMap hbase-site <<<"$r")
check "hbase-site: regionserver hostname = \${env.POD_FQDN:-}" grep -q '<name>hbase.unsafe.regionserver.hostname</name><value>${env.POD_FQDN:-}</value>' <<<"$site"
check "hbase-site: master hostname = \${env.POD_FQDN:-}" grep -q '<name>hbase.master.hostname</name><value>${env.POD_FQDN:-}</value>' <<<"$site"
check "hbase-site: quorum is the ZooKeeper pod's FQDN" grep -q 'hbase-zookeeper-0.hbase-zookeeper.hbase.svc.cluster.local' <<<"$site"
check "siteProperties override the chart's" grep -q '<name>hbase.regionserver.handler.count</name><value>8</value>' \
  <<<"$(helm template hbase "$HB" --set siteProperties.hbase\\.regionserver\\.handler\\.count=8 | doc ConfigMap hbase-site)"
check "three headless Services, all publishNotReadyAddresses" test "$(count 'publishNotReadyAddresses: true' <<<"$r")" = 3
check "all HBase pods run as non-root" test "$(count 'runAsNonRoot: true' <<<"$r")" -ge 4

echo "charts/hbase-cache-operator templates"
o=$(helm template hco "$OP" -n hbase-cache-system)
dep=$(doc Deployment hco-hbase-cache-operator <<<"$o")
check "Deployment: read-only root filesystem" grep -q 'readOnlyRootFilesystem: true' <<<"$dep"
check "Deployment: runAsNonRoot" grep -q 'runAsNonRoot: true' <<<"$dep"
check "Deployment: liveness /healthz" grep -q 'path: /healthz' <<<"$dep"
check "Deployment: readiness /readyz" grep -q 'path: /readyz' <<<"$dep"
check "Deployment: leader election on" grep -A1 'name: LEADER_ELECTION$' <<<"$dep"
check "Deployment: leader election value true" grep -q 'value: "true"' <<<"$(grep -A1 'name: LEADER_ELECTION$' <<<"$dep")"
check "Deployment: /tmp is an emptyDir" grep -q '{name: tmp, mountPath: /tmp}' <<<"$dep"
check "metrics Service on 8080" grep -q 'port: 8080' <<<"$(doc Service hco-hbase-cache-operator-metrics <<<"$o")"
check "cluster-wide by default: ClusterRole with blockcachepolicies" grep -q 'blockcachepolicies' <<<"$(doc ClusterRole hco-hbase-cache-operator <<<"$o")"
check "cluster-wide by default: WATCH_NAMESPACES empty" grep -q 'value: ""' <<<"$(grep -A1 'name: WATCH_NAMESPACES' <<<"$dep")"
check "lease Role in the release namespace" grep -q 'coordination.k8s.io' <<<"$(doc Role hco-hbase-cache-operator-leader-election <<<"$o")"
check "no wildcard verbs or resources" nogrep '"\*"|- \*' <<<"$o"
check "no access to secrets" nogrep secrets <<<"$o"
n=$(helm template hco "$OP" -n hbase-cache-system --set 'watchNamespaces={hbase,other}')
check "namespaced: a Role in each watched namespace" test "$(grep -c '^  namespace: hbase$\|^  namespace: other$' <<<"$(grep -A3 '^kind: Role$' <<<"$n")")" = 2
check "namespaced: no cluster-wide blockcachepolicies rule" nogrep blockcachepolicies <<<"$(doc ClusterRole hco-hbase-cache-operator <<<"$n")"
check "namespaced: WATCH_NAMESPACES=hbase,other" grep -q 'value: "hbase,other"' <<<"$n"
check "replicas > 1 without leader election is refused" bash -c "! helm template x '$OP' --set replicaCount=2 --set leaderElection.enabled=false"

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

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

#!/usr/bin/env bash
# Prove the charts/hbase cluster serves: a client pod from the same image runs smoke/HBaseSmoke.java
# (compiled here against images/hbase/target/lib; creates a table pre-split over the RegionServers,
# writes ROWS rows, reads each back with Get and counts them with a Scan, drops the table), then
# `helm test` runs HBase's CanaryTool with write sniffing. Exit 0 only if both pass.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
NS=$HBASE_NAMESPACE
REL=$HBASE_RELEASE
ROWS=${ROWS:-3000}
CTX=$KUBE_CONTEXT
k() { kubectl --context "$CTX" -n "$NS" "$@"; }
lib=$REPO_ROOT/images/hbase/target/lib
compgen -G "$lib/hbase-client-*.jar" >/dev/null || die "no HBase jars in $lib (make hbase-image)"
build=$(mktemp -d); trap 'rm -rf "$build"' EXIT
javac -nowarn -d "$build/classes" -cp "$lib/*" "$E2E_KIND_DIR/smoke/HBaseSmoke.java" || die "javac failed"
(cd "$build/classes" && jar cf "$build/smoke.jar" .)

site=$(helm --kube-context "$CTX" -n "$NS" get manifest "$REL" | awk '/^kind: ConfigMap/{c=1} c&&/^  name: .*-site$/{print $2; exit}')
[ -n "$site" ] || die "no hbase-site ConfigMap in release $REL"
k delete pod hbase-smoke --ignore-not-found >/dev/null
k create configmap hbase-smoke-jar --from-file=smoke.jar="$build/smoke.jar" --dry-run=client -o yaml | k apply -f - >/dev/null
overrides=$(jq -n --arg img "$HBASE_IMAGE" --arg site "$site" --arg rows "$ROWS" '{spec: {
  restartPolicy: "Never",
  securityContext: {runAsUser: 10001, runAsGroup: 0, runAsNonRoot: true, seccompProfile: {type: "RuntimeDefault"}},
  containers: [{name: "smoke", image: $img, imagePullPolicy: "IfNotPresent",
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: ["ALL"]}},
    command: ["bash", "-c", "exec java -Xmx256m -Dsun.net.inetaddr.ttl=1 --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true -Dlog4j2.configurationFile=/opt/hbase/conf/log4j2.properties -Dhbase.root.logger=WARN,console -cp /smoke/smoke.jar:$(/opt/hbase/entrypoint.sh classpath) HBaseSmoke \($rows)"],
    resources: {requests: {cpu: "50m", memory: "384Mi"}, limits: {memory: "512Mi"}},
    volumeMounts: [{name: "site", mountPath: "/etc/hbase"}, {name: "jar", mountPath: "/smoke"}]}],
  volumes: [{name: "site", configMap: {name: $site}}, {name: "jar", configMap: {name: "hbase-smoke-jar"}}]}}')
t0=$SECONDS
k run hbase-smoke --image="$HBASE_IMAGE" --restart=Never --overrides="$overrides" >/dev/null
for _ in $(seq 180); do
  phase=$(k get pod hbase-smoke -o jsonpath='{.status.phase}' 2>/dev/null || true)
  case $phase in Succeeded|Failed) break ;; esac
  sleep 2
done
k logs hbase-smoke | grep -vE '^(SLF4J|WARNING)' || true
log "smoke client: $phase in $((SECONDS - t0))s"
k delete pod hbase-smoke --wait=false >/dev/null; k delete configmap hbase-smoke-jar >/dev/null
[ "$phase" = Succeeded ] || die "HBaseSmoke failed"
if [ "${SKIP_HELM_TEST:-0}" != 1 ]; then
  t0=$SECONDS
  helm --kube-context "$CTX" -n "$NS" test "$REL" --logs --timeout 5m >/tmp/hbase-helm-test.log 2>&1 \
    || { tail -40 /tmp/hbase-helm-test.log >&2; die "helm test (CanaryTool) failed"; }
  grep -E 'Phase|Write to|took' /tmp/hbase-helm-test.log | tail -8 >&2
  log "helm test (CanaryTool -writeSniffing) passed in $((SECONDS - t0))s"
fi

#!/usr/bin/env bash
# Run the workload in a pod of the HBase image: pod.sh NAME Workload-args...
#   e.g. pod.sh hbase-load load usertable 50000 4096 6
# Uses the ConfigMap e2e-workload-jar (created from e2e/target/workload/workload.jar when missing
# or older) and the hbase-site ConfigMap of charts/hbase for the ZooKeeper quorum. Returns at once;
# wait with `kubectl wait` / read with `kubectl logs`.
#   KIND_CLUSTER, HBASE_NAMESPACE, HBASE_IMAGE (defaults in e2e/kind/lib.sh)
#   WORKLOAD_HEAP (256m)  HBASE_SITE_CM (hbase-site)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../kind/lib.sh"
[ $# -ge 2 ] || { echo "usage: pod.sh NAME load|read ARGS..." >&2; exit 2; }
name=$1; shift
repo=$REPO_ROOT
ctx=$KUBE_CONTEXT
ns=$HBASE_NAMESPACE
img=$HBASE_IMAGE
heap=${WORKLOAD_HEAP:-256m}
k() { kubectl --context "$ctx" -n "$ns" "$@"; }
jar=$repo/e2e/target/workload/workload.jar
[ -f "$jar" ] || jar=$("$here/build.sh")
k create configmap e2e-workload-jar --from-file=workload.jar="$jar" --dry-run=client -o yaml | k apply -f - >/dev/null
k delete pod "$name" --ignore-not-found --wait=true >/dev/null
cmd="exec java -Xmx$heap -XX:+UseSerialGC -Dsun.net.inetaddr.ttl=1 --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true -Dlog4j2.configurationFile=/opt/hbase/conf/log4j2.properties -Dhbase.root.logger=WARN,console -cp /workload/workload.jar:\$(/opt/hbase/entrypoint.sh classpath) Workload $*"
overrides=$(jq -n --arg img "$img" --arg cmd "$cmd" --arg site "${HBASE_SITE_CM:-hbase-site}" '{spec: {
  restartPolicy: "Never",
  securityContext: {runAsUser: 10001, runAsGroup: 0, runAsNonRoot: true, seccompProfile: {type: "RuntimeDefault"}},
  containers: [{name: "workload", image: $img, imagePullPolicy: "IfNotPresent",
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: ["ALL"]}},
    command: ["bash", "-c", $cmd],
    resources: {requests: {cpu: "50m", memory: "384Mi"}, limits: {memory: "640Mi"}},
    volumeMounts: [{name: "site", mountPath: "/etc/hbase"}, {name: "jar", mountPath: "/workload"}]}],
  volumes: [{name: "site", configMap: {name: $site}}, {name: "jar", configMap: {name: "e2e-workload-jar"}}]}}')
k run "$name" --image="$img" --restart=Never --labels=app.kubernetes.io/name=e2e-workload --overrides="$overrides" >/dev/null
echo "$name"

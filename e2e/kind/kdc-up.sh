#!/usr/bin/env bash
# A demo Kerberos realm on kind for charts/hbase's security.kerberos mode (make e2e-secured), in
# three steps; run it before charts/hbase is installed with that mode:
#   1. the KDC (images/kdc, built by kdc-image.sh) as Deployment "kdc" in $KDC_NAMESPACE (Pod
#      Security "restricted": user 10001 on port 8888, no service account token; its database on
#      an emptyDir, so a container restart keeps the realm and the keytabs handed out, a new pod
#      does not) and Service "kdc" on port 88;
#   2. the principals, and their keytabs as Secrets of $HBASE_NAMESPACE (restricted):
#      - hbase-keytabs (key hbase.keytab): hbase/<pod FQDN> of the master and of RegionServers
#        0..KDC_RS_ORDINALS-1 (default 6: scale-ups included), zookeeper/<ZooKeeper pod FQDN>;
#      - hbase-cache-keytab (key keytab): cache-operator@<realm>, the operator's identity, as the
#        docs/operations/secured-clusters.md says: annotated with its principal and the one policy that
#        may use it ($KDC_POLICY, default persistent-file), and a Role and RoleBinding that let the
#        operator's service account read this Secret and no other;
#      - e2e-workload-keytab (key keytab): e2e-workload@<realm>, the e2e workload's identity;
#   3. ConfigMap krb5 (key krb5.conf: the realm, its KDC at kdc.$KDC_NAMESPACE.svc) in
#      $HBASE_NAMESPACE and $OPERATOR_NAMESPACE (the operator chart's kerberos.krb5ConfigMap).
# Principals already there keep their keys: a second run hands out the same keytabs. A demo, not a
# least-privilege layout: one keytab holds every daemon's key (ZooKeeper's pod can read the
# RegionServers'), e2e-workload is an HBase superuser, and whoever may exec into the KDC pod may
# mint any principal. The Secrets are written by server-side apply: a new Secret gets no
# last-applied annotation that would copy the keytab into its metadata (one left on an old Secret
# by a client-side apply is removed below).
#   KDC_IMAGE, KDC_NAMESPACE, KERBEROS_REALM (defaults in lib.sh)
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
CTX=$KUBE_CONTEXT
NS=$HBASE_NAMESPACE
REALM=$KERBEROS_REALM
DOMAIN=${CLUSTER_DOMAIN:-cluster.local}
POLICY=${KDC_POLICY:-persistent-file}
k() { kubectl --context "$CTX" "$@"; }
docker image inspect "$KDC_IMAGE" >/dev/null 2>&1 || die "image $KDC_IMAGE not built (e2e/kind/kdc-image.sh)"
"$E2E_KIND_DIR/load-images.sh" "$KDC_IMAGE"
t0=$SECONDS
for n in "$KDC_NAMESPACE" "$NS" "$OPERATOR_NAMESPACE"; do
  k create namespace "$n" --dry-run=client -o yaml | k apply -f - >/dev/null
done
k label --overwrite namespace "$KDC_NAMESPACE" pod-security.kubernetes.io/enforce=restricted >/dev/null
k apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: kdc, namespace: $KDC_NAMESPACE, labels: {app.kubernetes.io/name: kdc}}
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector: {matchLabels: {app.kubernetes.io/name: kdc}}
  template:
    metadata: {labels: {app.kubernetes.io/name: kdc}}
    spec:
      automountServiceAccountToken: false
      securityContext: {runAsNonRoot: true, runAsUser: 10001, runAsGroup: 0, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: kdc
        image: $KDC_IMAGE
        imagePullPolicy: IfNotPresent
        env: [{name: REALM, value: "$REALM"}, {name: KDC_PORT, value: "8888"}]
        ports: [{name: kdc-tcp, containerPort: 8888, protocol: TCP}, {name: kdc-udp, containerPort: 8888, protocol: UDP}]
        readinessProbe: {tcpSocket: {port: 8888}, periodSeconds: 2}
        resources: {requests: {cpu: 10m, memory: 32Mi}, limits: {memory: 128Mi}}
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
        volumeMounts: [{name: db, mountPath: /var/lib/krb5kdc}]
      volumes: [{name: db, emptyDir: {}}]
---
apiVersion: v1
kind: Service
metadata: {name: kdc, namespace: $KDC_NAMESPACE}
spec:
  selector: {app.kubernetes.io/name: kdc}
  ports: [{name: kdc-tcp, port: 88, targetPort: 8888, protocol: TCP}, {name: kdc-udp, port: 88, targetPort: 8888, protocol: UDP}]
YAML
k -n "$KDC_NAMESPACE" rollout status deployment/kdc --timeout=3m >&2 || {
  k -n "$KDC_NAMESPACE" get pods -o wide >&2; k -n "$KDC_NAMESPACE" logs deployment/kdc --tail=30 >&2 || true
  die "the KDC did not get Ready"; }
# a Running KDC pod not being deleted (right after a changed Deployment rolls, the old one may still
# be Running while it terminates)
kdc_pod=$(k -n "$KDC_NAMESPACE" get pods -l app.kubernetes.io/name=kdc --field-selector=status.phase=Running \
  -o go-template='{{range .items}}{{if not .metadata.deletionTimestamp}}{{.metadata.name}}{{"\n"}}{{end}}{{end}}' | head -n 1)
[ -n "$kdc_pod" ] || die "no Running KDC pod that is not terminating in $KDC_NAMESPACE"

# charts/hbase's names (its hbase.fullname)
case "$HBASE_RELEASE" in *hbase*) full=$HBASE_RELEASE ;; *) full=$HBASE_RELEASE-hbase ;; esac
full=${full:0:40}; full=${full%-}
fqdn() { echo "$full-$1-$2.$full-$1.$NS.svc.$DOMAIN"; } # fqdn COMPONENT ORDINAL
service=("hbase/$(fqdn master 0)@$REALM" "zookeeper/$(fqdn zookeeper 0)@$REALM")
for i in $(seq 0 $((${KDC_RS_ORDINALS:-6} - 1))); do service+=("hbase/$(fqdn regionserver "$i")@$REALM"); done

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
keytab() { # keytab FILE PRINCIPAL...: created in the KDC (kdc.sh fails unless every one is in it), written here
  local f=$1; shift
  if ! k -n "$KDC_NAMESPACE" exec "$kdc_pod" -- kdc.sh keytab "$@" 2>"$tmp/err" >"$f.b64"; then
    cat "$tmp/err" >&2
    die "no keytab from the KDC for $*"
  fi
  base64 -d <"$f.b64" >"$f" || die "an undecodable keytab from the KDC for $*"
  rm -f "$f.b64"
  [ -s "$f" ] || die "an empty keytab from the KDC for $*"
}
secret() { # secret NAME KEY FILE
  k -n "$NS" create secret generic "$1" --from-file="$2=$3" --dry-run=client -o yaml \
    | k apply --server-side --force-conflicts --field-manager=kdc-up -f - >/dev/null
  k -n "$NS" annotate secret "$1" kubectl.kubernetes.io/last-applied-configuration- >/dev/null 2>&1 || true
}
keytab "$tmp/hbase.keytab" "${service[@]}"
secret hbase-keytabs hbase.keytab "$tmp/hbase.keytab"
keytab "$tmp/operator.keytab" "cache-operator@$REALM"
secret hbase-cache-keytab keytab "$tmp/operator.keytab"
k -n "$NS" annotate --overwrite secret hbase-cache-keytab "cache.hbase.dev/principal=cache-operator@$REALM" \
  "cache.hbase.dev/allowed-policies=$POLICY" >/dev/null
k -n "$NS" create role hbase-cache-keytab --verb=get --resource=secrets --resource-name=hbase-cache-keytab \
  --dry-run=client -o yaml | k apply -f - >/dev/null
# the operator chart's service account: its hco.fullname
case "$OPERATOR_RELEASE" in *hbase-cache-operator*) sa=$OPERATOR_RELEASE ;; *) sa=$OPERATOR_RELEASE-hbase-cache-operator ;; esac
sa=${sa:0:63}; sa=${sa%-}
k -n "$NS" create rolebinding hbase-cache-keytab --role=hbase-cache-keytab \
  "--serviceaccount=$OPERATOR_NAMESPACE:$sa" --dry-run=client -o yaml | k apply -f - >/dev/null
keytab "$tmp/workload.keytab" "e2e-workload@$REALM"
secret e2e-workload-keytab keytab "$tmp/workload.keytab"

cat >"$tmp/krb5.conf" <<CONF
[libdefaults]
  default_realm = $REALM
  dns_lookup_kdc = false
  dns_lookup_realm = false
  rdns = false
  dns_canonicalize_hostname = false
  udp_preference_limit = 1
[realms]
  $REALM = {
    kdc = kdc.$KDC_NAMESPACE.svc.$DOMAIN:88
  }
[domain_realm]
  .svc.$DOMAIN = $REALM
CONF
for n in "$NS" "$OPERATOR_NAMESPACE"; do
  k -n "$n" create configmap krb5 --from-file=krb5.conf="$tmp/krb5.conf" --dry-run=client -o yaml | k apply -f - >/dev/null
done
log "Kerberos realm $REALM: KDC $KDC_NAMESPACE/$kdc_pod, ${#service[@]} service principals in Secret $NS/hbase-keytabs, cache-operator and e2e-workload keytabs, ConfigMap krb5 in $NS and $OPERATOR_NAMESPACE ($((SECONDS - t0))s)"

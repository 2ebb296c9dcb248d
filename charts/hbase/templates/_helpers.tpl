{{/* names */}}
{{- define "hbase.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "hbase.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "hbase.zookeeper" -}}{{ include "hbase.fullname" . }}-zookeeper{{- end -}}
{{- define "hbase.master" -}}{{ include "hbase.fullname" . }}-master{{- end -}}
{{- define "hbase.regionserver" -}}{{ include "hbase.fullname" . }}-regionserver{{- end -}}
{{- define "hbase.siteConfigMap" -}}{{ include "hbase.fullname" . }}-site{{- end -}}
{{- /* the ConfigMaps the pods mount: the operator's derived ones once blockCachePolicy hands them over */ -}}
{{- define "hbase.regionServerSiteConfigMap" -}}
{{- if .Values.blockCachePolicy }}{{ .Values.blockCachePolicy }}-rs-site{{ else }}{{ include "hbase.siteConfigMap" . }}{{ end -}}
{{- end -}}
{{- define "hbase.masterSiteConfigMap" -}}
{{- if .Values.blockCachePolicy }}{{ .Values.blockCachePolicy }}-master-site{{ else }}{{ include "hbase.siteConfigMap" . }}{{ end -}}
{{- end -}}
{{- define "hbase.dataClaim" -}}
{{- default (printf "%s-data" (include "hbase.fullname" .)) .Values.persistence.existingClaim -}}
{{- end -}}

{{/* the single ZooKeeper server's stable name */}}
{{- define "hbase.zookeeperQuorum" -}}
{{- printf "%s-0.%s.%s.svc.%s" (include "hbase.zookeeper" .) (include "hbase.zookeeper" .) .Release.Namespace .Values.clusterDomain -}}
{{- end -}}

{{- define "hbase.image" -}}{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}{{- end -}}

{{- define "hbase.labels" -}}
app.kubernetes.io/name: {{ include "hbase.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* selector labels of one component: include "hbase.selector" (list . "regionserver") */}}
{{- define "hbase.selector" -}}
{{- $ := index . 0 -}}
app.kubernetes.io/name: {{ include "hbase.name" $ }}
app.kubernetes.io/instance: {{ $.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{/* hadoop-style XML from a dict of properties */}}
{{- define "hbase.siteXml" -}}
<?xml version="1.0"?>
<?xml-stylesheet type="text/xsl" href="configuration.xsl"?>
<!-- rendered by the hbase Helm chart -->
<configuration>
{{- range $k, $v := . }}
  <property><name>{{ $k }}</name><value>{{ toString $v | replace "&" "&amp;" | replace "<" "&lt;" | replace ">" "&gt;" }}</value></property>
{{- end }}
</configuration>
{{- end -}}

{{/*
Environment shared by all daemons. POD_FQDN (<pod>.<headless service>.<namespace>.svc.<domain>) is what
hbase-site.xml's hbase.master.hostname / hbase.unsafe.regionserver.hostname expand to
(${env.POD_FQDN:-}: Hadoop 3 Configuration reads environment variables), so each pod registers
under its stable DNS name rather than its IP. Call with (list . "<headless service name>").
*/}}
{{- define "hbase.commonEnv" -}}
{{- $ := index . 0 -}}
- name: POD_NAME
  valueFrom: {fieldRef: {fieldPath: metadata.name}}
- name: POD_NAMESPACE
  valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
- name: POD_FQDN
  value: "$(POD_NAME).{{ index . 1 }}.$(POD_NAMESPACE).svc.{{ $.Values.clusterDomain }}"
- name: HBASE_DNS_TTL
  value: {{ $.Values.dnsCacheTtlSeconds | quote }}
{{- with include "hbase.opts" $ }}
- name: HBASE_OPTS
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/*
HBASE_OPTS: with Kerberos, where the JVM finds the realm, and the ZooKeeper server's principal
named outright (the ZooKeeper client would otherwise build it from a reverse DNS answer for the
pod's IP), then the user's hbaseOpts.
*/}}
{{- define "hbase.opts" -}}
{{- $k := include "hbase.kerberos" . | fromJson -}}
{{- $opts := list -}}
{{- if $k.enabled -}}
{{- $opts = append $opts "-Djava.security.krb5.conf=/etc/krb5/krb5.conf" -}}
{{- $opts = append $opts (printf "-Dzookeeper.server.principal=%s" (include "hbase.zookeeperPrincipal" .)) -}}
{{- $opts = append $opts "-Dzookeeper.sasl.client.canonicalize.hostname=false" -}}
{{- end -}}
{{- with .Values.hbaseOpts }}{{ $opts = append $opts . }}{{ end -}}
{{- join " " $opts -}}
{{- end -}}

{{/*
security.kerberos with its defaults, as JSON: a release installed before the chart had it and
upgraded with --reuse-values has no .Values.security at all (Helm then reads none of values.yaml);
the defaults here are values.yaml's.
*/}}
{{- define "hbase.kerberos" -}}
{{- $defaults := dict "enabled" false "realm" "EXAMPLE.COM" "keytabSecret" "hbase-keytabs" "keytabKey" "hbase.keytab"
  "krb5ConfigMap" "krb5" "rpcProtection" "privacy" "superusers" "" -}}
{{- toJson (merge (deepCopy (((.Values.security).kerberos) | default dict)) $defaults) -}}
{{- end -}}

{{/* Kerberos principals and keytab path */}}
{{- define "hbase.zookeeperPrincipal" -}}
zookeeper/{{ include "hbase.zookeeperQuorum" . }}@{{ (include "hbase.kerberos" . | fromJson).realm }}
{{- end -}}
{{- define "hbase.keytabPath" -}}/etc/security/keytabs/{{ (include "hbase.kerberos" . | fromJson).keytabKey }}{{- end -}}

{{/* hbase-site keys of the master and the RegionServers with Kerberos (a dict, as JSON) */}}
{{- define "hbase.kerberosSite" -}}
{{- $k := include "hbase.kerberos" . | fromJson -}}
{{- $hbase := printf "hbase/_HOST@%s" $k.realm -}}
{{- $keytab := include "hbase.keytabPath" . -}}
{{- $s := dict
  "hadoop.security.authentication" "kerberos"
  "hbase.security.authentication" "kerberos"
  "hbase.security.authorization" "true"
  "hbase.rpc.protection" $k.rpcProtection
  "hbase.master.kerberos.principal" $hbase
  "hbase.regionserver.kerberos.principal" $hbase
  "hbase.master.keytab.file" $keytab
  "hbase.regionserver.keytab.file" $keytab
  "hbase.zookeeper.client.kerberos.principal" $hbase
  "hbase.zookeeper.client.keytab.file" $keytab
  "hbase.coprocessor.master.classes" "org.apache.hadoop.hbase.security.access.AccessController"
  "hbase.coprocessor.region.classes" "org.apache.hadoop.hbase.security.token.TokenProvider,org.apache.hadoop.hbase.security.access.AccessController"
  "hbase.coprocessor.regionserver.classes" "org.apache.hadoop.hbase.security.access.AccessController"
-}}
{{- with $k.superusers }}{{ $_ := set $s "hbase.superuser" . }}{{ end -}}
{{- toJson $s -}}
{{- end -}}

{{/* ZooKeeper's hbase-site keys with Kerberos: SASL from the clients, its own principal */}}
{{- define "hbase.kerberosZookeeperSite" -}}
{{- toJson (dict
  "hbase.security.authentication" "kerberos"
  "hbase.zookeeper.property.authProvider.1" "org.apache.zookeeper.server.auth.SASLAuthenticationProvider"
  "hbase.zookeeper.property.kerberos.removeHostFromPrincipal" "true"
  "hbase.zookeeper.property.kerberos.removeRealmFromPrincipal" "true"
  "hbase.zookeeper.server.kerberos.principal" (include "hbase.zookeeperPrincipal" .)
  "hbase.zookeeper.server.keytab.file" (include "hbase.keytabPath" .)) -}}
{{- end -}}

{{/*
With Kerberos, core-site.xml beside hbase-site.xml: Hadoop's UserGroupInformation reads whether
security is on from core-site.xml only (with hbase-site.xml alone the daemons log in, then speak
SIMPLE: "No matching SASL authentication provider ... auth:SIMPLE").
*/}}
{{- define "hbase.coreSite" -}}
{{- if (include "hbase.kerberos" . | fromJson).enabled -}}
core-site.xml: |
  {{- include "hbase.siteXml" (dict "hadoop.security.authentication" "kerberos") | nindent 2 }}
{{- end -}}
{{- end -}}

{{/* the keytab and krb5.conf, mounted in every daemon with Kerberos */}}
{{- define "hbase.kerberosVolumeMounts" -}}
{{- if (include "hbase.kerberos" . | fromJson).enabled }}
- {name: keytabs, mountPath: /etc/security/keytabs, readOnly: true}
- {name: krb5, mountPath: /etc/krb5, readOnly: true}
{{- end }}
{{- end -}}
{{- define "hbase.kerberosVolumes" -}}
{{- $k := include "hbase.kerberos" . | fromJson -}}
{{- if $k.enabled }}
# read by group 0, the daemons' group (securityContext.runAsGroup)
- name: keytabs
  secret: {secretName: {{ $k.keytabSecret | quote }}, defaultMode: 0440, items: [{key: {{ $k.keytabKey | quote }}, path: {{ $k.keytabKey | quote }}}]}
- name: krb5
  configMap: {name: {{ $k.krb5ConfigMap | quote }}, items: [{key: krb5.conf, path: krb5.conf}]}
{{- end }}
{{- end -}}

{{- define "hbase.podSecurityContext" -}}
{{- toYaml .Values.securityContext }}
{{- end -}}

{{- /* Every container's: nothing written outside its volumes (/tmp an emptyDir: hbase.tmp.dir,
Jetty's and the JVM's temporary files; logs go to the console), no privilege escalation, no
capability. */ -}}
{{- define "hbase.containerSecurityContext" -}}
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
capabilities: {drop: ["ALL"]}
{{- end -}}

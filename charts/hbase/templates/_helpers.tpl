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
{{- with $.Values.hbaseOpts }}
- name: HBASE_OPTS
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{- define "hbase.podSecurityContext" -}}
{{- toYaml .Values.securityContext }}
{{- end -}}

{{- define "hbase.containerSecurityContext" -}}
allowPrivilegeEscalation: false
capabilities: {drop: ["ALL"]}
{{- end -}}

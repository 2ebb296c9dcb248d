{{- /* The chart's name (label app.kubernetes.io/name): nameOverride, else the chart's. */ -}}
{{- define "hco.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- /* The objects' base name: fullnameOverride, else the release name with the chart's name
(nameOverride) unless the release name already holds it. */ -}}
{{- define "hco.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* The operator's image: repository:tag, or repository:tag@digest with image.digest (the tag is
then only a label; a release's packaged chart pins the digest it pushed). */ -}}
{{- define "hco.image" -}}
{{- $ref := printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- with .Values.image.digest }}{{ $ref = printf "%s@%s" $ref . }}{{ end -}}
{{- $ref -}}
{{- end -}}

{{- define "hco.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "hco.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "hco.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hco.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "hco.labels" -}}
{{ include "hco.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/*
The rules the operator needs in every namespace it watches: only the verbs it uses.
*/}}
{{- define "hco.namespacedRules" -}}
- apiGroups: ["cache.hbase.dev"]
  resources: ["blockcachepolicies"]
  verbs: ["get", "list", "watch", "patch", "update"]
- apiGroups: ["cache.hbase.dev"]
  resources: ["blockcachepolicies/status"]
  verbs: ["get", "patch", "update"]
- apiGroups: ["cache.hbase.dev"]
  resources: ["blockcachepolicies/finalizers"]
  verbs: ["update"]
# create/delete: a volumeClaimTemplates change means delete (orphan) + recreate the StatefulSet
- apiGroups: ["apps"]
  resources: ["statefulsets"]
  verbs: ["get", "list", "watch", "patch", "create", "delete"]
# masterRef of kind Deployment: read it, point its config volume at the master ConfigMap
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["get", "patch"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch", "delete"]
# create, patch: the derived <policy>-rs-site and <policy>-master-site (server-side apply); no
# delete: the operator keeps no backup in a ConfigMap (a recreate saves the StatefulSet in the
# policy's status)
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list", "watch", "create", "patch"]
- apiGroups: [""]
  resources: ["persistentvolumeclaims"]
  verbs: ["get", "list", "watch", "patch"]
# the RegionServers' PodDisruptionBudget (<policy>-regionservers); list/watch: budgets of others
- apiGroups: ["policy"]
  resources: ["poddisruptionbudgets"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
# events: the same event again counts up on its object (get, then patch count and lastTimestamp)
- apiGroups: ["", "events.k8s.io"]
  resources: ["events"]
  verbs: ["get", "create", "patch"]
{{- end -}}

{{/*
The namespaces the operator watches, comma-separated; empty: all (scope Cluster only). A Namespace
install watches its own namespace unless watchNamespaces lists others.
*/}}
{{- define "hco.watched" -}}
{{- if .Values.watchNamespaces -}}
{{- join "," .Values.watchNamespaces -}}
{{- else if eq .Values.scope "Namespace" -}}
{{- .Release.Namespace -}}
{{- end -}}
{{- end -}}

{{/* Whether this install runs the operator (every scope but Prerequisites). */}}
{{- define "hco.operator" -}}
{{- if ne .Values.scope "Prerequisites" -}}true{{- end -}}
{{- end -}}

{{- define "hco.checkScope" -}}
{{- if not (has .Values.scope (list "Cluster" "Namespace" "Prerequisites")) -}}
{{- fail (printf "scope must be Cluster, Namespace or Prerequisites, got %v" .Values.scope) -}}
{{- end -}}
{{- end -}}

{{/*
"true" when this release renders the BlockCachePolicy CRD: crds.create (a release whose values
predate the key, e.g. `helm upgrade --reuse-values` from an earlier build, counts as true) and a
scope that may hold cluster-scoped objects (never Namespace).
*/}}
{{- define "hco.crds" -}}
{{- $crds := .Values.crds | default dict -}}
{{- $create := true -}}
{{- if hasKey $crds "create" -}}{{- $create = $crds.create -}}{{- end -}}
{{- if and $create (ne .Values.scope "Namespace") -}}true{{- end -}}
{{- end -}}

{{/* Chart name, truncated to 63 characters (DNS label). */}}
{{- define "arrayplan.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: release + chart unless the release name already contains the chart name. */}}
{{- define "arrayplan.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "arrayplan.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels: name and instance only (stable across upgrades). Call with (dict "ctx" . "component" "planner"). */}}
{{- define "arrayplan.selectorLabels" -}}
app.kubernetes.io/name: {{ include "arrayplan.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end }}

{{/* Standard labels. Call with (dict "ctx" . "component" "planner"). */}}
{{- define "arrayplan.labels" -}}
helm.sh/chart: {{ include "arrayplan.chart" .ctx }}
{{ include "arrayplan.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: arrayplan
{{- with .ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Component names. */}}
{{- define "arrayplan.planner.fullname" -}}
{{- printf "%s-planner" (include "arrayplan.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- define "arrayplan.controller.fullname" -}}
{{- printf "%s-controller" (include "arrayplan.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- define "arrayplan.raycluster.fullname" -}}
{{- printf "%s-ray" (include "arrayplan.fullname" .) | trunc 40 | trimSuffix "-" }}
{{- end }}

{{- define "arrayplan.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "arrayplan.controller.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "arrayplan.workloadServiceAccountName" -}}
{{- printf "%s-workload" (include "arrayplan.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "arrayplan.watchNamespace" -}}
{{- default .Release.Namespace .Values.controller.watchNamespace }}
{{- end }}

{{- define "arrayplan.leaseName" -}}
{{- default (include "arrayplan.controller.fullname" .) .Values.controller.leaseName }}
{{- end }}

{{- define "arrayplan.runStoreClaim" -}}
{{- if eq .Values.runStore.type "existingClaim" }}
{{- required "runStore.existingClaim is required when runStore.type is existingClaim" .Values.runStore.existingClaim }}
{{- else }}
{{- printf "%s-runs" (include "arrayplan.fullname" .) }}
{{- end }}
{{- end }}

{{- define "arrayplan.raySecretName" -}}
{{- default (printf "%s-ray-auth" (include "arrayplan.fullname" .)) .Values.ray.auth.existingSecret }}
{{- end }}

{{/* The image reference: digest wins over tag; the tag defaults to the appVersion. */}}
{{- define "arrayplan.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if or (eq $tag "latest") (eq $tag "nightly") }}
{{- fail "image.tag must be a pinned version, not latest or nightly" }}
{{- end }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/* The Ray address the planner uses: ray.address, or the RayCluster head service. */}}
{{/* The planner is a Ray driver outside the Ray pods, so it connects through the Ray Client port. */}}
{{- define "arrayplan.rayAddress" -}}
{{- if .Values.ray.address }}
{{- .Values.ray.address }}
{{- else if .Values.rayCluster.enabled }}
{{- printf "ray://%s-head-svc.%s.svc:10001" (include "arrayplan.raycluster.fullname" .) .Release.Namespace }}
{{- end }}
{{- end }}

{{- define "arrayplan.usesRay" -}}
{{- if eq .Values.planner.executor "ray" }}true{{ end }}
{{- end }}

{{/* Checks of value combinations the schema cannot express. */}}
{{- define "arrayplan.validate" -}}
{{- if and .Values.ray.address .Values.rayCluster.enabled }}
{{- fail "set either ray.address (an existing Ray cluster) or rayCluster.enabled, not both" }}
{{- end }}
{{- if and (eq .Values.planner.executor "ray") (not .Values.ray.address) (not .Values.rayCluster.enabled) }}
{{- fail "planner.executor is ray: set ray.address or rayCluster.enabled (or use planner.executor=local)" }}
{{- end }}
{{- if and (gt (int .Values.planner.replicas) 1) (ne .Values.runStore.type "postgres") }}
{{- fail "planner.replicas > 1 needs runStore.type=postgres (a shared PostgreSQL run store): the SQLite run store has one writer" }}
{{- end }}
{{- if and (eq .Values.runStore.type "postgres") (not .Values.runStore.postgres.existingSecret) }}
{{- fail "runStore.type=postgres needs runStore.postgres.existingSecret: a Secret holding the PostgreSQL URL under runStore.postgres.secretKey" }}
{{- end }}
{{- if and .Values.ray.address (eq .Values.ray.auth.mode "token") (not .Values.ray.auth.existingSecret) (eq .Values.planner.executor "ray") }}
{{- fail "an external Ray cluster with token auth needs ray.auth.existingSecret (its token)" }}
{{- end }}
{{- if and .Values.planner.tls.certManager.enabled (not .Values.planner.tls.certManager.issuerRef.name) }}
{{- fail "planner.tls.certManager.enabled needs planner.tls.certManager.issuerRef.name" }}
{{- end }}
{{- if and .Values.planner.tls.clientCaSecretName (not (include "arrayplan.planner.tlsSecret" .)) }}
{{- fail "planner.tls.clientCaSecretName (mutual TLS) needs planner.tls.secretName or planner.tls.certManager.enabled" }}
{{- end }}
{{- if not (lt (int .Values.controller.renewDeadlineSeconds) (int .Values.controller.leaseDurationSeconds)) }}
{{- fail "controller.renewDeadlineSeconds must be below controller.leaseDurationSeconds" }}
{{- end }}
{{- end }}

{{/* Environment shared by the planner and the Ray nodes: OTLP and Ray auth. */}}
{{- define "arrayplan.commonEnv" -}}
- name: RAY_USAGE_STATS_ENABLED
  value: "0"
- name: NUMBA_CACHE_DIR
  value: /var/cache/arrayplan/numba
- name: HOME
  value: /tmp
{{- if include "arrayplan.usesRay" . }}
- name: RAY_AUTH_MODE
  value: {{ .Values.ray.auth.mode | quote }}
{{- if eq .Values.ray.auth.mode "token" }}
- name: RAY_AUTH_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "arrayplan.raySecretName" . }}
      key: {{ .Values.ray.auth.tokenKey }}
{{- end }}
{{- end }}
{{- with .Values.otel.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: grpc
- name: OTEL_EXPORTER_OTLP_INSECURE
  value: {{ $.Values.otel.insecure | quote }}
{{- with $.Values.otel.resourceAttributes }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ . | quote }}
{{- end }}
{{- with $.Values.otel.headersSecret }}
- name: OTEL_EXPORTER_OTLP_HEADERS
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: headers
{{- end }}
{{- end }}
{{- end }}

{{/* The init container that copies the image's warm numba cache into the writable cache volume
(the root filesystem is read-only; numba needs a writable cache directory). */}}
{{- define "arrayplan.warmCacheInit" -}}
- name: warm-numba-cache
  image: {{ include "arrayplan.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  command: ["cp", "-a", "/opt/arrayplan/numba-cache/.", "/var/cache/arrayplan/numba/"]
  securityContext:
    {{- toYaml .Values.securityContext | nindent 4 }}
  resources:
    requests:
      cpu: 10m
      memory: 32Mi
    limits:
      memory: 64Mi
  volumeMounts:
    - name: numba-cache
      mountPath: /var/cache/arrayplan/numba
{{- end }}

{{/* The ConfigMap of site drive catalog files the planner mounts (empty: none). */}}
{{- define "arrayplan.driveCatalogName" -}}
{{- if .Values.planner.driveCatalog.configMap }}
{{- .Values.planner.driveCatalog.configMap }}
{{- else if .Values.planner.driveCatalog.files }}
{{- printf "%s-drives" (include "arrayplan.planner.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* The Secret holding the planner's TLS certificate ("" = plaintext). */}}
{{- define "arrayplan.planner.tlsSecret" -}}
{{- if .Values.planner.tls.secretName }}{{ .Values.planner.tls.secretName }}{{- else if .Values.planner.tls.certManager.enabled }}{{ include "arrayplan.planner.fullname" . }}-tls{{- end }}
{{- end }}

{{/* Port the kubelet probes: the plaintext health-only port while TLS is on. */}}
{{- define "arrayplan.planner.probePort" -}}
{{- if include "arrayplan.planner.tlsSecret" . }}{{ .Values.planner.tls.healthPort }}{{ else }}{{ .Values.planner.port }}{{ end }}
{{- end }}

{{- define "qhronos.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "qhronos.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "qhronos.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "qhronos.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "qhronos.selectorLabels" -}}
app.kubernetes.io/name: {{ include "qhronos.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "qhronos.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "qhronos.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "qhronos.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "qhronos.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "qhronos.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "qhronos.secretName" -}}
{{- default (include "qhronos.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{/*
qhronos.validate stops the render with a message naming the value at fault:
secrets and URLs never go in the ConfigMap, the shutdown timeouts are the
chart's, and production needs a database.
*/}}
{{- define "qhronos.validate" -}}
{{- if not (has .Values.mode (list "combined" "split")) -}}
{{- fail (printf "mode: must be combined or split, got %q" .Values.mode) -}}
{{- end -}}
{{- if and (not .Values.secrets.existingSecret) (not .Values.database.url) -}}
{{- fail "database.url: set the PostgreSQL URL, or secrets.existingSecret naming a Secret with a database-url key" -}}
{{- end -}}
{{- $c := .Values.config | default dict -}}
{{- range $section, $keys := dict "auth" (list "master_token" "jwt_secret" "jwt_previous_secrets") "hmac" (list "default_secret") "secrets" (list "encryption_key") "database" (list "url") "redis" (list "url" "password") "metrics" (list "token") -}}
{{- $s := get $c $section | default dict -}}
{{- range $keys -}}
{{- if hasKey $s . -}}
{{- fail (printf "config.%s.%s: secrets and URLs do not belong in the ConfigMap; use database.url / redis.url or secrets.existingSecret" $section .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if hasKey (get $c "notifications" | default dict) "smtp" -}}
{{- if hasKey (get (get $c "notifications") "smtp" | default dict) "password" -}}
{{- fail "config.notifications.smtp.password: a secret; set QHRONOS_NOTIFICATIONS_SMTP_PASSWORD from a Secret instead" -}}
{{- end -}}
{{- end -}}
{{- if hasKey (get $c "notifications" | default dict) "channels" -}}
{{- fail "config.notifications.channels: channels carry secrets; add them with POST /notification-channels" -}}
{{- end -}}
{{- if hasKey (get $c "scheduler" | default dict) "drain_timeout" -}}
{{- fail "config.scheduler.drain_timeout: set shutdown.drainSeconds, which also sizes the pods' grace period" -}}
{{- end -}}
{{- if hasKey (get $c "server" | default dict) "shutdown_timeout" -}}
{{- fail "config.server.shutdown_timeout: set shutdown.httpSeconds, which also sizes the pods' grace period" -}}
{{- end -}}
{{- if hasKey (get $c "scheduler" | default dict) "dispatch" -}}
{{- fail "config.scheduler.dispatch: set mode (combined or split) instead" -}}
{{- end -}}
{{- end -}}

{{/* qhronos.env: the environment of every qhronosd container. */}}
{{- define "qhronos.env" -}}
- name: QHRONOS_CONFIG
  value: /etc/qhronos/config.yaml
- name: QHRONOS_SERVER_ADDR
  value: "0.0.0.0:{{ .Values.service.port }}"
- name: QHRONOS_SERVER_SHUTDOWN_TIMEOUT
  value: "{{ .Values.shutdown.httpSeconds }}s"
- name: QHRONOS_SCHEDULER_DRAIN_TIMEOUT
  value: "{{ .Values.shutdown.drainSeconds }}s"
{{ include "qhronos.secretEnv" . }}
{{- end -}}

{{/* qhronos.secretEnv: settings read from the Secret (all the migration Job needs). */}}
{{- define "qhronos.secretEnv" -}}
{{- range $env, $key := dict "QHRONOS_DATABASE_URL" "database-url" "QHRONOS_AUTH_MASTER_TOKEN" "master-token" "QHRONOS_AUTH_JWT_SECRET" "jwt-secret" "QHRONOS_HMAC_DEFAULT_SECRET" "hmac-default-secret" "QHRONOS_SECRETS_ENCRYPTION_KEY" "secrets-encryption-key" }}
- name: {{ $env }}
  valueFrom:
    secretKeyRef: {name: {{ include "qhronos.secretName" $ }}, key: {{ $key }}}
{{- end }}
{{- range $env, $key := dict "QHRONOS_REDIS_URL" "redis-url" "QHRONOS_METRICS_TOKEN" "metrics-token" }}
- name: {{ $env }}
  valueFrom:
    secretKeyRef: {name: {{ include "qhronos.secretName" $ }}, key: {{ $key }}, optional: true}
{{- end }}
{{- end -}}

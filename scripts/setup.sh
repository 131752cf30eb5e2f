#!/usr/bin/env bash
# Idempotent project set-up: everything the project needs, installed into the project.
#   .venv/        Python virtual environment (requirements.lock, hashes checked + both packages, editable)
#   services/arrayplan/v1/   protobuf + gRPC stubs generated from proto/
#   clients/go/proto/        the Go stubs (committed; `buf generate` with buf.gen.yaml regenerates them
#                            with the proto: `make proto`)
#   bin/grpcurl, bin/protoc-gen-go, bin/protoc-gen-go-grpc, bin/staticcheck   built with `go install`
#                 at pinned versions (cached in ${ARRAYPLAN_TOOL_CACHE:-~/.cache/arrayplan/bin})
#   numba kernels compiled into $NUMBA_CACHE_DIR (default ~/.cache/arrayplan/numba)
#   --test-tools: also the tools only the tests need (scripts/cluster_tools.sh, chromium, postgresql)
# Re-running does only what changed (stamp files under .venv/).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
CACHE=${ARRAYPLAN_TOOL_CACHE:-$HOME/.cache/arrayplan/bin}
GRPCURL_VERSION=v1.9.3
GHZ_VERSION=v0.93.0
# The Go stubs' generators (their versions are written into clients/go/proto/*.go) and the Go linter.
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2
STATICCHECK_VERSION=v0.8.2
# pip itself, before it installs requirements.lock (the lock pins everything else, setuptools included).
PIP_VERSION=26.3

log() { printf '[setup] %s\n' "$*" >&2; }

if [ ! -x .venv/bin/python ]; then
  log "creating .venv"
  "$PY" -m venv .venv
fi
req_hash=$(cat requirements.txt requirements.lock engine/pyproject.toml services/pyproject.toml | sha256sum | cut -c1-16)
if [ "$(cat .venv/.req-stamp 2>/dev/null)" != "$req_hash" ]; then
  log "installing Python dependencies (first time ~3 min)"
  .venv/bin/python -m pip install -q "pip==$PIP_VERSION"
  .venv/bin/python -m pip install -q --require-hashes -r requirements.lock
  echo "$req_hash" > .venv/.req-stamp
fi

# A Go tool built once with `go install` into bin/, cached per version in $CACHE so a fresh clone
# (or `make clean`) copies it instead of building again: install_go_tool NAME MODULE VERSION WHY
install_go_tool() {
  local name=$1 module=$2 version=$3 why=$4
  if [ ! -x "bin/$name" ]; then
    if [ -x "$CACHE/$name-$version" ]; then
      cp "$CACHE/$name-$version" "bin/$name"
    elif command -v go >/dev/null 2>&1; then
      log "building $name $version with go install (first time 1-3 min)"
      GOFLAGS=-mod=mod GOBIN="$ROOT/bin" go install "$module@$version"
    else
      log "go not found: $why (install Go to build it)"
    fi
  fi
  if [ -x "bin/$name" ] && [ ! -x "$CACHE/$name-$version" ]; then
    mkdir -p "$CACHE" && cp "bin/$name" "$CACHE/$name-$version"
  fi
}

mkdir -p bin
install_go_tool protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go "$PROTOC_GEN_GO_VERSION" "the Go stubs are not regenerated"
install_go_tool protoc-gen-go-grpc google.golang.org/grpc/cmd/protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION" "the Go stubs are not regenerated"
install_go_tool staticcheck honnef.co/go/tools/cmd/staticcheck "$STATICCHECK_VERSION" "make lint skips the Go linter"

proto_hash=$(cat proto/arrayplan/v1/*.proto | sha256sum | cut -c1-16)
if [ "$(cat .venv/.proto-stamp 2>/dev/null)" != "$proto_hash" ] || [ ! -f services/arrayplan/v1/planner_pb2.py ]; then
  log "generating protobuf stubs"
  rm -rf services/arrayplan
  mkdir -p services/arrayplan/v1
  .venv/bin/python -m grpc_tools.protoc -I proto --python_out=services --pyi_out=services --grpc_python_out=services \
    proto/arrayplan/v1/*.proto
  printf '"""Generated from proto/arrayplan (make proto); do not edit."""\n' > services/arrayplan/__init__.py
  printf '"""arrayplan.v1 stubs generated from proto/arrayplan/v1 (make proto); do not edit."""\n' > services/arrayplan/v1/__init__.py
  # The Go stubs of the client module (committed, so a checkout without Go still builds it).
  if [ -x bin/protoc-gen-go ] && [ -x bin/protoc-gen-go-grpc ]; then
    log "generating the Go stubs (clients/go/proto)"
    .venv/bin/buf generate
  else
    log "bin/protoc-gen-go missing (no Go?): the committed Go stubs are kept"
  fi
  echo "$proto_hash" > .venv/.proto-stamp
fi

# Editable installs after the stubs exist, so the `arrayplan` stub package is mapped too.
if [ "$(cat .venv/.pkg-stamp 2>/dev/null)" != "$req_hash" ]; then
  log "installing the engine and services packages (editable)"
  .venv/bin/python -m pip install -q --no-deps --no-build-isolation -e engine -e services
  echo "$req_hash" > .venv/.pkg-stamp
fi

install_go_tool grpcurl github.com/fullstorydev/grpcurl/cmd/grpcurl "$GRPCURL_VERSION" "grpcurl tests will be skipped"
# The numba kernels, compiled once into the cache the server and its Ray workers read (redone when
# the engine's sources change), so the first plan after `make run` does not compile in every worker.
engine_hash=$(cat engine/arrayplan_engine/*.py | sha256sum | cut -c1-16)
NUMBA_CACHE_DIR=$(.venv/bin/python -m arrayplan_services.numba_cache --dir)
export NUMBA_CACHE_DIR
if [ "$(cat .venv/.numba-stamp 2>/dev/null)" != "$engine_hash:$NUMBA_CACHE_DIR" ] \
   || [ -z "$(find "$NUMBA_CACHE_DIR" -name '*.nbi' -print -quit 2>/dev/null)" ]; then
  log "compiling the numba kernels into $NUMBA_CACHE_DIR (first time ~2 min)"
  .venv/bin/python -m arrayplan_services.numba_cache --warm examples >/dev/null
  echo "$engine_hash:$NUMBA_CACHE_DIR" > .venv/.numba-stamp
fi

# Tools only the tests need (kube-apiserver, helm, otelcol, hadolint, chromium): `make test` runs
# scripts/setup.sh --test-tools; `make run` does not wait for them.
if [ "${1:-}" = "--test-tools" ]; then
  bash scripts/cluster_tools.sh
  # ghz, the gRPC load generator behind `make load` (which runs the test set-up)
  install_go_tool ghz github.com/bojand/ghz/cmd/ghz "$GHZ_VERSION" "make load needs bin/ghz"
  # PostgreSQL from Debian: the shared run store's tests (tests/services/pgserver.py) run initdb and a
  # real postgres on 127.0.0.1 from /usr/lib/postgresql/*/bin. Skipped when already installed.
  if ! compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing postgresql from Debian (the PostgreSQL run store tests)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) \
      || log "could not install postgresql: the PostgreSQL store tests fail in CI and skip elsewhere"
  fi
  # Debian packages the tests use for real: Chromium renders the HTML plan report headless.
  if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing chromium from Debian (headless report rendering)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || log "could not install chromium: the report screenshot test will skip"
  fi
fi
log "ready"

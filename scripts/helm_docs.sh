#!/usr/bin/env bash
# Regenerate helm/arrayplan/README.md from values.yaml (`# --` comments) and README.md.gotmpl with
# helm-docs (built into bin/ by scripts/cluster_tools.sh). `--check` fails if the README is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x bin/helm-docs ] || bash scripts/cluster_tools.sh helm-docs
[ -x bin/helm-docs ] || { echo "helm-docs could not be built (see build/tools/helm-docs.log)" >&2; exit 1; }
if [ "${1:-}" = "--check" ]; then
  (cd helm && ../bin/helm-docs --skip-version-footer --log-level warning --dry-run) | diff -u helm/arrayplan/README.md - \
    && echo "helm/arrayplan/README.md is up to date"
else
  (cd helm && ../bin/helm-docs --skip-version-footer --log-level warning)
fi

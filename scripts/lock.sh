#!/usr/bin/env bash
# Resolve requirements.txt (the direct dependencies, each pinned) into requirements.lock: every
# transitive dependency with its version and hashes, for every platform (uv's universal resolution),
# which scripts/setup.sh installs. Run after changing a pin (`make lock`); tests/test_lock.py fails
# while the two disagree.
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-.venv/bin/uv}
"$UV" pip compile requirements.txt --universal --python-version 3.11 --generate-hashes \
  --custom-compile-command "make lock" --quiet -o requirements.lock

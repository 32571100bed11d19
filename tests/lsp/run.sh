#!/usr/bin/env bash
# The language server's end-to-end cases (tests/lsp/cases/*.yaml) with a real LSP client
# from PyPI (pytest-lsp, on pygls), driving `nidos lsp` over stdio. Called by .ci/run;
# runs on its own too:  bash tests/lsp/run.sh   (NIDOS_BIN picks the binary).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PYTHON="${PYTHON:-python3}"
VENV="${NIDOS_LSP_VENV:-$ROOT/target/lsp-venv}"
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "pytest-lsp==1.0.1" pyyaml
if [ -z "${NIDOS_BIN:-}" ]; then
    (cd "$ROOT" && cargo build --quiet -p nidos-cli)
    export NIDOS_BIN="$ROOT/target/debug/nidos"
fi
cd "$HERE"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider . "$@"

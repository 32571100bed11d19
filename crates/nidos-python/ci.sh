#!/usr/bin/env bash
# The Python package's checks: Rust lint of the extension crate, then a fresh virtualenv
# with the package built by pip (maturin from the package index as the build backend),
# the test dependencies (pytest, pybids, dask[distributed], duckdb, pyarrow, pandas),
# and the pytest suite. Called by .ci/run; runs on its own too:
#   bash crates/nidos-python/ci.sh
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# Share the root workspace's target dir: the nidos crates are built once for both.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
PYTHON="${PYTHON:-python3}"

echo "==> nidos-python: cargo fmt --check, clippy"
(cd "$HERE" && cargo fmt --check && cargo clippy --all-targets -- -D warnings)

VENV="${NIDOS_PY_VENV:-$ROOT/target/py-venv}"
echo "==> nidos-python: fresh virtualenv at $VENV"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet pytest pandas pyarrow duckdb nibabel "dask[distributed]" "pybids==0.22.0"

echo "==> nidos-python: pip install crates/nidos-python"
"$VENV/bin/python" -m pip install --quiet "$HERE"

echo "==> nidos-python: pytest"
cd "$HERE"
set +e
"$VENV/bin/python" -m pytest -q tests "$@"
rc=$?
set -e
# 5: no test collected (cannot happen with this suite; not a failure of the package).
if [ "$rc" -eq 5 ]; then rc=0; fi
if [ "$rc" -ne 0 ]; then exit "$rc"; fi

# pybids 0.22.0's own layout tests with BIDSLayout/Query swapped for nidos' (its sdist is
# downloaded once into target/pybids-suite). The gate is the pass rate reached; the tests
# that fail are listed with their reasons in docs/divergences.md.
echo "==> nidos-python: pybids' layout tests against nidos.Layout"
"$VENV/bin/python" tests/pybids_suite/run.py --min-pass-rate "${NIDOS_PYBIDS_MIN_PASS:-0.97}"

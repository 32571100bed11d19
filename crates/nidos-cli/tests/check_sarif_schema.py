#!/usr/bin/env python3
"""Checks nidos's SARIF reports against the published SARIF 2.1.0 JSON Schema.

Usage: check_sarif_schema.py SCHEMA.json NIDOS_BINARY [DATASET_DIR ...]

Validates the SARIF snapshots under crates/nidos-cli/tests/data/validate/ and, for each
dataset directory given, the report of `NIDOS_BINARY validate DIR --format sarif`.
Exits 1 when any report breaks the schema (each violation is printed with its path).
The schema is the OASIS one (draft-04 JSON Schema); `.ci/run` takes it from the npm
package @microsoft/jest-sarif and the validator from PyPI (jsonschema).
"""
import json
import subprocess
import sys
from pathlib import Path

import jsonschema

ROOT = Path(__file__).resolve().parents[3]
SNAPSHOTS = ROOT / "crates/nidos-cli/tests/data/validate"


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema = json.loads(Path(argv[1]).read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    binary = argv[2]
    reports = [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted(SNAPSHOTS.glob("*/expected.sarif"))]
    for d in argv[3:]:
        run = subprocess.run([binary, "validate", d, "--format", "sarif"], capture_output=True, text=True)
        if run.returncode not in (0, 16):
            print(f"{d}: nidos exited {run.returncode}: {run.stderr.strip()[:300]}")
            return 1
        reports.append((d, run.stdout))
    bad = 0
    for name, text in reports:
        errors = list(validator.iter_errors(json.loads(text)))
        for e in errors[:5]:
            path = "/".join(str(p) for p in e.absolute_path)
            print(f"{name}: /{path}: {e.message[:200]}")
        bad += bool(errors)
    print(f"{len(reports)} SARIF reports checked against the SARIF 2.1.0 schema: {len(reports) - bad} valid, {bad} invalid")
    return 1 if bad or not reports else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Runs pybids 0.22.0's own layout tests against ``nidos.Layout``.

Downloads pybids' source distribution from PyPI (cached), extracts the five layout test
files, their conftests and the test data, and runs them with pytest with one change:
``BIDSLayout`` / ``Query`` are nidos' (``nidos_swap.py``, loaded as a plugin). The
example datasets come from ``../shared/conformance/examples`` (the tests that need them
skip when it is absent). Prints the counts and, with ``--min-pass-rate``, fails when the
share of passing tests among those that ran is lower.

    python tests/pybids_suite/run.py [--min-pass-rate 0.95] [-- pytest args]

Needs the ``pybids`` package installed (its helpers and models the tests import).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tarfile

VERSION = "0.22.0"
TEST_FILES = [
    "test_layout.py",
    "test_layout_on_examples.py",
    "test_models.py",
    "test_path_building.py",
    "test_rootpath.py",
]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))


def sdist(cache: str) -> str:
    name = f"pybids-{VERSION}.tar.gz"
    path = os.path.join(cache, name)
    if not os.path.isfile(path):
        os.makedirs(cache, exist_ok=True)
        subprocess.check_call(
            [sys.executable, "-m", "pip", "download", f"pybids=={VERSION}", "--no-deps",
             "--no-binary", ":all:", "--quiet", "-d", cache]
        )
    return path


def extract(archive: str, work: str) -> str:
    """The test tree: ``work/conftest.py`` (pybids' top one), ``work/layout/`` (layout
    conftest and the five test files), ``work/tests/data`` (the test data)."""
    if os.path.isdir(work):
        shutil.rmtree(work)
    top = f"pybids-{VERSION}/"
    wanted = {
        top + "src/bids/conftest.py": "conftest.py",
        top + "src/bids/layout/tests/conftest.py": "layout/conftest.py",
    }
    for f in TEST_FILES:
        wanted[top + "src/bids/layout/tests/" + f] = "layout/" + f
    with tarfile.open(archive) as tar:
        for m in tar.getmembers():
            if m.name in wanted:
                dest = wanted[m.name]
            elif m.name.startswith(top + "tests/data/"):
                dest = m.name[len(top):]
            else:
                continue
            m = m.replace(name=dest)
            tar.extract(m, work, filter="data")
    return work


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=os.path.join(ROOT, "target", "pybids-suite"))
    ap.add_argument("--examples", default=os.path.join(ROOT, "..", "shared", "conformance", "examples"))
    ap.add_argument("--min-pass-rate", type=float, default=None)
    ap.add_argument("pytest_args", nargs="*")
    args = ap.parse_args()
    work = extract(sdist(args.cache), os.path.join(args.cache, "work"))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [HERE, env.get("PYTHONPATH")] if p)
    env["PYBIDS_TEST_DATA"] = os.path.join(work, "tests")
    env["BIDS_EXAMPLES"] = os.path.realpath(args.examples)
    report = os.path.join(args.cache, "outcomes.txt")
    cmd = [sys.executable, "-m", "pytest", "-p", "nidos_swap", "-p", "no:cacheprovider",
           "-q", "-rfE", "--tb=line", f"--junitxml={report}.xml", "-o", "junit_family=xunit1",
           os.path.join(work, "layout")] + args.pytest_args
    rc = subprocess.call(cmd, cwd=work, env=env)
    passed, failed, errors, skipped = count(report + ".xml")
    ran = passed + failed + errors
    rate = passed / ran if ran else 0.0
    print(f"pybids {VERSION} layout tests against nidos: {passed} passed, {failed} failed, "
          f"{errors} errors, {skipped} skipped; {rate:.1%} of the {ran} that ran pass")
    if args.min_pass_rate is not None:
        return 0 if ran and rate >= args.min_pass_rate else 1
    return 0 if rc in (0, 1) else rc


def count(xml: str):
    import xml.etree.ElementTree as ET

    passed = failed = errors = skipped = 0
    for case in ET.parse(xml).getroot().iter("testcase"):
        kinds = {child.tag for child in case}
        if "error" in kinds:
            errors += 1
        elif "failure" in kinds:
            failed += 1
        elif "skipped" in kinds:
            skipped += 1
        else:
            passed += 1
    return passed, failed, errors, skipped


if __name__ == "__main__":
    sys.exit(main())

"""Parity with pybids' BIDSLayout on every conformance example: the same file sets for
a matrix of get() queries (cases/parity_queries.json) and equal get_metadata for every
file both list. Differences are allowed only where a rule of
cases/parity_divergences.json explains them; each rule names its reason, one of the
sections of docs/divergences.md ("Divergences of the Python Layout from pybids")."""

import json
import os
import re
import warnings

import pytest

import nidos
from conftest import CASES, EXAMPLES, example_names

QUERIES = json.loads((CASES / "parity_queries.json").read_text())
RULES = json.loads((CASES / "parity_divergences.json").read_text())
REASONS = {"P1", "P2", "P3", "P4", "P5", "P6", "P7"}


def test_rules_have_reasons():
    for r in RULES:
        assert r["reason"] in REASONS, r
        assert r["side"] in ("only_nidos", "only_pybids", "metadata"), r
        re.compile(r["pattern"])


def _explained(side, example, path, query_id=None, key=None):
    for r in RULES:
        if r["side"] != side:
            continue
        if "examples" in r and example not in r["examples"]:
            continue
        if "queries" in r and query_id not in r["queries"]:
            continue
        if "keys" in r and key not in r["keys"]:
            continue
        if re.search(r["pattern"], path):
            return True
    return False


def _pybids_layout(root):
    bids = pytest.importorskip("bids")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bids.BIDSLayout(str(root), validate=True, derivatives=False)


def _with(query, query_cls):
    """The query with {"__query__": NAME} values replaced by query_cls.NAME."""
    return {
        k: getattr(query_cls, v["__query__"]) if isinstance(v, dict) else v
        for k, v in query.items()
    }


def _equal(a, b):
    """JSON equality where 1 == 1.0 (pybids and nidos both load JSON numbers)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) or a == b


@pytest.mark.parametrize("example", example_names() or ["(no examples)"])
def test_parity(example):
    if not EXAMPLES.is_dir():
        pytest.skip(f"{EXAMPLES} is absent")
    root = EXAMPLES / example
    theirs = _pybids_layout(root)
    ours = nidos.Layout(root)
    from bids.layout import Query as PybidsQuery

    def rel(paths):
        return {os.path.relpath(str(p), root) for p in paths}

    unexplained = []
    compared = 0
    for q in QUERIES:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = rel(theirs.get(return_type="filename", **_with(q["query"], PybidsQuery)))
        except Exception:  # pybids refuses the query (an entity it does not know)
            continue
        got = rel(ours.get(return_type="filename", invalid_filters="allow",
                           **_with(q["query"], nidos.Query)))
        compared += 1
        unexplained += [(q["id"], "only_nidos", p) for p in sorted(got - want)
                        if not _explained("only_nidos", example, p, q["id"])]
        unexplained += [(q["id"], "only_pybids", p) for p in sorted(want - got)
                        if not _explained("only_pybids", example, p, q["id"])]
    assert compared >= len(QUERIES) // 2
    assert not unexplained, unexplained[:20]

    both = rel(ours.get(return_type="filename")) & rel(theirs.get(return_type="filename"))
    bad = []
    for path in sorted(both):
        if path.endswith(".json"):
            continue  # P2: sidecars have no metadata of their own
        want = theirs.get_metadata(str(root / path))
        got = ours.get_metadata(root / path)
        for key in sorted(set(want) | set(got)):
            if key in want and key in got and _equal(want[key], got[key]):
                continue
            if not _explained("metadata", example, path, key=key):
                bad.append((path, key, want.get(key, "<absent>"), got.get(key, "<absent>")))
    assert not bad, bad[:20]

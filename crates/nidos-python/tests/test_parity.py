"""Parity with pybids' BIDSLayout on every conformance example: the same file sets for
a matrix of get() queries (cases/parity_queries.json) and equal get_metadata for every
file. Known differences, where pybids is wrong, are listed in docs/divergences.md and
in cases/parity_divergences.json (files pybids lists or misses, per example)."""

import json
import os
import warnings

import pytest

import nidos
from conftest import CASES, EXAMPLES, example_names

QUERIES = json.loads((CASES / "parity_queries.json").read_text())
DIVERGENCES = json.loads((CASES / "parity_divergences.json").read_text())


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


def _known(example):
    d = DIVERGENCES.get(example, {})
    return set(d.get("only_nidos", [])), set(d.get("only_pybids", []))


@pytest.mark.parametrize("example", example_names() or ["(no examples)"])
def test_parity(example):
    if not EXAMPLES.is_dir():
        pytest.skip(f"{EXAMPLES} is absent")
    root = EXAMPLES / example
    theirs = _pybids_layout(root)
    ours = nidos.Layout(root)
    only_nidos, only_pybids = _known(example)

    def rel(paths):
        return {os.path.relpath(str(p), root) for p in paths}

    from bids.layout import Query as PybidsQuery

    for q in QUERIES:
        try:
            want = rel(theirs.get(return_type="filename", **_with(q["query"], PybidsQuery)))
        except Exception:  # pybids refuses the query (e.g. an entity it does not know)
            continue
        got = rel(ours.get(return_type="filename", invalid_filters="allow",
                           **_with(q["query"], nidos.Query)))
        assert got - want <= only_nidos, (q["id"], sorted(got - want - only_nidos)[:10])
        assert want - got <= only_pybids, (q["id"], sorted(want - got - only_pybids)[:10])

    for path in sorted(rel(ours.get(return_type="filename")) - only_nidos):
        if path.endswith(".json"):
            continue  # pybids gives sidecars themselves no metadata
        want = theirs.get_metadata(str(root / path))
        got = ours.get_metadata(root / path)
        assert got == want, path

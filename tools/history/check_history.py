#!/usr/bin/env python3
"""The evidence test of issue 37: every dated term of docs/history.yaml is stated by
the text of its version and not by the previous release's text, or its entry says why.

For each entry:
- `since` null: the entry must carry a note (renamed, stated without the term, ...).
- `since` 1.2.0 or later: the term must be found in that tag's text, and must not be found
  in the previous tag's text unless the note says why;
- `since` 1.0.0 to 1.1.2 (before the public text): the term must be found in the v1.1.2
  text and the note must say how the changelog dates it (`derived: ...`); a note naming a
  changelog section must name one of 1.0.1 … 1.1.2 whose section exists;
- the evidence's file must exist in its tag and hold the cited section heading.

Exits 1 listing the failures, 0 when all pass; skips (exit 0) when ../shared/spec-history
is absent. Usage: python3 tools/history/check_history.py [--repo DIR] [--spec-history DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spectext as st  # noqa: E402

DERIVED = ["1.0.0", "1.0.1", "1.0.2", "1.1.0", "1.1.1", "1.1.2"]
# Words in a note that explain why the previous release's text already has the term.
EXPLAINS_EARLIER = ("renamed", "moved", "stated without the term")


def found(root, version, kind, name, chapter=False, context=None):
    lit, mac = st.find_term(root, version, kind, name, context)
    ln = lit or mac
    if ln is None and kind == "file" and chapter:
        ln = st.combo_same_chapter(root, version, *name.split("/_", 1))
    return ln


def changelog_sections(root):
    out = set()
    with open(os.path.join(root, "CHANGES.md"), encoding="utf-8") as fh:
        for line in fh:
            m = re.match(r"^## \[?v?(\d+\.\d+\.\d+)", line)
            if m:
                out.add(m.group(1))
    return out


def check(root, terms):
    failures = []
    sections = changelog_sections(root)
    for e in terms:
        label = f"{e.get('kind')} {e.get('name')!r}"
        kind, name, since, note = e.get("kind"), e.get("name"), e.get("since"), e.get("note") or ""
        ctx = e.get("context")
        if since is None:
            if not note:
                failures.append(f"{label}: no version and no note saying why")
            continue
        if since not in st.VERSIONS:
            failures.append(f"{label}: since {since} is not a release")
            continue
        if since in DERIVED:
            if found(root, "1.1.2", kind, name, "stated in the chapter" in note, ctx) is None:
                failures.append(f"{label}: dated {since} but the v1.1.2 text does not state it")
            if not note.startswith("derived:"):
                failures.append(f"{label}: dated {since} (before the public text) without a 'derived:' note")
            m = re.search(r"changelog section (\d+\.\d+\.\d+) adds", note)
            if m and (m.group(1) not in DERIVED[1:] or m.group(1) not in sections):
                failures.append(f"{label}: note cites changelog section {m.group(1)}, not one of 1.0.1-1.1.2")
        else:
            chapter = "stated in the chapter" in note
            if found(root, since, kind, name, chapter, ctx) is None:
                failures.append(f"{label}: the v{since} text does not state it")
            prev = st.prev_version(since)
            if prev and found(root, prev, kind, name, chapter, ctx) is not None and not any(w in note for w in EXPLAINS_EARLIER):
                failures.append(f"{label}: dated {since} but the v{prev} text already states it")
        ev = e.get("evidence") or {}
        tag = ev.get("tag", "")
        if not tag.startswith("v") or tag[1:] not in st.TEXT_VERSIONS:
            failures.append(f"{label}: evidence tag {tag!r} is not a tag of the text")
            continue
        text = st.load_tag(root, tag[1:])
        if ev.get("file") not in text.files:
            failures.append(f"{label}: evidence file {ev.get('file')!r} is not in {tag}")
        elif ev.get("section") != "(top)" and not any(
                ln.file == ev["file"] and ln.section == ev.get("section") for ln in text.lines):
            failures.append(f"{label}: no section {ev.get('section')!r} in {tag} {ev['file']}")
    return failures


def check_checks(root, repo, recs, terms):
    """docs/history-checks.yaml against the tree and the text: each dated check's `since`
    is in the tree, is the latest text date of the terms it lists, and its evidence
    section exists; a kept check says why."""
    import yaml  # noqa: PLC0415 (the caller checked PyYAML is there)
    failures = []
    tree = {}
    for r in recs:
        path = os.path.join(repo, "schema", r["file"])
        if path not in tree:
            with open(path, encoding="utf-8") as fh:
                tree[path] = yaml.safe_load(fh) or {}
        label = f"check {r['check']} ({r['file']})"
        node = tree[path].get(r["check"])
        if not isinstance(node, dict):
            failures.append(f"{label}: not in the tree")
            continue
        if str(node.get("since")) != str(r["since"]):
            failures.append(f"{label}: the tree says since {node.get('since')}, the history {r['since']}")
        if r["verdict"] == "kept":
            if not r.get("note"):
                failures.append(f"{label}: kept at the tree's date without a reason")
            continue
        dates = [t.rsplit(": ", 1)[1] for t in r.get("terms", [])]
        if not dates or max(dates, key=st.vkey) != str(r["since"]):
            failures.append(f"{label}: since {r['since']} is not the latest date of its terms {dates}")
        ev = r.get("evidence") or {}
        tag = ev.get("tag", "")
        if not tag.startswith("v") or tag[1:] not in st.TEXT_VERSIONS:
            failures.append(f"{label}: evidence tag {tag!r} is not a tag of the text")
            continue
        text = st.load_tag(root, tag[1:])
        if not any(ln.file == ev.get("file") and ln.section == ev.get("section") for ln in text.lines):
            failures.append(f"{label}: no section {ev.get('section')!r} in {tag} {ev.get('file')}")
    return failures


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Check docs/history.yaml against the standard's text.")
    ap.add_argument("--repo", default=os.path.normpath(os.path.join(here, "..", "..")))
    ap.add_argument("--spec-history")
    ap.add_argument("--history", help="the history file (default: docs/history.yaml)")
    a = ap.parse_args()
    root = a.spec_history or st.text_root(a.repo)
    if not os.path.isdir(root):
        print("spec-history absent: skipped")
        return 0
    if st.yaml is None:
        print("PyYAML is needed: pip install pyyaml", file=sys.stderr)
        return 2
    path = a.history or os.path.join(a.repo, "docs", "history.yaml")
    with open(path, encoding="utf-8") as fh:
        data = st.yaml.safe_load(fh) or {}
    terms = data.get("terms") or []
    if not terms:
        print(f"{path}: no terms", file=sys.stderr)
        return 1
    failures = check(root, terms)
    checks_path = os.path.join(a.repo, "docs", "history-checks.yaml")
    recs = []
    if os.path.isfile(checks_path):
        with open(checks_path, encoding="utf-8") as fh:
            recs = (st.yaml.safe_load(fh) or {}).get("checks") or []
        failures += check_checks(root, a.repo, recs, terms)
    for f in failures:
        print(f"FAIL {f}")
    print(f"{len(terms)} terms and {len(recs)} checks checked, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

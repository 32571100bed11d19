#!/usr/bin/env python3
"""Applies the text dates of docs/history.yaml to the rule tree (issue 37, item 2).

Edits `schema/` in place, line by line: a `since:` key is inserted, replaced or removed on
the entry a term names, and nothing else of the file changes (comments, order, flow or
block style stay). Run it, then regenerate the history (`date_terms.py`) and check it:

    python3 tools/history/apply_dates.py [--dry-run]
    python3 tools/history/date_terms.py
    python3 tools/history/check_history.py

How each verdict is applied (the notes are read, not only the dates):
- agrees: nothing to do.
- text-earlier, undated: the text wins, the entry gets the text's version.
- text-later: the tree has no since (or an earlier one) but the text states the term only
  later. The text's version is applied, except for values whose note says the term may be
  stated otherwise before (one value name shared by several owners, such as `Other`): those
  keep the tree's date.
- not-in-text: left as the tree has it (the note says why: renamed, our own name, ...).
- A version of 1.0.0 means "always": an existing `since` is removed.

File rules (`rules/files/raw/*.yaml`) are not re-dated from their datatype/suffix pairs: the
loader drops from a rule the suffixes, datatypes, extensions, entities, fields and columns a
version does not define, so a pair is in force from the later of its datatype's and its
suffix's dates (and its rule's own since). The pair dates of the history are weak (a pair
counts only when a file name shows it in that folder; before the 1.5.0 macros many never
are, and several checked against the tags' schemas were artifacts: `anat/_T1map`,
`fmap/_TB1DAM`, `dwi/_physio`); the pairs whose text date differs from what the tree now
gives are listed (`--report`) for docs/history.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import defaultdict

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import spectext as st  # noqa: E402

ALWAYS = "1.0.0"


def vkey(v):
    return st.vkey(v)


# Terms whose text date was reviewed and rejected: the hit is another thing of that name.
KEEP = {
    ("metadata", "Format"): "the 1.2.1 hit is a header of the entity table; the field "
                            "describing a column's format is stated from 1.10.1",
    ("column", "message"): "a common word: the 1.9.0 hit is the CITATION.cff key, not the "
                           "column of eye-tracking events",
}


def decide(t):
    """The version the entry of term `t` should carry: a version, ALWAYS, or None (leave)."""
    verdict, since = t["verdict"], t.get("since")
    if (t["kind"], t["name"]) in KEEP:
        return None
    if verdict in ("agrees", "not-in-text") or since is None:
        return None
    if verdict == "text-later" and t["kind"] == "value" and t.get("tree_since") \
            and "stated otherwise before" in (t.get("note") or ""):
        return None
    return since


# ---------------------------------------------------------------- YAML line editing

KEY_RE = r'^(?:"{k}"|\'{k}\'|{k}):(?=\s|$)'


def find_entry(lines, key):
    """(start, end) line indices of the top-level entry `key` (end exclusive)."""
    pat = re.compile(KEY_RE.format(k=re.escape(key)))
    for i, line in enumerate(lines):
        if pat.match(line):
            j = i + 1
            while j < len(lines) and (lines[j].startswith((" ", "\t")) or not lines[j].strip()):
                j += 1
            # Trailing blank lines and comments belong to what follows.
            while j > i + 1 and (not lines[j - 1].strip() or lines[j - 1].lstrip().startswith("#")):
                j -= 1
            return i, j
    return None


def scan_flow(text, start):
    """Positions in `text` of the flow mapping opening at `start`: the closing brace, and
    the spans (begin, end) of each top-level `key: value` item."""
    depth, i, quote = 0, start, None
    items, item_start = [], start + 1
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                items.append((item_start, i))
                return i, items
        elif c == "," and depth == 1:
            items.append((item_start, i))
            item_start = i + 1
        i += 1
    raise ValueError("unbalanced flow mapping")


def edit_flow(text, start, version):
    """`text` with the top-level since of the flow mapping at `start` set (or removed)."""
    close, items = scan_flow(text, start)
    for b, e in items:
        if re.match(r"\s*since\s*:", text[b:e]):
            if version == ALWAYS:
                # Remove the item with the comma before it (or after it, when first).
                if b > start + 1:
                    return text[: b - 1] + text[e:]
                return text[:b] + text[e + 1:].lstrip(" ") if e < close else text[:b] + text[e:]
            return text[:b] + f' since: "{version}"' + text[e:]
    if version == ALWAYS:
        return text
    body = text[start + 1: close].rstrip()
    sep = ", " if body.strip() else ""
    return text[: start + 1] + body + f'{sep}since: "{version}"' + text[close:]


def edit_entry(lines, key, version):
    """Sets the since of the top-level entry `key` of a file's lines; False if absent."""
    found = find_entry(lines, key)
    if not found:
        return False
    i, j = found
    head = lines[i]
    rest = head.split(":", 1)[1] if not head.startswith(('"', "'")) else head[len(key) + 3:]
    block = "\n".join(lines[i:j])
    brace = None
    if rest.strip().startswith("{"):
        brace = block.index("{", len(head) - len(rest))
    elif not rest.strip():
        first = next((k for k in range(i + 1, j) if lines[k].strip()), None)
        if first is not None and lines[first].lstrip().startswith("{"):
            brace = block.index("{", sum(len(x) + 1 for x in lines[i:first]))
    if brace is not None:
        new = edit_flow(block, brace, version)
        lines[i:j] = new.split("\n")
        return True
    # Block mapping: children at the indent of the first child.
    kids = [k for k in range(i + 1, j) if lines[k].strip() and not lines[k].lstrip().startswith("#")]
    if not kids:
        return False
    indent = lines[kids[0]][: len(lines[kids[0]]) - len(lines[kids[0]].lstrip())]
    for k in kids:
        if lines[k].startswith(indent + "since:"):
            if version == ALWAYS:
                del lines[k]
            else:
                lines[k] = f'{indent}since: "{version}"'
            return True
    if version != ALWAYS:
        lines.insert(i + 1, f'{indent}since: "{version}"')
    return True


# ---------------------------------------------------------------- planning

def takes_date(t, loc, current):
    """Whether `loc`, one of several entries of a term (`group__channel`, `group__emg`),
    takes the term's text date: the undated ones do; when all are dated, the earliest.
    An entry the tree dates later (`group__emg`, 1.11.0) is a later, narrower meaning."""
    cur = {x: current(x) for x in t["tree"] if not re.search(r"[.\[]", x.split(": ", 1)[1])}
    if len(cur) < 2:
        return True
    if any(v is None for v in cur.values()):
        return cur[loc] is None
    first = min(cur.values(), key=vkey)
    return cur[loc] == first


def plan(history, schema_dir):
    """Entry (file, key) → version, and the pairs that cannot be pinned."""
    cache = {}

    def current(loc):
        f, key = loc.split(": ", 1)
        if f not in cache:
            cache[f] = yaml.safe_load(open(os.path.join(schema_dir, f), encoding="utf-8")) or {}
        return current_since(cache[f], key)

    want = defaultdict(set)
    why = {}
    groups = defaultdict(list)  # (file, key) of a file rule → [(pair term, decided)]
    skipped = []
    dated = {}
    for t in history:
        dated[(t["kind"], t["name"])] = t.get("since")
    for t in history:
        v = decide(t)
        for loc in t.get("tree") or []:
            f, key = loc.split(": ", 1)
            if t["kind"] == "file":
                groups[(f, key)].append(t)
                continue
            if "." in key or "[" in key:
                if v:
                    skipped.append((t, loc, "a list item of a group: dated with its group"))
                continue
            if v and len(t["tree"]) > 1 and t["kind"] != "toplevel" and not takes_date(t, loc, current):
                skipped.append((t, loc, "one name, several entries: the text date goes to "
                                "the entry the tree dates first"))
                continue
            if v:
                want[(f, key)].add(v)
                why[(f, key)] = t
    out = {}
    for loc, vs in want.items():
        out[loc] = min(vs, key=vkey)  # one entry for several terms: the earliest
    unpinned = []
    for loc, terms in groups.items():
        g = terms[0].get("tree_since") or ALWAYS
        for t in terms:
            s = t.get("since")
            if not s:
                continue
            dt, sfx = t["name"].split("/_", 1)
            eff = max([g, dated.get(("datatype", dt)) or ALWAYS,
                       dated.get(("suffix", sfx)) or ALWAYS], key=vkey)
            if vkey(s) != vkey(eff):
                unpinned.append((t["name"], s, eff, loc))
    return out, unpinned, skipped


def current_since(data, key):
    e = data.get(key)
    if isinstance(e, dict) and "since" in e:
        return str(e["since"])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", default=os.path.normpath(os.path.join(HERE, "..", "..")))
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--report", help="write the pairs that cannot be pinned (JSON) here")
    a = ap.parse_args()
    schema_dir = os.path.join(a.repo, "schema")
    history = yaml.safe_load(open(os.path.join(a.repo, "docs", "history.yaml"), encoding="utf-8"))["terms"]
    out, unpinned, skipped = plan(history, schema_dir)
    by_file = defaultdict(list)
    for (f, key), v in sorted(out.items()):
        by_file[f].append((key, v))
    changed = 0
    for f, entries in sorted(by_file.items()):
        path = os.path.join(schema_dir, f)
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        lines = text.split("\n")
        old = yaml.safe_load(text) or {}
        for key, v in entries:
            cur = current_since(old, key)
            before = list(lines)
            if not edit_entry(lines, key, v):
                sys.exit(f"{f}: no top-level entry {key}")
            if lines != before:
                changed += 1
                if a.dry_run:
                    print(f"{f}: {key}: {cur} -> {v if v != ALWAYS else '(always)'}")
        new = "\n".join(lines)
        if new != text and not a.dry_run:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(new)
            # The edit must leave valid YAML with exactly the intended dates.
            data = yaml.safe_load(new) or {}
            for key, v in entries:
                got = data.get(key, {}).get("since") if isinstance(data.get(key), dict) else None
                exp = None if v == ALWAYS else v
                if (str(got) if got is not None else None) != exp:
                    sys.exit(f"{f}: {key}: since is {got!r} after the edit, wanted {exp!r}")
    print(f"{changed} entries re-dated; {len(unpinned)} pairs stated later than their rule can say")
    if a.report:
        with open(a.report, "w", encoding="utf-8") as fh:
            json.dump([{"pair": p, "text": s, "pinned": e, "rule": f"{loc[0]}: {loc[1]}"}
                       for p, s, e, loc in sorted(unpinned)], fh, indent=1)


if __name__ == "__main__":
    main()

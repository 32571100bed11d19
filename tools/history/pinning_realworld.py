#!/usr/bin/env python3
"""Writes docs/pinning-realworld.md (issue 37, acceptance): every example of
../shared/conformance/examples and every dataset of its realworld/ corpus, validated with
no flags (the rules of the version it declares) and with `--std-version 1.11.1`; each
difference between the two reports is attributed to the dated item(s) of the bundled
tree that cause it (a `since` / `removed` / `deprecated` between the applied version and
1.11.1), with the item's evidence from docs/history.yaml when it is a term.

A difference is a (code, subCode, severity) group whose count differs between the runs.
It is explained when a dated item that changes between the applied version and 1.11.1
is named by the issues of the group: a check by its issue code, a term (datatype,
suffix, extension, entity, field, column, value, top-level file) by the subCode, the
message, or the file name of a location (its datatype folder, suffix, extension,
entities, top-level name).

    python3 tools/history/pinning_realworld.py [--bin target/release/nidos] [--check] [--tree]

`--check`: exits 1 when a difference is unexplained or the file on disk differs from
what would be written (stale). Skips (exit 0) when ../shared/conformance is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import spectext as st  # noqa: E402

NEWEST = st.VERSIONS[-1]
OUT = os.path.join(REPO, "docs", "pinning-realworld.md")
SCHEMA = os.path.join(REPO, "schema")
READ_TREE = False
LIFE = ("since", "deprecated", "removed")


def vkey(v):
    return st.vkey(v)


# ---------------------------------------------------------------- the dated tree

class Item:
    """One mapping entry of the tree that carries a lifecycle annotation."""

    def __init__(self, file, path, key, node):
        self.file = file          # relative to schema/
        self.path = path          # dotted path of the entry in its file
        self.key = key
        self.life = {k: str(node[k]) for k in LIFE if k in node and isinstance(node[k], str)}
        issue = node.get("issue") if isinstance(node.get("issue"), dict) else {}
        self.code = issue.get("code")
        # Every issue code the entry defines, its own or a nested one's (a column's
        # deprecated value).
        self.codes = set(codes_in(node))
        names = {str(key).split("__")[0]}
        for k in ("value", "name"):
            if isinstance(node.get(k), str):
                names.add(node[k])
        self.kind = kind_of(file, path)
        if self.kind == "file rule":
            # A file rule is named by the datatypes and suffixes it lists.
            for k in ("suffixes", "datatypes"):
                if isinstance(node.get(k), list):
                    names.update(x for x in node[k] if isinstance(x, str))
        self.names = {n for n in names if n}

    def changes_between(self, lo, hi):
        """The annotations in (lo, hi]: what makes the rules of `lo` and `hi` differ."""
        return {k: v for k, v in self.life.items() if vkey(lo) < vkey(v) <= vkey(hi)}

    def label(self):
        return f"{self.kind} `{sorted(self.names)[0] if self.kind != 'check' else self.key}`"


def codes_in(node):
    if isinstance(node, dict):
        if isinstance(node.get("issue"), dict) and isinstance(node["issue"].get("code"), str):
            yield node["issue"]["code"]
        for v in node.values():
            yield from codes_in(v)
    elif isinstance(node, list):
        for v in node:
            yield from codes_in(v)


def kind_of(file, path):
    depth = path.count(".")
    if file.startswith("objects/") and depth == 0:
        return {
            "objects/datatypes.yaml": "datatype", "objects/suffixes.yaml": "suffix",
            "objects/entities.yaml": "entity", "objects/extensions.yaml": "extension",
            "objects/metadata.yaml": "field", "objects/columns.yaml": "column",
            "objects/enums.yaml": "value", "objects/files.yaml": "top-level file",
        }.get(file, "object")
    if file.startswith("objects/enums.yaml"):
        return "value"
    if file.startswith("rules/checks/"):
        return "check"
    if file.startswith("rules/files/"):
        return "file rule"
    if file.startswith(("rules/sidecars/", "rules/json/", "rules/dataset_metadata")):
        return "field rule"
    if file.startswith("rules/tabular_data/"):
        return "column rule"
    return "rule"


def load_items(schema_dir):
    items = []

    def walk(node, file, path, owner):
        if isinstance(node, dict):
            for k, v in node.items():
                p = f"{path}.{k}" if path else str(k)
                if isinstance(v, dict) and any(isinstance(v.get(x), str) for x in LIFE):
                    items.append(Item(file, p, k, v))
                walk(v, file, p, k)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                p = f"{path}[{i}]"
                if isinstance(v, dict) and any(isinstance(v.get(x), str) for x in LIFE):
                    # A list item: an enum value, or one form of a field whose level
                    # changed over time (named by the field, its owner).
                    key = v.get("value") or v.get("name") or owner
                    items.append(Item(file, p, key, v))
                walk(v, file, p, owner)

    for dirpath, _, files in os.walk(schema_dir):
        for fn in sorted(files):
            if not fn.endswith(".yaml") or fn == "version.yaml":
                continue
            full = os.path.join(dirpath, fn)
            rel = os.path.relpath(full, schema_dir).replace(os.sep, "/")
            with open(full, encoding="utf-8") as fh:
                walk(yaml.safe_load(fh) or {}, rel, "", "")
    return items


def load_evidence():
    """(tree location) → history entry, e.g. 'objects/datatypes.yaml: eeg'."""
    with open(os.path.join(REPO, "docs", "history.yaml"), encoding="utf-8") as fh:
        terms = (yaml.safe_load(fh) or {}).get("terms", [])
    out = {}
    for t in terms:
        for where in t.get("tree") or []:
            out[where] = t
    return out


def text_since(item, evidence):
    """The version the text first states the item in (docs/history.yaml), when dated."""
    t = evidence.get(f"{item.file}: {item.path}")
    return str(t["since"]) if t and t.get("since") else None


def evidence_of(item, evidence):
    t = evidence.get(f"{item.file}: {item.path}")
    if not t or not t.get("evidence"):
        return ""
    e = t["evidence"]
    return f"{e.get('tag')} `{e.get('file')}` § {e.get('section')}"


# ---------------------------------------------------------------- the runs

def run(bin_path, ds, config, newest):
    cmd = [bin_path, "validate", ds, "--format", "json"]
    if config:
        cmd += ["--config", config]
    if newest:
        cmd += ["--std-version", NEWEST]
    # `--tree`: the rules read from this checkout's `schema/` (as `conformance --std` does),
    # for a binary built before an edit of the tree (slower: the tree is parsed per run);
    # else the binary's embedded rules. The two give the same report for the same tree.
    env = {**os.environ, "NIDOS_SCHEMA_DIR": SCHEMA if READ_TREE else ""}
    p = subprocess.run(cmd, capture_output=True, env=env)
    if p.returncode not in (0, 16):
        raise SystemExit(f"nidos exited with {p.returncode} on {ds}: {p.stderr.decode(errors='replace')}")
    return json.loads(p.stdout)


def applied_version(report):
    for key in ("standardVersion",):
        v = report.get("summary", {}).get(key)
        if isinstance(v, str):
            return v
    return None


def issues_of(report):
    return report.get("issues", {}).get("issues", [])


def group_key(i):
    return (i.get("code", ""), i.get("subCode") or "", i.get("severity", ""))


WORD = re.compile(r"[A-Za-z0-9_.+-]+")
# Which kinds of dated item a name of each part of an issue can be.
SUBCODE_KINDS = {"field", "column", "value", "field rule", "column rule"}
PATH_KINDS = {"datatype", "suffix", "extension", "entity", "top-level file", "file rule", "value"}


def path_names(issues):
    """The names the file of each location shows: its top-level entry, datatype folder,
    suffix, extensions, entity keys and labels."""
    out = set()
    for i in issues:
        loc = (i.get("location") or "").strip("/")
        parts = [p for p in loc.split("/") if p]
        if not parts:
            continue
        out.add(parts[0])
        out.add(parts[0] + "/")
        out.update(parts[:-1])
        for base in parts:
            stem, dot, rest = base.partition(".")
            if dot:
                out.add("." + rest)
                out.add("." + rest + "/")
                out.update("." + e for e in rest.split(".") if e)
            chunks = stem.split("_")
            out.add(stem)
            out.add(chunks[-1])
            for c in chunks:
                if "-" in c:
                    out.update(c.split("-", 1))
    out.discard("")
    return out


QUOTED = re.compile(r"""["']([^"']+)["']""")
IDENT = re.compile(r"\b(?:sidecar|columns|associations)\.([A-Za-z_][A-Za-z0-9_]*)")


def selector_names(place, schema_dir):
    """The quoted strings and sidecar / column names of a rule's selectors."""
    rel, path = place
    with open(os.path.join(schema_dir, rel), encoding="utf-8") as fh:
        node = yaml.safe_load(fh) or {}
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    sels = node.get("selectors") if isinstance(node, dict) else None
    out = set()
    for sel in sels if isinstance(sels, list) else []:
        if isinstance(sel, str):
            out.update(QUOTED.findall(sel))
            out.update(IDENT.findall(sel))
    return out


def rule_place(rule, schema_dir):
    """`rules.sidecars.mri.MRIHardware` → ('rules/sidecars/mri.yaml', 'MRIHardware')."""
    parts = (rule or "").split(".")
    for cut in range(len(parts) - 1, 0, -1):
        rel = "/".join(parts[:cut]) + ".yaml"
        if os.path.isfile(os.path.join(schema_dir, rel)):
            return rel, ".".join(parts[cut:])
    return None


DEFINED_FROM = re.compile(r"defined from version (\d+\.\d+\.\d+)")


def attribute(issues, items, lo, hi, schema_dir):
    """The dated items that change in (lo, hi] and that cause the issues, and how they
    were found: `rule` (the issue's rule, or a field of it named by the subCode, is
    dated), `code` (a dated check with the issue's code), `name` (a dated term the
    subCode, message or file name names; a message saying `defined from version V`
    needs the term's `since` to be V)."""
    live = [(it, it.changes_between(lo, hi)) for it in items]
    live = [(it, ch) for it, ch in live if ch]
    # 1. The issue's own rule, or the field / column of it the subCode names.
    places = {rule_place(i.get("rule"), schema_dir) for i in issues} - {None}
    subs = {i.get("subCode") for i in issues if i.get("subCode")}
    by_rule = []
    for it, ch in live:
        for rel, path in places:
            if it.file != rel:
                continue
            if it.path == path:
                by_rule.append((it, ch))
            elif it.path.startswith(path + ".") and (it.names & subs or not subs):
                by_rule.append((it, ch))
    if by_rule:
        return by_rule, "rule"
    # 2. A dated entry that defines the issue's code (a check, a column's value).
    codes = {i.get("code") for i in issues}
    by_code = [(it, ch) for it, ch in live if it.codes & codes]
    if by_code:
        return by_code, "code"
    # 3. A dated datatype, suffix, extension, field or column the issue's rule selects
    # on (a rule for anatomical images of datasets that hold MEG, ...).
    named = set()
    for place in places:
        named |= selector_names(place, schema_dir)
    by_sel = [(it, ch) for it, ch in live
              if it.kind in ("datatype", "suffix", "extension", "field", "column") and it.names & named]
    if by_sel:
        return by_sel, "selector"
    # 3. A dated term the issues name: a field, column or value by the subCode; a
    # datatype, suffix, extension, entity or top-level file by the location's file
    # name (a file a version does not define is not included, and then not checked
    # further); a message saying `defined from version V` names the term dated V.
    said = {m for i in issues for m in DEFINED_FROM.findall(i.get("issueMessage") or "")}
    paths = path_names(issues)
    if said:
        for i in issues:
            head = (i.get("issueMessage") or "").split(" is defined from")[0]
            paths |= {w.lower() for w in WORD.findall(head)} | set(WORD.findall(head))
    by_sub, by_path = [], []
    for it, ch in live:
        if said and it.life.get("since") not in said:
            continue
        if it.kind in SUBCODE_KINDS and it.names & subs:
            by_sub.append((it, ch))
        elif it.kind in PATH_KINDS and it.names & paths:
            by_path.append((it, ch))
    # The subCode names the field or column; the file name only when it names none.
    if by_sub:
        return by_sub, "subCode"
    return by_path, "file name"


# ---------------------------------------------------------------- the report

def datasets(conf):
    out = []
    ex = os.path.join(conf, "examples")
    for name in sorted(os.listdir(ex)):
        if os.path.isdir(os.path.join(ex, name)):
            out.append(("examples", name, os.path.join(ex, name)))
    rw = os.path.join(conf, "realworld", "datasets")
    if os.path.isdir(rw):
        for name in sorted(os.listdir(rw)):
            if os.path.isdir(os.path.join(rw, name)):
                out.append(("realworld", name, os.path.join(rw, name)))
    return out


def declared(ds):
    try:
        with open(os.path.join(ds, "dataset_description.json"), encoding="utf-8") as fh:
            d = json.load(fh)
    except (OSError, ValueError):
        return None
    for k, v in d.items() if isinstance(d, dict) else []:
        if k.endswith("Version") and k not in ("HEDVersion",):
            return str(v)
    return None


def stem_of(location):
    """A location without its extensions (`/sub-01/micr/x_SPIM.ome.zarr/0/` → `/sub-01/micr/x_SPIM`)."""
    parts = location.strip("/").split("/")
    depth = next((k for k, p in enumerate(parts) if "." in p), len(parts) - 1)
    return "/".join(parts[:depth] + [parts[depth].split(".")[0]]) if parts else ""


def esc(s):
    return str(s).replace("|", "\\|")


def compare(bin_path, conf, entry, items, evidence):
    corpus, name, ds = entry
    config = os.path.join(conf, "examples", "default-config.json")
    old = run(bin_path, ds, config, newest=False)
    new = run(bin_path, ds, config, newest=True)
    applied = applied_version(old) or NEWEST
    go, gn = {}, {}
    for i in issues_of(old):
        go.setdefault(group_key(i), []).append(i)
    for i in issues_of(new):
        gn.setdefault(group_key(i), []).append(i)
    not_included = go.get(("NOT_INCLUDED", "", "error"), [])
    rows = []
    for key in sorted(set(go) | set(gn)):
        a, b = go.get(key, []), gn.get(key, [])
        ca = Counter(i.get("location", "") for i in a)
        cb = Counter(i.get("location", "") for i in b)
        if ca == cb:
            continue
        only_old = [i for i in a if ca[i.get("location", "")] > cb[i.get("location", "")]]
        only_new = [i for i in b if cb[i.get("location", "")] > ca[i.get("location", "")]]
        diff = only_old + only_new
        found, how = attribute(diff, items, applied, NEWEST, SCHEMA) if applied != NEWEST else ([], "")
        if not found and applied != NEWEST:
            # A file whose data file (same name up to the extension) the declared
            # version does not include: explained as that file's NOT_INCLUDED is.
            stems = {stem_of(i.get("location", "")) for i in diff}
            kin = [i for i in not_included if stem_of(i.get("location", "")) in stems]
            if kin:
                found, how = attribute(kin, items, applied, NEWEST, SCHEMA)
                how = "its data file " + how if found else how
        rows.append({
            "code": key[0], "subCode": key[1], "severity": key[2],
            "old": sum((ca - cb).values()), "new": sum((cb - ca).values()),
            "found": found, "how": how,
            "said": sorted({m for i in diff for m in DEFINED_FROM.findall(i.get("issueMessage") or "")}),
            "example": (diff[0].get("location") or "") if diff else "",
        })
    return {
        "corpus": corpus, "name": name, "declared": declared(ds), "applied": applied,
        "n_old": len(issues_of(old)), "n_new": len(issues_of(new)), "rows": rows,
    }


def render(results, evidence):
    lines = [
        "# Pinned rules on the examples and real-world datasets",
        "",
        "Generated by `tools/history/pinning_realworld.py` (issue 37, acceptance): do not edit by",
        "hand. Each dataset of `../shared/conformance/examples` and `realworld/datasets` is",
        "validated with no flags (the rules of the version it declares, read as a person means",
        f"it) and with `--std-version {NEWEST}`, both with the examples' `default-config.json`.",
        "Every difference between the two reports, by (code, subCode, severity) and location,",
        "is listed with the dated item(s) of the bundled tree that cause it: an annotation",
        f"(`since`, `deprecated`, `removed`) after the applied version and at or before {NEWEST}",
        "that the issues name (a check by its code; a term by the subCode, the message or the",
        "file name). Evidence is the text's statement from `docs/history.yaml` for terms.",
        "`old`: issues only the declared version's run reports; `new`: only the newest run's.",
        "",
        "`by` says how the item was found: `rule` (the issue's own rule, or the field or column",
        "of it the subCode names, is dated), `code` (a dated entry defines the issue's code),",
        "`selector` (the issue's rule selects on a dated datatype, suffix, extension, field or",
        "column: e.g. a rule for the anatomical images of datasets holding MEG), `subCode` (the",
        "field or column the subCode names is dated), `file name` (the location's datatype",
        "folder, suffix, extension, entity or top-level name is dated: a file the version does",
        "not define is not included, and not checked further), `its data file …` (a sidecar",
        "whose data file the version does not include). An issue that says `defined from",
        "version V` is attributed only to items dated V, and V is checked against the text below.",
        "",
        "Checked against the text while building this (issue 37): a `README.rst` or `README.md`",
        "is not included in datasets declaring 1.7.0 or earlier. That is the text: up to v1.7.0",
        "the `README` section names the file without an extension; the changelog's 1.8.0",
        "section allows README extensions, and `.rst` is first stated by the v1.8.0 text",
        "(`03-modality-agnostic-files.md` § `README`). A real change, not a dating error.",
        "",
    ]
    unexplained = sum(1 for r in results for row in r["rows"] if not row["found"])
    # Each "defined from version V" an issue says, against the text's date of the item.
    claims = {}
    for r in results:
        for row in r["rows"]:
            for v in row["said"]:
                for it, _ in row["found"]:
                    if it.life.get("since") != v:
                        continue
                    ts = text_since(it, evidence)
                    claims.setdefault((v, it.label(), it.file, ts), []).append(r["name"])
    wrong = [k for k in claims if k[3] is not None and k[3] != k[0]]
    unexplained += len(wrong)
    differing = [r for r in results if r["rows"]]
    lines += [
        "## Summary",
        "",
        f"{len(results)} datasets; {len(differing)} whose two reports differ; "
        f"{sum(len(r['rows']) for r in results)} differences; {unexplained} unexplained.",
        "",
        "| corpus | dataset | declared | applied | issues (declared) | issues (newest) | differences |",
        "|---|---|---|---|---:|---:|---:|",
    ]
    for r in results:
        lines.append(f"| {r['corpus']} | {r['name']} | {esc(r['declared'] or '-')} | {r['applied']} "
                     f"| {r['n_old']} | {r['n_new']} | {len(r['rows'])} |")
    lines += [
        "",
        "## What the issues say a version introduced",
        "",
        "Each `defined from version V` an issue of a declared-version run says, with the",
        "item it names and the version whose text first states it (docs/history.yaml; `-`:",
        "not a term the history dates, such as a file rule dated by its datatype and",
        "suffix). A text date other than V would be a claim the text contradicts.",
        "",
        "| the issue says | item | text since | datasets |",
        "|---|---|---|---|",
    ]
    for (v, label, file, ts) in sorted(claims, key=lambda k: (vkey(k[0]), k[1])):
        verdict = ts or "-"
        if ts is not None and ts != v:
            verdict = f"**{ts}: the text says otherwise**"
        names = sorted(set(claims[(v, label, file, ts)]))
        lines.append(f"| {v} | {esc(label)} (`{file}`) | {verdict} | {esc(', '.join(names))} |")
    lines += ["", "## Differences", ""]
    for r in differing:
        lines += [f"### {r['corpus']}/{r['name']} (declares {esc(r['declared'] or '-')}, "
                  f"rules of {r['applied']})", "",
                  "| code | subCode | severity | old | new | by | item and its versions | evidence |",
                  "|---|---|---|---:|---:|---|---|---|"]
        for row in r["rows"]:
            if row["found"]:
                item = "; ".join(
                    f"{it.label()} ({', '.join(f'{k} {v}' for k, v in sorted(ch.items()))}; "
                    f"`{it.file}`)" for it, ch in row["found"][:4])
                if len(row["found"]) > 4:
                    item += f"; and {len(row['found']) - 4} more"
                ev = "; ".join(e for e in (evidence_of(it, evidence) for it, _ in row["found"][:4]) if e)
            else:
                item = f"**unexplained** (e.g. `{esc(row['example'])}`)"
                ev = ""
            lines.append(f"| {row['code']} | {esc(row['subCode'])} | {row['severity']} | {row['old']} "
                         f"| {row['new']} | {row['how'] if row['found'] else ''} | {esc(item)} | {esc(ev)} |")
        lines.append("")
    return "\n".join(lines), unexplained


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release", "nidos"))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--tree", action="store_true",
                    help="read the rules from schema/ instead of the binary's embedded ones")
    args = ap.parse_args()
    global READ_TREE
    READ_TREE = args.tree
    conf = os.path.normpath(os.path.join(REPO, "..", "shared", "conformance"))
    if not os.path.isdir(os.path.join(conf, "examples")):
        print(f"skipped: {conf} is absent")
        return 0
    items = load_items(os.path.join(REPO, "schema"))
    evidence = load_evidence()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda e: compare(args.bin, conf, e, items, evidence), datasets(conf)))
    text, unexplained = render(results, evidence)
    if args.check:
        ok = True
        if unexplained:
            print(f"pinning-realworld: {unexplained} difference(s) unexplained (see {args.out})")
            ok = False
        try:
            with open(args.out, encoding="utf-8") as fh:
                current = fh.read()
        except OSError:
            current = None
        if current != text:
            print(f"pinning-realworld: {args.out} is stale: run python3 tools/history/pinning_realworld.py")
            ok = False
        if not ok:
            return 1
        print(f"pinning-realworld: {len(results)} datasets, every difference explained")
        return 0
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"wrote {args.out}: {len(results)} datasets, {unexplained} unexplained difference(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

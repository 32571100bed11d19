#!/usr/bin/env python3
"""Requirement levels that changed over time (issue 37, item 3): compares the level of
every field and column of the standard's rules (`rules/sidecars`, `rules/json`,
`rules/tabular_data`, `rules/dataset_metadata.yaml`) between adjacent release tags of
../shared/spec-history (v1.8.0 on: the tags whose schema has these rules; from v1.5.0 on
the text renders its tables from that schema, so the schema is the text), and writes each
change into the bundled tree as a field given by its versioned forms:

    TotalReadoutTime: [{level: required, removed: "1.10.1"}, {level: optional, since: "1.10.1"}]

(`crates/nidos-schema/src/lifecycle.rs` keeps the one form alive at a pinned version).
Only block-style entries (`    Field: level` on a line of its own, in a rule of the same
name as upstream's) whose level in our tree is the newer one are rewritten; the others
are listed. Writes docs/level-history.md with every change and what was done with it.

    python3 tools/history/level_history.py [--dry-run]
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import spectext as st  # noqa: E402

TAGS = ["1.8.0", "1.9.0", "1.10.0", "1.10.1", "1.11.0", "1.11.1"]
LEVELS = {"required", "recommended", "optional", "deprecated"}
OUT = os.path.join(REPO, "docs", "level-history.md")


# Changes not written into the tree, each with the reason (rule file, rule, name).
KEEP = {
    ("sidecars/dwi.yaml", "MRIDiffusionMultipart", "MultipartID"):
        "kept optional: the v1.8.0 table that says required sits under the multipart-scheme "
        "section (required of multipart runs only), which a rule for every dwi cannot say",
    ("sidecars/continuous.yaml", "PhysioHardware", "DeviceSerialNumber"):
        "kept: the tree dates the rule 1.11.0, so the earlier form would never apply",
    ("sidecars/continuous.yaml", "PhysioHardware", "Manufacturer"):
        "kept: the tree dates the rule 1.11.0, so the earlier form would never apply",
    ("sidecars/continuous.yaml", "PhysioHardware", "ManufacturersModelName"):
        "kept: the tree dates the rule 1.11.0, so the earlier form would never apply",
    ("sidecars/continuous.yaml", "PhysioHardware", "SoftwareVersions"):
        "kept: the tree dates the rule 1.11.0, so the earlier form would never apply",
    ("dataset_metadata.yaml", "dataset_description", "Authors"):
        "kept: the tree words Authors as optional with the NO_AUTHORS check (recommended "
        "when there is no CITATION.cff), not one level",
}


# Changes the tags' Markdown tables show before the schema had rules (v1.1.2 to v1.7.0),
# found by comparing each chapter's table rows between adjacent tags, written in the tree
# by hand: (version, rule file, rule, name, before, from then, evidence).
TEXT_CHANGES = [
    ("1.4.1", "tabular_data/ieeg.yaml", "iEEGElectrodes", name, "optional", "recommended",
     "v1.4.0 / v1.4.1 `04-modality-specific-files/04-intracranial-electroencephalography.md` "
     "§ Electrode description (`*_electrodes.tsv`)")
    for name in ("material", "manufacturer", "hemisphere")
]


def plain(level):
    """The level word of a schema level (`recommended, but required if …` → recommended)."""
    if not isinstance(level, str):
        return None
    w = level.strip().split(",")[0].split()[0].lower() if level.strip() else ""
    return w if w in LEVELS else None


def levels_at(root, tag):
    out = {}
    base = os.path.join(root, f"v{tag}", "src", "schema", "rules")
    files = glob.glob(os.path.join(base, "sidecars", "**", "*.yaml"), recursive=True)
    files += glob.glob(os.path.join(base, "json", "**", "*.yaml"), recursive=True)
    files += glob.glob(os.path.join(base, "tabular_data", "**", "*.yaml"), recursive=True)
    files += [os.path.join(base, "dataset_metadata.yaml")]
    for f in files:
        if not os.path.isfile(f):
            continue
        with open(f, encoding="utf-8") as fh:
            data = yaml.safe_load(fh) or {}
        rel = os.path.relpath(f, base).replace(os.sep, "/")
        for rule, body in data.items():
            if not isinstance(body, dict):
                continue
            for key in ("fields", "columns"):
                for name, spec in (body.get(key) or {}).items():
                    lv = spec if isinstance(spec, str) else (spec.get("level") if isinstance(spec, dict) else None)
                    if plain(lv):
                        out[(rel, rule, key, name)] = plain(lv)
    return out


def changes(root):
    out = []
    prev = levels_at(root, TAGS[0])
    for tag in TAGS[1:]:
        cur = levels_at(root, tag)
        for k, lv in sorted(cur.items()):
            if k in prev and prev[k] != lv:
                out.append((tag, k, prev[k], lv))
        prev = cur
    return out


def expand_flow(lines, start, end, section):
    """Writes a rule's one-line `fields: {A: required, B: optional}` as a block (one entry a
    line), when every value is a plain level, so an entry can be versioned on its line."""
    for i in range(start + 1, end):
        m = re.match(rf"^(\s+){section}:\s*(\{{.*\}})\s*$", lines[i])
        if not m:
            continue
        try:
            flow = yaml.safe_load(m.group(2))
        except yaml.YAMLError:
            return
        if not isinstance(flow, dict) or not all(isinstance(v, str) and v in LEVELS for v in flow.values()):
            return
        ind = m.group(1)
        lines[i:i + 1] = [f"{ind}{section}:"] + [f"{ind}  {k}: {v}" for k, v in flow.items()]
        return


def rewrite(schema_dir, tag, key, old, new, dry):
    """Rewrites the entry in our tree; returns what was done."""
    rel, rule, section, name = key
    if (rel, rule, name) in KEEP:
        return KEEP[(rel, rule, name)]
    path = os.path.join(schema_dir, "rules", rel)
    if not os.path.isfile(path):
        return "not in the tree (no such rule file)"
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    start = next((i for i, ln in enumerate(lines) if ln == f"{rule}:"), None)
    if start is None:
        return f"not in the tree (no rule `{rule}`)"
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i].startswith(" ")), len(lines))
    expand_flow(lines, start, end, section)
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i].startswith(" ")), len(lines))
    pat = re.compile(rf"^(\s+){re.escape(name)}:\s*(\S+)\s*$")
    for i in range(start + 1, end):
        m = pat.match(lines[i])
        if not m:
            if re.match(rf"^\s+{re.escape(name)}:\s*\[", lines[i]):
                return "versioned"
            continue
        cur = m.group(2)
        if cur == old and cur != new:
            return f"the tree has the older level ({cur}): left alone"
        if cur != new:
            return f"the tree has {cur}: left alone"
        lines[i] = (f'{m.group(1)}{name}: [{{level: {old}, removed: "{tag}"}}, '
                    f'{{level: {new}, since: "{tag}"}}]')
        if not dry:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("\n".join(lines))
        return "versioned"
    return "not a block-style entry of the rule in the tree: left alone"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()
    root = st.text_root(REPO)
    if not os.path.isdir(root):
        print(f"skipped: {root} is absent")
        return 0
    schema_dir = os.path.join(REPO, "schema")
    rows = []
    for tag, key, old, new in changes(root):
        done = rewrite(schema_dir, tag, key, old, new, args.dry_run)
        rows.append((tag, key, old, new, done))
        print(f"{tag} {key[0]} {key[1]}.{key[3]}: {old} -> {new}: {done}")
    md = [
        "# Requirement levels that changed between versions",
        "",
        "Generated by `tools/history/level_history.py` (issue 37, item 3): do not edit by hand.",
        "Each change of a field's or column's requirement level between adjacent release tags",
        "of the standard's schema (v1.8.0 on; from v1.5.0 the text renders its tables from the",
        "tag's schema, so the schema states what the text states), and what the bundled tree",
        "does with it: `versioned` means the entry is written as its forms, each with its",
        "versions, so each pinned rule set has the level of its own version.",
        "",
        "| version | rule file | rule | field or column | before | from then | in the tree |",
        "|---|---|---|---|---|---|---|",
    ]
    for tag, (rel, rule, _sec, name), old, new, done in rows:
        md.append(f"| {tag} | `{rel}` | {rule} | `{name}` | {old} | {new} | {done} |")
    md += [
        "",
        "## From the text's tables (before the schema had rules)",
        "",
        "Levels in the Markdown tables of v1.1.2 to v1.7.0 compared between adjacent tags, chapter",
        "by chapter (`TEXT_CHANGES` in the tool); written into the tree by hand.",
        "",
        "| version | rule file | rule | field or column | before | from then | evidence |",
        "|---|---|---|---|---|---|---|",
    ]
    for tag, rel, rule, name, old, new, ev in TEXT_CHANGES:
        md.append(f"| {tag} | `{rel}` | {rule} | `{name}` | {old} | {new} | {ev} |")
    md.append("")
    if not args.dry_run:
        with open(OUT, "w", encoding="utf-8") as fh:
            fh.write("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())

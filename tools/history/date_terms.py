#!/usr/bin/env python3
"""Date every term of the bundled rule tree by the standard's text (issue 37, item 2).

Reads the tree (`schema/objects/*.yaml`, `schema/rules/files/**`) and the standard's text at
every release tag (`../shared/spec-history/vX/src/`, see spectext.py), and writes:

- `docs/history.yaml`: one entry per term (kind, name, since by the text, evidence,
  the tree's since, verdict, note);
- `docs/history.md`: the same as readable tables, with the method, the versions and the
  spot checks of the issue.

Versions 1.0.0 to 1.1.1 predate the public text: a term the v1.1.2 text states is dated by
the changelog sections 1.0.1 … 1.1.2 (the table CHANGELOG_ADDED below, written by reading
them), MEG-only terms by the MEG merge of 1.1.0, and otherwise 1.0.0.

Usage: python3 tools/history/date_terms.py [--repo DIR] [--spec-history DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spectext as st  # noqa: E402

try:
    import yaml
except ImportError:
    sys.exit("PyYAML is needed: pip install pyyaml")

# Where the machine-readable history goes. Not under schema/: the build embeds every file
# of schema/ and reads every `since:` there as a lifecycle annotation (nidos-schema
# lifecycle.rs, changes.rs), so the history's entries would be pinned per version and
# counted as changes of the rules.
HISTORY_YAML = ("docs", "history.yaml")

KINDS = ["datatype", "suffix", "entity", "extension", "metadata", "column", "value", "toplevel", "file"]
KIND_TITLES = {
    "datatype": "Datatypes", "suffix": "Suffixes", "entity": "Entities", "extension": "Extensions",
    "metadata": "Metadata fields", "column": "Columns", "value": "Enumerated values",
    "toplevel": "Top-level files and folders", "file": "File rules (datatype folder / suffix)",
}

# What the changelog sections 1.0.1 … 1.1.2 say was added, as terms of the tree.
# (1.0.1 includes its release candidate 1.0.1-rc1.) Read from CHANGES.md by hand.
CHANGELOG_ADDED = {
    "1.0.1": [
        ("suffix", "T1rho", "T1 Rho maps"), ("suffix", "PDmap", "quantitative proton density maps"),
        ("toplevel", "phenotype/", "phenotypic information in several files"),
        ("datatype", "phenotype", "phenotypic information in several files"),
        ("metadata", "SoftwareVersions", ""), ("metadata", "InversionTime", ""),
        ("column", "trial_type", ""), ("toplevel", "stimuli/", "storing stimuli files"),
        ("column", "stim_file", "storing stimuli files (the column that names them)"),
        ("metadata", "InstitutionName", ""), ("metadata", "InstitutionAddress", ""),
        ("metadata", "DeviceSerialNumber", ""), ("metadata", "NumberOfVolumesDiscardedByUser", ""),
        ("metadata", "NumberOfVolumesDiscardedByScanner", ""),
    ],
    "1.0.2": [
        ("suffix", "T2star", "high resolution T2star images"),
        ("entity", "mod", "several defacing masks"),
        ("entity", "ce", "contrast enhanced structural scans"),
        ("metadata", "ContrastBolusIngredient", "contrast enhanced structural scans (its metadata field)"),
        ("metadata", "DelayTime", ""), ("entity", "echo", "multi echo BOLD"),
    ],
    "1.1.0": [
        ("datatype", "meg", "MEG support"), ("metadata", "SequenceName", ""),
        ("column", "HED", "Hierarchical Event Descriptors"), ("metadata", "VolumeTiming", ""),
        ("metadata", "AcquisitionDuration", ""), ("metadata", "DwellTime", ""),
    ],
    "1.1.1": [
        ("metadata", "CapManufacturer", ""), ("metadata", "CapManufacturersModelName", ""),
    ],
    "1.1.2": [
        ("suffix", "cbv", "CBV contrast"),
    ],
}
# Files of the v1.1.2 text that only describe MEG (merged in 1.1.0).
MEG_FILES = {
    "04-modality-specific-files/02-magnetoencephalography.md",
    "99-appendices/06-meg-file-formats.md",
    "99-appendices/07-meg-systems.md",
    "99-appendices/08-coordinate-systems.md",
}
NEUTRAL_FILES = {"99-appendices/04-entity-table.md"}

# Spot checks the issue names: (kind, name, expected text version).
SPOT_CHECKS = [
    ("datatype", "eeg", "1.2.0"), ("file", "eeg/_electrodes", "1.2.0"), ("file", "eeg/_coordsystem", "1.2.0"),
    ("datatype", "meg", "1.1.0"), ("datatype", "ieeg", "1.2.0"),
    ("toplevel", "phenotype/", "1.0.1"), ("toplevel", "stimuli/", "1.0.1"), ("column", "stim_file", "1.0.1"),
]


# ---------------------------------------------------------------- the tree

def load_yaml(path):
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh) or {}


def life(entry, inherited=None):
    out = dict(inherited or {})
    if isinstance(entry, dict):
        for k in ("since", "deprecated", "removed"):
            if k in entry:
                out[k] = str(entry[k])
    return out


class Terms:
    def __init__(self):
        self.items = {}

    def add(self, kind, name, where, lc):
        key = (kind, name)
        t = self.items.setdefault(key, {"kind": kind, "name": name, "where": [], "since": [], "deprecated": None, "removed": None})
        t["where"].append(where)
        t["since"].append(lc.get("since"))
        for k in ("deprecated", "removed"):
            if lc.get(k):
                t[k] = lc[k]


def collect(schema_dir):
    terms = Terms()
    obj = lambda n: load_yaml(os.path.join(schema_dir, "objects", n + ".yaml"))  # noqa: E731
    for key, e in obj("datatypes").items():
        terms.add("datatype", e.get("value", key), f"objects/datatypes.yaml: {key}", life(e))
    for key, e in obj("suffixes").items():
        terms.add("suffix", e.get("value", key), f"objects/suffixes.yaml: {key}", life(e))
    for key, e in obj("entities").items():
        terms.add("entity", e.get("name", key), f"objects/entities.yaml: {key}", life(e))
    for key, e in obj("extensions").items():
        v = e.get("value", "")
        if isinstance(v, str) and v.startswith("."):
            terms.add("extension", v, f"objects/extensions.yaml: {key}", life(e))
    for key, e in obj("metadata").items():
        terms.add("metadata", e.get("name", key.split("__")[0]), f"objects/metadata.yaml: {key}", life(e))
    for key, e in obj("columns").items():
        terms.add("column", e.get("name", key.split("__")[0]), f"objects/columns.yaml: {key}", life(e))
    for key, e in obj("enums").items():
        if not isinstance(e, dict):
            continue
        if "value" in e:
            terms.add("value", str(e["value"]), f"objects/enums.yaml: {key}", life(e))
        elif isinstance(e.get("enum"), list):
            for i, v in enumerate(e["enum"]):
                vv = v.get("value") if isinstance(v, dict) else v
                terms.add("value", str(vv), f"objects/enums.yaml: {key}.enum[{i}]", life(v, life(e)))
    for key, e in obj("files").items():
        name = key + "/" if e.get("file_type") == "directory" else (
            "CITATION.cff" if key == "CITATION" else key)
        terms.add("toplevel", name, f"objects/files.yaml: {key}", life(e))
    core = load_yaml(os.path.join(schema_dir, "rules", "files", "common", "core.yaml"))
    for key, e in core.items():
        path = e.get("path") or e.get("stem") or key
        known_dirs = {k + "/" for k, v in obj("files").items() if v.get("file_type") == "directory"}
        name = path + "/" if (path + "/") in known_dirs or path in ("docs", "logs") else path
        terms.add("toplevel", name, f"rules/files/common/core.yaml: {key}", life(e))
    def deref(v):
        """Resolve `{$ref: meta.templates.files.X}` to the list it names."""
        if isinstance(v, dict) and isinstance(v.get("$ref"), str):
            parts = v["$ref"].split(".")
            for cut in range(len(parts) - 1, 0, -1):
                path = os.path.join(schema_dir, *parts[:cut]) + ".yaml"
                if os.path.isfile(path):
                    node = load_yaml(path)
                    for p in parts[cut:]:
                        node = node.get(p) if isinstance(node, dict) else None
                    return node if isinstance(node, list) else None
        return v
    raw = os.path.join(schema_dir, "rules", "files", "raw")
    for fn in sorted(os.listdir(raw)):
        if not fn.endswith(".yaml"):
            continue
        data = load_yaml(os.path.join(raw, fn))

        def walk(node, path, inherited):
            if not isinstance(node, dict):
                return
            lc = life(node, inherited)
            sfxs, dts = deref(node.get("suffixes")), deref(node.get("datatypes"))
            if isinstance(sfxs, list) and isinstance(dts, list):
                for dt in dts:
                    for s in sfxs:
                        terms.add("file", f"{dt}/_{s}", f"rules/files/raw/{fn}: {path}", lc)
                return
            for k, v in node.items():
                walk(v, f"{path}.{k}" if path else str(k), lc)
        walk(data, "", {})
    add_contexts(terms, obj)
    return terms


def add_contexts(terms, obj):
    """Which terms make a weak hit count: a suffix's datatype folders, a value's owners."""
    dts = defaultdict(set)
    for (kind, name) in terms.items:
        if kind == "file":
            dt, sfx = name.split("/_", 1)
            dts[sfx].add(dt)
    for (kind, name), t in terms.items.items():
        if kind == "suffix":  # no raw datatype: only the `_suffix` file-name form counts
            t["context"] = {"datatype": sorted(dts.get(name, ()))}
    enums = obj("enums")
    owners = defaultdict(lambda: defaultdict(set))

    def values_of(e):
        out = []
        raw = e.get("enum") if isinstance(e.get("enum"), list) else []
        for v in raw:
            if isinstance(v, dict) and isinstance(v.get("$ref"), str):
                parts = v["$ref"].split(".")
                if len(parts) >= 3 and isinstance(enums.get(parts[2]), dict):
                    out.append(str(enums[parts[2]].get("value", parts[2])))
            elif isinstance(v, (str, int, float)):
                out.append(str(v))
        return out
    for group, okind in (("metadata", "metadata"), ("columns", "column"), ("entities", "entity")):
        for key, e in obj(group).items():
            if not isinstance(e, dict):
                continue
            oname = e.get("name", key.split("__")[0])
            stack = [e]
            while stack:
                node = stack.pop()
                if isinstance(node, dict):
                    for v in values_of(node):
                        owners[v][okind].add(oname)
                    for k in ("items", "anyOf", "oneOf", "properties"):
                        if isinstance(node.get(k), (dict, list)):
                            stack.append(node[k])
                elif isinstance(node, list):
                    stack.extend(node)
    for (kind, name), t in terms.items.items():
        if kind == "value" and name in owners:
            t["context"] = {k: sorted(v) for k, v in sorted(owners[name].items())}


def tree_since(t):
    """Earliest since among the term's entries; None when some entry has none."""
    vals = t["since"]
    if any(v is None for v in vals):
        return None
    return min(vals, key=st.vkey)


# ---------------------------------------------------------------- dating

def changelog_index():
    idx = {}
    for v, items in CHANGELOG_ADDED.items():
        for kind, name, what in items:
            idx[(kind, name)] = (v, what)
    return idx


def all_files_with(root, version, kind, name, context):
    if kind == "file":
        return set()
    return {ln.file for ln in st.all_hits(root, version, kind, name, context)}


_SCHEMA_BLOBS = {}


def in_schema_of(root, version, name):
    """Whether the tag's own schema (not its text) names the term."""
    if version not in _SCHEMA_BLOBS:
        src = os.path.join(root, "v" + version, "src", "schema")
        parts = []
        for dp, _d, fns in os.walk(src):
            for fn in sorted(fns):
                if fn.endswith((".yaml", ".json")):
                    with open(os.path.join(dp, fn), encoding="utf-8", errors="replace") as fh:
                        parts.append(fh.read())
        _SCHEMA_BLOBS[version] = "\n".join(parts)
    return re.search(st._wb(st.text_name(name)), _SCHEMA_BLOBS[version]) is not None


# (kind, name) → the tree's since of datatypes and suffixes (set by main before dating).
TREE_DATES = {}


def date_term(root, t, clidx, dated):
    kind, name = t["kind"], t["name"]
    found = None
    for v in st.TEXT_VERSIONS:
        lit, mac = st.find_term(root, v, kind, name, t.get("context"))
        ln = lit or mac
        if ln is not None:
            found = (v, ln)
            break
    rec = {"kind": kind, "name": name}
    if t.get("context"):
        rec["context"] = t["context"]
    note = []
    if found is None and kind == "file":
        dt, sfx = name.split("/_", 1)
        for v in st.TEXT_VERSIONS:
            ln = st.combo_same_chapter(root, v, dt, sfx)
            if ln is not None:
                found = (v, ln)
                note.append("stated in the chapter that shows the folder, not in its file tree")
                break
    if found is None:
        rec["since"] = None
        rec["evidence"] = None
        schema_v = next((v for v in st.TEXT_VERSIONS if in_schema_of(root, v, name)), None)
        if kind == "file":
            dt, sfx = name.split("/_", 1)
            note.append("no file name of this suffix is shown in this datatype folder in any tag's text"
                        " (the suffix may be stated without the folder, or in a shared chapter)")
        elif schema_v:
            note.append(f"stated without the term in the Markdown; the term is in the tag schema from v{schema_v}")
        else:
            note.append("not in any tag's text or schema: a name of this tree (renamed, or our own)")
        rec["_schema_since"] = schema_v
    else:
        v, ln = found
        since = v
        if v == "1.1.2":
            cl = clidx.get((kind, name))
            files = all_files_with(root, v, kind, name, t.get("context"))
            meg = files and files <= (MEG_FILES | NEUTRAL_FILES) and files & MEG_FILES
            if kind == "file":
                dt, sfx = name.split("/_", 1)
                parts = [dated.get(("datatype", dt)), dated.get(("suffix", sfx))]
                parts = [p for p in parts if p]
                since = max(parts, key=st.vkey) if parts else "1.0.0"
                note.insert(0, "derived: v1.1.2 text shows it; dated by the later of its datatype and suffix")
            elif cl:
                since = cl[0]
                note.insert(0, f"derived: changelog section {cl[0]} adds it" + (f" ({cl[1]})" if cl[1] else ""))
            elif meg:
                since = "1.1.0"
                note.insert(0, "derived: in v1.1.2 only in the MEG chapters, merged in 1.1.0 (changelog: MEG support)")
            else:
                since = "1.0.0"
                note.insert(0, "derived: in the v1.1.2 text and no changelog entry of 1.0.1 to 1.1.2 adds it")
            if meg and kind != "file":
                ln = next(x for x in st.all_hits(root, v, kind, name, t.get("context"))
                          if x.file in MEG_FILES)
        rec["since"] = since
        rec["evidence"] = {"tag": "v" + v, "file": ln.file, "section": ln.section or "(top)"}
        if ln.via:
            rec["evidence"]["via"] = ln.via
            note.append(f"stated in a table the text renders from its schema ({ln.via})")
        if kind == "file":
            dt, sfx = name.split("/_", 1)
            for part in (dated.get(("datatype", dt)), dated.get(("suffix", sfx))):
                if part and st.vkey(part) > st.vkey(since):
                    note.append(f"its datatype or suffix is dated {part}, later than the file")
    ts = tree_since(t)
    if kind == "file":
        # The loader drops from a rule the datatypes and suffixes a version lacks: a pair
        # is in force from the latest of its rule's, its datatype's and its suffix's dates.
        dt, sfx = name.split("/_", 1)
        parts = [ts, TREE_DATES.get(("datatype", dt)), TREE_DATES.get(("suffix", sfx))]
        parts = [p for p in parts if p]
        ts = max(parts, key=st.vkey) if parts else None
    rec["tree_since"] = ts
    rec["tree"] = sorted(set(t["where"]))
    for k in ("deprecated", "removed"):
        if t[k]:
            rec["tree_" + k] = t[k]
    # Verdict.
    s = rec["since"]
    if s is None:
        verdict = "not-in-text"
    elif ts is None:
        if s == "1.0.0":
            verdict = "agrees"
        else:
            verdict = "undated"
            note.append(f"the tree has no since (in force from 1.0.0); the text dates it {s}")
    elif s == ts:
        verdict = "agrees"
    elif st.vkey(s) < st.vkey(ts):
        verdict = "text-earlier"
    else:
        verdict = "text-later"
        note.append(f"the tree dates it {ts}, the text first states it in {s}: the tree may be early, or the term is stated otherwise before")
    rec["verdict"] = verdict
    if note:
        rec["note"] = "; ".join(note)
    return rec


# ---------------------------------------------------------------- outputs

def changelog_dates(root):
    dates = {}
    with open(os.path.join(root, "CHANGES.md"), encoding="utf-8") as fh:
        for line in fh:
            m = re.match(r"^## \[?v?(\d+\.\d+\.\d+)\]?(?:\([^)]*\))?\s*\((\d{4}-\d{2}-\d{2})\)", line)
            if m:
                dates[m.group(1)] = m.group(2)
    return dates


def esc(s):
    return str(s).replace("|", "\\|")


def write_yaml(path, recs):
    out = [
        "# Generated by tools/history/date_terms.py from ../shared/spec-history: do not edit by hand.",
        "# One entry per term of the tree, dated by the standard's text (issue 37). Fields:",
        "# kind, name, since (first version whose text states it; null: not found),",
        "# evidence {tag, file, section[, via]} (where that tag's text states it; for since",
        "# before 1.1.2 the v1.1.2 text plus the changelog), tree_since (the tree's since; null:",
        "# none), tree (where the tree defines it), verdict, note.",
    ]
    body = []
    for r in recs:
        e = {k: r[k] for k in ("kind", "name", "context", "since", "evidence", "tree_since", "tree") if k in r}
        for k in ("tree_deprecated", "tree_removed"):
            if k in r:
                e[k] = r[k]
        e["verdict"] = r["verdict"]
        if "note" in r:
            e["note"] = r["note"]
        body.append(e)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(out) + "\n")
        yaml.safe_dump({"terms": body}, fh, sort_keys=False, allow_unicode=True, width=120)


def write_md(path, recs, root, spot):
    dates = changelog_dates(root)
    by_kind = defaultdict(list)
    for r in recs:
        by_kind[r["kind"]].append(r)
    verdicts = Counter(r["verdict"] for r in recs)
    L = []
    L.append("# The standard's history: every term of the tree dated by the text")
    L.append("")
    L.append("Generated by `tools/history/date_terms.py` from `../shared/spec-history` (issue 37, item 2).")
    L.append("Do not edit by hand: regenerate with")
    L.append("")
    L.append("```sh")
    L.append("python3 tools/history/date_terms.py      # writes this file and docs/history.yaml")
    L.append("python3 tools/history/check_history.py   # the evidence test")
    L.append("```")
    L.append("")
    L.append("The machine-readable form is `docs/history.yaml` (kind, name, since, evidence, tree_since,")
    L.append("verdict, note per term). It is not under `schema/`: the build embeds every file there and reads")
    L.append("every `since:` as a lifecycle annotation, which would pin the history itself and count each")
    L.append("entry as a change of the rules.")
    L.append("")
    L.append("## Method")
    L.append("")
    L.append("- **Terms**: every datatype, suffix, entity (by its key), extension, metadata field, column and")
    L.append("  enumerated value of `schema/objects/`, the top-level files and folders (`objects/files.yaml`,")
    L.append("  `rules/files/common/core.yaml`), and every datatype-folder/suffix pair of `rules/files/raw/`.")
    L.append("- **Text of a tag**: all Markdown under `vX/src/` of that tag except its `schema/` folder and the")
    L.append("  changelog files. From v1.5.0 the chapters render tables and file-name templates from the tag's own")
    L.append("  schema through macros; those are expanded (a term only found that way says `via` the macro).")
    L.append("- **Recognised as**: fields and columns as written, whole word (common lower-case words such as")
    L.append("  `name` only as code, a quoted value or a table cell); suffixes as `_bold` (or as code / a table")
    L.append("  cell); entities as `acq-` before a label; datatypes as a folder `eeg/`; extensions as written")
    L.append("  (`.nii.gz`); values as code, quoted or a table cell, or after an entity key (`part-mag`);")
    L.append("  datatype/suffix pairs as a file name with that suffix under that folder in a file tree or path.")
    L.append("  Our tree writes the brand as Std: `StdVersion` is looked up as the upstream `BIDSVersion`.")
    L.append("- **Versions 1.0.0 to 1.1.1 predate the public text.** A term the v1.1.2 text states is dated by")
    L.append("  the changelog (`CHANGES.md`): the version whose section 1.0.1 (with 1.0.1-rc1), 1.0.2, 1.1.0,")
    L.append("  1.1.1 or 1.1.2 says it was added (a hand-read table in the tool); a term the v1.1.2 text")
    L.append("  states only in the MEG chapters is dated 1.1.0 (MEG merged); any other, 1.0.0. A pair is")
    L.append("  dated by the later of its datatype and suffix. Evidence for these cites the v1.1.2 text.")
    L.append("- **Verdicts** against the tree's `since`: `agrees`; `text-earlier` (the text states it before the")
    L.append("  tree's since: the tree must move it earlier); `text-later` (the tree dates it earlier than the")
    L.append("  text: suspicious, see the note); `undated` (the tree has no since, i.e. in force from 1.0.0,")
    L.append("  but the text introduces it later);")
    L.append("  `not-in-text` (not found: see the note: renamed, stated without the term, our own name).")
    L.append("- Only terms, file names, section headings and version numbers are taken from the text.")
    L.append("")
    L.append("Known limits (read the note of an entry before applying its date): a term the text states")
    L.append("in other words, or only inside a pattern the tool does not expand, is `not-in-text` or dated")
    L.append("late; a common word can be dated early by an unrelated use in the same section as its owner")
    L.append("(values) or anywhere as code (columns such as `message`); a datatype/suffix pair shown only in a")
    L.append("chapter shared by several datatypes (the MRI chapter before v1.5.0) is dated by the chapter")
    L.append("(`stated in the chapter that shows the folder`). The 1.0.0-1.1.1 dates rest on the hand-read")
    L.append("changelog table of `date_terms.py` (CHANGELOG_ADDED) and the MEG-chapter rule.")
    L.append("")
    L.append("## Applied to the tree")
    L.append("")
    L.append("`tools/history/apply_dates.py` wrote these dates into `schema/` (line edits of `since:` keys;")
    L.append("its docstring says how each verdict is applied), and all 21 versions are pinned rule sets.")
    L.append("What stays different, and why:")
    L.append("")
    L.append("- **Rejected text dates** (`KEEP` in the script): the metadata field `Format` (the 1.2.1 hit is a")
    L.append("  header of the entity table) and the column `message` (a common word; the 1.9.0 hit is a")
    L.append("  CITATION.cff key). Values whose note says they may be stated otherwise before (`Other`,")
    L.append("  `study`, one name shared by several owners) keep the tree's date.")
    L.append("- **One name, several entries** (`group__channel` / `group__emg`, `units` / `units__motion`,")
    L.append("  `description` / `description__entities`): the text date goes to the undated entries; an")
    L.append("  entry the tree dates later is a later, narrower meaning and keeps its date.")
    L.append("- **Datatype/suffix pairs are not dated one by one.** The loader drops from a file rule the")
    L.append("  datatypes, suffixes, extensions, entities, fields and columns a version does not define")
    L.append("  (`crates/nidos-schema/src/lifecycle.rs`), so a pair is in force from the later of its")
    L.append("  datatype's and its suffix's dates. The pair dates of this tool are weak (a pair counts only")
    L.append("  when a file name shows it in that folder; several checked against the tags' schemas were")
    L.append("  artifacts: `anat/_T1map`, `fmap/_TB1DAM` are in the v1.5.0 schema, `dwi/_physio` in v1.8.0).")
    L.append("  The pairs whose date still differs are the file rows below whose verdict is not `agrees`.")
    L.append('- **Checks dated by the text** (`tools/history/date_checks.py`, evidence in')
    L.append('  `docs/history-checks.yaml`, checked by `check_history.py`): a check is in force from the')
    L.append('  latest text date of the terms it names (suffixes and datatypes it selects, fields, columns and')
    L.append("  associated files it reads; of a list of alternatives, the earliest), with that term's")
    L.append('  statement as evidence, or a section of that tag stating all the fields it compares. Checks')
    L.append('  the text does not state (validator heuristics: units bounds, NIfTI/TIFF/gzip header')
    L.append('  properties, README size), and a few whose requirement is later than their terms, keep the')
    L.append("  schema's date with the reason (`kept`). By hand before: `REQUIRED_COORDSYSTEM` from 1.2.0")
    L.append('  (v1.2.0 `03-electroencephalography.md` § Electrodes description: the tree said 1.10.1);')
    L.append('  `STIMULUS_FILE_MISSING` from 1.0.1 (v1.1.2 `03-task-events.md`: the tree said 1.9.0).')
    L.append('- **Requirement levels that changed over time** (`tools/history/level_history.py`,')
    L.append("  `docs/level-history.md`): each change of a field's or column's level between the tags'")
    L.append("  schemas (v1.8.0 on) is written as the entry's forms, each with its versions")
    L.append('  (`[{level: recommended, removed: "1.10.1"}, {level: optional, since: "1.10.1"}]`).')
    L.append('- **Not dated**: values of the')
    L.append('  inline `enum:` lists of metadata and columns (a list item carries no lifecycle: the value')
    L.append('  objects of `objects/enums.yaml` are dated, the lists a field accepts are not); the list items')
    L.append('  of a value group (`_GeneticLevelEnum.enum[…]`), dated with their group.')
    L.append("")
    L.append("## Counts")
    L.append("")
    L.append(f"{len(recs)} terms: " + ", ".join(f"{verdicts[v]} {v}" for v in
                                           ["agrees", "text-earlier", "text-later", "undated", "not-in-text"]) + ".")
    L.append("")
    L.append("| kind | terms | agrees | text-earlier | text-later | undated | not-in-text |")
    L.append("|---|---:|---:|---:|---:|---:|---:|")
    for k in KINDS:
        c = Counter(r["verdict"] for r in by_kind[k])
        L.append(f"| {k} | {len(by_kind[k])} | {c['agrees']} | {c['text-earlier']} | {c['text-later']} | {c['undated']} | {c['not-in-text']} |")
    L.append("")
    L.append("## Spot checks (the cases issue 37 names)")
    L.append("")
    L.append("The issue expects EEG (the `eeg` folder, `electrodes` and `coordsystem` in it) and iEEG from")
    L.append("1.2.0, MEG from 1.1.0, `phenotype/`, `stimuli/` and the `stim_file` column from 1.0.1.")
    L.append("MEG, `phenotype/`, `stimuli/` and `stim_file` are in the v1.1.2 text and dated by the changelog")
    L.append("(1.1.0: MEG merged; 1.0.1: phenotypic data in several files, storing stimuli files).")
    L.append("")
    L.append("| term | expected | dated by the text | evidence | tree's since | result |")
    L.append("|---|---|---|---|---|---|")
    for kind, name, exp, r in spot:
        ev = r.get("evidence") if r else None
        where = f"{ev['tag']} `{ev['file']}` § {esc(ev['section'])}" if ev else "-"
        got = r["since"] if r else "(not a term of the tree)"
        ok = "ok" if r and r["since"] == exp else "DIFFERS"
        L.append(f"| {kind} `{name}` | {exp} | {got} | {where} | {r['tree_since'] if r and r['tree_since'] else '-'} | {ok} |")
    L.append("")
    L.append("## Versions")
    L.append("")
    L.append("Release dates from the changelog; terms added per version by this dating (the seed of")
    L.append("`nidos schema diff A B`).")
    L.append("")
    L.append("| version | released | from → to | terms added | by kind |")
    L.append("|---|---|---|---:|---|")
    for v in st.VERSIONS:
        added = [r for r in recs if r["since"] == v]
        c = Counter(r["kind"] for r in added)
        pv = st.prev_version(v)
        step = f"{pv} → {v}" if pv else "(first release)"
        L.append(f"| {v} | {dates.get(v, '?')} | {step} | {len(added)} | " + ", ".join(f"{c[k]} {k}" for k in KINDS if c[k]) + " |")
    L.append("")
    L.append(f"Not dated (not found in any tag's text): {sum(1 for r in recs if r['since'] is None)} terms.")
    L.append("")
    for k in KINDS:
        rows = sorted(by_kind[k], key=lambda r: (st.vkey(r["since"]) if r["since"] else (99,), r["name"]))
        L.append(f"## {KIND_TITLES[k]}")
        L.append("")
        L.append("| term | text since | where the text states it | tree's since | verdict | note |")
        L.append("|---|---|---|---|---|---|")
        for r in rows:
            ev = r["evidence"]
            where = f"{ev['tag']} `{ev['file']}` § {esc(ev['section'])}" if ev else "-"
            L.append(f"| `{esc(r['name'])}` | {r['since'] or '-'} | {where} | {r['tree_since'] or '-'} | {r['verdict']} | {esc(r.get('note', ''))} |")
        L.append("")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(L))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", default=os.path.normpath(os.path.join(here, "..", "..")))
    ap.add_argument("--spec-history")
    a = ap.parse_args()
    root = a.spec_history or st.text_root(a.repo)
    if not os.path.isdir(root):
        sys.exit(f"spec-history not found at {root}")
    terms = collect(os.path.join(a.repo, "schema"))
    clidx = changelog_index()
    order = sorted(terms.items.values(), key=lambda t: (KINDS.index(t["kind"]), t["name"]))
    for t in order:
        if t["kind"] in ("datatype", "suffix"):
            TREE_DATES[(t["kind"], t["name"])] = tree_since(t)
    recs = []
    dated = {}
    for t in order:  # datatypes and suffixes come before the pairs that use their dates
        r = date_term(root, t, clidx, dated)
        dated[(r["kind"], r["name"])] = r["since"]
        r.pop("_schema_since", None)
        recs.append(r)
    idx = {(r["kind"], r["name"]): r for r in recs}
    spot = [(k, n, e, idx.get((k, n))) for k, n, e in SPOT_CHECKS]
    write_yaml(os.path.join(a.repo, *HISTORY_YAML), recs)
    write_md(os.path.join(a.repo, "docs", "history.md"), recs, root, spot)
    c = Counter(r["verdict"] for r in recs)
    print(f"{len(recs)} terms dated: " + ", ".join(f"{n} {v}" for v, n in sorted(c.items())))
    for k, n, e, r in spot:
        print(f"spot {k} {n}: expected {e}, text {r['since'] if r else None}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Dates the checks of `schema/rules/checks/` by the standard's text (issue 37, item 2).

A check encodes a requirement about its terms: the suffixes and datatypes it selects,
the sidecar fields (`sidecar.X`, `json.X`), columns (`columns.X`) and associated files
(`associations.X`) it reads. The requirement cannot be in force before each of them is,
and the text states each such requirement where it describes the field or file (a
RepetitionTime that matches the image's time step, a BOLD series that is 4D, an EEG
`electrodes.tsv` with its coordinate system). So a check's date is the latest text date
of its terms (docs/history.yaml), and its evidence that term's statement; then the
tag's text is searched for one section stating all the fields and columns the check
compares (`stated together`), the stronger evidence, when it exists.

Checks the text does not state (validator heuristics about file headers, the size of
a README, gzip header privacy) keep the tree's date with a note; so do checks listed
in KEEP with the reason. Writes docs/history-checks.yaml and rewrites the `since:` of
each check whose date moves (`--apply`).

    python3 tools/history/date_checks.py [--apply]
"""

from __future__ import annotations

import argparse
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import spectext as st  # noqa: E402

CHECKS = os.path.join(REPO, "schema", "rules", "checks")
OUT = os.path.join(REPO, "docs", "history-checks.yaml")

# Checks kept at the tree's date, with the reason.
KEEP = {
    "ReadmeFileSmall": "a validator heuristic (a README under 150 bytes): the text sets no size",
    "DuplicateReadmes": "the text allows one README in several formats from 1.8.0; "
                        "only one of them from the tree's date",
    "DuplicateFiles": "a validator heuristic (a file both compressed and not)",
    "GzipHeaderMtime": "gzip header privacy: a validator heuristic, not stated by the text",
    "GzipHeaderFilename": "gzip header privacy: a validator heuristic, not stated by the text",
    "GzipHeaderComment": "gzip header privacy: a validator heuristic, not stated by the text",
    "GzipHeaderFields": "gzip header privacy: a validator heuristic, not stated by the text",
    "UnknownVersion": "names the versions of the tree: dated with the schema's version list",
    "NiftiDimension": "a property of NIfTI files, not stated by the text",
    "NiftiUnit": "a property of NIfTI files, not stated by the text",
    "NiftiPixdim": "a property of NIfTI files, not stated by the text",
    "NiftiPixdimPET": "a property of NIfTI files, not stated by the text",
    "XformCodes0": "a property of NIfTI files, not stated by the text",
    "InconsistentTiffExtension": "a property of TIFF files, not stated by the text",
    "TooFewCitationAuthors": "a validator hint about CITATION.cff, not stated by the text",
    "EmptyDatasetName": "a validator hint, not stated by the text",
    "SuspiciousNegativeEventOnset": "a validator heuristic (onsets beyond a minute before the run)",
    "SuspiciousPositiveEventOnset": "a validator heuristic (onsets beyond a month)",
    "RepetitionTimeGreaterThan": "a validator heuristic (units): the text gives seconds, not a bound",
    "EchoTimeGreaterThan": "a validator heuristic (units): the text gives seconds, not a bound",
    "TotalReadoutTimeGreaterThan": "a validator heuristic (units): the text gives seconds, not a bound",
    "PostLabelingDelayGreater": "a validator heuristic (units): the text gives seconds, not a bound",
    "BolusCutOffDelayTimeGreater": "a validator heuristic (units): the text gives seconds, not a bound",
    "LabelingDurationGreater": "a validator heuristic (units): the text gives seconds, not a bound",
    "EchoTime12DifferenceUnreasonable": "a validator heuristic (a plausible echo-time gap)",
    "EffectiveEchoSpacingTooLarge": "a validator heuristic (a plausible echo spacing)",
    "CheckAge89": "the text's rule for ages above 89 is dated with the age column",
    "BehavioralOnsetAndDuration": "the text's 1.11.1 wording of beh files without onset and duration",
    "TotalReadoutTimeMustDefine": "replaces the required level of TotalReadoutTime for pepolar field "
                                  "maps from 1.10.1 (docs/level-history.md): both before would report twice",
    "EPISmallBVals": "b-values of EPI field maps: the text's statement is not found by the check's terms",
    "NiftiPEDir": "a consistency heuristic between the dir- entity and the NIfTI header, not stated by the text",
    "ElectrodeSpecificity": "earlier texts' file-name templates allow some of these entities on "
                            "electrodes.tsv: the recommendation is not dated by its terms",
    "CoordsystemSpecificity": "earlier texts' file-name templates allow some of these entities on "
                              "coordsystem.json: the recommendation is not dated by its terms",
}

QUOTED = re.compile(r"""["']([^"']+)["']""")
SUFFIX_EQ = re.compile(r"""suffix\s*==\s*["']([^"']+)["']""")
SUFFIX_IN = re.compile(r"""intersects\(\[suffix\],\s*\[([^\]]*)\]\)""")
DATATYPE_EQ = re.compile(r"""datatype\s*==\s*["']([^"']+)["']""")
DATATYPE_IN = re.compile(r"""intersects\(\[?datatype\]?,\s*\[([^\]]*)\]\)""")
FIELD = re.compile(r"\b(?:sidecar|json)\.([A-Za-z][A-Za-z0-9_]*)")
IN_SIDECAR = re.compile(r"""["']([A-Z][A-Za-z0-9]+)["']\s+in\s+(?:sidecar|dataset\.dataset_description)""")
DD_FIELD = re.compile(r"dataset\.dataset_description\.([A-Za-z][A-Za-z0-9_]*)")
COLUMN = re.compile(r"\bcolumns\.([a-z][A-Za-z0-9_]*)")
ASSOC = re.compile(r"\bassociations\.([a-z][A-Za-z0-9_]*)")
IN_DATASET = re.compile(r"""["']([a-z]+)["']\s+in\s+dataset\.(?:modalities|datatypes)""")
DATASET_INTERSECTS = re.compile(r"""intersects\(dataset\.(?:modalities|datatypes),\s*\[([^\]]*)\]\)""")
VALUE_EQ = re.compile(r"""(?:sidecar|json|dataset_description)\.[A-Za-z]+\s*==\s*["']([^"']+)["']""")
PATH_EQ = re.compile(r"""path\s*==\s*['"]/([^'"]+)['"]""")
# Associated files named by their suffix (or a top-level file).
ASSOC_SUFFIX = {"coordsystem": "coordsystem", "coordsystems": "coordsystem", "channels": "channels",
                "electrodes": "electrodes", "events": "events", "aslcontext": "aslcontext",
                "physio": "physio", "atlas_description": "description"}


def strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)


def terms_of(check):
    """(kind, name) of every term the check's selectors and checks name."""
    text = " ; ".join(strings(check.get("selectors", []))) + " ; " + " ; ".join(strings(check.get("checks", [])))
    out = set()
    for m in SUFFIX_EQ.findall(text):
        out.add(("suffix", m))
    # A list of alternatives is in force from its earliest member: one term `anyof`.
    for grp in SUFFIX_IN.findall(text):
        out.add(("anyof", tuple(("suffix", s) for s in QUOTED.findall(grp))))
    for m in DATATYPE_EQ.findall(text):
        out.add(("datatype", m))
    for grp in DATATYPE_IN.findall(text):
        out.add(("anyof", tuple(("datatype", s) for s in QUOTED.findall(grp))))
    for m in IN_DATASET.findall(text):
        out.add(("datatype", m))
    for grp in DATASET_INTERSECTS.findall(text):
        out.add(("anyof", tuple(("datatype", s) for s in QUOTED.findall(grp))))
    for m in VALUE_EQ.findall(text):
        out.add(("value", m))
    for m in FIELD.findall(text) + IN_SIDECAR.findall(text) + DD_FIELD.findall(text):
        out.add(("metadata", "BIDSVersion" if m == "StdVersion" else m))
    for m in COLUMN.findall(text):
        out.add(("column", m))
    for m in ASSOC.findall(text):
        if m in ASSOC_SUFFIX:
            out.add(("suffix", ASSOC_SUFFIX[m]))
        elif m in ("bval", "bvec"):
            out.add(("extension", "." + m))
    for m in PATH_EQ.findall(text):
        out.add(("toplevel", m))
    return out


def load_history():
    with open(os.path.join(REPO, "docs", "history.yaml"), encoding="utf-8") as fh:
        terms = (yaml.safe_load(fh) or {}).get("terms", [])
    out = {}
    for t in terms:
        name = "BIDSVersion" if t["name"] == "StdVersion" else t["name"]
        key = (t["kind"], name)
        # Of several entries of one name, the earliest text date.
        if t.get("since") and (key not in out or st.vkey(str(t["since"])) < st.vkey(str(out[key]["since"]))):
            out[key] = t
    return out


def stated_together(root, version, fields):
    """A section of `version`'s text stating every one of `fields`, else None."""
    if version not in st.TEXT_VERSIONS:
        version = "1.1.2"
    if not fields:
        return None
    hits = None
    for f in fields:
        secs = {(ln.file, ln.section) for ln in st.all_hits(root, version, "metadata", f)}
        hits = secs if hits is None else hits & secs
        if not hits:
            return None
    return sorted(hits)[0] if hits else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--apply", action="store_true")
    args = ap.parse_args()
    root = st.text_root(REPO)
    if not os.path.isdir(root):
        print(f"skipped: {root} is absent")
        return 0
    hist = load_history()
    recs = []
    for fn in sorted(os.listdir(CHECKS)):
        if not fn.endswith(".yaml"):
            continue
        with open(os.path.join(CHECKS, fn), encoding="utf-8") as fh:
            data = yaml.safe_load(fh) or {}
        for name, check in data.items():
            if not isinstance(check, dict) or "since" not in check:
                continue
            tree = str(check["since"])
            rec = {"check": name, "file": f"rules/checks/{fn}", "code": check.get("issue", {}).get("code"),
                   "tree_since": tree}
            if check.get("removed"):
                rec["removed"] = str(check["removed"])
            terms = sorted(terms_of(check), key=str)
            dated = []
            for k, n in terms:
                if k == "anyof":
                    alts = [(k2, n2, hist[(k2, n2)]) for k2, n2 in n if (k2, n2) in hist]
                    if alts:
                        dated.append(min(alts, key=lambda x: st.vkey(str(x[2]["since"]))))
                elif (k, n) in hist:
                    dated.append((k, n, hist[(k, n)]))
            rec["terms"] = [f"{k} {n}: {t['since']}" for k, n, t in dated]
            if name in KEEP:
                rec.update(since=tree, verdict="kept", note=KEEP[name])
                recs.append(rec)
                continue
            if not dated:
                rec.update(since=tree, verdict="kept", note="names no term the history dates")
                recs.append(rec)
                continue
            k, n, t = max(dated, key=lambda x: st.vkey(str(x[2]["since"])))
            since = str(t["since"])
            ev = dict(t["evidence"])
            fields = sorted({n2 for k2, n2, _ in dated if k2 in ("metadata", "column")})
            together = stated_together(root, since, fields) if len(fields) > 1 else None
            if together:
                ev = {"tag": f"v{since}" if since in st.TEXT_VERSIONS else "v1.1.2",
                      "file": together[0], "section": together[1]}
                how = f"stated together: {', '.join(fields)}"
            else:
                how = f"dated by its latest term, {k} {n}"
            if rec.get("removed") and st.vkey(since) >= st.vkey(rec["removed"]):
                rec.update(since=tree, verdict="kept",
                           note="an earlier form: its terms are dated at or after its removal")
                recs.append(rec)
                continue
            rec.update(since=since, evidence=ev, note=how,
                       verdict="agrees" if since == tree else ("text-earlier" if st.vkey(since) < st.vkey(tree) else "text-later"))
            recs.append(rec)
    with open(OUT, "w", encoding="utf-8") as fh:
        fh.write("# Generated by tools/history/date_checks.py: do not edit by hand.\n"
                 "# Each check of schema/rules/checks that carries a `since`, dated by the text\n"
                 "# (issue 37, item 2): since (the text's date), evidence {tag, file, section},\n"
                 "# terms (the terms it names, with their text dates), tree_since (the tree's date\n"
                 "# before), verdict (agrees, text-earlier, text-later, kept), note.\n")
        yaml.safe_dump({"checks": recs}, fh, sort_keys=False, allow_unicode=True, width=100)
    moved = [r for r in recs if r["verdict"] in ("text-earlier", "text-later")]
    print(f"{len(recs)} checks: {sum(r['verdict'] == 'agrees' for r in recs)} agree, "
          f"{len(moved)} move, {sum(r['verdict'] == 'kept' for r in recs)} kept")
    for r in moved:
        print(f"  {r['file']} {r['check']}: {r['tree_since']} -> {r['since']} ({r['note']})")
    if args.apply:
        for r in moved:
            path = os.path.join(REPO, "schema", r["file"])
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().split("\n")
            start = lines.index(f"{r['check']}:")
            for i in range(start + 1, len(lines)):
                if lines[i] and not lines[i].startswith(" "):
                    raise SystemExit(f"{r['check']}: no since line")
                if lines[i].strip().startswith("since:"):
                    lines[i] = re.sub(r'since:\s*"[^"]*"', f'since: "{r["since"]}"', lines[i])
                    break
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

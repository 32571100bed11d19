"""Writes shape.json, the shape of the reference validator's full JSON reports of the
conformance examples, for tests/reference_shape.rs.

    python3 make_shape.py REPORTS_DIR > shape.json

REPORTS_DIR holds `<example>.json`, each the output of
`bids-validator-deno ../shared/conformance/examples/<example> --format json
--config default-config.json --ignoreNiftiHeaders` (headers read for `synthetic`).
The reports themselves are not kept: only their keys, value types, which optional
issue fields each code always carries, and each example's summary counts."""
import json, os, sys

def jtype(v):
    if v is None: return "null"
    if isinstance(v, bool): return "boolean"
    if isinstance(v, (int, float)): return "number"
    if isinstance(v, str): return "string"
    if isinstance(v, list): return "array"
    return "object"

reports = {}
src = sys.argv[1]
for name in sorted(os.listdir(src)):
    if not name.endswith(".json"): continue
    try:
        reports[name[:-5]] = json.load(open(os.path.join(src, name)))
    except ValueError:
        pass

top, issues_keys, summary_types = set(), set(), {}
always, seen = {}, {}
prefix = {}
examples = {}
for ex, r in reports.items():
    top |= set(r)
    issues_keys |= set(r["issues"])
    for k, v in r["summary"].items():
        summary_types.setdefault(k, set()).add(jtype(v))
    for i in r["issues"]["issues"]:
        c = i["code"]
        keys = {k for k in i if k not in ("code", "severity", "location")}
        always[c] = keys if c not in always else always[c] & keys
        seen[c] = seen.get(c, 0) + 1
        m = i.get("issueMessage")
        if m is not None:
            p = prefix.get(c, m)
            n = 0
            while n < min(len(p), len(m)) and p[n] == m[n]: n += 1
            prefix[c] = p[:n]
    s = r["summary"]
    examples[ex] = {
        "totalFiles": s["totalFiles"], "size": s["size"],
        "modalities": s["modalities"], "secondaryModalities": s["secondaryModalities"],
        "tasks": sorted(s["tasks"]), "dataTypes": sorted(s["dataTypes"]),
        "subjects": sorted(s["subjects"]), "sessions": sorted(s["sessions"]),
        "dataProcessed": s["dataProcessed"], "subjectMetadata": len(s["subjectMetadata"]),
        "schemaVersion": s["schemaVersion"],
    }
def short_prefix(p):
    return "Field description: " if p.startswith("Field description: ") else p[:20]

shape = {
    "top": sorted(top),
    "issues": sorted(issues_keys),
    "summary": {k: sorted(v) for k, v in sorted(summary_types.items())},
    "codes": {c: {"always": sorted(always[c]), "messagePrefix": short_prefix(prefix.get(c, ""))
                  if "issueMessage" in always[c] else None}
              for c in sorted(always)},
    "examples": examples,
}
json.dump(shape, sys.stdout, indent=1, sort_keys=True)
print()

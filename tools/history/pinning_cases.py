#!/usr/bin/env python3
"""Writes crates/nidos-cli/tests/data/cli/pinning_cases.yaml (issue 37, acceptance): for
every datatype the standard added after 1.0.0, and for `phenotype/`, `stimuli/` and the
EEG coordsystem requirement, a tiny dataset declared at the release just before the
introducing one and at the introducing one. Before: one issue naming the introducing
version; at it: no NOT_INCLUDED (the requirement: REQUIRED_COORDSYSTEM from 1.2.0 on).

The introducing versions are read from docs/history.yaml (the text's dates), so a date
moved in the tree without the history, or the other way round, fails a case.

    python3 tools/history/pinning_cases.py
"""

from __future__ import annotations

import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import spectext as st  # noqa: E402

OUT = os.path.join(REPO, "crates", "nidos-cli", "tests", "data", "cli", "pinning_cases.yaml")

# One file of each datatype (path under the dataset), its data file's text.
DATATYPE_FILES = {
    "meg": "sub-01/meg/sub-01_task-rest_meg.fif",
    "eeg": "sub-01/eeg/sub-01_task-rest_eeg.edf",
    "ieeg": "sub-01/ieeg/sub-01_task-rest_ieeg.edf",
    "perf": "sub-01/perf/sub-01_asl.nii.gz",
    "pet": "sub-01/pet/sub-01_pet.nii.gz",
    "micr": "sub-01/micr/sub-01_sample-A_BF.png",
    "nirs": "sub-01/nirs/sub-01_task-rest_nirs.snirf",
    "motion": "sub-01/motion/sub-01_task-rest_tracksys-imu_motion.tsv",
    "mrs": "sub-01/mrs/sub-01_svs.nii.gz",
    "emg": "sub-01/emg/sub-01_task-rest_emg.edf",
}


def releases():
    return list(st.VERSIONS)


def previous(v):
    vs = releases()
    i = vs.index(v)
    return vs[i - 1] if i > 0 else None


def description(version):
    return '{"Name": "pinning case", "BIDSVersion": "%s"}' % version


def case(name, version, files, args_extra=(), has=(), lacks=()):
    files = dict(files)
    files["ds/dataset_description.json"] = description(version)
    c = {
        "name": name,
        "files": files,
        "args": ["validate", "{tmp}/ds", "--format", "json"] + list(args_extra),
        "exit": None,
    }
    if has:
        c["stdout_has"] = list(has)
    if lacks:
        c["stdout_lacks"] = list(lacks)
    return c


def before_and_at(cases, v, files, before_name, at_name, at_has=()):
    """The two cases of one dated item: declared at the release before `v` (an issue
    naming `v`) and at `v` (included: no NOT_INCLUDED, and `at_has`)."""
    cases.append(case(before_name, previous(v), files,
                      has=['"code":"NOT_INCLUDED"', f"from version {v}"]))
    cases.append(case(at_name, v, files, has=at_has, lacks=['"code":"NOT_INCLUDED"']))


def main():
    terms = yaml.safe_load(open(os.path.join(REPO, "docs", "history.yaml"), encoding="utf-8"))["terms"]
    since = {(t["kind"], t["name"]): t.get("since") for t in terms}
    cases = []
    for dt, path in DATATYPE_FILES.items():
        v = since[("datatype", dt)]
        before_and_at(cases, v, {f"ds/{path}": "x"},
                      f"pinning: {dt} declared at {previous(v)} (before the text adds it) names {v}",
                      f"pinning: {dt} declared at {v} (the text adds it) is included")
    # phenotype/ and stimuli/: 1.0.1.
    v = since[("toplevel", "phenotype/")]
    pheno = {
        "ds/phenotype/survey.tsv": "participant_id\tscore\nsub-01\t3\n",
        "ds/phenotype/survey.json": '{"score": {"Description": "a score"}}',
        "ds/participants.tsv": "participant_id\nsub-01\n",
        "ds/sub-01/anat/sub-01_T1w.nii.gz": "x",
    }
    before_and_at(cases, v, pheno,
                  f"pinning: phenotype/ declared at {previous(v)} names {v}",
                  f"pinning: phenotype/ declared at {v} is included")
    v = since[("toplevel", "stimuli/")]
    stim = {
        "ds/stimuli/cat.png": "x",
        "ds/sub-01/func/sub-01_task-rest_bold.nii.gz": "x",
        "ds/sub-01/func/sub-01_task-rest_events.tsv": "onset\tduration\tstim_file\n1\t1\tcat.png\n2\t1\tdog.png\n",
    }
    before_and_at(cases, v, stim,
                  f"pinning: stimuli/ declared at {previous(v)} names {v}",
                  f"pinning: stimuli/ declared at {v} is included and its stim_files checked",
                  at_has=['"code":"STIMULUS_FILE_MISSING"'])
    # The EEG coordsystem requirement: the text states it with EEG (1.2.0).
    eeg = {
        "ds/sub-01/eeg/sub-01_task-rest_eeg.edf": "x",
        "ds/sub-01/eeg/sub-01_task-rest_eeg.json": '{"TaskName": "rest"}',
        "ds/sub-01/eeg/sub-01_electrodes.tsv": "name\tx\ty\tz\nFz\t0\t1\t2\n",
    }
    v = since[("datatype", "eeg")]
    cases.append(case(f"pinning: EEG electrodes without coordsystem declared at {v} are an error", v, eeg,
                      has=['"code":"REQUIRED_COORDSYSTEM"']))
    cases.append(case("pinning: EEG electrodes without coordsystem declared at 1.8.0 are an error", "1.8.0", eeg,
                      has=['"code":"REQUIRED_COORDSYSTEM"']))
    return cases


def dump(cases):
    lines = [
        "# Generated by tools/history/pinning_cases.py (issue 37): do not edit by hand.",
        "# Each datatype the standard added after 1.0.0, phenotype/, stimuli/ and the EEG",
        "# coordsystem requirement, declared at the release before the text adds it (an issue",
        "# naming the introducing version) and at that release (no NOT_INCLUDED). Format: README",
        "# of validate_cases.yaml.",
    ]
    for c in cases:
        lines.append(yaml.safe_dump([c], sort_keys=False, allow_unicode=True, width=120).rstrip())
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    cs = main()
    exits = {}
    if len(sys.argv) > 1 and sys.argv[1] == "--exits":
        # `--exits FILE`: a JSON map name → exit code observed (see the report).
        import json
        exits = json.load(open(sys.argv[2]))
    for c in cs:
        c["exit"] = exits.get(c["name"], 16)
    with open(OUT, "w", encoding="utf-8") as fh:
        fh.write(dump(cs))
    print(f"{len(cs)} cases written to {os.path.relpath(OUT, REPO)}")

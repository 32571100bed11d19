"""Shared fixtures: a small dataset written per test, and the conformance examples of
../shared (tests needing them are skipped, and reported as skipped, when absent)."""

import json
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
SHARED = pathlib.Path(os.environ.get("NIDOS_SHARED", REPO.parent / "shared"))
EXAMPLES = SHARED / "conformance" / "examples"
CASES = pathlib.Path(__file__).parent / "cases"


def example_names():
    if not EXAMPLES.is_dir():
        return []
    return sorted(p.name for p in EXAMPLES.iterdir() if (p / "dataset_description.json").is_file())


@pytest.fixture
def examples_dir():
    if not EXAMPLES.is_dir():
        pytest.skip(f"{EXAMPLES} is absent")
    return EXAMPLES


def write_dataset(root: pathlib.Path, files: dict) -> pathlib.Path:
    """Writes `files` (relative path -> str / dict (as JSON) / bytes) under root."""
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, dict):
            p.write_text(json.dumps(content))
        elif isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content)
    return root


def load_cases(name: str):
    """The cases of tests/cases/<name>.json, as pytest params with their ids."""
    cases = json.loads((CASES / f"{name}.json").read_text())
    return [pytest.param(c, id=c["id"]) for c in cases]


@pytest.fixture
def tiny(tmp_path):
    """A small raw dataset with a derivative dataset, sidecars at two levels."""
    return write_dataset(
        tmp_path / "tiny",
        {
            "dataset_description.json": {"Name": "tiny", "StdVersion": "1.10.0", "BIDSVersion": "1.10.0"},
            "participants.tsv": "participant_id\nsub-01\nsub-02\n",
            "README": "A tiny dataset for the tests of the Python package.\n",
            "task-rest_bold.json": {"RepetitionTime": 2.0, "TaskName": "rest"},
            "sub-01/anat/sub-01_T1w.nii.gz": b"",
            "sub-01/func/sub-01_task-rest_run-01_bold.nii.gz": b"",
            "sub-01/func/sub-01_task-rest_run-02_bold.nii.gz": b"",
            "sub-01/func/sub-01_task-rest_run-02_bold.json": {"RepetitionTime": 3.0},
            "sub-01/func/sub-01_task-rest_run-01_events.tsv": "onset\tduration\n1\t1\n",
            "sub-02/anat/sub-02_T1w.nii.gz": b"",
            "sub-02/dwi/sub-02_dwi.nii.gz": b"",
            "sub-02/dwi/sub-02_dwi.bval": "0 1000\n",
            "sub-02/dwi/sub-02_dwi.bvec": "0 1\n0 0\n0 0\n",
            "derivatives/prep/dataset_description.json": {
                "Name": "prep", "StdVersion": "1.10.0", "BIDSVersion": "1.10.0",
                "DatasetType": "derivative", "GeneratedBy": [{"Name": "prep"}],
            },
            "derivatives/prep/sub-01/anat/sub-01_desc-brain_mask.nii.gz": b"",
        },
    )

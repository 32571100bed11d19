"""Layout queries on a small dataset: one case per entry of cases/layout_tiny.json."""

import os
import pickle

import pytest

import nidos
from conftest import load_cases


@pytest.mark.parametrize("case", load_cases("layout_tiny"))
def test_query_case(tiny, case):
    layout = nidos.Layout(tiny, derivatives=case.get("derivatives", False))
    got = layout.get(**case["query"])
    got = [str(v) for v in got]
    assert sorted(got) == sorted(case["expect"])


def test_metadata_inherits_and_overrides(tiny):
    layout = nidos.Layout(tiny)
    run1 = tiny / "sub-01/func/sub-01_task-rest_run-01_bold.nii.gz"
    run2 = tiny / "sub-01/func/sub-01_task-rest_run-02_bold.nii.gz"
    assert layout.get_metadata(run1) == {"RepetitionTime": 2.0, "TaskName": "rest"}
    assert layout.get_metadata(run2) == {"RepetitionTime": 3.0, "TaskName": "rest"}
    # As pybids: a path outside the layout has no metadata.
    assert layout.get_metadata(tiny / "nope.nii.gz") == {}


def test_entity_helpers(tiny):
    layout = nidos.Layout(tiny)
    assert layout.get_subjects() == ["01", "02"]
    assert layout.get_tasks() == ["rest"]
    assert [int(r) for r in layout.get_runs()] == [1, 2]
    assert str(layout.get_runs()[0]) == "01"
    assert layout.get_sessions() == []
    assert "subject" in layout.get_entities()


def test_associated_files(tiny):
    layout = nidos.Layout(tiny)
    dwi = tiny / "sub-02/dwi/sub-02_dwi.nii.gz"
    assert layout.get_bval(dwi) == str(tiny / "sub-02/dwi/sub-02_dwi.bval")
    assert layout.get_bvec(dwi) == str(tiny / "sub-02/dwi/sub-02_dwi.bvec")
    bold = tiny / "sub-01/func/sub-01_task-rest_run-01_bold.nii.gz"
    assert layout.get_events(bold) == [str(tiny / "sub-01/func/sub-01_task-rest_run-01_events.tsv")]


def test_names_and_paths(tiny):
    layout = nidos.Layout(tiny)
    ents = layout.parse_file_entities("sub-03/func/sub-03_task-nback_run-2_bold.nii.gz")
    assert ents["subject"] == "03" and ents["task"] == "nback" and ents["run"] == 2
    assert ents["suffix"] == "bold" and ents["extension"] == ".nii.gz" and ents["datatype"] == "func"
    path = layout.build_path(
        {"subject": "03", "task": "nback", "suffix": "bold", "extension": ".nii.gz"}, absolute_paths=False
    )
    assert path == "sub-03/func/sub-03_task-nback_bold.nii.gz"
    with pytest.raises(ValueError):
        layout.build_path({"subject": "0_3", "suffix": "bold", "extension": ".nii.gz"})


def test_invalid_filters(tiny):
    layout = nidos.Layout(tiny)
    with pytest.raises(ValueError):
        layout.get(colour="blue")
    assert len(layout.get(colour="blue", invalid_filters="drop")) == len(layout)
    assert layout.get(colour="blue", invalid_filters="allow") == []


def test_objects_and_pickling(tiny):
    layout = nidos.Layout(tiny, derivatives=True)
    f = layout.get(suffix="T1w", subject="01")[0]
    assert f.filename == "sub-01_T1w.nii.gz"
    assert f.entities["datatype"] == "anat"
    again = pickle.loads(pickle.dumps(layout))
    assert again.get(return_type="filename") == layout.get(return_type="filename")
    assert pickle.loads(pickle.dumps(f)).path == f.path


def test_tables(tiny):
    pytest.importorskip("pyarrow")
    pytest.importorskip("pandas")
    layout = nidos.Layout(tiny)
    table = layout.to_arrow(metadata=True)
    assert table.num_rows == len(layout)
    df = layout.to_pandas()
    assert set(df["subject"].dropna()) == {"01", "02"}


def test_missing_root(tmp_path):
    with pytest.raises(ValueError):
        nidos.Layout(tmp_path / "absent")


def test_files_in_natural_path_order(tmp_path):
    """The listing comes sorted from Rust (digit runs by value) and the layout keeps
    that order without sorting again; a non-ASCII path makes Python sort instead. Both
    give the order of ``_natural_key``."""
    from conftest import write_dataset
    from nidos._layout import _natural_key

    names = ["sub-10", "sub-2", "sub-1", "sub-01b", "sub-ü3"]
    files = {"dataset_description.json": {"Name": "order", "BIDSVersion": "1.10.0"}}
    for sub in names:
        for run in ("10", "9", "1"):
            files[f"{sub}/func/{sub}_task-rest_run-{run}_bold.nii.gz"] = b""
    for ascii_only in (True, False):
        subs = [s for s in names if s.isascii() or not ascii_only]
        root = write_dataset(tmp_path / f"ds-{ascii_only}", {
            k: v for k, v in files.items() if "/" not in k or k.split("/")[0] in subs
        })
        got = nidos.Layout(root, validate=False).get(return_type="file")
        assert len(got) > 3 * len(subs)
        assert got == sorted(got, key=_natural_key)
        got = nidos.Layout(root).get(return_type="file")
        assert len(got) >= 12
        assert got == sorted(got, key=_natural_key)

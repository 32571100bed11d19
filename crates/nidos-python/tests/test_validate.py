"""nidos.validate, nidos.eval and nidos.context."""

import json

import pytest

import nidos


def test_report_shape(tiny):
    report = nidos.validate(tiny)
    assert isinstance(report.issues, list)
    assert report.summary["subjects"] == ["01", "02"]
    # Empty NIfTI files are errors.
    assert any(i["code"] == "EMPTY_FILE" for i in report.errors)
    assert report.valid is False
    assert json.loads(report.to_json())["summary"] == report.summary


def test_ignore_warnings_and_config(tiny):
    report = nidos.validate(tiny, ignore_warnings=True)
    assert report.warnings == []
    quiet = nidos.validate(tiny, config={"ignore": [{"code": "EMPTY_FILE"}]})
    # As in the JSON report, ignored issues stay listed with severity "ignore".
    assert not any(i["code"] == "EMPTY_FILE" for i in quiet.errors)
    assert {i["severity"] for i in quiet.issues if i["code"] == "EMPTY_FILE"} == {"ignore"}


def test_recursive(tiny):
    report = nidos.validate(tiny, recursive=True)
    assert "prep" in report.derivatives


def test_to_pandas(tiny):
    pytest.importorskip("pandas")
    df = nidos.validate(tiny).to_pandas()
    assert "code" in df.columns and len(df) > 0


def test_missing_dataset(tmp_path):
    with pytest.raises(FileNotFoundError):
        nidos.validate(tmp_path / "absent")


def test_eval_and_context(tiny):
    f = "sub-01/func/sub-01_task-rest_run-02_bold.nii.gz"
    assert nidos.eval("sidecar.RepetitionTime", tiny, f) == 3.0
    assert nidos.eval("entities.subject", tiny, f) == "01"
    ctx = nidos.context(tiny, f)
    assert ctx["suffix"] == "bold"
    with pytest.raises(ValueError):
        nidos.eval("sidecar.(", tiny, f)


def test_report_pickles(tiny):
    import pickle

    report = nidos.validate(tiny, recursive=True)
    again = pickle.loads(pickle.dumps(report))
    assert again.issues == report.issues and again.summary == report.summary
    assert set(again.derivatives) == set(report.derivatives)


def test_calls_run_in_threads(tiny):
    """Long calls release the GIL: several threads validate and list at once."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        reports = list(pool.map(lambda _: nidos.validate(tiny), range(4)))
        layouts = list(pool.map(lambda _: len(nidos.Layout(tiny)), range(4)))
    assert len({r.to_json() for r in reports}) == 1
    assert len(set(layouts)) == 1

"""``Layout(database_path=...)``: the index is an Arrow IPC file with a column per entity,
a later layout with the same arguments is built from it without listing or walking the
dataset, and a changed dataset (a file added, a sidecar edited) is listed again."""

import json
import os

import pytest

import nidos
from nidos import _native, _select

ipc = pytest.importorskip("pyarrow.ipc")


def _forbid_listing(monkeypatch):
    """Any listing of the dataset (the Rust scan, a directory walk) fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("the dataset was listed again")

    monkeypatch.setattr(_native, "scan", refuse)
    monkeypatch.setattr(_select, "walk", refuse)
    monkeypatch.setattr(os, "scandir", refuse)
    monkeypatch.setattr(os, "walk", refuse)
    monkeypatch.setattr(os, "listdir", refuse)


@pytest.mark.parametrize("validate", [True, False])
def test_reload_does_not_list_the_dataset(tiny, tmp_path, monkeypatch, validate):
    db = tmp_path / "db"
    first = nidos.Layout(tiny, validate=validate, derivatives=True, database_path=db)
    assert not first._from_index
    expected = first.get(return_type="file")
    metadata = {f.path: f.get_metadata() for f in first.get()}
    with monkeypatch.context() as m:
        _forbid_listing(m)
        again = nidos.Layout(tiny, validate=validate, derivatives=True, database_path=db)
        assert again._from_index
        assert again.get(return_type="file") == expected
        assert {f.path: f.get_metadata() for f in again.get()} == metadata
        assert [f.entities for f in again.get()] == [f.entities for f in first.get()]
        # The same value types, sidecar key order and file classes (the reload makes its
        # file objects and entity dicts its own way; the entities' key order is the
        # index's column order, not the listing's).
        assert [sorted((k, type(v).__name__) for k, v in f.entities.items()) for f in again.get()] == [
            sorted((k, type(v).__name__) for k, v in f.entities.items()) for f in first.get()]
        assert [list(f.get_metadata()) for f in again.get()] == [list(f.get_metadata()) for f in first.get()]
        assert [type(f) for f in again.get()] == [type(f) for f in first.get()]
        assert all(f.dataset is not None for f in again.get())
        assert sorted(again.derivatives) == sorted(first.derivatives)


def test_index_is_arrow_with_entity_columns(tiny, tmp_path):
    db = tmp_path / "db"
    layout = nidos.Layout(tiny, database_path=db)
    table = ipc.open_file(str(db / "nidos_layout.arrow")).read_all()
    assert table.num_rows == len(layout.get())
    for column in ("path", "relpath", "size", "e:subject", "e:suffix", "e:extension"):
        assert column in table.column_names
    rows = table.to_pylist()
    bold = [r for r in rows if r["e:suffix"] == "bold" and r["e:extension"] == ".nii.gz"]
    assert bold and all(r["e:subject"] for r in bold)


def test_changed_dataset_is_listed_again(tiny, tmp_path):
    db = tmp_path / "db"
    before = nidos.Layout(tiny, database_path=db)
    n = len(before.get())
    # A new file: its folder's modification time changes.
    new = tiny / "sub-01" / "anat" / "sub-01_T2w.nii.gz"
    new.write_bytes(b"")
    added = nidos.Layout(tiny, database_path=db)
    assert not added._from_index
    assert str(new) in added.get(return_type="file") and len(added.get()) == n + 1
    # A sidecar edited in place: its own time and size change.
    sidecar = tiny / "task-rest_bold.json"
    data = json.loads(sidecar.read_text())
    data["RepetitionTime"] = 3.5
    sidecar.write_text(json.dumps(data))
    os.utime(sidecar, ns=(os.stat(sidecar).st_atime_ns, os.stat(sidecar).st_mtime_ns + 10**9))
    edited = nidos.Layout(tiny, database_path=db)
    assert not edited._from_index
    run1 = tiny / "sub-01" / "func" / "sub-01_task-rest_run-01_bold.nii.gz"
    assert edited.get_metadata(run1)["RepetitionTime"] == 3.5
    # Unchanged since: reloaded.
    assert nidos.Layout(tiny, database_path=db)._from_index


def test_other_arguments_are_not_reloaded(tiny, tmp_path):
    db = tmp_path / "db"
    nidos.Layout(tiny, database_path=db)
    assert not nidos.Layout(tiny, database_path=db, validate=False)._from_index
    assert not nidos.Layout(tiny, database_path=db, reset_database=True)._from_index

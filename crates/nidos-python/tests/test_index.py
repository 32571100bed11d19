"""nidos.index: the Parquet index, read back with pyarrow and DuckDB."""

import json
import shutil

import pytest

import nidos

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def test_index_columns(tiny):
    table = nidos.index(tiny)
    names = table.column_names
    for col in ("dataset", "sub", "ses", "task", "run", "datatype", "suffix", "ext",
                "extra_entities", "root", "path", "size", "metadata"):
        assert col in names
    assert table.schema.field("run").type == pa.int32()
    rows = {r["path"]: r for r in table.to_pylist()}
    bold = rows["sub-01/func/sub-01_task-rest_run-02_bold.nii.gz"]
    assert bold["dataset"] == "tiny" and bold["sub"] == "01" and bold["run"] == 2
    assert json.loads(bold["metadata"])["RepetitionTime"] == 3.0
    assert bold["meta__RepetitionTime"] == 3.0
    assert table.schema.field("meta__TaskName").type == pa.string()
    # The derivative dataset is indexed as a dataset of its own.
    assert "tiny/derivatives/prep" in set(table.column("dataset").to_pylist())


def test_folder_of_datasets_to_file(tiny, tmp_path):
    archive = tmp_path / "archive"
    archive.mkdir()
    shutil.copytree(tiny, archive / "a")
    shutil.copytree(tiny, archive / "b")
    assert [n for n, _ in nidos.find_datasets(archive)] == [
        "a", "a/derivatives/prep", "b", "b/derivatives/prep"]
    out = tmp_path / "index.parquet"
    assert nidos.index(archive, out) is None
    table = pq.read_table(out)
    assert set(table.column("dataset").to_pylist()) == {"a", "b", "a/derivatives/prep", "b/derivatives/prep"}
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    [(n,)] = con.execute(
        f"select count(*) from read_parquet('{out}') where suffix = 'bold' and ext = '.nii.gz'"
    ).fetchall()
    assert n == 4


def test_no_dataset(tmp_path):
    with pytest.raises(ValueError):
        nidos.index(tmp_path)

"""The scale-out recipe of docs/scale-out.md: nidos.index and nidos.validate fanned out
over many datasets with Dask distributed (a LocalCluster of two worker processes), the
results written as a partitioned Parquet dataset and queried with DuckDB."""

import shutil

import pytest

import nidos

SOME = ["ds001", "ds005", "eeg_cbm", "asl001"]


def index_one(root):
    """One task: the index of one dataset as a pyarrow Table (runs on a worker)."""
    return nidos.index(root)


def validate_one(root):
    """One task: the summary of one dataset's report (runs on a worker)."""
    report = nidos.validate(root)
    return {"root": str(root), "errors": len(report.errors), "warnings": len(report.warnings)}


def test_dask_index_and_validate(examples_dir, tmp_path):
    distributed = pytest.importorskip("distributed")
    duckdb = pytest.importorskip("duckdb")
    pq = pytest.importorskip("pyarrow.parquet")
    archive = tmp_path / "archive"
    names = [n for n in SOME if (examples_dir / n).is_dir()][:4]
    assert len(names) >= 2
    for n in names:
        shutil.copytree(examples_dir / n, archive / n, symlinks=True)

    # The task functions live in this test module, which the workers cannot import:
    # send them by value.
    import sys

    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    roots = [root for _, root in nidos.find_datasets(archive)]
    out = tmp_path / "index"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        tables = client.gather(client.map(index_one, roots))
        reports = client.gather(client.map(validate_one, roots))
        # A Layout pickles to a worker and back.
        layout = nidos.Layout(roots[0])
        files = client.submit(lambda lay: len(lay.get(return_type="filename")), layout).result()
        assert files == len(layout)

    for table in tables:
        pq.write_to_dataset(table, out, partition_cols=["dataset"])
    got = duckdb.connect().execute(
        f"select dataset, count(*) as n from read_parquet('{out}/**/*.parquet', "
        "hive_partitioning = true, union_by_name = true) group by dataset order by dataset"
    ).fetchall()
    assert [d for d, _ in got] == sorted(names)
    assert sum(n for _, n in got) == sum(t.num_rows for t in tables)
    assert {r["root"] for r in reports} == set(roots)
    assert all(r["errors"] >= 0 for r in reports)

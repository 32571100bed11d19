"""The columnar index: one row per file of many datasets, as Arrow / Parquet."""

from __future__ import annotations

import os
from typing import Iterable, List, Optional, Tuple, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]


def find_datasets(path: PathLike) -> List[Tuple[str, str]]:
    """The datasets at or under ``path`` as ``(name, root)`` pairs: every directory
    holding a ``dataset_description.json`` (inside a dataset, only ``derivatives/`` is
    searched further)."""
    return [tuple(p) for p in _native.find_roots(os.fspath(path))]


def index(
    paths: Union[PathLike, Iterable[PathLike]],
    output: Optional[PathLike] = None,
    *,
    schema: Optional[PathLike] = None,
    std_version: Optional[str] = None,
):
    """Indexes every dataset at or under ``paths``.

    With ``output``, writes that Parquet file and returns None; otherwise returns a
    ``pyarrow.Table`` (needs pyarrow). Columns: ``dataset``, one per entity (bids2table's
    names), ``datatype``, ``suffix``, ``ext``, ``extra_entities``, ``root``, ``path``,
    ``size``, ``metadata`` (JSON text) and ``meta__<Key>`` typed sidecar columns.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    data = _native.index_parquet(
        [os.fspath(p) for p in paths],
        output=None if output is None else os.fspath(output),
        schema=None if schema is None else os.fspath(schema),
        std_version=std_version,
    )
    if data is None:
        return None
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pq.read_table(pa.BufferReader(data))

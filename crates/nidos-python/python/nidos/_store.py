"""The on-disk index behind ``Layout(database_path=...)``: the listing as one Parquet
file (a row per file; datasets, entity table and shared sidecars in the file's key-value
metadata), with a fingerprint of the dataset (the modification times of its folders and
sidecars) so that a changed dataset is listed again instead of reloaded."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Optional, Tuple

FILE = "nidos_layout.parquet"
_COLUMNS = ("dataset", "relpath", "entities", "datatype", "suffix", "extension", "size", "meta_id")


def _fingerprint(listing: dict) -> str:
    """A digest of the modification times of every folder holding a listed file (and
    their parents up to the dataset root) and of every listed JSON file: adding,
    removing or renaming a file changes its folder's time; editing a sidecar its own."""
    h = hashlib.sha256()
    for ds in listing["datasets"]:
        root = ds["root"]
        paths = {""}
        for row in ds["files"]:
            rel = row[0]
            d = os.path.dirname(rel)
            while d and d not in paths:
                paths.add(d)
                d = os.path.dirname(d)
            if rel.endswith(".json"):
                paths.add(rel)
        for rel in sorted(paths):
            try:
                st = os.stat(os.path.join(root, rel))
                stamp = f"{st.st_mtime_ns}:{st.st_size if rel.endswith('.json') else 0}"
            except OSError:
                stamp = "absent"
            h.update(f"{root}\0{rel}\0{stamp}\n".encode())
    return h.hexdigest()


def save(folder: str, root: str, key: dict, listing: dict) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols: dict = {c: [] for c in _COLUMNS}
    for i, ds in enumerate(listing["datasets"]):
        for rel, ents, datatype, suffix, ext, size, meta_id in ds["files"]:
            cols["dataset"].append(i)
            cols["relpath"].append(rel)
            cols["entities"].append(json.dumps(ents))
            cols["datatype"].append(datatype)
            cols["suffix"].append(suffix)
            cols["extension"].append(ext)
            cols["size"].append(size)
            cols["meta_id"].append(meta_id)
    schema = pa.schema([
        ("dataset", pa.int32()), ("relpath", pa.string()), ("entities", pa.string()),
        ("datatype", pa.string()), ("suffix", pa.string()), ("extension", pa.string()),
        ("size", pa.int64()), ("meta_id", pa.int64()),
    ])
    table = pa.Table.from_pydict(cols, schema=schema)
    meta = {
        "nidos.root": root,
        "nidos.key": json.dumps(key, sort_keys=True),
        "nidos.fingerprint": _fingerprint(listing),
        "nidos.entities": json.dumps(listing["entities"]),
        "nidos.datasets": json.dumps(
            [{k: v for k, v in ds.items() if k != "files"} for ds in listing["datasets"]]
        ),
        "nidos.metadata": json.dumps(listing["metadata"]),
    }
    table = table.replace_schema_metadata(meta)
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, FILE + ".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, os.path.join(folder, FILE))


def _read(folder: str):
    import pyarrow.parquet as pq

    path = os.path.join(folder, FILE)
    if not os.path.isfile(path):
        return None
    table = pq.read_table(path)
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    return table, meta


def saved_root(folder: str) -> Tuple[str, dict]:
    found = _read(folder)
    if found is None:
        raise ValueError(f"{folder}: no saved layout ({FILE})")
    _, meta = found
    return meta["nidos.root"], json.loads(meta["nidos.key"])


def load(folder: str, root: str, key: dict) -> Optional[dict]:
    """The saved listing of ``root``, or None when there is none, it was made with other
    options, or the dataset changed since."""
    try:
        found = _read(folder)
    except Exception:
        return None
    if found is None:
        return None
    table, meta = found
    if meta.get("nidos.root") != root or meta.get("nidos.key") != json.dumps(key, sort_keys=True):
        return None
    datasets: Any = json.loads(meta["nidos.datasets"])
    for ds in datasets:
        ds["files"] = []
    cols = table.to_pydict()
    for i, rel, ents, datatype, suffix, ext, size, meta_id in zip(*(cols[c] for c in _COLUMNS)):
        datasets[i]["files"].append([rel, json.loads(ents), datatype, suffix, ext, size, meta_id])
    listing = {
        "entities": json.loads(meta["nidos.entities"]),
        "datasets": datasets,
        "metadata": json.loads(meta["nidos.metadata"]),
    }
    if _fingerprint(listing) != meta.get("nidos.fingerprint"):
        return None
    return listing

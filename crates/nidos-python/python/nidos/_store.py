"""The on-disk index behind ``Layout(database_path=...)``: one Parquet file, a row per
file of the layout and its derivative layouts (``dataset``, ``path``, ``relpath``,
``size``, ``meta_id``, and one text column per entity, ``e:<name>``), with the
layouts, the distinct merged sidecars, the arguments it was made with and a
fingerprint of the dataset in the file's key-value metadata. A later layout with the
same arguments builds its files from it without listing the dataset, unless the
fingerprint (the modification times of the folders holding files, their parents, and
the JSON files) changed: then the dataset is listed again and the index rewritten."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Dict, List, Optional

FILE = "nidos_layout.parquet"
_FIXED = ("dataset", "path", "relpath", "size", "meta_id")


class LayoutInfo:
    """The arguments an index was made with (pybids' ``LayoutInfo``)."""

    def __init__(self, root: str, derivatives: Any, config: Any):
        self.root = root
        self.derivatives = derivatives
        self.config = config

    def __repr__(self) -> str:
        return f"<LayoutInfo root={self.root!r}>"


class ConnectionManager:
    """pybids' handle on a layout's index: ``database_file`` (None when the layout
    keeps no index on disk) and ``layout_info``."""

    def __init__(self, database_path: Optional[str], info: dict):
        self.database_file = os.path.join(database_path, FILE) if database_path else None
        self.layout_info = LayoutInfo(info["root"], info["derivatives"], info["config"])


def stamped_paths(layouts: List[Any]) -> List[str]:
    """What the fingerprint covers: every folder holding a file (and its parents up to
    its layout's root) and every JSON file. Adding, removing or renaming a file changes
    its folder's time; editing a sidecar its own."""
    out: Dict[str, None] = {}
    for lay in layouts:
        root = lay.root.rstrip(os.sep)
        out[root] = None
        for f in lay._files:
            d = os.path.dirname(f.path)
            while d not in out and len(d) > len(root) and d.startswith(root):
                out[d] = None
                d = os.path.dirname(d)
            if f.path.endswith(".json"):
                out[f.path] = None
    return list(out)


def fingerprint(paths: List[str]) -> str:
    h = hashlib.sha256()
    for p in paths:
        try:
            st = os.stat(p)
            stamp = f"{st.st_mtime_ns}:{st.st_size if p.endswith('.json') else 0}"
        except OSError:
            stamp = "absent"
        h.update(f"{p}\0{stamp}\n".encode())
    return h.hexdigest()


def save(folder: str, info: dict, key: dict, entities: list, layouts: List[Any]) -> None:
    """Write ``layouts`` (the root layout first, then its derivative layouts) into
    ``folder``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fixed: Dict[str, list] = {c: [] for c in _FIXED}
    ents: Dict[str, list] = {}
    kinds: Dict[str, str] = {}
    metadata: List[dict] = []
    meta_ids: Dict[int, int] = {}
    n = 0
    for i, lay in enumerate(layouts):
        for f in lay._files:
            fixed["dataset"].append(i)
            fixed["path"].append(f.path)
            fixed["relpath"].append(f.relpath)
            fixed["size"].append(int(f.size or 0))
            md = f._metadata
            if md:
                mid = meta_ids.get(id(md))
                if mid is None:
                    mid = meta_ids[id(md)] = len(metadata)
                    metadata.append(dict(md))
                fixed["meta_id"].append(mid)
            else:
                fixed["meta_id"].append(None)
            for k, v in f.entities.items():
                col = ents.get(k)
                if col is None:
                    col = ents[k] = [None] * n
                if isinstance(v, bool):
                    kinds[k] = "bool"
                elif isinstance(v, int):
                    kinds.setdefault(k, "int")
                elif isinstance(v, float):
                    kinds[k] = "float"
                col.append(str(v))
            n += 1
            for col in ents.values():
                if len(col) < n:
                    col.append(None)
    arrays = [
        pa.array(fixed["dataset"], pa.int32()),
        pa.array(fixed["path"], pa.string()),
        pa.array(fixed["relpath"], pa.string()),
        pa.array(fixed["size"], pa.int64()),
        pa.array(fixed["meta_id"], pa.int64()),
    ] + [pa.array(col, pa.string()) for col in ents.values()]
    names = list(_FIXED) + ["e:" + k for k in ents]
    table = pa.Table.from_arrays(arrays, names=names)
    stamped = stamped_paths(layouts)
    meta = {
        "nidos.info": json.dumps(info),
        "nidos.key": json.dumps(key, sort_keys=True),
        "nidos.entities": json.dumps(entities),
        "nidos.kinds": json.dumps(kinds),
        "nidos.layouts": json.dumps([
            {"name": lay._name, "root": lay.root, "description": lay.description}
            for lay in layouts
        ]),
        "nidos.metadata": json.dumps(metadata),
        "nidos.stamped": json.dumps(stamped),
        "nidos.fingerprint": fingerprint(stamped),
    }
    table = table.replace_schema_metadata(meta)
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, FILE + ".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, os.path.join(folder, FILE))


class Saved:
    """An index file opened once: its footer (the arguments it was made with) is read
    first, its rows only when they are wanted."""

    def __init__(self, folder: str):
        import pyarrow.parquet as pq

        self.file = pq.ParquetFile(os.path.join(folder, FILE))
        raw = self.file.schema_arrow.metadata or {}
        self.meta = {k.decode(): v.decode() for k, v in raw.items()}

    @property
    def info(self) -> Optional[dict]:
        text = self.meta.get("nidos.info")
        return None if text is None else json.loads(text)

    @property
    def key(self) -> Optional[dict]:
        text = self.meta.get("nidos.key")
        return None if text is None else json.loads(text)

    def load(self, wanted: dict, padded: Any = int) -> Optional[dict]:
        """The saved layouts (``padded``: the class of index values such as ``run``),
        or None when the index was made with other arguments or the dataset changed
        since."""
        if self.meta.get("nidos.key") != json.dumps(wanted, sort_keys=True):
            return None
        if fingerprint(json.loads(self.meta["nidos.stamped"])) != self.meta.get("nidos.fingerprint"):
            return None
        return _state(self.file.read(), self.meta, padded)


def open_index(folder: str) -> Optional[Saved]:
    """The index in ``folder``, or None when there is none (or it cannot be read)."""
    if not os.path.isfile(os.path.join(folder, FILE)):
        return None
    try:
        return Saved(folder)
    except Exception:
        return None


def key(folder: str) -> Optional[dict]:
    saved = open_index(folder)
    return None if saved is None else saved.key


def _state(table: Any, meta: Dict[str, str], padded: Any) -> dict:
    layouts = json.loads(meta["nidos.layouts"])
    metadata = json.loads(meta["nidos.metadata"])
    kinds = json.loads(meta["nidos.kinds"])
    cols = table.to_pydict()
    names = [c[2:] for c in table.column_names if c.startswith("e:")]
    values = [cols["e:" + k] for k in names]
    for k, col in zip(names, values):
        kind = kinds.get(k)
        if kind == "int":
            col[:] = [padded(v) if v is not None and v.isdigit() else v for v in col]
        elif kind == "float":
            col[:] = [float(v) if v is not None else None for v in col]
        elif kind == "bool":
            col[:] = [(v == "True") if v is not None else None for v in col]
    files: List[list] = [[] for _ in layouts]
    rows = zip(cols["dataset"], cols["path"], cols["relpath"], cols["size"], cols["meta_id"],
               *values) if values else zip(cols["dataset"], cols["path"], cols["relpath"],
                                           cols["size"], cols["meta_id"])
    for row in rows:
        ents = {k: v for k, v in zip(names, row[5:]) if v is not None}
        mid = row[4]
        md = metadata[mid] if mid is not None else {}
        files[row[0]].append((row[1], row[2], ents, row[3], md))
    for lay, fs in zip(layouts, files):
        lay["files"] = fs
    return {"entities": json.loads(meta["nidos.entities"]), "layouts": layouts}

"""The on-disk index behind ``Layout(database_path=...)``: one Arrow IPC file (the
columnar Arrow file format, "Feather v2"; memory-mapped when reloaded: unlike Parquet it
needs no decoding, which was the largest part of a reload), a row per
file of the layout and its derivative layouts (``dataset``, ``path``, ``relpath``,
``size``, ``meta_id``, ``kind`` (the file class, ``_files.FILE_CLASSES``), and one
dictionary-coded text column per entity, ``e:<name>``), with the
layouts, the distinct merged sidecars, the arguments it was made with and a
fingerprint of the dataset in the file's key-value metadata. A later layout with the
same arguments builds its files from it without listing the dataset, unless the
fingerprint (the modification times of the folders holding files, their parents, and
the JSON files, taken in Rust) changed: then the dataset is listed again and the index rewritten."""

from __future__ import annotations

import array
import base64
import bisect
import json
import os
import sys
from typing import Any, Dict, List, Optional

from . import _files, _native

FILE = "nidos_layout.arrow"
# A 32-bit unsigned array type code ('I' on every common platform).
_U32 = "I" if array.array("I").itemsize == 4 else "L"
_FIXED = ("dataset", "path", "relpath", "size", "meta_id")
# The file classes by the code a row's ``kind`` holds.
_KINDS = _files.FILE_CLASSES


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


def fingerprint(stamped: str) -> str:
    """The fingerprint of the paths in ``stamped`` (their JSON list): a hash of each
    path's modification time and size, taken in Rust (off the GIL, on a few threads)."""
    return _native.fingerprint(stamped)


def _pack_metadata(metadata: List[dict]) -> dict:
    """The merged sidecars with each distinct key-value pair stored once: ``pairs``
    (``[key, value]``), and the sidecars as the pairs' indices in key order, all in one
    run (``rows``) cut at ``ends``; both runs are little-endian 32-bit integers in
    base64 (read back without parsing a number at a time)."""
    pairs: List[list] = []
    ids: Dict[tuple, int] = {}
    rows = array.array(_U32)
    ends = array.array(_U32)
    for md in metadata:
        for k, v in md.items():
            tag = (k, json.dumps(v))
            i = ids.get(tag)
            if i is None:
                i = ids[tag] = len(pairs)
                pairs.append([k, v])
            rows.append(i)
        ends.append(len(rows))
    if sys.byteorder != "little":
        rows.byteswap()
        ends.byteswap()
    return {"pairs": pairs, "rows": base64.b64encode(rows.tobytes()).decode(),
            "ends": base64.b64encode(ends.tobytes()).decode()}


def _unpack_metadata(text: str) -> List[dict]:
    packed = json.loads(text)
    if isinstance(packed, list):  # an index written before the pairs were shared
        return packed
    get = packed["pairs"].__getitem__
    rows = array.array(_U32, base64.b64decode(packed["rows"]))
    ends = array.array(_U32, base64.b64decode(packed["ends"]))
    if sys.byteorder != "little":
        rows.byteswap()
        ends.byteswap()
    out = []
    start = 0
    for end in ends:
        out.append(dict(map(get, rows[start:end])))
        start = end
    return out


def save(folder: str, info: dict, key: dict, entities: list, layouts: List[Any]) -> None:
    """Write ``layouts`` (the root layout first, then its derivative layouts) into
    ``folder``."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    fixed: Dict[str, list] = {c: [] for c in _FIXED}
    ents: Dict[str, list] = {}
    kinds: Dict[str, str] = {}
    metadata: List[dict] = []
    meta_ids: Dict[int, int] = {}
    n = 0
    kinds_col: List[int] = []
    kind_of = {cls: i for i, cls in enumerate(_KINDS)}
    for i, lay in enumerate(layouts):
        for f in lay._files:
            fixed["dataset"].append(i)
            fixed["path"].append(f.path)
            fixed["relpath"].append(f.relpath)
            fixed["size"].append(int(f.size or 0))
            kinds_col.append(kind_of[_files.file_class(f.path)])
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
        pa.array(kinds_col, pa.int8()),
    ] + [pa.array(col, pa.string()).dictionary_encode() for col in ents.values()]
    names = list(_FIXED) + ["kind"] + ["e:" + k for k in ents]
    table = pa.Table.from_arrays(arrays, names=names)
    stamped_text = json.dumps(stamped_paths(layouts))
    meta = {
        "nidos.info": json.dumps(info),
        "nidos.key": json.dumps(key, sort_keys=True),
        "nidos.entities": json.dumps(entities),
        "nidos.kinds": json.dumps(kinds),
        "nidos.layouts": json.dumps([
            {"name": lay._name, "root": lay.root, "description": lay.description}
            for lay in layouts
        ]),
        "nidos.metadata": json.dumps(_pack_metadata(metadata)),
        "nidos.stamped": stamped_text,
        "nidos.fingerprint": fingerprint(stamped_text),
    }
    table = table.replace_schema_metadata(meta)
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, FILE + ".tmp")
    with pa.OSFile(tmp, "wb") as sink:
        with ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
    os.replace(tmp, os.path.join(folder, FILE))


class Saved:
    """An index file opened once: its footer (the arguments it was made with) is read
    first, its rows only when they are wanted."""

    def __init__(self, folder: str):
        import pyarrow as pa
        import pyarrow.ipc as ipc

        self.file = ipc.open_file(pa.memory_map(os.path.join(folder, FILE)))
        raw = self.file.schema.metadata or {}
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
        if fingerprint(self.meta["nidos.stamped"]) != self.meta.get("nidos.fingerprint"):
            return None
        try:
            return _state(self.file.read_all(), self.meta, padded)
        except (KeyError, ValueError, TypeError, IndexError):
            return None  # an index this version cannot read: the dataset is listed again


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
    metadata = _unpack_metadata(meta["nidos.metadata"])
    kinds = json.loads(meta["nidos.kinds"])
    fixed = {c: table.column(c).to_pylist() for c in _FIXED}
    n = table.num_rows
    columns = []
    for name in table.column_names:
        if not name.startswith("e:"):
            continue
        k = name[2:]
        kind = kinds.get(k)
        col = table.column(name).combine_chunks()
        if not hasattr(col, "indices"):
            col = col.dictionary_encode()
        # Each distinct value converted once; the files share its object.
        values = col.dictionary.to_pylist()
        if kind == "int":
            values = [padded(v) if v is not None and v.isdigit() else v for v in values]
        elif kind == "float":
            values = [None if v is None else float(v) for v in values]
        elif kind == "bool":
            values = [None if v is None else v == "True" for v in values]
        columns.append((k, col.indices.to_pylist(), values))
    ents = _native.entity_dicts(n, columns)
    # (pyarrow's fill_null would load pyarrow.compute: a quarter of a second.)
    by_id: Dict[Any, dict] = dict(enumerate(metadata))
    by_id[None] = {}
    metas = list(map(by_id.__getitem__, fixed["meta_id"]))
    file_kinds = table.column("kind").to_pylist() if "kind" in table.column_names else None
    # Rows are written layout by layout: each layout's files are one slice.
    start = 0
    datasets = fixed["dataset"]
    for i, lay in enumerate(layouts):
        end = bisect.bisect_right(datasets, i, start)
        lay["files"] = (fixed["path"][start:end], fixed["relpath"][start:end], ents[start:end],
                        fixed["size"][start:end], metas[start:end],
                        None if file_kinds is None else file_kinds[start:end])
        start = end
    return {"entities": json.loads(meta["nidos.entities"]), "layouts": layouts}

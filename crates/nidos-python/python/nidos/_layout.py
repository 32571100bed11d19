"""``nidos.Layout``: pybids-style queries over a dataset's files, answered from one
listing made by the Rust core (files the schema accepts, entities, merged sidecars)."""

from __future__ import annotations

import enum
import json
import os
import re
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]

# pybids' names for entities whose schema long name differs (pybids name -> schema name).
_PYBIDS_NAMES = {
    "staining": "stain",
    "proc": "processing",
    "inv": "inversion",
    "mt": "mtransfer",
    "hemi": "hemisphere",
    "res": "resolution",
    "den": "density",
    "desc": "description",
}
_SCHEMA_TO_PYBIDS = {v: k for k, v in _PYBIDS_NAMES.items()}
_NAME_FIELDS = ("suffix", "extension", "datatype")


class Query(enum.Enum):
    """Special filter values, as pybids': ``NONE`` (the entity is absent), ``ANY``
    (present, any value), ``OPTIONAL`` (no constraint)."""

    NONE = 1
    ANY = 2
    REQUIRED = 2
    OPTIONAL = 3


def _special(value: Any) -> Optional[str]:
    """'NONE' / 'ANY' / 'OPTIONAL' for nidos' or pybids' Query values (and None)."""
    if value is None:
        return "NONE"
    if isinstance(value, enum.Enum) and type(value).__name__ == "Query":
        name = value.name
        return "ANY" if name == "REQUIRED" else name
    return None


class PaddedInt(int):
    """An index label: compares as its number, prints as written (``01``)."""

    def __new__(cls, text: Union[str, int]):
        obj = super().__new__(cls, int(text))
        obj._text = str(text)
        return obj

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"PaddedInt({self._text!r})"

    def __reduce__(self):
        return (PaddedInt, (self._text,))

    __hash__ = int.__hash__

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, str):
            return other == self._text or (other.isdigit() and int(other) == int(self))
        return int.__eq__(self, other)

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)


class BIDSFile:
    """One file of a layout: ``path`` (absolute), ``relpath`` (to the layout root),
    ``filename``, ``dirname``, ``entities`` (including suffix, extension, datatype)."""

    __slots__ = ("path", "relpath", "entities", "size", "dataset", "_metadata")

    def __init__(self, path, relpath, entities, size, dataset, metadata):
        self.path = path
        self.relpath = relpath
        self.entities = entities
        self.size = size
        self.dataset = dataset
        self._metadata = metadata

    @property
    def filename(self) -> str:
        return os.path.basename(self.path)

    @property
    def dirname(self) -> str:
        return os.path.dirname(self.path)

    def get_metadata(self) -> dict:
        return dict(self._metadata)

    def get_entities(self, metadata: bool = False) -> dict:
        out = dict(self.entities)
        if metadata:
            out.update(self._metadata)
        return out

    def __fspath__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return f"<BIDSFile filename='{self.path}'>"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, BIDSFile) and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    def __getstate__(self):
        return {s: getattr(self, s) for s in self.__slots__}

    def __setstate__(self, state):
        for k, v in state.items():
            setattr(self, k, v)


class _Dataset:
    """A dataset of the layout: the root one or a derivative one."""

    def __init__(self, name: str, root: str, description: Any, derivative: bool):
        self.name = name
        self.root = root
        self.description = description if isinstance(description, dict) else {}
        self.derivative = derivative

    def scope_names(self) -> set:
        names = {os.path.basename(self.root.rstrip("/"))}
        if self.name:
            names.add(self.name)
        for g in self.description.get("GeneratedBy") or []:
            if isinstance(g, dict) and g.get("Name"):
                names.add(g["Name"])
        p = self.description.get("PipelineDescription")
        if isinstance(p, dict) and p.get("Name"):
            names.add(p["Name"])
        return names


class Layout:
    """The files of a dataset the schema accepts, queried as pybids' ``BIDSLayout``.

    ``derivatives``: False, True (every ``derivatives/<name>`` dataset), or paths of
    derivative datasets (or of folders holding them). ``schema``: a YAML rule tree or a
    compiled schema JSON instead of the bundled rules.
    """

    def __init__(
        self,
        root: PathLike,
        *,
        derivatives: Union[bool, PathLike, Sequence[PathLike]] = False,
        schema: Optional[PathLike] = None,
    ):
        self.root = os.path.abspath(os.fspath(root))
        self._derivatives_arg = derivatives
        self._schema = None if schema is None else os.fspath(schema)
        if not os.path.isdir(self.root):
            raise FileNotFoundError(f"{self.root}: no such directory")
        self._datasets: List[_Dataset] = []
        self._files: List[BIDSFile] = []
        self._entity_names: Dict[str, str] = {}  # any accepted name -> output name
        self._index_entities: set = set()
        nested = derivatives is True
        self._add_listing(_native.scan_json(self.root, derivatives=nested, schema=self._schema), False)
        if derivatives and derivatives is not True:
            paths = [derivatives] if isinstance(derivatives, (str, os.PathLike)) else derivatives
            for p in paths:
                for droot in _derivative_roots(os.path.abspath(os.fspath(p))):
                    self._add_listing(_native.scan_json(droot, derivatives=False, schema=self._schema), True)
        self._files.sort(key=lambda f: f.path)
        self._by_path = {f.path: f for f in self._files}

    # -- construction -----------------------------------------------------------------

    def _add_listing(self, text: str, external_derivative: bool) -> None:
        data = json.loads(text)
        for name, key, fmt in data["entities"]:
            out = _SCHEMA_TO_PYBIDS.get(name, name)
            for alias in (name, key, out):
                self._entity_names.setdefault(alias, out)
            if fmt == "index" and name == "run":
                self._index_entities.add(out)
        metadata = data["metadata"]
        for ds in data["datasets"]:
            derivative = external_derivative or bool(ds["name"])
            d = _Dataset(ds["name"], ds["root"], ds["description"], derivative)
            self._datasets.append(d)
            for rel, ents, datatype, suffix, ext, size, meta_id in ds["files"]:
                entities = {}
                for k, v in ents.items():
                    out = _SCHEMA_TO_PYBIDS.get(k, k)
                    entities[out] = PaddedInt(v) if out in self._index_entities and v.isdigit() else v
                if suffix:
                    entities["suffix"] = suffix
                if ext:
                    entities["extension"] = ext
                if datatype:
                    entities["datatype"] = datatype
                path = os.path.join(d.root, rel)
                meta = metadata[meta_id] if meta_id is not None else {}
                self._files.append(
                    BIDSFile(path, os.path.relpath(path, self.root), entities, size, d, meta)
                )

    def __reduce__(self):
        return (_rebuild, (self.root, self._derivatives_arg, self._schema))

    def __repr__(self) -> str:
        subjects = len(self.get_subjects()) if "subject" in self._entity_names else 0
        return f"<Layout root={self.root!r} files={len(self._files)} subjects={subjects}>"

    def __len__(self) -> int:
        return len(self._files)

    # -- queries ----------------------------------------------------------------------

    def _canonical(self, name: str) -> Optional[str]:
        if name in _NAME_FIELDS:
            return name
        return self._entity_names.get(name)

    def _scoped(self, scope: Union[str, Sequence[str], None]) -> List[BIDSFile]:
        if scope is None or scope == "all":
            return self._files
        scopes = [scope] if isinstance(scope, str) else list(scope)
        if "all" in scopes:
            return self._files
        keep = set()
        for d in self._datasets:
            if ("raw" in scopes or "self" in scopes) and not d.derivative:
                keep.add(id(d))
            elif "derivatives" in scopes and d.derivative:
                keep.add(id(d))
            elif d.derivative and d.scope_names() & set(scopes):
                keep.add(id(d))
        return [f for f in self._files if id(f.dataset) in keep]

    def get(
        self,
        return_type: str = "object",
        target: Optional[str] = None,
        scope: Union[str, Sequence[str], None] = "all",
        regex_search: bool = False,
        absolute_paths: Optional[bool] = None,
        invalid_filters: str = "error",
        **filters: Any,
    ) -> list:
        """Files matching every filter (entities, ``suffix``, ``extension``,
        ``datatype``, or metadata keys such as ``RepetitionTime=2.0``). A list means any
        of its values; ``None`` / ``Query.NONE`` absent; ``Query.ANY`` present.

        ``return_type``: ``object`` (BIDSFile), ``filename``, ``id`` (the values of
        ``target``) or ``dir`` (the directories of ``target``)."""
        if invalid_filters not in ("error", "drop", "allow"):
            raise ValueError("invalid_filters must be 'error', 'drop' or 'allow'")
        files = self._scoped(scope)
        checks = []
        for key, value in filters.items():
            name = self._canonical(key)
            if name is not None:
                checks.append((name, value, False))
                continue
            if any(key in f._metadata for f in files):
                checks.append((key, value, True))
            elif invalid_filters == "error":
                raise ValueError(
                    f"'{key}' is not a recognized entity, name part or metadata key; "
                    "pass invalid_filters='drop' to ignore it or 'allow' to keep it"
                )
            elif invalid_filters == "allow":
                checks.append((key, value, True))
        if target is not None:
            tname = self._canonical(target)
            if tname is None:
                raise ValueError(f"unknown target entity {target!r}")
            checks.append((tname, Query.ANY, False))
        else:
            tname = None
        matched = [f for f in files if all(_matches(f, n, v, m, regex_search) for n, v, m in checks)]

        if return_type in ("object", "obj"):
            return matched
        if return_type in ("filename", "file"):
            return [f.path if absolute_paths is not False else f.relpath for f in matched]
        if return_type in ("id", "dir"):
            if tname is None:
                raise ValueError(f"return_type={return_type!r} needs a target entity")
            if return_type == "id":
                values = {f.entities[tname] for f in matched}
                return sorted(values, key=_sort_key)
            return sorted({_target_dir(f, tname, self.root, absolute_paths) for f in matched} - {None})
        raise ValueError(f"unknown return_type {return_type!r}")

    def __getattr__(self, attr: str):
        if attr.startswith("get_") and not attr.startswith("__"):
            name = attr[4:]
            names = self.__dict__.get("_entity_names", {})
            for cand in (name, name[:-1] if name.endswith("s") else None, name[:-2] if name.endswith("es") else None):
                if cand and (cand in names or cand in _NAME_FIELDS):
                    canonical = cand if cand in _NAME_FIELDS else names[cand]

                    def values(return_type="id", **filters):
                        return self.get(return_type=return_type, target=canonical, **filters)

                    return values
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    def get_file(self, path: PathLike) -> Optional[BIDSFile]:
        p = os.fspath(path)
        if not os.path.isabs(p):
            p = os.path.join(self.root, p)
        return self._by_path.get(os.path.normpath(p))

    def get_metadata(self, path: PathLike, include_entities: bool = False, **_: Any) -> dict:
        """The merged (inherited) sidecar of a file of the layout."""
        f = self.get_file(path)
        if f is None:
            raise ValueError(f"{os.fspath(path)} is not a file of this layout")
        out = f.get_metadata()
        if include_entities:
            out.update(f.entities)
        return out

    def get_entities(self, scope: Union[str, Sequence[str], None] = "all", metadata: bool = False) -> dict:
        """Entity (and name-part) names -> sorted values they take in the layout; with
        ``metadata``, sidecar keys too."""
        out: Dict[str, set] = {}
        for f in self._scoped(scope):
            for k, v in f.entities.items():
                out.setdefault(k, set()).add(v)
            if metadata:
                for k, v in f._metadata.items():
                    try:
                        out.setdefault(k, set()).add(v)
                    except TypeError:
                        out.setdefault(k, set()).add(json.dumps(v, sort_keys=True))
        return {k: sorted(v, key=_sort_key) for k, v in out.items()}

    def get_nearest(
        self,
        path: PathLike,
        return_type: str = "filename",
        strict: bool = True,
        all_: bool = False,
        ignore_strict_entities: Iterable[str] = ("extension", "suffix"),
        full_search: bool = False,
        **filters: Any,
    ):
        """The file matching ``filters`` nearest to ``path``: in its directory or the
        closest parent, sharing its entities (candidates may have fewer)."""
        src = self.get_file(path)
        if src is None:
            raise ValueError(f"{os.fspath(path)} is not a file of this layout")
        ignore = set(ignore_strict_entities) | {"datatype"}
        candidates = self.get(return_type="object", **filters)
        src_dir = src.dirname
        ranked = []
        for c in candidates:
            if c.path == src.path:
                continue
            cdir = c.dirname
            if not (src_dir == cdir or src_dir.startswith(cdir.rstrip(os.sep) + os.sep)):
                if not full_search:
                    continue
            ok = True
            shared = 0
            for k, v in c.entities.items():
                if k in ignore:
                    continue
                if k in src.entities:
                    if str(src.entities[k]) != str(v):
                        ok = False
                        break
                    shared += 1
                elif strict:
                    ok = False
                    break
            if ok:
                ranked.append((-len(cdir), -shared, c.path, c))
        ranked.sort(key=lambda r: r[:3])
        found = [r[3] for r in ranked]
        if return_type in ("filename", "file"):
            found = [f.path for f in found]
        if all_:
            return found
        return found[0] if found else None

    def get_bval(self, path: PathLike, **filters: Any) -> Optional[str]:
        return self.get_nearest(path, suffix="dwi", extension=".bval", **filters)

    def get_bvec(self, path: PathLike, **filters: Any) -> Optional[str]:
        return self.get_nearest(path, suffix="dwi", extension=".bvec", **filters)

    def get_events(self, path: PathLike, **filters: Any) -> List[str]:
        return self.get_nearest(path, suffix="events", extension=".tsv", all_=True, **filters)

    def parse_file_entities(self, filename: PathLike, **_: Any) -> dict:
        """Entities, suffix, extension (and datatype, from the parent directory) of a
        file name; the file need not exist."""
        p = os.fspath(filename)
        pairs, suffix, ext = _native.parse_name(os.path.basename(p))
        out: Dict[str, Any] = {}
        for key, value in pairs:
            name = self._entity_names.get(key)
            if name is None:
                continue
            out[name] = PaddedInt(value) if name in self._index_entities and value.isdigit() else value
        if suffix:
            out["suffix"] = suffix
        if ext:
            out["extension"] = ext
        parent = os.path.basename(os.path.dirname(p))
        if parent and parent in self._datatypes():
            out["datatype"] = parent
        return out

    def _datatypes(self) -> set:
        return {f.entities["datatype"] for f in self._files if "datatype" in f.entities}

    def build_path(self, source: Union[dict, PathLike, BIDSFile], absolute_paths: bool = False, **_: Any) -> str:
        """The canonical path of a file from its entities (a dict with entity names,
        ``suffix``, ``extension`` and optionally ``datatype``), a file name or a file."""
        if isinstance(source, BIDSFile):
            ents = dict(source.entities)
        elif isinstance(source, dict):
            ents = dict(source)
        else:
            ents = self.parse_file_entities(source)
        suffix = ents.pop("suffix", None)
        ext = ents.pop("extension", "")
        datatype = ents.pop("datatype", None)
        if not suffix:
            raise ValueError("build_path needs a suffix")
        pairs = []
        for k, v in ents.items():
            name = _PYBIDS_NAMES.get(k, k)
            pairs.append((name, str(v)))
        rel = _native.build_path(self.root, pairs, suffix, ext or "", datatype=datatype, schema=self._schema)
        return os.path.join(self.root, rel) if absolute_paths else rel

    # -- tables -----------------------------------------------------------------------

    def _records(self, metadata: bool) -> List[dict]:
        rows = []
        for f in self._files:
            row = {"path": f.path, "relpath": f.relpath, "dataset": f.dataset.name, "size": f.size}
            row.update({k: (int(v) if isinstance(v, PaddedInt) else v) for k, v in f.entities.items()})
            if metadata:
                row["metadata"] = json.dumps(f._metadata)
            rows.append(row)
        # Every row gets every column (a table's columns come from all rows, not the first).
        columns: Dict[str, None] = {}
        for row in rows:
            columns.update(dict.fromkeys(row))
        return [{c: row.get(c) for c in columns} for row in rows]

    def to_arrow(self, metadata: bool = False):
        """The files as a pyarrow Table (one row per file; ``metadata`` adds the merged
        sidecar as JSON text)."""
        import pyarrow as pa

        return pa.Table.from_pylist(self._records(metadata))

    def to_pandas(self, metadata: bool = False):
        import pandas as pd

        return pd.DataFrame.from_records(self._records(metadata))

    to_df = to_pandas


def _rebuild(root, derivatives, schema):
    return Layout(root, derivatives=derivatives, schema=schema)


def _derivative_roots(path: str) -> List[str]:
    if os.path.isfile(os.path.join(path, "dataset_description.json")):
        return [path]
    out = []
    for name in sorted(os.listdir(path)):
        sub = os.path.join(path, name)
        if os.path.isfile(os.path.join(sub, "dataset_description.json")):
            out.append(sub)
    if not out:
        raise ValueError(f"{path}: no derivative dataset (no dataset_description.json)")
    return out


def _sort_key(v: Any):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (0, v, "")
    return (1, 0, str(v))


def _target_dir(f: BIDSFile, target: str, root: str, absolute: Optional[bool]) -> Optional[str]:
    """The directory a target entity names (``sub-01``, ``sub-01/ses-1``) for a file."""
    parts = f.relpath.split(os.sep)
    value = f.entities.get(target)
    if value is None:
        return None
    for i, part in enumerate(parts[:-1]):
        if part.split("-", 1)[-1] == str(value) and "-" in part:
            d = os.path.join(*parts[: i + 1])
            return os.path.join(root, d) if absolute is not False else d
    return None


def _value_matches(actual: Any, wanted: Any, regex: bool, is_ext: bool) -> bool:
    special = _special(wanted)
    if special == "NONE":
        return actual is None
    if special == "ANY":
        return actual is not None
    if special == "OPTIONAL":
        return True
    if actual is None:
        return False
    if regex:
        return re.search(str(wanted), str(actual)) is not None
    if is_ext and isinstance(wanted, str) and wanted and not wanted.startswith("."):
        wanted = "." + wanted
    if isinstance(actual, PaddedInt):
        return actual == wanted
    if isinstance(actual, str):
        return actual == str(wanted) if not isinstance(wanted, bool) else False
    return actual == wanted


def _matches(f: BIDSFile, name: str, wanted: Any, metadata: bool, regex: bool) -> bool:
    actual = f._metadata.get(name) if metadata else f.entities.get(name)
    options = wanted if isinstance(wanted, (list, tuple, set)) else [wanted]
    return any(_value_matches(actual, w, regex, name == "extension") for w in options)

"""The file objects of ``nidos.Layout`` under pybids' names: ``BIDSFile`` and its kinds
``BIDSImageFile`` (``get_image`` through nibabel), ``BIDSDataFile`` (``get_df`` through
pandas) and ``BIDSJSONFile`` (``get_dict`` / ``get_json``), and the metadata dict whose
missing keys name the file."""

from __future__ import annotations

import json
import os
import shutil
import sys
from typing import Any, Optional


class Metadata(dict):
    """A file's merged sidecar: a plain dict, except that a missing key says which
    file lacks it."""

    __slots__ = ("_path",)

    def __init__(self, data: Any = (), path: str = ""):
        super().__init__(data)
        self._path = path

    def __missing__(self, key: Any):
        raise KeyError(f"Metadata term {key!r} unavailable for file {self._path}")

    def __reduce__(self):
        return (Metadata, (dict(self), self._path))


class BIDSFile:
    """One file of a layout: ``path`` (absolute), ``relpath`` (to the layout root),
    ``filename``, ``dirname``, ``entities`` (including suffix, extension, datatype)."""

    __slots__ = ("path", "relpath", "entities", "size", "dataset", "_metadata")

    def __init__(self, path, relpath=None, entities=None, size=0, dataset=None, metadata=None):
        self.path = os.fspath(path)
        self.relpath = relpath if relpath is not None else os.path.basename(self.path)
        self.entities = entities if entities is not None else {}
        self.size = size
        self.dataset = dataset
        self._metadata = metadata if metadata is not None else {}

    @property
    def filename(self) -> str:
        return os.path.basename(self.path)

    @property
    def dirname(self) -> str:
        return os.path.dirname(self.path)

    def get_metadata(self) -> dict:
        """The merged (inherited) sidecar of the file."""
        return Metadata(self._metadata, self.path)

    def get_entities(self, metadata: Any = False, values: str = "tags") -> dict:
        """The file's entities (``metadata=False``), its metadata (``True``) or both
        (``None`` / ``'all'``), as pybids' ``BIDSFile.get_entities``."""
        if values in ("tags", "tag"):
            as_objects = False
        elif isinstance(values, str) and values.startswith("obj"):
            as_objects = True
        else:
            raise ValueError("values must be 'tags' or 'objects'")
        if metadata is True:
            out = dict(self._metadata)
        else:
            out = dict(self.entities)
            if metadata is None or metadata == "all":
                out.update(self._metadata)
        if as_objects:
            return {k: entity_object(k, v) for k, v in out.items()}
        return out

    def get_associations(self, kind: Optional[str] = None, include_parents: bool = False) -> list:
        """Files related to this one: its sidecars (``Metadata``) and the data files of
        its acquisition (``Child``/``Parent`` are not recorded by nidos)."""
        if self.dataset is None or getattr(self.dataset, "layout", None) is None:
            return []
        return self.dataset.layout._associations(self, kind, include_parents)

    def copy(self, path_patterns, symbolic_link: bool = False, root: Optional[str] = None,
             conflicts: str = "fail") -> None:
        """Copy (or link) the file to the path built from its entities."""
        layout = getattr(self.dataset, "layout", None)
        if layout is None:
            raise ValueError("a file outside a layout cannot build its new path")
        new = layout.build_path(self.entities, path_patterns=path_patterns, absolute_paths=False)
        dest = os.path.join(root or layout.root, new)
        if os.path.exists(dest):
            if conflicts == "skip":
                return
            if conflicts != "overwrite":
                raise ValueError(f"{dest} already exists")
            os.remove(dest)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if symbolic_link:
            os.symlink(self.path, dest)
        else:
            shutil.copy(self.path, dest)

    def __fspath__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return f"<{type(self).__name__} filename='{self.path}'>"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, BIDSFile) and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    def __getstate__(self):
        return {s: getattr(self, s) for s in BIDSFile.__slots__}

    def __setstate__(self, state):
        for k, v in state.items():
            setattr(self, k, v)


class BIDSImageFile(BIDSFile):
    """An image file (NIfTI, GIfTI, CIFTI): ``get_image`` loads it with nibabel."""

    __slots__ = ()

    def get_image(self, **kwargs: Any):
        import nibabel as nb

        return nb.load(self.path, **kwargs)


class BIDSDataFile(BIDSFile):
    """A table (``.tsv``, ``.tsv.gz``): ``get_df`` reads it with pandas."""

    __slots__ = ()

    def get_df(self, include_timing: bool = True, adjust_onset: bool = False,
               enforce_dtypes: bool = True, **kwargs: Any):
        """The table as a pandas DataFrame. A headerless ``.tsv.gz`` (physio, stim)
        takes its column names from the sidecar's ``Columns``; with ``include_timing``
        an ``onset`` column from ``SamplingFrequency`` (shifted by ``StartTime`` with
        ``adjust_onset``) comes first. ``enforce_dtypes`` reads every column as text
        (labels such as ``001`` keep their zeros)."""
        import pandas as pd

        dtype = str if enforce_dtypes else None
        if self.path.endswith(".tsv.gz") and "Columns" in self._metadata:
            md = self._metadata
            df = pd.read_csv(self.path, sep="\t", header=None, names=list(md["Columns"]),
                             na_values="n/a", compression="gzip", **kwargs)
            if include_timing and "SamplingFrequency" in md:
                import numpy as np

                onsets = np.arange(len(df)) / float(md["SamplingFrequency"])
                if adjust_onset:
                    onsets = onsets + float(md.get("StartTime", 0))
                df.insert(0, "onset", onsets)
            return df
        return pd.read_csv(self.path, sep="\t", na_values="n/a", dtype=dtype,
                           keep_default_na=not enforce_dtypes, **kwargs)


class BIDSJSONFile(BIDSFile):
    """A JSON file: ``get_dict`` parses it, ``get_json`` gives its text."""

    __slots__ = ()

    def get_dict(self) -> dict:
        with open(self.path, encoding="utf-8") as fh:
            out = json.load(fh)
        if not isinstance(out, dict):
            raise ValueError(f"{self.path}: not a JSON object")
        return out

    def get_json(self) -> str:
        with open(self.path, encoding="utf-8") as fh:
            return fh.read()


class Entity:
    """An entity (or metadata key) as an object: its ``name`` and the type of its
    values (``dtype``). Used when pybids is not installed; with pybids, its own
    ``Entity`` class is used so ``isinstance`` checks written for pybids hold."""

    __slots__ = ("name", "pattern", "mandatory", "directory", "dtype")

    def __init__(self, name: str, pattern: Optional[str] = None, mandatory: bool = False,
                 directory: Optional[str] = None, dtype: str = "str"):
        self.name = name
        self.pattern = pattern
        self.mandatory = mandatory
        self.directory = directory
        self.dtype = {"int": int, "float": float, "bool": bool}.get(dtype, str)

    def __repr__(self) -> str:
        return f"<Entity {self.name} (dtype={self.dtype.__name__})>"


def _dtype_name(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return "str"


def entity_object(name: str, value: Any) -> Any:
    """The entity object for a name and one of its values (pybids' ``Entity`` when
    the program has imported pybids)."""
    if "bids" not in sys.modules:  # pybids' class only where the program uses pybids
        return Entity(name, dtype=_dtype_name(value))
    try:
        from bids.layout.models import Entity as PyBIDSEntity  # type: ignore
    except Exception:  # pragma: no cover - depends on the environment
        return Entity(name, dtype=_dtype_name(value))
    return PyBIDSEntity(name, dtype=_dtype_name(value))


_IMAGE_EXTENSIONS = (".nii", ".nii.gz", ".gii", ".dtseries.nii", ".func.gii", ".mgh", ".mgz")


def file_class(path: str) -> type:
    """The file class for a path, by its extension."""
    if path.endswith(".json"):
        return BIDSJSONFile
    if path.endswith((".tsv", ".tsv.gz")):
        return BIDSDataFile
    if path.endswith(_IMAGE_EXTENSIONS):
        return BIDSImageFile
    return BIDSFile


# The file classes in the order of a saved index's ``kind`` codes (append only).
FILE_CLASSES = (BIDSFile, BIDSJSONFile, BIDSDataFile, BIDSImageFile)


def saved_files(paths, relpaths, entities, sizes, dataset, metas) -> list:
    """The file objects of a reloaded index, made without ``__init__`` (the saved values
    are already what it would store); the class looked up once per extension (the
    file name from its first dot: entities hold no dot)."""
    classes: dict = {}
    new = object.__new__
    out = []
    add = out.append
    for p, r, e, z, m in zip(paths, relpaths, entities, sizes, metas):
        name = p[p.rfind("/") + 1:]
        tail = name[name.find("."):] if "." in name else "/"
        cls = classes.get(tail)
        if cls is None:
            cls = classes[tail] = file_class(tail)
        f = new(cls)
        f.path = p
        f.relpath = r
        f.entities = e
        f.size = z
        f.dataset = dataset
        f._metadata = m if m is not None else {}
        add(f)
    return out

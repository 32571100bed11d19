"""``nidos.Layout``: pybids' ``BIDSLayout`` API over one listing made by the Rust core
(files the schema accepts, entities, merged sidecars). A layout is one dataset; its
derivative datasets are child layouts (``layout.derivatives``), and queries run over the
layouts a ``scope`` selects."""

from __future__ import annotations

import contextlib
import difflib
import enum
import gc
import json
import numbers
import os
import re
import sys
import warnings
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from . import _config, _native, _select, _store
from . import _exceptions as _x
from ._files import FILE_CLASSES, BIDSFile, Metadata, file_class, saved_files
from ._paths import format_pattern

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
    "segmentation": "seg",
}
_SCHEMA_TO_PYBIDS = {v: k for k, v in _PYBIDS_NAMES.items()}
_NAME_FIELDS = ("suffix", "extension", "datatype")
# Entities pybids knows from its derivatives configuration only: a raw dataset's layout
# does not accept them as filters (pybids' behaviour).
_DERIVATIVE_ONLY = {
    "atlas", "roi", "label", "desc", "from", "to", "mode", "hemi", "segmentation", "res",
    "den", "model", "subset",
}
# Extensions tried in order when build_path gets none (pybids' default patterns).
_DEFAULT_EXTENSIONS = (".nii.gz", ".nii", ".tsv", ".json", ".tsv.gz", ".edf", ".vhdr",
                       ".set", ".fif", ".snirf", ".bval", ".bvec", ".png", ".tif", ".ome.tif")


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


class _PaddedInt(int):
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
        return (type(self), (self._text,))

    __hash__ = int.__hash__

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, str):
            return other == self._text or (other.isdigit() and int(other) == int(self))
        if isinstance(other, numbers.Integral) and not isinstance(other, int):
            other = int(other)
        return int.__eq__(self, other)

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)


_THEIRS: List[type] = []


def _padded_class() -> type:
    """pybids' PaddedInt when the program has imported pybids (so isinstance checks
    written for pybids hold), else nidos' own: ``import nidos`` does not import pybids."""
    if _THEIRS:
        return _THEIRS[0]
    if "bids" in sys.modules:
        try:
            from bids.layout.utils import PaddedInt as theirs  # type: ignore

            _THEIRS.append(theirs)
            return theirs
        except Exception:  # pragma: no cover - a broken pybids install
            pass
    return _PaddedInt


# Exported as ``nidos.PaddedInt``; the layout builds ``_padded_class()``'s.
PaddedInt = _PaddedInt


@contextlib.contextmanager
def _no_gc():
    """Many small objects are built at once: the cyclic collector, which would scan
    them again and again meanwhile, is paused (nothing built here forms a cycle)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


_PADDED: Dict[Any, Any] = {}


def _padded(text: str) -> Any:
    """The PaddedInt of an index label, made once per distinct label (they are
    immutable, and pybids' class is slow to build)."""
    cls = _padded_class()
    got = _PADDED.get((cls, text))
    if got is None:
        if len(_PADDED) > 4096:
            _PADDED.clear()
        got = _PADDED[(cls, text)] = cls(text)
    return got


class _Dataset:
    """The dataset a file belongs to (its layout, name, root, description)."""

    def __init__(self, layout: "Layout"):
        self.layout = layout

    @property
    def name(self) -> str:
        return self.layout._name

    @property
    def root(self) -> str:
        return self.layout.root

    @property
    def derivative(self) -> bool:
        return self.layout._is_derivative

    def __reduce__(self):
        return (_Dataset, (self.layout,))


class Derivatives(dict):
    """A layout's derivative datasets by folder name; ``get_pipeline`` finds one by the
    name of the pipeline that generated it."""

    def get_pipeline(self, name: str) -> "Layout":
        found = [lay for lay in self.values() if name in lay._pipeline_names()]
        if not found:
            raise KeyError(f"no derivative dataset generated by {name!r}")
        if len(found) > 1:
            raise _x.BIDSChildDatasetError(f"more than one derivative dataset generated by {name!r}")
        return found[0]

    def __missing__(self, key: str) -> "Layout":
        lay = self.get_pipeline(key)
        warnings.warn(
            "reaching a derivative dataset by its pipeline name is deprecated; "
            "use its folder name or derivatives.get_pipeline()",
            DeprecationWarning,
            stacklevel=2,
        )
        return lay


def _load_description(root: str) -> Optional[dict]:
    path = os.path.join(root, "dataset_description.json")
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            out = json.load(fh)
    except (ValueError, UnicodeDecodeError) as e:
        raise _x.BIDSValidationError(f"'dataset_description.json' is not a valid json file: {e}") from None
    if not isinstance(out, dict):
        raise _x.BIDSValidationError("'dataset_description.json' is not a valid json file: not an object")
    return out


def _indexer_options(indexer: Any) -> dict:
    if indexer is None:
        return {}
    if isinstance(indexer, dict):
        return dict(indexer)
    out = {
        k: getattr(indexer, k)
        for k in ("validate", "ignore", "force_index", "index_metadata")
        if hasattr(indexer, k)
    }
    if "validate" not in out and hasattr(indexer, "validator"):
        # pybids' indexer keeps a validator object only when it validates.
        out["validate"] = indexer.validator is not None
    return out


class Layout:
    """The files of a dataset, queried as pybids' ``BIDSLayout``.

    ``validate``: list only the files the schema accepts (False: every file but those
    of ``code``, ``stimuli``, ``sourcedata``, ``models`` and dot files). ``derivatives``:
    False, True (every ``derivatives/<name>`` dataset), or paths of derivative datasets
    (or of folders holding them). ``database_path``: a folder keeping the listing as an
    Arrow IPC file, reloaded by a later layout while the dataset's folders and sidecars are
    unchanged. ``indexer``: pybids' ``BIDSLayoutIndexer`` (or a dict) for ``validate``,
    ``ignore``, ``force_index`` and ``index_metadata``. ``schema``: a YAML rule tree or a
    compiled schema JSON instead of the bundled rules. ``config``: pybids' configuration
    names (``bids``, ``derivatives``: the schema's entities) or configuration files /
    dicts (entities read from paths by their patterns). ``sources`` is accepted for
    compatibility. ``database_path``: the index is written there, and a later layout
    given it reloads the files from it (no listing) while the dataset is unchanged;
    as in pybids, a saved index's root, derivatives and config win over the arguments.
    """

    def __init__(
        self,
        root: Optional[PathLike] = None,
        validate: bool = True,
        absolute_paths: bool = True,
        derivatives: Union[bool, PathLike, Sequence[PathLike]] = False,
        config: Any = None,
        sources: Any = None,
        regex_search: bool = False,
        database_path: Optional[PathLike] = None,
        reset_database: bool = False,
        indexer: Any = None,
        is_derivative: bool = False,
        schema: Optional[PathLike] = None,
        **kwargs: Any,
    ):
        self._database_path = None if database_path is None else os.fspath(database_path)
        stored = saved = None
        if self._database_path and not reset_database:
            saved = _store.open_index(self._database_path)
            stored = None if saved is None else saved.info
        if stored is not None:
            # As pybids: a saved index's root, derivatives and configuration win.
            root, derivatives, config = stored["root"], stored["derivatives"], stored["config"]
        if root is None:
            raise ValueError("a layout needs a root folder")
        opts = _indexer_options(indexer)
        if "validate" in opts:
            validate = bool(opts["validate"])
        self.root = os.path.abspath(os.fspath(root))
        if not os.path.isdir(self.root):
            raise ValueError(f"BIDS root does not exist: {self.root}")
        self._schema = None if schema is None else os.fspath(schema)
        self._validate = validate
        self._absolute_paths = absolute_paths
        self._regex_search = regex_search
        self._config = config
        self._opts = opts
        self._derivatives_arg = derivatives
        self.description = _load_description(self.root)
        dtype = (self.description or {}).get("DatasetType")
        self._is_derivative = bool(is_derivative) or dtype == "derivative"
        if validate and self._is_derivative:
            _check_derivative(self.description, self.root)
        if validate and self.description is None and not self._is_derivative:
            raise _x.BIDSValidationError(
                f"'dataset_description.json' is missing from project root ({self.root})"
            )
        self._configs = _config.load(config, self._is_derivative)
        self._custom = _config.custom_entities(self._configs)
        self._name = ""
        self.derivatives = Derivatives()
        self._parent = None
        self._from_index = False
        with _no_gc():
            state = None if saved is None else saved.load(self._index_key(), _padded_class())
        if state is not None:
            with _no_gc():
                self._from_state(state)
            self._from_index = True
            return
        listing = _native.scan(self.root, derivatives=derivatives is True, schema=self._schema)
        with _no_gc():
            self._from_listing(listing)
        if derivatives and derivatives is not True:
            paths = [derivatives] if isinstance(derivatives, (str, os.PathLike)) else derivatives
            self.add_derivatives(paths)
        if self._database_path:
            self._write_index(self._database_path)

    # -- construction -----------------------------------------------------------------

    def _layout_info(self) -> dict:
        """The arguments a saved index records (pybids' ``LayoutInfo``)."""
        derivs = self._derivatives_arg
        if derivs and derivs is not True:
            items = [derivs] if isinstance(derivs, (str, os.PathLike)) else derivs
            derivs = [os.path.abspath(os.fspath(p)) for p in items]
        return {"root": self.root, "derivatives": bool(derivs) if not isinstance(derivs, list) else derivs,
                "config": _config.storable(self._config) or [c.name for c in self._configs]}

    def _index_key(self) -> dict:
        """What a saved index depends on besides the files: a saved index made with
        other options is not reloaded."""
        def pattern_text(value: Any) -> Any:
            items = value if isinstance(value, (list, tuple)) else ([] if value is None else [value])
            return [getattr(p, "pattern", None) or os.fspath(p) for p in items] if value is not None else None

        return {
            "info": self._layout_info(),
            "schema": self._schema,
            "validate": bool(self._validate),
            "is_derivative": self._is_derivative,
            "ignore": pattern_text(self._opts.get("ignore")),
            "force_index": pattern_text(self._opts.get("force_index")),
            "index_metadata": self._opts.get("index_metadata", True) is not False,
            "version": _native.__version__,
        }

    def _write_index(self, folder: str) -> None:
        layouts = [self] + list(self.derivatives.values())
        _store.save(folder, self._layout_info(), self._index_key(), self._names_table, layouts)

    def _set_names(self, entities: list) -> None:
        """The entity names the layout knows (pybids' names, the schema's long names and
        keys), from the schema's entity list ``[[name, key, format], ...]``."""
        self._names_table = entities
        self._entity_names: Dict[str, str] = {}
        self._short_names: Dict[str, str] = {}
        self._entity_order: List[str] = []
        self._index_entities: set = set()
        for name, key, fmt in entities:
            out = _SCHEMA_TO_PYBIDS.get(name, name)
            self._entity_names.setdefault(out, out)
            self._entity_names.setdefault(name, out)
            self._short_names.setdefault(key, out)
            self._short_names.setdefault(out, out)
            self._entity_order.append(out)
            if fmt == "index" and name == "run":
                self._index_entities.add(out)
        # pybids' derivatives configuration names (known to derivative layouts only).
        for name in sorted(_DERIVATIVE_ONLY):
            self._entity_names.setdefault(name, name)
        for name, spec in self._custom.items():
            self._entity_names.setdefault(name, name)
            if spec.dtype == "int":
                self._index_entities.add(name)

    def _from_listing(self, data: dict) -> None:
        """This layout's files from a listing's first dataset; the others become child
        layouts (``derivatives/<name>``)."""
        self._set_names(data["entities"])
        metadata = [] if self._opts.get("index_metadata") is False else data["metadata"]
        # Paths start from the root as given (the listing's may have symbolic links
        # resolved), as pybids' do.
        listed = data["datasets"][0]["root"]
        datasets = []
        for ds in data["datasets"]:
            if ds["root"] == listed or ds["root"].startswith(listed.rstrip("/") + "/"):
                ds = dict(ds, root=self.root + ds["root"][len(listed.rstrip("/")):])
            datasets.append(ds)
        self._set_files(datasets[0], metadata)
        for ds in datasets[1:]:
            child = Layout.__new__(Layout)
            child._init_child(self, ds["root"], ds["description"], os.path.basename(ds["root"].rstrip("/")))
            child._set_files(ds, metadata)
            self.derivatives[child._name] = child

    def _from_state(self, state: dict) -> None:
        """The layouts as a saved index holds them (no listing, no walk)."""
        self._set_names(state["entities"])
        layouts = state["layouts"]
        self._set_saved_files(layouts[0])
        for saved in layouts[1:]:
            child = Layout.__new__(Layout)
            child._init_child(self, saved["root"], saved["description"], saved["name"])
            child._set_saved_files(saved)
            self.derivatives[child._name] = child

    def _set_saved_files(self, saved: dict) -> None:
        dataset = _Dataset(self)
        paths, relpaths, ents, sizes, metas, kinds = saved["files"]
        if kinds is not None:
            self._files = _native.file_objects(FILE_CLASSES, kinds, paths, relpaths, ents, sizes,
                                               dataset, metas)
        else:
            self._files = saved_files(paths, relpaths, ents, sizes, dataset, metas)
        self._by_path = dict(zip(paths, self._files))

    def _init_child(self, parent: "Layout", root: str, description: Any, name: str) -> None:
        self.root = root
        self._schema = parent._schema
        self._validate = parent._validate
        self._absolute_paths = parent._absolute_paths
        self._regex_search = parent._regex_search
        self._config = None
        self._configs = _config.load(None, True) + [c for c in parent._configs if not c.schema]
        self._custom = parent._custom
        self._opts = parent._opts
        self._derivatives_arg = False
        self._database_path = None
        self._from_index = parent.__dict__.get("_from_index", False)
        self.description = description if isinstance(description, dict) else None
        self._is_derivative = True
        self._name = name
        self.derivatives = Derivatives()
        self._parent = parent
        self._names_table = parent._names_table
        self._entity_names = parent._entity_names
        self._short_names = parent._short_names
        self._entity_order = parent._entity_order
        self._index_entities = parent._index_entities

    def _set_files(self, ds: dict, metadata: list) -> None:
        dataset = _Dataset(self)
        files: List[BIDSFile] = []
        root = ds["root"]
        top = self._top_root()
        prefix = root.rstrip(os.sep) + os.sep
        names = _SCHEMA_TO_PYBIDS
        index = self._index_entities
        n_meta = len(metadata)
        custom = self._custom
        for rel, ents, datatype, suffix, ext, size, meta_id in ds["files"]:
            path = prefix + rel
            meta = metadata[meta_id] if (meta_id is not None and meta_id < n_meta) else {}
            entities: Dict[str, Any] = {}
            for k, v in ents.items():
                k = names.get(k, k)
                entities[k] = _padded(v) if k in index and v.isdigit() else v
            if suffix:
                entities["suffix"] = suffix
            if ext:
                entities["extension"] = ext
            if datatype:
                entities["datatype"] = datatype
            if custom:
                entities = self._configured(path, entities)
            relpath = path[len(top) + 1:] if path.startswith(top + os.sep) else _relative(path, top)
            files.append(file_class(path)(path, relpath, entities, size, dataset, meta))
        ignore = self._opts.get("ignore")
        force = self._opts.get("force_index")
        in_order = ds.get("sorted", False)
        if not self._validate or force or ignore is not None:
            keep, add = _select.select([f.path for f in files], root, ignore, force, self._validate)
            files = [f for f in files if f.path in keep]
            files.extend(self._parsed_file(path, dataset) for path in add)
            in_order = in_order and not add
        if not in_order:  # the listing comes in this order when its paths are ASCII
            files.sort(key=lambda f: _natural_key(f.path))
        if metadata:
            _check_conflicts(files, self._entity_names.values())
        self._files = files
        self._by_path = {f.path: f for f in files}

    def _configured(self, path: str, entities: Dict[str, Any]) -> Dict[str, Any]:
        """A file's entities under a configuration file's patterns: those alone, or
        added to the schema's when a named configuration is in use too."""
        found = _config.match(path, self._custom, _padded_class())
        if any(c.schema for c in self._configs):
            return {**entities, **found}
        return found

    def _top_root(self) -> str:
        """The root that relative paths start from: the outermost layout's."""
        lay = self
        while lay._parent is not None:
            lay = lay._parent
        return lay.root

    def _parsed_file(self, path: str, dataset: _Dataset) -> BIDSFile:
        ents = self.parse_file_entities(path)
        if self._custom:
            ents = self._configured(path, ents)
        try:
            size = os.path.getsize(path)
        except OSError:
            size = 0
        cls = file_class(path)
        return cls(path, _relative(path, self._top_root()), ents, size, dataset, {})

    def add_derivatives(self, path: Union[PathLike, Sequence[PathLike]], parent_database_path=None,
                        validate: bool = True, absolute_paths: bool = True, **kwargs: Any) -> None:
        """Add derivative datasets: each path is one (it has a
        ``dataset_description.json``) or a folder holding them."""
        paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
        roots: List[str] = []
        for p in paths:
            roots.extend(_derivative_roots(os.path.abspath(os.fspath(p))))
        for droot in roots:
            name = os.path.basename(droot.rstrip("/"))
            if name in self.derivatives:
                raise _x.BIDSDerivativesValidationError(
                    f"a derivative dataset named {name!r} is already in the layout"
                )
            desc = _load_description(droot)
            if validate:
                _check_derivative(desc, droot)
            data = _native.scan(droot, derivatives=False, schema=self._schema)
            metadata = [] if self._opts.get("index_metadata") is False else data["metadata"]
            child = Layout.__new__(Layout)
            ds = data["datasets"][0]
            child._init_child(self, droot, ds["description"], name)
            if ds["root"] != droot:
                ds = dict(ds, root=droot)
            child._set_files(ds, metadata)
            self.derivatives[name] = child

    def __reduce__(self):
        return (_rebuild, (self.root, self._validate, self._derivatives_arg, self._schema,
                           self._is_derivative, self._opts, self._config))

    def __repr__(self) -> str:
        files = self.get()
        subjects = {f.entities["subject"] for f in files if "subject" in f.entities}
        sessions = {(str(f.entities["session"]), f.entities["subject"]) for f in files
                    if "session" in f.entities and "subject" in f.entities}
        runs = {(int(f.entities["run"]), f.entities["subject"]) for f in files
                if isinstance(f.entities.get("run"), int) and "subject" in f.entities}
        return (f"BIDS Layout: ...{self.root[-30:]} | Subjects: {len(subjects)} | "
                f"Sessions: {len(sessions)} | Runs: {len(runs)}")

    def __len__(self) -> int:
        return len(self.get())

    # -- scopes -----------------------------------------------------------------------

    def _pipeline_names(self) -> set:
        names = set()
        if self._is_derivative:
            names.add(os.path.basename(self.root.rstrip("/")))
        desc = self.description or {}
        for g in desc.get("GeneratedBy") or []:
            if isinstance(g, dict) and g.get("Name"):
                names.add(g["Name"])
        p = desc.get("PipelineDescription")
        if isinstance(p, dict) and p.get("Name"):
            names.add(p["Name"])
        return names

    def _in_scope(self, scope: Union[str, Sequence[str], None]) -> bool:
        scopes = ["all"] if scope is None else ([scope] if isinstance(scope, str) else list(scope))
        if "all" in scopes:
            return True
        if "raw" in scopes and not self._is_derivative:
            return True
        if "derivatives" in scopes and self._is_derivative:
            return True
        return bool(self._is_derivative and self._pipeline_names() & set(scopes))

    def _get_layouts_in_scope(self, scope: Union[str, Sequence[str], None]) -> List["Layout"]:
        if scope == "self" or (isinstance(scope, (list, tuple)) and "self" in scope):
            return [self]
        out = [self] if self._in_scope(scope) else []
        for child in self.derivatives.values():
            out.extend(child._get_layouts_in_scope(scope))
        return out

    def _scoped(self, scope: Union[str, Sequence[str], None]) -> List[BIDSFile]:
        layouts = self._get_layouts_in_scope(scope)
        if len(layouts) == 1:
            return layouts[0]._files
        files = [f for lay in layouts for f in lay._files]
        files.sort(key=lambda f: _natural_key(f.path))
        return files

    @property
    def files(self) -> Dict[str, BIDSFile]:
        """Every file of the layout and its derivative datasets, by absolute path."""
        return {f.path: f for f in self._scoped("all")}

    def get_files(self, scope: str = "all") -> Dict[str, BIDSFile]:
        return {f.path: f for f in self._scoped(scope)}

    @property
    def entities(self) -> Dict[str, list]:
        """Every entity name the layout accepts -> the values it takes (possibly none)."""
        out: Dict[str, list] = {name: [] for name in set(self._accepted_names("all").values())}
        out.update(self.get_entities())
        return out

    @property
    def config(self) -> Dict[str, Any]:
        """The layout's configurations by name (``bids``, ``derivatives``, or the name a
        configuration file gives)."""
        return {c.name: c for c in self._configs}

    def _accepted_names(self, scope: Any = "all") -> Dict[str, str]:
        layouts = self._get_layouts_in_scope(scope) or [self]
        if any(lay._is_derivative for lay in layouts):
            return self._entity_names
        return {k: v for k, v in self._entity_names.items() if v not in _DERIVATIVE_ONLY}

    # -- queries ----------------------------------------------------------------------

    def get(
        self,
        return_type: str = "object",
        target: Optional[str] = None,
        scope: Union[str, Sequence[str], None] = "all",
        regex_search: Optional[bool] = None,
        absolute_paths: Optional[bool] = None,
        invalid_filters: str = "error",
        **filters: Any,
    ) -> list:
        """Files matching every filter (entities, ``suffix``, ``extension``,
        ``datatype``, or metadata keys such as ``RepetitionTime=2.0``). A list means any
        of its values; ``None`` / ``Query.NONE`` absent; ``Query.ANY`` present.

        ``return_type``: ``object`` (BIDSFile), ``filename``, ``id`` (the values of
        ``target``) or ``dir`` (the directories of ``target``)."""
        if "filters" in filters and isinstance(filters["filters"], dict):
            raise RuntimeError(
                "You passed in filters as a dictionary named filters; pass them as "
                "keyword arguments instead (get(**filters))."
            )
        if invalid_filters not in ("error", "drop", "allow"):
            raise ValueError("invalid_filters must be 'error', 'drop' or 'allow'")
        if regex_search is None:
            regex_search = self._regex_search
        files = self._scoped(scope)
        names = self._accepted_names(scope)
        checks = []
        for key, value in filters.items():
            name = key if key in _NAME_FIELDS else names.get(key)
            if name is not None:
                checks.append((name, value, False))
                continue
            if any(key in f._metadata for f in files):
                checks.append((key, value, True))
            elif invalid_filters == "error":
                close = _suggest(key, list(names) + list(_NAME_FIELDS))
                raise ValueError(
                    f"'{key}' is not a recognized entity. "
                    + (f"Did you mean {close}? " if close else "")
                    + "If you're sure you want to impose this constraint, set "
                    "invalid_filters='allow'."
                )
            elif invalid_filters == "allow":
                checks.append((key, value, True))
        tname = None
        if target is not None:
            tname = target if target in _NAME_FIELDS else names.get(target)
            if tname is None:
                close = _suggest(target, list(names) + list(_NAME_FIELDS))
                valid = close or sorted(set(names.values()) | set(_NAME_FIELDS))
                raise _x.TargetError(f"Unknown target '{target}'. Valid targets: {valid}")
            checks.append((tname, Query.ANY, False))
        if checks:
            matched = [f for f in files if all(_matches(f, n, v, m, regex_search) for n, v, m in checks)]
        else:
            matched = list(files)

        if return_type in ("object", "obj", "objects"):
            return matched
        if absolute_paths is None:
            absolute_paths = self._absolute_paths
        if return_type in ("filename", "file"):
            return [f.path if absolute_paths else f.relpath for f in matched]
        if return_type in ("id", "dir"):
            if tname is None:
                raise _x.TargetError(f"return_type={return_type!r} needs a target entity")
            if return_type == "id":
                values = {f.entities[tname] for f in matched}
                return sorted(values, key=_natural_text_key)
            if tname in self._custom:
                dirs = _config.directories(tname, self._custom, self.root,
                                           sorted({f.dirname for f in matched}))
                if absolute_paths is False:
                    dirs = [_relative(d, self.root) for d in dirs or []]
                return dirs
            if tname in ("suffix", "extension") or tname in _DERIVATIVE_ONLY:
                raise ValueError(
                    f"Return type set to directory, but no directory template is defined "
                    f"for the target entity ('{tname}')."
                )
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
                        try:
                            return self.get(return_type=return_type, target=canonical, **filters)
                        except _x.TargetError:
                            return []

                    return values
            if "_files" in self.__dict__ and name[:1].isupper():
                return lambda **filters: self._metadata_values(name, **filters)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    def _metadata_values(self, key: str, **filters: Any) -> list:
        """The distinct values a sidecar key takes over the matching files (lists as
        tuples, so they can be compared and hashed)."""
        seen: Dict[str, Any] = {}
        for f in self.get(**filters):
            if key in f._metadata:
                v = _freeze(f._metadata[key])
                seen.setdefault(json.dumps(f._metadata[key], sort_keys=True, default=str), v)
        out = list(seen.values())
        try:
            return sorted(out, key=_sort_key)
        except TypeError:
            return out

    def _find(self, path: PathLike, scope: Any = "all") -> Optional[BIDSFile]:
        p = os.fspath(path)
        if not os.path.isabs(p):
            p = os.path.join(self.root, p)
        p = os.path.normpath(p)
        for lay in self._get_layouts_in_scope(scope):
            f = lay._by_path.get(p)
            if f is not None:
                return f
        return None

    def get_file(self, filename: PathLike, scope: Any = "all") -> Optional[BIDSFile]:
        """The file at a path (absolute, or relative to the root), or None."""
        return self._find(filename, scope)

    def get_metadata(self, path: PathLike, include_entities: bool = False, scope: Any = "all",
                     **_: Any) -> dict:
        """The merged (inherited) sidecar of a file of the layout ({} for other paths)."""
        f = self._find(path, scope)
        if f is None:
            return Metadata({}, os.fspath(path))
        out = f.get_metadata()
        if include_entities:
            out.update(f.entities)
        return out

    def get_entities(self, scope: Union[str, Sequence[str], None] = "all", metadata: Optional[bool] = None) -> dict:
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

    def get_dataset_description(self, scope: Any = "self", all_: bool = False):
        """The description of the layout (``scope``: of the layouts in it; ``all_``:
        a list of them all)."""
        descs = [lay.description for lay in self._get_layouts_in_scope(scope)]
        return descs if all_ else (descs[0] if descs else None)

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
        src = self._find(path)
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

    def get_fieldmap(self, path: PathLike, return_list: bool = False):
        """The fieldmap(s) whose ``IntendedFor`` names ``path``: dicts of the fieldmap's
        files and its kind (``suffix``), as pybids gives them."""
        path = os.fspath(path)
        sub = self.parse_file_entities(path).get("subject")
        found = []
        for f in self.get(subject=sub, suffix=["phase1", "phasediff", "epi", "fieldmap"],
                          extension=[".nii.gz", ".nii"]):
            intended = f._metadata.get("IntendedFor")
            if intended is None:
                continue
            targets = intended if isinstance(intended, list) else [intended]
            if not any(path.endswith(os.path.normpath(str(t).split(":", 2)[-1] if str(t).startswith("bids:") else str(t)))
                       for t in targets):
                continue
            found.append(_fieldmap_entry(f))
        if return_list:
            return found
        if len(found) > 1:
            raise ValueError("More than one fieldmap found; pass return_list=True to get them all.")
        return found[0] if found else None

    def get_tr(self, derivatives: bool = False, **filters: Any) -> float:
        """The repetition time shared by the matching functional images (NoMatchError
        when there are none or they differ)."""
        filters.update(suffix="bold", datatype="func")
        images = self.get(extension=[".nii", ".nii.gz"], scope="all" if derivatives else "raw", **filters)
        if not images:
            raise _x.NoMatchError("No functional images that match criteria found.")
        trs = {round(float(f._metadata["RepetitionTime"]), 5) for f in images}
        if len(trs) > 1:
            raise _x.NoMatchError(f"Unique TR cannot be found given filters {filters!r}")
        return trs.pop()

    def _associations(self, f: BIDSFile, kind: Optional[str], include_parents: bool) -> list:
        return []

    # -- names and paths --------------------------------------------------------------

    def parse_file_entities(self, filename: PathLike, scope: Any = "all", entities: Any = None,
                            config: Any = None, include_unmatched: bool = False) -> dict:
        """Entities, suffix, extension (and datatype, from the parent directory) of a
        file name; the file need not exist. ``config='bids'`` (or ``scope='raw'``) leaves
        out the derivative entities, ``config='derivatives'`` keeps only them."""
        kind = _config_kind(config)
        if kind is None and scope not in ("all", None):
            layouts = self._get_layouts_in_scope(scope)
            if layouts and not any(lay._is_derivative for lay in layouts):
                kind = "bids"
        p = os.fspath(filename)
        pairs, suffix, ext = _native.parse_name(os.path.basename(p))
        out: Dict[str, Any] = {}
        for key, value in pairs:
            name = self._short_names.get(key)
            if name is None:
                continue
            if kind == "bids" and name in _DERIVATIVE_ONLY:
                continue
            if kind == "derivatives" and name not in _DERIVATIVE_ONLY:
                continue
            out[name] = _padded_class()(value) if name in self._index_entities and value.isdigit() else value
        if kind == "derivatives":
            return out
        if suffix:
            out["suffix"] = suffix
        if ext:
            out["extension"] = ext
        parent = os.path.basename(os.path.dirname(p))
        if parent and parent in self._datatypes():
            out["datatype"] = parent
        return out

    def _datatypes(self) -> set:
        known = self.__dict__.get("_datatype_cache")
        if known is None:
            files = self._scoped("all") if "_files" in self.__dict__ else []
            known = {f.entities["datatype"] for f in files if "datatype" in f.entities}
            known |= {"anat", "func", "dwi", "fmap", "perf", "meg", "eeg", "ieeg", "beh", "pet",
                      "micr", "nirs", "motion", "mrs", "emg"}
            if "_files" in self.__dict__:
                self._datatype_cache = known
        return known

    def build_path(self, source: Union[dict, PathLike, BIDSFile], path_patterns: Any = None,
                   strict: bool = False, scope: Any = "all", validate: bool = True,
                   absolute_paths: bool = True) -> Optional[str]:
        """The canonical path of a file from its entities (a dict with entity names,
        ``suffix``, ``extension`` and optionally ``datatype``), a file name or a file.
        Without an extension the first the standard allows is used (``.nii.gz`` for
        images). ``strict``: unknown entities are an error (else dropped);
        ``validate=False``: values need not be valid labels. ``path_patterns``: pybids
        pattern strings, tried in order, instead of the standard's rules."""
        if isinstance(source, BIDSFile):
            ents = dict(source.entities)
        elif isinstance(source, dict):
            ents = dict(source)
        else:
            ents = self.parse_file_entities(source)
        if not path_patterns:
            path_patterns = [p for c in self._configs for p in c.default_path_patterns] or None
        if path_patterns:
            patterns = [path_patterns] if isinstance(path_patterns, str) else list(path_patterns)
            for pat in patterns:
                built = format_pattern(pat, ents, strict=strict)
                if built is not None:
                    return os.path.join(self.root, built) if absolute_paths else built
            return None
        suffix = ents.pop("suffix", None)
        ext = ents.pop("extension", None)
        datatype = ents.pop("datatype", None)
        pairs = []
        for k, v in ents.items():
            if v is None:
                continue
            canonical = self._entity_names.get(k)
            if canonical is None:
                if strict:
                    raise ValueError(f"'{k}' is not an entity this layout knows")
                continue
            pairs.append((_PYBIDS_NAMES.get(canonical, canonical), str(v)))
        if not suffix:
            raise ValueError("build_path needs a suffix")
        placeholders: Dict[str, str] = {}
        if not validate:
            # Values need not be labels: build with stand-ins, then put them back.
            subst = []
            for i, (k, v) in enumerate(pairs):
                if v.isalnum():
                    subst.append((k, v))
                    continue
                token = f"nidosv{i}x"
                placeholders[token] = v
                subst.append((k, token))
            pairs = subst
        if ext is not None and ext != "" and not str(ext).startswith("."):
            ext = "." + str(ext)
        candidates = [ext] if ext else list(_DEFAULT_EXTENSIONS)
        rel = None
        last: Optional[Exception] = None
        for cand in candidates:
            try:
                rel = _native.build_path(self.root, pairs, suffix, cand or "", datatype=datatype,
                                         schema=self._schema)
                break
            except ValueError as e:
                last = e
        if rel is None:
            raise ValueError(str(last) if last else "no path for these entities")
        for token, value in placeholders.items():
            rel = rel.replace(token, value)
        return os.path.join(self.root, rel) if absolute_paths else rel

    # -- tables -----------------------------------------------------------------------

    def _records(self, metadata: bool) -> List[dict]:
        rows = []
        for f in self._files:
            row = {"path": f.path, "relpath": f.relpath, "dataset": f.dataset.name, "size": f.size}
            row.update({k: (int(v) if isinstance(v, int) else v) for k, v in f.entities.items()})
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

    def to_df(self, metadata: bool = False, **filters: Any):
        """pybids' table: a ``path`` column and one per entity (and, with ``metadata``,
        one per sidecar key) for the matching files."""
        import pandas as pd

        rows = []
        for f in self.get(**filters):
            row: Dict[str, Any] = {"path": f.path}
            row.update({k: (int(v) if isinstance(v, int) else v) for k, v in f.entities.items()})
            if metadata:
                for k, v in f._metadata.items():
                    row.setdefault(k, v)
            rows.append(row)
        return pd.DataFrame.from_records(rows)

    # -- the on-disk index ------------------------------------------------------------

    def save(self, path: PathLike = ".", replace_connection: bool = True) -> None:
        """Write the index (an Arrow IPC file) into the folder ``path`` (a ``database_path`` a
        later layout reloads without listing the dataset)."""
        self._write_index(os.fspath(path))
        if replace_connection:
            self._database_path = os.fspath(path)

    @classmethod
    def load(cls, database_path: PathLike) -> "Layout":
        """The layout saved in ``database_path`` (its root and options come from it)."""
        key = _store.key(os.fspath(database_path))
        if key is None:
            raise ValueError(f"{os.fspath(database_path)}: no saved layout")
        return cls(database_path=database_path, validate=key.get("validate", True),
                   schema=key.get("schema"), is_derivative=key.get("is_derivative", False))

    @property
    def connection_manager(self) -> "_store.ConnectionManager":
        """pybids' handle on the index: ``database_file`` (None when the layout keeps no
        index on disk) and ``layout_info`` (``root``, ``derivatives``, ``config``)."""
        lay = self
        while lay._parent is not None:
            lay = lay._parent
        return _store.ConnectionManager(lay._database_path, lay._layout_info())

    def clone(self) -> "Layout":
        import copy

        return copy.deepcopy(self)


def _rebuild(root, validate, derivatives, schema, is_derivative, opts, config=None):
    return Layout(root, validate=validate, derivatives=derivatives, schema=schema,
                  is_derivative=is_derivative, indexer=opts or None, config=config)


def _check_derivative(desc: Optional[dict], root: str) -> None:
    if desc is None:
        raise _x.BIDSDerivativesValidationError(
            f"{root}: a derivative dataset needs a dataset_description.json"
        )
    if not desc.get("GeneratedBy") and not desc.get("PipelineDescription"):
        raise _x.BIDSDerivativesValidationError(
            f"{root}: a derivative dataset's description needs GeneratedBy "
            "(or PipelineDescription)"
        )


def _derivative_roots(path: str) -> List[str]:
    if os.path.isfile(os.path.join(path, "dataset_description.json")):
        return [path]
    out = []
    if os.path.isdir(path):
        for name in sorted(os.listdir(path)):
            sub = os.path.join(path, name)
            if os.path.isfile(os.path.join(sub, "dataset_description.json")):
                out.append(sub)
    if not out:
        warnings.warn(f"{path}: no derivative dataset (no dataset_description.json); skipped",
                      UserWarning, stacklevel=3)
    return out


def _relative(path: str, root: str) -> str:
    """``path`` from ``root`` (a plain prefix cut when it is under it)."""
    prefix = root.rstrip(os.sep) + os.sep
    if path.startswith(prefix):
        return path[len(prefix):]
    return os.path.relpath(path, root)


def _check_conflicts(files: List[BIDSFile], names: Iterable[str]) -> None:
    """pybids refuses a file whose sidecar gives one of its entities another value
    (``"run": 2`` beside ``run-1``): BIDSConflictingValuesError."""
    known = set(names) | set(_NAME_FIELDS)
    shared: Dict[int, List[str]] = {}
    for f in files:
        md = f._metadata
        if not md:
            continue
        keys = shared.get(id(md))
        if keys is None:
            keys = shared[id(md)] = [k for k in md if k in known]
        for k in keys:
            v = f.entities.get(k)
            other = md[k]
            if v is None or other is None or str(other) == str(v):
                continue
            if isinstance(other, (int, float)) and not isinstance(other, bool) \
                    and str(v).isdigit() and float(other) == int(str(v)):
                continue
            raise _x.BIDSConflictingValuesError(
                f"Conflicting values found for entity '{k}' in filename {f.path} "
                f"(value='{v}') versus its JSON sidecar (value='{other}'). "
                "Please reconcile this discrepancy."
            )


def _fieldmap_entry(f: BIDSFile) -> dict:
    suffix = f.entities["suffix"]
    if suffix == "phasediff":
        out = {"phasediff": f.path, "magnitude1": f.path.replace("phasediff", "magnitude1"),
               "suffix": "phasediff"}
        mag2 = f.path.replace("phasediff", "magnitude2")
        if os.path.isfile(mag2):
            out["magnitude2"] = mag2
        return out
    if suffix == "phase1":
        return {"phase1": f.path, "magnitude1": f.path.replace("phase1", "magnitude1"),
                "phase2": f.path.replace("phase1", "phase2"),
                "magnitude2": f.path.replace("phase1", "magnitude2"), "suffix": "phase"}
    if suffix == "epi":
        return {"epi": f.path, "suffix": "epi"}
    return {"fieldmap": f.path, "magnitude": f.path.replace("fieldmap", "magnitude"),
            "suffix": "fieldmap"}


def _config_kind(config: Any) -> Optional[str]:
    if config is None:
        return None
    items = config if isinstance(config, (list, tuple)) else [config]
    names = {getattr(c, "name", c) for c in items}
    if names == {"derivatives"}:
        return "derivatives"
    if "derivatives" not in names:
        return "bids"
    return None


def _suggest(key: str, names: List[str]) -> List[str]:
    close = [n for n in names if n.startswith(key) and n != key]
    for n in difflib.get_close_matches(key, names, n=3, cutoff=0.6):
        if n not in close:
            close.append(n)
    return sorted(set(close))


def _natural_text_key(value: Any):
    """pybids' order of values: by their text, numbers by value, case ignored."""
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", str(value))]


_DIGITS = re.compile(r"(\d+)")


def _natural_key(path: str):
    return [int(t) if t.isdigit() else t for t in _DIGITS.split(path)]


def _freeze(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return {k: _freeze(x) for k, x in v.items()}
    return v


def _sort_key(v: Any):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (0, v, "")
    return (1, 0, str(v))


def _target_dir(f: BIDSFile, target: str, root: str, absolute: Optional[bool]) -> Optional[str]:
    """The directory a target entity names (``sub-01``, ``sub-01/ses-1``, a datatype
    folder) for a file."""
    parts = f.relpath.split(os.sep)
    value = f.entities.get(target)
    if value is None:
        return None
    for i, part in enumerate(parts[:-1]):
        if (target == "datatype" and part == str(value)) or ("-" in part and part.split("-", 1)[-1] == str(value)):
            d = os.path.join(*parts[: i + 1])
            return os.path.join(root, d) if absolute is not False else d
    return None


def _normalize(wanted: Any) -> Any:
    if isinstance(wanted, numbers.Integral) and not isinstance(wanted, (int, bool)):
        return int(wanted)
    if isinstance(wanted, numbers.Real) and not isinstance(wanted, (float, int, bool)):
        return float(wanted)
    return wanted


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
    wanted = _normalize(wanted)
    if is_ext and isinstance(wanted, str) and wanted and not wanted.startswith(".") and not regex:
        wanted = "." + wanted
    if regex:
        return re.search(str(wanted), str(actual)) is not None
    if isinstance(actual, int) and not isinstance(actual, bool):
        if isinstance(wanted, str):
            return wanted == str(actual) or (wanted.isdigit() and int(wanted) == int(actual))
        return int(actual) == wanted
    if isinstance(actual, str):
        return actual == str(wanted) if not isinstance(wanted, bool) else False
    return actual == wanted


def _matches(f: BIDSFile, name: str, wanted: Any, metadata: bool, regex: bool) -> bool:
    actual = f._metadata.get(name) if metadata else f.entities.get(name)
    options = wanted if isinstance(wanted, (list, tuple, set)) else [wanted]
    return any(_value_matches(actual, w, regex, name == "extension") for w in options)

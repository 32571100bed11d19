"""pybids' ``config=`` argument: the names ``bids`` / ``derivatives`` (and
``bids-schema``) select the standard's entities, which nidos takes from its schema; a
configuration file or dict (pybids' format: ``entities`` with regular-expression
``pattern``, optional ``directory`` template, ``dtype`` and ``mandatory``, and
``default_path_patterns``) adds entities read from each file's path by those
patterns."""

from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, List, Optional

NAMED = ("bids", "derivatives", "bids-schema")


class EntitySpec:
    """One entity of a configuration: its name, pattern, directory template and type."""

    __slots__ = ("name", "pattern", "regex", "directory", "dtype", "mandatory")

    def __init__(self, spec: dict):
        self.name = str(spec["name"])
        self.pattern = spec.get("pattern")
        self.regex = re.compile(self.pattern) if self.pattern else None
        self.directory = spec.get("directory")
        self.dtype = spec.get("dtype", "str")
        self.mandatory = bool(spec.get("mandatory", False))


class Config:
    """A loaded configuration: its name, entities (in order) and default path
    patterns. ``schema``: the standard's entities (a named configuration)."""

    def __init__(self, name: str, entities: List[EntitySpec], path_patterns: List[str],
                 schema: bool):
        self.name = name
        self.entities = {e.name: e for e in entities}
        self.default_path_patterns = path_patterns
        self.schema = schema

    def __repr__(self) -> str:
        return f"<Config {self.name}>"


def _from_dict(data: dict) -> Config:
    if "schema_version" in data and "entities" not in data:
        return Config("bids", [], [], True)
    if "entities" not in data:
        raise ValueError("a configuration needs 'entities'")
    ents = [EntitySpec(e) for e in data["entities"]]
    return Config(str(data.get("name", "config")), ents, list(data.get("default_path_patterns") or []),
                  False)


def load_one(item: Any) -> Config:
    if isinstance(item, Config):
        return item
    if isinstance(item, dict):
        return _from_dict(item)
    if isinstance(item, str) and item in NAMED:
        return Config("derivatives" if item == "derivatives" else "bids", [], [], True)
    if isinstance(item, (str, os.PathLike)):
        path = os.fspath(item)
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as fh:
                return _from_dict(json.load(fh))
        raise ValueError(f"{path!r} is neither a configuration name ({', '.join(NAMED)}) "
                         "nor a configuration file")
    name = getattr(item, "name", None)
    if name in NAMED:  # pybids' own Config objects of its named configurations
        return Config(name, [], [], True)
    raise ValueError(f"unusable configuration {item!r}")


def load(config: Any, derivative: bool) -> List[Config]:
    """The configurations of a layout (pybids' default: ``bids``, and ``derivatives``
    for a derivative dataset)."""
    if not config:
        names = ["bids", "derivatives"] if derivative else ["bids"]
        return [load_one(n) for n in names]
    items = config if isinstance(config, (list, tuple)) else [config]
    return [load_one(c) for c in items]


def storable(config: Any) -> Any:
    """``config`` as JSON data (paths absolute), for the saved index."""
    if config is None:
        return None
    items = config if isinstance(config, (list, tuple)) else [config]
    out = []
    for c in items:
        if isinstance(c, os.PathLike) or (isinstance(c, str) and c not in NAMED):
            out.append(os.path.abspath(os.fspath(c)))
        elif isinstance(c, (str, dict)):
            out.append(c)
        else:
            out.append(getattr(c, "name", str(c)))
    return out


def custom_entities(configs: List[Config]) -> Dict[str, EntitySpec]:
    out: Dict[str, EntitySpec] = {}
    for c in configs:
        out.update(c.entities)
    return out


def match(path: str, entities: Dict[str, EntitySpec], padded: Any) -> Dict[str, Any]:
    """The values the configuration's patterns find in ``path`` (``padded``: the class
    for ``int`` entities). A mandatory entity that does not match ends the search."""
    out: Dict[str, Any] = {}
    for e in entities.values():
        m = e.regex.search(path) if e.regex is not None else None
        if m is None:
            if e.mandatory:
                break
            continue
        value: Any = m.group(1)
        if e.dtype == "int" and value.isdigit():
            value = padded(value)
        elif e.dtype == "float":
            try:
                value = float(value)
            except ValueError:
                pass
        out[e.name] = value
    return out


def directories(target: str, entities: Dict[str, EntitySpec], root: str,
                dirnames: List[str]) -> Optional[List[str]]:
    """The folders among ``dirnames`` that the ``directory`` template of ``target``
    names; None when ``target`` is not a configured entity. ValueError when it has no
    template."""
    spec = entities.get(target)
    if spec is None:
        return None
    if not spec.directory:
        raise ValueError(
            "Return type set to directory, but no directory template is defined for the "
            f"target entity ('{target}')."
        )
    template = root.replace(os.sep, "/").rstrip("/") + "/" + spec.directory.lstrip("/")
    regex = re.escape(template)
    for name in re.findall(r"\{(.*?)\}", spec.directory):
        ent = entities.get(name)
        sub = ent.pattern if ent is not None and ent.pattern else "[^/]+"
        regex = regex.replace(re.escape("{" + name + "}"), sub)
    compiled = re.compile(regex + r"[^/]*$")
    return sorted({d for d in dirnames if compiled.search(d.replace(os.sep, "/"))})

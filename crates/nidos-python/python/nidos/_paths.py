"""pybids-style path patterns for ``Layout.build_path(path_patterns=...)``:
``{entity}`` placeholders, ``{entity<a|b>}`` (allowed values), ``{entity|default}``
(a value when the entity is absent), and ``[...]`` optional sections dropped when a
placeholder inside has no value."""

from __future__ import annotations

import re
from typing import Any, Dict, Optional

_FIELD = re.compile(r"\{([\w\d]+)(?:<([^>]*)>)?(?:\|([^}]*))?\}")
_OPTIONAL = re.compile(r"\[([^\[\]]*)\]")


def _fill(text: str, ents: Dict[str, Any]) -> Optional[str]:
    """``text`` with its placeholders filled; None when one has no allowed value."""
    failed = False

    def sub(m: re.Match) -> str:
        nonlocal failed
        name, allowed, default = m.group(1), m.group(2), m.group(3)
        value = ents.get(name)
        if value is None:
            value = default
        if value is None:
            failed = True
            return ""
        value = str(value)
        if allowed is not None and value not in allowed.split("|"):
            if default is not None and name not in ents:
                return default
            failed = True
            return ""
        return value

    out = _FIELD.sub(sub, text)
    return None if failed else out


def format_pattern(pattern: str, entities: Dict[str, Any], strict: bool = False) -> Optional[str]:
    """The path ``pattern`` makes of ``entities``, or None when it does not fit them
    (a required placeholder is missing or has a value it does not allow; with
    ``strict``, an entity the pattern does not name)."""
    ents = {k: v for k, v in entities.items() if v is not None}
    if strict:
        named = set(m.group(1) for m in _FIELD.finditer(pattern))
        if set(ents) - named:
            return None

    def optional(m: re.Match) -> str:
        filled = _fill(m.group(1), ents)
        return filled if filled is not None else ""

    while _OPTIONAL.search(pattern):
        pattern = _OPTIONAL.sub(optional, pattern)
    return _fill(pattern, ents)

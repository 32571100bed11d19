"""Which files an index takes, by pybids' ``ignore`` / ``force_index`` rules: each path
is matched (as ``/`` + its path from the root) against the forced patterns first
(taken), then the ignored ones (left out); a forced folder takes every file under it,
an ignored one is not entered; anything else is up to validation. Strings are paths
(from the root, or absolute), regular expressions are searched for as they are."""

from __future__ import annotations

import os
import re
from typing import Any, Dict, Iterable, List, Optional, Tuple

# pybids' default: these top-level folders are left out unless ignore= is given.
DEFAULT_IGNORE = re.compile(r"^/(code|models|sourcedata|stimuli)")
# Dot files and folders are always left out (unless forced).
ALWAYS_IGNORE = re.compile(r"/\.")

Patterns = List["re.Pattern[str]"]


def _as_regex(pattern: Any, root: str) -> "re.Pattern[str]":
    if hasattr(pattern, "search"):
        return pattern
    text = os.fspath(pattern)
    if os.path.isabs(text):
        text = os.path.relpath(text, root)
    text = text.replace(os.sep, "/").strip("/")
    return re.compile("^/" + re.escape(text))


def _listify(value: Any) -> list:
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)) or hasattr(value, "search"):
        return [value]
    return list(value)


def patterns(ignore: Any, force: Any, root: str) -> Tuple[Patterns, Patterns]:
    """The forced and the ignored patterns as regular expressions."""
    include = [_as_regex(p, root) for p in _listify(force)]
    for p in include:
        if p.pattern.startswith("^/derivatives"):
            raise ValueError(
                "Do not pass 'derivatives' in the force_index list; index derivative "
                "datasets with derivatives=True or add_derivatives()."
            )
    ignored = [DEFAULT_IGNORE] if ignore is None else [_as_regex(p, root) for p in _listify(ignore)]
    ignored.append(ALWAYS_IGNORE)
    return include, ignored


def decide(rel: str, include: Patterns, exclude: Patterns) -> Optional[bool]:
    """True: forced; False: ignored; None: neither (``rel`` starts with ``/``)."""
    for p in include:
        if p.search(rel):
            return True
    for p in exclude:
        if p.search(rel):
            return False
    return None


def walk(root: str, include: Patterns, exclude: Patterns) -> Dict[str, bool]:
    """Every file the rules let through, by absolute path: True when it is taken
    whatever validation says (forced, or in a forced folder), False when it is taken
    only if it is valid. Folders inside ``derivatives/`` are derivative datasets,
    indexed on their own; folders reached through symbolic links are followed (once);
    a ``.zarr`` folder is one file."""
    out: Dict[str, bool] = {}
    seen = set()

    def visit(folder: str, rel: str, forced: bool) -> None:
        real = os.path.realpath(folder)
        if real in seen:
            return
        seen.add(real)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        dirs = []
        for e in entries:
            sub = rel + "/" + e.name
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            if is_dir and not e.name.endswith(".zarr"):
                dirs.append((e, sub))
                continue
            verdict = True if forced else decide(sub, include, exclude)
            if verdict is not False:
                out[e.path] = verdict is True
        for e, sub in dirs:
            if rel == "/derivatives" or rel.startswith("/derivatives/"):
                continue
            verdict = decide(sub, include, exclude)
            if verdict is not False:
                visit(e.path, sub, verdict is True)

    visit(root, "", False)
    return out


def select(listed: Iterable[str], root: str, ignore: Any, force: Any,
           validate: bool) -> Tuple[set, List[str]]:
    """The listed (valid) paths to keep, and the paths to add that the listing lacks."""
    include, exclude = patterns(ignore, force, root)
    found = walk(root, include, exclude)
    keep = {p for p in listed if p in found}
    add = [p for p, sure in found.items() if (sure or not validate) and p not in keep]
    return keep, add

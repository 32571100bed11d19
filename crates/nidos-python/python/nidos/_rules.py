"""The rule language on one file of a dataset."""

from __future__ import annotations

import json
import os
from typing import Any, Optional

from . import _native


def eval(expression: str, dataset, file: str, *, schema: Optional[str] = None) -> Any:  # noqa: A001
    """The value of a rule expression (``"sidecar.RepetitionTime > 1"``) for ``file``
    (dataset-relative, or a path inside ``dataset``), as plain Python data."""
    text = _native.eval_json(
        expression, os.fspath(dataset), os.fspath(file),
        schema=None if schema is None else os.fspath(schema),
    )
    return json.loads(text)


def context(dataset, file: str, *, schema: Optional[str] = None, full_tree: bool = False) -> dict:
    """The whole evaluation context of ``file``, as the rules see it (``dataset.tree``
    summarised unless ``full_tree``)."""
    text = _native.context_json(
        os.fspath(dataset), os.fspath(file),
        schema=None if schema is None else os.fspath(schema),
        full_tree=full_tree,
    )
    return json.loads(text)

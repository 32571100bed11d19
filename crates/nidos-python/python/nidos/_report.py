"""``nidos.validate`` and its :class:`Report`."""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]


class Report:
    """A validation report: the JSON report's content, with shortcuts.

    ``issues`` are dicts shaped like the JSON report's issues (``code``, ``severity``,
    ``location``, ...); ``summary`` is its summary dict.
    """

    def __init__(self, data: dict):
        self._data = data

    @property
    def data(self) -> dict:
        """The whole JSON report as a dict."""
        return self._data

    @property
    def issues(self) -> list:
        return self._data["issues"]["issues"]

    @property
    def code_messages(self) -> dict:
        return self._data["issues"].get("codeMessages", {})

    @property
    def summary(self) -> dict:
        return self._data["summary"]

    @property
    def derivatives(self) -> dict:
        """Reports of ``derivatives/<name>`` datasets (``recursive=True``), by name."""
        subs = self._data.get("derivativesSummary", {})
        return {name: Report(sub) for name, sub in subs.items()}

    @property
    def errors(self) -> list:
        return [i for i in self.issues if i.get("severity") == "error"]

    @property
    def warnings(self) -> list:
        return [i for i in self.issues if i.get("severity") == "warning"]

    @property
    def valid(self) -> bool:
        """No errors (in this dataset nor in its derivative datasets)."""
        return not self.errors and all(r.valid for r in self.derivatives.values())

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self._data, **kwargs)

    def to_pandas(self):
        """The issues as a pandas DataFrame, one row per issue (needs pandas)."""
        import pandas as pd

        return pd.DataFrame.from_records(self.issues)

    def __repr__(self) -> str:
        return f"<Report: {len(self.errors)} errors, {len(self.warnings)} warnings>"

    def __reduce__(self):
        return (Report, (self._data,))


def validate(
    path: PathLike,
    *,
    schema: Optional[PathLike] = None,
    std_version: Optional[str] = None,
    config: Union[None, dict, PathLike] = None,
    recursive: bool = False,
    ignore_warnings: bool = False,
) -> Report:
    """Validates the dataset at ``path``.

    ``schema``: a YAML rule tree or compiled schema JSON instead of the bundled rules;
    ``std_version``: the version whose rules apply; ``config``: a dict or a JSON file
    ``{"ignore": [...], "warning": [...], "error": [...]}``; ``recursive``: also validate
    ``derivatives/<name>`` datasets (under ``Report.derivatives``).
    """
    if config is not None and not isinstance(config, dict):
        with open(config, encoding="utf-8") as f:
            config = json.load(f)
    text = _native.validate_json(
        os.fspath(path),
        schema=None if schema is None else os.fspath(schema),
        std_version=std_version,
        config=None if config is None else json.dumps(config),
        recursive=recursive,
        ignore_warnings=ignore_warnings,
    )
    return Report(json.loads(text))

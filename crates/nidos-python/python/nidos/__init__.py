"""nidos: validate, query and index Std / BIDS neuroimaging datasets.

The work is done by a Rust core (``nidos._native``); long calls release the GIL, and
every object here pickles, so it can be sent to worker processes (Dask, multiprocessing).

    >>> import nidos
    >>> report = nidos.validate("ds001")
    >>> layout = nidos.Layout("ds001", derivatives=True)
    >>> layout.get(subject="01", suffix="bold", extension=".nii.gz", return_type="filename")
    >>> table = nidos.index(["archive/"])          # a pyarrow.Table, one row per file
"""

from ._native import __version__
from ._report import Report, validate
from ._files import BIDSDataFile, BIDSFile, BIDSImageFile, BIDSJSONFile
from ._layout import Layout, PaddedInt, Query

# pybids' name, so ``from nidos import BIDSLayout`` replaces ``from bids import BIDSLayout``.
BIDSLayout = Layout
from ._rules import context, eval
from ._index import find_datasets, index

__all__ = [
    "BIDSChildDatasetError",
    "BIDSConflictingValuesError",
    "BIDSDataFile",
    "BIDSDerivativesValidationError",
    "BIDSFile",
    "BIDSImageFile",
    "BIDSJSONFile",
    "BIDSLayout",
    "BIDSValidationError",
    "NoMatchError",
    "PaddedInt",
    "TargetError",
    "Layout",
    "Query",
    "Report",
    "__version__",
    "context",
    "eval",
    "find_datasets",
    "index",
    "validate",
]


def __getattr__(name):
    # pybids' exception classes, resolved on first use (see _exceptions.py).
    from . import _exceptions

    if name in _exceptions.NAMES:
        return getattr(_exceptions, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

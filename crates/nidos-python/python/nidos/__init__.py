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
from ._layout import BIDSFile, Layout, Query
from ._rules import context, eval
from ._index import find_datasets, index

__all__ = [
    "BIDSFile",
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

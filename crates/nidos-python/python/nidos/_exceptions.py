"""The exceptions ``nidos.Layout`` raises, under pybids' names and bases.

When the program uses pybids, pybids' own classes are raised, so ``except bids.exceptions.TargetError``
catches what nidos raises (a script written for pybids runs unchanged). They are resolved
when raised (PEP 562 ``__getattr__``), and pybids' only when the program has imported
pybids: ``import nidos`` does not import it (about a second: SQLAlchemy, pandas)."""

import sys

NAMES = (
    "BIDSChildDatasetError",
    "BIDSConflictingValuesError",
    "BIDSDerivativesValidationError",
    "BIDSValidationError",
    "NoMatchError",
    "PyBIDSError",
    "TargetError",
)

_OWN = {}


def _own_classes():
    """The same hierarchy as pybids', for when pybids is absent."""

    class PyBIDSError(Exception):
        """Base of the layout errors."""

    class NoMatchError(ValueError, PyBIDSError):
        """A query that must match something matched nothing (or too much)."""

    class TargetError(ValueError, PyBIDSError):
        """An unknown ``target`` entity."""

    class BIDSValidationError(ValueError, PyBIDSError):
        """The dataset's root or description is not usable."""

    class BIDSDerivativesValidationError(BIDSValidationError):
        """A derivative dataset's description is not usable."""

    class BIDSConflictingValuesError(BIDSValidationError):
        """A file's path gives one entity two values."""

    class BIDSChildDatasetError(ValueError, PyBIDSError):
        """A derivative dataset name that is missing or ambiguous."""

    found = dict(locals())
    for cls in found.values():
        cls.__module__ = __name__
        cls.__qualname__ = cls.__name__
    return found


def _pybids_classes():
    """pybids' classes when the program has imported pybids (only then can it name them
    in an ``except``), else None."""
    if "bids" not in sys.modules:
        return None
    try:
        import bids.exceptions as bx  # type: ignore

        return {n: getattr(bx, n) for n in NAMES}
    except Exception:  # pragma: no cover - a broken pybids install: our own classes
        return None


def __getattr__(name):
    # Not cached: a program may import pybids after nidos, and from then on its classes
    # are the ones its ``except`` clauses name.
    if name in NAMES:
        found = _pybids_classes()
        if found is None:
            if not _OWN:
                _OWN.update(_own_classes())
            found = _OWN
        return found[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(NAMES)

"""The exceptions ``nidos.Layout`` raises, under pybids' names and bases. When pybids
is installed its own classes are used, so ``except bids.exceptions.TargetError`` catches
what nidos raises (a script written for pybids runs unchanged)."""

try:  # pragma: no cover - depends on the environment
    from bids.exceptions import (  # type: ignore
        BIDSChildDatasetError,
        BIDSConflictingValuesError,
        BIDSDerivativesValidationError,
        BIDSValidationError,
        NoMatchError,
        PyBIDSError,
        TargetError,
    )
except Exception:  # pybids absent: the same hierarchy, defined here

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


__all__ = [
    "BIDSChildDatasetError",
    "BIDSConflictingValuesError",
    "BIDSDerivativesValidationError",
    "BIDSValidationError",
    "NoMatchError",
    "PyBIDSError",
    "TargetError",
]

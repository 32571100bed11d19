"""pytest plugin loaded (``-p nidos_swap``) before pybids' test modules are imported:
the one change to pybids' layout tests is that ``BIDSLayout`` and ``Query`` are
nidos'. Also points pybids' test-data helper at the downloaded source distribution
(the installed wheel carries no test data)."""

import os

import bids
import bids.layout
import bids.tests
import bids.tests.utils

import nidos

bids.BIDSLayout = nidos.Layout
bids.layout.BIDSLayout = nidos.Layout
bids.layout.Query = nidos.Query

_DATA = os.environ.get("PYBIDS_TEST_DATA")
if _DATA:

    def _test_data_path():
        return os.path.join(_DATA, "data")

    bids.tests.get_test_data_path = _test_data_path
    bids.tests.utils.get_test_data_path = _test_data_path


def pytest_runtest_setup(item):
    """A test of an example dataset that ``BIDS_EXAMPLES`` lacks is skipped, as
    pybids' fixture skips when the whole example set is absent."""
    import pytest

    examples = os.environ.get("BIDS_EXAMPLES")
    params = getattr(getattr(item, "callspec", None), "params", {})
    name = params.get("dataset")
    if examples and isinstance(name, str) and not os.path.isdir(os.path.join(examples, name)):
        pytest.skip(f"example dataset {name} absent from {examples}")

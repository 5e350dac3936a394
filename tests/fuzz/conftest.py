"""The fuzz suite's tests import the shared helpers of tests/ (fmu_support, runner_support, ...)
as top-level modules, like the tests beside them."""

import pathlib
import sys

TESTS = pathlib.Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# CI runs the property tests with a fixed seed sequence, so a red run can be reproduced
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A fresh compile cache ($MBSFMU_CACHE) for the tests of one module."""
    old = os.environ.get("MBSFMU_CACHE")
    d = tmp_path_factory.mktemp("mbsfmu_cache")
    os.environ["MBSFMU_CACHE"] = str(d)
    yield d
    if old is None:
        del os.environ["MBSFMU_CACHE"]
    else:
        os.environ["MBSFMU_CACHE"] = old

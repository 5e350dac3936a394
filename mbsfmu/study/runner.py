"""Deprecated, goes away in the next release: the sweep's batch runner is :mod:`mbsfmu.study.batch`
("runner" is the block-diagram runner, :mod:`mbsfmu.runner`).  Importing this module warns and
gives :mod:`mbsfmu.study.batch` itself."""

import sys

from ..core.errors import deprecated
from . import batch

deprecated("the module mbsfmu.study.runner", "mbsfmu.study.batch (the sweep's batches on Dask)")
sys.modules[__name__] = batch

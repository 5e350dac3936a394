"""The FMU block's per-process cache of FMU files (issue 28 item 1): blocks of one file made again
and again parse and unpack it once; a file changed on disk, or a folder removed, is read again;
every block still runs its own instance."""

import os
import shutil

import numpy as np
import pytest

pytest.importorskip("pythonfmu")

from blocks import Constant, Gain  # noqa: E402
from mbsfmu.runner import Diagram, export_block_fmu  # noqa: E402
from mbsfmu.runner.fmu_block import FMU, FMU_FILES  # noqa: E402


@pytest.fixture
def gain_fmu(tmp_path):
    return export_block_fmu(Gain(2.0), tmp_path / "gain.fmu", step_size=0.1)


def run(path, k=None):
    d = Diagram(0.1)
    d.add("c", Constant(3.0))
    d.add("g", FMU(path, parameters={} if k is None else {"k": k}))
    d.connect("c.y", "g.u")
    return d.run(0.3)["g.y"]


def test_blocks_of_one_file_unpack_it_once(gain_fmu):
    key = str(gain_fmu.resolve())
    before = FMU_FILES.extractions[key]
    outputs = [run(gain_fmu, k) for k in (1.0, 2.0, 5.0)]
    assert FMU_FILES.extractions[key] == before + 1
    for k, y in zip((1.0, 2.0, 5.0), outputs):  # each block its own instance and values
        assert np.all(y == 3.0 * k)
    # two blocks of the file in one diagram: one folder, two instances
    d = Diagram(0.1)
    d.add("c", Constant(1.0))
    d.add("a", FMU(gain_fmu, parameters={"k": 2.0}))
    d.add("b", FMU(gain_fmu, parameters={"k": -4.0}))
    d.connect("c.y", "a.u")
    d.connect("a.y", "b.u")
    assert np.all(d.run(0.3)["b.y"] == -8.0)
    assert FMU_FILES.extractions[key] == before + 1


def test_a_changed_file_or_a_removed_folder_is_read_again(gain_fmu, tmp_path):
    key = str(gain_fmu.resolve())
    run(gain_fmu)
    before = FMU_FILES.extractions[key]
    st = gain_fmu.stat()
    os.utime(gain_fmu, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # as if written again
    run(gain_fmu)
    assert FMU_FILES.extractions[key] == before + 1
    block = FMU(gain_fmu)
    shutil.rmtree(block._extract())  # the shared folder removed behind the cache's back
    run(gain_fmu)
    assert FMU_FILES.extractions[key] == before + 2

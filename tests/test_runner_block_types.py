"""The registry of block types (mbsfmu.runner.block.BLOCK_TYPES): every Block subclass registers
by its name when its module is imported; the first class of a name keeps it, so SSP import's
'FMU' stays the runner's own FMU block (issue 24 item 1: the runner finds block types without
importing the top-level package blocks)."""

import pytest

import blocks
import mbsfmu.runner.block as block_module
from mbsfmu.runner import BLOCK_TYPES, Block, BlockError, block_type
from mbsfmu.runner.fmu_block import FMU


@pytest.fixture
def registry(monkeypatch):
    """A copy of the registry for the test (classes defined in it do not stay registered)."""
    monkeypatch.setattr(block_module, "BLOCK_TYPES", dict(BLOCK_TYPES))
    return block_module.BLOCK_TYPES


def test_standard_blocks_register_when_imported():
    assert block_type("FMU") is FMU is blocks.FMU
    for name in blocks.__all__:
        assert block_type(name) is getattr(blocks, name), name
    assert not [name for name in BLOCK_TYPES if name.startswith("_")]  # e.g. blocks.sources._Source


def test_unknown_block_type_names_the_registered_ones():
    with pytest.raises(BlockError, match=r"unknown block type 'Gian' \(registered: .*Gain.*; a block type "
                                         r"registers when the module that defines it is imported\)"):
        block_type("Gian")
    with pytest.raises(BlockError, match=r"unknown block type \['FMU'\]"):
        block_type(["FMU"])


def test_first_class_of_a_name_keeps_it(registry):
    class FMU(Block):  # a user's class of the same name does not replace the runner's FMU block
        pass

    class Mine(Block):
        type_name = "MyFMU"

    class Plain(Block):
        pass

    assert registry["FMU"] is block_type("FMU") is blocks.FMU
    assert block_type("MyFMU") is Mine and "Mine" not in registry
    assert block_type("Plain") is Plain

    class Plain(Block):  # noqa: F811  (the same class defined again, as by a reload)
        pass

    assert block_type("Plain") is Plain

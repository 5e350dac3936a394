"""``s.equations()``, the spelling of README-era scripts, keeps working for one release (issue 24
item 4): the same Equations as ``mbsfmu.derive(s)``, with a DeprecationWarning that names the new
spelling.  The model package does not import its derivation: :mod:`mbsfmu.equations` registers
``derive`` in the model base when it is imported (tests/test_layout.py checks the imports)."""

import pytest
import sympy as sp

import mbsfmu
from mbsfmu.core.errors import MbsError
from mbsfmu.model.base import Model
from models import double_pendulum, four_bar_natural

DEPRECATED = r"{}\.equations\(\) is deprecated and goes away in the next release: use mbsfmu\.derive\(s\)"


def _same(eqs, other):
    """M, k, q and the constraint rows of two derivations agree symbolically (closed forms)."""
    for name in ("M", "k", "q", "c", "C"):
        a, b = eqs.expanded(getattr(eqs, name)), other.expanded(getattr(other, name))
        assert a.shape == b.shape, name
        assert sp.simplify(a - b) == sp.zeros(*a.shape), name


@pytest.mark.parametrize("build, kind", [(double_pendulum.model, "System"),
                                         (four_bar_natural.model, "LagrangianSystem")])
def test_equations_warns_and_returns_the_derivation(build, kind):
    s = build()
    with pytest.warns(DeprecationWarning, match=DEPRECATED.format(kind)) as caught:
        eqs = s.equations()
    assert len(caught) == 1 and caught[0].filename == __file__  # the warning points at the caller
    assert eqs is mbsfmu.derive(s)  # the one cached derivation, not a second one
    _same(eqs, mbsfmu.derive(build()))  # and what a fresh model derives


def test_equations_follows_a_changed_model():
    s = double_pendulum.model()
    before = mbsfmu.derive(s)
    s.constant("extra", 1.0)
    with pytest.warns(DeprecationWarning):
        after = s.equations()
    assert after is not before and after is mbsfmu.derive(s)


def test_without_a_registered_derivation_it_says_what_to_do(monkeypatch):
    monkeypatch.setattr(Model, "_derivation", None)
    s = double_pendulum.model()
    with pytest.warns(DeprecationWarning), pytest.raises(
            MbsError, match=r"double_pendulum: System\.equations\(\) finds no derivation of the equations of "
                            r"motion .*: import mbsfmu and call mbsfmu\.derive\(s\)"):
        s.equations()

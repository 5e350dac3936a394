"""System and LagrangianSystem are siblings over one base, Model (issue 24 item 1).

* Both are a Model; neither is the other, so a LagrangianSystem has none of a System's frame
  commands: each of them is a ModelError naming the replacement (and an AttributeError, so
  ``hasattr`` is False), and the refused call changes nothing.
* What every stage takes is any Model: ``mbsfmu.derive`` picks the derivation of the front end
  (a LagrangianSystem given to it used to be derived by Newton-Euler, without its energies),
  ``load_model`` takes either, ``Result.reactions`` of a model without loops is empty.
* The commands both offer are written once, in the base.
"""

import inspect

import pytest
import sympy as sp

import mbsfmu
from mbsfmu import LagrangianSystem, Model, ModelError, System
from mbsfmu.model.base import CommandNotAvailable


def planar_pendulum():
    """A point mass m on a string of length l, natural coordinates (x, y), gravity -g y."""
    s = LagrangianSystem("pend", dim=2)
    m, l, g = s.constants(m=2.0, l=1.0, g=9.81)
    A = s.point("A", initial=(1.0, 0.0))
    s.gravity([0, -g])
    s.point_mass("bob", A, m)
    s.distance("string", A, [0, 0], l)
    return s


def own_parts(cls):
    """The classes of a front end that are not the base's (the class and its parts)."""
    return [c for c in inspect.getmro(cls) if c not in inspect.getmro(Model)]


def test_both_front_ends_are_models_and_siblings():
    s, n = System("s"), planar_pendulum()
    assert isinstance(s, Model) and isinstance(n, Model)
    assert not isinstance(n, System) and not isinstance(s, LagrangianSystem)
    assert mbsfmu.Model is mbsfmu.model.Model is Model


def test_shared_commands_are_written_once_in_the_base():
    shared = ("constant", "constants", "coordinate", "coordinates", "initial", "initial_guess",
              "time_parameter", "input", "constraint", "nonholonomic_constraint", "initial_condition",
              "rates", "output", "reaction_outputs", "generalized_force", "expr", "equations",
              "default_parameters", "summary")
    for name in shared:
        assert getattr(System, name) is getattr(Model, name), name
    # the Lagrangian front end refines some of them (checks of its own, then the base's)
    refined = {n for part in own_parts(LagrangianSystem) for n in vars(part)} & set(shared)
    assert refined == {"constraint", "nonholonomic_constraint", "rates"}
    assert not {n for part in own_parts(System) for n in vars(part)} & set(shared)



def test_system_only_commands_are_refused_by_name():
    """Every public command of a System that the base does not have is either refused by a
    LagrangianSystem with its replacement or one of the few both front ends define for
    themselves (gravity, spring_damper, elements_with_mass); none is inherited."""
    own = {n for part in own_parts(System) for n, v in vars(part).items()
           if callable(v) and not n.startswith("_")}
    assert own - set(LagrangianSystem.ELSEWHERE) == {"gravity", "spring_damper", "elements_with_mass"}
    lagrangian = {n for part in own_parts(LagrangianSystem) for n in vars(part)}
    assert {"gravity", "spring_damper", "elements_with_mass"} <= lagrangian
    assert set(LagrangianSystem.ELSEWHERE) <= own


@pytest.mark.parametrize("command, call, instead", [
    ("frame", lambda s: s.frame("K"), r"point\(\) and unit_vector\(\)"),
    ("body", lambda s: s.body("B", mass=1), r"rigid_body\(\), rod\(\) or point_mass\(\)"),
    ("loop", lambda s: s.loop("L", "ISYS", "A"), r"shared points, distance\(\) or constraint\(\)"),
    ("force", lambda s: s.force("F", "A", [1, 0, 0]), r"point_force\(\)"),
    ("torque", lambda s: s.torque("M", "A", [0, 0, 1]), r"point_force\(\) on two points or generalized_"),
    ("frame_output", lambda s: s.frame_output("A"), r"point_output\(\)"),
    ("flexible_body", lambda s: s.flexible_body("F", data=None), r"a System \(flexible bodies need a frame"),
    ("deflection_output", lambda s: s.deflection_output("F_1"), r"a System \(flexible bodies need a frame"),
    ("visual", lambda s: s.visual("A", "sphere", 0.1), r"a System \(the animation draws frames and bodies\)"),
    ("vector", lambda s: s.vector([0, 0, 1], "v"), r"pv\(\) \(points and vectors of dim components\)"),
])
def test_a_lagrangian_system_refuses_frame_commands(command, call, instead):
    s = planar_pendulum()
    before = ({k: dict(v) for k, v in s._names.items()}, dict(s.outputs), s.summary())
    with pytest.raises(ModelError, match=rf"^pend: {command}\(\) is not available in a LagrangianSystem "
                                         rf"\(natural coordinates have no frames\); use {instead}") as err:
        call(s)
    assert isinstance(err.value, CommandNotAvailable) and isinstance(err.value, AttributeError)
    assert not hasattr(s, command)
    assert ({k: dict(v) for k, v in s._names.items()}, dict(s.outputs), s.summary()) == before


def test_other_missing_attributes_stay_plain_attribute_errors():
    s = planar_pendulum()
    with pytest.raises(AttributeError) as err:
        s.no_such_thing  # noqa: B018
    assert not isinstance(err.value, ModelError)
    assert getattr(s, "frames", None) is None and getattr(s, "loops", ()) == ()


def test_derive_takes_the_front_ends_derivation():
    """mbsfmu.derive of a LagrangianSystem: Lagrange's equations, M = m E, q = (0, -m g)."""
    s = planar_pendulum()
    eqs = mbsfmu.derive(s)
    m, g = (s.constants_[n].symbol for n in ("m", "g"))
    assert sp.simplify(eqs.expanded(eqs.M) - sp.diag(m, m)) == sp.zeros(2, 2)
    assert sp.simplify(eqs.expanded(eqs.q) - sp.Matrix([0, -m * g])) == sp.zeros(2, 1)
    with pytest.warns(DeprecationWarning, match=r"mbsfmu\.derive\(s\)"):  # the older spelling
        own = s.equations()
    assert own is eqs
    assert sp.simplify(own.expanded(own.M) - sp.diag(m, m)) == sp.zeros(2, 2)
    with pytest.raises(ModelError, match=r"derive: str is not a model \(a System or a LagrangianSystem\)"):
        mbsfmu.derive("pendulum")


def test_reactions_of_a_model_without_loops_are_empty():
    r = mbsfmu.simulate(planar_pendulum(), t_end=0.01, dt=0.005, backend="numpy")
    assert r.reactions() == {}
    assert set(r.multipliers()) == {"string"}


def test_load_model_takes_either_front_end_and_names_anything_else(tmp_path):
    good = tmp_path / "natural.py"
    good.write_text("from mbsfmu import LagrangianSystem\n\ndef model():\n"
                    "    s = LagrangianSystem('n', dim=2)\n    s.point('A', initial=(0, 0))\n    return s\n")
    assert isinstance(mbsfmu.load_model(good), LagrangianSystem)
    bad = tmp_path / "bad.py"
    bad.write_text("def model():\n    return 42\n")
    with pytest.raises(ModelError, match=r"model\(\) returned int, not a mbsfmu model \(a System or a "
                                         r"LagrangianSystem\)"):
        mbsfmu.load_model(bad)


def test_animation_draws_a_lagrangian_system_from_its_points():
    """The pendulum's points (the bob A and the string's fixed end) are what the animation
    draws, named before any simulation; a model with no element or distance is refused."""
    from mbsfmu.animation.scene import drawn_frame_names

    assert drawn_frame_names(planar_pendulum()) == ["A", "string[1]"]
    bare = LagrangianSystem("bare", dim=2)
    bare.point("A", initial=(1.0, 0.0))
    with pytest.raises(ModelError, match=r"model 'bare' has no rod, point mass, rigid body or distance"):
        drawn_frame_names(bare)

"""Catalogue of bad inputs of the Lagrangian front end, its natural-coordinate elements and
nonholonomic constraints (issue 23 items 6, 7, 9): each case is (label, callable, expected
exception or warning type, regular expression the message must match, naming the culprit).
A refused declaration must leave the model as it was: the model-building cases also check that
the system's names, constraints, energy terms and coordinates are unchanged.
"""

import math

import pytest
import sympy as sp

import mbsfmu
from mbsfmu import (
    ConstraintError,
    LagrangianSystem,
    ModelError,
    ParameterError,
    RedundantConstraintWarning,
    SingularMassMatrixError,
    System,
    derive,
)
from mbsfmu.natural import cross2


def planar():
    """A point A = (1, 0) with mass in a planar LagrangianSystem with constants m, l, k."""
    s = LagrangianSystem("cat", dim=2)
    m, _, _ = s.constants(m=1.0, l=1.0, k=10.0)
    A = s.point("A", (1.0, 0.0))
    s.point_mass("bob", A, m)
    return s


def spatial():
    """Points O, A, B (not collinear) in a spatial LagrangianSystem."""
    s = LagrangianSystem("cat3", dim=3)
    s.constants(m=1.0)
    for i, n in enumerate("OAB"):
        s.point(n, (float(i == 1), float(i == 2), 0.0))
    return s


def A(s):
    return s.pvs["A"]


def rates(s):
    return s.rates("A")


def carrier(s, **kw):
    """The three-point element on O, A, B of spatial()."""
    P = s.pvs
    return s.rigid_body("c", 1.0, points=[(P["O"],
     [0, 0, 0]), (P["A"], [1, 0, 0]), (P["B"], [0, 1, 0])], **kw)


def planar_body(s, **kw):
    return s.rigid_body("b", 1.0, points=[(A(s), [0, 0]), ([0, 0], [1, 0])], **kw)


def free_xy(cls):
    s = cls("nh") if cls is System else cls("nh", dim=2)
    s.constants(m=1.0)
    s.coordinates("x", "y")
    return s


# ---------------------------------------------------------------- building a LagrangianSystem
BUILD_CASES = [
    # the system and its points
    ("dim 4", lambda s: LagrangianSystem("d", dim=4), ModelError, r"system 'd': dim must be 2 or 3, got 4"),
    ("dim 2.0", lambda s: LagrangianSystem("d", dim=2.0), ModelError, r"system 'd': dim must be 2 or 3, got "
                                                                      r"2\.0"),
    ("dim True", lambda s: LagrangianSystem("d", dim=True), ModelError, r"dim must be 2 or 3, got True"),
    ("point nan", lambda s: s.point("P", (math.nan, 0)), ParameterError,
     r"point 'P' initial position: nan is not finite"),
    ("point scalar", lambda s: s.point("P", 1.0), ModelError,
     r"point 'P': initial position needs 2 numbers \(a list or array\), got 1\.0"),
    ("point string", lambda s: s.point("P", "1,2"), ModelError, r"point 'P': initial position needs 2 "
                                                                r"numbers"),
    ("point 3 components in 2D", lambda s: s.point("P", (1, 2, 3)), ModelError,
     r"point 'P': initial position needs 2 components, got 3"),
    ("point velocity short", lambda s: s.point("P", (0, 0), velocity=(1,)), ModelError,
     r"point 'P': initial velocity needs 2 components, got 1"),
    ("point name not identifier", lambda s: s.point("2P", (0, 0)), ModelError, r"point '2P' name '2P' is not "
                                                                               r"a valid"),
    ("point named ISYS", lambda s: s.point("ISYS", (0, 0)), ModelError, r"'ISYS' is reserved"),
    ("point twice", lambda s: s.point("A", (0, 0)), ModelError, r"duplicate name 'A': already used by point "
                                                                r"'A'"),
    ("point over a coordinate", lambda s: (s.coordinate("P_x"), s.point("P", (0, 0))), ModelError,
     r"duplicate name 'P_x': already used by coordinate 'P_x'"),
    ("coordinate over a point's", lambda s: s.coordinate("A_x"), ModelError,
     r"duplicate name 'A_x': already used by coordinate 'A_x'"),
    # energies (item 7: an indefinite or negative definite T is named)
    ("T negative definite", lambda s: s.kinetic_energy(-(rates(s)[0] ** 2 + rates(s)[1] ** 2), "T_bad"),
     ModelError, r"kinetic energy 'T_bad' is negative definite in the velocities: every motion gives T < 0"),
    ("T indefinite", lambda s: s.kinetic_energy(rates(s)[0] ** 2 - rates(s)[1] ** 2, "T_bad"), ModelError,
     r"kinetic energy 'T_bad' is indefinite in the velocities: moving coordinate 'A_y' gives T < 0 "
     r"\(eigenvalue -2 of its mass matrix"),
    ("T indefinite product", lambda s: s.kinetic_energy(rates(s)[0] * rates(s)[1], "T_bad"), ModelError,
     r"'T_bad' is indefinite .* moving the coordinates 'A_x', 'A_y' together gives T < 0"),
    ("T negative by its default",
     lambda s: s.kinetic_energy(s.constant("J", -0.5) * rates(s)[0] ** 2, "T_bad"),
     ModelError, r"'T_bad' is negative definite in the velocities: every motion gives T < 0 \(eigenvalue -1"),
    ("T negative from a Lagrangian", lambda s: s.lagrangian(-rates(s)[0] ** 2 - A(s)[1]), ModelError,
     r"Lagrangian 'L' is negative definite in the velocities"),
    ("T without velocity", lambda s: s.kinetic_energy(A(s)[0] ** 2, "T0"), ModelError,
     r"kinetic energy 'T0': A_x\*\*2 depends on no velocity .*potential_energy\(\)"),
    ("T of an input", lambda s: s.kinetic_energy(s.input("u") * rates(s)[0] ** 2), ModelError,
     r"kinetic energy 'T': T may depend on .* not on u"),
    ("T unknown symbol", lambda s: s.kinetic_energy("qq*DA_x**2"), ModelError,
     r"kinetic energy 'T': unknown symbol\(s\) qq"),
    ("T of a sympy function's name", lambda s: s.kinetic_energy("zeta*DA_x**2"), ModelError,
     r"kinetic energy 'T': cannot read 'zeta\*DA_x\*\*2' as an expression .*; zeta is a sympy function, not "
     r"a declared symbol"),
    ("T a vector", lambda s: s.kinetic_energy(rates(s)), ModelError,
     r"kinetic energy 'T' must be a scalar, got a 2 x 1 matrix"),
    ("T not quadratic", lambda s: (s.kinetic_energy(rates(s)[0] ** 4), derive(s)), ModelError,
     r"cat: the kinetic energy is not quadratic in the velocities: its mass matrix d2T/dy'dy' depends on "
     r"DA_x"),
    ("R negative definite", lambda s: s.dissipation(-(rates(s)[0] ** 2), "R_bad"), ModelError,
     r"dissipation function 'R_bad' is negative definite .* gives R < 0 .*Rayleigh function"),
    ("R without velocity", lambda s: s.dissipation(A(s)[0] ** 2), ModelError, r"'R': .* depends on no "
                                                                              r"velocity"),
    ("V with a velocity", lambda s: s.potential_energy(rates(s)[0] ** 2), ModelError,
     r"potential energy 'V'.*velocity-dependent potentials belong in lagrangian\(\)"),
    ("gravity of a coordinate", lambda s: s.gravity([A(s)[0], 0]), ModelError,
     r"gravity: gravity may depend on constants and time only, not on A_x"),
    ("gravity 3 components in 2D", lambda s: s.gravity([0, 0, -9.81]), ModelError,
     r"gravity: a point or vector of 2 components is needed, got 3"),
    # elements: masses, lengths, inertias
    ("point mass negative", lambda s: s.point_mass("pm", A(s), -1.0), ModelError,
     r"point mass 'pm': the mass must be positive, got -1"),
    ("point mass zero", lambda s: s.point_mass("pm", A(s), 0), ModelError,
     r"point mass 'pm': the mass must be positive, got 0 .*leave it out, a massless link is a distance\(\)"),
    ("point mass default negative", lambda s: s.point_mass("pm", A(s), s.constant("mm", -2.0)), ModelError,
     r"point mass 'pm': the mass must be positive, got mm = -2 \(its value at the start\)"),
    ("point mass nan", lambda s: s.point_mass("pm", A(s), math.nan), ModelError,
     r"point mass 'pm' mass: nan is not a finite real number"),
    ("point mass complex", lambda s: s.point_mass("pm", A(s), 1j), ModelError, r"'pm' mass: 1j is not a "
                                                                               r"finite real"),
    ("point mass of a coordinate", lambda s: s.point_mass("pm", A(s), A(s)[0]), ModelError,
     r"point mass 'pm' mass: a property may depend on constants and time only, not on A_x"),
    ("point mass of time", lambda s: s.point_mass("pm", A(s), 1 + s.t), ModelError,
     r"point mass 'pm': the mass may depend on constants only, not on time"),
    ("rod length zero", lambda s: s.rod("r", A(s), [0, 0], 1.0, length=0), ModelError,
     r"rod 'r': the length must be positive, got 0"),
    ("rod length nan", lambda s: s.rod("r", A(s), [0, 0], 1.0, length=math.nan), ModelError,
     r"rod 'r' length: nan is not a finite real number"),
    ("rod same ends", lambda s: s.rod("r", A(s), A(s), 1.0), ModelError, r"rod 'r': both ends are the same "
                                                                         r"point"),
    ("rod inertia without length", lambda s: s.rod("r", A(s), [0, 0], 1.0, inertia=0.1), ModelError,
     r"rod 'r': a rod with an inertia needs its length"),
    ("rod negative inertia", lambda s: s.rod("r", A(s), [0, 0], 1.0, length=1, inertia=-0.1), ModelError,
     r"rod 'r': the moment of inertia must be >= 0, got -0\.1"),
    ("distance negative", lambda s: s.distance("d", A(s), [0, 0], -1), ModelError,
     r"distance constraint 'd': the length must be positive, got -1"),
    ("distance zero", lambda s: s.distance("d", A(s), [0, 0], 0), ModelError,
     r"distance constraint 'd': the length must be positive, got 0 .*without a gradient"),
    ("distance default negative", lambda s: s.distance("d", A(s), [0, 0], s.constant("L", -1.0)), ModelError,
     r"distance constraint 'd': the length must be positive, got L = -1 \(its value at the start\)"),
    ("distance default zero (expression)", lambda s: s.distance("d", A(s), [0, 0], 2 * s.constant("L", 0.0)),
     ModelError, r"distance constraint 'd': the length must be positive, got 2\*L = 0"),
    ("distance same ends", lambda s: s.distance("d", A(s), A(s), 1), ModelError,
     r"distance constraint 'd': both ends are the same point"),
    ("distance of a coordinate", lambda s: s.distance("d", A(s), [0, 0], A(s)[0]), ModelError,
     r"distance constraint 'd' length: a property may depend on constants and time only, not on A_x"),
    ("distance of fixed points", lambda s: s.distance("d", [0, 0], [1, 0], 1), ModelError,
     r"constraint 'd': 0 does not depend on any coordinate"),
    ("perpendicular 3 components", lambda s: s.perpendicular("p", A(s), [0, 0, 1]), ModelError,
     r"perpendicularity constraint 'p': a point or vector of 2 components is needed, got 3"),
    ("spring negative damping", lambda s: s.spring_damper("sd", A(s), [0, 0], stiffness=1, damping=-1),
     ModelError, r"spring-damper 'sd': the damping must be >= 0, got -1 \(a negative damping feeds energy "
                 r"in"),
    ("spring negative rest length",
     lambda s: s.spring_damper("sd", A(s), [0, 0], stiffness=1, rest_length=-1),
     ModelError, r"spring-damper 'sd': the rest length must be >= 0, got -1"),
    ("spring nan stiffness", lambda s: s.spring_damper("sd", A(s), [0, 0], stiffness=math.nan), ModelError,
     r"spring-damper 'sd' stiffness: nan is not a finite real number"),
    ("spring same ends", lambda s: s.spring_damper("sd", A(s), A(s), stiffness=1), ModelError,
     r"spring-damper 'sd': both ends are the same point"),
    ("force vector scalar", lambda s: s.point_force("f", A(s), 1.0), ModelError,
     r"force 'f': a force vector of 2 components is needed"),
    ("force unknown symbol", lambda s: s.point_force("f", A(s), ["qq", 0]), ModelError,
     r"force 'f': unknown symbol\(s\) qq"),
    ("force of a sympy function's name", lambda s: s.point_force("f", A(s), ["gamma", 0]), ModelError,
     r"force 'f': 'gamma' is not a scalar expression; gamma is a sympy function"),
    # names (item 9: force elements and bodies in separate namespaces, duplicates within one)
    ("two springs of one name", lambda s: (s.spring_damper("sd", A(s), [0, 0], stiffness=1),
                                           s.spring_damper("sd", A(s), [0, 1], stiffness=1)),
     ModelError, r"duplicate name 'sd': already used by spring-damper 'sd'"),
    ("force named like a spring", lambda s: (s.spring_damper("sd", A(s), [0, 0], stiffness=1),
                                             s.point_force("sd", A(s), [1, 0])),
     ModelError, r"duplicate name 'sd': already used by spring-damper 'sd'"),
    ("element named like a point", lambda s: s.point_mass("A", A(s), 1.0), ModelError,
     r"duplicate name 'A': already used by point 'A'"),
    ("element named like an element", lambda s: s.rod("bob", A(s), [0, 0], 1.0), ModelError,
     r"duplicate name 'bob': already used by point mass 'bob'"),
    # planar rigid bodies
    ("rigid body 3 PVs in 2D", lambda s: s.rigid_body("b", 1.0, points=[(A(s), [0, 0]), ([0, 0], [1, 0]),
                                                                        ([1, 1], [1, 1])]),
     ModelError, r"rigid body 'b': a 2D rigid element needs 2 basic points and vectors"),
    ("rigid body degenerate", lambda s: s.rigid_body("b", 1.0, points=[(A(s), [1, 1]), ([0, 0], [1, 1])]),
     ModelError, r"rigid body 'b': the basic points and vectors 'A' \(local \(1, 1\)\), point 1 \(local "
                 r"\(1, 1\)\) are degenerate"),
    ("rigid body mass zero", lambda s: s.rigid_body("b", 0.0, points=[(A(s), [0, 0]), ([0, 0], [1, 0])]),
     ModelError, r"rigid body 'b': mass must be positive, got 0\.0"),
    ("rigid body negative polar moment", lambda s: planar_body(s, inertia=-1), ModelError,
     r"rigid body 'b': the polar moment of inertia must be >= 0, got -1"),
    ("rigid body without points", lambda s: s.rigid_body("b", 1.0, points=[]), ModelError,
     r"rigid body 'b': needs at least one point"),
    ("rigid body point not a pair", lambda s: s.rigid_body("b", 1.0, points=[A(s), [0, 0]]), ModelError,
     r"rigid body 'b': each point is a pair \(global point, local coordinates\)"),
    ("rigid body points a dict", lambda s: s.rigid_body("b", 1.0, points={"A": A(s)}), ModelError,
     r"rigid body 'b': points and vectors are lists of \(global, local\) pairs"),
    ("rigid body local of a coordinate",
     lambda s: s.rigid_body("b", 1.0, points=[(A(s), A(s)), ([0, 0], [1, 0])]),
     ModelError, r"rigid body 'b' local coordinates of point 0: local coordinates are constants, not on A_x, "
                 r"A_y"),
    ("rigid body rigid='no'", lambda s: planar_body(s, rigid="no"), ModelError,
     r"rigid body 'b': rigid must be True or False, got 'no'"),
    # body points
    ("body point of nothing", lambda s: s.body_point("nope", [0, 0]), ModelError,
     r"body_point\(\): 'nope' is not a rigid body; rigid bodies: none"),
    ("body point of a point mass", lambda s: s.body_point("bob", [0, 0]), ModelError,
     r"body_point\(\): 'bob' is not a rigid body \('bob' is point mass 'bob', which has no local frame\)"),
    ("body point short", lambda s: (planar_body(s), s.body_point("b", [0])), ModelError,
     r"body_point\('b'\) local position: a point or vector of 2 components is needed, got 1"),
    ("body point of a coordinate", lambda s: (planar_body(s), s.body_point("b", A(s))), ModelError,
     r"body_point\('b'\) local position: local coordinates are constants, not on A_x, A_y"),
    ("body vector of time", lambda s: (planar_body(s), s.body_vector("b", [s.t, 0])), ModelError,
     r"body_vector\('b'\) local components: local coordinates are constants, not functions of time"),
    # holonomic constraints
    ("constraint sign", lambda s: s.constraint("c", sp.sign(A(s)[0]) - 1), ModelError,
     r"constraint 'c': sign\(A_x\) is not differentiable enough: its derivative by A_x is 2\*DiracDelta"),
    ("constraint Abs", lambda s: s.constraint("c", sp.Abs(A(s)[0]) - 1), ModelError,
     r"constraint 'c': Abs\(A_x\) is not differentiable enough: its second derivative by A_x"),
    ("constraint a vector", lambda s: s.constraint("c", A(s)), ModelError,
     r"constraint 'c' must be a scalar, got a 2 x 1 matrix"),
    ("constraint an equation", lambda s: s.constraint("c", sp.Eq(A(s)[0], 1)), ModelError,
     r"constraint 'c': Eq\(A_x, 1\) is not a scalar expression"),
    ("constraint with a rate", lambda s: s.constraint("c", rates(s)[0] - A(s)[1]), ModelError,
     r"constraint 'c' is velocity-dependent \(it contains DA_x\).*nonholonomic_constraint\(\)"),
    ("rates of a constant", lambda s: s.rates(s.constants_["m"].symbol), ModelError,
     r"rates\(\): m is not a coordinate of 'cat' \(coordinates: A_x, A_y\)"),
    ("rates of a rate", lambda s: s.rates(rates(s)[0]), ModelError, r"rates\(\): DA_x is not a coordinate of "
                                                                    r"'cat'"),
    # frame commands
    ("body()", lambda s: s.body("B", mass=1), ModelError,
     r"body\(\) is not available in a LagrangianSystem .*rigid_body\(\), rod\(\) or point_mass\(\)"),
    ("frame_output()", lambda s: s.frame_output("A"), ModelError, r"frame_output\(\) is not "
                                                                  r"available.*point_output"),
]


SPATIAL_CASES = [
    # the three-point element (item 9)
    ("collinear basic points", lambda s: s.rigid_body("c", 1.0, points=[(s.pvs["O"], [0, 0, 0]),
                                                                        (s.pvs["A"], [1, 0, 0]),
                                                                        (s.pvs["B"], [2, 0, 0])]),
     ModelError, r"rigid body 'c': its basic points and vectors 'O' \(local \(0, 0, 0\)\), 'A' \(local \(1, "
                 r"0, "
                 r"0\)\), 'B' \(local \(2, 0, 0\)\) are collinear: three basic points .* must span a plane"),
    ("point and parallel vectors", lambda s: s.rigid_body("c", 1.0, points=[(s.pvs["O"], [0, 0, 0])],
                                                          vectors=[(s.pvs["A"],
                                                           [1, 0, 0]), (s.pvs["B"], [2, 0, 0])]),
     ModelError, r"rigid body 'c': its basic points and vectors 'O' .* are collinear"),
    ("two PVs in 3D",
     lambda s: s.rigid_body("c", 1.0, points=[(s.pvs["O"], [0, 0, 0]), (s.pvs["A"], [1, 0, 0])]),
     ModelError, r"rigid body 'c': a 3D rigid element needs 3 or 4 basic points and vectors .* got 2"),
    ("five PVs in 3D",
     lambda s: carrier(s, vectors=[([1, 0, 0], [1, 0, 0]), ([0, 0, 1], [0, 0, 1])]), ModelError,
     r"rigid body 'c': a 3D rigid element needs 3 or 4 basic points and vectors .* got 5"),
    ("inertia violates the triangle inequality", lambda s: carrier(s, inertia=[1, 1, 3]), ModelError,
     r"rigid body 'c': principal moments 1, 1, 3 violate the triangle inequality"),
    ("inertia not positive semi-definite", lambda s: carrier(s, inertia=[1, 1, -1]), ModelError,
     r"rigid body 'c': inertia tensor is not positive semi-definite"),
    ("inertia of a coordinate", lambda s: carrier(s, inertia=[s.pvs["A"][0], 1, 1]), ModelError,
     r"rigid body 'c' inertia: a property may depend on constants and time only, not on A_x"),
    ("inertia not a matrix", lambda s: carrier(s, inertia="big"), ModelError,
     r"rigid body 'c' inertia: cannot read 'big' as a 3x3 matrix"),
    ("cg with 2 components", lambda s: carrier(s, cg=[0, 0]), ModelError,
     r"rigid body 'c' cg: a point or vector of 3 components is needed, got 2"),
    ("3D prismatic without normals",
     lambda s: s.prismatic("pr", s.pvs["O"], [1, 0, 0], s.pvs["A"], normals=[[0, 1, 0]]), ModelError,
     r"prismatic joint 'pr': a 3D prismatic joint needs normals=\(n1, n2\)"),
]


def _snapshot(s):
    """What a refused declaration must leave unchanged."""
    return ({k: dict(v) for k, v in s._names.items()}, [h.name for h in s.holonomic],
            [t.name for t in s.energy_terms], list(s.coordinates_), list(s.elements), len(s.masses))


@pytest.mark.parametrize("make, exc, pattern", [c[1:] for c in BUILD_CASES], ids=[c[0] for c in BUILD_CASES])
def test_building(make, exc, pattern):
    with pytest.raises(exc, match=pattern):
        make(planar())


#: refused declarations that are a single call on planar(): they must leave no trace
NO_TRACE = ["point nan", "point 3 components in 2D", "point twice", "coordinate over a point's",
            "T negative definite", "T indefinite", "R negative definite", "point mass negative",
            "rod length zero", "rod negative inertia", "distance negative", "distance same ends",
            "spring negative damping", "rigid body degenerate", "rigid body negative polar moment",
            "rigid body rigid='no'", "constraint sign", "constraint with a rate", "element named like a "
                                                                                  "point"]


@pytest.mark.parametrize("label", NO_TRACE)
def test_a_refused_declaration_changes_nothing(label):
    make = next(c[1] for c in BUILD_CASES if c[0] == label)
    s = planar()
    before = _snapshot(s)
    with pytest.raises(mbsfmu.MbsError):
        make(s)
    assert _snapshot(s) == before


@pytest.mark.parametrize("make, exc, pattern", [c[1:] for c in SPATIAL_CASES],
                         ids=[c[0] for c in SPATIAL_CASES])
def test_spatial_elements(make, exc, pattern):
    s = spatial()
    before = _snapshot(s)
    with pytest.raises(exc, match=pattern):
        make(s)
    assert _snapshot(s) == before


# ---------------------------------------------------------------- nonholonomic constraints
NOT_LINEAR = r"nonholonomic constraint 'nh': .* is not linear in the rates: "
NONHOLONOMIC_CASES = [
    ("square", "Dx**2 + Dy", NOT_LINEAR + r"its term Dx\*\*2 is of degree 2 in the rate Dx"),
    ("1e-10 square", "1e-10*Dx**2 + Dy", NOT_LINEAR + r"its term 1\.0e-10\*Dx\*\*2 is of degree 2 in the "
                                                      r"rate Dx"),
    ("product", "Dx*Dy", NOT_LINEAR + r"its term Dx\*Dy is a product of the rates Dx \* Dy"),
    ("cube times rate", "Dx**3*Dy", NOT_LINEAR + r"its term Dx\*\*3\*Dy is a product of the rates Dx\^3 \* "
                                                 r"Dy"),
    ("Abs", "Abs(Dx) + Dy", NOT_LINEAR + r"the rate Dx appears inside Abs\(Dx\)"),
    ("sign", "sign(Dx)*Dx + Dy", NOT_LINEAR + r"the rate Dx appears inside sign\(Dx\)"),
    ("Heaviside", "Heaviside(Dy) + Dx", NOT_LINEAR + r"the rate Dy appears inside Heaviside\(Dy\)"),
    ("Max", "Max(Dx, 0) + Dy", NOT_LINEAR + r"the rate Dx appears inside Max\(0, Dx\)"),
    ("Min", "Min(Dx, Dy)", NOT_LINEAR + r"the rates Dx, Dy appear inside Min\(Dx, Dy\)"),
    ("sqrt", "sqrt(Dx**2 + Dy**2)", NOT_LINEAR + r"the rates Dx, Dy appear inside sqrt"),
    ("sin", "sin(Dx)", NOT_LINEAR + r"the rate Dx appears inside sin\(Dx\)"),
    ("exp", "exp(Dy) - 1", NOT_LINEAR + r"the rate Dy appears inside exp\(Dy\)"),
    ("denominator", "Dx/(1 + Dy)", NOT_LINEAR + r"the rate Dy appears inside the denominator Dy \+ 1"),
    ("piecewise quadratic branch", "Piecewise((Dx**2, x > 0), (Dx, True)) + Dy",
     NOT_LINEAR + r"its term Dx\*\*2 is of degree 2 in the rate Dx"),
    ("piecewise on a rate", "Piecewise((Dx, Dy > 0), (-Dx, True))", NOT_LINEAR + r"the rates Dx, Dy appear "
                                                                    r"inside Piecewise"),
    ("no rate", "x - y", r"'nh': x - y contains no rate D<coordinate>; .*use constraint\(\)"),
    ("acceleration", "D2x + Dy", r"'nh': contains the acceleration\(s\) D2x"),
    ("unknown symbol", "Dx + qq", r"'nh': unknown symbol\(s\) qq"),
    ("a sympy function's name", "Dx + zeta", r"'nh': cannot read 'Dx \+ zeta' as an expression .*zeta is a "
                                              r"sympy function"),
    ("jump in a coefficient", "sign(x)*Dx + Dy", r"'nh': sign\(x\) is not differentiable enough: its "
                                                 r"derivative "
                                                 r"by x is 2\*DiracDelta\(x\)"),
    ("step in time", "Heaviside(t - 1)*Dx + Dy", r"'nh': Heaviside\(t - 1\) is not differentiable enough: "
                                                 r"its "
                                                 r"derivative by t is DiracDelta\(t - 1\)"),
    ("floor", "floor(x)*Dx + Dy", r"'nh': floor\(x\) is not differentiable enough"),
]


@pytest.mark.parametrize("cls", [System, LagrangianSystem])
@pytest.mark.parametrize("expr, pattern", [c[1:] for c in NONHOLONOMIC_CASES],
                         ids=[c[0] for c in NONHOLONOMIC_CASES])
def test_nonholonomic(cls, expr, pattern):
    s = free_xy(cls)
    with pytest.raises(ModelError, match=pattern):
        s.nonholonomic_constraint("nh", expr)
    assert not s.nonholonomic and "nh" not in s._names["constraint"]


NONHOLONOMIC_SHAPES = [
    ("a list", lambda s: s.nonholonomic_constraint("nh", [s.yd[0], 1]), r"'nh' must be a scalar, got a list "
                                                                        r"of 2"),
    ("an equation", lambda s: s.nonholonomic_constraint("nh", sp.Eq(s.yd[0], 1)),
     r"'nh': Eq\(Dx, 1\) is not a scalar expression"),
    ("an input", lambda s: s.nonholonomic_constraint("nh", s.input("u") * s.yd[0]),
     r"'nh': may not depend on the input\(s\) \['u'\]"),
]


@pytest.mark.parametrize("make, pattern", [c[1:] for c in NONHOLONOMIC_SHAPES],
                         ids=[c[0] for c in NONHOLONOMIC_SHAPES])
def test_nonholonomic_shapes(make, pattern):
    with pytest.raises(ModelError, match=pattern):
        make(free_xy(LagrangianSystem))


# ---------------------------------------------------------------- runs of natural-coordinate models
def pendulum():
    s = LagrangianSystem("pend", dim=2)
    m, l, g = s.constants(m=1.0, l=1.0, g=9.81)
    A = s.point("A", (1.0, 0.0))
    s.gravity([0, -g])
    s.point_mass("bob", A, m)
    s.distance("string", A, [0, 0], l)
    return s


def crank():
    """A crank given only by its moment of inertia about O (its radial motion moves no mass)."""
    s = LagrangianSystem("crank", dim=2)
    J, r = s.constants(J=0.1, r=0.5)
    P = s.point("P", (0.5, 0.0), (0.0, 1.0))
    s.kinetic_energy(J * (cross2(P, s.rates(P)) / r**2) ** 2 / 2, "crank")
    s.distance("radius", [0, 0], P, r)
    return s


def redundant_pair():
    s = LagrangianSystem("pair", dim=2)
    ell, = s.constants(ell=1.0)
    A = s.point("A", (0.0, 0.0))
    B = s.point("B", (1.0, 0.0), (0.0, 1.0))
    s.distance("AB", A, B, ell)
    s.rigid_body("bar", 1.0, points=[(A, [0, 0]), (B, [1, 0])], cg=[0.5, 0], inertia=0.1)
    return s


def unmoved():
    s = pendulum()
    s.point("Z", (0.0, 2.0))
    return s


RUN_CASES = [
    ("negative mass parameter", lambda: mbsfmu.simulate(pendulum(), 0.1, backend="numpy", params={"m": -1.0}),
     ParameterError, r"body 'bob': mass must be positive, got -1\.0 \(m = -1\.0\)"),
    ("negative mass parameter, engine",
     lambda: mbsfmu.simulate(pendulum(), 0.1, backend="c", params={"m": -1.0}),
     ParameterError, r"body 'bob': mass must be positive, got -1\.0 \(m = -1\.0\)"),
    ("zero length parameter", lambda: mbsfmu.simulate(pendulum(), 0.1, backend="numpy", params={"l": 0.0}),
     ParameterError, r"parameter 'l' = 0 is not allowed: with l = 0 the length of distance constraint "
                     r"'string' is 0"),
    ("dae on a massless coordinate", lambda: mbsfmu.simulate(crank(), 0.1, formulation="dae"), ParameterError,
     r"crank: formulation 'dae' needs a regular mass matrix \(it factors M itself\), but the mass matrix is "
     r"singular \(coordinate 'P_x' would move no mass\); choose one of qr, svd, partition"),
    ("baumgarte on a massless coordinate", lambda: mbsfmu.simulate(crank(), 0.1, formulation="baumgarte",
                                                                   backend="numpy"),
     ParameterError, r"formulation 'baumgarte' needs a regular mass matrix"),
    ("projection on a massless coordinate", lambda: mbsfmu.simulate(crank(), 0.1, formulation="projection"),
     ParameterError, r"formulation 'projection' needs a regular mass matrix"),
    ("dae FMU of a massless coordinate", lambda: _native_fmu(crank(), "dae"), ParameterError,
     r"formulation 'dae' needs a regular mass matrix"),
    ("a coordinate nothing moves or fixes", lambda: derive(unmoved()), SingularMassMatrixError,
     r"pend: the mass matrix is singular: the velocity of coordinate\(s\) 'Z_x', 'Z_y' appears in no term of "
     r"the kinetic energy T and in no constraint"),
    ("redundant element constraint", redundant_pair, RedundantConstraintWarning,
     r"pair: the constraint 'bar_e1e1' that rigid body 'bar' adds is redundant at the initial configuration: "
     r"its gradient is a combination of those of 'AB'"),
    ("redundant element constraint under projection",
     lambda: mbsfmu.simulate(_quiet(redundant_pair), 0.1, backend="numpy", formulation="projection"),
     ConstraintError, r"redundant"),
]


def _native_fmu(system, formulation):
    import tempfile

    from mbsfmu.fmu.native import build_native_fmu

    with tempfile.TemporaryDirectory() as d:
        return build_native_fmu(system, f"{d}/x.fmu", formulation=formulation)


def _quiet(make):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RedundantConstraintWarning)
        return make()


@pytest.mark.parametrize("call, exc, pattern", [c[1:] for c in RUN_CASES], ids=[c[0] for c in RUN_CASES])
def test_runs(call, exc, pattern):
    if issubclass(exc, Warning):
        with pytest.warns(exc, match=pattern):
            call()
        return
    with pytest.raises(exc, match=pattern):
        call()


def test_catalogue_size():
    """The number of bad inputs catalogued here (reported in the issue note): nonholonomic
    cases count once per front end."""
    n = (len(BUILD_CASES) + len(SPATIAL_CASES) + 2 * len(NONHOLONOMIC_CASES) + len(NONHOLONOMIC_SHAPES)
         + len(RUN_CASES))
    print(f"natural-coordinate catalogue: {n} bad inputs")
    assert n >= 150

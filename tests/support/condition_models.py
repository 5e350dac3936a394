"""Small models with a named initial condition, shared by the tests of issue 25 (named initial
conditions set per run)."""

from mbsfmu import System


def ring():
    """A point mass on the circle x^2 + y^2 = 1 in a vertical plane, its start fixed by the
    named initial condition 'height' y = 0.5 (no rate declared)."""
    s = System("ring")
    x, y = s.coordinates("x", "y")
    s.gravity([0, -9.81, 0])
    s.body("P", rel_pos=[x, y, 0], mass=1.0, inertia=[0, 0, 0])
    s.constraint("circle", x**2 + y**2 - 1)
    s.initial_condition("height", y, 0.5)
    s.initial_guess(x=1.0, y=0.0)
    return s


model = ring  # as a model file: `from condition_models import model`

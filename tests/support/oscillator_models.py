"""The linear oscillator of the sensitivity, gradient, optimization and fit tests (issue 25):
a mass m = 2 on a spring k = 8 along x (omega = 2), x(0) = 0.3, with the spring's energy
k x^2 / 2 as the output 'energy_spring'.  Its solution, sensitivities, integrals and optima have
closed forms."""

from mbsfmu import System

M, K = 2.0, 8.0


def oscillator(name: str = "oscillator"):
    s = System(name, "mass on a linear spring")
    m, k = s.constants(m=M, k=K)
    (x,) = s.coordinates("x")
    s.body("mass", ref="ISYS", rel_pos=[x, 0, 0], mass=m, inertia=[0, 0, 0])
    s.generalized_force("spring", "x", -k * x)
    s.initial(x=0.3)
    s.output("energy_spring", k * x ** 2 / 2, "the spring's energy")
    return s

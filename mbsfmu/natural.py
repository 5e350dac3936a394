"""Natural-coordinate helpers for writing energies, constraints and outputs of a
:class:`~mbsfmu.LagrangianSystem` by hand (seed 003 ch. 2), in one public place::

    from mbsfmu.natural import dot, perp, cross2
    A = s.point("A", initial=(1.0, 0.0))
    w = cross2(A, s.rates(A)) / l**2        # the angle rate of O A (a crank about O)
    s.kinetic_energy(J * w**2 / 2, "crank")

* ``dot(a, b)``: a . b of two column vectors (lists or sympy matrices);
* ``cross(a, b)``: a x b of two 3D vectors;
* ``perp(a)``: a planar vector turned by +90 degrees, (-a_y, a_x);
* ``cross2(a, b)``: the scalar a_x b_y - a_y b_x of two planar vectors;
* ``thin_rod_kinetic_energy(m, A', B')``: m/6 (A'^2 + A'.B' + B'^2) of a thin uniform rod.

The rates (velocity symbols ``D<coordinate>``) of a point's coordinates are ``s.rates(A)``
(:meth:`~mbsfmu.model.System.rates`, also for one coordinate), the time derivative of any
point or expression ``s.velocity(A)``; points fixed in a rigid element are
``s.body_point(element, local)`` and its axes ``s.body_vector(element, local)``.
"""

from .model.natural_coordinates import cross, cross2, dot, perp, thin_rod_kinetic_energy

__all__ = ["dot", "cross", "perp", "cross2", "thin_rod_kinetic_energy"]

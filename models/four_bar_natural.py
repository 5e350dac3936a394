"""The N four-bar mechanism of seed 003 sec. 5.1 in natural coordinates (MBS benchmark A02).

A planar chain of N four-bar loops made of 2N + 1 thin uniform rods of length l and mass m:
N + 1 cranks O_j A_j pinned to the ground at O_j = (j l, 0) and N couplers A_(i-1) A_i; two
neighbouring loops share a crank.  The coordinates are the moving points A_0 ... A_N (seed 003:
q = (A_0x, A_0y, ..., A_Nx, A_Ny), 2N + 2 coordinates), the constraints the 2N + 1 rod lengths
(DoF 1), the energies the seed's thin-rod T and V (sec. 2.4): each crank m/6 |A_j'|^2, each
coupler m/6 (A_(i-1)'^2 + A_(i-1)'.A_i' + A_i'^2), weights at the rod midpoints.

Data from the seed: N = 2 (default), m = 1 kg, l = 1 m, v0 = 1 m/s, t = 0 ... 10 s.  The seed's
initial state is only in its Fig. 5.1 ("points A_i have a starting velocity of v0 in the +X
direction"); we take the benchmark's (the digest marks it [EXTERNAL], not from the thesis):
vertical cranks, A_j = (j l, l), all A_j moving at (v0, 0), and gravity g = 9.81 m/s^2 along -y
(the thesis states no g).  This start is consistent (no value moves in the initialization).
The mechanism is a parallelogram chain: every crank keeps the same angle phi with
J phi'' = -K cos phi (J = (N + 1) m l^2 / 3 + N m l^2, K = (3N + 1) m g l / 2), passing the
singular horizontal position phi = 0 (all rods on one line, rank of C drops) twice per turn.

Running it: the defaults ('qr', RKSTAB) pass the flat positions at rtol 1e-10 for N = 2 and
N = 10 within 7e-8 of the 1-DOF solution over 10 s (tests/simulation/test_singular_positions.py); the
engine's DOP853 stays within 2e-8 (tests/zoo/test_natural_coordinates.py).
"""

from mbsfmu import LagrangianSystem


def model(N: int = 2, v0: float = 1.0) -> LagrangianSystem:
    if int(N) != N or N < 1:
        raise ValueError(f"N must be a positive integer, got {N!r}")
    N = int(N)
    s = LagrangianSystem("four_bar_natural", f"{N} four-bar loops in natural coordinates (seed 003 sec. 5.1)",
                         dim=2)
    m, l, g = s.constants(m=1.0, l=1.0, g=9.81)
    s.gravity([0, -g])
    A = [s.point(f"A{j}", initial=(float(j), 1.0), velocity=(v0, 0.0)) for j in range(N + 1)]
    for j in range(N + 1):
        s.rod(f"crank{j}", [j * l, 0], A[j], m, length=l)
    for i in range(1, N + 1):
        s.rod(f"coupler{i}", A[i - 1], A[i], m, length=l)
    return s

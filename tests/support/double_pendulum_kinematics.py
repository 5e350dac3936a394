"""Closed-form kinematics of models/double_pendulum.py (seed 002 §4.2), the oracle of the
animation tests."""

import numpy as np


def closed_form(alpha, phi, L1=1.0, L2=1.0):
    """Frame origins of models/double_pendulum.py: P1 rotates by alpha about x at ISYS, its cg
    L1 down along its -z; P2 hinged there rotates by phi relative to P1, its cg L2 further.
    Returns (samples, 5, 3) for the frames ISYS, P1, P1_cg, P2, P2_cg."""
    e1 = np.stack([np.zeros_like(alpha), np.sin(alpha), -np.cos(alpha)], axis=-1)
    e2 = np.stack([np.zeros_like(alpha), np.sin(alpha + phi), -np.cos(alpha + phi)], axis=-1)
    zero = np.zeros_like(e1)
    elbow = L1 * e1
    return np.stack([zero, zero, elbow, elbow, elbow + L2 * e2], axis=1)

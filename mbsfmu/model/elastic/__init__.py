"""Elastic bodies: modal data (SID quantities) of a flexible body and where it comes from.

``modal_data`` (the module) holds the data and its file format, and reduces a finite-element model (mass and
stiffness matrices, node coordinates, mode shapes) to it.  ``fe_beam`` builds the finite-element
model of a straight beam, ``fe_modes`` its modes under boundary conditions (optionally a
Craig-Bampton reduction) and the modal data, ``geometric_stiffness`` the stiffening under the
rigid motion's inertia loads, ``beam_body`` all of it in one call, ``fe_import`` a user's own
FE model from files.
"""

from .beam_body import beam_modal_data
from .fe_beam import BeamModel, beam, circular_section, rectangular_section
from .fe_import import import_modal_data
from .fe_modes import craig_bampton, eigenmodes, fe_modal_data
from .geometric_stiffness import beam_geometric_stiffness, inertia_loads, static_deflections
from .modal_data import LOAD_CASES, ModalData, Node, Taylor, from_fe, load, save

__all__ = ["ModalData", "Node", "Taylor", "from_fe", "load", "save", "LOAD_CASES",
           "BeamModel", "beam", "circular_section", "rectangular_section",
           "craig_bampton", "eigenmodes", "fe_modal_data",
           "beam_geometric_stiffness", "inertia_loads", "static_deflections", "beam_modal_data",
           "import_modal_data"]

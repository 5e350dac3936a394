"""Elastic bodies: modal data (SID quantities) of a flexible body and where it comes from.

``modal_data`` holds the data and its file format, and reduces a finite-element model (mass and
stiffness matrices, node coordinates, mode shapes) to it.
"""

from .modal_data import LOAD_CASES, ModalData, Node, Taylor, from_fe, load, save

__all__ = ["ModalData", "Node", "Taylor", "from_fe", "load", "save", "LOAD_CASES"]

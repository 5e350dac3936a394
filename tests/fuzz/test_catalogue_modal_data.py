"""Catalogue of bad inputs of the modal-data surfaces (issue 23): mbsfmu-sid files (``load``),
``ModalData`` built in Python, ``beam_modal_data``, ``import_modal_data``, ``from_fe``, and a
flexible body's factors at run time.

Each case is one bad input; the test asserts the exception type and that the message names the
culprit (the quantity with its expected and actual shape, the node, the key, the entry, the
argument and its value) by a regular expression.
"""

import copy
import dataclasses
import functools
import json
import math
import pathlib

import numpy as np
import pytest

import mbsfmu
from mbsfmu import ModelError, ParameterError, System, rot_x
from mbsfmu.model.elastic import beam, beam_modal_data, from_fe, import_modal_data, load, save

BEAM = dict(E=2.1e11, rho=7850.0, A=1e-4, Iy=8e-10, Iz=8e-10, n_elements=4, export=3, modes=2,
            axis=(0.0, 0.0, -1.0))


@functools.cache
def good():
    """A clamped beam, 4 elements, nodes 1, 3, 5 exported, 2 modes (n = 2)."""
    return beam_modal_data(1.0, **BEAM)


@functools.cache
def good_doc() -> dict:
    return json.loads(json.dumps(_doc_of(good())))


def _doc_of(data):
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        return json.loads(save(data, pathlib.Path(d) / "b.json").read_text())


@functools.cache
def fe():
    return beam(1.0, 4, E=2.1e11, rho=7850.0, A=1e-4, Iy=8e-10, Iz=8e-10)


OUT = {}


@pytest.fixture(autouse=True)
def _output_folder(tmp_path):
    OUT["folder"] = tmp_path


def sid(change):
    """load() of the good file changed by ``change(doc)``."""
    def call():
        doc = copy.deepcopy(good_doc())
        change(doc)
        path = OUT["folder"] / "bad.json"
        path.write_text(json.dumps(doc))
        return load(path)
    return call


def setting(key, value):
    return sid(lambda d: d.__setitem__(key, value))


def term(key, t, value):
    return sid(lambda d: d[key].__setitem__(t, value))


def node_entry(k, key, value):
    return sid(lambda d: d["nodes"][k].__setitem__(key, value))


def raw(text: bytes):
    def call():
        path = OUT["folder"] / "raw.json"
        path.write_bytes(text)
        return load(path)
    return call


FILE = r"modal data file '.*bad.json': "

FILE_CASES = [
    # the quantity of the wrong shape is named, with the expected and the actual shape
    ("Me 3x3 for 2 modes", term("Me", "M0", np.eye(3).tolist()), ModelError,
     FILE + r"modal data: Me has the shape \(3, 3\), expected \(2, 2\) \(n = 2 modes, the count of Ke, De"),
    ("Ke 1x1", term("Ke", "M0", [[1.0]]), ModelError,
     FILE + r"modal data: Ke has the shape \(1, 1\), expected \(2, 2\)"),
    ("De 3x3", term("De", "M0", np.eye(3).tolist()), ModelError,
     FILE + r"modal data: De has the shape \(3, 3\), expected \(2, 2\)"),
    ("Me a number", term("Me", "M0", 1.0), ModelError,
     FILE + r"modal data: Me has the shape \(\), expected \(2, 2\)"),
    ("Ct 3 rows", term("Ct", "M0", np.zeros((3, 3)).tolist()), ModelError,
     FILE + r"modal data: Ct.M0 has the shape \(3, 3\), expected \(2, 3\)"),
    ("Cr transposed", term("Cr", "M0", np.zeros((3, 2)).tolist()), ModelError,
     FILE + r"modal data: Cr.M0 has the shape \(3, 2\), expected \(2, 3\)"),
    ("mdCM.M0 2-vector", term("mdCM", "M0", [0.0, 0.0]), ModelError,
     FILE + r"modal data: mdCM.M0 has the shape \(2,\), expected \(3,\)"),
    ("J.M0 a vector", term("J", "M0", [1, 2, 3]), ModelError,
     FILE + r"modal data: J.M0 has the shape \(3,\), expected \(3, 3\)"),
    ("J.M1 a vector", term("J", "M1", [1, 2, 3]), ModelError,
     FILE + r"modal data: J.M1 has the shape \(3,\), expected \(3, 3, 2\)"),
    ("ksigma.M1 1x1", term("ksigma", "M1", [[1.0]]), ModelError,
     FILE + r"modal data: ksigma.M1 has the shape \(1, 1\), expected \(2, 2, 12\)"),
    ("node psi 1x1", sid(lambda d: d["nodes"][1]["psi"].__setitem__("M0", [[0.0]])), ModelError,
     FILE + r"modal data: node 3 psi has the shape \(1, 1\), expected \(3, 2\)"),
    # entries
    ("Me ragged", term("Me", "M0", [[1, 0], [0]]), ModelError,
     FILE + r"Me.M0 must be a table of numbers \(rows of equal length\)"),
    ("Me text", term("Me", "M0", "abc"), ModelError, FILE + r'Me.M0 is "abc", not a number'),
    ("Me null", term("Me", "M0", None), ModelError, FILE + r"Me.M0 is null, not a number"),
    ("Me 'NaN' as text", term("Me", "M0", [["NaN", 0], [0, 1]]), ModelError,
     FILE + r'Me.M0\[0\]\[0\] is "NaN", not a number'),
    ("Me true", term("Me", "M0", [[True, False], [False, True]]), ModelError,
     FILE + r"Me.M0\[0\]\[0\] is true, not a number"),
    ("Me NaN", term("Me", "M0", [[math.nan, 0], [0, 1]]), ModelError,
     FILE + r"modal data: Me has entries that are not finite \(entry \(0, 0\) is nan\)"),
    ("Ke Infinity", term("Ke", "M0", [[math.inf, 0], [0, 1]]), ModelError,
     FILE + r"modal data: Ke has entries that are not finite \(entry \(0, 0\) is inf\)"),
    ("node origin text", sid(lambda d: d["nodes"][1]["origin"].__setitem__("M0", "a")), ModelError,
     FILE + r'node 3 origin.M0 is "a", not a number'),
    # mass
    ("mass text", setting("mass", "heavy"), ModelError, FILE + r'mass must be a number, got "heavy"'),
    ("mass list", setting("mass", [1]), ModelError, FILE + r"mass must be a number, got \[1\]"),
    ("mass true", setting("mass", True), ModelError, FILE + r"mass must be a number, got true"),
    ("mass null", setting("mass", None), ModelError, FILE + r"mass must be a number, got null"),
    ("mass negative", setting("mass", -1), ModelError,
     FILE + r"modal data: mass must be a positive number, got -1.0"),
    ("mass NaN", setting("mass", math.nan), ModelError,
     FILE + r"modal data: mass must be a positive number, got nan"),
    # nodes
    ("node id 4.7", node_entry(1, "id", 4.7), ModelError,
     FILE + r"nodes\[1\].id: 4.7 is not a node id \(a whole number >= 0\)"),
    ("node id true", node_entry(1, "id", True), ModelError, FILE + r"nodes\[1\].id: true is not a node id"),
    ("node id text", node_entry(1, "id", "2"), ModelError, FILE + r'nodes\[1\].id: "2" is not a node id'),
    ("node id 2.0", node_entry(1, "id", 2.0), ModelError, FILE + r"nodes\[1\].id: 2.0 is not a node id"),
    ("node id null", node_entry(1, "id", None), ModelError, FILE + r"nodes\[1\].id: null is not a node id"),
    ("node id negative", node_entry(1, "id", -1), ModelError, FILE + r"nodes\[1\].id: -1 is not a node id"),
    ("node ids repeat", node_entry(1, "id", 1), ModelError,
     FILE + r"modal data: node ids repeat \(\[1, 1, 5\]\)"),
    ("nodes an object", setting("nodes", {"a": 1}), ModelError,
     FILE + r"nodes must be a non-empty list of nodes"),
    ("nodes empty", setting("nodes", []), ModelError,
     FILE + r"nodes must be a non-empty list of nodes, got \[\]"),
    ("node a number", sid(lambda d: d["nodes"].__setitem__(1, 5)), ModelError,
     FILE + r"nodes\[1\] must be an object with id, origin and psi, got 5"),
    ("node without psi", sid(lambda d: d["nodes"][1].pop("psi")), ModelError,
     FILE + r"nodes\[1\] must have the keys id, origin and psi; it lacks psi"),
    ("node unknown key", node_entry(1, "phi", {}), ModelError, FILE + r"nodes\[1\] .* unknown: 'phi'"),
    ("node without M1", sid(lambda d: d["nodes"][1]["origin"].pop("M1")), ModelError,
     FILE + r"node 3 origin lacks its term M1"),
    ("frame_node 1.5", setting("frame_node", 1.5), ModelError, FILE + r"frame_node: 1.5 is not a node id"),
    ("frame_node true", setting("frame_node", True), ModelError, FILE + r"frame_node: true is not a node id"),
    ("frame_node not a node", setting("frame_node", 99), ModelError,
     FILE + r"modal data: frame_node 99 is not a node \(nodes: \[1, 3, 5\]\)"),
    # frequencies, modes, description
    ("frequencies text", setting("frequencies_hz", "fast"), ModelError,
     FILE + r"modal data: frequencies_hz must be a list of 2 frequencies \[Hz\], got 'fast'"),
    ("frequencies of text", setting("frequencies_hz", ["a", "b"]), ModelError,
     FILE + r"modal data: frequencies_hz must hold numbers, not text"),
    ("frequencies true", setting("frequencies_hz", [True, 1.0]), ModelError,
     FILE + r"modal data: frequencies_hz must hold numbers, not True/False"),
    ("frequencies negative", setting("frequencies_hz", [-1.0, 2.0]), ModelError,
     FILE + r"modal data: frequencies_hz must be >= 0, got -1.0"),
    ("frequencies count", setting("frequencies_hz", [1.0]), ModelError,
     FILE + r"modal data: frequencies_hz must be 2 numbers \(one per mode\), got the shape \(1,\)"),
    ("frequencies a number", setting("frequencies_hz", 3.0), ModelError,
     FILE + r"modal data: frequencies_hz must be a list of 2 frequencies"),
    ("frequencies NaN", setting("frequencies_hz", [math.nan, 1.0]), ModelError,
     FILE + r"modal data: frequencies_hz has entries that are not finite \(entry 0 is nan\)"),
    ("mode names numbers", setting("modes", [1, 2]), ModelError,
     FILE + r"modal data: modes must be a list of names"),
    ("mode names repeat", setting("modes", ["a", "a"]), ModelError,
     FILE + r"modal data: mode names repeat \(a\)"),
    ("mode name with a space", setting("modes", ["a", "b c"]), ModelError,
     FILE + r"modal data: mode name 'b c' is not letters, digits and underscores"),
    ("mode names count", setting("modes", ["a"]), ModelError, FILE + r"modal data: 1 mode names for 2 modes"),
    ("description a list", setting("description", [1]), ModelError,
     FILE + r"description must be a text, got \[1\]"),
    # keys and terms
    ("unknown key", setting("Mee", 1), ModelError,
     FILE + r"unknown key\(s\) 'Mee' \(the format has format, version"),
    ("typo of De", setting("de", {"M0": [[0, 0], [0, 0]]}), ModelError, FILE + r"unknown key\(s\) 'de'"),
    ("Me with a term in q", term("Me", "M1", [[[0, 0], [0, 0]], [[0, 0], [0, 0]]]), ModelError,
     FILE + r"Me has no term 'M1' here \(terms: M0\)"),
    ("J with a term M3", term("J", "M3", 0), ModelError, FILE + r"J has no term 'M3' here"),
    ("Me not an object", setting("Me", 3.0), ModelError, FILE + r"Me must be an object with at least M0"),
    ("ksigma without M0", sid(lambda d: d["ksigma"].pop("M0")), ModelError,
     FILE + r"ksigma must be an object with at least M0"),
    ("Ct with a term in q", term("Ct", "M1", [[[0.0] * 2] * 3] * 2), ModelError,
     FILE + r"modal data: Ct has no terms in q here"),
    ("mdCM.M1 not Ct^T", term("mdCM", "M1", [[9, 9], [9, 9], [9, 9]]), ModelError,
     FILE + r"modal data: mdCM.M1 differs from Ct\^T"),
    # matrices that are no mass or stiffness
    ("Me indefinite", term("Me", "M0", [[1, 0], [0, -1]]), ModelError,
     FILE + r"modal data: Me is not positive definite: its smallest eigenvalue is -1"),
    ("Me not symmetric", term("Me", "M0", [[1, 0.5], [0, 1]]), ModelError,
     FILE + r"modal data: Me is not symmetric: entry \(0, 1\) is 0.5, \(1, 0\) is 0.0"),
    ("Ke indefinite", term("Ke", "M0", [[1, 0], [0, -1]]), ModelError,
     FILE + r"modal data: Ke is not positive semidefinite"),
    # the file itself
    ("format", setting("format", "x"), ModelError, r"'.*bad.json' is not an mbsfmu-sid file"),
    ("version", setting("version", 2), ModelError, r"'.*bad.json' has version 2; this mbsfmu reads 1"),
    ("required quantity", sid(lambda d: d.pop("Ke")), ModelError,
     r"'.*bad.json' lacks the required quantity Ke"),
    ("a list", raw(b"[1]"), ModelError, r"'.*raw.json' is not an mbsfmu-sid file"),
    ("bytes", raw(b"\xff\xfe\x00"), ModelError, r"'.*raw.json' is not readable JSON"),
    ("truncated", raw(b'{"format": "mbsfmu-sid", "vers'), ModelError, r"'.*raw.json' is not readable JSON"),
    ("a folder", lambda: load(OUT["folder"]), ModelError, r"modal data file '.*' is not readable JSON"),
    ("missing", lambda: load("nope.json"), ModelError, r"modal data file 'nope.json' does not exist"),
    ("path an int", lambda: load(5), ModelError, r"modal data: give the path of an mbsfmu-sid file, got 5"),
]


def replaced(**kw):
    return lambda: dataclasses.replace(good(), **kw).check()


def first_node(**kw):
    def call():
        first, *rest = good().nodes
        return dataclasses.replace(good(), nodes=[dataclasses.replace(first, **kw), *rest]).check()
    return call


OBJECT_CASES = [
    ("Me 3x3", replaced(Me=np.eye(3)), ModelError,
     r"modal data: Me has the shape \(3, 3\), expected \(2, 2\) \(n = 2 modes"),
    ("Me 3x3 placed", lambda: System("s").flexible_body("B", data=dataclasses.replace(good(), Me=np.eye(3))),
     ModelError, r"flexible body 'B': modal data: Me has the shape \(3, 3\), expected \(2, 2\)"),
    ("Ke a vector", replaced(Ke=np.ones(2)), ModelError,
     r"modal data: Ke has the shape \(2,\), expected \(2, 2\)"),
    ("Me None", replaced(Me=None), ModelError, r"modal data: Me is missing"),
    ("Me text", replaced(Me="abc"), ModelError, r"modal data: Me must hold numbers, not text"),
    ("Me complex", replaced(Me=np.eye(2) * 1j), ModelError,
     r"modal data: Me must be real, got complex entries"),
    ("Me boolean", replaced(Me=np.eye(2, dtype=bool)), ModelError,
     r"modal data: Me must hold numbers, not True/False"),
    ("mass text", replaced(mass="a"), ModelError, r"modal data: mass must be a positive number, got 'a'"),
    ("mass True", replaced(mass=True), ModelError, r"modal data: mass must be a positive number, got True"),
    ("J an array", replaced(J=np.eye(3)), ModelError, r"modal data: J must be a Taylor .* got ndarray"),
    ("nodes an int", replaced(nodes=5), ModelError, r"modal data: nodes must be a list of Node, got 5"),
    ("node id 4.7", first_node(id=4.7), ModelError, r"modal data: nodes: 4.7 is not a node id"),
    ("node id True", first_node(id=True), ModelError, r"modal data: nodes: True is not a node id"),
    ("frequencies text", replaced(frequencies_hz=["a", "b"]), ModelError,
     r"modal data: frequencies_hz must hold numbers, not text"),
    ("modes a text", replaced(modes="ab"), ModelError,
     r"modal data: modes must be a list of names, got 'ab'"),
    ("frame_node text", replaced(frame_node="1"), ModelError,
     r"modal data: frame_node: '1' is not a node id"),
    ("description a number", replaced(description=5), ModelError,
     r"modal data: description must be a text, got 5"),
]

B = functools.partial(beam_modal_data, 1.0)


def beam_with(**kw):
    return lambda: B(**{**BEAM, **kw})


BEAM_CASES = [
    ("E negative", beam_with(E=-1), ModelError, r"beam: E must be a positive number, got -1"),
    ("E text", beam_with(E="steel"), ModelError, r"beam: E must be a positive number, got 'steel'"),
    ("E nan", beam_with(E=math.nan), ModelError, r"beam: E must be a positive number, got nan"),
    ("E True", beam_with(E=True), ModelError, r"beam: E must be a positive number, got True"),
    ("rho 0", beam_with(rho=0), ModelError, r"beam: rho must be a positive number, got 0"),
    ("Iy inf", beam_with(Iy=math.inf), ModelError, r"beam: Iy must be a positive number, got inf"),
    ("G negative", beam_with(G=-1), ModelError, r"beam: G must be a positive number, got -1"),
    ("J text", beam_with(J="a"), ModelError, r"beam: J must be a positive number, got 'a'"),
    ("shear area negative", beam_with(theory="timoshenko", shear_area_y=-1), ModelError,
     r"beam: shear_area_y must be a positive number, got -1"),
    ("length 0", lambda: beam_modal_data(0, **BEAM), ModelError,
     r"beam: length must be a positive number, got 0"),
    ("n_elements 0", beam_with(n_elements=0), ModelError, r"beam: n_elements must be an integer >= 1, got 0"),
    ("n_elements 2.5", beam_with(n_elements=2.5), ModelError,
     r"beam: n_elements must be an integer >= 1, got 2.5"),
    ("n_elements huge", beam_with(n_elements=10**9), ModelError,
     r"beam: n_elements = 1000000000 is more than 1000: the beam's matrices are dense"),
    ("theory", beam_with(theory="kirchhoff"), ModelError,
     r"beam: theory must be one of euler-bernoulli, timoshenko, got 'kirchhoff'"),
    ("nu 0.7", beam_with(nu=0.7), ModelError, r"beam: Poisson's ratio nu must be in \(-1, 0.5\], got 0.7"),
    ("nu text", beam_with(nu="a"), ModelError, r"beam: Poisson's ratio nu must be in .* got 'a'"),
    ("axis zero", beam_with(axis=(0, 0, 0)), ModelError,
     r"beam: axis must be a nonzero 3-vector, got \(0, 0, 0\)"),
    ("axis 2-vector", beam_with(axis=(0, 1)), ModelError, r"beam: axis must be a 3-vector, got \(0, 1\)"),
    ("axis text", beam_with(axis="z"), ModelError, r"beam: axis must hold numbers, not text: 'z'"),
    ("y_axis parallel", beam_with(y_axis=(0, 0, 1)), ModelError, r"beam: y_axis \(0, 0, 1\) is parallel"),
    ("start nan", beam_with(start=(0, math.nan, 0)), ModelError,
     r"beam: start has entries that are not finite \(entry 1 is nan\)"),
    ("modes 0", beam_with(modes=0), ModelError, r"modes=0 asks for 0 modes, but 24 are available"),
    ("modes 100", beam_with(modes=100), ModelError, r"modes=100 asks for 100 modes, but 24 are available"),
    ("modes 2.5", beam_with(modes=2.5), ModelError,
     r"modes must be a number or a list of 1-based mode indices"),
    ("modes [1.5]", beam_with(modes=[1.5]), ModelError, r"modes must be a number or a list .* got \[1.5\]"),
    ("modes [True]", beam_with(modes=[True]), ModelError,
     r"modes must be a number or a list .* got \[True\]"),
    ("modes '12'", beam_with(modes="12"), ModelError, r"modes must be a number or a list .* got '12'"),
    ("modes twice", beam_with(modes=[1, 1]), ModelError, r"modes=\[1, 1\] names a mode twice"),
    ("export 0", beam_with(export=0), ModelError, r"export=0 asks for 0 evenly spaced nodes"),
    ("export 4.7", beam_with(export=4.7), ModelError,
     r"export must be a number of nodes or a list of node ids, got 4.7"),
    ("export [4.7]", beam_with(export=[4.7]), ModelError, r"export names node 4.7, which is not a node"),
    ("export [True]", beam_with(export=[True]), ModelError, r"export names node True, which is not a node"),
    ("export []", beam_with(export=[]), ModelError, r"export=\[\] keeps no node"),
    ("export twice", beam_with(export=[1, 1]), ModelError, r"export=\[1, 1\] names a node twice"),
    ("export text", beam_with(export="1"), ModelError,
     r"export must be a number of nodes or a list of node ids"),
    ("frame_node 4.7", beam_with(frame_node=4.7), ModelError, r"frame_node: 4.7 is not a node id"),
    ("frame_node True", beam_with(frame_node=True), ModelError, r"frame_node: True is not a node id"),
    ("frame_node text", beam_with(frame_node="1"), ModelError, r"frame_node: '1' is not a node id"),
    ("frame_node not a node", beam_with(frame_node=99), ModelError,
     r"boundary conditions name node 99, which is not a node \(nodes 1..5\)"),
    ("clamped without frame node", beam_with(frame_node=None), ModelError,
     r"bc='clamped' holds the frame node: give frame_node"),
    ("bc unknown", beam_with(bc="pinned"), ModelError,
     r"bc must be 'clamped', 'free' or a list of held DOFs, got 'pinned'"),
    ("bc node 4.7", beam_with(bc=[4.7]), ModelError, r"bc entry 4.7 must be a node id or \(node id, dof\)"),
    ("bc dof unknown", beam_with(bc=[(1, "uq")]), ModelError,
     r"bc entry \(1, 'uq'\): the dof must be one of ux"),
    ("bc pair node 1.5", beam_with(bc=[(1.5, "ux")]), ModelError, r"bc: 1.5 is not a node id"),
    ("bc True", beam_with(bc=[True]), ModelError, r"bc entry True must be a node id"),
    ("plane unknown", beam_with(plane="xx"), ModelError,
     r"plane must be one of xy, yz, zx or None, got 'xx'"),
    ("plane without the beam", beam_with(plane="xy"), ModelError,
     r"plane='xy': the beam's axis \(0.0, 0.0, -1.0\) does not lie in the xy plane"),
    ("damping negative", beam_with(damping=-1), ModelError, r"damping ratio must be a number >= 0, got -1"),
    ("damping text", beam_with(damping="a"), ModelError,
     r"damping must be a damping ratio \(a number >= 0\) or a modal damping matrix of 2 x 2, got 'a'"),
    ("damping nan", beam_with(damping=math.nan), ModelError, r"damping ratio must be a number >= 0, got nan"),
    ("damping True", beam_with(damping=True), ModelError, r"damping must be a damping ratio .* got True"),
    ("damping matrix 3x3", beam_with(damping=np.eye(3)), ModelError,
     r"damping must be .* a modal damping matrix of 2 x 2 \(one row and column per mode\), "
     r"got the shape \(3, 3\)"),
    ("damping list of ratios", beam_with(damping=[0.01, 0.02]), ModelError,
     r"damping must be .* got the shape \(2,\)"),
    ("damping matrix negative", beam_with(damping=-np.eye(2)), ModelError,
     r"modal data: De is not positive semidefinite"),
    ("reduction unknown", beam_with(reduction="guyan"), ModelError,
     r"reduction must be None or 'craig-bampton', got 'guyan'"),
    ("craig-bampton without boundary", beam_with(reduction="craig-bampton"), ModelError,
     r"reduction='craig-bampton' needs boundary=\[node ids\], got None"),
    ("boundary 4.7", beam_with(reduction="craig-bampton", boundary=[4.7]), ModelError,
     r"boundary names node 4.7, which is not a node"),
    ("boundary text", beam_with(reduction="craig-bampton", boundary="5"), ModelError,
     r"reduction='craig-bampton' needs boundary=\[node ids\], got '5'"),
    ("boundary without craig-bampton", beam_with(boundary=[5]), ModelError,
     r"boundary= is only used with reduction='craig-bampton'"),
    ("geometric_stiffening text", beam_with(geometric_stiffening="no"), ModelError,
     r"geometric_stiffening must be True or False, got 'no'"),
    ("description a number", beam_with(description=5), ModelError, r"description must be a text, got 5"),
]


def imported(**kw):
    return lambda: import_modal_data(**{**dict(nodes=fe().nodes, mass=fe().M, stiffness=fe().K, modes=2,
                                               export=3), **kw})


def written(name, text):
    def call():
        path = OUT["folder"] / name
        path.write_text(text)
        return str(path)
    return call


def import_file(key, name, text):
    return lambda: imported(**{key: written(name, text)()})()


IMPORT_CASES = [
    ("nodes 2 columns", imported(nodes=np.zeros((5, 2))), ModelError,
     r"node coordinates must be \(N, 3\), got the shape \(5, 2\)"),
    ("nodes file missing", imported(nodes="abc"), ModelError, r"node coordinates file 'abc' does not exist"),
    ("nodes a number", imported(nodes=5), ModelError,
     r"node coordinates must be \(N, 3\), got the shape \(\)"),
    ("nodes nan", imported(nodes=np.full((5, 3), math.nan)), ModelError,
     r"node coordinates have entries that are not finite"),
    ("nodes text", imported(nodes=[["a", "b", "c"]]), ModelError,
     r"node coordinates must hold numbers, not text"),
    ("nodes csv of text", import_file("nodes", "n.csv", "a,b\nc,d\n"), ModelError,
     r"node coordinates file '.*n.csv' is not readable"),
    ("mass 29x29", imported(mass=np.eye(29)), ModelError,
     r"the mass matrix is 29 x 29, but the nodes give 30 DOFs"),
    ("mass not square", imported(mass=np.ones((30, 29))), ModelError,
     r"the mass matrix must be square, got the shape \(30, 29\)"),
    ("mass nan", imported(mass=np.full((30, 30), math.nan)), ModelError,
     r"the mass matrix has entries that are not finite"),
    ("mass file missing", imported(mass="abc"), ModelError, r"mass matrix file 'abc' does not exist"),
    ("mass a number", imported(mass=5), ModelError, r"the mass matrix must be square, got the shape \(\)"),
    ("mass text", imported(mass=[["a"]]), ModelError, r"the mass matrix must hold numbers, not text"),
    ("mass complex", imported(mass=np.eye(30) * (1 + 1j)), ModelError,
     r"the mass matrix must be real, got complex"),
    ("mass boolean", imported(mass=np.eye(30, dtype=bool)), ModelError,
     r"the mass matrix must hold numbers, not True/False"),
    ("mass negative", imported(mass=-np.eye(30)), ModelError,
     r"the mass matrix is not positive semidefinite"),
    ("stiffness not symmetric", imported(stiffness=np.triu(np.ones((30, 30)))), ModelError,
     r"the stiffness matrix is not symmetric: entry \(0, 1\) is 1.0, \(1, 0\) is 0.0"),
    ("mass file ending", import_file("mass", "m.txt", "1"), ModelError,
     r"mass matrix file '.*m.txt': expected .mtx \(Matrix Market\) or .npy"),
    ("mass file garbage", import_file("mass", "g.mtx", "garbage\n"), ModelError,
     r"mass matrix file '.*g.mtx' is not readable"),
    ("dofs_per_node 4", imported(dofs_per_node=4), ModelError, r"dofs_per_node must be 6 .* or 3 .*, got 4"),
    ("dofs_per_node 6.0", imported(dofs_per_node=6.0), ModelError, r"dofs_per_node must be 6 .*, got 6.0"),
    ("dofs_per_node True", imported(dofs_per_node=True), ModelError, r"dofs_per_node must be 6 .*, got True"),
    ("node_ids 4.7", imported(node_ids=[1, 2, 3, 4, 4.7]), ModelError, r"node_ids: 4.7 is not a node id"),
    ("node_ids True", imported(node_ids=[True, 2, 3, 4, 5]), ModelError, r"node_ids: True is not a node id"),
    ("node_ids text", imported(node_ids=["1", "2", "3", "4", "5"]), ModelError,
     r"node_ids: '1' is not a node id"),
    ("node_ids negative", imported(node_ids=[-1, 2, 3, 4, 5], frame_node=-1), ModelError,
     r"node_ids: -1 is not a node id"),
    ("node_ids too few", imported(node_ids=[1, 2]), ModelError,
     r"finite-element model: node_ids must be 5 different numbers, got \[1, 2\]"),
    ("node_ids a number", imported(node_ids=5), ModelError, r"node_ids: give a list of node ids, got 5"),
    ("matrices and mass", imported(matrices="x.npz"), ModelError,
     r"give either matrices= .* or mass= and stiffness="),
    ("no mass", lambda: import_modal_data(fe().nodes, stiffness=fe().K), ModelError,
     r"import_modal_data needs mass= and stiffness="),
    ("geometric stiffness 3", imported(geometric_stiffness=[fe().K] * 3), ModelError,
     r"geometric_stiffness must hold 12 matrices, one per load of a_x"),
    ("geometric stiffness file", imported(geometric_stiffness="nope.npz"), ModelError,
     r"geometric stiffness file 'nope.npz' does not exist"),
    ("geometric stiffness a number", imported(geometric_stiffness=5), ModelError,
     r"geometric_stiffness must be a list of 12 matrices .* got int"),
    ("damping 5x5", imported(damping=np.eye(5)), ModelError,
     r"damping must be .* a modal damping matrix of 2 x 2 .* got the shape \(5, 5\)"),
    ("description a number", imported(description=5), ModelError,
     r"modal data: description must be a text, got 5"),
    # from_fe directly
    ("from_fe mode shapes nan", lambda: from_fe(fe().M, fe().K, fe().nodes, np.full((30, 2), math.nan)),
     ModelError, r"finite-element model: the matrix of mode shapes has entries that are not finite"),
    ("from_fe frequencies text", lambda: from_fe(fe().M, fe().K, fe().nodes, np.eye(30)[:, 6:8],
                                                 frequencies_hz=["a", "b"]),
     ModelError, r"modal data: frequencies_hz must hold numbers, not text"),
    ("from_fe mode names repeat", lambda: from_fe(fe().M, fe().K, fe().nodes, np.eye(30)[:, 6:8],
                                                  mode_names=["a", "a"]),
     ModelError, r"modal data: mode names repeat \(a\)"),
    ("from_fe node_ids 4.7", lambda: from_fe(fe().M, fe().K, fe().nodes, np.eye(30)[:, 6:8],
                                             node_ids=[1, 2, 3, 4, 4.7]),
     ModelError, r"finite-element model: 4.7 is not a node id"),
]


@functools.cache
def flexible_model():
    s = System("flex_factor")
    k_s = s.constant("k_s", 1.0)
    a, = s.coordinates("a")
    s.flexible_body("B", rel_rot=rot_x(a), data=beam_modal_data(0.5, **{**BEAM, "plane": "yz"}),
                    stiffness_factor=k_s, damping_factor=2 * k_s - 1)
    return s


BODY_CASES = [
    ("stiffness_factor negative at run time",
     lambda: mbsfmu.simulate(flexible_model(), t_end=0.01, params={"k_s": -1.0}), ParameterError,
     r"flexible body 'B': stiffness_factor must be >= 0 \(it scales the modal stiffness Ke\), got -1.0 "
     r"\(k_s = -1.0\)"),
    ("damping_factor negative at run time",
     lambda: mbsfmu.simulate(flexible_model(), t_end=0.01, params={"k_s": 0.25}), ParameterError,
     r"flexible body 'B': damping_factor must be >= 0 \(it scales the modal damping De\), got -0.5 "
     r"\(k_s = 0.25\)"),
    ("stiffness_factor negative number",
     lambda: System("x").flexible_body("B", data=good(), stiffness_factor=-1.0),
     ModelError, r"flexible body 'B': stiffness_factor must be a number >= 0, got -1.0"),
    ("geometric_stiffening text",
     lambda: System("x").flexible_body("B", data=good(), geometric_stiffening="no"),
     ModelError, r"flexible body 'B': geometric_stiffening must be True or False, got 'no'"),
    ("data a number", lambda: System("x").flexible_body("B", data=5), ModelError,
     r"flexible body 'B': data must be modal data .* got int"),
    ("data file with a bad node", lambda: System("x").flexible_body("B", data=_bad_node_file()), ModelError,
     r"flexible body 'B': modal data file '.*': nodes\[1\].id: 4.7 is not a node id"),
]


def _bad_node_file():
    doc = copy.deepcopy(good_doc())
    doc["nodes"][1]["id"] = 4.7
    path = OUT["folder"] / "node.json"
    path.write_text(json.dumps(doc))
    return path


CASES = [(f"{group}: {label}", *rest) for group, cases in (
    ("file", FILE_CASES), ("ModalData", OBJECT_CASES), ("beam", BEAM_CASES), ("import", IMPORT_CASES),
    ("body", BODY_CASES)) for label, *rest in cases]


@pytest.mark.parametrize("call, exc, pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_named(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()
    good().check()  # the shared data are unchanged


def test_catalogue_size():
    """The count reported in issue 23's closing note."""
    assert (len(FILE_CASES), len(OBJECT_CASES), len(BEAM_CASES), len(IMPORT_CASES), len(BODY_CASES)) == (
        73, 17, 61, 38, 6)
    assert len({c[0] for c in CASES}) == len(CASES)

"""A user's FE model from files: the same matrices give the same modal data as the built-in beam;
a 3-DOF-per-node model against the closed form of a spring-mass chain; every bad input named."""

import numpy as np
import pytest
import scipy.io

from mbsfmu.core.errors import ModelError
from mbsfmu.model.elastic import LOAD_CASES, beam, beam_geometric_stiffness, fe_modal_data, import_modal_data

E, RHO = 2.1e11, 7850.0
SEC = dict(A=1e-4, Iy=2e-9, Iz=8e-10, J=1.5e-9)


@pytest.fixture(scope="module")
def model():
    b = beam(1.0, 8, E=E, rho=RHO, **SEC)
    return b, beam_geometric_stiffness(b, range(6))


def assert_same(a, b, rtol=1e-12):
    def close(x, y, what):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        assert x.shape == y.shape, what
        assert np.abs(x - y).max(initial=0) <= rtol * max(np.abs(y).max(initial=0), 1e-300), what
    close(a.mass, b.mass, "mass")
    for name in ("mdCM", "J", "Ct", "Cr", "ksigma"):
        ta, tb = getattr(a, name), getattr(b, name)
        for order in ("M0", "M1", "M2"):
            if getattr(tb, order) is not None:
                close(getattr(ta, order), getattr(tb, order), f"{name}.{order}")
    for name in ("Me", "Ke", "De", "frequencies_hz"):
        close(getattr(a, name), getattr(b, name), name)
    assert [nd.id for nd in a.nodes] == [nd.id for nd in b.nodes]
    for na, nb in zip(a.nodes, b.nodes):
        close(na.phi, nb.phi, f"node {na.id} phi")
        close(na.psi, nb.psi, f"node {na.id} psi")
        close(na.position, nb.position, f"node {na.id} position")
    assert a.frame_node == b.frame_node and a.modes == b.modes


def test_files_give_the_built_in_modal_data(model, tmp_path):
    b, G = model
    ref = fe_modal_data(b.M, b.K, b.nodes, modes=4, export=3, geometric_stiffness=G)
    scipy.io.mmwrite(str(tmp_path / "M.mtx"), b.M, symmetry="symmetric")
    scipy.io.mmwrite(str(tmp_path / "K.mtx"), scipy.sparse.coo_matrix(b.K))
    np.savez(tmp_path / "MK.npz", M=b.M, K=b.K)
    np.savez(tmp_path / "G.npz", **dict(zip(LOAD_CASES, G)))
    np.savetxt(tmp_path / "nodes.csv", b.nodes, delimiter=",", header="x,y,z", fmt="%.17g")
    np.save(tmp_path / "nodes.npy", b.nodes)
    from_mtx = import_modal_data(tmp_path / "nodes.csv", mass=tmp_path / "M.mtx",
                                 stiffness=tmp_path / "K.mtx", modes=4, export=3,
                                 geometric_stiffness=tmp_path / "G.npz")
    from_npz = import_modal_data(tmp_path / "nodes.npy", matrices=tmp_path / "MK.npz", modes=4, export=3,
                                 geometric_stiffness=G)
    assert_same(from_mtx, ref)
    assert_same(from_npz, ref)
    assert [nd.id for nd in ref.nodes] == [1, 5, 9]


def test_translations_only_model_against_a_spring_mass_chain(tmp_path):
    """n masses m on springs k in every direction, node 1 held: omega_j = 2 sqrt(k/m)
    sin((2j - 1) pi / (2 (2 n' + 1))) for the n' = n - 1 free masses, in each direction."""
    n, k, m = 7, 3.0e4, 2.0
    lap = np.zeros((n, n))
    for i in range(n - 1):
        lap[np.ix_([i, i + 1], [i, i + 1])] += [[1, -1], [-1, 1]]
    K = np.kron(k * lap, np.eye(3))
    M = m * np.eye(3 * n)
    X = np.column_stack([np.arange(n) * 0.1, 0.05 * np.cos(np.arange(n)), 0.05 * np.sin(np.arange(n))])
    d = import_modal_data(X, mass=M, stiffness=K, dofs_per_node=3, bc=[1], modes=6)
    nf = n - 1
    ref = 2 * np.sqrt(k / m) * np.sin((2 * np.arange(1, 3) - 1) * np.pi / (2 * (2 * nf + 1)))
    w = 2 * np.pi * np.array(d.frequencies_hz)
    assert np.allclose(w, np.repeat(ref, 3), rtol=1e-12)
    assert all(np.abs(nd.psi).max() == 0 for nd in d.nodes)
    assert d.frame_node == 1 and abs(d.mass - n * m) < 1e-12
    with pytest.raises(ModelError, match="does not stop a solid"):
        import_modal_data(X, mass=M, stiffness=K, dofs_per_node=3)


def test_bad_files_are_named(model, tmp_path):
    b, _ = model
    np.save(tmp_path / "M.npy", b.M)
    np.save(tmp_path / "K.npy", b.K)
    np.save(tmp_path / "rect.npy", b.K[:, :-1])
    np.save(tmp_path / "small.npy", b.K[:-6, :-6])
    Kbad = b.K.copy()
    Kbad[7, 20] += 1e-3 * np.abs(b.K).max()
    np.save(tmp_path / "Kbad.npy", Kbad)
    Mneg = b.M - 2 * np.abs(np.linalg.eigvalsh(b.M)).min() * np.eye(len(b.M)) - 1e-6 * np.eye(len(b.M))
    np.save(tmp_path / "Mneg.npy", Mneg)
    np.savez(tmp_path / "onlyM.npz", M=b.M)
    X = b.nodes

    def imp(**kw):
        return import_modal_data(X, **{"mass": tmp_path / "M.npy", "stiffness": tmp_path / "K.npy", **kw})

    with pytest.raises(ModelError, match=r"mass matrix file '.*nope.mtx' does not exist"):
        imp(mass=tmp_path / "nope.mtx")
    with pytest.raises(ModelError, match=r"node coordinates file .* does not exist"):
        import_modal_data(tmp_path / "nodes.csv", mass=b.M, stiffness=b.K)
    with pytest.raises(ModelError, match=r"matrix .*rect.npy' must be square, got the shape \(54, 53\)"):
        imp(stiffness=tmp_path / "rect.npy")
    with pytest.raises(ModelError, match=r"matrix .*small.npy' is 48 x 48, but the nodes give 54"):
        imp(stiffness=tmp_path / "small.npy")
    with pytest.raises(ModelError, match=r"stiffness matrix .*Kbad.npy' is not symmetric: "
                                         r"entry \((7, 20|20, 7)\)"):
        imp(stiffness=tmp_path / "Kbad.npy")
    with pytest.raises(ModelError, match=r"mass matrix .*Mneg.npy' is not positive semidefinite: "
                                         r"its smallest eigenvalue is -"):
        imp(mass=tmp_path / "Mneg.npy")
    with pytest.raises(ModelError, match=r"onlyM.npz' lacks the key\(s\) K"):
        import_modal_data(X, matrices=tmp_path / "onlyM.npz")
    with pytest.raises(ModelError, match="dofs_per_node"):
        imp(dofs_per_node=4)
    with pytest.raises(ModelError, match=r"modes=60 asks for 60 modes, but 48 are available"):
        imp(modes=60)
    with pytest.raises(ModelError, match="export names node 12"):
        imp(export=[1, 12])
    with pytest.raises(ModelError, match="geometric_stiffness must hold 12 matrices"):
        imp(geometric_stiffness=[b.K] * 3)
    with pytest.raises(ModelError, match=r"geometric stiffness of alpha_x .* not symmetric"):
        imp(geometric_stiffness=[b.K] * 3 + [Kbad] + [b.K] * 8)


def test_malformed_sid_files_are_named(tmp_path):
    """Quantities of the wrong kind, a Ct with a first-order term, a frame_node that is no id:
    each a ModelError naming the file, never a raw TypeError."""
    import json

    from mbsfmu.model.elastic import beam_modal_data
    from mbsfmu.model.elastic import load as load_sid
    from mbsfmu.model.elastic import save as save_sid

    data = beam_modal_data(1.0, E=7e10, rho=2700.0, A=8e-5, Iy=1e-10, Iz=2e-9, n_elements=4, export=2,
                           modes=2, plane="yz", axis=(0.0, 0.0, -1.0))
    good = save_sid(data, tmp_path / "b.json")
    doc = json.loads(good.read_text())
    cases = [({"Me": 3.0}, "Me must be an object"),
             ({"Ke": {"M0": "stiff"}}, 'Ke.M0 is "stiff", not a number'),
             ({"frame_node": "one"}, r'frame_node: "one" is not a node id \(a whole number >= 0\)'),
             ({"Ct": {**doc["Ct"], "M1": [[[0.0] * 2] * 3] * 2}}, "Ct has no terms in q"),
             ({"modes": "q01"}, "modes must be a list")]
    for change, words in cases:
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({**doc, **change}))
        with pytest.raises(ModelError, match=words) as err:
            load_sid(bad)
        assert "bad.json" in str(err.value)
    for missing in ("Ke", "J", "nodes"):
        bad = tmp_path / "missing.json"
        bad.write_text(json.dumps({k: v for k, v in doc.items() if k != missing}))
        with pytest.raises(ModelError, match=f"missing.json' lacks the required quantity {missing}"):
            load_sid(bad)


def test_numpy_integer_node_ids_are_saved_as_json_numbers(tmp_path):
    """Node ids are whole numbers (numpy's integers too): save writes them as JSON numbers and
    load gives the same ids and frame node."""
    import dataclasses

    from mbsfmu.model.elastic import beam_modal_data
    from mbsfmu.model.elastic import load as load_sid
    from mbsfmu.model.elastic import save as save_sid

    data = beam_modal_data(1.0, E=7e10, rho=2700.0, A=8e-5, Iy=1e-10, Iz=2e-9, n_elements=4, export=3,
                           modes=2, plane="yz", axis=(0.0, 0.0, -1.0))
    nodes = [dataclasses.replace(nd, id=np.int64(nd.id)) for nd in data.nodes]
    numpy_ids = dataclasses.replace(data, nodes=nodes, frame_node=np.int64(data.frame_node))
    back = load_sid(save_sid(numpy_ids, tmp_path / "ids.json"))
    assert [nd.id for nd in back.nodes] == [1, 3, 5] and back.frame_node == 1
    np.testing.assert_array_equal(back.Me, data.Me)

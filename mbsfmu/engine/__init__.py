"""The Python side of the C engine, a layer above :mod:`mbsfmu.codegen`: the per-model extension
module and its compilation with the engine's C sources (:mod:`.extension`, :class:`~.extension.
Engine`), the compiled right-hand side of trees (:mod:`.compiled_rhs`) and the ctypes kernel of
the generated equations (:mod:`.c_kernel`).

Fenced from :mod:`mbsfmu.reference`: nothing here imports the Python formulations or integrators
(tests/test_layout.py checks it).
"""

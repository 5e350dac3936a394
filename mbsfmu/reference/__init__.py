"""The Python reference of the engine: the formulations (:mod:`.formulations`), the integrators
(:mod:`.integrators`) and consistent initialization (:mod:`.consistent_initialization`), the
readable oracle the tests compare the engine with and the no-compiler fallback
(``simulate(backend='numpy')``, the pythonfmu FMU without a compiler).

Fenced from :mod:`mbsfmu.engine`: neither imports the other (tests/test_layout.py checks it); the
one bridge, the compiled right-hand side of a tree, comes with the numeric model
(:func:`mbsfmu.engine.c_kernel.use_c_kernel`).
"""

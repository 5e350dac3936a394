"""Code generation: the symbolic equations printed as C99 (one function per quantity group over
common subexpressions), the engine's model source, the compiled right-hand side of trees, and the
gcc wrapper.  The numpy evaluation of the equations is :class:`mbsfmu.equations.NumericModel`."""

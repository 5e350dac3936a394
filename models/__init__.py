"""The model zoo: one file per mechanism, each with a ``model()`` function."""

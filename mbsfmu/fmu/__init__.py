"""Stage 5 of the pipeline: FMI 2.0 Co-Simulation export.

``mbsfmu/runtime/`` holds the small hand-written C runtime (dense linear algebra, the stabilized
integrator, FMI glue) that is compiled together with one generated model file.
"""

"""Stage 5 of the pipeline: FMU export, FMI 2.0 and 3.0, Co-Simulation and Model Exchange.

``mbsfmu/runtime/`` holds the small hand-written C runtime (dense linear algebra, the stabilized
integrator, FMI glue) that is compiled together with one generated model file.
"""

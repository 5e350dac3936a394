"""The bottom layer: what every stage of the pipeline shares and nothing above it.

:mod:`.errors` (the exceptions and warnings), :mod:`.constants` (the numbers shared with the C
engine, written once and generated into each model's ``model_config.h``),
:mod:`.solver_settings` (the FMU's solver settings and their ranges), :mod:`.formulation_choice`
(the formulation names, default and option table), :mod:`.fmu_layout` (the record of one FMU
variable and the names the export adds), :mod:`.checks` (finite numbers, declared bounds, a
keyword given twice) and :mod:`.output_files` (output paths checked before any work).

Nothing here imports another package of mbsfmu (tests/test_layout.py checks it).
"""

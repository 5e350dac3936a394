"""Catalogue of bad inputs of the FMU build's FMI options (issue 26): ``fmi_version`` and
``interface`` of ``build_fmu`` / ``build_native_fmu`` / ``mbsfmu build``, and the combinations
the pythonfmu kind does not build.  Each case: (label, call, exception type, regular expression
that the message must match, naming the culprit); every refused call leaves no file behind.
"""

import pytest
from fmu_support import MODELS

import mbsfmu
from mbsfmu import ParameterError
from mbsfmu.cli import main
from mbsfmu.fmu.native import build_native_fmu, native_fmu_parts

CART = MODELS / "cart_pendulum.py"
SLIDER = MODELS / "slider_crank.py"


def build(out, **kw):
    return lambda: mbsfmu.build_fmu(CART, out, **kw)


def cases(out):
    versions = r"is not an FMI version mbsfmu exports; choose one of 2, 3$"
    interfaces = (r"is not an FMI interface; choose one of 'cs' \(Co-Simulation\), 'me' \(Model "
                  r"Exchange\), 'both' \(Co-Simulation and Model Exchange\)$")
    pythonfmu = r"^the pythonfmu kind builds FMI 2.0 Co-Simulation FMUs only: for FMI "
    return [
        ("fmi_version 4", build(out, fmi_version=4), ParameterError, r"^fmi_version 4 " + versions),
        ("fmi_version 3.1", build(out, fmi_version="3.1"), ParameterError, r"^fmi_version '3.1' " + versions),
        ("fmi_version 1 (FMI 1.0)", build(out, fmi_version=1), ParameterError, r"^fmi_version 1 " + versions),
        ("fmi_version True", build(out, fmi_version=True), ParameterError, r"^fmi_version True " + versions),
        ("fmi_version None", build(out, fmi_version=None), ParameterError, r"^fmi_version None " + versions),
        ("fmi_version list", build(out, fmi_version=[3]), ParameterError, r"^fmi_version \[3\] " + versions),
        ("interface upper case", build(out, interface="ME"), ParameterError,
         r"^interface 'ME' " + interfaces),
        ("interface long name", build(out, interface="cosimulation"), ParameterError,
         r"^interface 'cosimulation' " + interfaces),
        ("interface None", build(out, interface=None), ParameterError, r"^interface None " + interfaces),
        ("interface both as a tuple", build(out, interface=("cs", "me")), ParameterError,
         r"^interface \('cs', 'me'\) " + interfaces),
        ("pythonfmu FMI 3.0", build(out, kind="pythonfmu", fmi_version=3), ParameterError,
         pythonfmu + r"3.0 Co-Simulation build the native kind \(the default\)$"),
        ("pythonfmu Model Exchange", build(out, kind="pythonfmu", interface="me"), ParameterError,
         pythonfmu + r"2.0 Model Exchange build the native kind"),
        ("pythonfmu both interfaces", build(out, kind="pythonfmu", fmi_version="3", interface="both"),
         ParameterError, pythonfmu + r"3.0 Co-Simulation and Model Exchange build the native kind"),
        ("build_native_fmu interface", lambda: build_native_fmu(SLIDER, out, interface="modelexchange"),
         ParameterError, r"^interface 'modelexchange' " + interfaces),
        ("build_native_fmu fmi_version", lambda: build_native_fmu(SLIDER, out, fmi_version="2.1"),
         ParameterError, r"^fmi_version '2.1' " + versions),
        ("native_fmu_parts fmi_version", lambda: native_fmu_parts(SLIDER, fmi_version=0),
         ParameterError, r"^fmi_version 0 " + versions),
    ]


LABELS = [c[0] for c in cases("x.fmu")]


@pytest.mark.parametrize("index", range(len(LABELS)), ids=LABELS)
def test_bad_fmi_option_is_named(tmp_path, index):
    out = tmp_path / "x.fmu"
    _, call, exc, pattern = cases(out)[index]
    with pytest.raises(exc, match=pattern):
        call()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, status, message", [
    (["--fmi", "4"], 2, "argument --fmi: invalid choice: '4' (choose from '2', '3')"),
    (["--fmi", "3.0"], 2, "argument --fmi: invalid choice: '3.0'"),
    (["--interface", "ME"], 2, "argument --interface: invalid choice: 'ME' (choose from 'cs', 'me', 'both')"),
    (["--kind", "pythonfmu", "--fmi", "3"], 2, "mbsfmu: error: the pythonfmu kind builds FMI 2.0 "
     "Co-Simulation FMUs only: for FMI 3.0 Co-Simulation build the native kind (the default)"),
    (["--kind", "pythonfmu", "--interface", "both"], 2, "mbsfmu: error: the pythonfmu kind builds FMI "
     "2.0 Co-Simulation FMUs only: for FMI 2.0 Co-Simulation and Model Exchange build the native kind"),
])
def test_bad_fmi_option_on_the_command_line(tmp_path, capsys, argv, status, message):
    out = tmp_path / "x.fmu"
    try:
        code = main(["build", str(CART), "-o", str(out), *argv])
    except SystemExit as e:  # argparse's refusal of a choice
        code = e.code
    assert code == status
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []

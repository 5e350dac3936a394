"""Catalogue of bad inputs and stops of `mbsfmu simulate` / `mbsfmu animate`, the animation API and
the UDP blocks (issue 23 items 5 and 7).

Each case is one bad input: the command's exit status (CLI) or the exception type (API), and a
regular expression the message must match that names the culprit (the option, file, line and
column, parameter or port).  A refused command writes nothing.  The stops (SIGTERM on simulate
and sweep, a failing or stopped animate) run real processes and send the signal once the command
has made progress.  Beside these, the other cases of this part of the issue are tested where their
subject lives: the stiffness diagnostic (tests/simulation/test_long_runs.py: plain pendulums over long spans
and at every tolerance are never called stiff, the stiff spring-damper slider-crank and the
flyball governor are), simulate's times (tests/simulation/test_run_clock.py) and a UDP burst that no packet
follows (tests/runner/test_hil_udp.py).
"""

import math
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import psutil
import pytest
import sympy
from mesh_files import write_cone
from slow_cases import cases
from stiff_pendulum import STIFF_MODEL

import mbsfmu
from blocks import UdpReceive, UdpSend
from mbsfmu import rot_x
from mbsfmu.animation.scene import check_drawable
from mbsfmu.cli import ANIMATE_T_END, EXIT_INTERRUPTED, EXIT_TERMINATED, main
from mbsfmu.core.errors import ModelError, ParameterError
from mbsfmu.model.meshes import MAX_TRIANGLES
from mbsfmu.runner import BlockError
from mbsfmu.runner.udp_protocol import ProtocolError
from mbsfmu.simulation import Result

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
CART, DP, SLIDER = (str(MODELS / f"{n}.py") for n in ("cart_pendulum", "double_pendulum", "slider_crank"))
FLEX = str(MODELS / "flexible_double_pendulum.py")

#: a pendulum driven by a torque that grows without bound as t -> 0.3 s: the run fails there
BLOWUP = '''\
from mbsfmu import System, rot_x


def model():
    s = System("blowup")
    a, = s.coordinates("a")
    s.gravity([0, 0, -9.81])
    s.body("P1", rel_rot=rot_x(a), cg_pos=[0, 0, -1.0], mass=1.0, inertia=[0.01, 1, 1])
    s.generalized_force("push", "a", 1 / (0.3 - s.t) ** 2)
    s.initial(a=0.2)
    return s
'''

#: the double pendulum's result CSV header and two good rows
HEADER = b"time,alpha,phi,der(alpha),der(phi)\n"
GOOD = b"0.0,0.4,1.5,0.0,0.0\n0.1,0.41,1.49,0.1,-0.1\n"


@pytest.fixture
def files(tmp_path):
    """The files the cases name: {tmp} the folder, a result CSV of the double pendulum, a copy of
    the cart-pendulum model, a model that fails at t = 0.3 s and one that calls sys.exit."""
    (tmp_path / "dp.csv").write_bytes(HEADER + GOOD)
    (tmp_path / "cart.py").write_text(pathlib.Path(CART).read_text())
    (tmp_path / "blowup.py").write_text(BLOWUP)
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(3)\n")
    return tmp_path


def run_cli(argv, capsys):
    """(exit status, stderr) of `mbsfmu ARGV` run in this process (argparse's own refusals exit)."""
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exc:
        status = exc.code
    return status, capsys.readouterr().err


# ---------------------------------------------------------------- mbsfmu simulate
SIMULATE_CASES = [
    ("t-end nan", ["--t-end", "nan"], r"t_end must be a positive number, got nan"),
    ("t-end missing", [], r"the following arguments are required: --t-end"),
    ("t-end overflow", ["--t-end", "1e400"], r"t_end must be a positive number, got inf"),
    ("rtol zero", ["--t-end", "1", "--rtol", "0"], r"rtol = 0\.0 is outside its range \[1e-14, 0\.1\]"),
    ("t-end text", ["--t-end", "soon"], r"argument --t-end: invalid float value: 'soon'"),
    ("dt negative", ["--t-end", "1", "--dt", "-1"], r"dt must be a positive number, got -1.0"),
    ("atol nan", ["--t-end", "1", "--atol", "nan"],
     r"atol = nan is outside its range 0 \(derived from rtol\) or \(0, 1\]"),
    ("method empty", ["--t-end", "1", "--method", ""],
     r"unknown method ''; use one of 'explicit', 'rkstab', 'dop853', 'stiff' or a scipy method"),
    ("backend unknown", ["--t-end", "1", "--backend", "gpu"], r"argument --backend: invalid choice: 'gpu'"),
    ("set initial nan", ["--t-end", "1", "--set", "theta=nan"], r"initial value 'theta': nan is not finite"),
    ("set input inf", ["--t-end", "1", "--set", "F=inf"], r"input 'F': inf is not finite"),
    ("set velocity overflow", ["--t-end", "1", "--set", "Dtheta=1e400"],
     r"initial value 'Dtheta': inf is not finite"),
    ("set no name", ["--t-end", "1", "--set", "=1"],
     r"--set : no constant, coordinate, named initial condition or input of that name"),
    ("set unknown velocity", ["--t-end", "1", "--set", "der(zz)=1"],
     r"--set der\(zz\): no constant, coordinate, named initial condition or input of that name in "
     r"'cart_pendulum'"),
    ("out empty", ["--t-end", "1", "--out", ""], r"--out '' is a directory; give a file name"),
    ("out is the model", ["--t-end", "1", "--out", "{tmp}/cart.py"],
     r"--out '.*cart\.py' is the model file: writing it would destroy it"),
    ("plot is the out file", ["--t-end", "1", "--plot", "{tmp}/o.csv"],
     r"--plot '.*o\.csv' is the --out file: writing it would destroy it"),
    ("plot not an image", ["--t-end", "1", "--plot", "{tmp}/p.txt"],
     r"--plot '.*p\.txt': '\.txt' is not an image format; end the name in one of .*\.png"),
    ("plot without suffix", ["--t-end", "1", "--plot", "{tmp}/p"],
     r"--plot '.*/p': no suffix says the image format"),
    ("plot in a missing folder", ["--t-end", "1", "--plot", "{tmp}/no/p.png"],
     r"--plot '.*/no/p\.png': the directory '.*/no' does not exist"),
    # the interactive page of the plot (issue 27 item 5)
    ("plot page misspelt", ["--t-end", "1", "--plot", "{tmp}/p.htm"],
     r"--plot '.*p\.htm': '\.htm' is not an image format; end the name in one of .*\.png.*, "
     r"or \.html for an interactive page"),
    ("plot page in a folder not writable", ["--t-end", "1", "--plot", "/proc/p.html"],
     r"--plot '/proc/p\.html': cannot write in '/proc'"),
    ("plot page a folder", ["--t-end", "1", "--plot", "{tmp}"],
     r"--plot '.*' is a directory; give a file name"),
]
MODEL_FILE_CASES = [
    ("model is a folder", "{tmp}", r"model file '.*' is a directory; give the model's \.py file"),
    ("model not Python", "/etc/hostname",
     r"model file '/etc/hostname' is not a Python file: a model file is a "
                                          r"\.py file with a model\(\) function"),
    ("model calls sys.exit", "{tmp}/exits.py", r"exits\.py: importing the model file failed: SystemExit: 3"),
    ("model missing", "{tmp}/none.py", r"model file '.*none\.py' does not exist"),
]


@pytest.mark.parametrize("args, pattern", [c[1:] for c in SIMULATE_CASES], ids=[c[0] for c in SIMULATE_CASES])
def test_simulate(files, capsys, args, pattern):
    args = [a.replace("{tmp}", str(files)) for a in args]
    out = [] if "--out" in args else ["--out", str(files / "o.csv")]
    status, err = run_cli(["simulate", str(files / "cart.py"), *args, *out], capsys)
    assert status == 2 and re.search(pattern, err), err
    assert "Traceback" not in err and not (files / "o.csv").exists()
    assert (files / "cart.py").read_text() == pathlib.Path(CART).read_text()


@pytest.mark.parametrize("model, pattern", [c[1:] for c in MODEL_FILE_CASES],
                         ids=[c[0] for c in MODEL_FILE_CASES])
def test_simulate_model_files(files, capsys, model, pattern):
    status, err = run_cli(["simulate", model.replace("{tmp}", str(files)), "--t-end", "1",
                           "--out", str(files / "o.csv")], capsys)
    assert status == 2 and err.startswith("mbsfmu: error: ") and re.search(pattern, err), err


# ---------------------------------------------------------------- mbsfmu animate
ANIMATE_CASES = [
    ("fps negative", ["{tmp}/dp.csv", "--model", DP, "--fps", "-1"],
     r"fps must be a positive number, got -1\.0"),
    ("fps beyond a GIF", ["{tmp}/dp.csv", "--model", DP, "--fps", "1000"],
     r"fps must be at most 100 frames per second, got 1000\.0"),
    ("fps nan", ["{tmp}/dp.csv", "--model", DP, "--fps", "nan"], r"fps must be a positive number, got nan"),
    ("dpi inf", ["{tmp}/dp.csv", "--model", DP, "--dpi", "inf"], r"dpi must be a positive number, got inf"),
    ("every negative", [DP, "--every", "-2"], r"every must be a positive integer, got -2"),
    ("every zero", ["{tmp}/dp.csv", "--model", DP, "--every", "0"],
     r"every must be a positive integer, got 0"),
    ("every not whole", ["{tmp}/dp.csv", "--model", DP, "--every", "1.5"],
     r"argument --every: invalid int value"),
    ("dpi huge", ["{tmp}/dp.csv", "--model", DP, "--dpi", "1e6"],
     r"dpi 1e\+06 x size 5 in = 5000000 pixels a side, more than 4000"),
    ("dpi zero", ["{tmp}/dp.csv", "--model", DP, "--dpi", "0"], r"dpi must be a positive number, got 0\.0"),
    ("out without suffix", ["{tmp}/dp.csv", "--model", DP, "--out", "{tmp}/a"], r"unknown suffix '\(none\)'"),
    ("out mp4", ["{tmp}/dp.csv", "--model", DP, "--out", "{tmp}/a.mp4"],
     r"unknown suffix '\.mp4'; write \.html"),
    ("out in a missing folder", [DP, "--out", "{tmp}/no/a.gif"],
     r"--out '.*/no/a\.gif': the directory .* does not exist"),
    ("model of a CSV is a CSV", ["{tmp}/dp.csv", "--model", "{tmp}/dp.csv"],
     r"model file '.*dp\.csv' is not a Python file"),
    ("CSV without its model", ["{tmp}/dp.csv"], r"a result CSV needs its model: --model MODEL\.py"),
    ("CSV of another model", ["{tmp}/dp.csv", "--model", SLIDER],
     r"does not match model 'slider_crank': missing column\(s\) x, beta, der\(x\), der\(beta\)"),
    ("CSV missing", ["{tmp}/none.csv", "--model", DP],
     r"cannot read result CSV '.*none\.csv' \(No such file"),
    ("CSV with --set of a coordinate", ["{tmp}/dp.csv", "--model", DP, "--set", "alpha=1"],
     r"with a result CSV, --set takes constants only"),
    ("CSV with --t-end", ["{tmp}/dp.csv", "--model", DP, "--t-end", "1"], r"--t-end is for a model file"),
    ("model with --model", [DP, "--model", DP], r"--model is for a result CSV"),
    ("neither model nor CSV", ["{tmp}/x.txt"], r"'.*x\.txt' is neither a model \(\.py\) nor a result CSV"),
    ("t-end negative", [DP, "--t-end", "-1"], r"t_end must be a positive number, got -1\.0"),
    ("too many frames", [DP, "--t-end", "1e6"],
     r"25000001 frames are more than 10000; keep every n-th sample with n >= 2501"),
    ("too many frames kept", [DP, "--t-end", "1e6", "--every", "2"],
     r"12500001 frames \(one in 2 of 25000001 samples\) are more than 10000"),
    ("dt zero", [DP, "--dt", "0"], r"dt must be a positive number, got 0\.0"),
    ("method unknown", [DP, "--method", "nope"], r"unknown method 'nope'"),
    ("trace unknown", ["{tmp}/dp.csv", "--model", DP, "--out", "{tmp}/a.html", "--trace", "tip"],
     r"animate: traces: unknown frame 'tip' \(frames: ISYS, P1, P1_cg, P2, P2_cg\)"),
    ("axes unknown before simulating", [DP, "--out", "{tmp}/a.html", "--axes", "P9"],
     r"animate: axes: unknown frame 'P9' \(frames: ISYS, P1, P1_cg, P2, P2_cg\)"),
    ("trace in a GIF", [DP, "--trace", "P2_cg"],
     r"animate: traces and axes are drawn by the 3D viewer only \(an \.html file with player '3d'\), "
     r"not in '.*a\.gif' with player '3d'"),
    ("player unknown", ["{tmp}/dp.csv", "--model", DP, "--player", "vr"],
     r"argument --player: invalid choice: 'vr' \(choose from '?3d'?, '?images'?\)"),
    ("deformation scale zero", [FLEX, "--deformation-scale", "0"],
     r"animate: deformation_scale must be a finite number > 0, got 0\.0"),
    ("deformation scale nan", ["{tmp}/dp.csv", "--model", DP, "--deformation-scale", "nan"],
     r"animate: deformation_scale must be a finite number > 0, got nan"),
    ("deformation scale of a rigid model", [DP, "--deformation-scale", "100"],
     r"animate: deformation_scale 100 scales flexible bodies' elastic coordinates, and model "
     r"'double_pendulum' has no flexible body; leave it at 1"),
    ("deformation scale text", [FLEX, "--deformation-scale", "big"],
     r"argument --deformation-scale: invalid float value: 'big'"),
]

#: result CSVs that animate refuses, named by line and column (the bytes after the header)
CSV_CASES = [
    ("NaN", b"0.0,0.4,1.5,0,0\n0.1,nan,1.5,0,0\n", r"line 3, column 'alpha': nan is not a finite number"),
    ("Inf", b"0.0,0.4,1.5,0,0\n0.1,0.4,1.5,-inf,0\n",
     r"line 3, column 'der\(alpha\)': -inf is not a finite number"),
    ("text", b"0.0,0.4,1.5,0,0\n0.1,0.4,abc,0,0\n", r"line 3, column 'phi': 'abc' is not a number"),
    ("empty value", b"0.0,0.4,1.5,0,0\n0.1,0.4,,0,0\n", r"line 3, column 'phi': '' is not a number"),
    ("time backwards", b"0.0,0.4,1.5,0,0\n-0.1,0.4,1.5,0,0\n",
     r"line 3, column 'time': -0\.1 does not come after 0\.0 on line 2 \(time must increase"),
    ("time repeated", b"0.0,0.4,1.5,0,0\n0.1,0.4,1.5,0,0\n0.1,0.4,1.5,0,0\n",
     r"line 4, column 'time': 0\.1 does not come after 0\.1 on line 3"),
    ("time nan", b"nan,0.4,1.5,0,0\n", r"line 2, column 'time': nan is not a finite number"),
    ("undecodable byte", b"0.0,0.4,1.5,0,0\n0.1,0.4,1.5\xff,0,0\n",
     r"line 3, column 'phi': byte 0xff at offset \d+ is not UTF-8 text"),
    ("latin-1 header", None, r"line 1: byte 0xe9 at offset \d+ is not UTF-8 text"),
    ("NUL byte", b"0.0,0.4,1.5,0,0\x00\n", r"line 2, column 'der\(phi\)': '0\\x00' is not a number"),
    ("short row", b"0.0,0.4,1.5,0,0\n0.1,0.4,1.5,0\n", r"line 3: 4 values for the 5 columns of the header"),
    ("header only", b"", r"has no rows"),
]


def _csv_case(files, body):
    p = files / "bad.csv"
    if body is None:  # a header in Latin-1 (an 'é' in a column name)
        p.write_bytes("time,alpha,phi,der(alpha),der(phi),r\u00e9sum\u00e9\n".encode("latin-1") + GOOD)
    else:
        p.write_bytes(HEADER + body)
    return p


@pytest.mark.parametrize("args, pattern", cases(ANIMATE_CASES, slow={"too many frames"}))
def test_animate(files, capsys, args, pattern):
    args = [a.replace("{tmp}", str(files)) for a in args]
    out = [] if "--out" in args else ["--out", str(files / "a.gif")]
    started = time.perf_counter()
    status, err = run_cli(["animate", *args, *out], capsys)
    assert status == 2 and re.search(pattern, err), err  # (argparse's own refusals start with its usage)
    assert "Traceback" not in err and not list(files.glob("a.*")) and not list(files.glob("*.partial.*"))
    assert time.perf_counter() - started < 60  # refused before any simulation or drawing


@pytest.mark.parametrize("body, pattern", [c[1:] for c in CSV_CASES], ids=[c[0] for c in CSV_CASES])
def test_animate_refuses_a_damaged_result_csv(files, capsys, body, pattern):
    bad = _csv_case(files, body)
    status, err = run_cli(["animate", bad, "--model", DP, "--out", files / "a.gif"], capsys)
    assert status == 2 and re.search(rf"result CSV '.*bad\.csv'.*{pattern}", err), err
    assert not (files / "a.gif").exists()
    with pytest.raises(ParameterError, match=pattern):  # the API reads it the same way
        Result.read_csv(bad, mbsfmu.load_model(DP))


def test_animate_reads_what_other_tools_write(files, capsys):
    """Not refused: a byte-order mark (Excel), CRLF line ends, blank lines, a quoted text column
    with a line break, extra columns."""
    body = GOOD.replace(b"\n", b",x\r\n").replace(b"0.1,", b'\r\n0.1,', 1)
    p = files / "ok.csv"
    body = body.replace(b",x\r\n", b',"a\nb"\r\n', 1)
    p.write_bytes(b"\xef\xbb\xbf" + HEADER.replace(b"\n", b",note\r\n") + body)
    status, err = run_cli(["animate", p, "--model", DP, "--out", files / "ok.gif", "--dpi", "20"], capsys)
    assert status == 0, err
    res = Result.read_csv(p, mbsfmu.load_model(DP))
    np.testing.assert_array_equal(res.t, [0.0, 0.1])
    np.testing.assert_array_equal(res["phi"], [1.5, 1.49])


# ---------------------------------------------------------------- the animation API
_DP = []


def _dp_result():
    if not _DP:
        _DP.append(mbsfmu.simulate(DP, t_end=0.2, dt=0.1, backend="numpy"))
    return _DP[0]


def _long_result():
    r = _dp_result()
    n = 20_001
    z = np.zeros((2, n))
    return Result(r.numeric, np.arange(n) * 1e-3, z, z)


def _bare_natural():
    s = mbsfmu.LagrangianSystem("bare", dim=2)
    s.point("A", initial=(0.0, 1.0))
    return s


def _visual(**kw):
    return lambda: mbsfmu.load_model(DP).visual(**{"name": "P1", "shape": "sphere", "size": 0.1, **kw})


API_CASES = [
    ("every not whole", lambda: _dp_result().animate(every=2.5), ParameterError,
     r"every must be a positive integer, got 2\.5"),
    ("every True", lambda: _dp_result().animate(every=True), ParameterError,
     r"every must be a positive integer, got True"),
    ("fps text", lambda: _dp_result().animate(fps="fast"), ParameterError,
     r"fps must be a positive number, got 'fast'"),
    ("fps nan", lambda: _dp_result().animate(fps=math.nan), ParameterError,
     r"fps must be a positive number, got nan"),
    ("fps too fast", lambda: _dp_result().animate(fps=500), ParameterError, r"fps must be at most 100"),
    ("dpi text", lambda: _dp_result().animate(dpi="80"), ParameterError,
     r"dpi must be a positive number, got '80'"),
    ("size zero", lambda: _dp_result().animate(size=0), ParameterError,
     r"size must be a positive number, got 0"),
    ("image too large", lambda: _dp_result().animate(size=100.0), ParameterError,
     r"8000 pixels a side, more than 4000"),
    ("too many frames", lambda: _long_result().animate(), ParameterError,
     r"20001 frames are more than 10000; keep every n-th sample with n >= 3"),
    ("path in a missing folder", lambda: _dp_result().animate("/nonexist/x.gif"), ParameterError,
     r"animate: path '/nonexist/x\.gif': the directory '/nonexist' does not exist"),
    ("path in a folder not writable", lambda: _dp_result().animate("/proc/x.gif"), ParameterError,
     r"animate: path '/proc/x\.gif': cannot write in '/proc'"),
    ("path is a folder", lambda: _dp_result().animate("/tmp"), ParameterError,
     r"animate: path '/tmp' is a directory"),
    ("path a number", lambda: _dp_result().animate(3), ParameterError,
     r"animate: path must be a file name, got 3"),
    ("path mp4", lambda: _dp_result().animate("x.mp4"), ParameterError, r"unknown suffix '\.mp4'"),
    ("player unknown", lambda: _dp_result().animate("x.html", player="vr"), ParameterError,
     r"animate: player must be one of '3d', 'images', got 'vr'"),
    ("natural model without elements", lambda: check_drawable(_bare_natural()), ModelError,
     r"animate: model 'bare' has no rod, point mass, rigid body or distance constraint, so there is "
     r"nothing to draw"),
    ("trace unknown frame", lambda: _dp_result().animate(traces=["tip"]), ParameterError,
     r"animate: traces: unknown frame 'tip' \(frames: ISYS, P1, P1_cg, P2, P2_cg\)"),
    ("axes with images", lambda: _dp_result().animate("x.html", player="images", axes=["P1"]), ParameterError,
     r"traces and axes are drawn by the 3D viewer only .*not in 'x\.html' with player 'images'"),
    ("axes a number", lambda: _dp_result().animate(axes=3), ParameterError,
     r"animate: axes must be frame names, got 3"),
    ("player None", lambda: _dp_result().animate(player=None), ParameterError,
     r"animate: player must be one of '3d', 'images', got None"),
    # Result.plot: an image or an interactive page (issue 27 item 5)
    ("plot page misspelt", lambda: _dp_result().plot("/tmp/p.htm"), ParameterError,
     r"plot '/tmp/p\.htm': '\.htm' is not an image format; end the name in one of .*\.png.*, "
     r"or \.html for an interactive page"),
    ("plot page a folder", lambda: _dp_result().plot("/tmp"), ParameterError,
     r"plot '/tmp' is a directory; give a file name"),
    ("plot page in a folder not writable", lambda: _dp_result().plot("/proc/p.html"), ParameterError,
     r"plot '/proc/p\.html': cannot write in '/proc'"),
    ("plot page in a missing folder", lambda: _dp_result().plot("/nonexist/p.html"), ParameterError,
     r"plot '/nonexist/p\.html': the directory '/nonexist' does not exist"),
    ("plot page of an unknown signal", lambda: _dp_result().plot("/tmp/p.html", signals=["q"]), KeyError,
     r"no signal 'q' in the result \(signals: time, alpha, phi, der\(alpha\), der\(phi\)\)"),
    ("read_csv None", lambda: Result.read_csv(None, mbsfmu.load_model(DP)), ParameterError,
     r"result CSV: a file name is needed, got None"),
    ("read_csv folder", lambda: Result.read_csv("/tmp", mbsfmu.load_model(DP)), ParameterError,
     r"cannot read result CSV '/tmp' \(Is a directory\)"),
    ("visual unknown", _visual(name="nope"), ModelError,
     r"visual\('nope'\): no body, frame or flexible body"),
    ("visual shape", _visual(shape="cone"), ModelError, r"visual of 'P1': unknown shape 'cone'"),
    ("visual negative size", _visual(size=-1), ModelError,
     r"visual of 'P1': the radius of the sphere must be"),
    ("visual nan size", _visual(size=math.nan), ModelError, r"visual of 'P1': the radius .* got nan"),
    ("visual box of 2", _visual(shape="box", size=[1, 2]), ModelError,
     r"shape 'box' takes 3 size value\(s\)"),
    ("visual colour", _visual(color="notacolor"), ModelError, r"'notacolor' is not a matplotlib colour"),
    ("deformation scale negative", lambda: _dp_result().animate(deformation_scale=-2), ParameterError,
     r"animate: deformation_scale must be a finite number > 0, got -2"),
    ("deformation scale inf", lambda: _dp_result().animate(deformation_scale=math.inf), ParameterError,
     r"animate: deformation_scale must be a finite number > 0, got inf"),
    ("deformation scale text", lambda: _dp_result().animate(deformation_scale="10"), ParameterError,
     r"animate: deformation_scale must be a finite number > 0, got '10'"),
    ("deformation scale of a rigid model", lambda: _dp_result().animate(deformation_scale=10), ParameterError,
     r"animate: deformation_scale 10 scales flexible bodies' elastic coordinates, and model "
     r"'double_pendulum' has no flexible body; leave it at 1"),
]


@pytest.mark.parametrize("call, exc, pattern", [c[1:] for c in API_CASES], ids=[c[0] for c in API_CASES])
def test_animation_api(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


# ---------------------------------------------------------------- mesh shapes of System.visual
def _binary_stl(path, triangles):
    """A binary STL of ``triangles`` (n, 3, 3): 80-byte header, count, 50 bytes per triangle."""
    rec = np.zeros(len(triangles), dtype=[("normal", "<f4", 3), ("v", "<f4", (3, 3)), ("attr", "<u2")])
    rec["v"] = triangles
    path.write_bytes(b"\0" * 80 + np.uint32(len(triangles)).tobytes() + rec.tobytes())


@pytest.fixture
def mesh_files(tmp_path):
    """Bad mesh files in tmp_path (and one good cone) named by what is wrong with them."""
    write_cone(tmp_path, "stl")
    (tmp_path / "empty.stl").write_bytes(b"")
    (tmp_path / "text.stl").write_text("this is no mesh\n" * 10)
    (tmp_path / "truncated.stl").write_bytes((tmp_path / "cone.stl").read_bytes()[:200])
    (tmp_path / "nan.obj").write_text("v 0 0 0\nv 1 0 0\nv nan 1 0\nf 1 2 3\n")
    (tmp_path / "no_faces.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\n")
    (tmp_path / "bad_index.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n")
    (tmp_path / "flat.obj").write_text("v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n")
    (tmp_path / "folder.stl").mkdir()
    (tmp_path / "cone.ply").write_bytes(b"ply\n")
    rng = np.random.default_rng(27)
    _binary_stl(tmp_path / "huge.stl", rng.random((MAX_TRIANGLES + 1, 3, 3)))
    return tmp_path


MESH_CASES = [
    ("missing file", {"file": "{tmp}/none.stl"},
     r"visual of 'P2': mesh file '.*/none\.stl': no such file \(relative paths start at the working "
     r"directory '.*'\)"),
    ("no file", {}, r"visual of 'P2': a mesh needs its file \(file='part\.stl' or \.obj\), got None"),
    ("file a number", {"file": 3}, r"visual of 'P2': a mesh needs its file .*got 3"),
    ("folder", {"file": "{tmp}/folder.stl"}, r"mesh file '.*folder\.stl': is a directory, not a mesh file"),
    ("ply", {"file": "{tmp}/cone.ply"}, r"mesh file '.*cone\.ply': unknown suffix '\.ply'; mesh files are "
                                        r"\.stl, \.obj"),
    ("empty STL", {"file": "{tmp}/empty.stl"},
     r"mesh file '.*empty\.stl': no triangle read from it \(0 vertices\): an empty or damaged file, or "
     r"not STL"),
    ("text as STL", {"file": "{tmp}/text.stl"}, r"mesh file '.*text\.stl': no triangle read from it"),
    ("truncated binary STL", {"file": "{tmp}/truncated.stl"}, r"'.*truncated\.stl': no triangle read"),
    ("OBJ without faces", {"file": "{tmp}/no_faces.obj"},
     r"'.*no_faces\.obj': no triangle read from it \(0 vertices\)"),
    ("OBJ vertex not finite", {"file": "{tmp}/nan.obj"},
     r"visual of 'P2': mesh file '.*nan\.obj': vertex 2 is not finite \(\[nan, 1\.0, 0\.0\]; 1 of 3 "
     r"vertices are not\)"),
    ("OBJ face of a missing vertex", {"file": "{tmp}/bad_index.obj"},
     r"mesh file '.*bad_index\.obj': not a readable OBJ mesh \(IndexError: "),
    ("triangles of no area", {"file": "{tmp}/flat.obj"},
     r"'.*flat\.obj': its 1 triangles have no area \(all vertices on one point or line\)"),
    ("too many triangles", {"file": "{tmp}/huge.stl"},
     r"visual of 'P2': mesh file '.*huge\.stl': 100001 triangles and 300003 vertices, more than 100000 "
     r"triangles or 100000 vertices; simplify the mesh"),
    ("scale negative", {"file": "{tmp}/cone.stl", "size": -1},
     r"visual of 'P2': the mesh's scale must be 1 or 3 positive numbers, got -1"),
    ("scale of two", {"file": "{tmp}/cone.stl", "size": (1, 2)},
     r"the mesh's scale must be 1 or 3 .*got \(1, 2\)"),
    ("offset nan", {"file": "{tmp}/cone.stl", "offset": (0, 0, math.nan)},
     r"visual of 'P2': the mesh's offset must be 3 finite numbers, got \(0, 0, nan\)"),
    ("rotation a reflection", {"file": "{tmp}/cone.stl", "rotation": np.diag([1.0, 1.0, -1.0])},
     r"visual of 'P2': the mesh's rotation must be a 3x3 rotation matrix \(orthonormal, determinant \+1\) "
     r"or a rotation of constant angles \(e\.g\. rot_z\(0\.3\)\), got \[\[1\.0, 0\.0, 0\.0\], "),
    ("rotation of a coordinate", {"file": "{tmp}/cone.stl", "rotation": rot_x(sympy.Symbol("alpha"))},
     r"the mesh's rotation must be a 3x3 rotation matrix .*got Rotation"),
    ("file for a sphere", {"shape": "sphere", "size": 0.1, "file": "{tmp}/cone.stl"},
     r"visual of 'P2': file, offset and rotation are for shape 'mesh', not 'sphere'"),
    ("mesh on a flexible body", {"name": "FLEX:P1", "file": "{tmp}/cone.stl"},
     r"visual of 'P1': a flexible body is drawn as a line through its nodes"),
]


@pytest.mark.parametrize("kw, pattern", [c[1:] for c in MESH_CASES], ids=[c[0] for c in MESH_CASES])
def test_visual_mesh_refuses(mesh_files, kw, pattern):
    """Each bad mesh is a ModelError naming the body and the file; the refused call changes no
    visual of the model."""
    kw = {k: v.replace("{tmp}", str(mesh_files)) if isinstance(v, str) else v for k, v in kw.items()}
    name = kw.pop("name", "P2")
    s = mbsfmu.load_model(FLEX if name.startswith("FLEX:") else DP)
    before = dict(s.visuals)
    with pytest.raises(ModelError, match=pattern):
        s.visual(name.removeprefix("FLEX:"), **{"shape": "mesh", **kw})
    assert s.visuals == before


# ---------------------------------------------------------------- UDP blocks
def _started(block):
    block.start(0.0, 0.01)
    return block


def _in_use():
    a = _started(UdpReceive(0))
    try:
        _started(UdpReceive(a.address[1]))
    finally:
        a.stop()


def _send(host="127.0.0.1", values=(1.0,), t=0.0, start=True, **kw):
    def call():
        tx = UdpSend(host, 9, **kw)
        if start:
            tx.start(0.0, 0.01)
        try:
            tx.update(t, values)
        finally:
            tx.stop()
    return call


UDP_CASES = [
    ("port text", lambda: UdpReceive("80"), BlockError,
     r"UdpReceive port must be an integer UDP port in 0\.\.65535, got '80'"),
    ("port too big", lambda: UdpReceive(70000), BlockError, r"UdpReceive port .* got 70000"),
    ("port float", lambda: UdpReceive(80.0), BlockError, r"UdpReceive port .* got 80\.0"),
    ("host empty", lambda: UdpReceive(0, host=""), BlockError,
     r"UdpReceive host must be a host name .* got ''"),
    ("host number", lambda: UdpReceive(0, host=3), BlockError, r"UdpReceive host .* got 3"),
    ("timeout negative", lambda: UdpReceive(0, timeout=-1), BlockError,
     r"UdpReceive timeout must be >= 0 seconds"),
    ("timeout nan", lambda: UdpReceive(0, timeout=math.nan), BlockError,
     r"UdpReceive timeout must be finite, got nan"),
    ("timeout a hang", lambda: UdpReceive(0, timeout=1e12), BlockError,
     r"UdpReceive timeout must be at most 3600 seconds \(the wait of one sample; longer is a hang\)"),
    ("policy", lambda: UdpReceive(0, policy="drop"), BlockError,
     r"UdpReceive policy must be one of .* got 'drop'"),
    ("initial count", lambda: UdpReceive(0, outputs=("a", "b"), initial=(1, 2, 3)), BlockError,
     r"UdpReceive initial has 3 values for outputs \('a', 'b'\)"),
    ("initial text", lambda: UdpReceive(0, initial="x"), BlockError,
     r"UdpReceive initial y must be a real number"),
    ("max_age zero", lambda: UdpReceive(0, max_age=0), BlockError,
     r"UdpReceive max_age must be positive seconds"),
    ("max_age nan", lambda: UdpReceive(0, max_age=math.nan), BlockError,
     r"UdpReceive max_age must be finite"),
    ("rcvbuf tiny", lambda: UdpReceive(0, rcvbuf=10), BlockError,
     r"UdpReceive rcvbuf must be a whole number of bytes"),
    ("rcvbuf bool", lambda: UdpReceive(0, rcvbuf=True), BlockError, r"UdpReceive rcvbuf .* got True"),
    ("outputs twice", lambda: UdpReceive(0, outputs=("y", "y")), BlockError,
     r"UdpReceive outputs: duplicate port name\(s\) y"),
    ("outputs with a dot", lambda: UdpReceive(0, outputs=("a.b",)), BlockError,
     r"port name 'a\.b' must be .* without '\.'"),
    ("outputs beyond a datagram", lambda: UdpReceive(0, outputs=[f"y{i}" for i in range(9000)]), BlockError,
     r"UdpReceive outputs: 9000 ports, more than the 8185 values one datagram carries"),
    ("inputs beyond a datagram", lambda: UdpSend("127.0.0.1", 9, inputs=[f"u{i}" for i in range(9000)]),
     BlockError,
     r"UdpSend inputs: 9000 ports, more than the 8185 values"),
    ("send port 0", lambda: UdpSend("127.0.0.1", 0), BlockError,
     r"UdpSend port must be an integer UDP port in 1\.\.65535"),
    ("send host None", lambda: UdpSend(None, 9), BlockError, r"UdpSend host .* got None"),
    ("send bind single", lambda: UdpSend("127.0.0.1", 9, bind=("127.0.0.1",)), BlockError,
     r"UdpSend bind must be a \(host, port\) pair"),
    ("send bind port", lambda: UdpSend("127.0.0.1", 9, bind=("127.0.0.1", 70000)), BlockError,
     r"UdpSend bind port .* got 70000"),
    ("sample time negative", lambda: UdpReceive(0, sample_time=-1), BlockError,
     r"sample_time must be positive"),
    ("bind a bad address", lambda: _started(UdpReceive(0, host="256.1.1.1")), BlockError,
     r"UdpReceive: cannot bind 256\.1\.1\.1:0"),
    ("port in use", _in_use, BlockError,
     r"UdpReceive: cannot bind 127\.0\.0\.1:\d+: .*Address already in use"),
    ("receive before start", lambda: UdpReceive(0).output(0.0, ()), BlockError,
     r"UdpReceive on 127\.0\.0\.1:0 .*output before start"),
    ("send before start", _send(start=False), BlockError, r"UdpSend to 127\.0\.0\.1:9: update before start"),
    ("send to no such host", _send(host="no.such.host.invalid"), BlockError,
     r"UdpSend to no\.such\.host\.invalid:9: sequence 0 not sent"),
    ("send wrong count", _send(values=(1.0, 2.0)), BlockError,
     r"UdpSend to .*: 2 input values for ports \('u',\)"),
    ("send text", _send(values=("x",)), BlockError,
     r"UdpSend to 127\.0\.0\.1:9: input u = 'x' is not a number"),
    ("send at t = nan", _send(t=math.nan), ProtocolError,
     r"UdpSend to 127\.0\.0\.1:9: sequence 0 at t=nan: timestamp nan is not finite"),
]


@pytest.mark.parametrize("call, exc, pattern", cases(UDP_CASES, slow={"outputs beyond a datagram",
                                                            "inputs beyond a datagram"}))
def test_udp_blocks(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


# ---------------------------------------------------------------- stops: nothing computed is lost
def start(*args):
    return subprocess.Popen([sys.executable, "-m", "mbsfmu", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)


def read_until(proc, pattern, timeout=180.0):
    """stderr of ``proc`` until ``pattern`` appears in it: the command has made progress."""
    deadline, seen = time.monotonic() + timeout, ""
    while time.monotonic() < deadline:
        chunk = os.read(proc.stderr.fileno(), 4096).decode()
        seen += chunk
        if re.search(pattern, seen):
            return seen
        if not chunk:
            break
    proc.kill()
    raise AssertionError(f"no {pattern!r} from {proc.args}: {seen[-2000:]}")


def terminate(proc, timeout=120.0) -> str:
    """SIGTERM to ``proc``; its remaining stderr once it has ended."""
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        proc.kill()
        raise


def test_exit_statuses_are_the_shells():
    assert (EXIT_INTERRUPTED, EXIT_TERMINATED) == (130, 143)


@pytest.fixture(scope="module")
def elastic(tmp_path_factory):
    """tests/support/stiff_pendulum.py's stiff elastic pendulum: the explicit run takes about a second per
    2 s simulated, so a run of 100 s is under way for a while."""
    p = tmp_path_factory.mktemp("stop") / "elastic_pendulum.py"
    p.write_text(STIFF_MODEL)
    return p


def test_sigterm_on_simulate_writes_the_partial_result(elastic, tmp_path):
    """As Ctrl-C (tests/simulation/test_long_runs.py): the rows computed so far in out.partial.csv on the
    output grid, out.csv not written, exit status 143."""
    out = tmp_path / "out.csv"
    proc = start("simulate", elastic, "--t-end", "100", "--dt", "0.002", "--out", out, "--progress")
    seen = read_until(proc, r"t=(0\.0[1-9]|0\.[1-9]|[1-9])")  # past its first output rows
    stderr = seen + terminate(proc)
    assert proc.returncode == 143, stderr[-2000:]
    assert "mbsfmu: terminated (SIGTERM)" in stderr and "Traceback" not in stderr
    partial = tmp_path / "out.partial.csv"
    assert f"written to {partial}" in stderr and not out.exists()
    data = np.loadtxt(partial, delimiter=",", skiprows=1, ndmin=2)
    assert len(data) >= 5
    np.testing.assert_allclose(data[:, 0], 0.002 * np.arange(len(data)), atol=1e-12)
    rows = re.search(r"partial result up to t=([0-9.]+) s \((\d+) rows\)", stderr)
    assert int(rows.group(2)) == len(data) and float(rows.group(1)) == pytest.approx(data[-1, 0])


def rows_written(path) -> int:
    return max(0, sum(1 for _ in open(path)) - 1) if path.exists() else 0


def sweep_until_rows(args, out, rows):
    """Start `mbsfmu sweep ...` and wait until ``rows`` rows are in ``out``."""
    proc = start("sweep", *args)
    deadline = time.monotonic() + 180
    while rows_written(out) < rows:
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "the sweep wrote no rows"
        time.sleep(0.05)
    return proc


SWEEP = ["models/cart_pendulum.py", "--param", "m=0.1:0.5:200", "--metric", "x_max=max(x)", "--t-end", "20"]
DESIGN_M = np.linspace(0.1, 0.5, 200)


def check_rows(out, before):
    """The rows file after a stop: whole lines only, every row sound and of the design, at least
    the rows that were there when the signal was sent."""
    assert out.read_text().endswith("\n")
    df = pd.read_csv(out)
    assert before <= len(df) < len(DESIGN_M)
    assert (df["status"] == "ok").all() and df["run"].is_unique
    np.testing.assert_array_equal(df["m"].to_numpy(), DESIGN_M[df["run"].to_numpy()])
    return df


@pytest.mark.slow
def test_sigterm_on_a_sweep_keeps_the_rows_and_leaves_no_worker(tmp_path):
    """The default local cluster of worker processes: after SIGTERM every finished row is in the
    rows file, exit status 143 with a word on resuming, and no worker process is left."""
    out = tmp_path / "study.csv"
    proc = sweep_until_rows([*SWEEP, "--workers", "2", "--out", out], out, 2)  # a batch from a worker
    workers = psutil.Process(proc.pid).children(recursive=True)
    assert workers, "the local cluster has worker processes"
    before = rows_written(out)
    stderr = terminate(proc)
    assert proc.returncode == 143, stderr[-2000:]
    assert "mbsfmu: terminated (SIGTERM)" in stderr and "the same command runs the others" in stderr
    assert "Traceback" not in stderr
    _, alive = psutil.wait_procs(workers, timeout=15)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE], alive
    df = check_rows(out, before)
    print(f"sweep stopped by SIGTERM: {len(df)} of 200 rows kept, {len(workers)} processes ended")


@pytest.mark.slow
def test_sigterm_on_a_synchronous_sweep_keeps_the_rows(tmp_path):
    out = tmp_path / "study.csv"
    proc = sweep_until_rows([*SWEEP, "--scheduler", "synchronous", "--batch", "1", "--out", out], out, 3)
    before = rows_written(out)
    stderr = terminate(proc)
    assert proc.returncode == 143 and "mbsfmu: terminated (SIGTERM)" in stderr, stderr[-2000:]
    check_rows(out, before)


def test_a_failing_animate_keeps_its_samples(files, capsys):
    """The simulation fails at t ~ 0.3 s: the samples up to there go to <out>.partial.csv (exit
    2, the command that draws them named); nothing is drawn; the partial CSV animates."""
    model, out = files / "blowup.py", files / "b.gif"
    status, err = run_cli(["animate", model, "--out", out, "--dpi", "20"], capsys)
    keep = files / "b.partial.csv"
    assert status == 2 and err.startswith("mbsfmu: error: blowup: ") and "step size underflow" in err
    assert f"partial result up to t=0.28 s (8 rows) written to {keep}" in err
    hint = f"draw it with: mbsfmu animate {keep} --model {model} --out {files / 'b.partial.gif'}"
    assert hint in err and not out.exists()
    data = np.loadtxt(keep, delimiter=",", skiprows=1, ndmin=2)
    np.testing.assert_allclose(data[:, 0], 0.04 * np.arange(8), atol=1e-12)
    assert run_cli(hint.split(": ", 1)[1].split()[1:] + ["--dpi", "20"], capsys)[0] == 0
    assert (files / "b.partial.gif").exists()


@pytest.mark.slow
def test_sigterm_while_drawing_keeps_the_simulated_samples(tmp_path):
    """1001 frames take a minute to draw: SIGTERM once drawing has begun stops at once (143),
    no animation file, the complete simulated samples in <out>.partial.csv."""
    out = tmp_path / "dp.html"
    proc = start("animate", DP, "--t-end", "20", "--dt", "0.02", "--out", out)
    seen = read_until(proc, r"simulated 1001 samples to t=20 s; drawing")
    started = time.monotonic()
    stderr = seen + terminate(proc, timeout=60)
    assert proc.returncode == 143, stderr[-2000:]
    assert time.monotonic() - started < 30
    keep = tmp_path / "dp.partial.csv"
    assert "mbsfmu: terminated (SIGTERM)" in stderr and "Traceback" not in stderr
    assert ("the animation was not written; the 1001 simulated samples (to t=20 s) written to "
            f"{keep}") in stderr
    assert not out.exists()
    data = np.loadtxt(keep, delimiter=",", skiprows=1, ndmin=2)
    assert data.shape == (1001, 5)
    np.testing.assert_allclose(data[:, 0], 0.02 * np.arange(1001), atol=1e-12)


def test_animate_a_model_without_t_end_uses_the_default(tmp_path, capsys):
    out = tmp_path / "dp.gif"
    status, err = run_cli(["animate", DP, "--dt", "0.5", "--dpi", "20", "--out", out, "--backend", "numpy"],
                          capsys)
    n = int(ANIMATE_T_END / 0.5) + 1
    assert status == 0 and out.exists() and f"simulated {n} samples to t={ANIMATE_T_END:g} s" in err


def test_catalogue_size():
    """The number of bad inputs catalogued here per surface (reported in the issue note)."""
    sizes = {"simulate CLI": len(SIMULATE_CASES) + len(MODEL_FILE_CASES),
             "animate CLI": len(ANIMATE_CASES) + len(CSV_CASES), "animation API": len(API_CASES),
             "UDP blocks": len(UDP_CASES), "stops": 5}
    print(sizes, sum(sizes.values()))
    assert sum(sizes.values()) >= 121

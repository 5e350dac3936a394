"""Catalogue of bad inputs of how a sweep runs (issue 23): the target's kind, ``workers``,
``batch``, ``connect_timeout``, ``cluster_timeout`` and the scheduler, through the Python API and
the CLI.

Each case is one bad input; the test asserts the exception type (on the CLI: exit status 2 and
``mbsfmu: error: ...`` on stderr, no traceback) and that the message names the culprit, by a
regular expression, and that the refused call wrote nothing (no rows file).  The metrics,
``t_end``/``dt``, designs and ``simulate`` keywords have their own catalogue.
"""

import math
import pathlib
import subprocess
import sys

import pytest

import mbsfmu
from mbsfmu.cli import main
from mbsfmu.core.errors import ParameterError

ROOT = pathlib.Path(__file__).resolve().parents[2]
CART = str(ROOT / "models" / "cart_pendulum.py")
FORMS = r"give an address tcp://HOST:PORT \(or HOST:PORT, or tls://, ws://, wss://, ucx://\), a " \
        r"distributed.Client, or one of synchronous"


def _file(tmp_path, name, text="x"):
    path = tmp_path / name
    path.write_text(text)
    return path


# (label, keyword arguments of sweep or a target maker, exception type, message pattern)
API_CASES = [
    ("workers negative", {"workers": -3}, ParameterError, r"workers must be a whole number >= 1, got -3"),
    ("workers zero", {"workers": 0}, ParameterError, r"workers must be a whole number >= 1, got 0"),
    ("workers fraction", {"workers": 2.5}, ParameterError, r"workers must be a whole number >= 1, got 2.5"),
    ("workers bool", {"workers": True}, ParameterError, r"workers must be a whole number >= 1, got True"),
    ("workers text", {"workers": "2"}, ParameterError, r"workers must be a whole number >= 1, got '2'"),
    ("batch zero", {"batch": 0}, ParameterError, r"batch must be a whole number >= 1, got 0"),
    ("batch negative", {"batch": -4}, ParameterError, r"batch must be a whole number >= 1, got -4"),
    ("batch fraction", {"batch": 1.5}, ParameterError, r"batch must be a whole number >= 1, got 1.5"),
    ("batch bool", {"batch": False}, ParameterError, r"batch must be a whole number >= 1, got False"),
    ("connect_timeout zero", {"connect_timeout": 0}, ParameterError,
     r"connect_timeout must be a number of seconds > 0, got 0"),
    ("connect_timeout negative", {"connect_timeout": -1.0}, ParameterError,
     r"connect_timeout must be a number of seconds > 0, got -1.0"),
    ("connect_timeout nan", {"connect_timeout": math.nan}, ParameterError,
     r"connect_timeout must be a number of seconds > 0, got nan"),
    ("connect_timeout text", {"connect_timeout": "10"}, ParameterError,
     r"connect_timeout must be a number of seconds > 0, got '10'"),
    ("cluster_timeout zero", {"cluster_timeout": 0}, ParameterError,
     r"cluster_timeout must be a number of seconds > 0, got 0"),
    ("cluster_timeout inf", {"cluster_timeout": math.inf}, ParameterError,
     r"cluster_timeout must be a number of seconds > 0, got inf"),
    ("cluster_timeout None", {"cluster_timeout": None}, ParameterError,
     r"cluster_timeout must be a number of seconds > 0, got None"),
    ("cluster_timeout bool", {"cluster_timeout": True}, ParameterError,
     r"cluster_timeout must be a number of seconds > 0, got True"),
    ("scheduler typo", {"scheduler": "synchronus"}, ParameterError,
     rf"scheduler 'synchronus' is not a Dask scheduler: {FORMS}"),
    ("scheduler without port", {"scheduler": "tcp://127.0.0.1"}, ParameterError,
     rf"scheduler 'tcp://127.0.0.1' is not a Dask scheduler: {FORMS}"),
    ("scheduler port 0", {"scheduler": "tcp://127.0.0.1:0"}, ParameterError,
     r"scheduler 'tcp://127.0.0.1:0' is not a Dask scheduler"),
    ("scheduler port too big", {"scheduler": "tcp://127.0.0.1:99999"}, ParameterError,
     r"scheduler 'tcp://127.0.0.1:99999' is not a Dask scheduler"),
    ("scheduler http", {"scheduler": "http://127.0.0.1:8786"}, ParameterError,
     r"scheduler 'http://127.0.0.1:8786' is not a Dask scheduler"),
    ("scheduler without host", {"scheduler": "tcp://:8786"}, ParameterError,
     r"scheduler 'tcp://:8786' is not a Dask scheduler"),
    ("scheduler empty", {"scheduler": ""}, ParameterError, r"scheduler '' is not a Dask scheduler"),
    ("scheduler with spaces", {"scheduler": "tcp://my host:8786"}, ParameterError,
     r"scheduler 'tcp://my host:8786' is not a Dask scheduler"),
    ("scheduler number", {"scheduler": 8786}, ParameterError,
     rf"scheduler must be {FORMS[5:]}.*; got int 8786"),
    ("scheduler object", {"scheduler": object()}, ParameterError,
     r"scheduler must be .*; got object <object"),
]

TARGET_CASES = [
    ("text file", lambda tmp: _file(tmp, "notes.txt"), r"sweep target '.*notes.txt' is neither a model file, "
     r"an FMU nor an SSP: a sweep runs a model file \(.py\), an FMU \(.fmu\), an SSP file \(.ssp\), a System "
     r"or a function that returns a Diagram"),
    ("no suffix", lambda tmp: _file(tmp, "model"),
     r"sweep target '.*model' is neither a model file, an FMU nor an SSP"),
    ("ssp not a zip", lambda tmp: _file(tmp, "loop.ssp", "not a zip"),
     r"sweep target '.*loop.ssp' cannot be read as an SSP \(SSPError: loop.ssp is not an SSP \(not a zip"),
    ("directory", lambda tmp: tmp, r"sweep target '.*' is a directory: a sweep runs a model file"),
    ("missing file", lambda tmp: tmp / "none.py", r"sweep target '.*none.py' does not exist"),
    ("fmu not a zip", lambda tmp: _file(tmp, "fake.fmu", "not a zip"),
     r"sweep target '.*fake.fmu' cannot be read as an FMU \(BadZipFile"),
    ("number", lambda tmp: 42, r"sweep target must be a model file \(.py\), an FMU \(.fmu\), an SSP file "
     r"\(.ssp\), a System or a function that returns a Diagram, got int 42"),
    ("None", lambda tmp: None, r"sweep target must be .*, got NoneType None"),
]


@pytest.mark.parametrize("options, exc, pattern", [c[1:] for c in API_CASES], ids=[c[0] for c in API_CASES])
def test_api(tmp_path, options, exc, pattern):
    out = tmp_path / "rows.csv"
    with pytest.raises(exc, match=pattern):
        mbsfmu.sweep(CART, {"m": [0.1, 0.2]}, t_end=0.1, out=out, **options)
    assert not out.exists()


@pytest.mark.parametrize("make, pattern", [c[1:] for c in TARGET_CASES], ids=[c[0] for c in TARGET_CASES])
def test_target(tmp_path, make, pattern):
    out = tmp_path / "rows.csv"
    with pytest.raises(ParameterError, match=pattern):
        mbsfmu.sweep(make(tmp_path), {"m": [0.1]}, t_end=0.1, out=out, scheduler="synchronous")
    assert not out.exists()


def test_a_closed_client_is_named():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        client = Client(cluster)
        client.close()
        with pytest.raises(ParameterError, match=r"scheduler: the distributed.Client given is closed"):
            mbsfmu.sweep(CART, {"m": [0.1]}, t_end=0.1, scheduler=client)


SWEEP = ["sweep", CART, "--param", "m=0.1,0.2", "--t-end", "0.1", "--out", "{tmp}/o.csv"]
CLI_CASES = [
    ("workers negative", ["--workers", "-3"], r"workers must be a whole number >= 1, got -3"),
    ("workers zero", ["--workers", "0"], r"workers must be a whole number >= 1, got 0"),
    ("batch zero", ["--batch", "0"], r"batch must be a whole number >= 1, got 0"),
    ("connect-timeout negative", ["--connect-timeout", "-1"],
     r"connect_timeout must be a number of seconds > 0, got -1.0"),
    ("connect-timeout nan", ["--connect-timeout", "nan"], r"connect_timeout must be a number of seconds > 0"),
    ("cluster-timeout zero", ["--cluster-timeout", "0"], r"cluster_timeout must be a number of seconds > 0"),
    ("cluster-timeout inf", ["--cluster-timeout", "inf"], r"cluster_timeout must be a number of seconds > 0, "
     r"got inf"),
    ("scheduler typo", ["--scheduler", "synchronus"], r"scheduler 'synchronus' is not a Dask scheduler"),
    ("scheduler without port", ["--scheduler", "tcp://10.0.0.1"], r"scheduler 'tcp://10.0.0.1' is not a Dask "
     r"scheduler: give an address tcp://HOST:PORT"),
    ("scheduler http", ["--scheduler", "http://h:1"], r"scheduler 'http://h:1' is not a Dask scheduler"),
]
CLI_TARGETS = [
    ("text target", "notes.txt", r"sweep target '.*notes.txt' is neither a model file, an FMU nor an SSP"),
    ("directory target", ".", r"sweep target '.*' is a directory"),
    ("fmu target not a zip", "fake.fmu", r"sweep target '.*fake.fmu' cannot be read as an FMU"),
]


@pytest.mark.parametrize("extra, pattern", [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES])
def test_cli(tmp_path, capsys, extra, pattern):
    args = [a.replace("{tmp}", str(tmp_path)) for a in SWEEP] + extra
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("mbsfmu: error: ") and "Traceback" not in err
    assert __import__("re").search(pattern, err), err
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("name, pattern", [c[1:] for c in CLI_TARGETS], ids=[c[0] for c in CLI_TARGETS])
def test_cli_target(tmp_path, capsys, name, pattern):
    target = tmp_path if name == "." else _file(tmp_path, name)
    args = ["sweep", str(target)] + [a.replace("{tmp}", str(tmp_path)) for a in SWEEP[2:]]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("mbsfmu: error: ") and "Traceback" not in err
    assert __import__("re").search(pattern, err), err
    assert not (tmp_path / "o.csv").exists()


def test_cli_exit_status_of_a_real_process(tmp_path):
    """The same refusal from the command itself: exit status 2 and one line on stderr."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in SWEEP] + ["--workers", "-3"]
    r = subprocess.run([sys.executable, "-m", "mbsfmu", *args], capture_output=True, text=True, cwd=ROOT,
                       timeout=300)
    assert r.returncode == 2
    assert r.stderr == "mbsfmu: error: workers must be a whole number >= 1, got -3\n"
    assert not (tmp_path / "o.csv").exists()


def test_catalogue_size():
    """The number of bad inputs catalogued here (reported in the issue note)."""
    n = len(API_CASES) + len(TARGET_CASES) + 1 + len(CLI_CASES) + len(CLI_TARGETS) + 1
    assert n == 50

"""Size and write time of the 3D viewer page (issue 27) against the page of matplotlib images.

The flexible double pendulum (``models/flexible_double_pendulum.py``, seed 002 §4.2) simulated
10 s with output every 0.01 s (1001 samples, 100 frames per second), then:

* the 3D viewer page (``result.animate(path)``): its size, the part that is the model's data
  (the page less the inlined three.js), and the write time after the simulation (scene from the
  poses + page), the first call and the best of two more;
* today's images page as ``ci/demo`` writes it (2 s at 0.02 s, 101 frames, dpi 50,
  ``player='images'``): size and time, once;
* first, issue 27 item 4: the closed loop ``ci/demo`` runs (``ci/closed_loop_demo.py``: the inverted
  cart-pendulum FMU balanced by a discrete LQR), 10 s at 1 kHz (10 001 rows), drawn by the
  runner's ``Result.animate(path)`` from the recorded coordinates through the view the FMU carries,
  at the default 100 frames per second (1001 frames): page size, its data, write time (first
  call, which includes importing matplotlib for the colours, and best of two more).  Before:
  renaming the result's columns by hand for ``mbsfmu.Result`` gave a 14.7 MB images page in 18 s
  (the issue's account).

Run from the repository root: ``.venv/bin/python bench/viewer_page.py``.
"""

import pathlib
import sys
import tempfile
import time

import mbsfmu
from mbsfmu.animation import viewer

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "ci"))
MODEL = ROOT / "models" / "flexible_double_pendulum.py"


def timed(fn, repeat=1):
    """fn's result and its wall-clock times [s], first call first."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return out, times


def main():
    system = mbsfmu.load_model(MODEL)
    tmp = pathlib.Path(tempfile.mkdtemp())
    library = len(viewer.THREE_JS.read_bytes()) + len(viewer.VIEWER_JS.read_bytes())
    closed_loop(tmp, library)  # first: its first call includes importing matplotlib (colours)
    res = mbsfmu.simulate(system, t_end=10.0, dt=0.01, rtol=1e-8)
    page = tmp / "viewer.html"
    anim, seconds = timed(lambda: res.animate(page), repeat=3)
    print(f"3D viewer, {len(anim)} frames, {len(anim.frame_names)} frames' origins, "
          f"{len(anim.wires)} shapes: {page_sizes(page, library)}; written in {seconds[0]:.3f} s "
          f"(first, with compiling the pose function), then {min(seconds[1:]):.3f} s")
    res2 = mbsfmu.simulate(system, t_end=2.0, dt=0.02, rtol=1e-8)
    images = tmp / "images.html"
    anim2, seconds2 = timed(lambda: res2.animate(images, dpi=50, player="images"))
    print(f"images page (ci/demo), {len(anim2)} frames: {images.stat().st_size / 1e6:.3f} MB, "
          f"written in {seconds2[0]:.1f} s")
    page2 = tmp / "viewer2.html"
    _, seconds3 = timed(lambda: res2.animate(page2), repeat=3)
    print(f"3D viewer of the same 2 s: {page2.stat().st_size / 1e6:.3f} MB, written in {min(seconds3):.3f} s")


def closed_loop(tmp, library):
    """The demo's closed loop, 10 s at 1 kHz, drawn from the runner's result."""
    from closed_loop_demo import CONTROL_PERIOD, build_diagram, lqr_gain

    system = mbsfmu.load_model(ROOT / "models" / "cart_pendulum.py")
    fmu = mbsfmu.build_fmu(system, tmp / "cart_pendulum.fmu")
    res = build_diagram(fmu, lqr_gain(system, CONTROL_PERIOD)[0]).run(10.0)
    page = tmp / "loop.html"
    anim, seconds = timed(lambda: res.animate(page), repeat=3)
    print(f"closed loop (runner, {len(res.t)} rows at 1 kHz) -> Result.animate at 100 fps, {len(anim)} "
          f"frames: {page_sizes(page, library)}; written in {seconds[0]:.3f} s (first), "
          f"then {min(seconds[1:]):.3f} s")


def page_sizes(page, library) -> str:
    """The page's size split into the model's data and the inlined library."""
    size = page.stat().st_size
    return (f"{size / 1e6:.3f} MB page = {(size - library) / 1e6:.3f} MB data + {library / 1e6:.3f} MB "
            "three.js and viewer script")


if __name__ == "__main__":
    main()

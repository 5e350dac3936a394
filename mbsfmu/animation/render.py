"""How a scene is drawn: matplotlib 3D (mplot3d) frames written as HTML or GIF.

Every animation frame shows one output sample: the frame origins as small black markers, the
stick lines and flexible bodies of :mod:`.scene` as lines in their body's colour, the shapes'
wire frames, and the time in the title.  The axes are one cube holding the whole motion (equal
limits on x, y and z, ``set_box_aspect((1, 1, 1))``), so lengths look the same in every
direction and the view does not jump.  The figure uses the Agg canvas directly, whatever
backend pyplot would choose.

* ``.html``: matplotlib's ``to_jshtml`` player, every frame embedded as a base64 PNG, in a
  complete HTML page.  Its stylesheet link to a font CDN is removed and the buttons get text
  symbols instead of font icons, so the page plays in a browser without any network.
* ``.gif``: matplotlib's ``PillowWriter``.
"""

from __future__ import annotations

import html
import pathlib
import re

from ..core.errors import ParameterError

#: file suffix -> format written
FORMATS = {".html": "html", ".htm": "html", ".gif": "gif"}
#: the player's buttons: font-awesome icon classes -> text symbols
_BUTTON_TEXT = {"fa fa-minus": "&minus;", "fa fa-fast-backward": "&#x23EE;",
                "fa fa-step-backward": "|&#x25C0;", "fa fa-play fa-flip-horizontal": "&#x25C0;",
                "fa fa-pause": "&#x275A;&#x275A;", "fa fa-play": "&#x25B6;",
                "fa fa-step-forward": "&#x25B6;|", "fa fa-fast-forward": "&#x23ED;",
                "fa fa-plus": "+"}
#: limit of the embedded frames [MB]; matplotlib's default (20 MB) would drop frames of long runs
EMBED_LIMIT_MB = 1024.0


def animation_format(path) -> str:
    """'html' or 'gif' from the file suffix; a ParameterError for any other."""
    suffix = pathlib.Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ParameterError(f"animation file {str(path)!r}: unknown suffix {suffix or '(none)'!r}; "
                             f"write {', '.join(FORMATS)}")
    return FORMATS[suffix]


def make_animation(scene, fps: float, dpi: float = 80, size: float = 5.0):
    """The matplotlib figure and FuncAnimation of a scene (one animation frame per sample)."""
    from matplotlib.animation import FuncAnimation
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(size, size), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(projection="3d")
    centre, half = scene.bounds()
    half *= 1.05
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_zlabel("z")
    lines = [(ax.plot([], [], [], "-", color=ln.color, lw=2.5)[0], scene.line_points(ln))
             for ln in scene.lines]
    wires = [(ax.plot([], [], [], "-", color=w.color, lw=1.0)[0], w.points) for w in scene.wires]
    markers = ax.plot([], [], [], "o", color="k", ms=3, ls="none")[0]
    title = ax.set_title("", fontsize="medium")
    artists = [a for a, _ in lines + wires] + [markers, title]

    def draw(i):
        for artist, pts in lines + wires:
            artist.set_data_3d(pts[i, :, 0], pts[i, :, 1], pts[i, :, 2])
        p = scene.points[i]
        markers.set_data_3d(p[:, 0], p[:, 1], p[:, 2])
        title.set_text(f"{scene.title}\nt = {scene.times[i]:.3f} s")
        return artists

    anim = FuncAnimation(fig, draw, frames=scene.samples, interval=1000.0 / fps, repeat=True,
                         cache_frame_data=False)
    return fig, anim


def write(scene, path, fps: float, dpi: float = 80, size: float = 5.0) -> pathlib.Path:
    """Write the scene's animation to ``path`` (.html or .gif, see the module docstring)."""
    fmt = animation_format(path)
    path = pathlib.Path(path)
    fig, anim = make_animation(scene, fps, dpi, size)
    if fmt == "gif":
        from matplotlib.animation import PillowWriter

        anim.save(str(path), writer=PillowWriter(fps=fps), dpi=dpi)
    else:
        import matplotlib

        with matplotlib.rc_context({"animation.embed_limit": EMBED_LIMIT_MB}):
            player = anim.to_jshtml(fps=fps, default_mode="loop")
        path.write_text(html_page(scene.title, player), encoding="utf-8")
    return path


def html_page(title: str, player: str) -> str:
    """A complete, offline HTML page around matplotlib's jshtml player."""
    player = re.sub(r"<link[^>]*stylesheet[^>]*>", "", player)
    player = re.sub(r'<i class="([^"]*)"></i>', lambda m: _BUTTON_TEXT.get(m.group(1), ""), player)
    return ("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n</head>\n<body>\n{player}\n</body>\n</html>\n")


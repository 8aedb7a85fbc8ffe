"""Animations over a variable (``animate t=0:2pi:48 -o wave.gif``).

The whole animation is one engine evaluation (the animated variable is the grid's last
axis); each frame is then an ordinary still (``build_figure``) whose colour scale, arrow
length and y-range are fixed from all the frames together, so colours mean the same thing
in every frame. GIF goes through pillow with one palette of 64 colours for every frame
(frame times are whole hundredths of a second, as GIF stores them); MP4 goes through
ffmpeg when it is installed. Neither file holds a date or a random id: the same command
writes the same bytes.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np

from gradcli.errors import EvaluationError
from gradcli.output.atomic import atomic_path
from gradcli.plot.arrows import plane_lattice, shown_lengths
from gradcli.plot.colors import color_scale, heat, heat_name
from gradcli.plot.data import Field
from gradcli.plot.figures import Limits, build_figure, plane_box, plane_size
from gradcli.plot.layout import y_range
from gradcli.plot.options import DEFAULT_FPS, PlotOptions
from gradcli.plot.render import stable_rc

__all__ = ["write_movie", "shared_limits", "check_ffmpeg", "FFMPEG_FLAGS"]

#: deterministic, widely playable H.264: no encoder tag or metadata, one thread
FFMPEG_FLAGS = ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-threads", "1",
                "-fflags", "+bitexact", "-flags:v", "+bitexact", "-map_metadata", "-1",
                "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"]


def check_ffmpeg() -> str:
    """ffmpeg's path, or a clear error saying how to get an animation without it."""
    path = shutil.which("ffmpeg")
    if path is None:
        raise EvaluationError("-o *.mp4 needs ffmpeg, which is not installed: install it "
                              "(apt-get install ffmpeg) or write a GIF with -o NAME.gif")
    return path


def shared_limits(fl: Field, opts: PlotOptions) -> Limits:
    """Colour scale, arrow lengths and y-range over every frame of ``fl``."""
    if fl.kind == "curve":
        arrays = [*fl.values, *(fl.grad if opts.derivative else ())]
        return Limits(ylim=y_range(arrays, opts.ylim, opts.log)[0])
    limits = Limits()
    hm = heat(fl, heat_name(fl, opts.color))
    if hm is not None:
        limits.colors = color_scale([hm.values], hm.signed, log=opts.log, vmin=opts.vmin,
                                    vmax=opts.vmax, cmap=opts.cmap)
    if opts.arrows and not opts.stream and not opts.normalize:
        first = fl.frame(0)
        size = opts.size or plane_size(first, opts)
        box, _, ext, _ = plane_box(first, opts, size)
        lat = plane_lattice(first, opts)
        limits.lengths = shown_lengths(fl, lat, box.ratio(ext[1] - ext[0], ext[3] - ext[2]))
    return limits


def _frames(fl: Field, opts: PlotOptions) -> tuple[list[np.ndarray], list[str]]:
    """Every frame as an RGB array, and the notes of the first frame."""
    limits = shared_limits(fl, opts)
    assert fl.frames is not None
    images, notes = [], []
    for k in range(len(fl.frames)):
        still = fl.frame(k)
        title = opts.title or f"{fl.animated} = {fl.frames[k]:.4g}"
        with stable_rc():
            fig, drawn = build_figure(still, _with_title(opts, title), limits)
            fig.canvas.draw()
            images.append(np.asarray(fig.canvas.buffer_rgba())[..., :3].copy())
        if k == 0:
            notes = drawn.notes
    return images, notes


def _with_title(opts: PlotOptions, title: str) -> PlotOptions:
    from dataclasses import replace

    return replace(opts, title=title)


def _write_gif(images: list[np.ndarray], path: str, fps: float) -> None:
    from PIL import Image

    first = Image.fromarray(images[0]).quantize(colors=64, method=Image.Quantize.MEDIANCUT,
                                                dither=Image.Dither.NONE)
    rest = [Image.fromarray(a).quantize(palette=first, dither=Image.Dither.NONE)
            for a in images[1:]]
    with atomic_path(path) as tmp:
        first.save(tmp, format="GIF", save_all=True, append_images=rest, loop=0,
                   duration=10 * round(100 / fps), optimize=False, disposal=1)


def _write_mp4(images: list[np.ndarray], path: str, fps: float, ffmpeg: str) -> None:
    h, w, _ = images[0].shape
    with atomic_path(path) as tmp:
        cmd = [ffmpeg, "-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo",
               "-pix_fmt", "rgb24", "-s", f"{w}x{h}", "-r", f"{fps:g}", "-i", "-",
               *FFMPEG_FLAGS, "-f", "mp4", tmp]
        done = subprocess.run(cmd, input=b"".join(a.tobytes() for a in images),
                              capture_output=True, check=False)
        if done.returncode != 0:
            reason = done.stderr.decode(errors="replace").strip().splitlines()
            raise OSError(f"ffmpeg failed: {reason[-1] if reason else done.returncode}")


def write_movie(fl: Field, opts: PlotOptions, path: str, fmt: str) -> list[str]:
    """Write the animation of ``fl`` to ``path`` (gif or mp4); return notes for stderr."""
    ffmpeg = check_ffmpeg() if fmt == "mp4" else ""
    images, notes = _frames(fl, opts)
    fps = DEFAULT_FPS if opts.fps is None else opts.fps
    if fmt == "gif":
        _write_gif(images, path, fps)
    else:
        _write_mp4(images, path, fps, ffmpeg)
    return notes


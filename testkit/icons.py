"""The page's app icons (`bot/server/web/icons/`), drawn with the standard library alone.

`python -m testkit.icons` writes them: a white microphone on Annie's accent blue, as a
rounded tile on transparency for the manifest's "any" icons (192 and 512 pixels), full-bleed
with the glyph inside the central safe circle for the maskable one (a launcher cuts it to its
own shape), and full-bleed and opaque for iOS's home screen (180 pixels, which iOS rounds
itself). Each shape is a signed distance, so its edge is anti-aliased by the fraction of the
pixel it covers; PNG is written by hand (zlib and struct), so the same code always gives the
same bytes and the files are committed, not made at start-up.
"""

from __future__ import annotations

import argparse
import math
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ICON_DIR = Path(__file__).resolve().parents[1] / "bot" / "server" / "web" / "icons"
ACCENT = (0x3D, 0x6F, 0xE0)  # --accent in style.css
WHITE = (0xFF, 0xFF, 0xFF)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

Shape = Callable[[float, float], float]  # signed distance at (x, y), in units of the icon side


@dataclass(frozen=True)
class Icon:
    name: str
    size: int
    tile: bool  # a rounded tile on transparency; else the accent fills the square
    glyph_scale: float  # the microphone's height over the icon's side


ICONS = (
    Icon("icon-192.png", 192, tile=True, glyph_scale=0.62),
    Icon("icon-512.png", 512, tile=True, glyph_scale=0.62),
    # A launcher keeps at least the central circle of 40% radius: the glyph stays inside it.
    Icon("icon-maskable-512.png", 512, tile=False, glyph_scale=0.5),
    Icon("apple-touch-icon.png", 180, tile=False, glyph_scale=0.58),
)


def segment(ax: float, ay: float, bx: float, by: float, radius: float) -> Shape:
    """A capsule: every point within `radius` of the segment from a to b."""
    dx, dy = bx - ax, by - ay
    length2 = dx * dx + dy * dy

    def distance(x: float, y: float) -> float:
        t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / length2))
        return math.hypot(x - ax - t * dx, y - ay - t * dy) - radius

    return distance


def lower_arc(cx: float, cy: float, radius: float, half_width: float) -> Shape:
    """The lower half of a ring: the microphone's cradle."""

    def distance(x: float, y: float) -> float:
        if y >= cy:
            return abs(math.hypot(x - cx, y - cy) - radius) - half_width
        ends = min(math.hypot(x - cx + radius, y - cy), math.hypot(x - cx - radius, y - cy))
        return ends - half_width

    return distance


def rounded_square(inset: float, corner: float) -> Shape:
    half = 0.5 - inset

    def distance(x: float, y: float) -> float:
        qx = abs(x - 0.5) - half + corner
        qy = abs(y - 0.5) - half + corner
        outside = math.hypot(max(qx, 0.0), max(qy, 0.0))
        return outside + min(max(qx, qy), 0.0) - corner

    return distance


def microphone(scale: float) -> list[Shape]:
    """The glyph, centred, `scale` of the side tall (its own units run 0..1 top to bottom,
    the drawing 0 to 0.905 of them)."""

    def at(u: float, v: float) -> tuple[float, float]:
        return 0.5 + (u - 0.5) * scale, 0.5 + (v - 0.4525) * scale

    stroke = 0.045 * scale
    head_top, head_bottom = at(0.5, 0.16), at(0.5, 0.46)
    arc_centre = at(0.5, 0.46)
    stem_top, stem_bottom = at(0.5, 0.74), at(0.5, 0.86)
    base_left, base_right = at(0.34, 0.86), at(0.66, 0.86)
    return [
        segment(*head_top, *head_bottom, 0.16 * scale),
        lower_arc(*arc_centre, 0.28 * scale, stroke),
        segment(*stem_top, *stem_bottom, stroke),
        segment(*base_left, *base_right, stroke),
    ]


def coverage(distance: float, size: int) -> float:
    """How much of a pixel a shape covers, from the signed distance at its centre."""
    return max(0.0, min(1.0, 0.5 - distance * size))


def render(icon: Icon) -> bytes:
    """The icon's pixels as RGBA rows, each led by PNG's filter byte (0: none)."""
    size = icon.size
    tile = rounded_square(0.0, 0.22) if icon.tile else None
    glyph = microphone(icon.glyph_scale)
    rows = bytearray()
    for j in range(size):
        rows.append(0)
        y = (j + 0.5) / size
        for i in range(size):
            x = (i + 0.5) / size
            ground = coverage(tile(x, y), size) if tile is not None else 1.0
            ink = coverage(min(shape(x, y) for shape in glyph), size) if ground else 0.0
            alpha = ground
            rgb = [round(a + (b - a) * ink) for a, b in zip(ACCENT, WHITE, strict=True)]
            rows += bytes((*rgb, round(alpha * 255)))
    return bytes(rows)


def chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def png(icon: Icon) -> bytes:
    """The icon as a PNG: 8-bit RGBA, not interlaced."""
    header = struct.pack(">IIBBBBB", icon.size, icon.size, 8, 6, 0, 0, 0)
    return (
        PNG_SIGNATURE
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(render(icon), 9))
        + chunk(b"IEND", b"")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ICON_DIR, help=f"default: {ICON_DIR}")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for icon in ICONS:
        path = args.out / icon.name
        path.write_bytes(png(icon))
        print(f"{path}  {icon.size}x{icon.size}  {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Draws the demo app's icons (Public/icons/*.png) from the splash's design, with no dependency.

The splash (Public/splash.svg) is a rounded square with a diagonal gradient and a white "AS"
drawn with 7-unit round strokes, on a 96-unit canvas. This script draws the same shapes into
PNG files (zlib, the standard library) with distance-based anti-aliasing:

- icon-192.png, icon-512.png: the splash as it is (transparent corners), `purpose: any`;
- icon-maskable-512.png: the gradient to the edges and the letters within the inner 80 % circle
  that every mask keeps (`purpose: maskable`);
- apple-touch-icon.png (180 px): the maskable design, which iOS rounds itself.

To change the icons: change the colours or the strokes below (and splash.svg to match), run
`python3 scripts/make-icons.py`, and commit the PNGs. Their URLs carry a content hash, so the
service worker and browsers pick the new ones up on the next visit.
"""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "Public" / "icons"

#: The gradient's two ends (top left, bottom right): splash.svg's stops and the manifest's colours.
TOP = (0x2F, 0x7B, 0xFF)
BOTTOM = (0x0A, 0x3F, 0xA8)
STROKE = 3.5  # half of the letters' 7-unit stroke


def cubic(p0, p1, p2, p3, steps=20):
    """The points of a cubic Bézier curve, flattened."""
    points = []
    for index in range(steps + 1):
        t = index / steps
        u = 1 - t
        points.append(
            (
                u**3 * p0[0] + 3 * u * u * t * p1[0] + 3 * u * t * t * p2[0] + t**3 * p3[0],
                u**3 * p0[1] + 3 * u * u * t * p1[1] + 3 * u * t * t * p2[1] + t**3 * p3[1],
            )
        )
    return points


def letters():
    """splash.svg's two paths, in absolute coordinates, as polylines."""
    a = [(20, 68), (34, 29), (48, 68)]
    bar = [(25.5, 55), (42.5, 55)]
    # M76 35 c-2.5-5-8-7-12.5-6 s-7.5 4.5-7 9 4.5 6.5 9.5 8 9.5 4 9.5 9.5-5 9.5-11 9.5-9-2.5-11-6
    curves = [
        ((76, 35), (73.5, 30), (68, 28), (63.5, 29)),
        ((63.5, 29), (59, 30), (56, 33.5), (56.5, 38)),
        ((56.5, 38), (57, 42.5), (61, 44.5), (66, 46)),
        ((66, 46), (71, 47.5), (75.5, 50), (75.5, 55.5)),
        ((75.5, 55.5), (75.5, 61), (70.5, 65), (64.5, 65)),
        ((64.5, 65), (58.5, 65), (55.5, 62.5), (53.5, 59)),
    ]
    s = []
    for curve in curves:
        s.extend(cubic(*curve)[(1 if s else 0) :])
    return [a, bar, s]


def segments(scale, centre=48.0):
    """The letters' segments, scaled by `scale` about the canvas centre."""
    result = []
    for line in letters():
        moved = [(centre + (x - centre) * scale, centre + (y - centre) * scale) for x, y in line]
        result.extend(zip(moved, moved[1:]))
    return result


def distance_to_segment(px, py, a, b):
    ax, ay = a
    dx, dy = b[0] - ax, b[1] - ay
    length = dx * dx + dy * dy
    t = 0.0 if length == 0 else max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / length))
    return math.hypot(px - ax - t * dx, py - ay - t * dy)


def rounded_square_distance(x, y, size, radius):
    """Signed distance from (x, y) to a square of `size` with corner `radius` (negative inside)."""
    half = size / 2
    qx, qy = abs(x - half) - (half - radius), abs(y - half) - (half - radius)
    outside = math.hypot(max(qx, 0), max(qy, 0))
    return outside + min(max(qx, qy), 0) - radius


def draw(pixels, maskable):
    """RGBA rows of an icon `pixels` wide."""
    unit = 96 / pixels  # canvas units per pixel
    scale = 0.8 if maskable else 1.0
    stroke = STROKE * scale
    lines = segments(scale)
    boxes = [
        (min(a[0], b[0]) - stroke - unit, max(a[0], b[0]) + stroke + unit,
         min(a[1], b[1]) - stroke - unit, max(a[1], b[1]) + stroke + unit)
        for a, b in lines
    ]
    rows = []
    for row in range(pixels):
        y = (row + 0.5) * unit
        line = bytearray()
        for column in range(pixels):
            x = (column + 0.5) * unit
            t = (x + y) / 192
            colour = [TOP[i] + (BOTTOM[i] - TOP[i]) * t for i in range(3)]
            alpha = 1.0
            if not maskable:
                edge = rounded_square_distance(x, y, 96, 22)
                alpha = max(0.0, min(1.0, 0.5 - edge / unit))
                ring = abs(rounded_square_distance(x - 14, y - 14, 68, 14)) - 1
                cover = max(0.0, min(1.0, 0.5 - ring / unit)) * 0.25
                colour = [c + (255 - c) * cover for c in colour]
            nearest = min(
                (distance_to_segment(x, y, a, b) for (a, b), box in zip(lines, boxes)
                 if box[0] <= x <= box[1] and box[2] <= y <= box[3]),
                default=99.0,
            )
            cover = max(0.0, min(1.0, 0.5 - (nearest - stroke) / unit))
            colour = [c + (255 - c) * cover for c in colour]
            line += bytes(round(c) for c in colour) + bytes([round(alpha * 255)])
        rows.append(bytes(line))
    return rows


def write_png(path, rows):
    width, height = len(rows[0]) // 4, len(rows)
    raw = b"".join(b"\x00" + row for row in rows)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    )


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, pixels, maskable in (
        ("icon-192.png", 192, False),
        ("icon-512.png", 512, False),
        ("icon-maskable-512.png", 512, True),
        ("apple-touch-icon.png", 180, True),
    ):
        write_png(OUT / name, draw(pixels, maskable))
        print(f"wrote {OUT / name}")


if __name__ == "__main__":
    main()

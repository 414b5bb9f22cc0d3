#!/usr/bin/env python3
"""Draws Slate's application icons (icons/NxN.png at the icon theme's usual sizes from 16 to 256, and
icon.png at 512) with no image library. The packages install each one into the hicolor theme, so
menus and docks pick a drawn size instead of scaling one.

The icon is a slate-grey tablet with three light lines, a list of sessions. The tray icons with
the Needs-you badge are drawn at run time by src-tauri/src/badge.rs, not here.
Run from the repository root: python3 scripts/app-icons.py
"""
import struct
import zlib

SLATE = (59, 74, 90)
LINE = (222, 228, 234)


def tablet(size):
    pixels = []
    radius = size * 0.18
    margin = size * 0.06
    for y in range(size):
        row = []
        for x in range(size):
            cx, cy = x + 0.5, y + 0.5
            lo, hi = margin + radius, size - margin - radius
            dx = max(lo - cx, 0, cx - hi)
            dy = max(lo - cy, 0, cy - hi)
            inside = (dx * dx + dy * dy) <= radius * radius and margin <= cx <= size - margin and margin <= cy <= size - margin
            if not inside:
                row.append((0, 0, 0, 0))
                continue
            colour = SLATE
            for index, width in enumerate((0.56, 0.44, 0.50)):
                top = size * (0.28 + 0.19 * index)
                if top <= cy < top + size * 0.09 and size * 0.22 <= cx < size * (0.22 + width):
                    colour = LINE
            row.append(colour + (255,))
        pixels.append(row)
    return pixels


def write_png(path, pixels):
    height, width = len(pixels), len(pixels[0])
    raw = b"".join(b"\x00" + bytes(c for px in row for c in px) for row in pixels)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    with open(path, "wb") as out:
        out.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


for size in (16, 24, 32, 48, 64, 128, 256):
    write_png(f"icons/{size}x{size}.png", tablet(size))
write_png("icons/icon.png", tablet(512))

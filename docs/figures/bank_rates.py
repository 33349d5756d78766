#!/usr/bin/env python3
"""The README's databank figure: collisions per grain poured, per cell, against the fill level,
from the shipped bank (assets/bank/bank.json), for one family, grain and fall height: solid
lines for the 2 mm grains, dashed for the 4 mm ones (if the bank has them).

    python3 docs/figures/bank_rates.py            # writes docs/bank-rates.svg

Plain SVG, no plotting library: the figure is regenerated whenever the bank is (`cargo xtask
bank`), and reads the bank's own numbers.
"""
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
FAMILY, GRAIN, FALL = "mug", "sugar", 0.3
DIAMETERS = [(0.002, ""), (0.004, "6 4")]  # (m, SVG dash pattern)
SERIES = [  # (label, cells summed, colour)
    ("impact zone (grain on grain)", ["impact_zone"], "#d62728"),
    ("pile around it", ["pile_surface"], "#ff7f0e"),
    ("cup floor", ["cup_floor"], "#1f77b4"),
    ("wall rings (x10)", ["wall_ring_0", "wall_ring_1", "wall_ring_2"], "#2ca02c"),
    ("in the stream (x10)", ["stream"], "#9467bd"),
    ("onto the table (x10)", ["surface"], "#8c564b"),
]
SCALE = {"wall rings (x10)": 10, "in the stream (x10)": 10, "onto the table (x10)": 10}


def main():
    bank = json.loads((ROOT / "assets/bank/bank.json").read_text())
    by_size = []
    for diameter, dash in DIAMETERS:
        rows = [
            e for e in bank["entries"]
            if e["family"] == FAMILY and e["grain_material"] == GRAIN
            and abs(e["fall_height_m"] - FALL) < 1e-3 and abs(e["grain_diameter_m"] - diameter) < 1e-6
        ]
        rows.sort(key=lambda e: e["fill"])
        if rows:
            by_size.append((diameter, dash, rows))
    if not by_size:
        sys.exit("no entries for the figure's scene")
    lines = []  # (label, colour, dash, fills, values)
    for diameter, dash, rows in by_size:
        fills = [e["fill"] for e in rows]
        for label, cells, colour in SERIES:
            k = SCALE.get(label, 1)
            lines.append((label, colour, dash, fills, [k * sum(e["cells"][c]["rate"] for c in cells) for e in rows]))
    series = [(label, colour, values) for label, colour, dash, _, values in lines]
    top = max(max(v) for _, _, v in series)
    top = (int(top / 2) + 1) * 2
    w, h, left, right, up, down = 640, 360, 60, 210, 30, 50
    pw, ph = w - left - right, h - up - down
    x = lambda f: left + pw * f / 1.0
    y = lambda v: up + ph * (1 - v / top)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>']
    for t in range(0, top + 1, 2):
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{t}</text>')
    for f in [0, 0.25, 0.5, 0.75, 1.0]:
        out.append(f'<text x="{x(f):.1f}" y="{up + ph + 18}" text-anchor="middle">{f:g}</text>')
    out.append(f'<line x1="{left}" x2="{left}" y1="{up}" y2="{up + ph}" stroke="black"/>')
    out.append(f'<line x1="{left}" x2="{left + pw}" y1="{up + ph}" y2="{up + ph}" stroke="black"/>')
    out.append(f'<text x="{left + pw / 2}" y="{h - 10}" text-anchor="middle">fill level (pre-filled bed over the cup\'s depth)</text>')
    out.append(f'<text transform="translate(16 {up + ph / 2}) rotate(-90)" text-anchor="middle">collisions per grain poured</text>')
    first = by_size[0][2][0]
    sizes = " (dashed: 4 mm)" if len(by_size) > 1 else ""
    out.append(f'<text x="{left}" y="18">Simulated pours (rapier): 2 mm sugar{sizes} into a mug from {FALL * 100:g} cm, '
               f'{first["grains"]} grains a run</text>')
    for label, colour, dash, fills, values in lines:
        pts = " ".join(f"{x(f):.1f},{y(v):.1f}" for f, v in zip(fills, values))
        pattern = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"{pattern}/>')
        for f, v in zip(fills, values):
            out.append(f'<circle cx="{x(f):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}"/>')
    for i, (label, _, colour) in enumerate(SERIES):
        ly = up + 14 + 20 * i
        out.append(f'<line x1="{left + pw + 12}" x2="{left + pw + 32}" y1="{ly - 4}" y2="{ly - 4}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{left + pw + 38}" y="{ly}">{label}</text>')
    out.append("</svg>")
    path = ROOT / "docs/bank-rates.svg"
    path.write_text("\n".join(out) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""How the databank's collisions per grain change with the grain's size, and how well the
lookup's interpolation in the logarithm of the size holds (docs/dem.md, "Normalised out, and
the grain size"), from the shipped bank (assets/bank/bank.json): for each grain swept at 2, 4
and 6 mm, the mean collisions a grain at each size over the scenes swept at all three (every
family, fill and fall from 8 to 40 cm), and each scene's 4 mm total against the value
interpolated between its 2 and 6 mm runs in log(diameter) — twice the span a lookup bridges.

    python3 docs/figures/bank_sizes.py

Prints a table; standard library only.
"""
import json
import math
import pathlib
import statistics

ROOT = pathlib.Path(__file__).resolve().parents[2]
SIZES_M = (0.002, 0.004, 0.006)


def main():
    bank = json.loads((ROOT / "assets" / "bank" / "bank.json").read_text())
    entries = {}
    for e in bank["entries"]:
        key = (e["family"], e["grain_material"], round(e["fill"], 3), round(e["fall_height_m"], 3))
        entries.setdefault(key, {})[round(e["grain_diameter_m"], 4)] = sum(c["rate"] for c in e["cells"].values())
    grains = sorted({k[1] for k, by_size in entries.items() if all(d in by_size for d in SIZES_M)})
    weight = math.log(SIZES_M[1] / SIZES_M[0]) / math.log(SIZES_M[2] / SIZES_M[0])
    print("grain          scenes  collisions a grain at 2 / 4 / 6 mm   4 mm from 2 and 6: median, 90 %, worst  between")
    for grain in grains:
        scenes = [by_size for (_, g, _, fall), by_size in entries.items()
                  if g == grain and all(d in by_size for d in SIZES_M) and 0.08 <= fall <= 0.4]
        means = [statistics.mean(s[d] for s in scenes) for d in SIZES_M]
        errors, between = [], 0
        for s in scenes:
            lo, mid, hi = (s[d] for d in SIZES_M)
            errors.append(abs((lo + (hi - lo) * weight) / mid - 1.0))
            between += min(lo, hi) <= mid <= max(lo, hi)
        errors.sort()
        print(f"{grain:<14} {len(scenes):>6}  {means[0]:6.2f} / {means[1]:6.2f} / {means[2]:6.2f}"
              f"                {100 * statistics.median(errors):5.1f} %, {100 * errors[int(0.9 * len(errors))]:5.1f} %,"
              f" {100 * errors[-1]:5.1f} %   {between}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes drop_beads.csv: a small contact file for `granary render --collisions`.

Twelve 2 mm glass beads dropped one after another into a ceramic cup from 4 to 12 cm,
each bouncing on the floor with restitution 0.8 until its bounce is slower than 5 cm/s
(ballistic flight between bounces: the next impact comes 2 v / g later at the same speed
times the restitution). Every fourth bounce lands on a bead already lying on the floor
(a grain-grain contact) instead, with a tilted normal. Positions are in the cup's frame
(origin at the centre of its inner floor, z up), in metres. Deterministic: no random
numbers, so the file is the same every time.
"""
import math

G = 9.81
RESTITUTION = 0.8
RADIUS_M = 0.001

rows = []
for bead in range(12):
    t = 0.15 * bead + 0.05
    height = 0.04 + 0.08 * ((bead * 7) % 12) / 11
    v = math.sqrt(2 * G * height)
    t += math.sqrt(2 * height / G)
    angle = 2.4 * bead
    x, y = 0.015 * math.cos(angle), 0.015 * math.sin(angle)
    bounce = 0
    while v > 0.05 and t < 2.5:
        if bounce % 4 == 3:
            rows.append((t, x, y, 2 * RADIUS_M, 0.3, 0.1, 0.95, v, "grain", "glass_beads_2mm", "grain", "glass_beads_2mm"))
        else:
            rows.append((t, x, y, RADIUS_M, 0.0, 0.0, 1.0, v, "grain", "glass_beads_2mm", "cup", "ceramic"))
        v *= RESTITUTION
        t += 2 * v / G
        bounce += 1

rows.sort()
with open(__file__.replace("drop_beads.py", "drop_beads.csv"), "w") as f:
    f.write("# Twelve glass beads dropped into a ceramic cup (examples/contacts/drop_beads.py)\n")
    f.write("time_s,x_m,y_m,z_m,nx,ny,nz,speed_m_s,body_a,material_a,body_b,material_b\n")
    for r in rows:
        f.write("%.6f,%.5f,%.5f,%.4f,%.3f,%.3f,%.3f,%.4f,%s,%s,%s,%s\n" % r)

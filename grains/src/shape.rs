//! Grain shapes: an inside test, an outward normal and the mass properties per unit density.
//!
//! Every shape is given by its equivalent-volume diameter `d` (m: the diameter of the sphere
//! of the same volume) and dimension ratios from the literature (cited at each kind). The
//! body frame has its origin at the centre of mass and, where the shape has them, its axes
//! along the principal axes. The shape is an implicit function `f(x)`, negative inside,
//! positive outside, of the order of the distance to the surface near it (exact for the
//! sphere and the cube); the outward normal is the normalised gradient of `f`.

use serde::{Deserialize, Serialize};

/// The grain kinds (and the engine materials they stand for).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShapeKind {
    /// Sphere: the reference (glass beads, steel shot).
    Sphere,
    /// Prolate spheroid, length/width 3.5 (long-grain rice).
    Rice,
    /// Oblate spheroid, diameter/thickness 2.75 (lentils).
    Lentil,
    /// Flat circular cylinder, diameter/thickness 3 (plastic discs).
    Disc,
    /// Ellipsoid with a flat, grooved side (coffee beans).
    Bean,
    /// Cube (salt, sugar).
    Cube,
    /// Irregular stone: a deterministically perturbed ellipsoid (gravel).
    Stone,
}

impl ShapeKind {
    pub const ALL: [ShapeKind; 7] = [
        ShapeKind::Sphere,
        ShapeKind::Rice,
        ShapeKind::Lentil,
        ShapeKind::Disc,
        ShapeKind::Bean,
        ShapeKind::Cube,
        ShapeKind::Stone,
    ];

    /// Short stable name (file names, command line).
    pub fn name(self) -> &'static str {
        match self {
            ShapeKind::Sphere => "sphere",
            ShapeKind::Rice => "rice",
            ShapeKind::Lentil => "lentil",
            ShapeKind::Disc => "disc",
            ShapeKind::Bean => "bean",
            ShapeKind::Cube => "cube",
            ShapeKind::Stone => "stone",
        }
    }

    pub fn from_name(name: &str) -> Option<ShapeKind> {
        ShapeKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Equivalent-volume diameter of the assets, m: the engine's grain diameter of the material
    /// the shape stands for (`diameter_m` in engine/src/base/materials.rs; sphere: 1 mm glass
    /// beads; cube: sugar, 0.5 mm).
    pub fn reference_diameter(self) -> f64 {
        match self {
            ShapeKind::Sphere => 1.0e-3,
            ShapeKind::Rice => 2.8e-3,
            ShapeKind::Lentil => 3.9e-3,
            ShapeKind::Disc => 3.1e-3,
            ShapeKind::Bean => 7.0e-3,
            ShapeKind::Cube => 0.5e-3,
            ShapeKind::Stone => 6.0e-3,
        }
    }
}

/// Volume, centre of mass and inertia tensor of a shape per unit density.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MassProperties {
    /// Volume, m^3 (the mass per unit density, kg per kg/m^3).
    pub volume_m3: f64,
    /// Centre of mass in the shape's defining frame, m (the body frame has it at the origin).
    pub centre_m: [f64; 3],
    /// Inertia tensor about the centre of mass per unit density, m^5 (kg m^2 per kg/m^3).
    pub inertia_m5: [[f64; 3]; 3],
}

/// The geometry in its defining frame (before moving the centre of mass to the origin).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Geometry {
    /// Ellipsoid with semi-axes (m).
    Ellipsoid([f64; 3]),
    /// Cylinder along z: radius and half-height (m).
    Cylinder { radius: f64, half_height: f64 },
    /// Cube of half-side (m).
    Cube(f64),
    /// Ellipsoid with semi-axes `axes`, cut flat at `z = cut_z`, with a groove of half-width
    /// `groove_half_width` along x from the flat face up to `z = groove_top` (m).
    Bean {
        axes: [f64; 3],
        cut_z: f64,
        groove_half_width: f64,
        groove_top: f64,
    },
    /// Star-shaped stone: the ellipsoid `axes` with its radius scaled by `stone_factor`.
    Stone { axes: [f64; 3] },
}

impl Geometry {
    /// Implicit function (m, negative inside) in the defining frame.
    fn implicit(&self, x: [f64; 3]) -> f64 {
        match *self {
            Geometry::Ellipsoid(ax) => ellipsoid_implicit(ax, x),
            Geometry::Cylinder { radius, half_height } => (x[0].hypot(x[1]) - radius).max(x[2].abs() - half_height),
            Geometry::Cube(s) => (x[0].abs().max(x[1].abs()).max(x[2].abs())) - s,
            Geometry::Bean {
                axes,
                cut_z,
                groove_half_width,
                groove_top,
            } => {
                let body = ellipsoid_implicit(axes, x).max(cut_z - x[2]);
                let groove = (x[1].abs() - groove_half_width).max(x[2] - groove_top);
                body.max(-groove)
            }
            Geometry::Stone { axes } => {
                let r = norm(x);
                if r == 0.0 {
                    return -axes[2];
                }
                let u = [x[0] / r, x[1] / r, x[2] / r];
                let q = (u[0] / axes[0]).powi(2) + (u[1] / axes[1]).powi(2) + (u[2] / axes[2]).powi(2);
                r - stone_factor(u) / q.sqrt()
            }
        }
    }

    /// Radius of a sphere about the defining origin that contains the shape, m.
    fn enclosing_radius(&self) -> f64 {
        match *self {
            Geometry::Ellipsoid(ax) | Geometry::Bean { axes: ax, .. } => ax[0].max(ax[1]).max(ax[2]),
            Geometry::Cylinder { radius, half_height } => radius.hypot(half_height),
            Geometry::Cube(s) => s * 3f64.sqrt(),
            Geometry::Stone { axes } => 1.35 * axes[0].max(axes[1]).max(axes[2]),
        }
    }
}

/// The perturbation of the stone's radius: a fixed sum of low-order polynomials of the
/// direction `u` (a unit vector), between 0.85 and 1.15, smooth, not symmetric under
/// any reflection: an irregular but reproducible pebble.
fn stone_factor(u: [f64; 3]) -> f64 {
    let [x, y, z] = u;
    1.0 + 0.12 * x * y - 0.10 * y * z + 0.08 * z * x + 0.09 * x * x * x - 0.07 * y * y * y + 0.06 * z * z * z
        - 0.05 * x * y * z
        + 0.04 * (x * x - y * y)
}

fn ellipsoid_implicit(ax: [f64; 3], x: [f64; 3]) -> f64 {
    let q = (x[0] / ax[0]).powi(2) + (x[1] / ax[1]).powi(2) + (x[2] / ax[2]).powi(2);
    // (|x/a| - 1) scaled by the smallest semi-axis: a distance near the surface within the
    // axis ratio; only its sign and gradient direction are used.
    (q.sqrt() - 1.0) * ax[0].min(ax[1]).min(ax[2])
}

fn norm(x: [f64; 3]) -> f64 {
    (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt()
}

/// A grain shape in its body frame (origin at the centre of mass), SI metres.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub kind: ShapeKind,
    /// Equivalent-volume diameter, m.
    pub diameter_m: f64,
    geometry: Geometry,
    mass: MassProperties,
}

/// Voxels per axis of the bounding cube for the mass properties without a closed form
/// (bean, stone): the midpoint rule over the inside test, subdivided at the surface.
const MASS_VOXELS: usize = 160;

impl Shape {
    /// The shape `kind` with equivalent-volume diameter `diameter_m` (m).
    pub fn new(kind: ShapeKind, diameter_m: f64) -> Shape {
        assert!(diameter_m > 0.0);
        let r_eq = diameter_m / 2.0;
        let v_eq = 4.0 / 3.0 * std::f64::consts::PI * r_eq.powi(3);
        let geometry = match kind {
            ShapeKind::Sphere => Geometry::Ellipsoid([r_eq; 3]),
            // Long-grain milled rice: length 6.6–7.5 mm, width 1.9–2.2 mm, length/width
            // 3.0–3.7 (IRRI's grain-shape classes call L/W > 3 "slender"); we take 3.5 with a
            // round cross-section (width = thickness), as a prolate spheroid.
            ShapeKind::Rice => spheroid(v_eq, 3.5, true),
            // Lentils (Lens culinaris): diameter 4–7 mm, thickness 2–3 mm, diameter/thickness
            // 2.5–3 in seed-dimension surveys; 2.75, as an oblate spheroid (a lens with rounded
            // rather than sharp rim).
            ShapeKind::Lentil => spheroid(v_eq, 2.75, false),
            // Plastic discs: injection-moulded granulate and game counters, diameter about
            // three times the thickness (a 4 mm disc 1.3 mm thick).
            ShapeKind::Disc => {
                // V = pi r^2 (2 hh) with 2r = 3 (2 hh): V = pi r^2 (2r/3)
                let radius = (3.0 * v_eq / (2.0 * std::f64::consts::PI)).cbrt();
                Geometry::Cylinder {
                    radius,
                    half_height: radius / 3.0,
                }
            }
            // Table salt crystallises as cubes (halite habit); granulated sugar as short
            // monoclinic prisms, close to cubes: a cube of side d (pi/6)^(1/3).
            ShapeKind::Cube => Geometry::Cube(0.5 * v_eq.cbrt()),
            // Roasted arabica beans: about 10–11 mm long, 7–8 mm wide, 5–6 mm thick, one side
            // flat with a central groove (published seed-dimension surveys of coffee, e.g.
            // Chandrasekar & Viswanathan 1999): an ellipsoid 10 : 7.5 : 2*4.0 cut flat a
            // quarter of its semi-thickness below the middle (thickness 5 units), with a groove
            // 8 % of the width wide and 20 % of the thickness deep. Scaled to the volume below.
            ShapeKind::Bean => {
                let unit = Geometry::Bean {
                    axes: [5.0, 3.75, 4.0],
                    cut_z: -1.0,
                    groove_half_width: 0.3,
                    groove_top: 0.0,
                };
                scale_to_volume(unit, v_eq)
            }
            // Gravel: axes 1 : 0.75 : 0.55 (b/a = 0.75, c/b = 0.73: Zingg's 1935 "equant"
            // form class, near its borders with the disc and blade classes, as rounded river
            // gravel often is; our choice of a representative pebble, not a measured mean);
            // the surface is then perturbed smoothly (`stone_factor`) to make it irregular.
            // Scaled to the volume.
            ShapeKind::Stone => scale_to_volume(
                Geometry::Stone {
                    axes: [1.0, 0.75, 0.55],
                },
                v_eq,
            ),
        };
        let mass = mass_properties(&geometry);
        Shape {
            kind,
            diameter_m,
            geometry,
            mass,
        }
    }

    /// The shape at its reference size (`ShapeKind::reference_diameter`).
    pub fn reference(kind: ShapeKind) -> Shape {
        Shape::new(kind, kind.reference_diameter())
    }

    /// Implicit function at `x` (body frame, m): negative inside, positive outside, m.
    pub fn implicit(&self, x: [f64; 3]) -> f64 {
        let c = self.mass.centre_m;
        self.geometry.implicit([x[0] + c[0], x[1] + c[1], x[2] + c[2]])
    }

    /// Whether `x` (body frame, m) is inside the grain.
    pub fn inside(&self, x: [f64; 3]) -> bool {
        self.implicit(x) < 0.0
    }

    /// Outward unit normal at (or near) `x`, body frame: the normalised gradient of the
    /// implicit function by central differences over a thousandth of the diameter.
    pub fn normal(&self, x: [f64; 3]) -> [f64; 3] {
        let e = 1e-3 * self.diameter_m;
        let mut g = [0.0; 3];
        for i in 0..3 {
            let (mut a, mut b) = (x, x);
            a[i] += e;
            b[i] -= e;
            g[i] = self.implicit(a) - self.implicit(b);
        }
        let n = norm(g);
        if n == 0.0 {
            return [0.0, 0.0, 1.0];
        }
        [g[0] / n, g[1] / n, g[2] / n]
    }

    /// Radius of the bounding sphere about the centre of mass, m (seed 001 §4.2's `R`): the
    /// largest distance of a surface point, sampled on a fine direction grid and bisected.
    pub fn bounding_radius(&self) -> f64 {
        let (nt, np) = (90, 180);
        let mut best: f64 = 0.0;
        for it in 0..=nt {
            let th = std::f64::consts::PI * it as f64 / nt as f64;
            for ip in 0..np {
                let ph = 2.0 * std::f64::consts::PI * ip as f64 / np as f64;
                let u = [th.sin() * ph.cos(), th.sin() * ph.sin(), th.cos()];
                if let Some(r) = self.surface_radius(u) {
                    best = best.max(r);
                }
            }
        }
        best
    }

    /// The outermost crossing of the surface along the unit direction `u` from the centre of
    /// mass, m (just outside it: the upper end of the bisected bracket), or `None` where the
    /// ray meets no inside sample: marching inwards from beyond the shape in 200 steps, then
    /// bisecting between the last inside sample and the next one outside.
    pub fn surface_radius(&self, u: [f64; 3]) -> Option<f64> {
        let outer = self.geometry.enclosing_radius() * 2.5;
        let steps = 200;
        let mut lo = (0..steps)
            .rev()
            .map(|s| outer * s as f64 / steps as f64)
            .find(|&r| self.inside([u[0] * r, u[1] * r, u[2] * r]))?;
        let mut hi = lo + outer / steps as f64;
        for _ in 0..40 {
            let mid = 0.5 * (lo + hi);
            if self.inside([u[0] * mid, u[1] * mid, u[2] * mid]) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(hi)
    }

    /// A grid step close to `dx` (m) that puts the grain's flat faces on cell faces: the cube's
    /// side and the disc's thickness become an even number of cells (the grid is centred on the
    /// centre of mass), the bean's flat side a whole number of cells from the centre. A staircase cannot place a face aligned with the grid between cells,
    /// so without this a cube of 12.9 cells is voxelised as 12 cells (-20 % volume) or 14.
    /// Other shapes: `dx` unchanged.
    pub fn grid_step(&self, dx: f64) -> f64 {
        let even = |length: f64| length / (2.0 * (length / (2.0 * dx)).round().max(1.0));
        match self.geometry {
            Geometry::Cube(half) => even(2.0 * half),
            Geometry::Cylinder { half_height, .. } => even(2.0 * half_height),
            // the bean's flat cut, `cut_z - centre_z` from the centre of mass, on a cell face
            Geometry::Bean { cut_z, .. } => {
                let z = (cut_z - self.mass.centre_m[2]).abs();
                z / (z / dx).round().max(1.0)
            }
            _ => dx,
        }
    }

    /// Volume, centre of mass (in the defining frame) and inertia tensor per unit density.
    pub fn mass_properties(&self) -> MassProperties {
        self.mass
    }
}

/// Spheroid of volume `v` with polar/equatorial axis ratio `ratio` (> 1): prolate along x when
/// `prolate` (rice), else oblate with its short axis along z (lentil) and diameter/thickness
/// `ratio`.
fn spheroid(v: f64, ratio: f64, prolate: bool) -> Geometry {
    let pi = std::f64::consts::PI;
    if prolate {
        // V = 4/3 pi a b^2, a = ratio b
        let b = (3.0 * v / (4.0 * pi * ratio)).cbrt();
        Geometry::Ellipsoid([ratio * b, b, b])
    } else {
        // V = 4/3 pi a^2 c, a = ratio c
        let c = (3.0 * v / (4.0 * pi * ratio * ratio)).cbrt();
        Geometry::Ellipsoid([ratio * c, ratio * c, c])
    }
}

/// The geometry scaled uniformly so its voxel volume is `v` (m^3).
fn scale_to_volume(g: Geometry, v: f64) -> Geometry {
    let s = (v / mass_properties(&g).volume_m3).cbrt();
    match g {
        Geometry::Bean {
            axes,
            cut_z,
            groove_half_width,
            groove_top,
        } => Geometry::Bean {
            axes: axes.map(|a| a * s),
            cut_z: cut_z * s,
            groove_half_width: groove_half_width * s,
            groove_top: groove_top * s,
        },
        Geometry::Stone { axes } => Geometry::Stone {
            axes: axes.map(|a| a * s),
        },
        other => other,
    }
}

/// Mass properties per unit density: closed forms for the ellipsoid, cylinder and cube,
/// midpoint voxel sums (`MASS_VOXELS` per axis) otherwise.
fn mass_properties(g: &Geometry) -> MassProperties {
    let pi = std::f64::consts::PI;
    let diag = |v: f64, i: [f64; 3]| MassProperties {
        volume_m3: v,
        centre_m: [0.0; 3],
        inertia_m5: [[i[0], 0.0, 0.0], [0.0, i[1], 0.0], [0.0, 0.0, i[2]]],
    };
    match *g {
        Geometry::Ellipsoid([a, b, c]) => {
            let v = 4.0 / 3.0 * pi * a * b * c;
            diag(
                v,
                [
                    v * (b * b + c * c) / 5.0,
                    v * (a * a + c * c) / 5.0,
                    v * (a * a + b * b) / 5.0,
                ],
            )
        }
        Geometry::Cylinder {
            radius: r,
            half_height: hh,
        } => {
            let v = pi * r * r * 2.0 * hh;
            let side = v * (3.0 * r * r + 4.0 * hh * hh) / 12.0;
            diag(v, [side, side, v * r * r / 2.0])
        }
        Geometry::Cube(s) => {
            let v = 8.0 * s * s * s;
            let i = v * (2.0 * s) * (2.0 * s) / 6.0;
            diag(v, [i; 3])
        }
        Geometry::Bean { .. } | Geometry::Stone { .. } => voxel_mass_properties(g, MASS_VOXELS),
    }
}

/// Midpoint-rule volume, centre and inertia over `n^3` voxels of the enclosing cube.
/// The ellipsoid implicit is scaled by its smallest semi-axis, so `|f| < 1.8 h` contains every
/// voxel the surface crosses for the shapes here (axis ratios below 4).
fn voxel_mass_properties(g: &Geometry, n: usize) -> MassProperties {
    let r = g.enclosing_radius();
    let h = 2.0 * r / n as f64;
    let dv = h * h * h;
    let mut vol = 0.0;
    let mut m1 = [0.0; 3];
    let mut m2 = [[0.0; 3]; 3];
    // near the surface (|f| within a voxel diagonal) each voxel is subdivided 4 x 4 x 4, so
    // faces aligned with the voxels (the cylinder's, the bean's cut) do not bias the sums
    let sub = 4;
    let mut add = |x: [f64; 3], w: f64| {
        vol += w;
        for a in 0..3 {
            m1[a] += x[a] * w;
            for b in 0..3 {
                m2[a][b] += x[a] * x[b] * w;
            }
        }
    };
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                let x = [
                    -r + (i as f64 + 0.5) * h,
                    -r + (j as f64 + 0.5) * h,
                    -r + (k as f64 + 0.5) * h,
                ];
                let f = g.implicit(x);
                if f.abs() < 1.8 * h {
                    let hs = h / sub as f64;
                    for a in 0..sub {
                        for b in 0..sub {
                            for c in 0..sub {
                                let y = [
                                    x[0] - 0.5 * h + (a as f64 + 0.5) * hs,
                                    x[1] - 0.5 * h + (b as f64 + 0.5) * hs,
                                    x[2] - 0.5 * h + (c as f64 + 0.5) * hs,
                                ];
                                if g.implicit(y) < 0.0 {
                                    add(y, hs * hs * hs);
                                }
                            }
                        }
                    }
                } else if f < 0.0 {
                    add(x, dv);
                }
            }
        }
    }
    let c = m1.map(|m| m / vol);
    // second moments about the centre, then I = tr(S) 1 - S
    let mut s = [[0.0; 3]; 3];
    for a in 0..3 {
        for b in 0..3 {
            s[a][b] = m2[a][b] - vol * c[a] * c[b];
        }
    }
    let tr = s[0][0] + s[1][1] + s[2][2];
    let mut inertia = [[0.0; 3]; 3];
    for a in 0..3 {
        for b in 0..3 {
            inertia[a][b] = if a == b { tr - s[a][b] } else { -s[a][b] };
        }
    }
    MassProperties {
        volume_m3: vol,
        centre_m: c,
        inertia_m5: inertia,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_has_its_equivalent_volume_and_centre_at_the_origin() {
        for kind in ShapeKind::ALL {
            let d = 4e-3;
            let s = Shape::new(kind, d);
            let want = std::f64::consts::PI * d * d * d / 6.0;
            let m = s.mass_properties();
            assert!(
                (m.volume_m3 / want - 1.0).abs() < 5e-3,
                "{kind:?} {}",
                m.volume_m3 / want
            );
            // an independent voxel count in the body frame: same volume, centre at 0
            let n = 96;
            let r = s.bounding_radius() * 1.01;
            let h = 2.0 * r / n as f64;
            let (mut v, mut c) = (0.0, [0.0; 3]);
            for i in 0..n {
                for j in 0..n {
                    for k in 0..n {
                        let x = [
                            -r + (i as f64 + 0.5) * h,
                            -r + (j as f64 + 0.5) * h,
                            -r + (k as f64 + 0.5) * h,
                        ];
                        if s.inside(x) {
                            v += h * h * h;
                            for a in 0..3 {
                                c[a] += x[a] * h * h * h;
                            }
                        }
                    }
                }
            }
            assert!((v / want - 1.0).abs() < 0.02, "{kind:?} voxel volume {}", v / want);
            for a in 0..3 {
                assert!((c[a] / v).abs() < 0.01 * d, "{kind:?} centre {:?}", c);
            }
        }
    }

    #[test]
    fn voxel_inertia_matches_the_closed_forms() {
        for g in [
            Geometry::Ellipsoid([3e-3, 2e-3, 1e-3]),
            Geometry::Cylinder {
                radius: 2e-3,
                half_height: 0.7e-3,
            },
            Geometry::Cube(1e-3),
        ] {
            let exact = mass_properties(&g);
            let vox = voxel_mass_properties(&g, 160);
            assert!((vox.volume_m3 / exact.volume_m3 - 1.0).abs() < 5e-3, "{g:?}");
            for a in 0..3 {
                let want = exact.inertia_m5[a][a];
                assert!((vox.inertia_m5[a][a] / want - 1.0).abs() < 1e-2, "{g:?} {a}");
            }
        }
    }

    #[test]
    fn normals_point_outwards_and_ratios_hold() {
        let s = Shape::new(ShapeKind::Sphere, 2e-3);
        let n = s.normal([0.6e-3, 0.8e-3, 0.0]);
        assert!((n[0] - 0.6).abs() < 1e-6 && (n[1] - 0.8).abs() < 1e-6);
        let c = Shape::new(ShapeKind::Cube, 2e-3);
        let side = 2e-3 * (std::f64::consts::PI / 6.0).cbrt();
        assert_eq!(c.normal([side / 2.0, 0.1e-3, 0.0]), [1.0, 0.0, 0.0]);
        let rice = Shape::new(ShapeKind::Rice, 4e-3);
        let len = (0..2000)
            .map(|i| i as f64 * 5e-6)
            .take_while(|&x| rice.inside([x, 0.0, 0.0]))
            .last();
        let wid = (0..2000)
            .map(|i| i as f64 * 5e-6)
            .take_while(|&y| rice.inside([0.0, y, 0.0]))
            .last();
        assert!((len.unwrap() / wid.unwrap() / 3.5 - 1.0).abs() < 0.01);
        for kind in ShapeKind::ALL {
            let s = Shape::new(kind, 4e-3);
            let r = s.bounding_radius();
            assert!(r > 1.99e-3 && r < 6e-3, "{kind:?} {r}");
        }
    }
}

//! Grains that are not spheres (seed 001, Chadwick, Zheng & James, *Precomputed Acceleration
//! Noise*, §4; docs/grains.md).
//!
//! The offline crate `grains/` solves the wave equation round each shape for a pulse in each
//! of its six rigid-body degrees of freedom and stores the fields (`assets/grains/`). A
//! contact lasts tens of microseconds, longer than the air takes to cross a grain, so in the
//! audio band a field is a short series in the acceleration's derivatives
//! (`granary_grains::moments`, fitted to the assets' response to a contact): per degree of
//! freedom a near field `N`, its derivative term `N1`, a far-field dipole `F` and a
//! second-order far field `Q` (a spin's quadrupole, a grain's own extent), and per rotation a
//! spin's static near field `N3` in `1/r³`. `shape_table.rs`
//! holds them per shape, generated from the assets (checked by grains/tests/engine_table.rs),
//! per power of the grain's equivalent-volume diameter `d`; `GrainBody` scales them to a grain
//! and `GrainBody::sound` sums them.
//!
//! A collision (`GrainBody::contact`): the grain's orientation is a uniform random rotation
//! (Shoemake 1992), drawn from a hash of the collision (so the same collision always draws
//! the same orientation, whatever the host's blocks). The grain touches where its surface's
//! outward normal is against the push; the point, its curvature and the grain's response use
//! the ellipsoid with the grain's inertia (for an ellipsoid exact; for the disc, bean and stone
//! the ellipsoid of the same second moments). The impulse `j` along the normal gives
//!
//! - `Δv = j n / m` and `Δω = I⁻¹ (x × n) j` (`x` the contact point from the centre of mass),
//! - an effective mass `1/m_eff = Σ (1/m + (x × n)ᵀ I⁻¹ (x × n))` over the bodies that move:
//!   a grain hit off its centre spins and takes less impulse than a sphere;
//! - a Hertz contact whose radius is the geometric mean of the principal radii of curvature at
//!   the contact (PAN eq. 7: `tau ∝ m_eff^(2/5) R^(-1/5) v^(-1/5)`), so a rice grain hit on its
//!   end rings shorter than one hit on its side.
//!
//! The pressure, seed 001 eq. 18–20 reduced to moments (`granary_grains::moments`):
//!
//! ```text
//! p(t) = Σ_f [ N_f(r̂) a_f(t')/r² + (N1_f(r̂)/r² + F_f(r̂)/r) a_f'(t') + Q_f(r̂) a_f''(t')/r ]
//!        + Σ_rotations N3_f(r̂) a_f(t')/r³
//! ```
//!
//! with `t' = t − r/c` and `r` from the centre of mass, over the six accelerations `a_f`
//! (`N3 = −ρ0 r̂ᵀ M r̂`, `M` the spin's static quadrupole measured in the solver: the flow
//! round a grain turning at `Ω` has the potential `Ω r̂ᵀMr̂/r³` and the pressure `−ρ0 ∂φ/∂t`;
//! granary_grains::fdtd::spin_quadrupoles, reference::ellipsoid_spin_quadrupole after Lamb
//! §115; docs/grains.md, "At run time". `N1` and `Q` are the same `M` radiated as an l = 2
//! wave; at 0.1 m `N3` equals the far field at 950 Hz)
//! (which all have the contact's half-sine in time, PAN eq. 6, so the terms become three
//! amplitudes of the band-limited pulse, its derivative and its second derivative:
//! `kernels`). The grains' sound then skips the spheres' radiation filter `B`
//! (`Settings::radiation_radius_m`): the fitted terms hold the grain's size. A sphere (and every grain that behaves like one: the
//! cube, whose dipole is isotropic, whose spins push no dipole and whose equivalent ellipsoid
//! is a sphere) keeps the closed form of `accel_noise` (`GrainBody::shaped` is false); the
//! cube's dipole is the asset's, 11 % above a sphere's of its volume (`dipole_scale`).

use crate::base::fastmath;
use crate::control::choices::Shape;
// generated (grains `moments::engine_table`): its volumes are pi/6 to the voxel sums' digits
#[rustfmt::skip]
#[allow(clippy::approx_constant)]
mod table;

pub use table::SHAPES;

/// One shape's reduced fields and mass properties (`shape_table.rs`), each divided by the
/// power of the equivalent-volume diameter `d` it scales with. Body frame: origin at the
/// centre of mass, axes those of `granary_grains::shape`. Degrees of freedom in the order
/// x, y, z; rows index the degree of freedom, columns the direction `r̂`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShapeData {
    pub name: &'static str,
    /// Volume / d³ (π/6 to the voxel sums' accuracy).
    pub volume_per_d3: f64,
    /// Inertia per unit density / d⁵ (m⁵ / m⁵).
    pub inertia_per_d5: [[f64; 3]; 3],
    /// The solver's low-frequency dipole D_ij / d³ (the far field of a translation along j is
    /// ρ0 D_ij r̂_i ȧ_j / (c r)).
    pub dipole_per_d3: [[f64; 3]; 3],
    /// Near field per m/s² (translations, / d³) and per rad/s² (rotations, / d⁴): `N_f(r̂) =
    /// r̂ · row f`, Pa m².
    pub near_t: [[f64; 3]; 3],
    pub near_r: [[f64; 3]; 3],
    /// Its derivative term, `N1_f(r̂) = quadratic(r̂) · row f` (`quadratic`), Pa m² s
    /// (translations / d⁴, rotations / d⁵).
    pub near_d_t: [[f64; 9]; 3],
    pub near_d_r: [[f64; 9]; 3],
    /// Dipole far field, `F_f(r̂) = r̂ · row f`, Pa m s (translations / d³, rotations / d⁴).
    pub far_t: [[f64; 3]; 3],
    pub far_r: [[f64; 3]; 3],
    /// Second-order far field, `Q_f(r̂) = quadratic(r̂) · row f`, Pa m s² (translations / d⁴,
    /// rotations / d⁵).
    pub quad_t: [[f64; 9]; 3],
    pub quad_r: [[f64; 9]; 3],
    /// A spin's static near field, `N3_f(r̂) = quadratic(r̂) · row f = −ρ0 r̂ᵀ M_f r̂` (`M_f`
    /// the asset's `spin_quadrupole_m5`), Pa m³ per rad/s², / d⁵ (rotations only: the
    /// translations' static field is the dipole's `N`).
    pub near3_r: [[f64; 9]; 3],
}

/// The directional basis of `N1` and `Q`: `(x, y, z, x², y², z², xy, xz, yz)` of a unit
/// direction (granary_grains::moments::quadratic_basis).
#[inline(always)]
pub fn quadratic(d: [f32; 3]) -> [f32; 9] {
    [
        d[0],
        d[1],
        d[2],
        d[0] * d[0],
        d[1] * d[1],
        d[2] * d[2],
        d[0] * d[1],
        d[0] * d[2],
        d[1] * d[2],
    ]
}

type M3 = [[f32; 3]; 3];

/// A shape at a grain's size and density: what a collision reads (f32, SI units).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GrainBody {
    pub shape: Shape,
    /// Equivalent-volume radius, m, and mass, kg.
    pub radius_m: f32,
    pub mass_kg: f32,
    /// False: the grain renders as a sphere (`accel_noise`) with its dipole times
    /// `dipole_scale` (the module doc); true: `contact` and `sound`.
    pub shaped: bool,
    pub dipole_scale: f32,
    /// Inverse inertia tensor, body frame, 1/(kg m²).
    pub inv_inertia: M3,
    /// The equivalent ellipsoid `xᵀ S⁻¹ x = 1` (`S`, m²) and `sqrt(det S)`, m³.
    pub ellipsoid: M3,
    pub sqrt_det: f32,
    /// `N`, `N1`, `F`, `Q` rows per degree of freedom (Tx Ty Tz Rx Ry Rz), scaled to the
    /// grain (`ShapeData`).
    pub near: [[f32; 3]; 6],
    pub near_d: [[f32; 9]; 6],
    pub far: [[f32; 3]; 6],
    pub quad: [[f32; 9]; 6],
    /// `N3` rows of the rotations (Rx Ry Rz), scaled to the grain.
    pub near3: [[f32; 9]; 3],
}

impl GrainBody {
    /// `shape` with equivalent-volume diameter `diameter_m` and density `density` (kg/m³).
    pub fn new(shape: Shape, diameter_m: f32, density: f32) -> GrainBody {
        let s = shape.data();
        let d = diameter_m as f64;
        let rho = density as f64;
        let (d3, d4, d5) = (d.powi(3), d.powi(4), d.powi(5));
        let volume = s.volume_per_d3 * d3;
        let inertia = s.inertia_per_d5.map(|r| r.map(|x| x * d5 * rho));
        let mass = rho * volume;
        // the ellipsoid of the same second moments: J = ∫ x xᵀ dm / m = (tr(I)/2) 1 - I (per
        // unit mass), and an ellipsoid's J is diag(a², b², c²)/5, so S = 5 J
        let tr = inertia[0][0] + inertia[1][1] + inertia[2][2];
        let ellipsoid: [[f64; 3]; 3] = std::array::from_fn(|i| {
            std::array::from_fn(|j| 5.0 * ((if i == j { tr / 2.0 } else { 0.0 }) - inertia[i][j]) / mass)
        });
        let scale = |m: &[[f64; 3]; 3], k: f64| m.map(|r| r.map(|x| (x * k) as f32));
        let (nt, nr) = (scale(&s.near_t, d3), scale(&s.near_r, d4));
        let (ft, fr) = (scale(&s.far_t, d3), scale(&s.far_r, d4));
        let scale9 = |m: &[[f64; 9]; 3], k: f64| m.map(|r| r.map(|x| (x * k) as f32));
        let (ndt, ndr) = (scale9(&s.near_d_t, d4), scale9(&s.near_d_r, d5));
        let (qt, qr) = (scale9(&s.quad_t, d4), scale9(&s.quad_r, d5));
        let near3 = scale9(&s.near3_r, d5);
        let isotropic = !shape.has_own_field();
        let dipole = (s.dipole_per_d3[0][0] + s.dipole_per_d3[1][1] + s.dipole_per_d3[2][2]) / 3.0;
        GrainBody {
            shape,
            radius_m: 0.5 * diameter_m,
            mass_kg: mass as f32,
            shaped: !isotropic,
            // a sphere's D is a³/2 = d³/16: the closed form for spheres, the asset's otherwise
            dipole_scale: if shape == Shape::Sphere {
                1.0
            } else {
                (16.0 * dipole) as f32
            },
            inv_inertia: inverse(&inertia).map(|r| r.map(|x| x as f32)),
            ellipsoid: ellipsoid.map(|r| r.map(|x| x as f32)),
            sqrt_det: det(&ellipsoid).max(0.0).sqrt() as f32,
            near: [nt[0], nt[1], nt[2], nr[0], nr[1], nr[2]],
            near_d: [ndt[0], ndt[1], ndt[2], ndr[0], ndr[1], ndr[2]],
            far: [ft[0], ft[1], ft[2], fr[0], fr[1], fr[2]],
            quad: [qt[0], qt[1], qt[2], qr[0], qr[1], qr[2]],
            near3,
        }
    }

    /// The grain's part in a collision that pushes it along the world unit vector `push`:
    /// its orientation `q` (body to world, `rotation`), and where and how it is touched.
    #[inline(always)]
    pub fn contact(&self, q: &M3, push: [f32; 3]) -> GrainContact {
        // the push in the body frame; the contact is where the outward normal is -push
        let n = mul_t(q, push);
        let m = [-n[0], -n[1], -n[2]];
        // the ellipsoid's point with outward normal m: x = S m / sqrt(mᵀ S m)
        let sm = mul(&self.ellipsoid, m);
        let h2 = (m[0] * sm[0] + m[1] * sm[1] + m[2] * sm[2]).max(1e-30);
        let inv_h = 1.0 / h2.sqrt();
        let x = [sm[0] * inv_h, sm[1] * inv_h, sm[2] * inv_h];
        // the product of the principal radii of curvature there is det S / (mᵀ S m)², so
        // their geometric mean is sqrt(det S) / (mᵀ S m)
        let radius = self.sqrt_det / h2;
        // torque arm per unit impulse, and the spin it gives
        let u = cross(x, n);
        let spin = mul(&self.inv_inertia, u);
        GrainContact {
            n,
            x,
            radius_m: radius,
            compliance: u[0] * spin[0] + u[1] * spin[1] + u[2] * spin[2],
            spin,
        }
    }

    /// The amplitudes `[a0, a1, a2]` of the band-limited pulse, its derivative and its second
    /// derivative (`kernels`) for a grain touched as `c`, heard at distance `1/inv_r` (m, from
    /// its centre of mass) in body-frame direction `dir` (unit), after an impulse `j` (N s,
    /// times the collision's weight): the module doc's sum, with `a_f = Δv_f` or `Δω_f` times
    /// the unit-area pulse.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // f indexes the six rows and two vectors
    pub fn sound(&self, c: &GrainContact, dir: [f32; 3], inv_r: f32, j: f32) -> [f32; 3] {
        let inv_m = 1.0 / self.mass_kg;
        // the six accelerations' areas per unit impulse: Δv = n/m, Δω = I⁻¹ (x × n)
        let w = [
            c.n[0] * inv_m,
            c.n[1] * inv_m,
            c.n[2] * inv_m,
            c.spin[0],
            c.spin[1],
            c.spin[2],
        ];
        let q = quadratic(dir);
        let dot3 = |v: &[f32; 3]| dir[0] * v[0] + dir[1] * v[1] + dir[2] * v[2];
        let dot9 = |v: &[f32; 9]| v.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>();
        let (mut near, mut near_d, mut far, mut quad, mut near3) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for f in 0..6 {
            near += dot3(&self.near[f]) * w[f];
            near_d += dot9(&self.near_d[f]) * w[f];
            far += dot3(&self.far[f]) * w[f];
            quad += dot9(&self.quad[f]) * w[f];
        }
        for f in 0..3 {
            near3 += dot9(&self.near3[f]) * w[3 + f];
        }
        let (j_r, j_r2) = (j * inv_r, j * inv_r * inv_r);
        let j_r3 = j_r2 * inv_r;
        // the spin's static near field rides on the same pulse as the dipole's near field
        [near * j_r2 + near3 * j_r3, far * j_r + near_d * j_r2, quad * j_r]
    }
}

/// Where and how a collision touches a grain (`GrainBody::contact`), body frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GrainContact {
    /// The push's direction (unit).
    pub n: [f32; 3],
    /// The contact point from the centre of mass, m.
    pub x: [f32; 3],
    /// Geometric mean of the principal radii of curvature there, m.
    pub radius_m: f32,
    /// `(x × n)ᵀ I⁻¹ (x × n)`, 1/kg: the spin's share of the grain's compliance.
    pub compliance: f32,
    /// `I⁻¹ (x × n)`: the spin per unit impulse, rad/s per N s.
    pub spin: [f32; 3],
}

/// A 32-bit integer hash (Wellons' "lowbias32"): full avalanche, cheap in SIMD lanes.
#[inline(always)]
pub fn hash32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^ (x >> 16)
}

/// A uniform random rotation (body to world) from the hash `h` (Shoemake, "Uniform random
/// rotations", Graphics Gems III, 1992: a unit quaternion from three uniforms).
#[inline(always)]
pub fn rotation(h: u32) -> M3 {
    let unit = |x: u32| (x >> 8) as f32 * (1.0 / 16_777_216.0);
    let h1 = hash32(h ^ 0x68e3_1da4);
    let h2 = hash32(h ^ 0xb529_7a4d);
    let h3 = hash32(h ^ 0x1b56_c4e9);
    let u1 = unit(h1);
    // angles in [-pi, pi): uniform all the same
    let t1 = (unit(h2) - 0.5) * std::f32::consts::TAU;
    let t2 = (unit(h3) - 0.5) * std::f32::consts::TAU;
    let (s1, c1) = fastmath::sin_cos(t1);
    let (s2, c2) = fastmath::sin_cos(t2);
    let (a, b) = ((1.0 - u1).max(0.0).sqrt(), u1.sqrt());
    let (w, x, y, z) = (b * c2, a * s1, a * c1, b * s2);
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

/// `m v`.
#[inline(always)]
pub fn mul(m: &M3, v: [f32; 3]) -> [f32; 3] {
    std::array::from_fn(|i| m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2])
}

/// `mᵀ v`.
#[inline(always)]
pub fn mul_t(m: &M3, v: [f32; 3]) -> [f32; 3] {
    std::array::from_fn(|i| m[0][i] * v[0] + m[1][i] * v[1] + m[2][i] * v[2])
}

#[inline(always)]
pub fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn det(m: &[[f64; 3]; 3]) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

fn inverse(m: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let d = det(m);
    let c = |i: usize, j: usize| {
        let (r0, r1) = ((i + 1) % 3, (i + 2) % 3);
        let (c0, c1) = ((j + 1) % 3, (j + 2) % 3);
        m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0]
    };
    // the inverse is the transposed cofactor matrix over the determinant
    std::array::from_fn(|i| std::array::from_fn(|j| c(j, i) / d))
}

impl Shape {
    pub fn data(self) -> &'static ShapeData {
        &SHAPES[self as usize]
    }

    /// Whether the engine renders the shape's own field (`GrainBody::contact`, `sound`); a
    /// sphere, and the cube, whose dipole is isotropic, whose spins push no dipole and whose
    /// equivalent ellipsoid is a sphere, take the spheres' closed form (module doc).
    pub fn has_own_field(self) -> bool {
        !matches!(self, Shape::Sphere | Shape::Cube)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_shape_order() {
        // The choice's ids (control::choices) name the generated table's rows.
        for s in Shape::ALL {
            assert_eq!(Shape::from_id(s.id()), Some(s));
            assert_eq!(s.data().name, s.id());
        }
    }

    #[test]
    fn rotations_are_rotations() {
        for h in 0..1000u32 {
            let q = rotation(hash32(h));
            for i in 0..3 {
                for j in 0..3 {
                    let dot: f32 = (0..3).map(|k| q[k][i] * q[k][j]).sum();
                    let want = if i == j { 1.0 } else { 0.0 };
                    assert!((dot - want).abs() < 1e-5, "{h}: {q:?}");
                }
            }
            let d = det(&q.map(|r| r.map(|x| x as f64)));
            assert!((d - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn rotations_are_uniform() {
        // a uniform rotation carries +z to a uniform direction: its z component is uniform
        // on [-1, 1] (mean 0, mean square 1/3)
        let n = 20_000;
        let (mut m1, mut m2) = (0.0f64, 0.0f64);
        for h in 0..n {
            let z = rotation(hash32(h))[2][2] as f64;
            m1 += z;
            m2 += z * z;
        }
        assert!((m1 / n as f64).abs() < 0.02, "{}", m1 / n as f64);
        assert!((m2 / n as f64 - 1.0 / 3.0).abs() < 0.01, "{}", m2 / n as f64);
    }

    #[test]
    fn sphere_contact_is_a_sphere() {
        let g = GrainBody::new(Shape::Sphere, 2e-3, 2500.0);
        let q = rotation(hash32(7));
        let c = g.contact(&q, [0.0, 0.0, 1.0]);
        assert!((c.radius_m - 1e-3).abs() < 1e-8, "{}", c.radius_m);
        assert!(c.compliance.abs() < 1e-6 / g.mass_kg);
        let mass = 2500.0 * std::f32::consts::PI / 6.0 * 8e-9;
        assert!((g.mass_kg / mass - 1.0).abs() < 1e-5);
    }

    #[test]
    fn rice_hit_off_centre_spins_and_is_sharper_at_the_end() {
        let g = GrainBody::new(Shape::Rice, 2.8e-3, 1450.0);
        let id = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        // pushed along its long axis (x): hit on its tip, no spin, small radius
        let tip = g.contact(&id, [1.0, 0.0, 0.0]);
        // pushed across it: hit on its side, no spin, large radius
        let side = g.contact(&id, [0.0, 0.0, 1.0]);
        // pushed at 45 degrees: off the centre line, it spins
        let s = std::f32::consts::FRAC_1_SQRT_2;
        let oblique = g.contact(&id, [s, 0.0, s]);
        assert!(tip.compliance.abs() < 1e-3 / g.mass_kg && side.compliance.abs() < 1e-3 / g.mass_kg);
        assert!(
            oblique.compliance > 0.3 / g.mass_kg,
            "{}",
            oblique.compliance * g.mass_kg
        );
        assert!(oblique.spin[1].abs() > 0.0 && oblique.spin[0] == 0.0);
        // a prolate spheroid of semi-axes a > b = c has both principal radii b²/a at its tip;
        // at its side a²/b (along it) and b (round it), whose geometric mean is a
        let e = g.ellipsoid;
        let (a, b) = (e[0][0].sqrt(), e[1][1].sqrt());
        assert!(
            (tip.radius_m - b * b / a).abs() < 1e-3 * b,
            "{} {}",
            tip.radius_m,
            b * b / a
        );
        assert!((side.radius_m - a).abs() < 1e-3 * a, "{} {a}", side.radius_m);
    }

    #[test]
    fn a_translating_grain_sounds_as_its_dipole() {
        // the near field of a push along the body's x axis, heard on that axis, is
        // rho0 D_xx dv / r^2 (seed 002 eq. 16 with D for a³/2)
        let g = GrainBody::new(Shape::Rice, 2.8e-3, 1450.0);
        let id = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        let c = g.contact(&id, [1.0, 0.0, 0.0]);
        let r = 0.3;
        let [a0, a1, _] = g.sound(&c, [1.0, 0.0, 0.0], 1.0 / r, 1e-6);
        let dxx = Shape::Rice.data().dipole_per_d3[0][0] as f32 * 2.8e-3f32.powi(3);
        let want = crate::base::materials::AIR_DENSITY * dxx * (1e-6 / g.mass_kg) / (r * r);
        assert!((a0 / want - 1.0).abs() < 0.02, "{a0} {want}");
        // the far field, and the near field's derivative term (under 3 % at 0.3 m)
        let far = want * r / crate::base::materials::SPEED_OF_SOUND;
        assert!((a1 / far - 1.0).abs() < 0.05, "{a1} {far}");
    }

    #[test]
    fn a_spinning_grain_has_the_static_near_field_of_its_radiated_quadrupole() {
        // rice (long axis x) spun about y, heard in the xz plane: its quadrupole's static near
        // field N3 a/r³ (from the measured M) and the l = 2 wave's intermediate term N1 a'/r²
        // (fitted to the assets' series) are the same M: N3 = c N1 (docs/grains.md), and
        // both are there (rice spins push no dipole: N and F of a spin are nil)
        let g = GrainBody::new(Shape::Rice, 2.8e-3, 1450.0);
        let c = GrainContact {
            spin: [0.0, 1.0, 0.0],
            ..GrainContact::default()
        };
        let s = std::f32::consts::FRAC_1_SQRT_2;
        let r = 0.1;
        let [a0, a1, _] = g.sound(&c, [s, 0.0, s], 1.0 / r, 1e-6);
        let ratio = a0 * r / (crate::base::materials::SPEED_OF_SOUND * a1);
        assert!(a0 != 0.0 && (ratio - 1.0).abs() < 0.05, "{a0} {a1} {ratio}");
        // and it falls as 1/r³
        let [b0, _, _] = g.sound(&c, [s, 0.0, s], 1.0 / (2.0 * r), 1e-6);
        assert!((b0 * 8.0 / a0 - 1.0).abs() < 1e-3, "{a0} {b0}");
    }
}

//! The generator's lane arithmetic: a batch of drawn collisions of one cell (`TrigBatch`,
//! every random draw taken by `generate`) finished together in SIMD lanes: the sines and
//! cosines of their angles, their speeds, positions and normals (`finish_lanes`). The
//! scalar version, one collision at a time as the physics reads, is `finish_one`; a test
//! runs every copy of `finish_lanes` (`simd::Isa::available`) against it.

use super::{Cell, Histogram, SPEED_BINS, STREAM_RISE};
use crate::base::fastmath;
use crate::base::simd::{Isa, Kernel, Target};

/// Collisions per `TrigBatch`: one SIMD lane each.
pub(super) const TRIG_BATCH: usize = 16;
/// The angles of a collision whose sine and cosine are needed (`TrigBatch::angle`): the
/// position's azimuth in its cell, the normal's polar angle (or a random normal's azimuth),
/// the normal's azimuth about the cell's axis and the stream's axis.
pub(super) const PLACE: usize = 0;
pub(super) const NORMAL: usize = 1;
pub(super) const AZIMUTH: usize = 2;
/// Last, so that batches of the cells without a stream axis leave it out (`TrigBatch::finish`).
pub(super) const AXIS: usize = 3;

/// Up to `TRIG_BATCH` drawn collisions of one cell, lane `i` for collision `i`: every
/// random draw taken, the arithmetic on them still to come (`finish_lanes`). Lanes past
/// `len` hold stale or zero values, evaluated and never read.
#[derive(Default)]
pub(super) struct TrigBatch {
    pub(super) len: usize,
    /// The angles whose sines and cosines are needed (see `PLACE` and the others), rad.
    pub(super) angle: [[f32; TRIG_BATCH]; 4],
    /// Fractions of the speeds in the cell's speed histogram (`Histogram::sample_log`).
    pub(super) speed_u: [f32; TRIG_BATCH],
    /// Each collision's amplitude weight (`Collision::weight`).
    pub(super) weight: [f32; TRIG_BATCH],
    /// Time within the window, samples, and `ln v0`.
    pub(super) time: [f32; TRIG_BATCH],
    pub(super) ln_v0: [f32; TRIG_BATCH],
    /// The place in the cell (`draw_place`): distance from the cup's axis (m, the cup's
    /// radius on the wall), height (m), and the wall sector (0 or 1) of a wall collision.
    pub(super) radius: [f32; TRIG_BATCH],
    pub(super) z: [f32; TRIG_BATCH],
    pub(super) sector: [u8; TRIG_BATCH],
    /// Whether the normal is uniformly random (`NormalMode::RandomBelow`; its azimuth is
    /// then the `NORMAL` angle) rather than in the cell's cone, and its z if so.
    pub(super) random_normal: [bool; TRIG_BATCH],
    pub(super) normal_z: [f32; TRIG_BATCH],
    /// Whether the cell's draws stand for groups (`Collision::spread`).
    pub(super) spread: bool,
}

/// What a cell's `TrigBatch::finish` needs to evaluate its speeds: the cell's speed shape
/// (`Shapes`) and this window's mean speed; and the instruction set (`Shapes::isa`).
pub(super) struct Lanes<'a> {
    pub(super) speed: &'a Histogram<SPEED_BINS>,
    pub(super) mean_v: f32,
    pub(super) isa: Isa,
}

/// A `TrigBatch`'s collisions as lanes: position (m), unit normal, speed (m/s).
#[derive(Default)]
pub(super) struct Finished {
    pub(super) position: [[f32; TRIG_BATCH]; 3],
    pub(super) normal: [[f32; TRIG_BATCH]; 3],
    pub(super) v0: [f32; TRIG_BATCH],
}

/// A `TrigBatch`'s lane arithmetic into `f` (`finish_lanes_in`), in the copy of the
/// engine's instruction set (`simd`); the same operations in every copy, so the same bits,
/// and the same as `finish_one`'s.
pub(super) fn finish_lanes(cell: Cell, b: &TrigBatch, lanes: &Lanes, f: &mut Finished) {
    lanes.isa.run(FinishLanes { cell, b, lanes, f });
}

/// `finish_lanes` as a `simd::Kernel` (its AVX-512 copy: a batch's lanes are one vector).
struct FinishLanes<'a, 'h> {
    cell: Cell,
    b: &'a TrigBatch,
    lanes: &'a Lanes<'h>,
    f: &'a mut Finished,
}

impl Kernel for FinishLanes<'_, '_> {
    type Output = ();
    const HAS_AVX512: bool = true;
    #[inline(always)]
    fn run<T: Target>(self, _: T) {
        finish_lanes_in(self.cell, self.b, self.lanes, self.f);
    }
}

/// Every lane of a batch of `cell`: the sines and cosines of its angles
/// (`fastmath::sin_cos`), its speed (the speed histogram's value at its fraction, an
/// `exp2`, times the window's mean speed), its position, and its normal. Each step is a
/// loop over the lanes with no call and no branch on the lane, so that it compiles to
/// packed SIMD; which formulas apply depends on the cell only.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // lane loops, indexed across several arrays
fn finish_lanes_in(cell: Cell, b: &TrigBatch, lanes: &Lanes, f: &mut Finished) {
    // only the stream has an axis angle
    let angles = if matches!(cell, Cell::Stream) { AXIS + 1 } else { AXIS };
    let (sin, cos) = sin_cos_lanes(&b.angle, angles);
    let h = lanes.speed;
    debug_assert!(h.log);
    for i in 0..TRIG_BATCH {
        f.v0[i] = h.lo * fastmath::exp2(b.speed_u[i] * h.log2_ratio) * lanes.mean_v;
    }
    // the position: the place angle's cosine and sine at the drawn radius, at its height
    // (on the wall, `radius` is the cup's)
    for i in 0..TRIG_BATCH {
        f.position[0][i] = b.radius[i] * cos[PLACE][i];
        f.position[1][i] = b.radius[i] * sin[PLACE][i];
        f.position[2][i] = b.z[i];
    }
    // the normal: at the polar angle `NORMAL` from the cell's mean normal (the direction
    // of the moving grain's acceleration there) and the azimuth `AZIMUTH` about it
    let (sp, cp, sa, ca) = (&sin[NORMAL], &cos[NORMAL], &sin[AZIMUTH], &cos[AZIMUTH]);
    match cell {
        // the grain hitting the wall is pushed back towards the axis
        Cell::WallRing(_) => {
            let axis = [cos[PLACE].map(|c| -c), sin[PLACE].map(|s| -s), [0.0; TRIG_BATCH]];
            around_lanes(&axis, (sp, cp), (sa, ca), &mut f.normal);
        }
        // the stream's grains are pushed sideways, and a little up: the unit vector along
        // (cos, sin, STREAM_RISE) of the stream axis angle
        Cell::Stream => {
            let k = 1.0 / (1.0 + STREAM_RISE * STREAM_RISE).sqrt();
            let axis = [
                cos[AXIS].map(|c| c * k),
                sin[AXIS].map(|s| s * k),
                [STREAM_RISE * k; TRIG_BATCH],
            ];
            around_lanes(&axis, (sp, cp), (sa, ca), &mut f.normal);
        }
        // everywhere else the mean normal is up, (0, 0, 1); the basis of `around_lanes`
        // is then u = (0, -1, 0), w = (1, 0, 0)
        _ => {
            for i in 0..TRIG_BATCH {
                f.normal[0][i] = sp[i] * sa[i];
                f.normal[1][i] = -sp[i] * ca[i];
                f.normal[2][i] = cp[i];
            }
        }
    }
    // uniformly random normals: z uniform in [-1, 1] and a uniform azimuth (`NORMAL`)
    for i in 0..TRIG_BATCH {
        let z = b.normal_z[i];
        let s = (1.0 - z * z).max(0.0).sqrt();
        let random = [s * cp[i], s * sp[i], z];
        for j in 0..3 {
            f.normal[j][i] = if b.random_normal[i] { random[j] } else { f.normal[j][i] };
        }
    }
}

/// The directions at polar angles (sin, cos) `polar` from the lanes' unit mean normals `axis`
/// (not up, and less than 64 degrees from horizontal: the basis is built from the
/// vertical) and azimuths (sin, cos) `azimuth` about them: with the orthonormal basis
/// u = (z x axis) / |z x axis|, w = axis x u, the direction is
/// cos(polar) axis + sin(polar) (cos(azimuth) u + sin(azimuth) w).
#[inline(always)]
#[allow(clippy::needless_range_loop)] // lane loops, indexed across several arrays
fn around_lanes(
    axis: &[[f32; TRIG_BATCH]; 3],
    (sp, cp): (&[f32; TRIG_BATCH], &[f32; TRIG_BATCH]),
    (sa, ca): (&[f32; TRIG_BATCH], &[f32; TRIG_BATCH]),
    out: &mut [[f32; TRIG_BATCH]; 3],
) {
    for i in 0..TRIG_BATCH {
        let a = [axis[0][i], axis[1][i], axis[2][i]];
        debug_assert!(a[2].abs() < 0.9);
        let u = normalize(cross([0.0, 0.0, 1.0], a));
        let w = cross(a, u);
        for j in 0..3 {
            out[j][i] = cp[i] * a[j] + sp[i] * (ca[i] * u[j] + sa[i] * w[j]);
        }
    }
}

#[inline(always)]
fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[inline(always)]
fn normalize(a: [f32; 3]) -> [f32; 3] {
    let l = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt().max(1e-12);
    [a[0] / l, a[1] / l, a[2] / l]
}

/// Sines and cosines of a `TrigBatch`'s angles.
type SinCos = ([[f32; TRIG_BATCH]; 4], [[f32; TRIG_BATCH]; 4]);

/// `fastmath::sin_cos` of every lane of the first `angles` angles, as (sin, cos) (the rest
/// are left at zero).
#[inline(always)]
fn sin_cos_lanes(angle: &[[f32; TRIG_BATCH]; 4], angles: usize) -> SinCos {
    let mut sin = [[0.0f32; TRIG_BATCH]; 4];
    let mut cos = [[0.0f32; TRIG_BATCH]; 4];
    for k in 0..angles.min(4) {
        for i in 0..TRIG_BATCH {
            (sin[k][i], cos[k][i]) = fastmath::sin_cos(angle[k][i]);
        }
    }
    (sin, cos)
}

/// One collision of a batch (lane `i`) finished as the physics reads: the scalar version
/// of `finish_lanes`, with the same operations (so the same bits). Returns its position
/// (m), unit normal and speed (m/s).
#[cfg(test)]
pub(super) fn finish_one(cell: Cell, b: &TrigBatch, i: usize, lanes: &Lanes) -> ([f32; 3], [f32; 3], f32) {
    let sin_cos = |k: usize| fastmath::sin_cos(b.angle[k][i]);
    let ((s_place, c_place), (sp, cp), (sa, ca)) = (sin_cos(PLACE), sin_cos(NORMAL), sin_cos(AZIMUTH));
    // the speed: the cell's speed shape at the drawn fraction, times the window's mean
    let v0 = lanes.speed.at(b.speed_u[i]) * lanes.mean_v;
    // the place: the drawn radius (the cup's on the wall) at the place angle, and height
    let position = [b.radius[i] * c_place, b.radius[i] * s_place, b.z[i]];
    let normal = if b.random_normal[i] {
        // uniformly random: z uniform in [-1, 1], the azimuth uniform (`NORMAL`)
        let z = b.normal_z[i];
        let s = (1.0 - z * z).max(0.0).sqrt();
        [s * cp, s * sp, z]
    } else {
        // at the polar angle `NORMAL` from the cell's mean normal (the direction of the
        // moving grain's acceleration there) and the azimuth `AZIMUTH` about it
        match cell {
            // the grain hitting the wall is pushed back towards the axis
            Cell::WallRing(_) => around([-c_place, -s_place, 0.0], (sp, cp), (sa, ca)),
            // the stream's grains are pushed sideways, and a little up
            Cell::Stream => {
                let (s_axis, c_axis) = sin_cos(AXIS);
                let k = 1.0 / (1.0 + STREAM_RISE * STREAM_RISE).sqrt();
                around([c_axis * k, s_axis * k, STREAM_RISE * k], (sp, cp), (sa, ca))
            }
            // elsewhere up, (0, 0, 1), about which `around`'s basis is u = (0, -1, 0),
            // w = (1, 0, 0)
            _ => [sp * sa, -sp * ca, cp],
        }
    };
    (position, normal, v0)
}

/// The direction at polar angle (sin, cos) `polar` from the unit vector `axis` (not
/// vertical) and azimuth (sin, cos) `azimuth` about it: with u = (z x axis) / |z x axis|
/// and w = axis x u, cos(polar) axis + sin(polar) (cos(azimuth) u + sin(azimuth) w).
#[cfg(test)]
fn around(axis: [f32; 3], (sp, cp): (f32, f32), (sa, ca): (f32, f32)) -> [f32; 3] {
    let u = normalize(cross([0.0, 0.0, 1.0], axis));
    let w = cross(axis, u);
    std::array::from_fn(|j| cp * axis[j] + sp * (ca * u[j] + sa * w[j]))
}

#[cfg(test)]
mod tests {
    use super::super::{Shapes, CELLS};
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// A batch of random draws for `cell`, half its normals uniformly random.
    fn random_batch(rng: &mut Xoshiro256PlusPlus) -> TrigBatch {
        let mut b = TrigBatch {
            len: TRIG_BATCH,
            ..TrigBatch::default()
        };
        for a in b.angle.iter_mut().flatten() {
            *a = rng.random_range(-10.0..10.0);
        }
        for i in 0..TRIG_BATCH {
            b.speed_u[i] = rng.random();
            b.radius[i] = rng.random_range(0.0..0.05);
            b.z[i] = rng.random_range(0.0..0.1);
            b.sector[i] = rng.random_range(0..2);
            b.random_normal[i] = i % 2 == 1;
            b.normal_z[i] = rng.random_range(-1.0..1.0);
        }
        b
    }

    #[test]
    fn every_copy_of_the_lanes_gives_the_scalar_finishings_bits_and_the_normals_are_right() {
        let shapes = Shapes::new(0.0, Isa::detect());
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for (ci, &cell) in CELLS.iter().enumerate() {
            let b = random_batch(&mut rng);
            let lanes = |isa: Isa| Lanes {
                speed: &shapes.speed[ci],
                mean_v: 1.7,
                isa,
            };
            // the scalar reference, and every copy of the lanes against it
            let one: Vec<_> = (0..TRIG_BATCH)
                .map(|i| finish_one(cell, &b, i, &lanes(Isa::baseline())))
                .collect();
            let bits = |x: &[f32]| x.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let mut levels = Vec::new();
            for isa in Isa::available() {
                let mut f = Finished::default();
                finish_lanes(cell, &b, &lanes(isa), &mut f);
                for (i, (position, normal, v0)) in one.iter().enumerate() {
                    let lane = |x: &[[f32; TRIG_BATCH]; 3]| [x[0][i], x[1][i], x[2][i]];
                    assert_eq!(bits(position), bits(&lane(&f.position)), "{cell:?} {isa:?} {i}");
                    assert_eq!(bits(normal), bits(&lane(&f.normal)), "{cell:?} {isa:?} {i}");
                    assert_eq!(v0.to_bits(), f.v0[i].to_bits(), "{cell:?} {isa:?} {i}");
                }
                levels.push(isa.level());
            }
            assert!(levels.contains(&Isa::detect().level()));
            // and the reference follows its formulas: the place, the speed, the normal at
            // its polar angle from the cell's mean normal
            let h = &shapes.speed[ci];
            for (i, &(position, n, v0)) in one.iter().enumerate() {
                let sc = |k: usize| fastmath::sin_cos(b.angle[k][i]);
                let ((sp, cp), (sa, ca), (s_place, c_place)) = (sc(NORMAL), sc(AZIMUTH), sc(PLACE));
                assert_eq!(v0.to_bits(), (h.at(b.speed_u[i]) * 1.7).to_bits());
                assert_eq!(position, [b.radius[i] * c_place, b.radius[i] * s_place, b.z[i]]);
                if b.random_normal[i] {
                    let s = (1.0 - b.normal_z[i].powi(2)).sqrt();
                    assert_eq!(n, [s * cp, s * sp, b.normal_z[i]]);
                    continue;
                }
                // the mean normal, and the normal's angle from it: the polar angle
                let axis = match cell {
                    Cell::WallRing(_) => [-c_place, -s_place, 0.0],
                    Cell::Stream => {
                        let (s, c) = sc(AXIS);
                        [c, s, STREAM_RISE]
                    }
                    _ => [0.0, 0.0, 1.0],
                };
                let len = |v: [f32; 3]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
                let dot: f32 = (0..3).map(|j| n[j] * axis[j]).sum();
                let cos_polar = dot / len(n) / len(axis);
                assert!((cos_polar - cp).abs() < 1e-4, "{cell:?} {cos_polar} {cp}");
                assert!((len(n) - 1.0).abs() < 1e-5, "{cell:?} {n:?}");
                // the azimuth is measured from the horizontal u = (z x axis) / |z x axis|
                if !matches!(cell, Cell::WallRing(_) | Cell::Stream) {
                    assert_eq!(n, [sp * sa, -sp * ca, cp]);
                } else {
                    let u = [-axis[1], axis[0], 0.0].map(|x| x / len([-axis[1], axis[0], 0.0]));
                    let along_u: f32 = (0..3).map(|j| n[j] * u[j]).sum();
                    assert!((along_u - sp * ca).abs() < 1e-4, "{cell:?} {along_u} {}", sp * ca);
                }
            }
        }
    }
}

//! One collision, as the engine renders it: the Hertz contact (PAN eq. 5–10), the two
//! spheres' acceleration noise with its directivity and retarded time (thesis eq. 4.1–4.2,
//! 5.3), the pan across the stereo width, and the force pulse into the cup: directly from a
//! grain–cup hit, or through the grain bed from a collision on the pile.
//!
//! Through the bed (`bed_pulse`): the thesis treats every collision in isolation and leaves
//! the effect of the other grains on propagation open (thesis 5.1, where a thin layer of
//! grains makes a metal cup far quieter, and 7.1). Here the impulse of a collision on the pile
//! reaches the cup surface beneath or beside it (`Collision::bed_m`) as a force pulse that
//! has travelled through the bed: momentum is conserved (the bed passes the impulse on to
//! its support), but the pulse arrives late, by the path over the bed's wave speed
//! (`BED_WAVE_SPEED_M_S`), spread out in time by the same amount (the contact network
//! scatters it: a low-pass that deepens with the path; Liu & Nagel 1992, Jia, Caroli &
//! Velický 1999), and weakened by the bed's own losses, exp(-path / `BED_LOSS_LENGTH_M`).
//! So an empty cup rings from direct hits, a filling one ever more softly through its
//! grains, and a full one still sounds, low and damped, under the pour.
//!
//! This is the definition of a collision. `physics` computes a collision's pulses
//! (`CollisionPulses`: the contact, and per pulse its time and amplitudes) from the
//! constants of its window (`Constants`); `render_one` writes them through the band-limited
//! kernels (`kernels::PulseKernels`) into the output rings. Both are plain scalar code.
//! The engine renders with a batched copy of the same function (`batch::RenderContext`:
//! sixteen collisions at once in SIMD lanes), tested against these on thousands of random
//! collisions; `granary inspect`, the physics tests and the engine's own tests
//! (`tests/collision.rs`) use these directly. `sphere_source` is a collision's sphere as the
//! exact continuous-time solution (`accel_noise::SphereSource`), for comparison.
//!
//! Geometry (thesis 4.1, Figure 4.3): a collision touches at the point `p` with the unit
//! normal `n`, along which the first sphere (the grain) accelerates. Its centre is at
//! `p + a_0 n`. In a grain–grain collision the second sphere's centre is at `p - a_1 n`, and
//! it accelerates along `-n`. In a grain–cup collision the cup takes the force instead.
//!
//! What the engine applies after the rings is not here: the sphere-radiation filter `B`
//! (`accel_noise::SphereFilter`, one per channel, since every grain of a pour has the same
//! radius), the cup's modes and the gains.

use crate::base::fastmath;
use crate::base::materials::SPEED_OF_SOUND;
use crate::base::window::{Collision, CollisionKind, WINDOW};
use crate::control::choices::Shape;
use crate::control::settings::Settings;
use crate::derived::cups::SURFACE_BUS;
use crate::derived::shape;
use crate::derived::shape::{GrainBody, GrainContact};
use crate::derived::Derived;
use crate::impact::accel_noise::{sphere_amplitudes_at, SphereSource};
use crate::impact::contact::{contact, Body, Contact};
use crate::impact::kernels;
use crate::impact::kernels::{PulseKernels, HALF};

/// Speed of a pulse through a loose, dry grain bed a few centimetres deep, m/s. Under the
/// bed's own weight the contacts are barely loaded and elastic waves are slow: tens to a
/// hundred metres per second near the surface (Bonneau, Andreotti & Clément 2007, surface
/// waves in sand under gravity; Liu & Nagel 1992 measured about 280 m/s through a deeper,
/// loaded pack of glass beads).
pub const BED_WAVE_SPEED_M_S: f32 = 100.0;
/// Quality factor of the bed's intrinsic losses (dry granular packs absorb sound with
/// Q^-1 of about 0.05–0.1: Brunet, Jia & Mills 2008).
const BED_Q: f32 = 10.0;
/// Frequency the cup's modes are excited around, Hz (the cups' lowest modes lie near 1 kHz
/// and above).
const BED_LOSS_REF_HZ: f32 = 1000.0;
/// Length over which the bed's losses weaken a pulse by 1/e, m: a wave of frequency f
/// decays as exp(-pi f x / (Q c)) (the definition of Q), so the length is Q c / (pi f) =
/// 0.32 m.
pub const BED_LOSS_LENGTH_M: f32 = BED_Q * BED_WAVE_SPEED_M_S / (std::f32::consts::PI * BED_LOSS_REF_HZ);

/// A sphere of a collision.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sphere {
    pub radius_m: f32,
    pub mass_kg: f32,
}

/// What a window's collisions have in common: the bodies, the listener and the cup.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scene {
    /// The grain: the first sphere of every collision.
    pub grain: Body,
    /// Its shape (`shape`): both grains of a grain–grain collision have it.
    pub shape: Shape,
    /// The second sphere of a grain–grain collision (in the engine, another grain).
    pub partner: Body,
    /// What a grain hits in a grain–cup collision (a massive plane of the cup's material).
    pub cup: Body,
    /// What a grain hits in a grain–surface collision (a half-space of the surface's
    /// material, `ground`).
    pub surface: Body,
    /// The surface's sound reaches the listener this long after its impulse, s (the
    /// radiation filter's bulk delay, `surface::Radiation::delay_samples`).
    pub surface_delay_s: f32,
    /// Coefficient of restitution of both kinds: impulse m_eff (1 + e) v0.
    pub restitution: f32,
    /// Listener position, m (origin: centre of the cup floor, z up).
    pub listener: [f32; 3],
    /// From the cup (the source of its sound) to the listener, m.
    pub cup_distance_m: f32,
    /// Stereo width (0..1) and the radius it spans, m (the cup's widest inner radius,
    /// `Cup::widest_radius`): a collision at `y = ±radius` is panned `±width`.
    pub stereo_width: f32,
    pub cup_radius_m: f32,
}

/// The constants a collision's physics reads (`Constants::new`, `Constants::place`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Constants {
    /// The grain (sphere 0) and the second sphere of a grain–grain collision (sphere 1).
    pub spheres: [Sphere; 2],
    /// The grain's shape at its size and density (`shape`; `GrainBody::shaped` false: the
    /// spheres' closed form).
    pub grain: GrainBody,
    /// Per collision kind (`CollisionKind as usize`): the contact's impulse per unit speed,
    /// m_eff (1 + e) (N s per m/s), and ln of its duration in samples at 1 m/s (PAN eq. 7).
    pub impulse_per_v: [f32; 3],
    pub ln_duration_at_1: [f32; 3],
    /// Listener position, m (origin: centre of the cup floor, z up).
    pub listener: [f32; 3],
    /// Travel time of the cup's sound to the listener, samples.
    pub cup_delay: f32,
    /// The surface's force pulses are written this many samples late (`Scene::surface_delay_s`).
    pub surface_delay: f32,
    /// Samples per metre of sound travel, fs / c.
    pub samples_per_m: f32,
    /// Pan per metre across the cup (stereo width / cup radius), 1/m.
    pub pan_scale: f32,
    /// Sample rate, Hz.
    pub sample_rate: f32,
    /// Samples per metre of path through the grain bed, fs / `BED_WAVE_SPEED_M_S`.
    pub bed_samples_per_m: f32,
}

impl Constants {
    /// The constants of `scene` at `sample_rate`. All but `listener`, `cup_delay` and
    /// `surface_delay` follow from the settings alone: the engine builds them when the
    /// settings change and moves the listener each window (`place`).
    pub fn new(scene: &Scene, sample_rate: f32) -> Self {
        let fs = sample_rate;
        let sphere = |b: &Body| Sphere {
            radius_m: b.radius_m,
            mass_kg: b.mass_kg,
        };
        // `contact` at v = 1 m/s gives the constants; both laws are powers of the speed:
        // j = m_eff (1 + e) v (seed 002 §4) and tau = tau(1) v^(-1/5) (PAN eq. 7)
        let per_kind = [&scene.partner, &scene.cup, &scene.surface]
            .map(|other| contact(&scene.grain, other, 1.0, scene.restitution));
        let g = &scene.grain;
        let volume = 4.0 / 3.0 * std::f32::consts::PI * g.radius_m.powi(3);
        let mut c = Constants {
            spheres: [sphere(&scene.grain), sphere(&scene.partner)],
            grain: GrainBody::new(scene.shape, 2.0 * g.radius_m, g.mass_kg / volume),
            impulse_per_v: per_kind.map(|c| c.impulse_ns),
            ln_duration_at_1: per_kind.map(|c| (c.duration_s.max(1e-12) as f64 * fs as f64).ln() as f32),
            listener: [0.0; 3],
            cup_delay: 0.0,
            surface_delay: 0.0,
            samples_per_m: fs / SPEED_OF_SOUND,
            pan_scale: scene.stereo_width / scene.cup_radius_m,
            sample_rate: fs,
            bed_samples_per_m: fs / BED_WAVE_SPEED_M_S,
        };
        c.place(scene.listener, scene.cup_distance_m, scene.surface_delay_s);
        c
    }

    /// `new` for the settings `s` (with `d`, what they fix): the grains' sphere (the grain
    /// material's elastic data at the grains' density and radius) against another like it,
    /// the cup's and the surface's planes, the grains' shape, the stereo width over the
    /// cup's widest inner radius; the listener's place is left to `place`.
    pub fn for_settings(s: &Settings, d: &Derived, sample_rate: f32) -> Self {
        let gm = s.grain_material.data();
        let mut elastic = gm.elastic;
        elastic.density = d.grain_density;
        let grain = Body::sphere(elastic, d.grain_radius_m);
        let scene = Scene {
            grain,
            shape: s.resolved_grain_shape(),
            partner: grain,
            cup: Body::plane(s.cup_material.data().elastic),
            surface: Body::plane(s.surface_material.data().elastic),
            surface_delay_s: 0.0,
            restitution: gm.restitution,
            listener: [0.0; 3],
            cup_distance_m: 0.0,
            stereo_width: s.stereo_width,
            cup_radius_m: d.cup.widest_radius(),
        };
        Constants::new(&scene, sample_rate)
    }

    /// The listener at `listener` (m), the cup `cup_distance_m` from it and the surface's
    /// sound `surface_delay_s` late: the part of the constants that moves as the pile grows
    /// (the listener counts from its top) and as the surface's filter is rebuilt.
    pub fn place(&mut self, listener: [f32; 3], cup_distance_m: f32, surface_delay_s: f32) {
        self.listener = listener;
        self.cup_delay = cup_distance_m / SPEED_OF_SOUND * self.sample_rate;
        self.surface_delay = surface_delay_s * self.sample_rate;
    }
}

/// One sphere's pulse of acceleration noise (thesis eq. 4.1–4.2, see `accel_noise`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SpherePulse {
    /// From the sphere's centre to the listener, m (at least 1.01 radii).
    pub distance_m: f32,
    /// Cosine of the angle between the sphere's acceleration and the way to the listener.
    pub cos_theta: f32,
    /// The sphere's velocity change j / m (the area under its acceleration) times the
    /// collision's weight, m/s.
    pub delta_v: f32,
    /// When its sound reaches the listener: the contact's time plus (r - a) / c, samples
    /// into the window (the retarded time of thesis eq. 4.1).
    pub time: f32,
    /// Amplitudes of the band-limited pulse (Pa s), its derivative (Pa s^2) and its second
    /// derivative (Pa s^3; a spinning shaped grain's quadrupole, `shape`)
    /// (`accel_noise::sphere_amplitudes`, `shape::GrainBody::sound`).
    pub a0: f32,
    pub a1: f32,
    pub a2: f32,
}

/// The force pulse into the cup.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CupPulse {
    /// When the cup's sound reaches the listener, samples into the window.
    pub time: f32,
    /// The impulse times the collision's weight, N s (through a bed, what reaches the cup).
    pub amplitude: f32,
    /// The cup's force bus (`modal::CUP_BUSES`).
    pub bus: usize,
    /// ln of the pulse's duration in samples: the contact's (PAN eq. 7), or through a bed
    /// the contact's plus the spread of the path (`bed_pulse`).
    pub ln_duration: f32,
}

/// Everything a collision writes (`physics`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CollisionPulses {
    pub kind: CollisionKind,
    /// Impulse |j| = m_eff (1 + e) v0, N s (seed 002 §4; without the weight).
    pub impulse_ns: f32,
    /// ln of the contact duration in samples (PAN eq. 7). Every pulse of the collision is a
    /// half-sine of this duration (PAN eq. 6), band-limited.
    pub ln_duration: f32,
    /// Sphere 0, and sphere 1 in a grain–grain collision (zero in a grain–cup one).
    pub spheres: [SpherePulse; 2],
    /// Gains of the left and right channel of the spheres' sound.
    pub pan: [f32; 2],
    /// The force into the cup: a grain–cup hit's, or a collision's on the pile through the
    /// bed; none for the falling stream's.
    pub cup: Option<CupPulse>,
}

impl CollisionPulses {
    /// The spheres that sound: both in a grain–grain collision, the grain and its image in
    /// the ground in a grain–surface one (seed 002 eq. 16–17), the grain alone on the cup.
    pub fn heard(&self) -> &[SpherePulse] {
        match self.kind {
            CollisionKind::GrainGrain | CollisionKind::GrainSurface => &self.spheres,
            CollisionKind::GrainCup => &self.spheres[..1],
        }
    }

    /// Contact duration tau, s (PAN eq. 7).
    pub fn duration_s(&self, sample_rate: f32) -> f64 {
        (self.ln_duration as f64).exp() / sample_rate as f64
    }

    /// The contact the engine renders: duration, impulse (without the weight) and the peak
    /// of its half-sine force, pi j / (2 tau) (PAN eq. 10).
    pub fn contact(&self, sample_rate: f32) -> Contact {
        let duration_s = self.duration_s(sample_rate);
        Contact {
            duration_s: duration_s as f32,
            impulse_ns: self.impulse_ns,
            peak_force_n: (std::f64::consts::PI * self.impulse_ns as f64 / (2.0 * duration_s)) as f32,
        }
    }
}

/// The physics of collision `c` in a window with the constants `k`: its contact, and for
/// each sphere that sounds the distance, direction, arrival time and amplitudes of its
/// acceleration noise, the pan, and the cup's force pulse.
pub fn physics(k: &Constants, c: &Collision) -> CollisionPulses {
    let kind = c.kind as usize;
    // the contact, from its laws at 1 m/s: j = m_eff (1 + e) v0 (seed 002 §4),
    // tau = tau(1 m/s) v0^(-1/5) (PAN eq. 7), so ln tau = ln tau(1 m/s) - ln(v0) / 5
    // (v0 at least 1e-9 m/s in both, ln 1e-9 = -20.7)
    let mut impulse_ns = k.impulse_per_v[kind] * c.v0.max(1e-9);
    let mut ln_duration = k.ln_duration_at_1[kind] - 0.2 * c.ln_v0.max(-20.7);
    // shaped grains: their orientations and contacts change the effective mass and the
    // Hertz radius (`shape`)
    let draw = k.grain.shaped.then(|| draw_shapes(k, c));
    if let Some(d) = &draw {
        impulse_ns *= d.impulse_scale;
        ln_duration += d.ln_duration_shift;
    }
    // thesis 4.1 / 5.3: the grain accelerates along n, the second sphere along -n
    let mut spheres = [SpherePulse::default(); 2];
    // on the surface, the second sphere is the grain's image in the ground (seed 002
    // §5.2.2, eq. 16–17: a perfect reflector; the image's centre is the grain's mirrored in
    // the contact plane, and it accelerates along -n, as a second grain would)
    let heard = match c.kind {
        CollisionKind::GrainGrain | CollisionKind::GrainSurface => 2,
        CollisionKind::GrainCup => 1,
    };
    for (s, sign) in [1.0f32, -1.0].into_iter().enumerate().take(heard) {
        spheres[s] = match &draw {
            Some(d) => shaped_pulse(k, c, s, d, impulse_ns),
            None => sphere_pulse(k, c, s, sign, impulse_ns),
        };
    }
    // the force pulse into the cup, heard after the cup's travel time
    let scale = draw.as_ref().map_or(1.0, |d| d.impulse_scale);
    let cup = cup_push_scaled(k, c, scale).map(|(bus, amplitude)| match c.kind {
        CollisionKind::GrainCup => CupPulse {
            time: c.time + k.cup_delay,
            amplitude,
            bus,
            ln_duration,
        },
        // the ground's force, into the surface's radiation filter (`surface`)
        CollisionKind::GrainSurface => CupPulse {
            time: c.time + k.surface_delay,
            amplitude,
            bus,
            ln_duration,
        },
        CollisionKind::GrainGrain => bed_pulse(k, c, amplitude, ln_duration),
    });
    CollisionPulses {
        kind: c.kind,
        impulse_ns,
        ln_duration,
        spheres,
        pan: pan_gains(c.position[1] * k.pan_scale),
        cup,
    }
}

/// The bus and impulse (N s, times the collision's weight) of collision `c`'s push on the cup
/// or the surface, if it pushes: a grain–cup or grain–surface collision its own impulse, one
/// on the pile what it passes through `c.bed_m` metres of grains (the module doc), weakened
/// by the bed's losses, exp(-L / `BED_LOSS_LENGTH_M`), times `c.bed_weight`, the pulses it
/// stands for (`Collision::bed_weight`; 0: it writes none).
#[inline]
pub fn cup_push(k: &Constants, c: &Collision) -> Option<(usize, f32)> {
    let scale = if k.grain.shaped {
        draw_shapes(k, c).impulse_scale
    } else {
        1.0
    };
    cup_push_scaled(k, c, scale)
}

/// `cup_push` for a collision whose shaped grains' draw (`draw_shapes`) gave the impulse
/// scale `scale` (unread for spheres): `physics` has drawn them already.
fn cup_push_scaled(k: &Constants, c: &Collision, scale: f32) -> Option<(usize, f32)> {
    let mut impulse_ns = k.impulse_per_v[c.kind as usize] * c.v0.max(1e-9);
    if k.grain.shaped {
        impulse_ns *= scale;
    }
    let impulse_ns = impulse_ns * c.weight;
    match c.kind {
        CollisionKind::GrainCup | CollisionKind::GrainSurface => Some((c.bus, impulse_ns)),
        CollisionKind::GrainGrain if c.bed_weight > 0.0 => Some((
            c.bus,
            impulse_ns * c.bed_weight * fastmath::exp(-c.bed_m * (1.0 / BED_LOSS_LENGTH_M)),
        )),
        CollisionKind::GrainGrain => None,
    }
}

/// The force pulse of a collision on the pile through the bed (`cup_push` gives its
/// `amplitude`): arriving L / c_bed later, spread over the contact's duration plus L / c_bed.
pub fn bed_pulse(k: &Constants, c: &Collision, amplitude: f32, ln_duration: f32) -> CupPulse {
    let travel = c.bed_m * k.bed_samples_per_m;
    // a heap on the ground pushes on the ground (`modal::SURFACE_BUS`)
    let delay = if c.bus == SURFACE_BUS {
        k.surface_delay
    } else {
        k.cup_delay
    };
    CupPulse {
        time: c.time + delay + travel,
        amplitude,
        bus: c.bus,
        ln_duration: fastmath::ln(fastmath::exp(ln_duration) + travel),
    }
}

/// Sphere `s` of collision `c`, accelerating along `sign * n`.
fn sphere_pulse(k: &Constants, c: &Collision, s: usize, sign: f32, impulse_ns: f32) -> SpherePulse {
    let Sphere { radius_m: a, mass_kg } = k.spheres[s];
    // its centre, p + a n or p - a n, and the way from there to the listener
    let offset = sign * a;
    let d: [f32; 3] = std::array::from_fn(|j| k.listener[j] - (c.position[j] + offset * c.normal[j]));
    let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt().max(a * 1.01);
    let inv_r = 1.0 / r;
    let n = c.normal;
    let cos_theta = sign * (n[0] * d[0] + n[1] * d[1] + n[2] * d[2]) * inv_r;
    // its velocity change dv = j / m, the area under its acceleration
    let delta_v = impulse_ns / mass_kg * c.weight;
    // thesis eq. 4.1-4.2: the near-field amplitude rho0 a^3 cos(theta) dv / (2 r^2) and r/c
    // times it for the derivative
    let (a0, a1) = sphere_amplitudes_at(a, r, inv_r, cos_theta, delta_v);
    // a grain that behaves as a sphere but for its dipole's size (`shape`: the cube)
    let scale = k.grain.dipole_scale;
    let (a0, a1) = (a0 * scale, a1 * scale);
    SpherePulse {
        distance_m: r,
        cos_theta,
        delta_v,
        // its sound starts where the retarded time t' = t - (r - a) / c (thesis eq. 4.1)
        // is 0: (r - a) / c after the contact
        time: c.time + (r - a) * k.samples_per_m,
        a0,
        a1,
        a2: 0.0,
    }
}

/// What a collision's shaped grains draw (`draw_shapes`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShapeDraw {
    /// Each grain's orientation, body to world (grain 0 the first sphere, grain 1 the second
    /// of a grain–grain collision; unused otherwise).
    pub rotation: [[[f32; 3]; 3]; 2],
    /// Where each is touched (`GrainBody::contact`), grain 0 pushed along `n`, grain 1 along
    /// `-n`.
    pub contact: [GrainContact; 2],
    /// The impulse over the spheres' (`m_eff` over the spheres' `m_eff`).
    pub impulse_scale: f32,
    /// ln of the contact duration over the spheres' (PAN eq. 7).
    pub ln_duration_shift: f32,
}

/// A hash of collision `c` (its time and position): the seed of its grains' orientations.
#[inline(always)]
pub fn collision_hash(c: &Collision) -> u32 {
    let h = shape::hash32(c.position[2].to_bits());
    let h = shape::hash32(c.position[1].to_bits() ^ h);
    let h = shape::hash32(c.position[0].to_bits() ^ h);
    shape::hash32(c.time.to_bits() ^ h)
}

/// The orientations and contacts of collision `c`'s shaped grains (`shape`), and what they
/// do to the contact: the effective mass `1/m_eff = Σ (1/m + (x × n)ᵀ I⁻¹ (x × n))` over the
/// grains that move (two in a grain–grain collision; the cup and the ground do not), and the
/// Hertz radius, `1/R* = Σ 1/R` over the grains' surfaces (the cup and the ground are planes).
/// PAN eq. 7: `tau ∝ m_eff^(2/5) R*^(-1/5)`; the sphere's `m_eff` is `m/2` or `m` and its
/// `R*` is `a/2` or `a`.
#[inline(always)]
pub fn draw_shapes(k: &Constants, c: &Collision) -> ShapeDraw {
    let g = &k.grain;
    let seed = collision_hash(c);
    let rotation = [
        shape::rotation(seed),
        shape::rotation(shape::hash32(seed ^ 0x9e37_79b9)),
    ];
    let n = c.normal;
    let contact = [
        g.contact(&rotation[0], n),
        g.contact(&rotation[1], [-n[0], -n[1], -n[2]]),
    ];
    let both = if c.kind == CollisionKind::GrainGrain { 1.0 } else { 0.0 };
    let inv_m = 1.0 / g.mass_kg;
    let sphere = inv_m * (1.0 + both);
    let inv_m_eff = sphere + contact[0].compliance + both * contact[1].compliance;
    let impulse_scale = sphere / inv_m_eff;
    let inv_r_star = 1.0 / contact[0].radius_m + both / contact[1].radius_m;
    let r_ratio = (1.0 + both) / (g.radius_m * inv_r_star);
    ShapeDraw {
        rotation,
        contact,
        impulse_scale,
        ln_duration_shift: 0.4 * fastmath::ln(impulse_scale) - 0.2 * fastmath::ln(r_ratio),
    }
}

/// Grain `s` of collision `c` as a shaped grain (`shape::GrainBody::sound`), drawn as `d`,
/// after the impulse `impulse_ns`: grain 0 pushed along `n`; grain 1 the second grain
/// (pushed along `-n`), or on the ground grain 0's image (seed 002 §5.2.2: the field of the
/// grain mirrored in the contact plane, heard from the mirrored listener).
#[inline(always)]
pub fn shaped_pulse(k: &Constants, c: &Collision, s: usize, d: &ShapeDraw, impulse_ns: f32) -> SpherePulse {
    let g = &k.grain;
    let image = s == 1 && c.kind == CollisionKind::GrainSurface;
    let own = if image { 0 } else { s };
    let (q, gc) = (&d.rotation[own], &d.contact[own]);
    let n = c.normal;
    // the grain's centre: the contact point less the contact's offset from the centre
    let x = shape::mul(q, gc.x);
    let mut centre: [f32; 3] = std::array::from_fn(|j| c.position[j] - x[j]);
    if image {
        // mirrored in the contact plane through the contact point
        let h = (0..3).map(|j| (centre[j] - c.position[j]) * n[j]).sum::<f32>();
        centre = std::array::from_fn(|j| centre[j] - 2.0 * h * n[j]);
    }
    let mut dir: [f32; 3] = std::array::from_fn(|j| k.listener[j] - centre[j]);
    let r = (dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2])
        .sqrt()
        .max(g.radius_m * 1.01);
    let inv_r = 1.0 / r;
    // cosine between the push and the way to the listener (for inspection)
    let sign = if s == 1 { -1.0 } else { 1.0 };
    let cos_theta = sign * (n[0] * dir[0] + n[1] * dir[1] + n[2] * dir[2]) * inv_r;
    if image {
        // the image's field at the listener is the grain's at the mirrored direction
        let h = dir[0] * n[0] + dir[1] * n[1] + dir[2] * n[2];
        dir = std::array::from_fn(|j| dir[j] - 2.0 * h * n[j]);
    }
    let dir_body = shape::mul_t(q, dir.map(|x| x * inv_r));
    let j = impulse_ns * c.weight;
    let [a0, a1, a2] = g.sound(gc, dir_body, inv_r, j);
    SpherePulse {
        distance_m: r,
        cos_theta,
        delta_v: j / g.mass_kg,
        // the fitted terms' retarded time is from the centre of mass (`shape`): the near side's
        // earlier arrival is in their derivatives
        time: c.time + r * k.samples_per_m,
        a0,
        a1,
        a2,
    }
}

/// Constant-power pan: `pan` in -1 (left) ..= 1 (right), clamped, to the left and right
/// gains sqrt(2) (cos, sin) of (pan + 1) pi/4 (both 1 in the centre).
pub fn pan_gains(pan: f32) -> [f32; 2] {
    let pan = pan.clamp(-1.0, 1.0);
    let (sin_th, cos_th) = fastmath::sin_cos((pan + 1.0) * std::f32::consts::FRAC_PI_4);
    [cos_th * std::f32::consts::SQRT_2, sin_th * std::f32::consts::SQRT_2]
}

/// Renders collision `c` (a window with the constants `k`) into the rings: each sphere that
/// sounds into both grain rings, panned; the force into the cup ring of its bus. `origin` is
/// the ring index (not yet wrapped; at least `HALF`) of the window's time 0, from which the
/// pulses' times count; the rings wrap around at their length. Returns the physics.
///
/// The reference the engine's batched renderer is tested against; it allocates its scratch,
/// so it is not for `Engine::process`.
pub fn render_one(
    k: &Constants,
    kernels: &PulseKernels,
    c: &Collision,
    origin: usize,
    grains: [&mut [f32]; 2],
    cup: &mut [Vec<f32>],
) -> CollisionPulses {
    let p = physics(k, c);
    let copies = copies(c);
    for (ring, gain) in grains.into_iter().zip(p.pan) {
        for &(shift, sign) in copies.places() {
            for s in p.heard() {
                let g = gain * (sign * copies.gain);
                add_pulse_shifted(
                    kernels,
                    p.ln_duration,
                    (s.time, shift),
                    [s.a0, s.a1, s.a2],
                    g,
                    ring,
                    origin,
                );
            }
        }
    }
    if let Some(f) = p.cup {
        add_pulse(
            kernels,
            f.ln_duration,
            f.time,
            [f.amplitude, 0.0, 0.0],
            1.0,
            &mut cup[f.bus],
            origin,
        );
    }
    p
}

/// The pulses of the spheres of a draw that stands for a group (`Collision::spread`) are
/// written this many times, each with 1/sqrt(`GROUP_COPIES`) of the amplitude, at times
/// spread over the window (`copies`). A group of k collisions drawn as one pulse keeps their
/// energy and spectrum but not their texture: one pulse of sqrt(k) times the amplitude where
/// there were k at their own times is shot noise of fewer, heavier pulses, whose crackle (excess
/// kurtosis) goes as one over their rate. The grouped draws of a dense pour are sparser than its
/// collisions by the group size, and where the collisions themselves form a smooth noise (the
/// bank's wall hits of sugar poured into a mug: 230,000 a second, against 35,000 grouped
/// draws) the grouped grains crackled more than every collision rendered (kurtosis 4.50 against
/// 3.44; `tests/engine.rs`, the grouping test). The copies double the pulses without drawing,
/// setting up or pushing on the cup again: the draw's speed, place and normal are the group's
/// sample, its pulses at two of the group's times. Each copy after the first is at a time
/// uniform over the window and of either sign (the shifts and signs from a hash of the draw's
/// own random time and place, so the same draws give the same samples), so that two copies
/// add in power at every frequency on average: the level and spectrum are the single draw's.
pub const GROUP_COPIES: usize = 2;

/// Where a draw's spheres' pulses are written (`GROUP_COPIES`): per copy its shift in whole
/// samples from the draw's own time and its sign, the first the draw itself (0, +1), and the
/// gain of each; a collision that is not a group's draw is written once, at gain 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Copies {
    places: [(i32, f32); GROUP_COPIES],
    len: usize,
    /// 1/sqrt of the copies: they add in power.
    pub gain: f32,
}

impl Copies {
    /// Each copy's shift (samples) and sign, the draw's own first.
    pub fn places(&self) -> &[(i32, f32)] {
        &self.places[..self.len]
    }
}

/// Where collision `c`'s spheres' pulses go (`Copies`): a grouped draw's (`Collision::spread`)
/// copies after the first at times in its window (0..`WINDOW`), as the draw is.
#[inline]
pub fn copies(c: &Collision) -> Copies {
    let mut out = Copies {
        places: [(0, 1.0); GROUP_COPIES],
        len: 1,
        gain: 1.0,
    };
    if !c.spread {
        return out;
    }
    // murmur3's finaliser: every bit of the draw's time and place reaches every bit
    let mix = |mut h: u32| {
        h ^= h >> 16;
        h = h.wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        h = h.wrapping_mul(0xc2b2_ae35);
        h ^ (h >> 16)
    };
    let mut h = c.time.to_bits() ^ c.position[0].to_bits().rotate_left(11) ^ c.position[1].to_bits().rotate_left(22);
    let own = c.time.clamp(0.0, (WINDOW - 1) as f32) as i32;
    for o in out.places.iter_mut().skip(1) {
        h = mix(h.wrapping_add(0x9e37_79b9));
        // the top 24 bits as a uniform sample of 0..WINDOW, the lowest as the sign (on the
        // draw's own sample, one copy in WINDOW, the two add coherently or cancel: in power
        // as the others on average)
        let at = (((h >> 8) as u64 * WINDOW as u64) >> 24) as i32;
        *o = (at - own, if h & 1 == 0 { 1.0 } else { -1.0 });
    }
    out.len = GROUP_COPIES;
    out.gain = 1.0 / (GROUP_COPIES as f32).sqrt();
    out
}

/// `ring += gain (a0 g0 + a1 g1)`: one band-limited half-sine of duration `e^ln_duration`
/// samples (PAN eq. 6; `kernels`: the pulse `g0` of unit area and its derivative `g1`), its
/// onset `time` samples after ring index `origin` (at least `HALF`), wrapping around the
/// ring's end (allocates its scratch).
pub fn add_pulse(
    kernels: &PulseKernels,
    ln_duration: f32,
    time: f32,
    amplitudes: kernels::Amplitudes,
    gain: f32,
    ring: &mut [f32],
    origin: usize,
) {
    add_pulse_shifted(kernels, ln_duration, (time, 0), amplitudes, gain, ring, origin);
}

/// `add_pulse` at `time` plus a whole number of samples (a grouped draw's copy,
/// `copies`): the same kernel row and phase, moved (`time` + the shift at least 0).
pub fn add_pulse_shifted(
    kernels: &PulseKernels,
    ln_duration: f32,
    (time, shift): (f32, i32),
    amplitudes: kernels::Amplitudes,
    gain: f32,
    ring: &mut [f32],
    origin: usize,
) {
    debug_assert!(time >= 0.0 && origin >= HALF && time + shift as f32 >= 0.0);
    let whole = time.floor();
    let pulse = kernels.select_ln(ln_duration, time - whole);
    let mut taps = vec![0.0f32; pulse.taps()];
    kernels.accumulate(pulse, amplitudes, &mut taps);
    // the kernel's tap i lands on the sample whole + i - HALF
    let start = (origin + whole as usize - HALF).wrapping_add_signed(shift as isize);
    for (i, x) in taps.iter().enumerate() {
        ring[(start + i) % ring.len()] += gain * x;
    }
}

/// Sphere `s` of the collision `p` (`physics`, with the constants `k`) as the exact
/// continuous-time solution for a rigid sphere (thesis eq. 4.1–4.2, `SphereSource`): a
/// half-sine acceleration of duration tau and peak pi dv / (2 tau) (PAN eq. 10 over its
/// mass), heard at its distance and angle. Its time 0 is the contact's start.
pub fn sphere_source(k: &Constants, p: &CollisionPulses, s: usize) -> SphereSource {
    let tau = p.duration_s(k.sample_rate);
    let sphere = &p.spheres[s];
    SphereSource {
        radius_m: k.spheres[s].radius_m as f64,
        distance_m: sphere.distance_m as f64,
        cos_theta: sphere.cos_theta as f64,
        peak_accel: std::f64::consts::PI * sphere.delta_v as f64 / (2.0 * tau),
        duration_s: tau,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::materials::{CupMaterial, GrainMaterial, AIR_DENSITY};

    /// Glass beads of 1 mm radius over a steel cup, the listener 0.3 m straight above.
    fn scene() -> Scene {
        let grain = Body::sphere(GrainMaterial::GlassBeads2.data().elastic, 1e-3);
        Scene {
            grain,
            shape: Shape::Sphere,
            partner: grain,
            cup: Body::plane(CupMaterial::Steel.data().elastic),
            surface: Body::plane(crate::base::materials::SurfaceMaterial::Wood.data().elastic),
            surface_delay_s: 0.0,
            restitution: 0.9,
            listener: [0.0, 0.0, 0.3],
            cup_distance_m: 0.25,
            stereo_width: 1.0,
            cup_radius_m: 0.04,
        }
    }

    fn collision(kind: CollisionKind, v0: f32) -> Collision {
        Collision {
            time: 10.25,
            kind,
            cell: 0,
            bus: 3,
            position: [0.0, 0.0, 0.01],
            normal: [0.0, 0.0, 1.0],
            v0,
            ln_v0: v0.ln(),
            weight: 2.0,
            bed_m: 0.0,
            bed_weight: 0.0,
            spread: false,
        }
    }

    /// A grouped draw's copies (`copies`): the first is the draw, the others land in its
    /// window (moved by whole samples, so at the draw's phase), spread evenly over it
    /// wherever the draw is, of either sign as often; the same draw always gets the same
    /// copies.
    #[test]
    fn a_grouped_draws_copies_land_anywhere_in_its_window() {
        let mut state = 0x1234_5678u32;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as f32 / u32::MAX as f32
        };
        let (mut signs, mut landed, mut apart) = (0.0f64, [0u32; WINDOW], [0u32; WINDOW]);
        let n = 64_000;
        for _ in 0..n {
            let c = Collision {
                time: next() * (WINDOW as f32 - 0.01),
                position: [0.1 * next() - 0.05, 0.1 * next() - 0.05, 0.02],
                spread: true,
                ..collision(CollisionKind::GrainGrain, 1.0)
            };
            let cp = copies(&c);
            assert_eq!(cp, copies(&c));
            assert_eq!(cp.places()[0], (0, 1.0));
            for &(shift, sign) in &cp.places()[1..] {
                // a whole number of samples: the copy keeps the draw's phase
                let at = c.time.floor() as i32 + shift;
                assert!((0..WINDOW as i32).contains(&at), "{} + {shift}", c.time);
                signs += sign as f64;
                landed[at as usize] += 1;
                apart[shift.rem_euclid(WINDOW as i32) as usize] += 1;
            }
        }
        let copies_made = (n * (GROUP_COPIES - 1)) as f64;
        assert!(signs.abs() < 4.0 * copies_made.sqrt(), "signs sum to {signs}");
        let mean = copies_made / WINDOW as f64;
        for (k, &m) in landed.iter().enumerate() {
            assert!(
                (m as f64 - mean).abs() < 0.2 * mean,
                "sample {k}: {m} copies, {mean} on average"
            );
        }
        // and wherever the draw is: every distance from it as often
        for (k, &m) in apart.iter().enumerate() {
            assert!(
                (m as f64 - mean).abs() < 0.2 * mean,
                "{k} samples on: {m} copies, {mean} on average"
            );
        }
    }

    #[test]
    fn a_collision_on_the_pile_pushes_on_the_cup_later_longer_and_weaker_with_depth() {
        let (fs, sc) = (48_000.0f32, scene());
        let k = Constants::new(&sc, fs);
        let on_pile = |bed_m: f32| {
            physics(
                &k,
                &Collision {
                    bed_m,
                    bed_weight: 1.5,
                    ..collision(CollisionKind::GrainGrain, 0.8)
                },
            )
        };
        // the falling stream's collisions push on nothing, nor those whose pulse another
        // one writes (`Collision::bed_weight` 0)
        let stream = collision(CollisionKind::GrainGrain, 0.8);
        assert_eq!(physics(&k, &stream).cup, None);
        assert_eq!(physics(&k, &Collision { bed_m: 0.02, ..stream }).cup, None);
        let mut last: Option<CupPulse> = None;
        for bed_m in [1e-4, 0.005, 0.02, 0.05, 0.09] {
            let p = on_pile(bed_m);
            let f = p.cup.expect("a collision on the pile pushes on the cup");
            assert_eq!(f.bus, 3);
            // the module doc's model, in f64: delay and spread L / c_bed, loss exp(-L / l)
            let travel = bed_m as f64 / BED_WAVE_SPEED_M_S as f64 * fs as f64;
            let want_time = 10.25 + k.cup_delay as f64 + travel;
            assert!(
                (f.time as f64 - want_time).abs() < 1e-3,
                "{bed_m}: {} vs {want_time}",
                f.time
            );
            let want_amp = p.impulse_ns as f64 * 2.0 * 1.5 * (-(bed_m as f64) / BED_LOSS_LENGTH_M as f64).exp();
            assert!((f.amplitude as f64 / want_amp - 1.0).abs() < 1e-4, "{bed_m}");
            let want_len = ((p.ln_duration as f64).exp() + travel).ln();
            assert!((f.ln_duration as f64 - want_len).abs() < 1e-4, "{bed_m}");
            if let Some(l) = last {
                assert!(f.time > l.time && f.ln_duration > l.ln_duration && f.amplitude < l.amplitude);
            }
            last = Some(f);
        }
        // through 9 cm of grains: about a millisecond late and long, a quarter weaker
        let deep = last.unwrap();
        assert!((deep.ln_duration.exp() / fs - 0.9e-3).abs() < 0.05e-3);
        // a grain-cup hit's pulse is the contact itself
        let hit = physics(&k, &collision(CollisionKind::GrainCup, 0.8));
        assert_eq!(hit.cup.unwrap().ln_duration, hit.ln_duration);
    }

    #[test]
    fn physics_is_the_equations_in_f64() {
        let (fs, sc) = (48_000.0f32, scene());
        let k = Constants::new(&sc, fs);
        let c64 = SPEED_OF_SOUND as f64;
        for kind in [CollisionKind::GrainGrain, CollisionKind::GrainCup] {
            for v0 in [1e-4f32, 0.03, 1.0, 4.0] {
                let c = collision(kind, v0);
                let p = physics(&k, &c);
                let close = |x: f64, want: f64, what: &str| {
                    assert!((x / want - 1.0).abs() < 2e-5, "{kind:?} {v0}: {what} {x} vs {want}");
                };
                // the contact at v0 (PAN eq. 7, seed 002 §4), straight from `contact`
                let other = if kind == CollisionKind::GrainGrain {
                    &sc.partner
                } else {
                    &sc.cup
                };
                let want = contact(&sc.grain, other, v0, sc.restitution);
                close(p.duration_s(fs), want.duration_s as f64, "duration");
                close(p.impulse_ns as f64, want.impulse_ns as f64, "impulse");
                // the spheres: centres 1 mm above and below the contact point, the listener
                // straight above: theta 0 for the grain, 180 degrees for its partner
                let a = 1e-3;
                for (s, (centre, cos)) in [(0.011, 1.0), (0.009, -1.0)]
                    .into_iter()
                    .enumerate()
                    .take(p.heard().len())
                {
                    let sp = &p.spheres[s];
                    let r = 0.3 - centre;
                    close(sp.distance_m as f64, r, "distance");
                    assert_eq!(sp.cos_theta, cos as f32);
                    let dv = want.impulse_ns as f64 / sc.grain.mass_kg as f64 * 2.0;
                    close(sp.delta_v as f64, dv, "dv");
                    // thesis eq. 4.1-4.2: rho0 a^3 cos dv / (2 r^2), and r/c times it
                    let a0 = AIR_DENSITY as f64 * a * a * a * cos * dv / (2.0 * r * r);
                    close(sp.a0 as f64, a0, "a0");
                    close(sp.a1 as f64, a0 * r / c64, "a1");
                    close(sp.time as f64, 10.25 + (r - a) / c64 * fs as f64, "arrival");
                }
                assert_eq!(p.heard().len(), if kind == CollisionKind::GrainGrain { 2 } else { 1 });
                // centred in the stereo image
                assert!(p.pan.iter().all(|g| (g - 1.0).abs() < 1e-6), "{:?}", p.pan);
                match p.cup {
                    Some(f) => {
                        assert_eq!(kind, CollisionKind::GrainCup);
                        close(f.amplitude as f64, want.impulse_ns as f64 * 2.0, "cup impulse");
                        close(f.time as f64, 10.25 + 0.25 / c64 * fs as f64, "cup arrival");
                        assert_eq!(f.bus, 3);
                    }
                    None => assert_eq!(kind, CollisionKind::GrainGrain),
                }
            }
        }
    }

    #[test]
    fn render_one_writes_the_impulse_into_the_cup_ring_and_wraps_around() {
        let fs = 48_000.0f32;
        let k = Constants::new(&scene(), fs);
        let kernels = PulseKernels::new(fs, crate::base::simd::Isa::detect());
        let c = collision(CollisionKind::GrainCup, 0.5);
        let len = 256;
        // the pulses land across the rings' end
        let origin = 10 * len - 40;
        let (mut l, mut r) = (vec![0.0f32; len], vec![0.0f32; len]);
        let mut cup = vec![vec![0.0f32; len]; 8];
        let p = render_one(&k, &kernels, &c, origin, [&mut l, &mut r], &mut cup);
        // the force pulse has unit area times the impulse (and the weight), N s
        let f = p.cup.unwrap();
        let area = cup[3].iter().sum::<f32>() / fs;
        assert!((area / f.amplitude - 1.0).abs() < 1e-3, "{area} vs {}", f.amplitude);
        assert!(cup
            .iter()
            .enumerate()
            .all(|(b, ring)| b == 3 || ring.iter().all(|&x| x == 0.0)));
        // the sphere's pulse: unit area times a0 (its derivative kernel sums to zero)
        let s = p.spheres[0];
        for (ring, gain) in [&l, &r].into_iter().zip(p.pan) {
            let area = ring.iter().sum::<f32>() / fs;
            assert!((area / (s.a0 * gain) - 1.0).abs() < 1e-3, "{area} vs {}", s.a0);
            let written = |range: std::ops::Range<usize>| ring[range].iter().any(|&x| x != 0.0);
            assert!(written(0..20) && written(len - 20..len), "the pulse should wrap around");
        }
    }
}

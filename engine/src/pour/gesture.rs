//! Gestures beyond pouring: a spoon stirring the grains, the closed cup shaken, the cup
//! tilted until its grains slide and spill, and the avalanches of a heap past its angle of
//! repose (which happen in every gesture, and on demand). DESIGN "Gestures".
//!
//! Each gesture is a small mechanical model, stepped once per generator window, whose output
//! is what the engine already knows how to sound:
//! - sliding contacts (`Sliding`: a speed and a normal load for each of the `Voice`s), which
//!   the engine renders with seed 003's micro-rectangles and Phya's stick-slip
//!   (`friction::Friction`) into the Friction stem, their friction force driving the cup's
//!   modes where a voice touches the cup;
//! - impacts (`Burst`: a rate and a mean normal speed at a place), drawn here as collisions
//!   and rendered through the same Hertz contact, acceleration noise and modal cup as a pour's
//!   (`collision`), not filtered noise.
//!
//! The models, their equations and sources (every quantity SI):
//! - Stir: a teaspoon (`SPOON_WIDTH_M`, steel) moves on a circle through the bed at speed
//!   `u = intensity * STIR_MAX_SPEED_M_S` and depth `d`. The bed resists with the granular
//!   drag of a slowly dragged plate, `F = ETA_DRAG rho_b g w d^2` (Albert et al., "Slow drag in
//!   a granular medium", PRL 82 (1999) 205: independent of speed, quadratic in depth), the
//!   normal load of the spoon–grain sliding contact; the sheared grains around the spoon slide
//!   on one another under the same force. The spoon displaces `u w d phi / V_grain` grains a
//!   second, each knocking into its neighbours at about half the spoon's speed; the ones at the
//!   wall knock on the cup. With the spoon down to the floor it scrapes it (`SPOON_HAND_LOAD_N`).
//! - Shake (Phya §6.2.3, the PhISEM loose-particle model, with its system energy and decay,
//!   in SI, under gravity): the cup, closed, moves sideways as a sinusoid of rate `f` and
//!   peak speed `V = intensity * SHAKE_MAX_SPEED_M_S`, peak acceleration `A = 2 pi f V`. The
//!   floor carries the grains along by friction until the acceleration passes what the grip
//!   holds, `a0 = mu g`: the bed slides free once `A > mu_s g` (the grain–cup static
//!   friction), the grains of its free surface roll free once `A > mu_r g` (rolling
//!   resistance `ROLLING_RESISTANCE`: a gentle shake rolls the top layer and rattles it
//!   softly). Free, they cross the cup and hit the opposite wall at each reversal at
//!   `v = 2 V (1 - a0 / A)` (2V for a jar that reverses at once, 0 at the threshold). A
//!   sliding bed slams it: its grains arrive over `SLAM_ARRIVAL_S`, more and more as the
//!   bulk comes in (a ramp: the front is thin), a burst of grain–wall impacts (the layer
//!   against the wall) and
//!   grain–grain impacts through the bed. The bed itself stops dead against the wall: a
//!   granular bed colliding as a whole is a perfectly inelastic mass (Sánchez, Rosenthal &
//!   Pugnaloni, "Universal response of optimal granular damping devices", J. Sound Vib. 331
//!   (2012) 4389; the principle of granular dampers), so only the layer that hits the wall
//!   rebounds, with `E = e^2 m_layer v^2 / 2`: PhISEM's system energy. Those grains rattle
//!   as a granular gas over the free room `l` (PhISEM's event stream, `N v / l` collisions a
//!   second) and come to rest as it cools: by their collisions (Haff's law, each losing
//!   `1 - e^2` of its energy per collision at `v / l`) and by landing under gravity (a grain
//!   thrown at `v` lands after `v / g` on average and the bed it lands on takes its energy,
//!   `LANDING_DECELERATION`), so `dE/dt = -(1 - e^2) E v / l - E g / v`, that is
//!   `dv/dt = -(1 - e^2) v^2 / (2 l) - g / 2`, which brings them to rest in a finite time,
//!   tens of milliseconds for a stroke's rattle ([`rattle_speed`], its exact solution).
//! - Tilt: the cup turns towards `intensity * MAX_TILT_DEG` at most `TILT_RATE_DEG_S`. The bed
//!   turns with it until its surface's slope reaches the angle of repose; then it avalanches.
//!   A thin layer (under `LAYER_DIAMETERS` grains) slides instead, once the tilt's tangent
//!   passes the grain–cup static friction, at `sqrt(2 g s (sin theta - mu_d cos theta))`. What
//!   no longer fits below the low rim spills over it and falls onto the surface.
//! - Avalanches (Jaeger, Liu & Nagel, "Relaxation at the angle of repose", PRL 62 (1989) 40):
//!   a heap's slope creeps up to the angle of repose and an avalanche takes it back to
//!   `AVALANCHE_SPAN_DEG` below it. On a heap fed by a pour (onto the surface: a
//!   pour into a cup fills it as a level bed, `scene`, with no heap until the cup is tilted
//!   or an avalanche is asked for), the slab is the volume
//!   between the two cones, `(pi/3) r^3 (tan theta_max - tan theta_min)`, and the pour brings
//!   it in `V / Q` seconds; in a tilted cup it is the wedge the surface turns by the span,
//!   `(2/3) R^3 tan(span)`. The slab flows as a layer of thickness `h` at the speed of a dense
//!   surface flow, `sqrt(g h)` (Froude number one: Pouliquen, "Scaling laws in granular flows
//!   down rough inclined planes", Phys. Fluids 11 (1999) 542), rising and falling as a half
//!   sine over the slope's length. It slides on the bed below (grain–grain friction, load
//!   `M g cos theta`) and its grains knock together at the shear rate `u / h`.

use crate::base::materials::{
    CupMaterial, FrictionMaterial, FrictionPairData, GrainMaterial, GRAVITY, PACKING_FRACTION,
};
use crate::base::window::{Collision, WINDOW};
use crate::control::choices::Gesture;
use crate::derived::cups::{Cup, SECTORS};
use crate::statistics::logged::{Body, Contact};
use rand::Rng;
use rand_distr::{Distribution, Poisson, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::f32::consts::PI;

/// Fastest spoon, m/s (a brisk stir of a mug: a 3 cm circle twice a second is 0.4 m/s).
pub const STIR_MAX_SPEED_M_S: f32 = 0.5;
/// Width of the spoon's bowl, m (a teaspoon).
pub const SPOON_WIDTH_M: f32 = 0.02;
/// Radius of the spoon's circle, as a share of the cup's radius at the bed's top.
pub const SPOON_CIRCLE_SHARE: f32 = 0.6;
/// Coefficient of the granular drag on a slowly dragged plate, `F = ETA rho_b g w d^2`
/// (Albert et al. 1999 measured about 3 to 6 for glass beads; 4 here).
pub const ETA_DRAG: f32 = 4.0;
/// The hand's push of the spoon on the floor when it stirs down to it, N.
pub const SPOON_HAND_LOAD_N: f32 = 0.5;
/// Fastest shake: the jar's peak speed, m/s (6 cm either way, 4 times a second).
pub const SHAKE_MAX_SPEED_M_S: f32 = 1.5;
/// Largest tilt, degrees (the cup on its side).
pub const MAX_TILT_DEG: f32 = 90.0;
/// How fast a hand tilts the cup, degrees per second.
pub const TILT_RATE_DEG_S: f32 = 60.0;
/// Slope span of an avalanche, degrees (`materials::AVALANCHE_SPAN_DEG`, where the stream's
/// fits read it too).
pub use crate::base::materials::AVALANCHE_SPAN_DEG;
/// A bed thinner than this many grain diameters slides as a layer instead of avalanching.
pub const LAYER_DIAMETERS: f32 = 3.0;
/// Share of a granular bed's contacts that slide (the rest roll or stick) while it is
/// sheared: the load a grain–grain or spoon–grain sliding contact carries is this share of the
/// force across the bed. Radjai, Wolf, Jean & Moreau, "Bimodal character of stress
/// transmission in granular packings", PRL 80 (1998) 61: sliding contacts are a small part of
/// the network, about a tenth, almost all in its weak part.
pub const GRANULAR_SLIDING_SHARE: f32 = 0.1;
/// Grains a gesture moved settle for this long after it stops, s (as a pour's pile does,
/// `scene::SETTLE_TIME_S`): until then a new gesture goes on from their state.
pub const SETTLE_S: f32 = crate::pour::scene::SETTLE_TIME_S;
/// How fast the rattling grains lose speed to their landings, m/s^2: `g / 2`. A grain thrown
/// at `v` in a direction `theta` from the vertical lands after `2 v cos(theta) / g`, on
/// average `v / g` over the directions of the upper half-space (the mean of `cos(theta)` is
/// 1/2), and the bed it lands on takes its energy (a granular bed is an almost perfectly
/// inelastic target: Sánchez et al. 2012, the module doc), so `dE/dt = -E g / v`,
/// `dv/dt = -g / 2`.
pub const LANDING_DECELERATION: f32 = GRAVITY / 2.0;
/// How long a slamming bed takes to arrive at the wall, s: its grains come in over a spread of
/// times, the front first (a ramp whose 10–90 % rise of the level is about 0.8 of this). A
/// fit to real shaker strokes, which rise over 14–38 ms from 10 to 90 % whatever their
/// strength (rice in a glass jar, 2 mm beads in a tumbler, lentils and plastic discs in a
/// plastic jar at 30, 60 and 100 %: the recordings issue 45 quotes). The crossing time of the
/// loosened bed, about `2 r / v` over a few, would make soft strokes rise slower than those
/// recordings do.
pub const SLAM_ARRIVAL_S: f32 = 0.025;
/// Rolling resistance of a grain on the bed's surface or the cup's floor, as a share of its
/// weight: the coefficient of rolling friction of granular DEM models, 0.05–0.1 for sand and
/// beads that build their measured angles of repose (Zhou, Wright, Yang, Xu & Yu, "Rolling
/// friction in the dynamic simulation of sandpile formation", Physica A 269 (1999) 536; Ai,
/// Chen, Rotter & Ooi, "Assessment of rolling resistance models in discrete element
/// simulations", Powder Technol. 206 (2011) 269).
pub const ROLLING_RESISTANCE: f32 = 0.1;
/// Share of a tilted bed's avalanche that runs along the cup's wall (its two edges against
/// the wall, over the bed's width: a tenth).
pub const TILT_WALL_SHARE: f32 = 0.1;
/// Longest jam of a thin layer against the low wall, s: its length over its speed, L / v, up
/// to this (a layer reaching the wall at 8 cm/s over a mug's floor).
pub const JAM_MAX_S: f32 = 1.0;
/// Rendered collisions per window at most, per burst (the rest are merged into them in
/// energy-preserving groups, as the generator does).
pub const RENDERED_PER_BURST: u32 = 24;
/// Spread of a burst's normal speeds, the standard deviation of their logarithm.
const SPEED_SIGMA_LN: f32 = 0.5;

/// The sliding contacts a gesture drives, each one `friction::Friction` in the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Voice {
    /// Grains on grains: a slab avalanching, the bed sheared by a spoon.
    GrainGrain,
    /// Grains on the cup (or, in a pour onto the surface, on the surface): a layer sliding,
    /// an avalanche's foot against the wall.
    GrainCup,
    /// The spoon through the grains.
    SpoonGrain,
    /// The spoon scraping the cup's floor.
    SpoonCup,
}

pub const VOICES: [Voice; 4] = [Voice::GrainGrain, Voice::GrainCup, Voice::SpoonGrain, Voice::SpoonCup];

impl Voice {
    /// The two materials that slide (the first on the second).
    pub fn pair(self, grain: GrainMaterial, cup: FrictionMaterial) -> FrictionPairData {
        let g = FrictionMaterial::Grain(grain);
        let spoon = FrictionMaterial::Cup(CupMaterial::Steel);
        match self {
            Voice::GrainGrain => FrictionPairData::new(g, g),
            Voice::GrainCup => FrictionPairData::new(g, cup),
            Voice::SpoonGrain => FrictionPairData::new(spoon, g),
            Voice::SpoonCup => FrictionPairData::new(spoon, cup),
        }
    }

    /// The share of the voice's load its sliding contacts carry: `GRANULAR_SLIDING_SHARE`
    /// in a granular bed, all of it where a solid slides on the cup.
    pub fn sliding_share(self) -> f32 {
        match self {
            Voice::GrainGrain | Voice::SpoonGrain => GRANULAR_SLIDING_SHARE,
            Voice::GrainCup | Voice::SpoonCup => 1.0,
        }
    }

    /// True where the voice's friction force pushes on the cup (and drives its modes).
    pub fn on_cup(self) -> bool {
        matches!(self, Voice::GrainCup | Voice::SpoonCup)
    }
}

/// One sliding contact over a window: speed, m/s, and normal load, N (0: not sliding).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sliding {
    pub speed_m_s: f32,
    pub load_n: f32,
}

/// Where a burst's impacts are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Place {
    /// Grain on grain at the bed's top.
    Bed,
    /// Grain on the cup's wall, in sector `0` or `1`, below the bed's top.
    Wall(usize),
    /// Grain on the cup's floor.
    Floor,
    /// Grain on the surface beside the cup (spills) or under the heap (a pour onto it).
    Surface,
}

/// Impacts over one window: an expected `count` at `place`, normal speeds spread about
/// `mean_speed_m_s`, their times spread evenly from `onset` to `until` (shares of the
/// window, 0..1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Burst {
    pub place: Place,
    /// Expected impacts in the window.
    pub count: f32,
    pub mean_speed_m_s: f32,
    pub onset: f32,
    pub until: f32,
}

/// Most bursts a window holds.
pub const MAX_BURSTS: usize = 8;

/// What the gesture models read, in SI units, once per window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GestureInput {
    pub gesture: Gesture,
    /// How hard, 0..1 (a note's velocity, or `gesture_amount`); 0 when no note is held.
    pub intensity: f32,
    /// The mod wheel or channel pressure, 0..1 (stir: how deep the spoon goes).
    pub modulation: f32,
    pub shake_rate_hz: f32,
    pub cup: Cup,
    pub grain: GrainMaterial,
    pub grain_radius_m: f32,
    pub grain_density: f32,
    /// The cup's friction material (its own, or the surface's in a pour onto the surface).
    pub cup_friction: FrictionMaterial,
    /// The bed's height in the cup, m, and its top's radius, m (a pour onto the surface: the
    /// heap's height and base radius).
    pub pile_height_m: f32,
    pub pile_radius_m: f32,
    /// Grains in the cup (or the heap), kg.
    pub bed_mass_kg: f32,
    /// Bulk volume the pour brought onto the pile this window, m^3.
    pub poured_m3: f32,
    /// A pour onto the bare surface (no cup: a heap on the ground).
    pub open: bool,
    /// An avalanche was asked for (`AVALANCHE_KEY`) since the last window.
    pub avalanche_now: bool,
    pub window_s: f32,
}

/// What the gesture models produce for one window.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GestureOutput {
    pub sliding: [Sliding; VOICES.len()],
    pub bursts: [Option<Burst>; MAX_BURSTS],
    /// Grains leaving the cup over its rim this window (a tilt), kg.
    pub spilled_kg: f32,
    /// This window's part of a slam of the bed against the wall (a shake): the push the
    /// cup as a whole takes (`resonators::body`).
    pub slam: Option<SlamPart>,
}

/// The part of a slam (the shaken bed stopping dead against the wall: `Slam`) in one window.
/// Its grains arrive as a ramp, so the momentum they bring, `bed_kg` at `speed_m_s`, comes
/// in at the rate 2 bed_kg speed_m_s t / len_s² at the time t from the slam's start; the
/// part runs from the slam's time `t_s[0]` to `t_s[1]`, s, at the shares `window[0]` to
/// `window[1]` of the window. `side`: which end of the shake's stroke (0 or 1, alternating:
/// the bed slams the two sides of the jar in turn).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SlamPart {
    pub bed_kg: f32,
    pub speed_m_s: f32,
    pub len_s: f32,
    pub t_s: [f32; 2],
    pub window: [f32; 2],
    pub side: usize,
}

impl GestureOutput {
    fn push(&mut self, burst: Burst) {
        if burst.count > 0.0 && burst.mean_speed_m_s > 0.0 && burst.count.is_finite() {
            if let Some(slot) = self.bursts.iter_mut().find(|b| b.is_none()) {
                *slot = Some(burst);
            }
        }
    }
}

/// What the editor draws and tests read: the state of the gesture after the last window.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GestureView {
    pub gesture: Gesture,
    /// The cup's tilt, rad.
    pub tilt_rad: f32,
    /// The spoon's angle on its circle, rad, and its depth below the bed's top, m (0: out).
    pub spoon_angle_rad: f32,
    pub spoon_depth_m: f32,
    /// The cup's sideways offset in a shake, m.
    pub shake_offset_m: f32,
    /// Slope of the heap's (or the tilted bed's) surface, rad.
    pub slope_rad: f32,
    /// An avalanche is under way.
    pub avalanche: bool,
    /// Avalanches since the last reset.
    pub avalanches: u32,
    /// The shaken grains' kinetic energy, J.
    pub shake_energy_j: f32,
}

/// An avalanche under way: a slab of `mass_kg` flowing over a slope of `length_m` at
/// `angle_rad` as a layer `thickness_m` thick, for `duration_s`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Avalanche {
    t_s: f32,
    duration_s: f32,
    mass_kg: f32,
    length_m: f32,
    angle_rad: f32,
    thickness_m: f32,
    /// Share of the slab's foot that runs against the cup's wall (0 on an open heap).
    against_wall: f32,
    /// Bulk density, kg/m^3, the area it flows over, m^2, and its thinnest layer, m.
    bulk: f32,
    area_m2: f32,
    min_thickness_m: f32,
}

/// The gestures' state between windows.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GestureState {
    tilt_rad: f32,
    /// Slope of the bed's surface against the horizontal, rad (signed: towards the low rim).
    slope_rad: f32,
    /// A thin layer in a tilted cup: how far it has slid, m, and its speed, m/s.
    layer_slid_m: f32,
    layer_speed: f32,
    /// The layer jamming against the low wall: seconds of it still to arrive, the grains
    /// arriving a second and their speed, m/s.
    jam_left_s: f32,
    jam_rate: f32,
    jam_speed: f32,
    /// Bulk volume brought onto the heap since its last avalanche, m^3.
    heap_fed_m3: f32,
    avalanche: Option<Avalanche>,
    avalanches: u32,
    spoon_angle_rad: f32,
    spoon_depth_m: f32,
    /// The shake's phase, cycles (0..1), and the side the bed last slammed.
    shake_phase: f32,
    shake_side: usize,
    shake_offset_m: f32,
    /// The shaken grains' kinetic energy (PhISEM's system energy), J, and the mass of the
    /// grains that rattle with it, kg.
    shake_energy_j: f32,
    shake_gas_kg: f32,
    /// A slam of the bed against a wall, under way.
    slam: Option<Slam>,
    /// Seconds the grains still settle after the gesture last moved them (`SETTLE_S`).
    settling_s: f32,
}

/// The bed slamming a wall: `t_s` since it started (negative: it starts that much into the
/// next window), lasting `len_s`; `layer` grains on the wall and `grains` in the bed, at
/// `speed_m_s`, against wall sector `side`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Slam {
    t_s: f32,
    len_s: f32,
    layer: f32,
    grains: f32,
    speed_m_s: f32,
    side: usize,
}

/// The angles where an avalanche starts and stops, rad, for an angle of repose in degrees.
pub fn avalanche_angles_rad(repose_deg: f32) -> (f32, f32) {
    (repose_deg.to_radians(), (repose_deg - AVALANCHE_SPAN_DEG).to_radians())
}

/// Volume of the slab an avalanche moves off a conical heap of base radius `r` (the volume
/// between the cones at the start and stop angles, `(pi/3) r^3 (tan max - tan min)`), m^3.
pub fn heap_slab_m3(r_m: f32, repose_deg: f32) -> f32 {
    let (max, min) = avalanche_angles_rad(repose_deg);
    PI / 3.0 * r_m.powi(3) * (max.tan() - min.tan())
}

/// Granular drag on a plate of width `w` dragged at depth `d` through a bed of bulk density
/// `rho_b` (Albert et al. 1999), N.
pub fn granular_drag_n(bulk_density: f32, width_m: f32, depth_m: f32) -> f32 {
    ETA_DRAG * bulk_density * GRAVITY * width_m * depth_m * depth_m
}

/// Speed at which grains held by a grip of `hold_m_s2` (`mu g`) hit the wall of a cup shaken
/// sideways at peak speed `V` and rate `f`: `2 V (1 - a0 / A)`, `A = 2 pi f V`; 0 while the
/// shake's acceleration cannot overcome the grip (`A <= a0`).
pub fn slam_speed_m_s(peak_speed_m_s: f32, rate_hz: f32, hold_m_s2: f32) -> f32 {
    let a = 2.0 * PI * rate_hz * peak_speed_m_s;
    if a <= hold_m_s2 {
        0.0
    } else {
        2.0 * peak_speed_m_s * (1.0 - hold_m_s2 / a)
    }
}

/// The rattling grains' speed `dt` s after it was `v0` (m/s), in a free room `l` (m), for
/// grain–grain restitution `e`: the exact solution of `dv/dt = -(k v^2 + b)`,
/// `k = (1 - e^2) / (2 l)` (Haff's cooling), `b = g / 2` (the landings,
/// [`LANDING_DECELERATION`]):
/// `v = c tan(atan(v0 / c) - k c dt)`, `c = sqrt(b / k)`, 0 once that reaches 0 (at rest after
/// `atan(v0 / c) / (k c)`).
pub fn rattle_speed(v0_m_s: f32, l_m: f32, restitution: f32, dt_s: f32) -> f32 {
    if v0_m_s <= 0.0 || !v0_m_s.is_finite() {
        return 0.0;
    }
    let l = l_m.max(1e-4);
    let k = (1.0 - restitution * restitution).max(1e-3) / (2.0 * l);
    let c = (LANDING_DECELERATION / k).sqrt();
    let angle = (v0_m_s / c).atan() - k * c * dt_s;
    if angle <= 0.0 {
        0.0
    } else {
        c * angle.tan()
    }
}

impl GestureState {
    pub fn view(&self, gesture: Gesture) -> GestureView {
        GestureView {
            gesture,
            tilt_rad: self.tilt_rad,
            spoon_angle_rad: self.spoon_angle_rad,
            spoon_depth_m: self.spoon_depth_m,
            shake_offset_m: self.shake_offset_m,
            slope_rad: self.slope_rad,
            avalanche: self.avalanche.is_some(),
            avalanches: self.avalanches,
            shake_energy_j: self.shake_energy_j,
        }
    }

    /// True while anything still moves: a tilted cup, an avalanche, shaken grains in flight.
    pub fn is_active(&self) -> bool {
        self.tilt_rad > 1e-4
            || self.avalanche.is_some()
            || self.shake_energy_j > 1e-9
            || self.layer_speed > 0.0
            || self.jam_left_s > 0.0
            || self.slam.is_some()
            || self.settling_s > 0.0
    }

    /// A gesture starts: the grains are moving from now on (`is_active`), for `SETTLE_S` at
    /// least.
    pub fn start(&mut self) {
        self.settling_s = SETTLE_S;
    }

    /// The cup's tilt, rad.
    pub fn tilt_rad(&self) -> f32 {
        self.tilt_rad
    }

    /// One window of the gesture's models.
    pub fn step(&mut self, input: &GestureInput) -> GestureOutput {
        let mut out = GestureOutput::default();
        let s = input;
        let grain = s.grain.data();
        let bulk = PACKING_FRACTION * s.grain_density;
        let d = 2.0 * s.grain_radius_m;
        let dt = s.window_s;
        let intensity = if s.intensity.is_finite() {
            s.intensity.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let grain_mass = s.grain_density * 4.0 / 3.0 * PI * s.grain_radius_m.powi(3);
        let stirring = s.gesture == Gesture::Stir && intensity > 0.0;
        let shaking = s.gesture == Gesture::Shake && intensity > 0.0;

        // the tilt: towards its target at the hand's rate, back to level when let go
        let target = if s.gesture == Gesture::Tilt && !s.open {
            intensity * MAX_TILT_DEG.to_radians()
        } else {
            0.0
        };
        let max_step = TILT_RATE_DEG_S.to_radians() * dt;
        let old_tilt = self.tilt_rad;
        self.tilt_rad += (target - self.tilt_rad).clamp(-max_step, max_step);
        let turned = self.tilt_rad - old_tilt;

        let (max_angle, min_angle) = avalanche_angles_rad(grain.repose_deg);
        let thin = s.pile_height_m < LAYER_DIAMETERS * d;
        let cup_pair = Voice::GrainCup.pair(s.grain, s.cup_friction);

        // ---- avalanches -------------------------------------------------------------
        let mut start: Option<Avalanche> = None;
        if s.bed_mass_kg > 0.0 {
            if !s.open && (self.tilt_rad > 1e-4 || turned != 0.0) {
                if !thin {
                    // the bed's surface turns with the cup until its slope passes the start
                    // angle; the avalanche takes it back to the stop angle
                    self.slope_rad += turned;
                    if self.slope_rad.abs() >= max_angle {
                        let sign = self.slope_rad.signum();
                        self.slope_rad = sign * min_angle;
                        let r = s.pile_radius_m.max(s.cup.floor_radius);
                        let wedge = 2.0 / 3.0 * r.powi(3) * AVALANCHE_SPAN_DEG.to_radians().tan();
                        // over the bed's top, pi r^2 (the layer's thickness is the wedge's
                        // volume over it)
                        start = Some(self.slab(wedge * bulk, bulk, 2.0 * r, min_angle, PI * r * r, d, TILT_WALL_SHARE));
                    }
                }
            } else if s.open {
                // a heap fed by the pour: its slope creeps up until a slab lets go (in a cup,
                // the scene spreads what arrives over its cross-section as a level bed: no
                // heap, until the cup is tilted)
                self.heap_fed_m3 += s.poured_m3.max(0.0);
                let r = s.pile_radius_m.max(d);
                let slab = heap_slab_m3(r, grain.repose_deg);
                if self.heap_fed_m3 >= slab && slab > 0.0 {
                    self.heap_fed_m3 = (self.heap_fed_m3 - slab).min(slab);
                    start = Some(self.slab(slab * bulk, bulk, r / min_angle.cos(), min_angle, PI * r * r, d, 0.0));
                }
                // between avalanches, the slope rises from the stop angle towards the start
                // angle as the pour brings the slab's volume
                let share = if slab > 0.0 {
                    (self.heap_fed_m3 / slab).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                self.slope_rad = min_angle + (max_angle - min_angle) * share;
            }
            if s.avalanche_now && start.is_none() {
                // on demand: the heap (or the level bed, at its edge) gives way now
                let r = s.pile_radius_m.max(d);
                let slab = heap_slab_m3(r, grain.repose_deg);
                start = Some(self.slab(slab * bulk, bulk, r / min_angle.cos(), min_angle, PI * r * r, d, 0.0));
            }
        } else {
            self.slope_rad = 0.0;
        }
        if let Some(a) = start {
            self.avalanches += 1;
            // a slab that lets go while one flows joins what of it still flows (the share of
            // its run still ahead); the flow goes on at the speed it had (the joined slab's
            // half sine taken up where it reaches that speed)
            self.avalanche = Some(match self.avalanche {
                Some(old) => {
                    let still = old.mass_kg * (1.0 - old.t_s / old.duration_s).clamp(0.0, 1.0);
                    let mut joined = self.slab_like(&a, still + a.mass_kg);
                    let speed = old.speed_at(old.t_s);
                    let top = (GRAVITY * joined.thickness_m).sqrt();
                    joined.t_s = joined.duration_s / PI * (speed / top).clamp(0.0, 1.0).asin();
                    joined
                }
                None => a,
            });
        }
        if let Some(a) = &mut self.avalanche {
            let mid = a.t_s + 0.5 * dt;
            a.t_s += dt;
            if mid < a.duration_s {
                let u = a.speed_at(mid);
                let load = a.mass_kg * GRAVITY * a.angle_rad.cos();
                let v = &mut out.sliding[Voice::GrainGrain as usize];
                v.speed_m_s = u;
                v.load_n += load * (1.0 - a.against_wall);
                // the grains of its edge along the wall are a granular layer too: most roll
                let w = &mut out.sliding[Voice::GrainCup as usize];
                w.speed_m_s = w.speed_m_s.max(u);
                w.load_n += load * a.against_wall * GRANULAR_SLIDING_SHARE;
                // the slab's grains knock together at the shear rate u / h, at u d / h
                let grains = a.mass_kg / grain_mass.max(1e-12);
                let shear = u / a.thickness_m;
                out.push(Burst {
                    place: Place::Bed,
                    count: grains * shear * dt,
                    mean_speed_m_s: shear * d,
                    onset: 0.0,
                    until: 1.0,
                });
                if a.against_wall > 0.0 {
                    out.push(Burst {
                        place: Place::Wall(0),
                        count: grains * a.against_wall * shear * dt,
                        mean_speed_m_s: shear * d,
                        onset: 0.0,
                        until: 1.0,
                    });
                }
            } else {
                self.avalanche = None;
            }
        }

        // ---- a thin layer sliding in the tilted cup ----------------------------------
        if !s.open && thin && s.bed_mass_kg > 0.0 && self.tilt_rad > 0.0 {
            let th = self.tilt_rad;
            let run = 2.0 * s.cup.floor_radius.max(d);
            if th.tan() > cup_pair.mu_static && self.layer_slid_m < run {
                // from rest, a = g (sin - mu_d cos): the speed after sliding s metres
                let a = GRAVITY * (th.sin() - cup_pair.mu_dynamic * th.cos());
                if a > 0.0 {
                    self.layer_speed = (self.layer_speed + a * dt).min((2.0 * a * run).sqrt());
                    self.layer_slid_m += self.layer_speed * dt;
                    let v = &mut out.sliding[Voice::GrainCup as usize];
                    v.speed_m_s = v.speed_m_s.max(self.layer_speed);
                    v.load_n += s.bed_mass_kg * GRAVITY * th.cos();
                }
            } else if self.layer_slid_m >= run && self.layer_speed > 0.0 {
                // it reaches the low wall: the grains of its front row (those within a grain
                // of the wall, d / run of the layer) knock on it at the layer's speed; the
                // rest run into the grains already stopped ahead of them, row by row, as the
                // layer's length arrives: a jam, over run / v, not the whole layer on the
                // wall in one instant
                let grains = s.bed_mass_kg / grain_mass.max(1e-12);
                let v = self.layer_speed;
                let front = (grains * d / run).max(grains.min(1.0));
                out.push(Burst {
                    place: Place::Wall(0),
                    count: front,
                    mean_speed_m_s: v,
                    onset: 0.0,
                    until: 1.0,
                });
                // (a jam still under way, of a layer tilted back and again, joins this one;
                // at most `JAM_MAX_S`: a layer slower than that creeps in unheard)
                let still = self.jam_rate * self.jam_left_s;
                self.jam_left_s = (run / v).min(JAM_MAX_S);
                self.jam_rate = ((grains - front).max(0.0) + still) / self.jam_left_s;
                self.jam_speed = v;
                self.layer_speed = 0.0;
            }
        }
        if self.jam_left_s > 0.0 {
            // the jam's rows this window (over the window's share it still lasts)
            let t = self.jam_left_s.min(dt);
            out.push(Burst {
                place: Place::Bed,
                count: self.jam_rate * t,
                mean_speed_m_s: self.jam_speed,
                onset: 0.0,
                until: t / dt,
            });
            self.jam_left_s -= t;
        }
        if self.tilt_rad <= 1e-4 {
            self.layer_slid_m = 0.0;
            self.layer_speed = 0.0;
            if s.gesture != Gesture::Tilt {
                self.tilt_rad = 0.0;
            }
        }

        // ---- spills over the low rim ------------------------------------------------
        if !s.open && self.tilt_rad > 0.0 && s.bed_mass_kg > 0.0 {
            // the room below the low rim: a cylinder of the cup's mean radius cut by the
            // grains' surface, which the cup's tilt less the surface's slope turns against the
            // rim (pi R^2 (H - R tan alpha), while the plane stays above the floor)
            let r = 0.5 * (s.cup.rim_radius + s.cup.floor_radius);
            let alpha = (self.tilt_rad - self.slope_rad.abs().min(self.tilt_rad)).min(1.5);
            let room = PI * r * r * (s.cup.depth - r * alpha.tan()).max(0.0);
            let held = s.bed_mass_kg / bulk;
            if held > room {
                let spilled = (held - room) * bulk;
                out.spilled_kg = spilled;
                // they fall from the low rim onto the surface the cup stands on
                let rim = (s.cup.depth * self.tilt_rad.cos() - s.cup.rim_radius * self.tilt_rad.sin()).max(0.005);
                out.push(Burst {
                    place: Place::Surface,
                    count: spilled / grain_mass.max(1e-12),
                    mean_speed_m_s: (2.0 * GRAVITY * rim).sqrt(),
                    onset: 0.0,
                    until: 1.0,
                });
                // and slide over the rim on the way
                let v = &mut out.sliding[Voice::GrainCup as usize];
                v.speed_m_s = v.speed_m_s.max((GRAVITY * d).sqrt());
                v.load_n += spilled / dt * (GRAVITY * d).sqrt() * self.tilt_rad.cos();
            }
        }

        // ---- stir ----------------------------------------------------------------------
        if stirring {
            let u = intensity * STIR_MAX_SPEED_M_S;
            let r_top = if s.open {
                s.pile_radius_m
            } else {
                s.cup.radius_at(s.pile_height_m)
            };
            let circle = (SPOON_CIRCLE_SHARE * r_top).max(0.005);
            self.spoon_angle_rad = (self.spoon_angle_rad + u / circle * dt) % (2.0 * PI);
            let depth_share = 0.5 + 0.5 * s.modulation.clamp(0.0, 1.0);
            let depth = depth_share * s.pile_height_m;
            self.spoon_depth_m = depth;
            if depth > 0.0 && s.bed_mass_kg > 0.0 {
                let drag = granular_drag_n(bulk, SPOON_WIDTH_M, depth);
                out.sliding[Voice::SpoonGrain as usize] = Sliding {
                    speed_m_s: u,
                    load_n: drag,
                };
                // the sheared grains slide on one another under the same force, at about
                // half the spoon's speed
                let v = &mut out.sliding[Voice::GrainGrain as usize];
                v.speed_m_s = v.speed_m_s.max(0.5 * u);
                v.load_n += drag;
                // displaced grains: u w d phi / V_grain a second, each knocking into its
                // neighbours at about half the spoon's speed; at the wall, the share of the
                // circle the spoon's width sweeps next to it knocks on the cup
                let displaced =
                    u * SPOON_WIDTH_M * depth * PACKING_FRACTION / (grain_mass / s.grain_density).max(1e-15);
                let wall_share = if s.open {
                    0.0
                } else {
                    SPOON_WIDTH_M / (r_top - circle).max(SPOON_WIDTH_M) * 0.1
                };
                out.push(Burst {
                    place: Place::Bed,
                    count: displaced * (1.0 - wall_share) * dt,
                    mean_speed_m_s: 0.5 * u,
                    onset: 0.0,
                    until: 1.0,
                });
                if wall_share > 0.0 {
                    let sector = usize::from(self.spoon_angle_rad.sin() < 0.0);
                    out.push(Burst {
                        place: Place::Wall(sector),
                        count: displaced * wall_share * dt,
                        mean_speed_m_s: 0.5 * u,
                        onset: 0.0,
                        until: 1.0,
                    });
                }
            }
            if !s.open && (depth_share >= 0.999 || s.bed_mass_kg <= 0.0) {
                // down to the floor: the spoon scrapes it
                out.sliding[Voice::SpoonCup as usize] = Sliding {
                    speed_m_s: u,
                    load_n: SPOON_HAND_LOAD_N * intensity.max(0.2),
                };
            }
        } else {
            self.spoon_depth_m = 0.0;
        }

        // ---- shake ---------------------------------------------------------------------
        let free_room = (2.0 * s.cup.widest_radius() * (1.0 - s.pile_height_m / s.cup.depth.max(1e-4)).max(0.0)).max(d);
        if shaking && !s.open {
            let rate = s.shake_rate_hz.max(0.1);
            let v_peak = intensity * SHAKE_MAX_SPEED_M_S;
            let omega = 2.0 * PI * rate;
            let phase0 = self.shake_phase;
            let phase1 = phase0 + rate * dt;
            // reversals at phase 0.25 and 0.75 of each cycle (x = X sin(2 pi phase))
            let mut k = (phase0 * 2.0 - 0.5).floor() + 1.0;
            while (k + 0.5) / 2.0 < phase1 {
                let at = ((k + 0.5) / 2.0 - phase0) / (phase1 - phase0);
                // the bed slides free past the grain–cup grip; its top layer rolls free past
                // the rolling resistance
                let slide = slam_speed_m_s(v_peak, rate, cup_pair.mu_static * GRAVITY);
                let roll = slam_speed_m_s(v_peak, rate, ROLLING_RESISTANCE * GRAVITY);
                if roll > 0.0 && s.bed_mass_kg > 0.0 {
                    self.shake_side ^= 1;
                    let all = s.bed_mass_kg / grain_mass.max(1e-12);
                    // the layer against the wall (its area over a grain's cross-section), or
                    // the top layer when only it rolls
                    let r = s.cup.radius_at(0.5 * s.pile_height_m);
                    let layer = (2.0 * r * s.pile_height_m.max(d) / (d * d)).min(all);
                    let top = (PI * s.pile_radius_m.max(d).powi(2) / (d * d)).min(all);
                    let (v, grains, layer) = if slide > 0.0 {
                        (slide, all, layer)
                    } else {
                        (roll, top, top.min(layer))
                    };
                    // the bed arrives over `SLAM_ARRIVAL_S` (at most 0.4 of a half shake)
                    let len = SLAM_ARRIVAL_S.clamp(dt, 0.2 / rate);
                    self.slam = Some(Slam {
                        t_s: -at * dt,
                        len_s: len,
                        layer,
                        grains,
                        speed_m_s: v,
                        side: self.shake_side,
                    });
                    // the bed stops dead; the layer that hit the wall rebounds and rattles
                    let e = grain.restitution;
                    let gas = layer * grain_mass;
                    if self.shake_energy_j <= 0.0 {
                        self.shake_gas_kg = 0.0;
                    }
                    self.shake_gas_kg = self.shake_gas_kg.max(gas);
                    self.shake_energy_j = (self.shake_energy_j + 0.5 * e * e * gas * v * v).min(1e3);
                }
                k += 1.0;
            }
            self.shake_phase = phase1 % 1.0;
            self.shake_offset_m = v_peak / omega * (2.0 * PI * self.shake_phase).sin();
        } else {
            self.shake_offset_m = 0.0;
        }
        if let Some(slam) = &mut self.slam {
            // this window's part of the slam, from where it starts in it to where it ends: the
            // bed arrives as a ramp, its density rising as the bulk comes in (the share of
            // the slam between times t0 and t1 of its length L is (t1^2 - t0^2) / L^2)
            let a = (-slam.t_s).clamp(0.0, dt);
            let b = (slam.len_s - slam.t_s).clamp(0.0, dt);
            if b > a {
                let (t0, t1) = ((slam.t_s + a) / slam.len_s, (slam.t_s + b) / slam.len_s);
                let share = (t1 * t1 - t0 * t0).clamp(0.0, 1.0);
                out.slam = Some(SlamPart {
                    bed_kg: slam.grains * grain_mass,
                    speed_m_s: slam.speed_m_s,
                    len_s: slam.len_s,
                    t_s: [slam.t_s + a, slam.t_s + b],
                    window: [a / dt, b / dt],
                    side: slam.side,
                });
                out.push(Burst {
                    place: Place::Wall(slam.side),
                    count: slam.layer * share,
                    mean_speed_m_s: slam.speed_m_s,
                    onset: a / dt,
                    until: b / dt,
                });
                out.push(Burst {
                    place: Place::Bed,
                    count: slam.grains * share,
                    mean_speed_m_s: slam.speed_m_s * grain.restitution,
                    onset: a / dt,
                    until: b / dt,
                });
            }
            slam.t_s += dt;
            if slam.t_s >= slam.len_s {
                self.slam = None;
            }
        }
        if self.shake_energy_j > 0.0 && s.bed_mass_kg > 0.0 && self.shake_gas_kg > 0.0 {
            // PhISEM's event stream: the rattling grains' collisions, N v / l a second, half
            // of them on the walls; they come to rest by their collisions and under gravity
            let m = self.shake_gas_kg.min(s.bed_mass_kg);
            let v = (2.0 * self.shake_energy_j / m).sqrt();
            let rate = m / grain_mass.max(1e-12) * v / free_room;
            out.push(Burst {
                place: Place::Bed,
                count: 0.5 * rate * dt,
                mean_speed_m_s: v,
                onset: 0.0,
                until: 1.0,
            });
            out.push(Burst {
                place: Place::Wall(self.shake_side),
                count: 0.5 * rate * dt,
                mean_speed_m_s: v,
                onset: 0.0,
                until: 1.0,
            });
            let v = rattle_speed(v, free_room, grain.restitution, dt);
            self.shake_energy_j = 0.5 * m * v * v;
            if self.shake_energy_j < 1e-12 {
                self.shake_energy_j = 0.0;
            }
        } else {
            self.shake_energy_j = 0.0;
        }
        let moved = intensity > 0.0 && s.gesture != Gesture::Pour
            || out.bursts.iter().any(Option::is_some)
            || out.sliding.iter().any(|v| v.load_n > 0.0);
        self.settling_s = if moved {
            SETTLE_S
        } else {
            (self.settling_s - dt).max(0.0)
        };
        for (v, voice) in out.sliding.iter_mut().zip(VOICES) {
            v.load_n *= voice.sliding_share();
            if !(v.speed_m_s.is_finite() && v.load_n.is_finite()) || v.speed_m_s <= 0.0 || v.load_n <= 0.0 {
                *v = Sliding::default();
            }
        }
        out
    }

    /// An avalanche of `mass` kg (bulk density `bulk`) over a slope `length` m long at
    /// `angle` rad, spread over `area` m^2 (so a layer `mass / (bulk area)` thick, at least two
    /// grains `d`), `against_wall` of its foot running against the cup's wall. It flows at
    /// `sqrt(g h)` at most, as a half sine: its mean speed is `2/pi` of that.
    #[allow(clippy::too_many_arguments)]
    fn slab(&self, mass: f32, bulk: f32, length: f32, angle: f32, area: f32, d: f32, against_wall: f32) -> Avalanche {
        let h = (mass / (bulk * area.max(1e-8))).max(2.0 * d);
        let u_max = (GRAVITY * h).sqrt();
        Avalanche {
            t_s: 0.0,
            duration_s: (length / (2.0 / PI * u_max)).clamp(0.02, 5.0),
            mass_kg: mass,
            length_m: length,
            angle_rad: angle,
            thickness_m: h,
            against_wall,
            bulk,
            area_m2: area,
            min_thickness_m: 2.0 * d,
        }
    }

    /// `a`'s avalanche with `mass` kg flowing instead (its layer, speed and run follow).
    fn slab_like(&self, a: &Avalanche, mass: f32) -> Avalanche {
        self.slab(
            mass,
            a.bulk,
            a.length_m,
            a.angle_rad,
            a.area_m2,
            0.5 * a.min_thickness_m,
            a.against_wall,
        )
    }
}

impl Avalanche {
    /// The flow's speed `t_s` into its run, m/s: `sqrt(g h)` at most, a half sine.
    fn speed_at(&self, t_s: f32) -> f32 {
        (GRAVITY * self.thickness_m).sqrt() * (PI * (t_s / self.duration_s).clamp(0.0, 1.0)).sin()
    }
}

/// Draws one window's impacts of `burst` as collisions (through `emit`), for `cup` with its
/// bed `pile_height_m` high and `pile_radius_m` wide at its top (a pour onto the surface:
/// the heap). At most `RENDERED_PER_BURST` are drawn; each stands for an energy-preserving
/// group of the burst's Poisson count. Returns the physical count. No allocation.
#[allow(clippy::too_many_arguments)]
pub fn draw_burst(
    burst: &Burst,
    cup: &Cup,
    pile_height_m: f32,
    pile_radius_m: f32,
    open: bool,
    rng: &mut Xoshiro256PlusPlus,
    mut emit: impl FnMut(Collision),
) -> u64 {
    let count = match Poisson::new(burst.count.min(1e9) as f64) {
        Ok(p) => p.sample(rng) as u64,
        Err(_) => 0,
    };
    if count == 0 {
        return 0;
    }
    let rendered = count.min(RENDERED_PER_BURST as u64);
    let group = (count as f64 / rendered as f64) as f32;
    // The speeds are log-normal, ln v ~ N(mu, sigma^2), mu = ln(mean) - sigma^2 / 2. A draw
    // that stands for a group of k collisions must carry k collisions' energy, k E[v^2]; drawn
    // from p and weighted sqrt(k), it carries k v^2 of its one speed, and a window's few draws
    // rise and fall with their fastest (a slab's burst of thousands of lentils came out as
    // peaks 8 dB apart from seed to seed). So a grouped burst draws by energy, as the
    // generator's grouped cells do (`generator::EnergyShape`, importance sampling): from
    // q(v) ~ v^2 p(v), which is log-normal with mu + 2 sigma^2, weighted sqrt(k E_p[v^2]) / v,
    // E_p[v^2] = exp(2 mu + 2 sigma^2): every draw carries the group's mean energy, and any
    // sum over the collisions' energies stays unbiased. A group of fewer than e^{sigma^2}
    // collisions (the generator's k m1^2 >= m2) is drawn as it is.
    let sigma2 = SPEED_SIGMA_LN * SPEED_SIGMA_LN;
    let mu = burst.mean_speed_m_s.max(1e-4).ln() - 0.5 * sigma2;
    let by_energy = group >= sigma2.exp();
    let (centre, energy_amplitude) = if by_energy {
        (mu + 2.0 * sigma2, (group * (2.0 * mu + 2.0 * sigma2).exp()).sqrt())
    } else {
        (mu, 0.0)
    };
    let onset = burst.onset.clamp(0.0, 1.0) * WINDOW as f32;
    let until = burst.until.clamp(burst.onset.clamp(0.0, 1.0), 1.0) * WINDOW as f32;
    for _ in 0..rendered {
        let time = (onset + rng.random::<f32>() * (until - onset)).min(WINDOW as f32 - 1e-3);
        let z: f32 = StandardNormal.sample(rng);
        let v = (centre + SPEED_SIGMA_LN * z).exp().max(1e-4);
        let weight = if by_energy { energy_amplitude / v } else { group.sqrt() };
        let (u1, u2): (f32, f32) = (rng.random(), rng.random());
        let (position, normal, other) = match burst.place {
            Place::Bed => {
                let r = pile_radius_m * 0.9 * u1.sqrt();
                let a = u2 * 2.0 * PI;
                let z = if open { 0.5 * pile_height_m } else { pile_height_m };
                (
                    [r * a.cos(), r * a.sin(), z],
                    [0.3 * a.cos(), 0.3 * a.sin(), 1.0],
                    Body::Grain,
                )
            }
            Place::Floor => {
                let r = cup.floor_radius * 0.9 * u1.sqrt();
                let a = u2 * 2.0 * PI;
                ([r * a.cos(), r * a.sin(), 0.0], [0.0, 0.0, 1.0], Body::Cup)
            }
            Place::Wall(sector) => {
                let az = cup.sector_azimuths[sector.min(SECTORS - 1)] + (u2 - 0.5);
                let z = (u1 * pile_height_m.max(0.002)).min(cup.depth);
                let r = cup.radius_at(z);
                ([r * az.cos(), r * az.sin(), z], [-az.cos(), -az.sin(), 0.0], Body::Cup)
            }
            Place::Surface => {
                let r = if open {
                    pile_radius_m * (1.0 + 0.2 * u1)
                } else {
                    1.25 * cup.widest_radius()
                };
                let a = u2 * 2.0 * PI;
                ([r * a.cos(), r * a.sin(), 0.0], [0.0, 0.0, 1.0], Body::Surface)
            }
        };
        let contact = Contact {
            time_s: 0.0,
            position_m: position,
            normal,
            speed_m_s: v,
            other,
        };
        let mut c = contact.collision(time, cup);
        c.weight = weight;
        emit(c);
    }
    count
}

//! The Granary synthesis engine: a plain library, no plugin framework.
//!
//! `Engine::new(settings, sample_rate, max_block)`, then `note_on` / `note_off` /
//! `set_modulation` / `set_settings` between calls to `process`. Everything is allocated in
//! `new` (and `set_sample_rate`); `process` never allocates, locks or does I/O.
//!
//! Determinism: all control work (pour state, collision generation, cup updates) happens
//! at window boundaries on an absolute sample clock, and every collision is written into
//! ring buffers at its own absolute time. Events take effect at the next window boundary
//! after the sample they arrive at, so the output depends on the events' sample times,
//! never on how the host cuts blocks.
//!
//! Signal flow (DESIGN.md): generator -> Hertz contact -> (acceleration noise of the
//! spheres -> "grains" stem) + (contact force -> modal bank + diffuse -> "cup" stem) ->
//! mix -> look-ahead limiter -> main.

pub mod accel_noise;
pub mod contact;
pub mod cups;
pub mod diffuse;
pub mod fastmath;
pub mod ftz;
pub mod generator;
pub mod kernels;
pub mod limiter;
pub mod materials;
pub mod modal;
pub mod scene;
pub mod simd;

use accel_noise::{sphere_amplitudes_at, SphereFilter};
use contact::{contact, Body};
use cups::CupShape;
use diffuse::DiffuseResonator;
use generator::{generate, Collision, CollisionKind, GeneratorSetup, Geometry, NormalMode, WINDOW};
use kernels::{PulseKernels, HALF};
use limiter::Limiter;
use materials::{CupMaterial, GrainMaterial, CUP_HEIGHT_M, CUP_RADIUS_M, SPEED_OF_SOUND};
use modal::{build_modes, diffuse_params, CupState, ModalBank, Mode, CUP_BUSES, MAX_MODES};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use scene::{PourScene, PourState, SceneInput};

/// How the pour is triggered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TriggerMode {
    /// Note-on starts the stream, velocity scales it, note-off stops it.
    #[default]
    Midi,
    /// `pour_rate` alone drives the pour (0 = silent).
    Continuous,
}

/// Engine settings in physical units. `sanitized` makes any value safe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub grain_material: GrainMaterial,
    /// Multiplies the material's nominal grain diameter.
    pub grain_size: f32,
    /// Multiplies the material's density.
    pub density: f32,
    pub cup_material: CupMaterial,
    /// Multiplies every length of the nominal cup (radius 4 cm, height 9 cm).
    pub cup_size: f32,
    /// The cup's shape (its finite-element model); `None`: the material's usual shape.
    pub cup_shape: Option<CupShape>,
    /// Fill level at pour start, 0..1.
    pub fill: f32,
    /// The cup fills as grains arrive.
    pub auto_fill: bool,
    /// Mass flow, g/s.
    pub pour_rate_g_s: f32,
    /// Spout height above the cup rim, m.
    pub fall_height_m: f32,
    /// Listener direction from the vertical through the impact point, degrees.
    pub listener_angle_deg: f32,
    /// Listener distance from the impact point, m.
    pub listener_distance_m: f32,
    /// 0 = mono, 1 = full width.
    pub stereo_width: f32,
    pub grains_level_db: f32,
    pub cup_level_db: f32,
    /// Output = pressure in Pa times 10^(output_gain_db / 20).
    pub output_gain_db: f32,
    pub trigger_mode: TriggerMode,
    pub seed: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            grain_material: GrainMaterial::Sugar,
            grain_size: 1.0,
            density: 1.0,
            cup_material: CupMaterial::Ceramic,
            cup_size: 1.0,
            cup_shape: None,
            fill: 0.0,
            auto_fill: true,
            pour_rate_g_s: 20.0,
            fall_height_m: 0.15,
            listener_angle_deg: 30.0,
            listener_distance_m: 0.4,
            stereo_width: 0.7,
            grains_level_db: 0.0,
            cup_level_db: 0.0,
            output_gain_db: 52.0,
            trigger_mode: TriggerMode::Midi,
            seed: 1,
        }
    }
}

/// Physical limits the engine enforces whatever it is sent.
pub mod limits {
    pub const GRAIN_SIZE: (f32, f32) = (0.25, 4.0);
    pub const DENSITY: (f32, f32) = (0.25, 4.0);
    pub const CUP_SIZE: (f32, f32) = (0.5, 2.5);
    pub const POUR_RATE_G_S: (f32, f32) = (0.0, 200.0);
    pub const FALL_HEIGHT_M: (f32, f32) = (0.01, 1.0);
    pub const LISTENER_ANGLE_DEG: (f32, f32) = (0.0, 90.0);
    pub const LISTENER_DISTANCE_M: (f32, f32) = (0.1, 10.0);
    pub const LEVEL_DB: (f32, f32) = (-60.0, 24.0);
    pub const OUTPUT_GAIN_DB: (f32, f32) = (-20.0, 80.0);
}

fn clamp_or(x: f32, (lo, hi): (f32, f32), fallback: f32) -> f32 {
    if x.is_finite() {
        x.clamp(lo, hi)
    } else {
        fallback
    }
}

impl Settings {
    /// Clamps every value to its physical range; NaN and infinities become the default.
    pub fn sanitized(&self) -> Settings {
        let d = Settings::default();
        Settings {
            grain_size: clamp_or(self.grain_size, limits::GRAIN_SIZE, d.grain_size),
            density: clamp_or(self.density, limits::DENSITY, d.density),
            cup_size: clamp_or(self.cup_size, limits::CUP_SIZE, d.cup_size),
            fill: clamp_or(self.fill, (0.0, 1.0), d.fill),
            pour_rate_g_s: clamp_or(self.pour_rate_g_s, limits::POUR_RATE_G_S, 0.0),
            fall_height_m: clamp_or(self.fall_height_m, limits::FALL_HEIGHT_M, d.fall_height_m),
            listener_angle_deg: clamp_or(
                self.listener_angle_deg,
                limits::LISTENER_ANGLE_DEG,
                d.listener_angle_deg,
            ),
            listener_distance_m: clamp_or(
                self.listener_distance_m,
                limits::LISTENER_DISTANCE_M,
                d.listener_distance_m,
            ),
            stereo_width: clamp_or(self.stereo_width, (0.0, 1.0), d.stereo_width),
            grains_level_db: clamp_or(self.grains_level_db, limits::LEVEL_DB, 0.0),
            cup_level_db: clamp_or(self.cup_level_db, limits::LEVEL_DB, 0.0),
            output_gain_db: clamp_or(self.output_gain_db, limits::OUTPUT_GAIN_DB, d.output_gain_db),
            ..*self
        }
    }

    /// The cup shape in use: the chosen one, or the material's usual shape.
    pub fn resolved_cup_shape(&self) -> CupShape {
        self.cup_shape.unwrap_or_else(|| CupShape::usual_for(self.cup_material))
    }

    fn grain_radius_m(&self) -> f32 {
        0.5 * self.grain_material.data().diameter_m * self.grain_size
    }

    fn grain_density(&self) -> f32 {
        self.grain_material.data().elastic.density * self.density
    }
}

/// Output buffers for one call of `process`; all slices have the same length.
pub struct Outputs<'a> {
    pub main: [&'a mut [f32]; 2],
    pub grains: [&'a mut [f32]; 2],
    pub cup: [&'a mut [f32]; 2],
}

/// Counters since the last reset.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// Physical collisions generated (merged ones counted individually).
    pub collisions: u64,
    pub grain_grain: u64,
    pub grain_cup: u64,
    /// Collisions rendered one by one (fewer than `collisions` in dense streams).
    pub rendered: u64,
    /// Collisions counted but not rendered: audibility culling (thesis 6.1).
    pub culled: u64,
    /// Rendered collisions whose pulses are written into the output rings so far (they
    /// trail `rendered` by up to one window: each window's share is spread over the next).
    pub written: u64,
}

/// Ceiling of the main output's limiter (-0.5 dBFS).
pub const LIMITER_CEILING: f32 = 0.944;
/// Collisions land this many samples after the window boundary that generates them: one
/// window, over which their rendering is spread (so no block carries a whole window's
/// collisions, whatever the host's block size), plus the band-limited pulses' leading taps.
const GENERATOR_LEAD: usize = WINDOW + HALF + 1;
/// Room for one window's rendered collisions at the default budget (more are rendered at
/// once, when they are generated).
const PENDING: usize = generator::CELLS.len() * generator::MAX_RENDERED_PER_CELL as usize;
/// Gain smoothing time constant, s.
const GAIN_SMOOTH_S: f32 = 0.02;

pub struct Engine {
    sample_rate: f32,
    settings: Settings,
    kernels: PulseKernels,
    scene: PourScene,
    rng: Xoshiro256PlusPlus,
    grains_ring: [Vec<f32>; 2],
    cup_ring: Vec<Vec<f32>>,
    /// One collision's kernels, before they are panned into the rings.
    scratch: Vec<f32>,
    /// The collisions of the next window, rendered a share per span (`GENERATOR_LEAD`);
    /// `pending_done` of them are rendered, with `pending_params`.
    pending: Vec<Collision>,
    pending_done: usize,
    pending_params: RenderParams,
    mask: usize,
    /// Absolute sample clock.
    clock: u64,
    sphere_filter: [SphereFilter; 2],
    /// Grain radius the sphere filters are set for, m.
    sphere_radius: f32,
    modal: ModalBank,
    diffuse: DiffuseResonator,
    limiter: Limiter,
    modes: [Mode; MAX_MODES],
    cup_key: Option<(CupMaterial, CupShape, f32, f32, f32, f32, f32)>,
    gains: [f32; 3],
    gain_coef: f32,
    notes_held: u32,
    velocity: f32,
    modulation: f32,
    last_flow_cmd: f32,
    last_fill_setting: f32,
    pour: PourState,
    normal_mode: NormalMode,
    max_per_cell: u32,
    /// The pour-independent parts of the generator's cell PDFs, and the culling share.
    shapes: generator::Shapes,
    /// At most this many of the cup's modes ring (`granary bench`'s mode sweep).
    mode_limit: usize,
    stats: Stats,
    /// Physical collisions per generator cell (`generator::CELLS`) since the last reset,
    /// for the editor's scene view (read-only telemetry; rendering does not use it).
    cell_collisions: [u64; generator::CELLS.len()],
}

impl Engine {
    /// Builds an engine. `max_block` is accepted for API symmetry with hosts; the engine
    /// renders any block length without allocating.
    pub fn new(settings: Settings, sample_rate: f32, _max_block: usize) -> Self {
        let sample_rate = if sample_rate.is_finite() {
            sample_rate.clamp(8_000.0, 768_000.0)
        } else {
            48_000.0
        };
        let settings = settings.sanitized();
        // parse the cup models now: `process` must not be the first to touch them
        cups::library();
        let kernels = PulseKernels::new(sample_rate);
        // the two spheres of a pair are at most 2 radii (28 mm for the largest grains) apart
        let scratch_len = kernels.taps() + (0.03 / SPEED_OF_SOUND * sample_rate).ceil() as usize + 2;
        let max_delay = (limits::LISTENER_DISTANCE_M.1 * 1.2 / SPEED_OF_SOUND * sample_rate) as usize;
        let ring = (GENERATOR_LEAD + WINDOW + max_delay + kernels.taps() + 2).next_power_of_two();
        let window_s = WINDOW as f32 / sample_rate;
        let mut e = Engine {
            sample_rate,
            settings,
            kernels,
            scene: PourScene::new(window_s),
            rng: Xoshiro256PlusPlus::seed_from_u64(settings.seed),
            grains_ring: [vec![0.0; ring], vec![0.0; ring]],
            cup_ring: vec![vec![0.0; ring]; CUP_BUSES],
            scratch: vec![0.0; scratch_len],
            pending: Vec::with_capacity(PENDING),
            pending_done: 0,
            pending_params: RenderParams::default(),
            mask: ring - 1,
            clock: 0,
            sphere_filter: [SphereFilter::new(sample_rate, settings.grain_radius_m()); 2],
            sphere_radius: settings.grain_radius_m(),
            modal: ModalBank::new(sample_rate),
            diffuse: DiffuseResonator::new(sample_rate, settings.seed),
            limiter: Limiter::new(sample_rate, LIMITER_CEILING),
            modes: [Mode::ZERO; MAX_MODES],
            cup_key: None,
            gains: [0.0; 3],
            gain_coef: 1.0 - (-1.0 / (GAIN_SMOOTH_S * sample_rate)).exp(),
            notes_held: 0,
            velocity: 0.0,
            modulation: 0.0,
            last_flow_cmd: 0.0,
            last_fill_setting: settings.fill,
            pour: PourState::default(),
            normal_mode: NormalMode::Physical,
            max_per_cell: generator::max_rendered_per_cell(sample_rate),
            shapes: generator::Shapes::new(generator::CULL_ENERGY_SHARE),
            mode_limit: MAX_MODES,
            stats: Stats::default(),
            cell_collisions: [0; generator::CELLS.len()],
        };
        e.reset();
        e
    }

    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Latency of the main output (the limiter's look-ahead), samples.
    pub fn latency_samples(&self) -> usize {
        self.limiter.latency()
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Collisions per generator cell (`generator::CELLS`) since the last reset, culled ones
    /// excluded; a merged collision counts as its group size (weight squared, rounded).
    pub fn cell_collisions(&self) -> &[u64; generator::CELLS.len()] {
        &self.cell_collisions
    }

    /// The scene's current geometry (cup, grain and stream sizes, m).
    pub fn scene_geometry(&self) -> Geometry {
        self.geometry()
    }

    /// The pour state of the last window.
    pub fn pour_state(&self) -> PourState {
        self.pour
    }

    /// The cup's current modes.
    pub fn modes(&self) -> &[Mode] {
        self.modal.modes()
    }

    /// Samples per generator window.
    pub fn window_len(&self) -> usize {
        WINDOW
    }

    /// Samples until the next window boundary (where control changes take effect).
    pub fn samples_to_window(&self) -> usize {
        let r = (self.clock % WINDOW as u64) as usize;
        if r == 0 {
            0
        } else {
            WINDOW - r
        }
    }

    /// Thesis 5.4 experiment: how normals are drawn (tests and inspection).
    pub fn set_normal_mode(&mut self, mode: NormalMode) {
        self.normal_mode = mode;
    }

    /// Audibility culling (see `generator::CULL_ENERGY_SHARE`): the share of each cell's
    /// energy that may be culled; 0 turns culling off.
    pub fn set_cull_energy_share(&mut self, share: f32) {
        let share = if share.is_finite() { share.clamp(0.0, 0.5) } else { 0.0 };
        self.shapes.set_cull_share(share);
    }

    /// Most collisions rendered one by one per window and cell (see
    /// `generator::RENDERED_PER_CELL_PER_S`); `u32::MAX` renders every collision.
    pub fn set_max_rendered_per_cell(&mut self, n: u32) {
        self.max_per_cell = n.max(1);
    }

    /// Rebuilds everything that depends on the sample rate (allocates: not for `process`).
    /// Lets at most `n` of the cup's modes ring, the lowest first (benchmarks of the cost per
    /// mode); takes effect at the next window.
    pub fn set_mode_limit(&mut self, n: usize) {
        self.mode_limit = n.min(MAX_MODES);
        self.cup_key = None;
    }

    pub fn set_sample_rate(&mut self, sample_rate: f32) {
        *self = Engine::new(self.settings, sample_rate, 0);
    }

    /// Back to silence with the RNG reseeded from `settings.seed`.
    pub fn reset(&mut self) {
        self.rng = Xoshiro256PlusPlus::seed_from_u64(self.settings.seed);
        for r in self.grains_ring.iter_mut().chain(self.cup_ring.iter_mut()) {
            r.iter_mut().for_each(|x| *x = 0.0);
        }
        self.clock = 0;
        self.pending.clear();
        self.pending_done = 0;
        self.sphere_radius = self.settings.grain_radius_m();
        for f in &mut self.sphere_filter {
            f.set(self.sample_rate, self.sphere_radius);
            f.reset();
        }
        self.modal.reset();
        self.diffuse.reset(self.settings.seed);
        self.limiter.reset();
        self.scene.reset(self.settings.fill);
        self.cup_key = None;
        self.gains = self.gain_targets();
        self.notes_held = 0;
        self.velocity = 0.0;
        self.modulation = 0.0;
        self.last_flow_cmd = 0.0;
        self.last_fill_setting = self.settings.fill;
        self.pour = PourState::default();
        self.stats = Stats::default();
        self.cell_collisions = [0; generator::CELLS.len()];
        self.update_cup();
    }

    /// Reseeds the random streams without silencing what sounds (a new seed from the host).
    pub fn reseed(&mut self, seed: u64) {
        self.settings.seed = seed;
        self.rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        self.diffuse.reseed(seed);
    }

    /// New settings; they take effect at the next window boundary (gains glide).
    pub fn set_settings(&mut self, settings: &Settings) {
        self.settings = settings.sanitized();
    }

    /// Starts (or re-strikes) the stream; `velocity` 0..1 scales the flow.
    pub fn note_on(&mut self, velocity: f32) {
        let v = if velocity.is_finite() {
            velocity.clamp(0.0, 1.0)
        } else {
            0.0
        };
        if v <= 0.0 {
            // MIDI convention: note-on with velocity 0 is a note-off
            self.note_off();
            return;
        }
        self.notes_held = self.notes_held.saturating_add(1);
        self.velocity = v;
    }

    pub fn note_off(&mut self) {
        self.notes_held = self.notes_held.saturating_sub(1);
    }

    /// Stops every note (host "all notes off", transport stop).
    pub fn all_notes_off(&mut self) {
        self.notes_held = 0;
    }

    /// Flow modulation 0..1 from the mod wheel or channel pressure: flow x (1 + m).
    pub fn set_modulation(&mut self, amount: f32) {
        self.modulation = if amount.is_finite() {
            amount.clamp(0.0, 1.0)
        } else {
            0.0
        };
    }

    fn gain_targets(&self) -> [f32; 3] {
        let db = |x: f32| 10f32.powf(x / 20.0);
        [
            db(self.settings.grains_level_db),
            db(self.settings.cup_level_db),
            db(self.settings.output_gain_db),
        ]
    }

    /// Commanded mass flow, kg/s.
    fn flow_command(&self) -> f32 {
        let rate = self.settings.pour_rate_g_s * 1e-3;
        match self.settings.trigger_mode {
            TriggerMode::Continuous => rate,
            TriggerMode::Midi if self.notes_held > 0 => rate * self.velocity * (1.0 + self.modulation),
            TriggerMode::Midi => 0.0,
        }
    }

    fn geometry(&self) -> Geometry {
        let s = &self.settings;
        let a = s.grain_radius_m();
        Geometry {
            cup_radius: CUP_RADIUS_M * s.cup_size,
            cup_height: CUP_HEIGHT_M * s.cup_size,
            grain_radius: a,
            // a stream a few grains wide, at least 4 mm
            stream_radius: (8.0 * a).max(0.004),
        }
    }

    fn update_cup(&mut self) {
        let s = self.settings;
        let fill = (self.scene.fill() * 500.0).round() / 500.0;
        let key = (
            s.cup_material,
            s.resolved_cup_shape(),
            s.cup_size,
            fill,
            s.grain_density(),
            s.listener_distance_m,
            s.stereo_width,
        );
        if self.cup_key == Some(key) {
            return;
        }
        self.cup_key = Some(key);
        let cup = CupState {
            material: s.cup_material,
            shape: s.resolved_cup_shape(),
            size: s.cup_size,
            fill,
            grain_density: s.grain_density(),
            grain_diameter_m: 2.0 * s.grain_radius_m(),
        };
        let max_f = (0.45 * self.sample_rate).min(20_000.0);
        let n = build_modes(&cup, max_f, &mut self.modes).min(self.mode_limit);
        let distance = self.cup_distance();
        self.modal.set_modes(&self.modes[..n], distance, s.stereo_width);
        // the diffuse resonator takes over above the highest mode (Phya 7.2)
        let params = diffuse_params(&cup, &self.modes[..n], distance);
        let modes = &self.modes[..n];
        self.diffuse.set(&params, |lo, hi| {
            modes.iter().filter(|m| m.freq_hz >= lo && m.freq_hz < hi).count()
        });
    }

    /// Listener position, m (origin: centre of the cup floor).
    fn listener(&self) -> [f32; 3] {
        let s = &self.settings;
        let th = s.listener_angle_deg.to_radians();
        [
            s.listener_distance_m * th.sin(),
            0.0,
            self.pour.pile_height_m + s.listener_distance_m * th.cos(),
        ]
    }

    fn cup_distance(&self) -> f32 {
        let s = &self.settings;
        // from the cup's centre, half-way up its wall
        let l = self.listener();
        let c = [0.0, 0.0, 0.5 * CUP_HEIGHT_M * s.cup_size];
        ((l[0] - c[0]).powi(2) + (l[1] - c[1]).powi(2) + (l[2] - c[2]).powi(2)).sqrt()
    }

    /// Control work at a window boundary: pour state, cup, collisions for this window.
    fn window(&mut self) {
        let s = self.settings;
        let flow_cmd = self.flow_command();
        if s.fill != self.last_fill_setting || (flow_cmd > 0.0 && self.last_flow_cmd <= 0.0 && !self.scene.is_active())
        {
            // "fill level at pour start": a new pour, or a new setting, sets the level
            self.scene.set_fill(s.fill);
            self.last_fill_setting = s.fill;
        }
        self.last_flow_cmd = flow_cmd;
        let grain = s.grain_material.data();
        let input = SceneInput {
            grain_radius_m: s.grain_radius_m(),
            grain_density: s.grain_density(),
            cup_size: s.cup_size,
            fall_height_m: s.fall_height_m,
            auto_fill: s.auto_fill,
        };
        self.pour = self.scene.step(&input, flow_cmd);
        if s.grain_radius_m() != self.sphere_radius {
            // the sphere-radiation filter depends only on the grain radius
            self.sphere_radius = s.grain_radius_m();
            for f in &mut self.sphere_filter {
                f.set(self.sample_rate, self.sphere_radius);
            }
        }
        self.update_cup();
        self.modal.flush_denormals();

        let geometry = self.geometry();
        let window_s = WINDOW as f32 / self.sample_rate;
        let mut rng = self.rng.clone();
        // the previous window's collisions are all rendered by now (`span`), bar rounding
        self.render_pending(self.pending.len());
        self.pending.clear();
        self.pending_done = 0;
        let mut stats = self.stats;
        let pour = self.pour;
        let normal_mode = self.normal_mode;
        let max_per_cell = self.max_per_cell;
        let params = RenderParams::new(self);
        self.pending_params = params;
        let ctx = RenderContext {
            kernels: &self.kernels,
            p: params,
        };
        let grains_ring = &mut self.grains_ring;
        let cup_ring = &mut self.cup_ring;
        let scratch = &mut self.scratch;
        let cell_collisions = &mut self.cell_collisions;
        let pending = &mut self.pending;
        let setup = GeneratorSetup {
            geometry,
            restitution: grain.restitution,
            window_s,
            normals: normal_mode,
            max_per_cell,
        };
        // the collisions each rendered one stands for (a cell's collisions share a weight, so
        // the float-to-integer conversion is made once a cell)
        let mut group = (f32::NAN, 1u64);
        let mut count = |stats: &mut Stats, cell_collisions: &mut [u64; generator::CELLS.len()], c: &Collision| {
            stats.rendered += 1;
            if c.weight.to_bits() != group.0.to_bits() {
                group = (c.weight, ((c.weight * c.weight + 0.5) as u64).max(1));
            }
            cell_collisions[c.cell] += group.1;
        };
        let physical = generate(&pour, &setup, &self.shapes, &mut rng, pending, |c| {
            // beyond the default budget (tests, inspection): render at once
            count(&mut stats, cell_collisions, c);
            ctx.render(c, grains_ring, cup_ring, scratch);
            stats.written += 1;
        });
        for c in pending.iter() {
            count(&mut stats, cell_collisions, c);
        }
        stats.grain_grain += physical[0];
        stats.grain_cup += physical[1];
        stats.collisions += physical[0] + physical[1];
        stats.culled += physical[2];
        self.stats = stats;
        self.rng = rng;
    }

    /// Renders the pending collisions up to index `upto` (they land after this window).
    fn render_pending(&mut self, upto: usize) {
        let ctx = RenderContext {
            kernels: &self.kernels,
            p: self.pending_params,
        };
        let upto = upto.min(self.pending.len());
        // every lane is written by each `prepare_into`, so one set-up serves every batch
        let mut prepared = Prepared::default();
        for batch in self.pending[self.pending_done.min(upto)..upto].chunks(BATCH) {
            ctx.prepare_into(batch, &mut prepared);
            ctx.render_batch(
                batch,
                &prepared,
                &mut self.grains_ring,
                &mut self.cup_ring,
                &mut self.scratch,
            );
            self.stats.written += batch.len() as u64;
        }
        self.pending_done = self.pending_done.max(upto);
    }

    /// Renders `outputs` (any length, including zero).
    pub fn process(&mut self, outputs: Outputs<'_>) {
        let _ftz = ftz::FlushDenormals::new();
        let Outputs { main, grains, cup } = outputs;
        let [main_l, main_r] = main;
        let [grains_l, grains_r] = grains;
        let [cup_l, cup_r] = cup;
        let n = main_l
            .len()
            .min(main_r.len())
            .min(grains_l.len())
            .min(grains_r.len())
            .min(cup_l.len())
            .min(cup_r.len());
        let targets = self.gain_targets();
        let mut i = 0;
        while i < n {
            if self.clock.is_multiple_of(WINDOW as u64) {
                self.window();
            }
            // a span never crosses a window boundary, so it never wraps around the rings
            // (their length is a power of two, a multiple of WINDOW)
            let offset = (self.clock % WINDOW as u64) as usize;
            let len = (n - i).min(WINDOW - offset);
            let span = i..i + len;
            self.span(
                &targets,
                [&mut main_l[span.clone()], &mut main_r[span.clone()]],
                [&mut grains_l[span.clone()], &mut grains_r[span.clone()]],
                [&mut cup_l[span.clone()], &mut cup_r[span]],
            );
            i += len;
            // spread the next window's collisions over this one, in proportion to time
            let share = (self.pending.len() * (offset + len)).div_ceil(WINDOW);
            self.render_pending(share);
        }
    }

    /// Renders one span inside a window: reads (and clears) the rings, runs the sphere
    /// filters, the modal bank and the diffuse resonator over the span, then the gains and
    /// the limiter sample by sample.
    fn span(&mut self, targets: &[f32; 3], main: [&mut [f32]; 2], grains: [&mut [f32]; 2], cup: [&mut [f32]; 2]) {
        let len = main[0].len();
        let start = (self.clock as usize) & self.mask;
        let range = start..start + len;
        let mut pressure = [[0.0f32; WINDOW]; 2];
        {
            let [ring_l, ring_r] = &mut self.grains_ring;
            let [p_l, p_r] = &mut pressure;
            let (ring_l, ring_r) = (&mut ring_l[range.clone()], &mut ring_r[range.clone()]);
            SphereFilter::process_pair(&mut self.sphere_filter, [ring_l, ring_r], [p_l, p_r]);
            ring_l.fill(0.0);
            ring_r.fill(0.0);
        }
        let mut total = [0.0f32; WINDOW];
        for ring in &self.cup_ring {
            for (t, f) in total.iter_mut().zip(&ring[range.clone()]) {
                *t += f;
            }
        }
        let mut modal = [[0.0f32; WINDOW]; 2];
        let mut diffuse = [[0.0f32; WINDOW]; 2];
        {
            let forces: [&[f32]; CUP_BUSES] = std::array::from_fn(|b| &self.cup_ring[b][range.clone()]);
            let [ml, mr] = &mut modal;
            self.modal.process(&forces, &mut ml[..len], &mut mr[..len]);
        }
        for ring in &mut self.cup_ring {
            ring[range.clone()].fill(0.0);
        }
        let [dl, dr] = &mut diffuse;
        self.diffuse.process(&total[..len], &mut dl[..len], &mut dr[..len]);
        let [main_l, main_r] = main;
        let [grains_l, grains_r] = grains;
        let [cup_l, cup_r] = cup;
        let coef = self.gain_coef;
        let step = |g: &mut [f32; 3]| {
            for (g, &target) in g.iter_mut().zip(targets) {
                *g += coef * (target - *g);
            }
        };
        // The smoothed gains settle on a fixed point of their step (within a few hundred
        // ulps of the target, where the step rounds away), after which every sample of a
        // span has the same gains: the loop below then has no dependency from one sample
        // to the next and compiles to packed SIMD. Either way, the same gains and the same
        // operations per sample, so the same bits.
        let mut next = self.gains;
        step(&mut next);
        let settled = next == self.gains;
        for t in 0..len {
            if !settled {
                step(&mut self.gains);
            }
            let [g_grains, g_cup, g_out] = self.gains;
            let sg = [pressure[0][t] * g_grains * g_out, pressure[1][t] * g_grains * g_out];
            let sc = [
                (modal[0][t] + diffuse[0][t]) * g_cup * g_out,
                (modal[1][t] + diffuse[1][t]) * g_cup * g_out,
            ];
            let sg = sg.map(finite_or_zero);
            let sc = sc.map(finite_or_zero);
            grains_l[t] = sg[0];
            grains_r[t] = sg[1];
            cup_l[t] = sc[0];
            cup_r[t] = sc[1];
            main_l[t] = sg[0] + sc[0];
            main_r[t] = sg[1] + sc[1];
        }
        self.limiter.process_span(main_l, main_r);
        self.clock += len as u64;
    }
}

#[inline]
fn finite_or_zero(x: f32) -> f32 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// Per-window constants for rendering collisions.
#[derive(Clone, Copy, Default)]
struct RenderParams {
    /// Mass (kg) and radius (m) of a grain.
    grain_mass_kg: f32,
    grain_radius_m: f32,
    /// Per collision kind (`CollisionKind as usize`): the contact's impulse per unit speed,
    /// m_eff (1 + e) (N s per m/s), and ln of its duration in samples at 1 m/s (PAN eq. 7).
    impulse_per_v: [f32; 2],
    ln_duration_at_1: [f32; 2],
    listener: [f32; 3],
    cup_delay: f32,
    /// Samples per metre of sound travel, fs / c.
    samples_per_m: f32,
    base: u64,
    mask: usize,
    pan_scale: f32,
}

/// Collisions whose set-up runs together, one SIMD lane each (`RenderContext::prepare`).
const BATCH: usize = 16;

/// The per-collision quantities of a batch, lane `i` for its collision `i`.
#[derive(Default)]
struct Prepared {
    /// ln of the contact duration in samples (PAN eq. 7).
    ln_duration: [f32; BATCH],
    /// Per sphere: the amplitudes of the pulse and its derivative
    /// (`accel_noise::sphere_amplitudes`).
    a0: [[f32; BATCH]; 2],
    a1: [[f32; BATCH]; 2],
    /// Gains of the left and right channel.
    pan: [[f32; BATCH]; 2],
    /// The cup force pulse's impulse times the group weight, N s.
    cup_amplitude: [f32; BATCH],
    /// Kernel rows (`PulseKernels::select_ln`, split): the duration row, and per pulse
    /// (sphere 0, sphere 1, cup) the integer sample of its time (samples into the window;
    /// retarded for the spheres, delayed for the cup), its phase cell and fraction.
    row: [i32; BATCH],
    whole: [[i32; BATCH]; 3],
    cell: [[i32; BATCH]; 3],
    frac: [[f32; BATCH]; 3],
}

struct RenderContext<'a> {
    kernels: &'a PulseKernels,
    p: RenderParams,
}

impl RenderParams {
    fn new(e: &Engine) -> Self {
        let s = &e.settings;
        let gm = s.grain_material.data();
        let mut elastic = gm.elastic;
        elastic.density = s.grain_density();
        let grain = Body::sphere(elastic, s.grain_radius_m());
        let cup = Body::plane(s.cup_material.data().elastic);
        let fs = e.sample_rate;
        // `contact` at v = 1 m/s gives the constants; both laws are powers of the speed:
        // j = m_eff (1 + e) v (seed 002 §4) and tau = tau(1) v^(-1/5) (PAN eq. 7).
        let per_kind = [&grain, &cup].map(|other| contact(&grain, other, 1.0, gm.restitution));
        RenderParams {
            grain_mass_kg: grain.mass_kg,
            grain_radius_m: grain.radius_m,
            impulse_per_v: per_kind.map(|c| c.impulse_ns),
            ln_duration_at_1: per_kind.map(|c| (c.duration_s.max(1e-12) as f64 * fs as f64).ln() as f32),
            listener: e.listener(),
            cup_delay: e.cup_distance() / SPEED_OF_SOUND * fs,
            samples_per_m: fs / SPEED_OF_SOUND,
            base: e.clock + GENERATOR_LEAD as u64,
            mask: e.mask,
            pan_scale: s.stereo_width / (CUP_RADIUS_M * s.cup_size),
        }
    }
}

impl RenderContext<'_> {
    /// Splats one collision into the ring buffers (its pulses and its cup force).
    /// `scratch` holds at least `taps + 1` samples.
    fn render(&self, c: &Collision, grains: &mut [Vec<f32>; 2], cup: &mut [Vec<f32>], scratch: &mut [f32]) {
        let prepared = self.prepare(std::slice::from_ref(c));
        self.render_batch(std::slice::from_ref(c), &prepared, grains, cup, scratch);
    }

    /// The per-collision quantities of up to `BATCH` collisions, one SIMD lane each (the
    /// AVX copy where the CPU has it; the same operations in the same order either way).
    fn prepare(&self, batch: &[Collision]) -> Prepared {
        let mut out = Prepared::default();
        self.prepare_into(batch, &mut out);
        out
    }

    /// `prepare` into `out`: every lane of it is written (lanes past the batch's end with
    /// harmless values), so `out` need not be cleared between batches.
    fn prepare_into(&self, batch: &[Collision], out: &mut Prepared) {
        #[cfg(target_arch = "x86_64")]
        if self.kernels.avx512() {
            // SAFETY: `avx512` is set only where the CPU reports it (`simd::has_avx512`).
            unsafe { self.prepare_avx512(batch, out) };
            return;
        } else if self.kernels.avx() {
            // SAFETY: `avx` is set only where the CPU reports AVX (`simd::has_avx`).
            unsafe { self.prepare_avx(batch, out) };
            return;
        }
        self.prepare_lanes(batch, out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    fn prepare_avx(&self, batch: &[Collision], out: &mut Prepared) {
        self.prepare_lanes(batch, out);
    }

    /// The AVX-512 copy: a batch's lanes are one vector.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx,fma,avx512f,avx512vl")]
    fn prepare_avx512(&self, batch: &[Collision], out: &mut Prepared) {
        self.prepare_lanes(batch, out);
    }

    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // lane loops, indexed across several arrays
    fn prepare_lanes(&self, batch: &[Collision], out: &mut Prepared) {
        // the batch as lanes (lanes past its end keep harmless zeros and unit speeds)
        let mut pos = [[0.0f32; BATCH]; 3];
        let mut nrm = [[0.0f32; BATCH]; 3];
        let (mut time, mut v0, mut ln_v0, mut weight) =
            ([0.0f32; BATCH], [1.0f32; BATCH], [0.0f32; BATCH], [0.0f32; BATCH]);
        let (mut per_v, mut ln_d1) = ([0.0f32; BATCH], [0.0f32; BATCH]);
        for (i, c) in batch.iter().take(BATCH).enumerate() {
            for j in 0..3 {
                pos[j][i] = c.position[j];
                nrm[j][i] = c.normal[j];
            }
            time[i] = c.time;
            v0[i] = c.v0;
            ln_v0[i] = c.ln_v0;
            weight[i] = c.weight;
            per_v[i] = self.p.impulse_per_v[c.kind as usize];
            ln_d1[i] = self.p.ln_duration_at_1[c.kind as usize];
        }
        let a = self.p.grain_radius_m;
        // Every step below is a loop over the lanes with no call and no branch, so that it
        // compiles to packed SIMD (a loop over lanes with everything in its body does not).
        // PAN eq. 7 and the impulse law, from the per-window constants (`RenderParams`)
        let mut impulse_ns = [0.0f32; BATCH];
        let mut dv = [0.0f32; BATCH];
        for i in 0..BATCH {
            impulse_ns[i] = per_v[i] * v0[i].max(1e-9);
            out.ln_duration[i] = ln_d1[i] - 0.2 * ln_v0[i].max(-20.7);
            out.cup_amplitude[i] = impulse_ns[i] * weight[i];
            dv[i] = impulse_ns[i] / self.p.grain_mass_kg * weight[i];
        }
        // pulse times, samples: sphere 0, sphere 1, cup
        let mut times = [[0.0f32; BATCH]; 3];
        for i in 0..BATCH {
            times[2][i] = time[i] + self.p.cup_delay;
        }
        // thesis 4.1 / 5.3: the first sphere accelerates along n, the second along -n
        // (both are computed; a grain-cup collision uses the first only)
        for (k, sign) in [1.0f32, -1.0].into_iter().enumerate() {
            let offset = sign * a;
            let mut d = [[0.0f32; BATCH]; 3];
            for j in 0..3 {
                for i in 0..BATCH {
                    d[j][i] = self.p.listener[j] - (pos[j][i] + offset * nrm[j][i]);
                }
            }
            for i in 0..BATCH {
                let r = (d[0][i] * d[0][i] + d[1][i] * d[1][i] + d[2][i] * d[2][i])
                    .sqrt()
                    .max(a * 1.01);
                let inv_r = 1.0 / r;
                let cos_theta = sign * (nrm[0][i] * d[0][i] + nrm[1][i] * d[1][i] + nrm[2][i] * d[2][i]) * inv_r;
                let (a0, a1) = sphere_amplitudes_at(a, r, inv_r, cos_theta, dv[i]);
                // retarded time t' = t - (r - a) / c (thesis eq. 4.1), in samples
                times[k][i] = time[i] + (r - a) * self.p.samples_per_m;
                out.a0[k][i] = a0;
                out.a1[k][i] = a1;
            }
        }
        // constant-power pan across the cup's width
        for i in 0..BATCH {
            let pan = (pos[1][i] * self.p.pan_scale).clamp(-1.0, 1.0);
            let (sin_th, cos_th) = fastmath::sin_cos((pan + 1.0) * std::f32::consts::FRAC_PI_4);
            out.pan[0][i] = cos_th * std::f32::consts::SQRT_2;
            out.pan[1][i] = sin_th * std::f32::consts::SQRT_2;
        }
        // the kernel rows: one duration row for all three pulses, a phase each
        for i in 0..BATCH {
            out.row[i] = self.kernels.duration_row(out.ln_duration[i]);
        }
        for k in 0..3 {
            for i in 0..BATCH {
                let t = times[k][i];
                // kept as an integer: no float-to-integer conversion when the pulse is written
                let whole = fastmath::floor_non_negative(t);
                let (cell, frac) = kernels::phase_cell(t - whole as f32);
                out.whole[k][i] = whole;
                out.cell[k][i] = cell;
                out.frac[k][i] = frac;
            }
        }
    }

    /// Writes a batch's collisions, `prepare`d, into the rings in order: the AVX copy where
    /// the CPU has it, so that the kernels' AVX pass inlines into it (`render_prepared`).
    fn render_batch(
        &self,
        batch: &[Collision],
        prepared: &Prepared,
        grains: &mut [Vec<f32>; 2],
        cup: &mut [Vec<f32>],
        scratch: &mut [f32],
    ) {
        #[cfg(target_arch = "x86_64")]
        if self.kernels.avx() {
            // SAFETY: `avx` is set only where the CPU reports AVX and FMA (`simd::has_avx`).
            unsafe { self.render_batch_avx(batch, prepared, grains, cup, scratch) };
            return;
        }
        for (i, c) in batch.iter().enumerate() {
            // SAFETY: the portable copy.
            unsafe { self.render_prepared::<false>(c, prepared, i, grains, cup, scratch) };
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx,fma")]
    fn render_batch_avx(
        &self,
        batch: &[Collision],
        prepared: &Prepared,
        grains: &mut [Vec<f32>; 2],
        cup: &mut [Vec<f32>],
        scratch: &mut [f32],
    ) {
        for (i, c) in batch.iter().enumerate() {
            // SAFETY: AVX and FMA are enabled here, and the CPU has them (`render_batch`).
            unsafe { self.render_prepared::<true>(c, prepared, i, grains, cup, scratch) };
        }
    }

    /// Writes collision `c`, lane `i` of `prepared`, into the rings; with `AVX`, with the
    /// kernels' AVX pass inlined.
    ///
    /// # Safety
    /// `AVX` only from code compiled with AVX and FMA enabled, where the CPU has them.
    #[inline(always)]
    unsafe fn render_prepared<const AVX: bool>(
        &self,
        c: &Collision,
        prepared: &Prepared,
        i: usize,
        grains: &mut [Vec<f32>; 2],
        cup: &mut [Vec<f32>],
        scratch: &mut [f32],
    ) {
        let spheres = if c.kind == CollisionKind::GrainGrain { 2 } else { 1 };
        let row = prepared.row[i] as usize;
        let pulse = |k: usize| {
            self.kernels
                .pulse(row, prepared.cell[k][i] as usize, prepared.frac[k][i])
        };
        let amplitudes = |k: usize| (prepared.a0[k][i], prepared.a1[k][i]);
        // Both spheres' pulses go into one pass (they are microseconds apart and usually
        // share their kernel rows), panned into the two channels. `first` is the earlier
        // pulse's sample; the offsets are from it, so one is 0, and both are when equal.
        let (w0, w1) = (prepared.whole[0][i], prepared.whole[1][i]);
        let first = if spheres == 2 { w0.min(w1) } else { w0 };
        let max_offset = scratch.len() - self.kernels.taps();
        let offset = |w: i32| ((w - first) as usize).min(max_offset);
        let (o0, p0) = (offset(w0), pulse(0));
        let (o1, p1) = if spheres == 2 { (offset(w1), pulse(1)) } else { (0, p0) };
        let used = if spheres == 2 {
            (o0 + p0.taps()).max(o1 + p1.taps())
        } else {
            o0 + p0.taps()
        };
        let pan_gain = [prepared.pan[0][i], prepared.pan[1][i]];
        let start = self.ring_start(first);
        let (t0, t1) = (amplitudes(0), amplitudes(1));
        if o0 == o1 && start + used <= grains[0].len().min(grains[1].len()) {
            // the common case: one pass from the kernel rows into both channels
            let [gl, gr] = grains;
            let dst = [&mut gl[start..start + used], &mut gr[start..start + used]];
            // SAFETY: AVX as the caller says.
            unsafe {
                if spheres == 1 {
                    self.kernels.add_to_with::<2, AVX>(p0, t0, dst, pan_gain);
                } else {
                    self.kernels.add_pair_to_with::<2, AVX>(p0, t0, p1, t1, dst, pan_gain);
                }
            }
        } else {
            // pulses on different samples, or a kernel that wraps around the ring: build
            // the pulse in `scratch`, then add it (`first` is the earlier pulse's sample,
            // so one offset is 0, and both are when equal)
            let scratch_used = &mut scratch[..used];
            scratch_used.fill(0.0);
            if spheres == 1 {
                self.kernels.accumulate(p0, t0.0, t0.1, scratch_used);
            } else if o0 == o1 {
                self.kernels
                    .accumulate_pair(p0, t0.0, t0.1, p1, t1.0, t1.1, scratch_used);
            } else {
                self.kernels.accumulate(p0, t0.0, t0.1, &mut scratch_used[o0..]);
                self.kernels.accumulate(p1, t1.0, t1.1, &mut scratch_used[o1..]);
            }
            for (ring, g) in grains.iter_mut().zip(pan_gain) {
                self.add_into_ring(ring, start, scratch_used, g);
            }
        }
        if c.kind == CollisionKind::GrainCup {
            let impulse = prepared.cup_amplitude[i];
            let pulse = pulse(2);
            let start = self.ring_start(prepared.whole[2][i]);
            let ring = &mut cup[c.bus];
            if start + pulse.taps() <= ring.len() {
                let dst = &mut ring[start..start + pulse.taps()];
                // SAFETY: AVX as the caller says.
                unsafe { self.kernels.add_g0_to_with::<AVX>(pulse, impulse, dst) };
            } else {
                let scratch = &mut scratch[..pulse.taps()];
                scratch.fill(0.0);
                self.kernels.accumulate(pulse, impulse, 0.0, scratch);
                self.add_into_ring(ring, start, scratch, 1.0);
            }
        }
    }

    /// Ring index of the first kernel tap for a pulse whose integer sample is `whole`.
    #[inline]
    fn ring_start(&self, whole: i32) -> usize {
        ((self.p.base + whole as u64 - HALF as u64) as usize) & self.p.mask
    }

    /// `ring[(start + k) mod len] += gain * src[k]`: the part before the ring's end, then
    /// the part that wraps around to its start (`src` is never longer than the ring).
    #[inline]
    fn add_into_ring(&self, ring: &mut [f32], start: usize, src: &[f32], gain: f32) {
        let start = start & self.p.mask;
        let before_end = (ring.len() - start).min(src.len());
        let (head, wrapped) = src.split_at(before_end);
        let avx = self.kernels.avx();
        simd::add_scaled(&mut ring[start..start + before_end], head, gain, avx);
        simd::add_scaled(&mut ring[..wrapped.len()], wrapped, gain, avx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn batched_collision_set_up_is_the_same_bits_in_every_copy() {
        let mut e = Engine::new(Settings::default(), 48_000.0, 64);
        e.note_on(1.0);
        let params = RenderParams::new(&e);
        let best = RenderContext {
            kernels: &e.kernels,
            p: params,
        };
        let mut avx_kernels = e.kernels.clone();
        avx_kernels.force_avx();
        let avx = RenderContext {
            kernels: &avx_kernels,
            p: params,
        };
        let mut portable_kernels = e.kernels.clone();
        portable_kernels.force_portable();
        let portable = RenderContext {
            kernels: &portable_kernels,
            p: params,
        };
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        let batch: Vec<Collision> = (0..BATCH)
            .map(|i| Collision {
                time: rng.random_range(0.0..128.0),
                kind: if i % 3 == 0 {
                    CollisionKind::GrainCup
                } else {
                    CollisionKind::GrainGrain
                },
                cell: 0,
                bus: 0,
                position: [0.0; 3].map(|_| rng.random_range(-0.04..0.04)),
                normal: [0.6, 0.0, 0.8],
                v0: rng.random_range(0.01..3.0),
                ln_v0: 0.0,
                weight: rng.random_range(1.0..4.0),
            })
            .collect();
        let (a, b, c) = (best.prepare(&batch), avx.prepare(&batch), portable.prepare(&batch));
        let bits = |p: &Prepared| {
            let mut v: Vec<u32> = Vec::new();
            for x in [p.ln_duration, p.cup_amplitude] {
                v.extend(x.map(f32::to_bits));
            }
            for k in 0..2 {
                for x in [p.a0[k], p.a1[k], p.pan[k]] {
                    v.extend(x.map(f32::to_bits));
                }
            }
            for k in 0..3 {
                v.extend(p.whole[k].map(|w| w as u32));
                v.extend(p.frac[k].map(f32::to_bits));
                v.extend(p.cell[k].map(|c| c as u32));
            }
            v.extend(p.row.map(|r| r as u32));
            v
        };
        assert_eq!(bits(&a), bits(&c));
        assert_eq!(bits(&b), bits(&c));
        assert!(a.a0[0].iter().any(|&x| x != 0.0), "the set-up computed nothing");
    }

    #[test]
    fn rendered_batches_are_the_same_bits_in_every_copy() {
        let mut e = Engine::new(Settings::default(), 48_000.0, 64);
        e.note_on(1.0);
        let mut params = RenderParams::new(&e);
        // near the rings' end, so that some pulses wrap around it
        params.base = e.grains_ring[0].len() as u64 - 60;
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(9);
        let batch: Vec<Collision> = (0..BATCH)
            .map(|i| {
                let v0: f32 = rng.random_range(0.01..3.0);
                let grain_cup = i % 3 == 0;
                Collision {
                    time: rng.random_range(0.0..128.0),
                    kind: if grain_cup {
                        CollisionKind::GrainCup
                    } else {
                        CollisionKind::GrainGrain
                    },
                    cell: 0,
                    bus: if grain_cup { rng.random_range(0..CUP_BUSES) } else { 0 },
                    position: [0.0; 3].map(|_| rng.random_range(-0.04..0.04)),
                    normal: [0.6, 0.0, 0.8],
                    v0,
                    ln_v0: v0.ln(),
                    weight: rng.random_range(1.0..4.0),
                }
            })
            .collect();
        let render = |kernels: &PulseKernels| {
            let ctx = RenderContext { kernels, p: params };
            let (mut grains, mut cup, mut scratch) = (e.grains_ring.clone(), e.cup_ring.clone(), e.scratch.clone());
            ctx.render_batch(&batch, &ctx.prepare(&batch), &mut grains, &mut cup, &mut scratch);
            grains
                .iter()
                .chain(&cup)
                .flatten()
                .map(|x| x.to_bits())
                .collect::<Vec<u32>>()
        };
        let mut avx = e.kernels.clone();
        avx.force_avx();
        let mut portable = e.kernels.clone();
        portable.force_portable();
        portable.force_fused();
        let best = render(&e.kernels);
        assert_eq!(best, render(&avx));
        assert_eq!(best, render(&portable));
        let ring = e.grains_ring[0].len();
        let written = |range: std::ops::Range<usize>| best[range].iter().any(|&x| x != 0);
        assert!(
            written(0..60) && written(ring - 60..ring),
            "the pulses should wrap around the ring"
        );
    }
}

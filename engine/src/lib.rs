//! The Granary synthesis engine: a plain library, no plugin framework, GUI or command line
//! (the crate boundary keeps it so). The plugin (`granary`) and the command line
//! (`granary-cli`) both drive this engine.
//!
//! `Engine::new(settings, sample_rate, max_block)`, then `note_on` / `note_off` /
//! `set_modulation` / `set_settings` between calls to `process` (or typed, timestamped
//! events through `feed::process`, which the plugin and the offline renders use). Everything is allocated in
//! `new` (and `set_sample_rate`); `process` never allocates, locks or does I/O.
//!
//! Determinism: the output depends only on the seed, the settings and the events' sample
//! times, never on how the host cuts blocks or on what came before the pour.
//! - A pour restarts (`Engine::restart`) at the sample where the flow is turned on (a note,
//!   or continuous mode's rate) while the previous pour has gone quiet (nothing in the air,
//!   the pile settled): the random streams are reseeded from the seed, the pile goes back to
//!   the `fill` setting, the gains jump to their settings, and the window grid starts at that
//!   sample. So idle time, blocks, resets or state loads before a note change nothing, and
//!   notes sent early by k samples give the same output k samples earlier.
//! - Control work (pour state, collision generation, cup updates) happens at the window
//!   boundaries of that grid, and every collision is written into ring buffers at its own
//!   absolute time. The spout's flow changes at the sample of the event that changes it
//!   (`scene::PourScene::set_command`); the gains glide from the sample of a settings change;
//!   the cup and grains read other settings at the next window boundary.
//!
//! Signal flow (DESIGN.md): generator -> Hertz contact -> (acceleration noise of the
//! spheres -> "grains" stem) + (contact force -> modal bank + diffuse -> "cup" stem) ->
//! mix -> look-ahead limiter -> main.

pub mod base;
pub mod control;
pub mod derived;
pub mod feed;
pub mod generator;
pub mod impact;
pub mod mix;
pub mod pour;
pub mod render;
pub mod resonators;
pub mod statistics;
pub use granary_fft as fft;
#[cfg(test)]
mod stages;

use crate::base::materials::{PACKING_FRACTION, SPEED_OF_SOUND};
use crate::base::window::{self, Collision, CollisionKind, WINDOW};
use crate::base::{ftz, materials, simd};
use crate::control::choices::{CupShape, Gesture};
use crate::control::performance::{Performance, Press};
use crate::derived::cups;
use crate::derived::cups::{CupState, CUP_BUSES, SURFACE_BUS};
use crate::derived::Derived;
use crate::generator::{generate, CellStatistics, GeneratorSetup, Geometry, GroupMean, NormalMode};
use crate::impact::accel_noise::SphereFilter;
use crate::impact::batch::{Prepared, RenderContext, RenderParams, BATCH};
use crate::impact::collision;
use crate::impact::foot::FootPush;
use crate::impact::kernels::PulseKernels;
use crate::impact::push::{self, GroupPush, MEAN_PUSH_LEN};
use crate::mix::{Mix, Stems};
use crate::pour::gesture::{GestureInput, GestureState, GestureView};
use crate::pour::scene::{PourScene, PourState, SceneInput};
use crate::pour::{gesture, stream};
use crate::resonators::body::RigidBody;
use crate::resonators::cup::{Air, CupResonator};
use crate::resonators::modal::Mode;
use crate::resonators::plate::{PlateBank, PlateMode, MAX_PLATE_MODES};
use crate::resonators::sliding::Sliders;
use crate::resonators::surface::{Radiation, RadiationKey, G_PER_WINDOW};
use crate::statistics::bank;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

pub use control::choices::{PourTarget, Quality, Statistics, TriggerMode};
pub use control::performance::{key_aim, AIM_KEYS};
pub use control::settings::{limits, Settings};

/// Output buffers for one call of `process`; all slices have the same length.
pub struct Outputs<'a> {
    pub main: [&'a mut [f32]; 2],
    pub grains: [&'a mut [f32]; 2],
    pub cup: [&'a mut [f32]; 2],
    /// The surface stem (the ground's own sound); `None` if the caller does not want it
    /// (it is in `main` either way).
    pub surface: Option<[&'a mut [f32]; 2]>,
    /// The friction stem (sliding contacts' own sound: stirring, avalanches, sliding grains);
    /// `None` if the caller does not want it (it is in `main` either way).
    pub friction: Option<[&'a mut [f32]; 2]>,
}

impl Outputs<'_> {
    /// The samples every output holds: the shortest slice's length.
    pub fn len(&self) -> usize {
        let stems = self.surface.iter().chain(&self.friction);
        [&self.main, &self.grains, &self.cup]
            .into_iter()
            .chain(stems)
            .flat_map(|[l, r]| [l.len(), r.len()])
            .min()
            .unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Samples `r` of every output.
    pub fn slice(&mut self, r: std::ops::Range<usize>) -> Outputs<'_> {
        fn pair<'b>([l, right]: &'b mut [&mut [f32]; 2], r: &std::ops::Range<usize>) -> [&'b mut [f32]; 2] {
            [&mut l[r.clone()], &mut right[r.clone()]]
        }
        Outputs {
            main: pair(&mut self.main, &r),
            grains: pair(&mut self.grains, &r),
            cup: pair(&mut self.cup, &r),
            surface: self.surface.as_mut().map(|p| pair(p, &r)),
            friction: self.friction.as_mut().map(|p| pair(p, &r)),
        }
    }
}

/// Counters since the last reset.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// Physical collisions generated (merged ones counted individually).
    pub collisions: u64,
    pub grain_grain: u64,
    pub grain_cup: u64,
    pub grain_surface: u64,
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
pub use impact::GENERATOR_LEAD;
/// Room for one window's rendered collisions at the default budget (more are rendered at
/// once, when they are generated).
const PENDING: usize = window::CELLS.len() * generator::MAX_RENDERED_PER_CELL as usize;

/// Collisions that can wait to be injected (`Engine::inject`) in one window, as built: 64
/// (tests and inspection); an offline render of logged contacts makes room for its busiest
/// window first (`Engine::reserve_injections`).
pub const INJECT_CAPACITY: usize = 64;

pub struct Engine {
    sample_rate: f32,
    settings: Settings,
    kernels: PulseKernels,
    scene: PourScene,
    rng: Xoshiro256PlusPlus,
    grains_ring: [Vec<f32>; 2],
    /// The cup's force buses (`CUP_BUSES`), then the surface's (`SURFACE_BUS`).
    cup_ring: Vec<Vec<f32>>,
    /// From the surface's force to its sound at the listener (`surface`), and its output
    /// for the current window (computed at the window's start, `window`).
    radiation: Radiation,
    /// A plate surface's modes (`resonators::plate`; none for a half-space), and the time its
    /// sound takes to reach the listener, s (its force is written that late).
    plate: PlateBank,
    /// The cup's push through its foot on a plate (`impact::foot`).
    foot: FootPush,
    /// The cup as one rigid body jolted by a shaken bed's slams (`resonators::body`): its
    /// acceleration, ringed after the cup's travel time as the cup's forces are, and its
    /// sound over the current window (into the Cup stem).
    body: RigidBody,
    body_on: bool,
    body_ring: Vec<f32>,
    body_sound: [f32; WINDOW],
    /// A span's buffers (`span`).
    span_buffers: SpanBuffers,
    plate_dc: resonators::modal::DcBlocker,
    plate_delay_s: f32,
    ground: [f32; WINDOW],
    /// One collision's kernels, before they are panned into the rings.
    scratch: Vec<f32>,
    /// The collisions of the next window, rendered a share per span (`GENERATOR_LEAD`);
    /// `pending_done` of them are rendered, with `pending_params`.
    pending: Vec<Collision>,
    pending_done: usize,
    pending_params: RenderParams,
    /// Collisions for the next window from `inject` (tests and inspection).
    injected: Vec<Collision>,
    mask: usize,
    /// Sample clock since the pour started (`restart`) or the engine was reset.
    clock: u64,
    sphere_filter: [SphereFilter; 2],
    /// Grain radius the sphere filters are set for, m.
    sphere_radius: f32,
    /// What the settings fix (`derive`, when they change): the stage-2 numbers, the
    /// collision constants (placed each window, `render_params`), the surface filter's key,
    /// the sliding pairs, the cells' statistics and the stream's time scales.
    derived: Derived,
    constants: collision::Constants,
    radiation_key: RadiationKey,
    statistics: CellStatistics,
    stream: stream::StreamParams,
    /// The shapes of a grouped cell's mean push at the sample rate (`push::MeanPush`).
    mean_push: push::MeanPush,
    /// The cup's modes and diffuse field (`resonators::cup`).
    cup: CupResonator,
    /// The stems' gains and the main output's limiter.
    mix: Mix,
    /// The last flow the spout was opened to, kg/s (the stream's time scales follow it).
    stream_flow: f32,
    last_fill_setting: f32,
    /// The clock at the next window boundary (`WINDOW` apart from the pour's start on).
    next_window: u64,
    /// True from a pour's start (`restart`) until its first sample is rendered: settings that
    /// arrive then (a state a host loads right after activation) are the pour's own, and it
    /// starts again with them, as a new engine made with them would.
    pristine: bool,
    pour: PourState,
    normal_mode: NormalMode,
    max_per_cell: u32,
    /// The host says it renders offline (a bounce, `granary render`): `Quality::Auto` is
    /// reference then.
    offline: bool,
    /// The pour-independent parts of the generator's cell PDFs, and the culling share.
    shapes: generator::Shapes,
    stats: Stats,
    /// Physical collisions per generator cell (`window::CELLS`) since the last reset,
    /// for the editor's scene view (read-only telemetry; rendering does not use it).
    cell_collisions: [u64; window::CELLS.len()],
    /// What one mean-push unit of a grouped cell's draws pushes on each cup bus, measured
    /// over the last windows (`GroupPush`, `add_group_means`); empty at a reset and at a
    /// pour's start.
    group_push: GroupPush,
    /// The bank's lookup the generator draws from (`statistics` = bank), kept while what it
    /// depends on (`CellStatistics::lookup_key`: the selection, the fill's step) stays.
    bank_cache: Option<((bank::Selection, u32), bank::Lookup)>,
    /// The notes, the modulation and the keyswitched gesture (`control::performance`).
    performance: Performance,
    /// The gestures' mechanics (`gesture`); an avalanche asked for (`choices::AVALANCHE_KEY`).
    gestures: GestureState,
    avalanche_request: bool,
    /// A stir, shake or tilt is being played (its intensity above 0).
    gesture_playing: bool,
    /// The gestures' sliding contacts, as sound (`sliding`).
    sliders: Sliders,
}

impl Engine {
    /// Builds an engine. `max_block` is accepted for API symmetry with hosts; the engine
    /// renders any block length without allocating. Its hot loops run in the copy for the
    /// fastest instruction set the CPU has, asked here, once (`simd::Isa::detect`).
    pub fn new(settings: Settings, sample_rate: f32, max_block: usize) -> Self {
        Engine::with_isa(settings, sample_rate, max_block, simd::Isa::detect())
    }

    /// `new`, with the hot loops in the copy for `isa` (tests compare the copies).
    pub fn with_isa(settings: Settings, sample_rate: f32, _max_block: usize, isa: simd::Isa) -> Self {
        // the collision bank now: `process` must not be the first to touch it (a host may
        // switch `statistics` to the bank at any time)
        bank::shipped();
        Engine::build(settings, sample_rate, isa)
    }

    /// An engine for an offline render (`render::Renderer`: `granary render`, the tests),
    /// as `new` but for the collision databank: parsed only if `settings` draw from it
    /// (`statistics` = bank). The shipped bank is 18 MB of JSON, about 0.2 s to parse,
    /// which was a quarter of a minute-long render of a preset on the model. A later
    /// `set_settings` to the bank parses it then, on the calling thread (allocating): a
    /// live host's engine is built with `new`.
    pub fn for_render(settings: Settings, sample_rate: f32, _max_block: usize) -> Self {
        if settings.statistics == Statistics::Bank {
            bank::shipped();
        }
        Engine::build(settings, sample_rate, simd::Isa::detect())
    }

    fn build(settings: Settings, sample_rate: f32, isa: simd::Isa) -> Self {
        let sample_rate = if sample_rate.is_finite() {
            sample_rate.clamp(8_000.0, 768_000.0)
        } else {
            48_000.0
        };
        let settings = settings.sanitized();
        // parse the cup models and build the generator's tables now: `process` must not be
        // the first to touch them
        cups::library();
        generator::warm_tables();
        let kernels = PulseKernels::new(sample_rate, isa);
        // the two spheres of a pair are at most 2 radii (28 mm for the largest grains) apart
        let scratch_len = kernels.taps() + (0.03 / SPEED_OF_SOUND * sample_rate).ceil() as usize + 2;
        let max_delay = (limits::LISTENER_DISTANCE_M.1 * 1.2 / SPEED_OF_SOUND * sample_rate) as usize;
        // room for the latest pulse, or a window's mean push smoothed (`push::MeanPush`)
        let reach = kernels.taps().max(MEAN_PUSH_LEN - WINDOW);
        let ring = (GENERATOR_LEAD + WINDOW + max_delay + reach + 2).next_power_of_two();
        let window_s = WINDOW as f32 / sample_rate;
        let mut e = Engine {
            sample_rate,
            settings,
            kernels,
            scene: PourScene::new(window_s),
            rng: Xoshiro256PlusPlus::seed_from_u64(settings.seed),
            grains_ring: [vec![0.0; ring], vec![0.0; ring]],
            cup_ring: vec![vec![0.0; ring]; CUP_BUSES + 1],
            radiation: Radiation::new(sample_rate, isa),
            plate: PlateBank::new(sample_rate),
            foot: FootPush::new(sample_rate, settings.seed),
            body: RigidBody::new(sample_rate),
            body_on: true,
            body_ring: vec![0.0; ring],
            body_sound: [0.0; WINDOW],
            span_buffers: SpanBuffers::default(),
            plate_dc: resonators::modal::DcBlocker::new(sample_rate),
            plate_delay_s: 0.0,
            ground: [0.0; WINDOW],
            scratch: vec![0.0; scratch_len],
            pending: Vec::with_capacity(PENDING),
            pending_done: 0,
            pending_params: RenderParams::default(),
            injected: Vec::with_capacity(INJECT_CAPACITY),
            mask: ring - 1,
            clock: 0,
            sphere_filter: [SphereFilter::new(sample_rate, settings.radiation_radius_m()); 2],
            sphere_radius: settings.grain_radius_m(),
            derived: Derived::new(&settings),
            constants: collision::Constants::default(),
            radiation_key: RadiationKey::new(settings.surface_material, 0.0, 0.0),
            statistics: CellStatistics::Model,
            stream: stream::StreamParams::default(),
            mean_push: push::MeanPush::new(sample_rate),
            cup: CupResonator::new(sample_rate, settings.seed, isa),
            mix: Mix::new(sample_rate, LIMITER_CEILING),
            performance: Performance::default(),
            stream_flow: 0.0,
            last_fill_setting: settings.fill,
            next_window: 0,
            pristine: false,
            pour: PourState::default(),
            normal_mode: NormalMode::Physical,
            max_per_cell: generator::max_rendered_per_cell(sample_rate),
            offline: false,
            shapes: generator::Shapes::new(generator::CULL_ENERGY_SHARE, isa),
            stats: Stats::default(),
            cell_collisions: [0; window::CELLS.len()],
            group_push: GroupPush::default(),
            bank_cache: None,
            gestures: GestureState::default(),
            avalanche_request: false,
            gesture_playing: false,
            sliders: Sliders::new(
                sample_rate,
                settings.seed,
                settings.grain_material,
                settings.cup_material,
            ),
        };
        e.derive();
        e.reset();
        e
    }

    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The limiter's gain on the last sample of the main output, 0..=1 (1: not limiting).
    pub fn limiter_gain(&self) -> f32 {
        self.mix.limiter().gain()
    }

    /// Latency of the main output (the limiter's look-ahead), samples.
    pub fn latency_samples(&self) -> usize {
        self.mix.limiter().latency()
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Collisions per generator cell (`window::CELLS`) since the last reset, culled ones
    /// excluded; a merged collision counts as its group size (weight squared, rounded).
    pub fn cell_collisions(&self) -> &[u64; window::CELLS.len()] {
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

    /// The resonances of the air above the grains, as they stand (`resonators::air`).
    pub fn air_modes(&self) -> &[resonators::air::AirMode] {
        self.cup.air_modes()
    }

    /// The cup's modes that ring.
    pub fn modes(&self) -> &[Mode] {
        self.cup.modes()
    }

    /// The surface's plate modes that ring (none for a half-space: `resonators::plate`).
    pub fn plate_modes(&self) -> &[PlateMode] {
        self.plate.modes()
    }

    /// The cut-off of the cup's push through its foot onto a plate, Hz: the cup's lowest mode
    /// (`impact::foot`).
    pub fn foot_cutoff_hz(&self) -> f32 {
        self.foot.cutoff_hz()
    }

    /// Samples per generator window.
    pub fn window_len(&self) -> usize {
        WINDOW
    }

    /// Samples until the next window boundary (where the cup and the collisions read the
    /// settings).
    pub fn samples_to_window(&self) -> usize {
        (self.next_window - self.clock) as usize
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

    /// Whether the host says it renders offline (nice-plug's process mode; `granary render`
    /// always does, Ardour 7's export does not): with `quality` = auto the engine renders at
    /// reference quality then. The default quality, realtime, does not depend on it. Takes
    /// effect at the next window; allocation-free.
    pub fn set_offline(&mut self, offline: bool) {
        self.offline = offline;
    }

    /// Whether this engine renders every collision one by one now (`Quality`).
    pub fn is_reference(&self) -> bool {
        self.settings.quality.is_reference(self.offline)
    }

    /// Renders `collision` in the next window as if the generator had made it (after that
    /// window's own collisions): its `time` counts from `GENERATOR_LEAD` samples after the
    /// window's boundary. For tests, inspection and logged contacts (`logged`): a known
    /// collision through the whole engine. Allocation-free; returns false, and drops it, when
    /// its room is full (`INJECT_CAPACITY`, or what `reserve_injections` made) or it is not one
    /// the generator could make
    /// (time outside the window, cell or bus out of range, a quantity not finite).
    pub fn inject(&mut self, collision: Collision) -> bool {
        let c = &collision;
        let finite = c.position.iter().chain(&c.normal).all(|x| x.is_finite())
            && [c.v0, c.ln_v0, c.weight, c.bed_m, c.bed_weight]
                .iter()
                .all(|x| x.is_finite())
            && c.bed_m >= 0.0
            && c.bed_weight >= 0.0;
        let valid =
            finite && (0.0..WINDOW as f32).contains(&c.time) && c.cell < window::CELLS.len() && c.bus <= SURFACE_BUS;
        if !valid || self.injected.len() == self.injected.capacity() {
            return false;
        }
        self.injected.push(collision);
        // the surface sounds from the first contact, as when a pour starts (`restart`): a
        // contact render never starts one, and its filter would otherwise still be being
        // built a little every window (up to 0.6 s on soil)
        self.build_radiation(true);
        true
    }

    /// Makes room for `n` collisions waiting to be injected in one window (`inject`), beyond
    /// `INJECT_CAPACITY`. Allocates: never from `process`; offline renders of logged contacts
    /// (`render::Renderer::contacts`) call it once, before rendering.
    pub fn reserve_injections(&mut self, n: usize) {
        self.injected.reserve(n.saturating_sub(self.injected.len()));
    }

    /// The constants of the last window's collisions (`collision::physics`), for tests and
    /// inspection: with `inject`, what `collision::render_one` needs to render a collision
    /// as the engine did.
    pub fn collision_constants(&self) -> collision::Constants {
        self.pending_params.c
    }

    /// Lets at most `n` of the cup's modes ring, the lowest first (benchmarks of the cost per
    /// mode); takes effect at the next window.
    pub fn set_mode_limit(&mut self, n: usize) {
        self.cup.set_mode_limit(n);
    }

    /// Lets the air in the cup resonate or not (on when built; `resonators::air`): the air's
    /// checks hear a render without it beside one with it.
    pub fn set_air(&mut self, on: bool) {
        self.cup.set_air(on);
    }

    /// Lets the cup jolt as one body when a shaken bed slams it, or not (on when built;
    /// `resonators::body`): the jolt's checks hear a render without it beside one with it.
    pub fn set_body(&mut self, on: bool) {
        self.body_on = on;
    }

    /// Rebuilds everything that depends on the sample rate (allocates: not for `process`).
    pub fn set_sample_rate(&mut self, sample_rate: f32) {
        *self = Engine::with_isa(self.settings, sample_rate, 0, self.kernels.isa());
    }

    /// Back to silence with the RNG reseeded from `settings.seed` (and, in continuous mode,
    /// a pour started at once).
    pub fn reset(&mut self) {
        self.rng = Xoshiro256PlusPlus::seed_from_u64(self.settings.seed);
        for r in self.grains_ring.iter_mut().chain(self.cup_ring.iter_mut()) {
            r.iter_mut().for_each(|x| *x = 0.0);
        }
        self.clock = 0;
        self.next_window = 0;
        self.pending.clear();
        self.pending_done = 0;
        self.injected.clear();
        self.sphere_radius = self.derived.radiation_radius_m;
        for f in &mut self.sphere_filter {
            f.set(self.sample_rate, self.sphere_radius);
            f.reset();
        }
        self.cup.reset(self.settings.seed);
        self.scene.reset(self.settings.fill, self.settings.seed);
        self.mix.reset(self.derived.gains);
        self.performance = Performance::default();
        self.stream_flow = 0.0;
        self.stream = self.stream_params();
        self.last_fill_setting = self.settings.fill;
        self.pour = PourState::default();
        self.stats = Stats::default();
        self.cell_collisions = [0; window::CELLS.len()];
        self.group_push = GroupPush::default();
        self.gesture_playing = false;
        self.reset_gestures();
        self.update_cup();
        self.radiation.clear();
        self.plate.reset();
        self.plate_dc.reset();
        self.foot.reset(self.settings.seed);
        self.body.reset();
        self.body_ring.iter_mut().for_each(|x| *x = 0.0);
        self.body_sound = [0.0; WINDOW];
        self.ground = [0.0; WINDOW];
        // the surface's filter is built while the engine idles (a little every window) and
        // finished at the latest when a pour starts (`restart`): a new engine is quick to make;
        // a plate has its modes instead
        if self.plate.is_empty() {
            self.radiation.set(self.radiation_key);
        }
        self.flow_changed();
    }

    /// Starts a pour at this sample (see the crate's "Determinism"): what the previous
    /// pour left in the rings rings on, the rest is as in a new engine. The collisions
    /// generated for the current window are rendered first, so none is lost.
    fn restart(&mut self) {
        self.render_pending(self.pending.len());
        // The rings are turned so that this sample is their index 0 and the clock starts
        // again from 0, as in a new engine: where a ring wraps never depends on when the
        // pour starts (a pulse cut by the wrap is added in two pieces, which can round
        // differently).
        let read = self.clock as usize & self.mask;
        for ring in self.grains_ring.iter_mut().chain(self.cup_ring.iter_mut()) {
            ring.rotate_left(read);
        }
        self.body_ring.rotate_left(read);
        self.clock = 0;
        self.rng = Xoshiro256PlusPlus::seed_from_u64(self.settings.seed);
        self.cup.reseed(self.settings.seed);
        self.foot.reseed(self.settings.seed);
        self.scene.reset(self.settings.fill, self.settings.seed);
        self.last_fill_setting = self.settings.fill;
        self.mix.restart(self.derived.gains);
        self.reset_gestures();
        // the grouped cells' running mean pushes start afresh, as in a new engine
        self.group_push = GroupPush::default();
        // the cup is rebuilt at the pour's first window, from its own pile (the listener's
        // distance to the cup counts from the pile's top)
        self.cup.rebuild();
        // the surface's filter as a new engine would have it
        self.build_radiation(true);
        self.next_window = self.clock;
        self.pristine = true;
    }

    /// `restart` for a gesture: the grains the cup holds stay (a stir after a pour stirs what
    /// was poured; a new engine holds the `fill` setting's).
    fn restart_keeping_grains(&mut self) {
        let fill = self.scene.fill();
        self.restart();
        self.scene.set_fill(fill);
        self.gestures.start();
    }

    /// Hands a new flow command to the scene at this sample, restarting the pour if the
    /// spout opens after the last pour went quiet.
    fn flow_changed(&mut self) {
        // a stir, shake or tilt that starts while all is quiet starts afresh, as a pour does
        let playing = self.gesture() != Gesture::Pour && self.gesture_intensity() > 0.0;
        if playing && !self.gesture_playing && self.is_quiet() {
            self.restart_keeping_grains();
        }
        self.gesture_playing = playing;
        let cmd = self.flow_command();
        let old = self.scene.command();
        if cmd == old {
            return;
        }
        if cmd > 0.0 {
            self.stream_flow = cmd;
        }
        self.stream = self.stream_params();
        self.scene.set_stream(self.stream);
        if cmd > 0.0 && old <= 0.0 && !self.scene.is_active() {
            self.restart();
            self.scene.set_command(0.0, cmd);
        } else {
            // seconds since the current window's start (a full window at its end)
            let elapsed = WINDOW - self.samples_to_window();
            self.scene.set_command(elapsed as f32 / self.sample_rate, cmd);
        }
    }

    /// Reseeds the random streams without silencing what sounds (a new seed from the host).
    pub fn reseed(&mut self, seed: u64) {
        self.settings.seed = seed;
        self.rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        self.cup.reseed(seed);
        self.foot.reseed(seed);
    }

    /// New settings, from this sample: the flow (pour rate, trigger mode) changes here, the
    /// gains glide from here, the rest applies at the next window boundary. A new seed
    /// reseeds the random streams (`reseed`).
    pub fn set_settings(&mut self, settings: &Settings) {
        let settings = settings.sanitized();
        if settings.seed != self.settings.seed {
            self.reseed(settings.seed);
        }
        let changed = settings != self.settings;
        self.settings = settings;
        if changed {
            self.derive();
        }
        if changed && self.pristine && (self.scene.command() > 0.0 || self.gesture_playing) {
            // nothing of this pour is heard yet: start it with these settings
            self.restart();
            self.scene.set_command(0.0, self.flow_command());
            return;
        }
        self.flow_changed();
    }

    /// Starts (or re-strikes) the stream; `velocity` 0..1 scales the flow, and a `key` in
    /// `AIM_KEYS` sets where it lands (`aim`) while it pours; other keys pour at the `aim`
    /// parameter.
    pub fn note_on(&mut self, velocity: f32, key: u8) {
        match self.performance.press(velocity, key) {
            Press::Avalanche => {
                if self.is_quiet() {
                    self.restart_keeping_grains();
                }
                self.avalanche_request = true;
            }
            Press::Release | Press::Keyswitch | Press::Note => self.flow_changed(),
        }
    }

    /// Where the stream lands, 0 (the axis) .. 1 (the wall): the last note's key, or the
    /// `aim` parameter.
    pub fn aim(&self) -> f32 {
        self.performance.aim(&self.settings)
    }

    /// The stream's time scales for the settings and the last flow the spout opened to.
    fn stream_params(&self) -> stream::StreamParams {
        let s = &self.settings;
        let flow = if self.stream_flow > 0.0 {
            self.stream_flow
        } else {
            s.pour_rate_g_s * 1e-3
        };
        stream::StreamParams::new(
            s.flow_variation,
            flow,
            &s.grain_material.data(),
            s.grain_radius_m(),
            s.grain_density(),
        )
    }

    /// The note `key` ends: `note_off`, unless the key is a keyswitch (`choices::GESTURE_KEYS`,
    /// `choices::AVALANCHE_KEY`), which held no note.
    pub fn key_off(&mut self, key: u8) {
        if Performance::ends_a_note(key) {
            self.note_off();
        }
    }

    /// The gesture notes play: the last keyswitch's, or the `gesture` parameter.
    pub fn gesture(&self) -> Gesture {
        self.performance.gesture(&self.settings)
    }

    /// What the gestures are doing (the editor's scene view, tests).
    pub fn gesture_view(&self) -> GestureView {
        self.gestures.view(self.gesture())
    }

    /// How hard the stir, shake or tilt goes, 0..1: `gesture_amount` in continuous mode; the
    /// note's velocity in MIDI mode, raised by the modulation (`set_modulation`) for a shake or
    /// a tilt (a stir takes it as the spoon's depth); 0 without a note.
    fn gesture_intensity(&self) -> f32 {
        self.performance.gesture_intensity(&self.settings)
    }

    /// Nothing moves: no pour, no gesture still settling.
    fn is_quiet(&self) -> bool {
        !self.scene.is_active() && !self.gestures.is_active() && !self.gesture_playing
    }

    /// The gestures back at rest, their sliding contacts silent and reseeded.
    fn reset_gestures(&mut self) {
        self.gestures = GestureState::default();
        self.avalanche_request = false;
        self.sliders.reset(self.settings.seed);
    }

    pub fn note_off(&mut self) {
        self.performance.release();
        self.flow_changed();
    }

    /// Stops every note (host "all notes off", transport stop).
    pub fn all_notes_off(&mut self) {
        self.performance.release_all();
        self.flow_changed();
    }

    /// Flow modulation 0..1 from the mod wheel or channel pressure: flow x (1 + m).
    pub fn set_modulation(&mut self, amount: f32) {
        self.performance.set_modulation(amount);
        self.flow_changed();
    }

    /// Commanded mass flow, kg/s.
    fn flow_command(&self) -> f32 {
        self.performance.flow_command(&self.settings)
    }

    /// Where the generator's cells take their statistics from (the `statistics` setting):
    /// the model, or the bank (`bank_statistics`).
    fn cell_statistics(&self) -> CellStatistics {
        match self.settings.statistics {
            Statistics::Model => CellStatistics::Model,
            Statistics::Bank => self.bank_statistics(),
        }
    }

    /// The shipped bank, looked up for this pour (`CellStatistics::bank_for`).
    fn bank_statistics(&self) -> CellStatistics {
        // parsed already, by `new` (or, for `for_render`, now: see there)
        CellStatistics::bank_for(bank::shipped(), &self.settings, &self.derived)
    }

    /// The bank's statistics for the current window (the last pour state, `pour_state`), as
    /// the generator looks them up with `statistics` = bank (whatever the setting is): what
    /// `granary inspect bank` shows. Allocation-free.
    pub fn bank_lookup(&self) -> bank::Lookup {
        let statistics = match self.statistics {
            CellStatistics::Bank { .. } => self.statistics,
            CellStatistics::Model => self.bank_statistics(),
        };
        statistics.lookup(&self.pour).expect("bank_statistics is a bank")
    }

    fn geometry(&self) -> Geometry {
        let d = &self.derived;
        Geometry {
            cup: d.cup,
            grain_radius: d.grain_radius_m,
            stream_radius: d.stream_radius_m,
            aim: self.aim(),
            repose_tan: d.repose_tan,
            friction: self.settings.grain_material.friction(),
            open: d.open,
            // a quarter of the spout's exit speed sqrt(g D) (`stream`)
            // (the scene's stream parameters: set at every flow change and window)
            spread_m_s: 0.25 * (materials::GRAVITY * self.scene.stream().spout_m).sqrt(),
        }
    }

    fn update_cup(&mut self) {
        let (s, d) = (self.settings, self.derived);
        let fill = (self.scene.fill() * 500.0).round() / 500.0;
        let key = (
            s.cup_material,
            d.cup.shape,
            s.cup_size,
            fill,
            d.grain_density,
            d.grain_radius_m,
            s.listener_distance_m,
            s.listener_angle_deg,
            s.stereo_width,
            // the air over the grains: none in a pour onto the bare surface; a shaken vessel
            // is closed, its air sounding through its lid (`resonators::air::Lid`)
            self.air_kind(),
        );
        let cup = CupState {
            material: s.cup_material,
            cup: d.cup,
            fill,
            grain_density: d.grain_density,
            grain_diameter_m: 2.0 * d.grain_radius_m,
        };
        let distance = self.cup_distance();
        self.cup.update(key, &cup, distance, s.stereo_width);
        self.foot.set_cutoff(self.cup.lowest_mode_hz());
        // the cup as one body, heard along the shake's axis (the first wall sector's azimuth)
        let l = self.listener();
        let axis = d.cup.sector_dirs[0];
        let cos_theta = (l[0] * axis[0] + l[1] * axis[1]) / distance.max(1e-6);
        self.body.set(d.cup_sphere_radius_m, d.cup_mass_kg, distance, cos_theta);
    }

    /// The air the vessel holds (`resonators::cup::Air`): none over a pour onto the bare
    /// surface; while it is shaken, a jar's under its lid, and none for a vessel that has no
    /// lid (what closes a shaken mug or bowl is not modelled); else open.
    fn air_kind(&self) -> Air {
        if self.derived.open {
            Air::None
        } else if self.gesture() == Gesture::Shake {
            if self.derived.cup.shape == CupShape::Jar {
                Air::Closed
            } else {
                Air::None
            }
        } else {
            Air::Open
        }
    }

    /// Listener position, m (origin: centre of the cup's inner floor): `listener_distance`
    /// from the pile's top, `listener_angle` from the vertical.
    fn listener(&self) -> [f32; 3] {
        let d = &self.derived;
        [d.listener_across_m, 0.0, self.pour.pile_height_m + d.listener_up_m]
    }

    /// Distance from the listener to the cup's centre (on its axis, half-way up its inner
    /// depth), m.
    fn cup_distance(&self) -> f32 {
        let l = self.listener();
        let c = [0.0, 0.0, 0.5 * self.derived.cup.depth];
        ((l[0] - c[0]).powi(2) + (l[1] - c[1]).powi(2) + (l[2] - c[2]).powi(2)).sqrt()
    }

    /// Everything that follows from the settings alone (docs/architecture.md, "Derived
    /// once"), computed when they change, on the control side: `window` reads it. The stages
    /// take what changed at their next window boundary, as they took the settings before.
    fn derive(&mut self) {
        let s = self.settings;
        let d = Derived::new(&s);
        self.derived = d;
        self.radiation_key = RadiationKey::for_settings(&s, &d);
        self.set_plate();
        self.sliders.set_pairs(s.grain_material, d.cup_friction);
        self.statistics = self.cell_statistics();
        self.stream = self.stream_params();
        // the collisions' constants: all but the listener's place (`render_params`)
        self.constants = collision::Constants::for_settings(&s, &d, self.sample_rate);
    }

    /// The surface's half-space filter brought to its key: whole at once, or `G_PER_WINDOW`
    /// evaluations of it (a window's share); not for a plate, which rings its own modes
    /// (`set_plate`) and leaves the filter unused.
    fn build_radiation(&mut self, whole: bool) {
        if !self.plate.is_empty() {
            return;
        }
        self.radiation.set(self.radiation_key);
        if whole {
            self.radiation.complete();
        } else {
            self.radiation.advance(G_PER_WINDOW);
        }
    }

    /// The plate the surface is (`resonators::plate`), heard from where the surface filter's
    /// key puts the listener (`RadiationKey`), or none for a half-space. No allocation.
    fn set_plate(&mut self) {
        match self.settings.surface_material.plate() {
            Some(plate) => {
                let k = self.radiation_key;
                let (across, up) = (k.horizontal_mm as f64 * 1e-3, k.height_mm as f64 * 1e-3);
                let mut modes = [PlateMode::ZERO; MAX_PLATE_MODES];
                let max_hz = resonators::modal::max_mode_freq_hz(self.sample_rate) as f64;
                let n = plate.modes(across, up, max_hz, &mut modes);
                self.plate.set(&modes[..n]);
                self.plate_delay_s = (across.hypot(up) / SPEED_OF_SOUND as f64) as f32;
            }
            None => {
                self.plate.clear();
                self.plate_delay_s = 0.0;
            }
        }
    }

    /// The constants this window's collisions render with: the settings' (`derive`) with the
    /// listener over the pile as it stands and the surface filter's delay, and where the
    /// window's time 0 is in the rings.
    pub(crate) fn render_params(&self) -> RenderParams {
        let mut c = self.constants;
        let surface_delay_s = if self.plate.is_empty() {
            self.radiation.delay_samples() as f32 / self.sample_rate
        } else {
            self.plate_delay_s
        };
        c.place(self.listener(), self.cup_distance(), surface_delay_s);
        RenderParams {
            c,
            base: self.clock + GENERATOR_LEAD as u64,
            mask: self.mask,
        }
    }

    /// Control work at a window boundary (see the crate's "Determinism"): step the pour,
    /// bring the resonators to the cup it leaves, draw the window's collisions and hand them
    /// to the renderer, and sound the surface's force of this window.
    fn window(&mut self) {
        self.next_window = self.clock + WINDOW as u64;
        let gestures = self.step_pour();
        self.update_resonators();
        self.draw_collisions(&gestures);
        self.push_foot();
        self.push_body(&gestures);
        self.sound_surface();
        self.sound_body();
    }

    /// A shaken bed's slam jolts the cup as a whole (`resonators::body`): its acceleration
    /// over this window's collisions, ringed after the cup's travel time as its forces are.
    fn push_body(&mut self, gestures: &gesture::GestureOutput) {
        let Some(part) = gestures.slam.filter(|_| self.body_on) else {
            return;
        };
        let mut accel = [0.0f32; WINDOW];
        self.body.slam_accel(&part, &mut accel);
        let p = &self.pending_params;
        p.add_late(&mut self.body_ring, p.c.cup_delay, &accel);
    }

    /// The cup's jolts in the current window as sound (`resonators::body`), for its spans.
    fn sound_body(&mut self) {
        let start = (self.clock as usize) & self.mask;
        let accel = &mut self.body_ring[start..start + WINDOW];
        self.body_sound = [0.0; WINDOW];
        self.body.process(accel, &mut self.body_sound);
        accel.fill(0.0);
    }

    /// A cup standing on a plate pushes on it through its foot with the momentum the
    /// arriving grains bring (`impact::foot`), written to the surface's force ring after the
    /// surface's travel time as the collisions' pushes are. A half-space takes no such push
    /// (its filter is the grains' own contact on it; a thick floor under a cup is left
    /// silent), nor a pour onto the bare surface (the grains land on it themselves).
    fn push_foot(&mut self) {
        let d = self.derived;
        if self.plate.is_empty() || d.open {
            return;
        }
        let impulse = (1.0 + d.restitution) * d.grain_mass_kg * self.pour.impact_speed;
        let mut force = [0.0f32; WINDOW];
        let rate = [self.pour.arrivals_start, self.pour.arrivals_end];
        self.foot.window(rate, impulse, &mut force);
        let p = &self.pending_params;
        p.add_late(&mut self.cup_ring[SURFACE_BUS], p.c.surface_delay, &force);
    }

    /// The pour's mechanics over one window (`pour`): the scene (fill, stream, arrivals) and
    /// the gestures, whose impacts are returned for `draw_collisions`.
    fn step_pour(&mut self) -> gesture::GestureOutput {
        let s = self.settings;
        if s.fill != self.last_fill_setting {
            // "fill level at pour start": a new pour (`restart`), or a new setting, sets it
            self.scene.set_fill(s.fill);
            self.last_fill_setting = s.fill;
        }
        let d = self.derived;
        let input = SceneInput {
            grain_radius_m: d.grain_radius_m,
            grain_density: d.grain_density,
            cup: d.cup,
            fall_height_m: s.fall_height_m,
            auto_fill: s.auto_fill,
            open: d.open,
            repose_tan: d.repose_tan,
            life_scale: d.life_scale,
        };
        self.scene.set_stream(self.stream);
        self.pour = self.scene.step(&input);
        self.step_gestures()
    }

    /// What the resonators and filters take at a window boundary: the sphere filters for a
    /// new grain radius, the cup's modes for the cup and its fill (`update_cup`), the surface
    /// filter for its key (built a little every window), the modal bank's control step.
    fn update_resonators(&mut self) {
        let d = self.derived;
        if d.radiation_radius_m != self.sphere_radius {
            // the sphere-radiation filter depends only on the grain radius (and shape)
            self.sphere_radius = d.radiation_radius_m;
            for f in &mut self.sphere_filter {
                f.set(self.sample_rate, self.sphere_radius);
            }
        }
        self.update_cup();
        // a new surface or listener: its filter is built a little every window
        self.build_radiation(false);
        self.cup.window();
    }

    /// The window's collisions (`generator::generate`, then the injected ones and the
    /// gestures' `bursts`), each rendered at once or queued for the next window's spans
    /// (`render_pending`), and the statistics counted.
    fn draw_collisions(&mut self, gestures: &gesture::GestureOutput) {
        let d = self.derived;
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
        // reference quality: every collision one by one, and each one's push through the bed
        let reference = self.is_reference();
        let max_per_cell = if reference {
            generator::reference_rendered_per_cell(self.sample_rate)
        } else {
            self.max_per_cell
        };
        let statistics = self.statistics;
        // the bank's lookup, again only when the fill has left its step
        let key = statistics.lookup_key(&pour);
        if key.is_some() && self.bank_cache.as_ref().map(|c| c.0) != key {
            self.bank_cache = key.zip(statistics.lookup(&pour));
        }
        let lookup = key.and(self.bank_cache.as_ref().map(|c| &c.1));
        if let Some(l) = lookup {
            self.shapes.keep_bank_bins(l.speed_range);
        }
        let params = self.render_params();
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
            restitution: d.restitution,
            window_s,
            normals: normal_mode,
            max_per_cell,
            reference,
            statistics,
            lookup,
        };
        // the collisions each rendered one stands for (a cell's collisions share a weight, so
        // the float-to-integer conversion is made once a cell)
        let mut group = (f32::NAN, 1u64);
        let mut count = |stats: &mut Stats, cell_collisions: &mut [u64; window::CELLS.len()], c: &Collision| {
            stats.rendered += 1;
            if c.weight.to_bits() != group.0.to_bits() {
                group = (c.weight, ((c.weight * c.weight + 0.5) as u64).max(1));
            }
            cell_collisions[c.cell] += group.1;
        };
        let mut means = [GroupMean::default(); window::CELLS.len()];
        // what the grouped draws rendered at once push on the cup (`add_group_means` measures
        // the rest from `pending`)
        let mut pushed_at_once = [[0.0f32; CUP_BUSES + 1]; window::CELLS.len()];
        let physical = generate(&pour, &setup, &self.shapes, &mut rng, pending, &mut means, |c| {
            // beyond the default budget (reference quality, tests, inspection): render at once
            count(&mut stats, cell_collisions, c);
            ctx.render(c, grains_ring, cup_ring, scratch);
            stats.written += 1;
            // a grouped draw: weight sqrt(k), or by energy any but 1 (`generator::EnergyDraw`)
            if c.weight != 1.0 || c.bed_weight > 1.0 {
                if let Some((bus, impulse)) = collision::cup_push(&params.c, c) {
                    pushed_at_once[c.cell][bus] += impulse;
                }
            }
        });
        push::add_group_means(
            &means,
            pending,
            pushed_at_once,
            &params,
            &mut self.group_push,
            &self.mean_push,
            cup_ring,
        );
        // injected collisions, then the gestures' impacts (`gesture::draw_burst`), after the
        // pour's: into this window's share while there is room, rendered at once beyond
        let mut gesture_counts = [0u64; 3];
        {
            let mut queue = |c: Collision, stats: &mut Stats, cells: &mut [u64; window::CELLS.len()]| {
                if pending.len() < pending.capacity() {
                    pending.push(c);
                } else {
                    count(stats, cells, &c);
                    ctx.render(&c, grains_ring, cup_ring, scratch);
                    stats.written += 1;
                }
            };
            for c in self.injected.drain(..) {
                queue(c, &mut stats, cell_collisions);
            }
            for burst in gestures.bursts.iter().flatten() {
                let n = gesture::draw_burst(
                    burst,
                    &geometry.cup,
                    pour.pile_height_m,
                    pour.pile_radius_m,
                    geometry.open,
                    &mut rng,
                    |c| queue(c, &mut stats, cell_collisions),
                );
                let kind = match burst.place {
                    gesture::Place::Bed => CollisionKind::GrainGrain,
                    gesture::Place::Surface => CollisionKind::GrainSurface,
                    _ => CollisionKind::GrainCup,
                };
                gesture_counts[kind as usize] += n;
            }
        }
        for c in pending.iter() {
            count(&mut stats, cell_collisions, c);
        }
        stats.grain_grain += gesture_counts[0];
        stats.grain_cup += gesture_counts[1];
        stats.grain_surface += gesture_counts[2];
        stats.collisions += gesture_counts.iter().sum::<u64>();
        stats.grain_grain += physical[0];
        stats.grain_cup += physical[1];
        stats.grain_surface += physical[3];
        stats.collisions += physical[0] + physical[1] + physical[3];
        stats.culled += physical[2];
        self.stats = stats;
        self.rng = rng;
    }

    /// The surface's force over this window is final now (every collision lands a window or
    /// more after it is generated): its sound at the listener, for the spans of this window.
    fn sound_surface(&mut self) {
        let start = (self.clock as usize) & self.mask;
        if self.plate.is_empty() {
            let force = &mut self.cup_ring[SURFACE_BUS][start..start + WINDOW];
            self.radiation.process(force, &mut self.ground);
            force.fill(0.0);
            return;
        }
        // a plate: the grains that land on it (not yet the cup standing on it: its floor
        // bus carries the grouped cells' mean push, stepped at the window rate, which the
        // cup's modes above a kilohertz do not hear and a table's at 100 Hz would)
        let mut force = [0.0f32; WINDOW];
        force.copy_from_slice(&self.cup_ring[SURFACE_BUS][start..start + WINDOW]);
        self.cup_ring[SURFACE_BUS][start..start + WINDOW].fill(0.0);
        self.ground = [0.0; WINDOW];
        self.plate.flush_denormals();
        self.plate.process(&force, &mut self.ground);
        // a mode does not answer a steady force (the cup's pile pushes on the table with
        // one): the one-pole modes' steady output removed, as the cup's (`modal::DcBlocker`)
        self.plate_dc.process(0, &mut self.ground);
    }

    /// One window of the gestures' mechanics (`gesture`): their sliding contacts for this
    /// window, grains spilled out of the cup, and the impacts (returned, drawn by `window`).
    fn step_gestures(&mut self) -> gesture::GestureOutput {
        let (s, d) = (self.settings, self.derived);
        let (cup, open, bulk) = (d.cup, d.open, d.bulk_density);
        let held_m3 = if open {
            self.pour.fill * cup.volume_m3
        } else {
            cup.volume_below(self.pour.pile_height_m)
        };
        let grain_volume = d.grain_volume_m3;
        let arrivals = 0.5 * (self.pour.arrivals_start + self.pour.arrivals_end);
        let window_s = WINDOW as f32 / self.sample_rate;
        let input = GestureInput {
            gesture: self.gesture(),
            intensity: self.gesture_intensity(),
            modulation: self.performance.modulation(),
            shake_rate_hz: s.shake_rate_hz,
            cup,
            grain: s.grain_material,
            grain_radius_m: d.grain_radius_m,
            grain_density: d.grain_density,
            cup_friction: d.cup_friction,
            pile_height_m: self.pour.pile_height_m,
            pile_radius_m: self.pour.pile_radius_m,
            bed_mass_kg: held_m3 * bulk,
            poured_m3: arrivals * grain_volume / PACKING_FRACTION * window_s,
            open,
            avalanche_now: std::mem::take(&mut self.avalanche_request),
            window_s,
        };
        let out = self.gestures.step(&input);
        if out.spilled_kg > 0.0 && !open {
            // what spills leaves the cup: the bed sinks by its volume
            let left = (held_m3 - out.spilled_kg / bulk).max(0.0);
            let z = cup.height_holding(left);
            self.scene.set_fill(z / cup.depth.max(1e-6));
            self.last_fill_setting = s.fill;
        }
        self.sliders.window(out.sliding, self.cup_distance());
        out
    }

    /// Renders the pending collisions up to index `upto` (they land after this window).
    fn render_pending(&mut self, upto: usize) {
        let upto = upto.min(self.pending.len());
        if self.pending_done >= upto {
            // nothing to render: the set-up below is not free (a batch's lanes)
            return;
        }
        let ctx = RenderContext {
            kernels: &self.kernels,
            p: self.pending_params,
        };
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
        self.process_spans(outputs, self.kernels.isa());
    }

    /// `process` with the span's loops (`SpanKernel`) in the copy for `span_isa` (the
    /// engine's own but in a test that compares the copies).
    fn process_spans(&mut self, mut outputs: Outputs<'_>, span_isa: simd::Isa) {
        let _ftz = ftz::FlushDenormals::new();
        let n = outputs.len();
        let targets = self.derived.gains;
        if n > 0 {
            self.pristine = false;
        }
        let mut i = 0;
        while i < n {
            if self.clock == self.next_window {
                self.window();
            }
            // a span never crosses a window boundary (so it is at most a window long), nor
            // the end of the rings
            let to_window = self.samples_to_window();
            let offset = WINDOW - to_window;
            let to_wrap = self.mask + 1 - (self.clock as usize & self.mask);
            let len = (n - i).min(to_window).min(to_wrap);
            span_isa.run(SpanKernel {
                engine: self,
                targets: &targets,
                outputs: outputs.slice(i..i + len),
            });
            i += len;
            // spread the next window's collisions over this one, in proportion to time
            let share = (self.pending.len() * (offset + len)).div_ceil(WINDOW);
            self.render_pending(share);
        }
    }

    /// Renders one span inside a window: reads (and clears) the rings, runs the sphere
    /// filters, the modal bank and the diffuse resonator over the span, then the gains and
    /// the limiter sample by sample (`mix::Mix::span`).
    #[inline(always)]
    fn span(&mut self, targets: &[f32; 5], outputs: Outputs<'_>) {
        let Outputs {
            main,
            grains,
            cup,
            surface,
            friction,
        } = outputs;
        let len = main[0].len();
        let start = (self.clock as usize) & self.mask;
        let range = start..start + len;
        let SpanBuffers {
            pressure,
            rubbing,
            total,
            modal,
            diffuse,
            ground,
        } = &mut self.span_buffers;
        {
            let [ring_l, ring_r] = &mut self.grains_ring;
            let [p_l, p_r] = pressure;
            let (ring_l, ring_r) = (&mut ring_l[range.clone()], &mut ring_r[range.clone()]);
            SphereFilter::process_pair(&mut self.sphere_filter, [ring_l, ring_r], [p_l, p_r]);
            ring_l.fill(0.0);
            ring_r.fill(0.0);
        }
        // the sliding contacts (`gesture::VOICES`): their sound at the listener, and the
        // friction force of the ones on the cup onto its buses, before the modes read them
        rubbing[..len].fill(0.0);
        self.sliders
            .render(&mut rubbing[..len], &mut self.cup_ring, range.clone());
        total[..len].fill(0.0);
        for ring in &self.cup_ring[..CUP_BUSES] {
            for (t, f) in total.iter_mut().zip(&ring[range.clone()]) {
                *t += f;
            }
        }
        {
            let forces: [&[f32]; CUP_BUSES] = std::array::from_fn(|b| &self.cup_ring[b][range.clone()]);
            let [ml, mr] = modal;
            let [dl, dr] = diffuse;
            self.cup.process(
                &forces,
                &mut total[..len],
                [&pressure[0][..len], &pressure[1][..len]],
                [&mut ml[..len], &mut mr[..len]],
                [&mut dl[..len], &mut dr[..len]],
            );
        }
        for ring in &mut self.cup_ring[..CUP_BUSES] {
            ring[range.clone()].fill(0.0);
        }
        // the cup's jolts as one body (`sound_body`, computed for the whole window at its start)
        let offset = WINDOW - (self.next_window - self.clock) as usize;
        for m in modal.iter_mut() {
            for (y, x) in m[..len].iter_mut().zip(&self.body_sound[offset..offset + len]) {
                *y += x;
            }
        }
        // the ground's sound at the listener (mono: the surface's own sound comes from where
        // the grains land, a small patch), computed for the whole window at its start
        ground[..len].copy_from_slice(&self.ground[offset..offset + len]);
        self.mix.span(
            targets,
            Stems {
                grains: [&pressure[0][..len], &pressure[1][..len]],
                modal: [&modal[0][..len], &modal[1][..len]],
                diffuse: [&diffuse[0][..len], &diffuse[1][..len]],
                surface: &mut ground[..len],
                friction: &mut rubbing[..len],
                friction_gain: self.sliders.distance_gain(),
            },
            main,
            grains,
            cup,
        );
        if let Some([friction_l, friction_r]) = friction {
            friction_l.copy_from_slice(&rubbing[..len]);
            friction_r.copy_from_slice(&rubbing[..len]);
        }
        if let Some([surface_l, surface_r]) = surface {
            surface_l.copy_from_slice(&ground[..len]);
            surface_r.copy_from_slice(&ground[..len]);
        }
        self.clock += len as u64;
    }
}

/// A span's buffers (`Engine::span`), kept in the engine so that a span does not zero them
/// on the stack each time (they were 2 % of a quiet pour's time): each is written over the
/// span's length before it is read, or cleared to it where it gathers.
struct SpanBuffers {
    /// The grains' sound (L, R), from the rings through the sphere filters.
    pressure: [[f32; WINDOW]; 2],
    /// The sliding contacts' sound (gathered).
    rubbing: [f32; WINDOW],
    /// The buses' force summed (gathered), the diffuse resonator's input.
    total: [f32; WINDOW],
    /// The cup's modes (L, R) and its diffuse field (L, R).
    modal: [[f32; WINDOW]; 2],
    diffuse: [[f32; WINDOW]; 2],
    /// The ground's sound (copied from the window's).
    ground: [f32; WINDOW],
}

impl Default for SpanBuffers {
    fn default() -> Self {
        SpanBuffers {
            pressure: [[0.0; WINDOW]; 2],
            rubbing: [0.0; WINDOW],
            total: [0.0; WINDOW],
            modal: [[0.0; WINDOW]; 2],
            diffuse: [[0.0; WINDOW]; 2],
            ground: [0.0; WINDOW],
        }
    }
}

/// `Engine::span` as a `simd::Kernel`: the span's loops (the sphere filters, the bus sums,
/// the cup's DC blocker and air, the mix, the limiter's chunks, inlined into it) compiled
/// for AVX where the CPU has it, so that they run as 8-wide vectors, not SSE's 4. They are
/// plain IEEE operations in the source's order (no multiply-add is fused outside `madd`),
/// so every copy gives the same bits; the modal bank and the diffuse resonator inside
/// dispatch to their own copies as before. A quiet pour (`rate:1k`) 1.10x as fast, side by
/// side; the window's work (`Engine::window`) run the same way was 2-3 % slower.
struct SpanKernel<'a, 'o> {
    engine: &'a mut Engine,
    targets: &'a [f32; 5],
    outputs: Outputs<'o>,
}

impl simd::Kernel for SpanKernel<'_, '_> {
    type Output = ();
    #[inline(always)]
    fn run<T: simd::Target>(self, _: T) {
        self.engine.span(self.targets, self.outputs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fft`, the granary-fft crate (no unit-test build of its own: its Cargo.toml says why):
    /// a plan's length, scaling and bins.
    #[test]
    fn fft_round_trip_returns_n_times_the_signal_and_a_cosine_lands_in_its_bin() {
        let n = 48;
        let (fwd, inv) = fft::pair(n);
        let x: Vec<f64> = (0..n)
            .map(|i| (2.0 * std::f64::consts::PI * 5.0 * i as f64 / n as f64).cos())
            .collect();
        let mut input = x.clone();
        let mut spectrum = fwd.make_output_vec();
        fwd.process(&mut input, &mut spectrum).unwrap();
        assert_eq!(spectrum.len(), n / 2 + 1);
        for (k, s) in spectrum.iter().enumerate() {
            let want = if k == 5 { n as f64 / 2.0 } else { 0.0 };
            assert!((s.re - want).abs() < 1e-9 && s.im.abs() < 1e-9, "bin {k}: {s}");
        }
        let mut back = inv.make_output_vec();
        inv.process(&mut spectrum, &mut back).unwrap();
        for (a, b) in back.iter().zip(&x) {
            assert!((a / n as f64 - b).abs() < 1e-12);
        }
        assert_eq!(fft::forward(n).len(), n);
        assert_eq!(fft::inverse(n).len(), n);
    }

    /// `for_render` leaves the collision databank unparsed for a render on the model (a
    /// quarter of a minute-long render's time was its parse), and a switch to the bank
    /// parses it then; `new` parses it at once (a live host may switch at any time). Run
    /// in a process of its own, this test alone (it runs its own binary again): any other
    /// test in this one may have parsed the bank already.
    #[test]
    fn a_render_on_the_model_leaves_the_bank_unparsed() {
        const NAME: &str = "tests::a_render_on_the_model_leaves_the_bank_unparsed";
        if std::env::var_os("GRANARY_FRESH_PROCESS").is_none() {
            let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
                .args(["--exact", NAME, "--test-threads=1"])
                .env("GRANARY_FRESH_PROCESS", "1")
                .output()
                .expect("the test binary runs");
            let said = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success() && said.contains("1 passed"), "{said}");
            return;
        }
        let model = Settings {
            trigger_mode: TriggerMode::Continuous,
            statistics: Statistics::Model,
            ..Settings::default()
        };
        let mut e = Engine::for_render(model, 48_000.0, 512);
        let mut bufs: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; 512]);
        let mut run = |e: &mut Engine| {
            for _ in 0..100 {
                let [a, b, c, d, f, g] = &mut bufs;
                e.process(Outputs {
                    main: [a, b],
                    grains: [c, d],
                    cup: [f, g],
                    surface: None,
                    friction: None,
                });
            }
        };
        run(&mut e);
        assert!(e.stats().collisions > 0);
        assert!(!bank::shipped_parsed(), "a render on the model parsed the bank");
        let on_bank = Settings {
            statistics: Statistics::Bank,
            ..model
        };
        e.set_settings(&on_bank);
        run(&mut e);
        assert!(bank::shipped_parsed());
        assert!(matches!(e.statistics, CellStatistics::Bank { .. }));
        // a render on the bank parses it as it is built
        let bank_render = Engine::for_render(on_bank, 48_000.0, 512);
        assert!(matches!(bank_render.statistics, CellStatistics::Bank { .. }));
    }

    /// The whole engine in every copy the CPU has that fuses its multiply-adds (`simd`: the
    /// unfused baseline differs by rounding) gives the same bits in every output, and so does
    /// the span's kernel (`SpanKernel`) in every copy, the baseline's too, beside the rest in
    /// the CPU's: a pour into the mug driven into the limiter (+24 dB), and one onto the bare
    /// surface (its radiation filter), 1.5 s each in 100-sample blocks with all five stems.
    #[test]
    fn every_fused_copy_renders_the_same_bits() {
        let render = |settings: Settings, isa: simd::Isa, span_isa: simd::Isa| {
            let mut e = Engine::with_isa(settings, 48_000.0, 100, isa);
            let mut bufs: [Vec<f32>; 10] = std::array::from_fn(|_| vec![0.0; 100]);
            let (mut bits, mut gain) = (Vec::new(), 1.0f32);
            for _ in 0..720 {
                let [a, b, c, d, f, g, h, i, j, k] = &mut bufs;
                let outputs = Outputs {
                    main: [a, b],
                    grains: [c, d],
                    cup: [f, g],
                    surface: Some([h, i]),
                    friction: Some([j, k]),
                };
                e.process_spans(outputs, span_isa);
                bits.extend(bufs.iter().flatten().map(|x| x.to_bits()));
                gain = gain.min(e.limiter_gain());
            }
            (bits, gain)
        };
        let pour = Settings {
            trigger_mode: TriggerMode::Continuous,
            ..Settings::default()
        };
        let loud = Settings {
            output_gain_db: pour.output_gain_db + 24.0,
            ..pour
        };
        let ground = Settings {
            pour_target: PourTarget::Surface,
            ..pour
        };
        for settings in [loud, ground] {
            let (want, gain) = render(settings, simd::Isa::detect(), simd::Isa::detect());
            assert!(want.iter().any(|&x| x != 0));
            for isa in simd::Isa::available().filter(|isa| isa.fused()) {
                assert!(
                    render(settings, isa, isa).0 == want,
                    "{isa:?}, {:?}",
                    settings.pour_target
                );
            }
            // the span's own copies (plain code: the baseline's unfused copy too), the rest
            // of the engine in the CPU's
            for isa in simd::Isa::available() {
                let span = render(settings, simd::Isa::detect(), isa).0;
                assert!(span == want, "the span in {isa:?}, {:?}", settings.pour_target);
            }
            if settings.pour_target == PourTarget::Cup {
                assert!(gain < 0.9, "the limiter should hold the loud pour: least gain {gain}");
            }
        }
    }

    /// Runs `blocks` blocks of 256 samples of `engine`, calling `after` with each block's index.
    fn run(engine: &mut Engine, blocks: usize, mut after: impl FnMut(&mut Engine, usize)) {
        let mut out: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; 256]);
        for block in 0..blocks {
            feed::render_blocks(engine, &mut out, 256, std::iter::empty());
            after(engine, block);
        }
    }

    /// The bank's lookup the generator draws from is kept between windows (`bank_cache`)
    /// only while what it depends on stays: after every block of a jar filling, it is the
    /// lookup made afresh for the pour as it stands, made again only when the fill leaves
    /// its step; at a fill held still, a new fall height (a new place in the bank) makes it
    /// again at once.
    #[test]
    fn the_kept_bank_lookup_is_the_pours() {
        use crate::control::choices::{CupShape, Statistics, TriggerMode};
        let settings = Settings {
            statistics: Statistics::Bank,
            trigger_mode: TriggerMode::Continuous,
            pour_rate_g_s: 40.0,
            cup_shape: Some(CupShape::Jar),
            ..Settings::default()
        };
        let fresh = |e: &Engine| e.statistics.lookup(&e.pour);
        let kept = |e: &Engine| e.bank_cache.as_ref().map(|c| c.1);
        let mut engine = Engine::new(settings, 48_000.0, 256);
        let (mut made, mut last) = (0, None);
        run(&mut engine, 400, |e, block| {
            assert!(kept(e).is_some() && kept(e) == fresh(e), "block {block}");
            made += usize::from(kept(e) != last);
            last = kept(e);
        });
        let fill = engine.pour_state().fill;
        assert!(fill > 0.01, "the jar fills: {fill}");
        // 800 windows: the lookup made again as the fill crossed its steps, not every window
        assert!(
            (2..200).contains(&made),
            "made {made} times over 800 windows, fill {fill}"
        );
        // held still: the fill does not move, the place in the bank does
        let still = Settings {
            auto_fill: false,
            fill: 0.4,
            ..settings
        };
        let mut engine = Engine::new(still, 48_000.0, 256);
        run(&mut engine, 50, |_, _| {});
        let before = kept(&engine);
        engine.set_settings(&Settings {
            fall_height_m: 0.05,
            ..still
        });
        run(&mut engine, 2, |e, block| {
            assert!(kept(e) == fresh(e), "after the change, block {block}");
        });
        assert_ne!(kept(&engine), before, "a new fall height, a new lookup");
    }
}

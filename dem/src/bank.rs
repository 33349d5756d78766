//! The collision databank (thesis §7.1: "a databank of PDFs" for the window/cell generator of
//! §5.5–5.6, proposed there and never built): simulated pours (`Sim`) reduced to the
//! generator's form, per cell the collisions per arriving grain and the histograms of
//! normal speed, normal angle and time within a window. `cargo xtask bank` sweeps the scenes
//! (`sweep`) and writes `assets/bank/bank.json` (format: docs/dem.md, "The databank").
//!
//! The reduction, per contact start of a run (`reduce`):
//! - grain–cup: the floor (`CupFloor`) within half a radius of it, else the wall ring its
//!   height falls in (the cup's `ring_edges`; above the rim, the top ring);
//! - grain–surface: `Surface`;
//! - grain–grain: the falling stream (`Stream`) when both bodies fall faster than
//!   `STREAM_FALL_SHARE` of the impact speed; else the impact zone (`ImpactZone`) within
//!   the stream's radius (the engine's and the spout's: 8 grain radii, at least 4 mm) of
//!   the spout's axis, and the pile around it (`PileSurface`) beyond.
//!
//! Speeds are in units of the engine's impact speed for the scene, √(2 g h) with h the fall
//! from the spout's height to the bed (`scene::PourScene`), and rates are per grain poured:
//! both keep a grain's size and the flow out of the numbers as far as the simulation says
//! they can (docs/dem.md gives the check). Every contact of a grain's life is counted, until
//! the grains rest (`SETTLED_SHARE`): in a steady pour the collisions a second are the
//! grains arriving a second times the collisions each makes before it rests.

use crate::{Body, Scene, Sim};
use granary_engine::base::materials::{GrainMaterial, GRAVITY};
use granary_engine::control::choices::{CupShape, Shape};
use granary_engine::control::params::ParamValues;
use granary_engine::derived::cups::{Cup, RINGS};
use granary_engine::derived::{BANK_CUP_SIZE, BANK_SURFACE_CUP};
use serde::{Deserialize, Serialize};

/// The file's format name and version.
pub const FORMAT: &str = "granary-bank";
pub const VERSION: u32 = 5;
/// The cells the bank holds, in the file's order: the engine's (the generator's `Cell`s
/// but Settling: a grain's collisions until it rests are in the others).
pub use granary_engine::statistics::bank::CELL_IDS as CELLS;
const IMPACT_ZONE: usize = 0;
const CUP_FLOOR: usize = 1;
const WALL_RING_0: usize = 2;
const PILE_SURFACE: usize = 5;
const STREAM: usize = 6;
const SURFACE: usize = 7;

/// The speed histogram: log-spaced over [lo, hi] in units of the impact speed (the
/// generator's `SPEED_BINS`).
pub const SPEED_BINS: usize = 16;
pub const SPEED_LO: f32 = 1.0 / 512.0;
pub const SPEED_HI: f32 = 2.0;
/// The normal's polar angle from the cell's mean normal, 0..π/2 (the generator's
/// `ANGLE_BINS`).
pub const ANGLE_BINS: usize = 8;
/// Eighths of a generator window (128 samples at 48 kHz).
pub const TIME_BINS: usize = 8;
pub const WINDOW_S: f64 = 128.0 / 48_000.0;
/// The lifetime profile's bins: a contact's time since its grain arrived, s (the engine's
/// `bank::LIFE_EDGES_S`; the first bin, under 5 ms, is the arrival's own collisions).
pub use granary_engine::statistics::bank::{LIFE_BINS, LIFE_EDGES_S};
/// A grain–grain contact is in the falling stream when both bodies fall faster than this
/// share of the impact speed.
pub const STREAM_FALL_SHARE: f32 = 0.3;
/// A run goes on after the last grain lands until no more than this share of the grains
/// moves (`Census::in_flight`), or for at most `SETTLE_MAX_S`.
pub const SETTLED_SHARE: f64 = 0.02;
pub const SETTLE_MAX_S: f64 = 3.0;
/// The generator's stream axis: (cos, sin, `STREAM_RISE`) about the normal's azimuth
/// (`generator::draw_place`, `lanes::finish_lanes`).
use granary_engine::generator::STREAM_RISE;

/// One cell of one entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellStats {
    /// Collisions per grain poured.
    pub rate: f64,
    pub count: u64,
    pub speed: Vec<u64>,
    /// The normal angles of each speed bin's collisions: `SPEED_BINS` rows of `ANGLE_BINS`
    /// (row i sums to `speed[i]`). The angle is kept per speed bin, not over the cell: a
    /// pour's fast landings meet the bed at other angles than its slow contacts, and the
    /// grains' sound above 1 kHz depends on both together (a grain–grain collision radiates
    /// as two opposed dipoles, as the square of its normal's cosine to the listener, more
    /// at speed). Drawn independently of the speed, the angles of the sugar-into-a-mug check
    /// (`tests/bank_check.rs`) left the grains 1.1 dB quieter above 3 kHz than the same
    /// contacts with their own normals; drawn per speed bin, within 0.2 dB.
    pub angle_by_speed: Vec<Vec<u64>>,
    pub time: Vec<u64>,
    /// The lifetime profile with its speeds: `LIFE_BINS` rows of `SPEED_BINS`, the counts
    /// by the time since the contact's grain arrived (`LIFE_EDGES_S`; the younger poured
    /// grain of two, arrived a fall `v/g` after it left the spout, as the engine's arrivals
    /// do) and by speed (column sums are `speed`). A steady pour's rate and speeds are the
    /// same whatever the profile; the profile says when after a grain's arrival its
    /// collisions come, and how fast they are then: a glass bead bounces on for a second or
    /// more, ever slower (its collisions 0.2 to 0.5 s after it lands have a twentieth of the
    /// landings' mean square speed), sugar rests within a fraction of one (the start and
    /// the tail of a pour).
    pub speed_by_life: Vec<Vec<u64>>,
}

impl CellStats {
    fn empty() -> CellStats {
        CellStats {
            rate: 0.0,
            count: 0,
            speed: vec![0; SPEED_BINS],
            angle_by_speed: vec![vec![0; ANGLE_BINS]; SPEED_BINS],
            time: vec![0; TIME_BINS],
            speed_by_life: vec![vec![0; SPEED_BINS]; LIFE_BINS],
        }
    }

    /// Mean speed in units of the impact speed (bins' geometric centres).
    pub fn mean_speed(&self) -> f64 {
        self.speed_moment(1)
    }

    /// The mean of `speed_centre(i)^p` over the speed histogram (in units of the impact
    /// speed to the `p`), 0 for an empty histogram.
    pub fn speed_moment(&self, p: i32) -> f64 {
        self.speed_power_sum(p).map_or(0.0, |(sum, total)| sum / total)
    }

    /// Σ count × `speed_centre(i)^p` over the speed bins, in bin order, and the histogram's
    /// total count; `None` for an empty histogram.
    fn speed_power_sum(&self, p: i32) -> Option<(f64, f64)> {
        let total: u64 = self.speed.iter().sum();
        if total == 0 {
            return None;
        }
        let sum: f64 = self
            .speed
            .iter()
            .enumerate()
            .map(|(i, &n)| n as f64 * speed_centre(i).powi(p))
            .sum();
        Some((sum, total as f64))
    }
}

/// Geometric centre of speed bin `i`, in units of the impact speed.
pub fn speed_centre(i: usize) -> f64 {
    let (lo, hi) = (SPEED_LO as f64, SPEED_HI as f64);
    lo * (hi / lo).powf((i as f64 + 0.5) / SPEED_BINS as f64)
}

/// What a run simulated: the swept axes and the scene.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spec {
    /// A cup shape, or `None`: the pour onto the surface.
    pub cup: Option<CupShape>,
    /// The grain material's id (`GrainMaterial::id`).
    pub grain: &'static str,
    /// The grain's diameter over the material's (the `grain_size` setting's factor, applied
    /// in the simulation even beyond the setting's range: `Scene::with_grain_size`).
    pub grain_size: f32,
    pub fill: f32,
    pub fall_height_m: f32,
    /// Grains poured a second.
    pub grains_per_s: f32,
    pub pour_s: f64,
    /// The first run's seed (the preset's `seed`).
    pub seed: u64,
    /// Runs of the scene merged into its entry, seeds `seed`, `seed + 1`, …: their counts and
    /// histograms add up (`merge`).
    pub runs: u32,
    /// The grains' friction on each other where the sweep asks another than the material's
    /// (`GRAIN_FRICTIONS`; `None`: the material's, `GrainMaterial::friction`).
    pub friction: Option<f32>,
    /// The grains' shape: spheres of the material's volume, or the material's own
    /// (`SHAPED`; `shapes`: of the same volume and mass).
    pub shape: Shape,
}

impl Spec {
    /// The grains' friction on each other in this spec's runs (`None` for a grain that is
    /// no material of the table).
    pub fn grain_friction(&self) -> Option<f32> {
        self.friction
            .or_else(|| GrainMaterial::from_id(self.grain).map(GrainMaterial::friction))
    }
}

/// One entry of the bank: its axes, the scene and the cells. `grains` and `simulated_s` are
/// over all its `runs`; `pour_s` is one run's. No wall time: a bank file depends on the sweep
/// alone, so a sweep run in shards merges byte for byte into the file one process writes
/// (`shards`; files written before the shards carry a `wall_s`, which is ignored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub family: String,
    pub restitution: f32,
    /// The grains' dynamic friction coefficient against each other (the material's mu_d,
    /// `FrictionMaterial::friction_surface`), the simulation's grain–grain friction.
    pub friction: f32,
    pub fill: f32,
    pub fall_height_m: f32,
    pub grain_material: String,
    pub grain_diameter_m: f32,
    pub flow_kg_s: f32,
    pub grains: usize,
    pub pour_s: f64,
    pub simulated_s: f64,
    /// The runs merged (`Spec::runs`; a bank file before them has one run an entry).
    #[serde(default = "one_run")]
    pub runs: u32,
    /// The grains' shape (`Shape::id`), written where it is not the sphere (a file before
    /// version 5 is of spheres).
    #[serde(default = "sphere", skip_serializing_if = "is_sphere")]
    pub shape: String,
    pub impact_speed_m_s: f32,
    pub cells: std::collections::BTreeMap<String, CellStats>,
}

fn one_run() -> u32 {
    1
}

fn sphere() -> String {
    Shape::Sphere.id().into()
}

fn is_sphere(shape: &str) -> bool {
    shape == Shape::Sphere.id()
}

impl Entry {
    pub fn cell(&self, name: &str) -> &CellStats {
        &self.cells[name]
    }
}

/// The settings of a run: the default preset with the spec's scene.
///
/// The pour rate is the spec's grains a second of its grains (`grain_kg`). A grain size or a
/// pour rate beyond the setting's range is clamped here (for the engine; the simulation takes
/// the spec's, `scene`: 2,000 grains a second of 6 mm gravel are 604 g/s).
pub fn values(spec: &Spec) -> ParamValues {
    let mut v = ParamValues::default();
    let set = |v: &mut ParamValues, id: &str, x: String| v.set_text(id, &x).unwrap_or_else(|e| panic!("{id}={x}: {e}"));
    set(&mut v, "grain_material", spec.grain.into());
    let grain_kg = grain_kg(&v.to_settings(), spec.grain_size);
    let (lo, hi) = granary_engine::control::settings::limits::GRAIN_SIZE;
    set(&mut v, "grain_size", spec.grain_size.clamp(lo, hi).to_string());
    set(&mut v, "fill", spec.fill.to_string());
    set(&mut v, "auto_fill", "false".into());
    set(&mut v, "fall_height", (100.0 * spec.fall_height_m).to_string());
    set(&mut v, "aim", "0".into());
    // the cup a pour `Derived::bank_scale` times larger is looked up as similar to
    set(&mut v, "cup_size", BANK_CUP_SIZE.to_string());
    let (lo, hi) = granary_engine::control::settings::limits::POUR_RATE_G_S;
    set(&mut v, "pour_rate", flow_g_s(spec, grain_kg).clamp(lo, hi).to_string());
    set(&mut v, "seed", spec.seed.to_string());
    // a run of spheres of a grain the bank also holds in its own shape: the engine's grains
    // spheres, so that its lookup takes the spheres' entries (`Bank::select`); else the
    // material's own, whose field the sweep's checks have always rendered
    if spec.shape == Shape::Sphere
        && SHAPED
            .iter()
            .any(|&(cup, g, _)| Some(cup) == spec.cup && GRAINS[g].0 == spec.grain)
    {
        set(&mut v, "grain_shape", Shape::Sphere.id().into());
    }
    match spec.cup {
        Some(shape) => {
            set(&mut v, "pour_target", "cup".into());
            set(&mut v, "cup_shape", shape.id().into());
        }
        None => {
            set(&mut v, "pour_target", "surface".into());
            // its depth sets the spout's height (`Derived::bank_fall_offset_m`)
            set(&mut v, "cup_shape", BANK_SURFACE_CUP.id().into());
        }
    }
    v
}

/// The engine's impact speed for the scene: √(2 g h), h from the spout (the fall height above
/// the rim) down to the bed (`scene::PourScene`), m/s.
pub fn impact_speed(scene: &Scene) -> f32 {
    let depth = Cup::for_settings(&scene.settings).depth;
    let bed = scene.bed_top_m().unwrap_or(0.0);
    (2.0 * GRAVITY * (scene.settings.fall_height_m + depth - bed).max(0.002)).sqrt()
}

/// The scene of `spec`: its grains of the spec's shape (spheres of their material's volume
/// but where the sweep pours their own shape, `SHAPED`; docs/dem.md, "Shaped grains").
pub fn scene(spec: &Spec) -> Scene {
    let settings = values(spec).to_settings();
    let mut scene = Scene::with_grain_size(&settings, spec.grain_size).with_shape(spec.shape);
    if let Some(mu) = spec.friction {
        scene = scene.with_friction(mu);
    }
    // a flow beyond the pour rate's range, as the spec asks (within it, the setting's)
    let flow_g_s = flow_g_s(spec, grain_kg(&settings, spec.grain_size));
    match flow_g_s > granary_engine::control::settings::limits::POUR_RATE_G_S.1 {
        true => scene.with_flow(flow_g_s * 1e-3),
        false => scene,
    }
}

/// The spec's flow, g/s: its grains a second of `grain_kg` each.
fn flow_g_s(spec: &Spec, grain_kg: f32) -> f32 {
    spec.grains_per_s * grain_kg * 1e3
}

/// `spec` with every length `scale` times as long but the cup's (`similar_scene` pours it
/// into a cup `scale` times the bank's): grains `scale` times larger, falling `scale` times
/// further, as many poured over `sqrt(scale)` times as long.
pub fn similar_spec(spec: &Spec, scale: f32) -> Spec {
    Spec {
        grain_size: spec.grain_size * scale,
        fall_height_m: spec.fall_height_m * scale,
        grains_per_s: spec.grains_per_s / scale.sqrt(),
        pour_s: spec.pour_s * (scale as f64).sqrt(),
        ..*spec
    }
}

/// The scene similar to `spec`'s with every length `scale` times as long (Froude
/// similarity, as the engine looks a larger cup up: `Bank::select` in granary-engine): the
/// cup `scale` times the bank's size, the grains `scale` times larger falling `scale` times
/// further, as many of them poured over `sqrt(scale)` times as long. The scene and how long
/// its spout pours, s. A `scale` that takes the cup outside the `cup_size` setting's range
/// (0.5 to 2.5 times the bank's) panics.
pub fn similar_scene(spec: &Spec, scale: f32) -> (Scene, f64) {
    let large = similar_spec(spec, scale);
    // the flow set on the scene: it may be beyond the `pour_rate` setting's range
    let mut v = values(&Spec {
        grains_per_s: 0.0,
        ..large
    });
    let size = BANK_CUP_SIZE * scale;
    v.set_text("cup_size", &size.to_string())
        .unwrap_or_else(|e| panic!("cup_size={size}: {e}"));
    let scene = Scene::with_grain_size(&v.to_settings(), large.grain_size).with_shape(spec.shape);
    let flow_kg_s = large.grains_per_s * scene.grain_kg;
    (scene.with_flow(flow_kg_s), large.pour_s)
}

/// Simulates one run of `spec` (its `seed`): the pour, until all but `SETTLED_SHARE` of its
/// grains rest (at most
/// `SETTLE_MAX_S` after the last lands). The simulation and its wall time, s.
pub fn simulate(spec: &Spec) -> (Sim, f64) {
    simulate_scene(scene(spec), spec.pour_s)
}

/// `simulate` for a scene of one's own (a sweep's scene in other grains: `Scene::own_shape`),
/// the spout pouring for `pour_s`.
pub fn simulate_scene(scene: Scene, pour_s: f64) -> (Sim, f64) {
    let drop = scene.spout_m[2] - scene.bed_top_m().unwrap_or(0.0);
    // the last grain lands a fall after the spout closes (the exit speed helps: an upper bound)
    let fall_s = (2.0 * drop.max(0.0) / GRAVITY).sqrt() as f64;
    let landed = pour_s + fall_s + 0.05;
    let start = std::time::Instant::now();
    let mut sim = Sim::new(scene, pour_s);
    sim.run_until(landed);
    // every grain's collisions until it rests: a steady pour's rate is the arrival rate times
    // the collisions one grain makes in its whole life (a glass bead from 0.38 m bounces for
    // seconds; sugar rests within a fraction of one)
    while sim.time_s < landed + SETTLE_MAX_S {
        let c = sim.census();
        if c.in_flight as f64 <= SETTLED_SHARE * c.spawned as f64 {
            break;
        }
        sim.run_until(sim.time_s + 0.05);
    }
    (sim, start.elapsed().as_secs_f64())
}

/// Simulates `spec`'s runs (seeds `seed`, `seed + 1`, …) and reduces them to one entry.
pub fn run(spec: &Spec) -> Entry {
    let runs: Vec<Entry> = (0..spec.runs.max(1) as u64)
        .map(|k| run_seed(spec, spec.seed + k))
        .collect();
    merge(&runs)
}

/// Simulates one run of `spec`'s scene, with `seed`, and reduces it to a one-run entry.
pub fn run_seed(spec: &Spec, seed: u64) -> Entry {
    let spec = Spec { seed, runs: 1, ..*spec };
    let (sim, _) = simulate(&spec);
    let scene = sim.scene;
    let v_ref = impact_speed(&scene);
    let until = sim.time_s;
    let cells = reduce(&sim, v_ref);
    Entry {
        family: family_id(spec.cup).into(),
        restitution: scene.grain_material().data().restitution,
        friction: scene.grain_friction,
        fill: if spec.cup.is_some() { spec.fill } else { 0.0 },
        fall_height_m: spec.fall_height_m,
        grain_material: spec.grain.into(),
        grain_diameter_m: diameter_m(scene.grain_radius_m),
        flow_kg_s: scene.flow_kg_s,
        grains: sim.grains().len(),
        pour_s: spec.pour_s,
        simulated_s: until,
        runs: 1,
        shape: spec.shape.id().into(),
        impact_speed_m_s: v_ref,
        cells: CELLS.iter().map(|&c| c.to_string()).zip(cells).collect(),
    }
}

/// The entry of several runs of one scene (in seed order; each itself one run or a merge):
/// every count and histogram is the runs' sum and each cell's rate its count over all the
/// grains poured, so an entry merged from any split of its runs is the same. Its simulated
/// seconds are the runs' sum.
pub fn merge(parts: &[Entry]) -> Entry {
    let mut e = parts[0].clone();
    for p in &parts[1..] {
        e.grains += p.grains;
        e.simulated_s += p.simulated_s;
        e.runs += p.runs;
        for (c, q) in e.cells.values_mut().zip(p.cells.values()) {
            c.count += q.count;
            let add = |a: &mut [u64], b: &[u64]| a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
            add(&mut c.speed, &q.speed);
            add(&mut c.time, &q.time);
            for (a, b) in c.angle_by_speed.iter_mut().zip(&q.angle_by_speed) {
                add(a, b);
            }
            for (a, b) in c.speed_by_life.iter_mut().zip(&q.speed_by_life) {
                add(a, b);
            }
        }
    }
    let poured = e.grains.max(1) as f64;
    for c in e.cells.values_mut() {
        c.rate = c.count as f64 / poured;
    }
    e
}

/// How many grains a run of `spec` may pour more or fewer than its `grains_per_s` times
/// `pour_s`: a grain, as the spout counts them out, and the share by which the flow it pours
/// (`scene`'s: the `pour_rate` setting's, which snaps to steps of 0.01 g/s, or beyond the
/// setting's range the spec's own) differs from the spec's (2 mm coffee beans: 1,001 a run;
/// 0.4 mm sugar's 0.107 g/s is set as 0.11 g/s: 1,034).
pub fn grains_slack(spec: &Spec) -> usize {
    let mut v = ParamValues::default();
    if v.set_text("grain_material", spec.grain).is_err() {
        return 1;
    }
    let asked = flow_g_s(spec, grain_kg(&v.to_settings(), spec.grain_size)) as f64;
    let poured = 1e3 * scene(spec).flow_kg_s as f64;
    let per_run = spec.grains_per_s as f64 * spec.pour_s;
    1 + match asked > 0.0 {
        true => (per_run * (poured - asked).abs() / asked).ceil() as usize,
        false => 0,
    }
}

/// How many of `spec`'s runs `entry` already holds (`--reuse`): its runs when it is the same
/// scene with no more runs than `spec` asks, of the same grains each (within `grains_slack`
/// a run); else 0.
pub fn runs_held(entry: &Entry, spec: &Spec) -> u32 {
    let mut v = ParamValues::default();
    let known = v.set_text("grain_material", spec.grain).is_ok();
    let grain_m = diameter_m(grain_radius_m(&v.to_settings(), spec.grain_size));
    let per_run = (spec.grains_per_s as f64 * spec.pour_s).round() as usize;
    let same = known
        && entry.family == family_id(spec.cup)
        && entry.grain_material == spec.grain
        && Some(entry.friction) == spec.grain_friction()
        && entry.grain_diameter_m == grain_m
        && entry.fill == if spec.cup.is_some() { spec.fill } else { 0.0 }
        && entry.fall_height_m == spec.fall_height_m
        && entry.shape == spec.shape.id()
        && entry.pour_s == spec.pour_s
        && entry.runs <= spec.runs
        // the flow in g/s snaps to its step: a run may pour more or fewer than it asks
        && entry.grains.abs_diff(entry.runs as usize * per_run) <= entry.runs as usize * grains_slack(spec);
    if same {
        entry.runs
    } else {
        0
    }
}

/// An entry's grain diameter, m: twice the simulated radius, to a tenth of a micrometre (a
/// 2 mm grain of rice is 2.8 mm times a factor, 0.0019999999 m in single precision; the
/// bank's grid holds one 2 mm).
pub fn diameter_m(radius_m: f32) -> f32 {
    ((2.0 * radius_m as f64 * 1e7).round() / 1e7) as f32
}

/// Reads a bank file, of this version, of version 4 (before `Entry::shape`: spheres) or of
/// version 3 (before `Entry::friction` too: each entry's grain material gives it), as
/// `cargo xtask bank --reuse` does.
pub fn read(text: &str) -> Result<BankFile, String> {
    let mut v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if v["format"] != FORMAT {
        return Err(format!("format {}: not {FORMAT}", v["format"]));
    }
    if v["version"] == 4 {
        v["version"] = VERSION.into();
    }
    if v["version"] == 3 {
        let entries = v["entries"].as_array_mut().ok_or("no entries")?;
        for (n, e) in entries.iter_mut().enumerate() {
            let id = e["grain_material"].as_str().unwrap_or_default();
            let g = GrainMaterial::from_id(id).ok_or_else(|| format!("entry {n}: unknown grain material `{id}`"))?;
            e["friction"] = serde_json::json!(g.friction());
        }
        v["version"] = VERSION.into();
    }
    let file: BankFile = serde_json::from_value(v).map_err(|e| e.to_string())?;
    if file.version != VERSION {
        return Err(format!(
            "{} version {}: not {FORMAT} version 3, 4 or {VERSION}",
            file.format, file.version
        ));
    }
    Ok(file)
}

/// The family an entry belongs to: the cup shape's id, or "surface".
pub fn family_id(cup: Option<CupShape>) -> &'static str {
    cup.map_or("surface", CupShape::id)
}

/// Which cell a contact start belongs to (the module's rules).
pub fn classify(sim: &Sim, i: usize, v_ref: f32) -> usize {
    let c = &sim.contacts[i];
    let [x, y, z] = c.position_m;
    let a = sim.scene.grain_radius_m;
    match c.other {
        Body::Surface => SURFACE,
        Body::Cup => {
            let cup = sim.scene.cup.expect("a cup contact has a cup");
            if z < 0.5 * a && x.hypot(y) < cup.floor_radius + a {
                CUP_FLOOR
            } else {
                let ring = (1..RINGS).take_while(|&k| z >= cup.ring_edges[k]).count();
                WALL_RING_0 + ring
            }
        }
        Body::Grain => {
            let [vz_grain, vz_other] = sim.falling[i];
            let falls = |vz: f32| vz < -STREAM_FALL_SHARE * v_ref;
            if falls(vz_grain) && falls(vz_other) {
                STREAM
            } else if (x - sim.scene.spout_m[0]).hypot(y - sim.scene.spout_m[1]) < sim.scene.spout_radius_m {
                IMPACT_ZONE
            } else {
                PILE_SURFACE
            }
        }
    }
}

/// The cell's mean normal at a contact's normal `n` (unit): up, the wall's inward horizontal
/// at the contact's azimuth, or the stream's axis at the normal's own azimuth.
fn mean_normal(cell: usize, position: [f32; 3], n: [f32; 3]) -> [f32; 3] {
    let unit = |v: [f32; 3]| {
        let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt().max(1e-12);
        v.map(|x| x / l)
    };
    match cell {
        c if (WALL_RING_0..WALL_RING_0 + RINGS).contains(&c) => unit([-position[0], -position[1], 0.0]),
        STREAM => {
            let h = n[0].hypot(n[1]).max(1e-12);
            unit([n[0] / h, n[1] / h, STREAM_RISE])
        }
        _ => [0.0, 0.0, 1.0],
    }
}

/// Every contact of the run, by cell: rates per grain poured and the histograms.
pub fn reduce(sim: &Sim, v_ref: f32) -> Vec<CellStats> {
    let mut cells = vec![CellStats::empty(); CELLS.len()];
    let poured = sim.grains().len().max(1) as f64;
    // a grain arrives a fall after it leaves the spout: v = g t (the engine's arrivals,
    // `scene::PourScene::step`, are the spout's flow delayed by sqrt(2 h / g) = v / g)
    let arrival_s = (v_ref / GRAVITY) as f64;
    for (i, c) in sim.contacts.iter().enumerate() {
        let cell = classify(sim, i, v_ref);
        let s = &mut cells[cell];
        s.count += 1;
        let speed_bin = speed_bin(c.speed_m_s, v_ref);
        s.speed[speed_bin] += 1;
        let n = c.normal;
        let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt().max(1e-12);
        let n = n.map(|x| x / l);
        let m = mean_normal(cell, c.position_m, n);
        let cos = (n[0] * m[0] + n[1] * m[1] + n[2] * m[2]).abs().min(1.0);
        let angle = cos.acos() / std::f32::consts::FRAC_PI_2;
        s.angle_by_speed[speed_bin][((angle * ANGLE_BINS as f32) as usize).min(ANGLE_BINS - 1)] += 1;
        let phase = (c.time_s / WINDOW_S).fract();
        s.time[((phase * TIME_BINS as f64) as usize).min(TIME_BINS - 1)] += 1;
        s.speed_by_life[life_bin(c.time_s - sim.born_s[i] - arrival_s)][speed_bin] += 1;
    }
    for s in &mut cells {
        s.rate = s.count as f64 / poured;
    }
    cells
}

/// The speed bin of a contact of `speed_m_s` in a scene whose impact speed is `v_ref`
/// (log-spaced from `SPEED_LO` to `SPEED_HI` of it; beyond either end, the end bin).
pub fn speed_bin(speed_m_s: f32, v_ref: f32) -> usize {
    let span = (SPEED_HI / SPEED_LO).ln();
    let u = ((speed_m_s / v_ref / SPEED_LO).ln() / span).clamp(0.0, 1.0 - 1e-6);
    (u * SPEED_BINS as f32) as usize
}

/// The lifetime bin of a contact `age_s` seconds after its grain arrived (before the
/// arrival, or a contact without a poured grain: the first bin; beyond the last edge: the
/// last bin).
pub fn life_bin(age_s: f64) -> usize {
    LIFE_EDGES_S[1..LIFE_BINS]
        .iter()
        .take_while(|&&e| age_s >= e as f64)
        .count()
}

/// The bank file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BankFile {
    pub format: String,
    pub version: u32,
    pub source: String,
    pub speed_bins: Bins,
    pub angle_bins: Bins,
    pub time_bins: usize,
    /// The lifetime profile's bin edges, s (`LIFE_EDGES_S`).
    pub life_edges_s: Vec<f32>,
    pub cells: Vec<String>,
    pub entries: Vec<Entry>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bins {
    pub lo: f32,
    pub hi: f32,
    pub n: usize,
}

impl BankFile {
    pub fn new(source: String, entries: Vec<Entry>) -> BankFile {
        BankFile {
            format: FORMAT.into(),
            version: VERSION,
            source,
            speed_bins: Bins {
                lo: SPEED_LO,
                hi: SPEED_HI,
                n: SPEED_BINS,
            },
            angle_bins: Bins {
                lo: 0.0,
                hi: std::f32::consts::FRAC_PI_2,
                n: ANGLE_BINS,
            },
            time_bins: TIME_BINS,
            life_edges_s: LIFE_EDGES_S.to_vec(),
            cells: CELLS.iter().map(|c| c.to_string()).collect(),
            entries,
        }
    }
}

/// The swept axes (docs/dem.md, "The sweep"): every cup shape and the pour onto the surface;
/// six grains standing for the restitutions and frictions of the table (sugar: 0.5 and
/// 0.45, glass beads 0.85 and 0.4, rice 0.5 and 0.35, gravel 0.5 and 0.6, coffee beans 0.4
/// and 0.35, lentils 0.45 and 0.32; each at 2 and 4 mm, gravel and coffee beans at 6 mm
/// too, and sizes under 2 mm in the families whose factory presets ask them:
/// `SMALL_SIZES`); fills of the pre-filled bed; five fall heights over the factory presets'
/// 8 to 40 cm
/// and a grain's own beyond them (`FALLS_M`; a grain's
/// collisions per grain poured fall faster than linearly with the fall: at 15 and 30 cm only,
/// a pour onto the surface from 22 cm had 11 % fewer on its pile than the interpolation).
///
/// Friction is an axis at sugar's restitution, where rice and gravel are: a grain that slides more
/// easily runs off the spot it lands on, so rice's collisions shift from the impact zone to
/// the pile and the wall (in a jar on a bed at 0.3, from 30 cm, seed 1: the impact zone 8.1 a
/// grain poured against sugar's 11.4, the pile 13.1 against 10.1, the wall 0.43 against 0.16,
/// the same 21.7 in all cells), and rice
/// looked up as sugar had a third more on its pile than its own simulation (the §6.2 check).
/// Gravel (friction 0.6) bounds the table's frictions at that restitution from above (sand
/// 0.55, gravel), coffee beans (restitution 0.4) and lentils (0.45, friction 0.32) its
/// restitutions from below.
/// Each grain's factor on its material's diameter for the 2 mm size (`SIZES` scales it).
pub const GRAINS: [(&str, f32); 7] = [
    ("sugar", 4.0),
    ("glass_beads_2mm", 1.0),
    ("rice", 2.0 / 2.8),
    ("gravel", 2.0 / 6.0),
    ("coffee_beans", 2.0 / 7.0),
    ("lentils", 2.0 / 3.9),
    ("glass_beads_2mm", 1.0),
];
/// Each grain's friction on itself where it is not its material's: the last grain is a glass
/// bead of friction 0.6 (gravel's), so that at the beads' restitution the frictions span the
/// table's between sugar and the beads as they do at sugar's: sand (restitution 0.6,
/// friction 0.55) and steel shot (0.8, 0.57) were looked up at 0.4 there, clamped.
pub const GRAIN_FRICTIONS: [Option<f32>; 7] = [None, None, None, None, None, None, Some(0.6)];
/// Runs an entry, per grain of `GRAINS`: a glass bead bounces out of the cup, and one
/// 1,000-grain run is not enough to say how often (four seeds of the bowl at fill 0.3 made
/// 3.0, 2.3, 1.9 and 2.4 table collisions a bead poured; the wall's lowest ring ±15 %, the
/// impact zone ±8 %): three runs. Sugar and rice stay where they land (sugar's rates in the
/// §6.2 check within 4 to 8 % with one run), and so do the others (restitution 0.5 at most).
pub const RUNS: [u32; 7] = [1, 3, 1, 1, 1, 1, 3];
/// The pre-filled bed's tops, in the cup's depth: empty to full (a bed at the rim: the pour
/// runs over it onto the surface, as a full cup overflows; the fill of a pour into a full
/// cup, `sugar_overflowing_a_mug`, passes 0.9). A bed of 0.05 covers the floor: an empty
/// cup's grains hit its bare floor two to four times a grain, a bed's none, and between 0 and
/// 0.3 alone the lookup gave a pour a second in (fills 0.01 to 0.1 in the factory presets)
/// most of the bare floor's hits (sugar in the mug at 0.041: 3.2 a grain, its simulation
/// none; docs/dem.md, "The §6.2 check for every factory preset").
pub const FILLS: [f32; 6] = [0.0, 0.05, 0.3, 0.6, 0.9, 1.0];
/// The falls above the rim, m, per grain of `GRAINS`: 8 to 40 cm, the factory presets'
/// range, and a grain's own further where its factory presets fall further, so that no
/// factory scene clamps (`granary inspect bank`): coffee beans into the glass jar from 5 cm
/// as well (the preset's 7.1 cm as the similar pour into the bank's cup), gravel onto soil
/// from 45 cm (its 41.9 cm). Each grain's falls are the same for all its sizes and fills.
pub const FALLS_M: [&[f32]; 7] = [
    &[0.08, 0.15, 0.22, 0.3, 0.4],
    &[0.08, 0.15, 0.22, 0.3, 0.4],
    &[0.08, 0.15, 0.22, 0.3, 0.4],
    &[0.08, 0.15, 0.22, 0.3, 0.4, 0.45],
    &[0.05, 0.08, 0.15, 0.22, 0.3, 0.4],
    &[0.08, 0.15, 0.22, 0.3, 0.4],
    &[0.08, 0.15, 0.22, 0.3, 0.4],
];
/// Grains poured a second and the pour's length: 1,000 grains a run.
pub const GRAINS_PER_S: f32 = 2000.0;
pub const POUR_S: f64 = 0.5;

/// The grain sizes of each grain of `GRAINS`, as factors on its 2 mm: 2 and 4 mm (the
/// factory presets' grains are 0.2 to 7 mm; rice, lentils, plastic discs, coffee beans and
/// gravel 2.8 to 7 mm), and rice at its own 2.8 mm too: its collisions are not monotone in
/// the size between 2 and 4 mm (in a jar on a bed at 0.3, from 30 cm, 21.1, 23.9 and 20.5 a
/// grain poured in the impact zone and on the pile together at 2, 2.8 and 4 mm, the impact
/// zone's 8.0, 12.4 and 11.8: the means of four, two and one seeds; interpolated
/// between 2 and 4 mm, its impact zone in the §6.2 check was 16 % under its simulation's),
/// and gravel and coffee beans at 6 mm too: their factory presets pour 6 mm gravel onto soil
/// and 5 mm coffee beans (7 mm in the jar 1.4 times the bank's cup). 2,000 grains a second
/// of 6 mm gravel are 604 g/s, beyond the `pour_rate` setting's 200: the simulation takes
/// the flow the spec asks (`scene`). A size under 2 mm needs longer runs than a thousand
/// grains to be a steady pour (docs/dem.md, "Smaller grains need longer pours"); two are
/// swept, each in the one family that asks it (`SMALL_SIZES`).
pub const SIZES: [&[f32]; 7] = [
    &[1.0, 2.0],
    &[1.0, 2.0],
    &[1.0, 1.4, 2.0],
    &[1.0, 2.0, 3.0],
    &[1.0, 2.0, 3.0],
    &[1.0, 2.0],
    &[1.0],
];

/// Sizes under 2 mm, each in the one family whose factory presets ask it, as (family, grain
/// of `GRAINS`, factor on its 2 mm), a family's sizes of one grain ascending: rice at 1.4 mm
/// in the bowl (`rice_plastic_bowl`'s 2.8 mm grains in a bowl 1.8 times the bank's are
/// 1.56 mm in the bank's bowl, Froude similarity) and lentils at 1.4 mm in the metal cup
/// (`lentils_aluminium_pot`'s 3.9 mm in a pot twice the bank's cup: 1.95 mm); sugar at 0.4
/// and 0.5 mm in the mug (the four sugar presets' 0.5 mm, `salt_porcelain_cup`'s 0.44 mm
/// salt, restitution and friction sugar's, in a cup 0.9 times the bank's); at 0.9 mm in the
/// metal cup the four grains about steel shot's restitution and friction (sugar, gravel and
/// the beads of friction 0.4 and 0.6: `steel_shot_tin`'s 1 mm shot in a tin 1.1 times the
/// bank's cup is 0.91 mm; the beads' 0.9 mm is also below `glass_beads_steel_cup`'s 1 mm);
/// and the beads at 0.5 mm in the tumbler (`fine_glass_beads_tumbler`); onto the surface
/// (`None`) the same four at 1 mm (`steel_shot_onto_a_steel_plate`'s 1 mm shot; sand onto
/// concrete's 0.2 mm, between sugar, gravel and the beads, is nearer it than 2 mm). Poured as
/// the larger sizes are, the first thousand grains (docs/dem.md, "Smaller grains need longer
/// pours" and "Sizes under 2 mm": what a thousand small grains are of a pour, and what that
/// leaves).
pub const SMALL_SIZES: [(Option<CupShape>, usize, f32); 13] = [
    (Some(CupShape::Bowl), 2, 0.7),
    (Some(CupShape::MetalCup), 5, 0.7),
    (Some(CupShape::Mug), 0, 0.2),
    (Some(CupShape::Mug), 0, 0.25),
    (Some(CupShape::MetalCup), 0, 0.45),
    (Some(CupShape::MetalCup), 1, 0.45),
    (Some(CupShape::MetalCup), 3, 0.45),
    (Some(CupShape::MetalCup), 6, 0.45),
    (Some(CupShape::Tumbler), 1, 0.25),
    (None, 0, 0.5),
    (None, 1, 0.5),
    (None, 3, 0.5),
    (None, 6, 0.5),
];

/// Grains swept in their own shape as well as spheres, as (family, grain of `GRAINS`, its
/// sizes as factors on its 2 mm), every fill and the grain's falls: sugar's cubes in the mug
/// at 0.4, 0.5, 2 and 4 mm (all its sizes there), where the default preset and the other
/// sugar presets and salt pour. In its own shape sugar makes two to five times the spheres'
/// collisions in the impact zone (a grain with corners does not roll off the spot it lands
/// on: docs/dem.md, "Sizes under 2 mm"), and the lookup takes a grain's own shape where the
/// bank holds it (`Bank::select` in granary-engine; docs/dem.md, "Grains in their own
/// shape").
pub const SHAPED: [(CupShape, usize, &[f32]); 1] = [(CupShape::Mug, 0, &[0.2, 0.25, 1.0, 2.0])];

/// Falls beyond a grain's own in one family alone, as (family, grain of `GRAINS`, factor on
/// its 2 mm, fall, m): sugar and glass beads at 2 and 1 mm from 45 cm onto the surface, where
/// `sand_onto_concrete` falls 40.8 cm (sand, restitution 0.6, is looked up between sugar's
/// and gravel's frictions at restitution 0.5 and the beads' at 0.85, at 1 mm, the smallest onto the surface).
pub const EXTRA_FALLS: [(Option<CupShape>, usize, f32, f32); 6] = [
    (None, 0, 1.0, 0.45),
    (None, 1, 1.0, 0.45),
    (None, 6, 1.0, 0.45),
    (None, 0, 0.5, 0.45),
    (None, 1, 0.5, 0.45),
    (None, 6, 0.5, 0.45),
];

/// Every run of the sweep.
pub fn sweep() -> Vec<Spec> {
    let mut specs = Vec::new();
    // grain g of `GRAINS` at `size` (a factor on its 2 mm), in `shape`, at every fill of
    // `cup` (bare ground onto the surface) and each of `falls`
    let mut add = |cup: Option<CupShape>, g: usize, size: f32, falls: &[f32], shape: Shape| {
        let fills: &[f32] = if cup.is_some() { &FILLS } else { &[0.0] };
        for &fill in fills {
            for &fall_height_m in falls {
                specs.push(Spec {
                    cup,
                    grain: GRAINS[g].0,
                    grain_size: GRAINS[g].1 * size,
                    fill,
                    fall_height_m,
                    grains_per_s: GRAINS_PER_S,
                    pour_s: POUR_S,
                    seed: 1,
                    runs: RUNS[g],
                    friction: GRAIN_FRICTIONS[g],
                    shape,
                });
            }
        }
    };
    let families = CupShape::ALL.map(Some).into_iter().chain([None]);
    for cup in families {
        for (g, (sizes, falls)) in SIZES.into_iter().zip(FALLS_M).enumerate() {
            let small = SMALL_SIZES
                .iter()
                .filter(|&&(family, grain, _)| family == cup && grain == g)
                .map(|&(.., size)| size);
            for size in small.chain(sizes.iter().copied()) {
                let extra = EXTRA_FALLS
                    .iter()
                    .filter(|&&(family, grain, at, _)| family == cup && grain == g && at == size)
                    .map(|&(.., fall)| fall);
                let falls: Vec<f32> = falls.iter().copied().chain(extra).collect();
                add(cup, g, size, &falls, Shape::Sphere);
            }
        }
    }
    // the grains swept in their own shape too, after the spheres (so a sweep's first scenes
    // keep their places)
    for &(family, g, sizes) in &SHAPED {
        let shape = GrainMaterial::from_id(GRAINS[g].0).map_or(Shape::Sphere, Shape::of);
        for &size in sizes {
            add(Some(family), g, size, FALLS_M[g], shape);
        }
    }
    specs
}

/// The sweep's check (`cargo xtask bank-shards`, docs/dem.md "Sharded sweeps"): five scenes
/// of the sweep's axes — each family but the metal cup, each grain, 2, 2.8 and 4 mm, every
/// fill, empty to 0.9 — poured short (40 grains a run), nine runs: glass beads run three seeds,
/// so a scene's runs fall in different shards and their merge is checked too. About 10 s of
/// one core.
pub fn check_sweep() -> Vec<Spec> {
    let spec = |cup, (grain, size): (&'static str, f32), fill, fall_height_m, runs| Spec {
        cup,
        grain,
        grain_size: size,
        fill,
        fall_height_m,
        grains_per_s: GRAINS_PER_S,
        pour_s: 0.02,
        seed: 1,
        runs,
        friction: None,
        shape: Shape::Sphere,
    };
    let [sugar, beads, rice, ..] = GRAINS;
    vec![
        spec(Some(CupShape::Mug), sugar, 0.0, 0.15, 1),
        spec(Some(CupShape::Tumbler), beads, 0.3, 0.22, 3),
        spec(Some(CupShape::Jar), (rice.0, rice.1 * 1.4), 0.6, 0.3, 1),
        spec(None, (sugar.0, 2.0 * sugar.1), 0.0, 0.08, 1),
        spec(Some(CupShape::Bowl), (beads.0, 2.0 * beads.1), 0.9, 0.4, 3),
    ]
}

/// A grain's radius, m, `grain_size` times the material's of `settings` (unclamped, as
/// `Scene::with_grain_size` takes it).
fn grain_radius_m(settings: &granary_engine::Settings, grain_size: f32) -> f32 {
    let mut s = *settings;
    s.grain_size = grain_size;
    s.grain_radius_m()
}

/// A grain's mass, kg, `grain_size` times the material's diameter.
fn grain_kg(settings: &granary_engine::Settings, grain_size: f32) -> f32 {
    let a = grain_radius_m(settings, grain_size);
    settings.grain_density() * 4.0 / 3.0 * std::f32::consts::PI * a.powi(3)
}

/// The check that a grain's size and the flow are normalised out (rates per grain poured,
/// speeds over the impact speed), so the bank need not sweep them (docs/dem.md): the sweep's
/// middle scene (a mug of sugar, bed at 0.3, fall 0.3 m), then 1 mm grains instead of 2 mm,
/// then twice the grains a second.
pub fn normalisation() -> [Spec; 3] {
    let base = Spec {
        cup: Some(CupShape::Mug),
        grain: "sugar",
        grain_size: 4.0,
        fill: 0.3,
        fall_height_m: 0.3,
        grains_per_s: GRAINS_PER_S,
        pour_s: POUR_S,
        seed: 1,
        runs: 1,
        friction: None,
        shape: Shape::Sphere,
    };
    [
        base,
        Spec {
            grain_size: 2.0,
            ..base
        },
        Spec {
            grains_per_s: 2.0 * GRAINS_PER_S,
            pour_s: 0.5 * POUR_S,
            ..base
        },
    ]
}

/// Energy per grain poured of a cell, in units of the impact speed squared: rate E[v²].
pub fn energy_per_grain(c: &CellStats) -> f64 {
    // rate × Σ before the division, not rate × `speed_moment(2)`: the same rounding as before.
    c.speed_power_sum(2).map_or(0.0, |(sum, total)| c.rate * sum / total)
}

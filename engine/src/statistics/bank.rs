//! The collision databank: per-cell collision statistics measured from rigid-body simulations
//! of pours (`cargo xtask bank`, crate granary-dem), which the window/cell generator can draw
//! from instead of its hand-written model (`statistics` = bank).
//!
//! Thesis 7.1 proposes exactly this: precompute the local PDFs of the probabilistic generator
//! (5.5–5.6: a Poisson count per window and cell, eq. 5.6, and histograms of the collisions'
//! speeds and normals, "the simple histogram reconstruction method") from simulations over a
//! range of scene parameters, and look them up while synthesising. The file (format
//! "granary-bank", version 5; docs/architecture.md, "The collision databank") holds entries
//! per family (a cup shape, or the pour onto the surface) and grain shape (spheres of the
//! grains' volume, and some grains in their own shape too) for grains of some restitutions,
//! each restitution at one or more frictions of its own, each such grain at diameters of
//! its own, and every size on the same full grid over fill x fall height, each entry with, per
//! cell, the collisions per arriving grain, the counts per speed bin (log-spaced, in units
//! of the impact speed sqrt(2 g h)) and, for each speed bin, the counts per normal-angle bin
//! (linear, 0..pi/2 from the cell's mean normal): the angle's histogram given the speed, so
//! that the generator draws a collision's normal for its speed (a pour's fast landings and
//! its slow contacts meet the bed at different angles, and a grain–grain collision's sound
//! depends on its normal's direction to the listener), and the lifetime profile with its
//! speeds: the counts by the time since the collision's grain arrived (`LIFE_EDGES_S`) and
//! by speed, so that the generator spreads a grain's collisions over its life after its
//! arrival (a glass bead bounces on for a second) instead of drawing them all as it
//! arrives, each as fast as collisions that long after a landing are (ever slower).
//!
//! `Bank::parse` checks everything once (outside the audio thread); `Bank::lookup` is
//! allocation-free: multilinear interpolation over the family's grid, clamped to it (the
//! friction at each of the two restitutions bracketing the grain's, over that restitution's
//! own frictions), mixing the corners' histograms weighted by their rates; between the empty
//! cup and the first bed the floor's hits fade with the bed's height in grain diameters
//! (`FLOOR_FADE_DIAMETERS`, measured from poured heaps: docs/dem.md, "The floor under a thin
//! bed").

use crate::base::materials::PACKING_FRACTION;
use crate::base::window::{cumulative, Cell};
use crate::control::choices::PourTarget;
use crate::control::choices::{CupShape, Shape};
use crate::control::settings::Settings;
use crate::derived::cups::{Cup, RINGS};
use crate::derived::BANK_CUP_SIZE;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::OnceLock;

/// The file format's name and the version this build reads.
pub const FORMAT: &str = "granary-bank";
pub const VERSION: u64 = 5;
/// Speed and angle bins: the generator's histograms' (`generator::Shapes`), bin for bin.
pub const SPEED_BINS: usize = crate::base::window::SPEED_BINS;
pub const ANGLE_BINS: usize = crate::base::window::ANGLE_BINS;

/// The lifetime profile's bins (format version 3 on): a collision's time since its grain
/// arrived, s. The first bin (under 5 ms, two generator windows) is the arrival's own
/// collisions, drawn with the arrivals; the others are drawn from the arrivals that many
/// seconds ago (`generator::bank_pdf`). Log-spaced on to 2 s, the last bin to the
/// simulation's end (a glass bead bounces on for seconds).
pub const LIFE_BINS: usize = 10;
pub const LIFE_EDGES_S: [f32; LIFE_BINS + 1] = [0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 4.0];

/// The banked cells' ids, in the generator's order (`window::CELLS` less `Settling`,
/// which the bank does not hold: the engine's settling model stays).
pub const CELL_IDS: [&str; BANKED_CELLS] = [
    "impact_zone",
    "cup_floor",
    "wall_ring_0",
    "wall_ring_1",
    "wall_ring_2",
    "pile_surface",
    "stream",
    "surface",
];
pub const BANKED_CELLS: usize = 8;

/// The bank's index of a generator cell; `None` for `Settling`.
pub fn bank_cell(cell: Cell) -> Option<usize> {
    match cell {
        Cell::ImpactZone => Some(0),
        Cell::CupFloor => Some(1),
        Cell::WallRing(k) if k < RINGS => Some(WALL_RING_0 + k),
        Cell::WallRing(_) => None,
        Cell::PileSurface => Some(5),
        Cell::Stream => Some(6),
        Cell::Surface => Some(7),
        Cell::Settling => None,
    }
}

/// What a bank's grid is simulated for: a cup shape, or the pour onto the bare surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Cup(CupShape),
    Surface,
}

impl Family {
    pub const ALL: [Family; 6] = [
        Family::Cup(CupShape::Mug),
        Family::Cup(CupShape::Tumbler),
        Family::Cup(CupShape::Bowl),
        Family::Cup(CupShape::Jar),
        Family::Cup(CupShape::MetalCup),
        Family::Surface,
    ];

    /// The family's id in the file: the cup shape's id (`CupShape::id`) or `surface`.
    pub fn id(self) -> &'static str {
        match self {
            Family::Cup(s) => s.id(),
            Family::Surface => "surface",
        }
    }

    pub fn from_id(id: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.id() == id)
    }

    /// The family a pour of `settings` is looked up in: `surface` for a pour onto the
    /// surface, else the cup's resolved shape.
    pub fn of(settings: &Settings) -> Family {
        match settings.pour_target {
            PourTarget::Surface => Family::Surface,
            PourTarget::Cup => Family::Cup(settings.resolved_cup_shape()),
        }
    }

    fn index(self) -> usize {
        Family::ALL.iter().position(|&f| f == self).unwrap_or(0)
    }
}

/// What is wrong with a bank file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BankError {
    #[error("not a bank file: {0}")]
    Json(String),
    #[error("format `{0}`: expected `{FORMAT}`")]
    Format(String),
    #[error("version {0}: this build reads versions 4 (spheres only) and {VERSION}")]
    Version(u64),
    #[error("{axis}: {detail}")]
    Bins { axis: &'static str, detail: String },
    #[error("`cells`: {0}")]
    Cells(String),
    #[error("{entry}: unknown family `{family}` (expected one of mug, tumbler, bowl, jar, metal_cup, surface)")]
    Family { entry: String, family: String },
    #[error("{entry}: unknown shape `{shape}` (expected one of sphere, rice, lentil, disc, bean, cube, stone)")]
    Shape { entry: String, shape: String },
    #[error("{entry}: cell `{cell}` is missing")]
    MissingCell { entry: String, cell: &'static str },
    #[error("{entry}: unknown cell `{cell}`")]
    UnknownCell { entry: String, cell: String },
    #[error("{entry}, cell `{cell}`: `{histogram}` has {got} bins, expected {expected}")]
    HistogramLength {
        entry: String,
        cell: &'static str,
        histogram: String,
        got: usize,
        expected: usize,
    },
    #[error("{at}: {value} is not a finite number >= 0")]
    Number { at: String, value: f64 },
    #[error("{entry}, cell `{cell}`: {detail}")]
    Counts {
        entry: String,
        cell: &'static str,
        detail: String,
    },
    #[error("family `{family}`: not a full grid of fill x fall_height_m under every (restitution, friction, grain_diameter_m): {detail}")]
    Grid { family: &'static str, detail: String },
    #[error("the bank has no entries")]
    Empty,
}

/// The file as written (numbers as JSON gives them; checked by `Bank::parse`).
#[derive(Deserialize)]
struct RawBank {
    format: String,
    version: u64,
    #[serde(default)]
    source: String,
    speed_bins: RawBins,
    angle_bins: RawBins,
    time_bins: usize,
    life_edges_s: Vec<f64>,
    cells: Vec<String>,
    entries: Vec<RawEntry>,
}

#[derive(Deserialize)]
struct RawBins {
    lo: f64,
    hi: f64,
    n: usize,
}

#[derive(Deserialize)]
struct RawEntry {
    family: String,
    restitution: f64,
    friction: f64,
    grain_diameter_m: f64,
    fill: f64,
    fall_height_m: f64,
    /// The grains' shape (`Shape::id`); absent: spheres (every entry of a version 4 file).
    #[serde(default)]
    shape: Option<String>,
    cells: BTreeMap<String, RawCell>,
}

#[derive(Deserialize)]
struct RawCell {
    rate: f64,
    count: f64,
    speed: Vec<f64>,
    angle_by_speed: Vec<Vec<f64>>,
    time: Vec<f64>,
    speed_by_life: Vec<Vec<f64>>,
}

/// One cell of one entry: its rate, its speed histogram, its joint speed–angle histogram
/// and its lifetime profile as shares (each sums to 1, or all 0 for a cell without
/// collisions).
#[derive(Debug, Clone, Copy, PartialEq)]
struct CellData {
    rate: f32,
    speed: [f32; SPEED_BINS],
    angle_by_speed: [[f32; ANGLE_BINS]; SPEED_BINS],
    speed_by_life: [[f32; SPEED_BINS]; LIFE_BINS],
}

/// One family's entries on its grid, a tree of four levels: restitutions, then each
/// restitution's frictions (its grains), then each grain's diameters (its sizes), then each
/// size's fall heights, each level's values ascending and its own (the bank sweeps a
/// friction, a size or a fall only where a material needs it), and under every size and fall
/// the same fills. `by_restitution[i]`: the grains at `restitutions[i]`, `frictions[g]` grain
/// g's friction; `by_grain[g]`: grain g's sizes, `diameters[s]` size s's diameter, m, and
/// `ln_diameters[s]` its natural logarithm (a lookup interpolates in the logarithm of the
/// size); `by_size[s]`: size s's falls, `falls[k]` fall k's height above the rim, m.
/// `fills`: ascending and distinct. Entry (s, j, k) — size s, fill j, fall k of
/// `by_size[s]` — at `index(&by_size, fills.len(), s, j, k)`: the sizes' entries one after
/// another, each fill's falls in a run.
#[derive(Debug, Clone, PartialEq)]
struct Grid {
    restitutions: Vec<f32>,
    by_restitution: Vec<Range<usize>>,
    frictions: Vec<f32>,
    by_grain: Vec<Range<usize>>,
    diameters: Vec<f32>,
    ln_diameters: Vec<f32>,
    by_size: Vec<Range<usize>>,
    falls: Vec<f32>,
    fills: Vec<f32>,
    cells: Vec<[CellData; BANKED_CELLS]>,
    /// Each corner's wall-hit profile (`WallProfile`, at its own fill), as `cells`: bank
    /// data alone, so made once, when the bank is parsed.
    profiles: Vec<WallProfile>,
    /// For a cup: its depth in the bank's scenes, m (0 onto the surface), and per size, where
    /// its grain heaps (`FLOOR_FADE_MAX_RESTITUTION`), the floor's fade over its empty cup's
    /// run (`floor_fade_mean`); made when the bank is parsed.
    depth_m: f32,
    floor_fade: Vec<Option<f32>>,
}

/// An entry's key: restitution, friction, grain diameter (m), fill, fall height (m).
const KEYS: usize = 5;
/// A parsed entry: its keys and its cells.
type KeyedEntry = ([f32; KEYS], [CellData; BANKED_CELLS]);

/// A parsed, checked bank.
#[derive(Debug, Clone, PartialEq)]
pub struct Bank {
    /// What produced it (the file's free text).
    pub source: String,
    /// The speed bins' range, in units of the impact speed (log-spaced), and the angle
    /// bins', rad (linear).
    pub speed_range: (f32, f32),
    pub angle_range: (f32, f32),
    /// Each family's grid of spheres.
    grids: [Option<Grid>; 6],
    /// The grids of grains in their own shape, a family and shape each (`Bank::select`).
    shaped: Vec<(Family, Shape, Grid)>,
}

/// One axis of a lookup: the value asked, the value used (the nearest within the grid),
/// and whether they differ (outside the bank's range: nearest entry used).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Axis {
    pub asked: f32,
    pub used: f32,
    pub clamped: bool,
}

/// One cell of a lookup: collisions per arriving grain, and the mixture's speed
/// distribution and joint speed–angle distribution as shares per bin (each sums to 1, or
/// all 0 where the rate is 0): `angle_by_speed[i][j]` is the share of the cell's collisions
/// in speed bin i and angle bin j, so row i sums to `speed[i]`; `speed_by_life[k][i]` the
/// share made in speed bin i between `LIFE_EDGES_S[k]` and `[k + 1]` seconds after their
/// grain arrived, so column i sums to `speed[i]` and row k to `life[k]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellLookup {
    pub rate: f32,
    pub speed: [f32; SPEED_BINS],
    pub angle_by_speed: [[f32; ANGLE_BINS]; SPEED_BINS],
    /// Each row of `angle_by_speed` summed bin by bin (`window::cumulative`), as the
    /// generator draws a collision's angle from it: summed once a lookup
    /// (`Bank::lookup_at`) rather than every draw.
    pub angle_cdf: [[f32; ANGLE_BINS]; SPEED_BINS],
    pub speed_by_life: [[f32; SPEED_BINS]; LIFE_BINS],
    pub life: [f32; LIFE_BINS],
}

impl CellLookup {
    const ZERO: CellLookup = CellLookup {
        rate: 0.0,
        speed: [0.0; SPEED_BINS],
        angle_by_speed: [[0.0; ANGLE_BINS]; SPEED_BINS],
        // rows without collisions are drawn evenly (`window::cumulative`)
        angle_cdf: [[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]; SPEED_BINS],
        speed_by_life: [[0.0; SPEED_BINS]; LIFE_BINS],
        life: [0.0; LIFE_BINS],
    };

    /// Adds `w` of the corner's cell `c`: its rate, and its histograms in the ratio of the
    /// rates (shares of the rate, made shares of the mixture's speeds by `lookup`).
    fn mix(&mut self, c: &CellData, w: f32) {
        self.rate += w * c.rate;
        let m = w * c.rate;
        if m == 0.0 {
            // no collisions here: nothing to mix
            return;
        }
        for (s, &x) in self.speed.iter_mut().zip(&c.speed) {
            *s += m * x;
        }
        for (row, c_row) in self.speed_by_life.iter_mut().zip(&c.speed_by_life) {
            for (a, &x) in row.iter_mut().zip(c_row) {
                *a += m * x;
            }
        }
        // a speed bin without collisions has no angles (its row is 0)
        for ((row, c_row), _) in self
            .angle_by_speed
            .iter_mut()
            .zip(&c.angle_by_speed)
            .zip(&c.speed)
            .filter(|(_, &share)| share > 0.0)
        {
            for (a, &x) in row.iter_mut().zip(c_row) {
                *a += m * x;
            }
        }
    }

    /// The mean time from a grain's arrival to its collisions in the cell, s (each
    /// lifetime bin at its middle).
    pub fn mean_life_s(&self) -> f32 {
        self.life
            .iter()
            .zip(LIFE_EDGES_S.windows(2))
            .map(|(&w, e)| w * 0.5 * (e[0] + e[1]))
            .sum()
    }

    /// The angle distribution over all speeds (shares per angle bin).
    pub fn angle(&self) -> [f32; ANGLE_BINS] {
        std::array::from_fn(|j| self.angle_by_speed.iter().map(|row| row[j]).sum())
    }
}

/// What the bank gives for one pour state (`Bank::lookup`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lookup {
    /// The family asked for, and the one used (another when the bank lacks it).
    pub asked: Family,
    pub family: Family,
    /// The grains' shape whose entries were used: their own where the bank holds it for the
    /// pour (`Bank::select`), else spheres.
    pub shape: Shape,
    pub restitution: Axis,
    /// The grains' friction against each other (dynamic). `used`: the mean of the frictions
    /// used at the two restitutions bracketing the grain's, weighted as they are; `clamped`
    /// when either is outside its restitution's frictions (a restitution banked at one
    /// friction is clamped to it for any other).
    pub friction: Axis,
    /// The grains' diameter, m.
    pub grain_diameter_m: Axis,
    pub fill: Axis,
    /// The spout's height above the rim, m.
    pub fall_height_m: Axis,
    /// The pour's length scale over the bank's scenes (`Bank::select`): the grains'
    /// diameter and the fall height above are asked at the pour's over this.
    pub scale: f32,
    /// As `Bank::speed_range` and `Bank::angle_range`.
    pub speed_range: (f32, f32),
    pub angle_range: (f32, f32),
    /// By bank cell (`CELL_IDS`, `bank_cell`).
    pub cells: [CellLookup; BANKED_CELLS],
}

/// Where a pour's settings sit in a family's grid (`Bank::select`): what `Bank::lookup`
/// needs besides the fill, made once per change of the settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Selection {
    asked: Family,
    family: Family,
    /// The grains' shape whose grid is used, and that grid: `None`, the family's spheres;
    /// `Some(i)`, `Bank::shaped[i]`.
    shape: Shape,
    grid: Option<usize>,
    restitution: Axis,
    friction: Axis,
    grain_diameter_m: Axis,
    fall_height_m: Axis,
    scale: f32,
    /// The grains' sizes with their weights, and each size's two fall heights with their
    /// weights within the size (`heights[2 i]` and `[2 i + 1]` under `sizes[i]`).
    sizes: [(usize, f32); 8],
    heights: [(usize, f32); 16],
}

impl Lookup {
    /// The bank lacked the family asked for: another one's entries were used.
    pub fn fell_back(&self) -> bool {
        self.asked != self.family
    }

    /// Some axis was outside the bank's range (the nearest entries were used).
    pub fn clamped(&self) -> bool {
        self.restitution.clamped
            || self.friction.clamped
            || self.grain_diameter_m.clamped
            || self.fill.clamped
            || self.fall_height_m.clamped
    }

    /// A generator cell's statistics; `None` for `Settling`.
    pub fn cell(&self, cell: Cell) -> Option<&CellLookup> {
        bank_cell(cell).map(|i| &self.cells[i])
    }

    /// The value at the geometric centre of speed bin `i`, in units of the impact speed.
    pub fn speed_centre(&self, i: usize) -> f32 {
        let (lo, hi) = self.speed_range;
        lo * (hi / lo).powf((i as f32 + 0.5) / SPEED_BINS as f32)
    }

    /// The mean speed of bank cell `i`'s mixture, in units of the impact speed (bins at
    /// their geometric centres); 0 for a cell without collisions.
    pub fn mean_speed(&self, i: usize) -> f32 {
        self.cells[i]
            .speed
            .iter()
            .enumerate()
            .map(|(b, &w)| w * self.speed_centre(b))
            .sum()
    }
}

/// The bank compiled in (`assets/bank/bank.json`).
pub const SHIPPED_JSON: &str = include_str!("../../../assets/bank/bank.json");

static SHIPPED: OnceLock<Bank> = OnceLock::new();

/// The shipped bank, parsed on first use: `Engine::new` calls it, so `process` never is the
/// first (parsing allocates).
pub fn shipped() -> &'static Bank {
    SHIPPED.get_or_init(|| match Bank::parse(SHIPPED_JSON) {
        Ok(b) => b,
        // compiled in and checked by the tests: a failure here is a broken build
        Err(e) => panic!("assets/bank/bank.json is invalid: {e}"),
    })
}

/// Whether the shipped bank has been parsed (by `shipped`) in this process.
#[cfg(test)]
pub(crate) fn shipped_parsed() -> bool {
    SHIPPED.get().is_some()
}

/// A number that must be finite and at least 0.
fn non_negative(x: f64, at: impl FnOnce() -> String) -> Result<f64, BankError> {
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(BankError::Number { at: at(), value: x })
    }
}

/// Counts must agree with their sum within this share (they are integers in the file).
const COUNT_TOLERANCE: f64 = 1e-6;

impl Bank {
    /// Parses and checks a bank file (format `granary-bank`, version 4).
    pub fn parse(text: &str) -> Result<Bank, BankError> {
        let raw: RawBank = serde_json::from_str(text).map_err(|e| BankError::Json(e.to_string()))?;
        if raw.format != FORMAT {
            return Err(BankError::Format(raw.format));
        }
        if !(4..=VERSION).contains(&raw.version) {
            return Err(BankError::Version(raw.version));
        }
        let speed_range = check_bins("speed_bins", &raw.speed_bins, SPEED_BINS, true)?;
        let angle_range = check_bins("angle_bins", &raw.angle_bins, ANGLE_BINS, false)?;
        let same_edges = raw.life_edges_s.len() == LIFE_EDGES_S.len()
            && raw
                .life_edges_s
                .iter()
                .zip(LIFE_EDGES_S)
                .all(|(&a, b)| (a - b as f64).abs() <= 1e-6 * b as f64);
        if !same_edges {
            return Err(BankError::Bins {
                axis: "life_edges_s",
                detail: format!("{:?} s; the generator's are {LIFE_EDGES_S:?} s", raw.life_edges_s),
            });
        }
        for id in CELL_IDS {
            if !raw.cells.iter().any(|c| c == id) {
                return Err(BankError::Cells(format!("cell `{id}` is missing")));
            }
        }
        if let Some(c) = raw.cells.iter().find(|c| !CELL_IDS.contains(&c.as_str())) {
            return Err(BankError::Cells(format!("unknown cell `{c}`")));
        }
        if raw.entries.is_empty() {
            return Err(BankError::Empty);
        }
        // every entry, checked, by family and shape (`Shape::ALL`'s order)
        let mut by_grid: BTreeMap<(usize, usize), Vec<KeyedEntry>> = BTreeMap::new();
        for (n, e) in raw.entries.iter().enumerate() {
            let label = format!(
                "entry {n} ({}{}, restitution {}, friction {}, grain_diameter_m {}, fill {}, fall_height_m {})",
                e.family,
                e.shape.as_deref().map_or(String::new(), |s| format!(", shape {s}")),
                e.restitution,
                e.friction,
                e.grain_diameter_m,
                e.fill,
                e.fall_height_m
            );
            let family = Family::from_id(&e.family).ok_or_else(|| BankError::Family {
                entry: format!("entry {n}"),
                family: e.family.clone(),
            })?;
            let shape = match &e.shape {
                None => Shape::Sphere,
                Some(id) => Shape::from_id(id).ok_or_else(|| BankError::Shape {
                    entry: label.clone(),
                    shape: id.clone(),
                })?,
            };
            let diameter = non_negative(e.grain_diameter_m, || format!("{label}: grain_diameter_m"))?;
            if diameter <= 0.0 {
                return Err(BankError::Number {
                    at: format!("{label}: grain_diameter_m (must be above 0)"),
                    value: diameter,
                });
            }
            let keys = [
                non_negative(e.restitution, || format!("{label}: restitution"))? as f32,
                non_negative(e.friction, || format!("{label}: friction"))? as f32,
                diameter as f32,
                non_negative(e.fill, || format!("{label}: fill"))? as f32,
                non_negative(e.fall_height_m, || format!("{label}: fall_height_m"))? as f32,
            ];
            if let Some(c) = e.cells.keys().find(|c| !CELL_IDS.contains(&c.as_str())) {
                return Err(BankError::UnknownCell {
                    entry: label,
                    cell: c.clone(),
                });
            }
            let mut cells = [CellData {
                rate: 0.0,
                speed: [0.0; SPEED_BINS],
                angle_by_speed: [[0.0; ANGLE_BINS]; SPEED_BINS],
                speed_by_life: [[0.0; SPEED_BINS]; LIFE_BINS],
            }; BANKED_CELLS];
            for (i, id) in CELL_IDS.into_iter().enumerate() {
                let c = e.cells.get(id).ok_or_else(|| BankError::MissingCell {
                    entry: label.clone(),
                    cell: id,
                })?;
                cells[i] = check_cell(&label, id, c, raw.time_bins)?;
            }
            let shape_index = Shape::ALL.iter().position(|&s| s == shape).unwrap_or(0);
            by_grid
                .entry((family.index(), shape_index))
                .or_default()
                .push((keys, cells));
        }
        let mut grids: [Option<Grid>; 6] = Default::default();
        let mut shaped = Vec::new();
        for ((f, shape), entries) in by_grid {
            let (family, shape) = (Family::ALL[f], Shape::ALL[shape]);
            let g = grid(family, shape, entries)?;
            match shape {
                Shape::Sphere => grids[f] = Some(g),
                _ => shaped.push((family, shape, g)),
            }
        }
        Ok(Bank {
            source: raw.source,
            speed_range,
            angle_range,
            grids,
            shaped,
        })
    }

    /// The families the bank holds, in `Family::ALL`'s order.
    pub fn families(&self) -> impl Iterator<Item = Family> + '_ {
        Family::ALL
            .into_iter()
            .zip(&self.grids)
            .filter(|(_, g)| g.is_some())
            .map(|(f, _)| f)
    }

    /// A family's restitutions and fills, if the bank holds it (the frictions of each
    /// restitution: `frictions`; the diameters of each grain: `diameters`; the fall heights
    /// of each size: `falls`).
    pub fn axes(&self, family: Family) -> Option<[&[f32]; 2]> {
        self.grids[family.index()]
            .as_ref()
            .map(|g| [&g.restitutions[..], &g.fills[..]])
    }

    /// The fall heights above the rim (m) a family holds for grains of `restitution`,
    /// `friction` and diameter `grain_diameter_m`, ascending (empty for a size it does not
    /// hold).
    pub fn falls(&self, family: Family, restitution: f32, friction: f32, grain_diameter_m: f32) -> &[f32] {
        self.grain_range(family, restitution)
            .and_then(|(g, grains)| {
                let k = grains.clone().find(|&k| g.frictions[k] == friction)?;
                let s = g.by_grain[k].clone().find(|&s| g.diameters[s] == grain_diameter_m)?;
                g.falls.get(g.by_size[s].clone())
            })
            .unwrap_or(&[])
    }

    /// The frictions a family holds at `restitution`, ascending (empty for a restitution or
    /// family it does not hold).
    pub fn frictions(&self, family: Family, restitution: f32) -> &[f32] {
        self.grain_range(family, restitution)
            .and_then(|(g, grains)| g.frictions.get(grains))
            .unwrap_or(&[])
    }

    /// The grain diameters (m) a family holds for grains of `restitution` and `friction`,
    /// ascending (empty for a grain it does not hold).
    pub fn diameters(&self, family: Family, restitution: f32, friction: f32) -> &[f32] {
        self.grain_range(family, restitution)
            .and_then(|(g, grains)| {
                let k = grains.clone().find(|&k| g.frictions[k] == friction)?;
                g.diameters.get(g.by_grain[k].clone())
            })
            .unwrap_or(&[])
    }

    /// A family's grid and the numbers of its grains at `restitution`.
    fn grain_range(&self, family: Family, restitution: f32) -> Option<(&Grid, Range<usize>)> {
        let g = self.grids[family.index()].as_ref()?;
        let i = g.restitutions.iter().position(|&r| r == restitution)?;
        Some((g, g.by_restitution[i].clone()))
    }

    /// The statistics for a pour of `family` with spheres of coefficient of restitution
    /// `restitution`, friction coefficient `friction` (dynamic, grain on grain) and diameter
    /// `grain_diameter_m`, the cup filled to `fill` (of its depth) and the spout
    /// `fall_height_m` above the rim (thesis 7.1: the precomputed PDFs looked up by the
    /// scene's parameters).
    ///
    /// Multilinear interpolation over the family's grid (in the logarithm of the diameter,
    /// linear in the others; the friction at each of the two bracketing restitutions over
    /// that restitution's own frictions), each axis clamped to its range (the clamped ones
    /// reported). Per cell the rate is the corners' rates weighted by the
    /// interpolation weights w_i, and the speed and joint speed–angle distributions are the
    /// mixture sum_i w_i rate_i h_i (h_i the corner's normalised histogram), normalised: a corner
    /// without collisions in the cell does not dilute the others, and a cell with none at
    /// every corner has rate 0. A family the bank lacks falls back to `mug`, else to the
    /// first it holds. No allocation: the generator calls this once a window on the audio
    /// thread.
    pub fn lookup(
        &self,
        family: Family,
        restitution: f32,
        friction: f32,
        grain_diameter_m: f32,
        fill: f32,
        fall_height_m: f32,
    ) -> Lookup {
        let selection = self.select(
            family,
            Shape::Sphere,
            restitution,
            friction,
            grain_diameter_m,
            fall_height_m,
            1.0,
        );
        self.lookup_at(&selection, fill)
    }

    /// The part of `lookup` that the settings alone fix: the family used, the grains' shape
    /// used, and the tree's descent to the grains' sizes (restitution, friction, the
    /// diameter's logarithm) and to the fall height. The engine makes it when the settings
    /// change (`CellStatistics`).
    ///
    /// `shape` is the grains' (`Settings::resolved_grain_shape`): the family's entries of
    /// that shape are used where the bank holds them and the pour within their grid on
    /// every axis (docs/dem.md, "Grains in their own shape": sugar's cubes in the mug), else
    /// the spheres' of the grains' volume, as for every shape the bank lacks (`Lookup::shape`
    /// says which). `lookup` asks spheres.
    ///
    /// `scale` is the pour's length scale over the bank's scenes (`Derived::bank_scale`: a
    /// cup `scale` times the banked cups' size; 1 onto the surface, and where it is not a
    /// positive number). The bank's scenes are rigid grains under gravity with a constant
    /// restitution and Coulomb friction, so a pour whose every length is `scale` times
    /// another's is the other's with every time `sqrt(scale)` times longer and every speed
    /// `sqrt(scale)` times faster (Froude similarity: by Buckingham's Π theorem, 1914, the
    /// only numbers such dynamics depend on are the restitution, the friction, the ratios of
    /// the lengths and v^2 / (g L); the simulation's own absolute numbers, its contacts'
    /// stiffness and step, its settling thresholds and the spout's least radius, are left
    /// out: docs/dem.md, "The cup's size"). So the
    /// collisions per arriving grain and the speeds over the impact speed sqrt(2 g h) are the
    /// similar scene's, with grains of `grain_diameter_m / scale` falling `fall_height_m /
    /// scale` into the bank's cup, and a grain's life is `sqrt(scale)` times the similar
    /// one's (`SceneInput::life_scale`). granary-dem's simulations agree: in cups 1.8 and
    /// twice the bank's, the collisions a grain within 1.6 to 3.3 % of the similar scene's
    /// and the energy a grain within 0.3 to 2.4 % (docs/dem.md, "The cup's size").
    #[allow(clippy::too_many_arguments)]
    pub fn select(
        &self,
        family: Family,
        shape: Shape,
        restitution: f32,
        friction: f32,
        grain_diameter_m: f32,
        fall_height_m: f32,
        scale: f32,
    ) -> Selection {
        let scale = if scale.is_finite() && scale > 0.0 { scale } else { 1.0 };
        let (grain_diameter_m, fall_height_m) = (grain_diameter_m / scale, fall_height_m / scale);
        let used = if self.grids[family.index()].is_some() {
            family
        } else if self.grids[Family::Cup(CupShape::Mug).index()].is_some() {
            Family::Cup(CupShape::Mug)
        } else {
            self.families().next().unwrap_or(family)
        };
        let spheres = Selection {
            asked: family,
            family: used,
            shape: Shape::Sphere,
            grid: None,
            restitution: Axis::default(),
            friction: Axis::default(),
            grain_diameter_m: Axis::default(),
            fall_height_m: Axis::default(),
            scale,
            sizes: [(0, 0.0); 8],
            heights: [(0, 0.0); 16],
        };
        let Some(g) = &self.grids[used.index()] else {
            return spheres;
        };
        let place =
            |g: &Grid, out: Selection| descend_grid(g, out, restitution, friction, grain_diameter_m, fall_height_m);
        // the grains' own shape where the bank holds that shape in the family and the pour
        // within its grid, every axis inside (docs/dem.md, "Grains in their own shape");
        // else the spheres of their volume
        let own = self
            .shaped
            .iter()
            .position(|&(f, s, _)| f == used && s == shape && s != Shape::Sphere)
            .map(|i| {
                place(
                    &self.shaped[i].2,
                    Selection {
                        shape,
                        grid: Some(i),
                        ..spheres
                    },
                )
            })
            .filter(|own| !own.clamped());
        own.unwrap_or_else(|| place(g, spheres))
    }

    /// `lookup` for a `selection` (`select`) at the fill `fill`: the corners' mixture.
    pub fn lookup_at(&self, selection: &Selection, fill: f32) -> Lookup {
        let used = selection.family;
        let mut out = Lookup {
            asked: selection.asked,
            family: used,
            shape: selection.shape,
            restitution: selection.restitution,
            friction: selection.friction,
            grain_diameter_m: selection.grain_diameter_m,
            fill: Axis::default(),
            fall_height_m: selection.fall_height_m,
            scale: selection.scale,
            speed_range: self.speed_range,
            angle_range: self.angle_range,
            cells: [CellLookup::ZERO; BANKED_CELLS],
        };
        let grid = match selection.grid {
            Some(i) => self.shaped.get(i).map(|(.., g)| g),
            None => self.grids[used.index()].as_ref(),
        };
        let Some(g) = grid else {
            return out;
        };
        let (a_fill, wf) = place(&g.fills, fill);
        out.fill = match used {
            // onto the surface the bank's entries start on bare ground and hold the heap
            // their run builds: the fill is not an axis there, and nothing is clamped
            Family::Surface => Axis {
                clamped: false,
                ..a_fill
            },
            Family::Cup(_) => a_fill,
        };
        // between the empty cup and the first bed, the floor's hits fade with the bed's height
        // in the grains' diameters (`FLOOR_FADE_DIAMETERS`) where the grain heaps: the empty
        // cup's entry, its run's mean, is scaled to the bare floor's rate times the fade at
        // the bed asked, and blended linearly to the first bed (a placed layer: no floor
        // hits) as before, so the rate meets the bed's there
        let fade_bed_m = match used {
            Family::Cup(_) if g.fills.len() > 1 && g.fills[0] == 0.0 && a_fill.used < g.fills[1] => {
                Some(a_fill.used * g.depth_m)
            }
            _ => None,
        };
        // size by size, fill by fill, the size's two falls (`select`)
        let corners = selection
            .sizes
            .into_iter()
            .zip(selection.heights.chunks_exact(2))
            .flat_map(|(s, heights)| wf.into_iter().map(move |f| (s, f, heights)))
            .flat_map(|(s, f, heights)| heights.iter().map(move |&h| (s, f, h)));
        for ((s, w_s), (j, w_j), (k, w_k)) in corners {
            let w = w_s * w_j * w_k;
            if w <= 0.0 {
                continue;
            }
            let index = index(&g.by_size, g.fills.len(), s, j, k);
            let corner = &g.cells[index];
            // a wall ring's collisions are where they were above the corner's bed: spread
            // over the rings at the fill asked (`ring_transfer`)
            let transfer = match used {
                Family::Cup(_) => {
                    let rates = std::array::from_fn(|k| corner[WALL_RING_0 + k].rate);
                    Some(transfer(&g.profiles[index], a_fill.used, rates))
                }
                Family::Surface => None,
            };
            let w_floor = match (fade_bed_m, g.floor_fade[s]) {
                (Some(h), Some(mean)) if j == 0 && mean > 0.0 => {
                    w * (-h / (FLOOR_FADE_DIAMETERS * g.diameters[s])).exp() / mean
                }
                _ => w,
            };
            for (n, o) in out.cells.iter_mut().enumerate() {
                match (transfer, ring_of(n)) {
                    (Some(t), Some(ring)) => {
                        for (from, &share) in t[ring].iter().enumerate() {
                            o.mix(&corner[WALL_RING_0 + from], w * share);
                        }
                    }
                    _ if n == FLOOR => o.mix(&corner[n], w_floor),
                    _ => o.mix(&corner[n], w),
                }
            }
        }
        for o in &mut out.cells {
            // the joint's rows sum to the speed bins' shares: both have the speeds' total
            let total: f32 = o.speed.iter().sum();
            normalise(&mut o.speed);
            if total > 0.0 {
                let scale = 1.0 / total;
                for row in &mut o.speed_by_life {
                    row.iter_mut().for_each(|a| *a *= scale);
                }
                o.life = o.speed_by_life.map(|row| row.iter().sum());
                for (row, _) in o
                    .angle_by_speed
                    .iter_mut()
                    .zip(&o.speed)
                    .filter(|(_, &share)| share > 0.0)
                {
                    row.iter_mut().for_each(|a| *a *= scale);
                }
            }
            if o.speed.iter().all(|&x| x == 0.0) {
                o.rate = 0.0;
                o.speed_by_life = [[0.0; SPEED_BINS]; LIFE_BINS];
                o.life = [0.0; LIFE_BINS];
            }
            o.angle_cdf = o.angle_by_speed.map(|row| cumulative(&row));
        }
        out
    }
}

/// The wall ring a banked cell is (`CELL_IDS`), if it is one.
fn ring_of(n: usize) -> Option<usize> {
    (WALL_RING_0..WALL_RING_0 + RINGS).contains(&n).then(|| n - WALL_RING_0)
}

/// The first wall ring's index in `CELL_IDS`.
const WALL_RING_0: usize = 2;
/// The bank's cell of the cup's floor (`CELL_IDS`).
const FLOOR: usize = 1;

/// The height of a flat bed, in grain diameters, over which a pour's hits on the bare floor
/// of its cup fade by 1/e. granary-dem's pours into the empty mug (sugar, restitution 0.5,
/// at 2, 2.8 and 4 mm from 15 cm, the `poured_heap` example; docs/dem.md, "The floor under
/// a thin bed"), each grain counted at the bed its predecessors make: the floor hits a grain
/// against x, the bed's height over the grain's diameter, are one curve for the three sizes,
/// R0 exp(−x / 0.42) with R0 5.8 to 6.9 (least squares over the three; the heap covers the
/// spot the stream lands on and then the floor around it), where in the fill they part by
/// the size: the fill a grain's own thousand make grows as its diameter cubed.
pub const FLOOR_FADE_DIAMETERS: f32 = 0.42;
/// The restitutions up to which a grain heaps, so that its floor hits fade as
/// `FLOOR_FADE_DIAMETERS` says: sugar, rice, gravel, lentils, coffee beans (0.4 to 0.5).
/// Glass beads (0.85) bounce off their own low heap onto the floor around it: 2.7 floor
/// hits a bead after 4,000 of them into the metal cup, which their flat bed at 0.05 covers
/// (docs/dem.md, "A poured heap against a placed bed"); their corners keep the linear blend.
pub const FLOOR_FADE_MAX_RESTITUTION: f32 = 0.5;
/// The grains of one of the bank's runs (granary-dem's `bank::GRAINS_PER_S` times
/// `bank::POUR_S`): an empty cup's entry is the mean of its thousand grains' floor hits, as
/// the bed they make grows.
pub const RUN_GRAINS: usize = 1000;

/// The mean over a run of `RUN_GRAINS` grains of diameter `d` (m) into the empty `cup` of
/// the floor's fade, exp(−h / (`FLOOR_FADE_DIAMETERS` d)), h the flat bed of the grains poured
/// before each (`Cup::height_holding` of their bulk volume at `PACKING_FRACTION`): what the
/// empty cup's entry holds of the bare floor's rate (the midpoints of 64 equal groups).
pub(crate) fn floor_fade_mean(cup: &Cup, d: f32) -> f32 {
    const GROUPS: usize = 64;
    let grain_m3 = std::f32::consts::PI / 6.0 * d * d * d;
    let bulk_m3 = RUN_GRAINS as f32 * grain_m3 / PACKING_FRACTION;
    let sum: f32 = (0..GROUPS)
        .map(|m| {
            let h = cup.height_holding((m as f32 + 0.5) / GROUPS as f32 * bulk_m3);
            (-h / (FLOOR_FADE_DIAMETERS * d)).exp()
        })
        .sum();
    sum / GROUPS as f32
}

/// Where a corner's wall-ring collisions, `rates` a grain on its rings at a bed at `from` of
/// the cup's depth, are counted at a bed at `to`: `t[k][k2]` is the share of ring k2's
/// collisions in ring k (a column sums to 1; a ring without collisions moves none).
///
/// A grain hits the wall where it leaves the pile or hops off it: a collision keeps its
/// height above the bed. The corner's collisions up to a height above its bed
/// (`WallProfile`: known at its rings' edges, a buried ring's few at the bed's edge, the top
/// ring's with those above the rim) are read at the edges of the rings at `to`, the top ring
/// reaching on above the rim; a ring at `to` takes the collisions between its edges, from
/// the corner's rings whose collisions they are in that order. So the wall's total is
/// interpolated linearly in the fill, where a ring's own rate is not: a bed at 0.45 buries
/// ring 0, which a bed at 0.3 does not (interpolated ring by ring, 2 mm glass beads into a
/// bowl at 0.45 had 6 times the simulated hits on ring 0), and puts its edge in ring 1,
/// whose hits at 0.6 are all near the bed's edge (interpolated per bare share of the ring,
/// sugar into a mug at 0.45 had 1.5 times the simulated hits on ring 1, and its grains were
/// 2 to 3 dB louder below 1 kHz, where a grain's lone hit on the wall outsounds the pile's
/// collisions, whose two grains' dipoles nearly cancel).
pub fn ring_transfer(from: f32, to: f32, rates: [f32; RINGS]) -> [[f32; RINGS]; RINGS] {
    transfer(&WallProfile::new(from, rates), to, rates)
}

/// `ring_transfer` with the corner's profile made (`WallProfile::new(from, rates)`).
fn transfer(profile: &WallProfile, to: f32, rates: [f32; RINGS]) -> [[f32; RINGS]; RINGS] {
    let total: f32 = rates.iter().sum();
    let mut t = [[0.0f32; RINGS]; RINGS];
    for (k, row) in t.iter_mut().enumerate() {
        let (lo, hi) = ring_above_bed(k, to);
        // the collisions below ring k and up to its upper edge (the top ring: all)
        let below = if lo > 0.0 { profile.at(lo) } else { 0.0 };
        let upto = match k + 1 == RINGS {
            true => total,
            false if hi > 0.0 => profile.at(hi),
            false => 0.0,
        };
        let mut start = 0.0;
        for (k2, &r) in rates.iter().enumerate() {
            if r > 0.0 {
                row[k2] = (upto.min(start + r) - below.max(start)).max(0.0) / r;
            }
            start += r;
        }
    }
    t
}

/// Ring `k`'s span in height above a bed at `fill` of the cup's depth, in the depth: from the
/// bed or its lower edge to its upper edge (at or below 0: buried).
fn ring_above_bed(k: usize, fill: f32) -> (f32, f32) {
    let edge = |k: usize| k as f32 / RINGS as f32 - fill;
    (edge(k).max(0.0), edge(k + 1))
}

/// A corner's wall collisions a grain up to a height above its bed (`ring_transfer`): known
/// at the bed's edge (the buried rings' collisions) and at each bare ring's upper edge (the
/// rings' cumulative sums), and between them the monotone cubic through those knots
/// (Fritsch & Carlson 1980, "Monotone piecewise cubic interpolation", SIAM J. Numer. Anal.
/// 17: the collisions never decrease with the height, and a density that falls off with
/// the height, as the simulated ones do, is not made even within a ring: with it, the
/// simulated hits of glass beads and of sugar at a bed between the sweep's come out within
/// a few per cent on the ring the bed's edge is in; spread evenly within each ring, 15 to 30
/// % too few).
#[derive(Debug, Clone, Copy, PartialEq)]
struct WallProfile {
    z: [f32; RINGS + 1],
    c: [f32; RINGS + 1],
    slope: [f32; RINGS + 1],
    n: usize,
}

impl WallProfile {
    fn new(fill: f32, rates: [f32; RINGS]) -> WallProfile {
        let (mut z, mut c) = ([0.0f32; RINGS + 1], [0.0f32; RINGS + 1]);
        let mut n = 1;
        let mut sum = 0.0;
        for (k, &r) in rates.iter().enumerate() {
            sum += r;
            let (_, hi) = ring_above_bed(k, fill);
            if hi > 0.0 {
                (z[n], c[n]) = (hi, sum);
                n += 1;
            } else {
                // buried: at the bed's edge
                c[0] = sum;
            }
        }
        // Fritsch–Carlson slopes: the secants' weighted harmonic mean inside (0 where the
        // secants differ in sign or one is flat), the three-point ends kept to the data's
        // shape; two knots: the line
        let mut slope = [0.0f32; RINGS + 1];
        let secant = |i: usize| (c[i + 1] - c[i]) / (z[i + 1] - z[i]);
        let width = |i: usize| z[i + 1] - z[i];
        if n == 2 {
            slope[..2].fill(secant(0));
        } else if n > 2 {
            for (i, m) in slope.iter_mut().enumerate().take(n - 1).skip(1) {
                let (d0, d1) = (secant(i - 1), secant(i));
                *m = if d0 * d1 > 0.0 {
                    let (w1, w2) = (2.0 * width(i) + width(i - 1), width(i) + 2.0 * width(i - 1));
                    (w1 + w2) / (w1 / d0 + w2 / d1)
                } else {
                    0.0
                };
            }
            let end = |h0: f32, h1: f32, d0: f32, d1: f32| {
                let m = ((2.0 * h0 + h1) * d0 - h0 * d1) / (h0 + h1);
                if m * d0 <= 0.0 {
                    0.0
                } else if d0 * d1 <= 0.0 && m.abs() > 3.0 * d0.abs() {
                    3.0 * d0
                } else {
                    m
                }
            };
            slope[0] = end(width(0), width(1), secant(0), secant(1));
            slope[n - 1] = end(width(n - 2), width(n - 3), secant(n - 2), secant(n - 3));
        }
        WallProfile { z, c, slope, n }
    }

    /// The collisions a grain at or below `height` above the bed (in the cup's depth).
    fn at(&self, height: f32) -> f32 {
        let (z, c, m, n) = (&self.z, &self.c, &self.slope, self.n);
        if n < 2 || height <= z[0] {
            return c[0];
        }
        if height >= z[n - 1] {
            return c[n - 1];
        }
        let i = (1..n - 1).take_while(|&i| z[i] <= height).count();
        let h = z[i + 1] - z[i];
        let s = (height - z[i]) / h;
        // the cubic Hermite basis on [z_i, z_i+1]
        let (s2, s3) = (s * s, s * s * s);
        (2.0 * s3 - 3.0 * s2 + 1.0) * c[i]
            + (s3 - 2.0 * s2 + s) * h * m[i]
            + (-2.0 * s3 + 3.0 * s2) * c[i + 1]
            + (s3 - s2) * h * m[i + 1]
    }
}

/// Scales `h` to sum 1 (all 0 if it sums to 0).
fn normalise<const N: usize>(h: &mut [f32; N]) {
    let total: f32 = h.iter().sum();
    if total > 0.0 {
        h.iter_mut().for_each(|x| *x /= total);
    } else {
        *h = [0.0; N];
    }
}

/// Where `x` falls on the ascending grid axis `values`: the axis (asked, used, clamped) and
/// the two bracketing indices with their linear interpolation weights (the second weight 0
/// on a one-value axis). A value that is not a number takes the first grid value.
fn place(values: &[f32], x: f32) -> (Axis, [(usize, f32); 2]) {
    let n = values.len();
    let (first, last) = (values[0], values[n - 1]);
    let used = if x.is_nan() { first } else { x.clamp(first, last) };
    let axis = Axis {
        asked: x,
        used,
        clamped: used != x,
    };
    if n == 1 {
        return (axis, [(0, 1.0), (0, 0.0)]);
    }
    // the last interval whose lower end is at or below `used`
    let i = values[1..n - 1].iter().filter(|&&v| v <= used).count();
    // an interval of no width (two diameters of one logarithm in single precision) takes
    // its lower end, never 0/0
    let span = values[i + 1] - values[i];
    let t = if span > 0.0 {
        ((used - values[i]) / span).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (axis, [(i, 1.0 - t), (i + 1, t)])
}

/// One level of a grid's tree (`Grid`): each of `parents` (a node and its weight) split
/// over its children `by[node]`, whose values `values[child]` ascend, at `x` (`place`),
/// into `out` (two a parent: the children with the parent's weight times theirs). The
/// axis: `x` asked; used, the mean over the parents of weight above 0 of `used_of(children,
/// axis)` (the value used at that parent), weighted as they are; clamped if any of them is.
fn descend(
    parents: &[(usize, f32)],
    by: &[Range<usize>],
    values: &[f32],
    x: f32,
    out: &mut [(usize, f32)],
    used_of: impl Fn(Range<usize>, Axis) -> f32,
) -> Axis {
    debug_assert_eq!(out.len(), 2 * parents.len(), "two children a parent");
    let mut axis = Axis {
        asked: x,
        used: 0.0,
        clamped: false,
    };
    for (&(node, w), pair) in parents.iter().zip(out.chunks_exact_mut(2)) {
        let children = by[node].clone();
        let (a, wc) = place(&values[children.clone()], x);
        if w > 0.0 {
            axis.used += w * used_of(children.clone(), a);
            axis.clamped |= a.clamped;
        }
        for (o, (c, wc)) in pair.iter_mut().zip(wc) {
            *o = (children.start + c, w * wc);
        }
    }
    axis
}

/// Checks one axis of bins: its count must be the generator's, its range finite and
/// increasing (the speed's above 0, log-spaced; the angle's within 0..pi/2).
fn check_bins(axis: &'static str, b: &RawBins, n: usize, log: bool) -> Result<(f32, f32), BankError> {
    let bad = |detail: String| Err(BankError::Bins { axis, detail });
    if b.n != n {
        return bad(format!("{} bins; the generator has {n}", b.n));
    }
    let ok_range = b.lo.is_finite() && b.hi.is_finite() && b.lo < b.hi;
    if !ok_range {
        return bad(format!("range {}..{} is not an increasing finite range", b.lo, b.hi));
    }
    if log && b.lo <= 0.0 {
        return bad(format!("lo {} must be above 0 (the bins are log-spaced)", b.lo));
    }
    if !log && (b.lo < 0.0 || b.hi > std::f64::consts::FRAC_PI_2 + 1e-6) {
        return bad(format!("range {}..{} is not within 0..pi/2 rad", b.lo, b.hi));
    }
    Ok((b.lo as f32, b.hi as f32))
}

/// Checks one cell of one entry and returns its rate and normalised histograms.
fn check_cell(entry: &str, cell: &'static str, c: &RawCell, time_bins: usize) -> Result<CellData, BankError> {
    // each histogram: its name, its row (of a joint one), its bins and how many it must
    // have; the name is written out only for an error (a bank has some 600,000 rows)
    let rows = c
        .angle_by_speed
        .iter()
        .enumerate()
        .map(|(i, row)| ("angle_by_speed", Some(i), row, ANGLE_BINS));
    let life_rows = c
        .speed_by_life
        .iter()
        .enumerate()
        .map(|(k, row)| ("speed_by_life", Some(k), row, SPEED_BINS));
    let histograms = [
        ("speed", None, &c.speed, SPEED_BINS),
        ("time", None, &c.time, time_bins),
    ]
    .into_iter()
    .chain(rows)
    .chain(life_rows);
    let name = |histogram: &str, row: Option<usize>| match row {
        Some(r) => format!("{histogram}[{r}]"),
        None => histogram.to_string(),
    };
    for (name, got, expected) in [
        ("angle_by_speed", c.angle_by_speed.len(), SPEED_BINS),
        ("speed_by_life", c.speed_by_life.len(), LIFE_BINS),
    ] {
        if got != expected {
            return Err(BankError::HistogramLength {
                entry: entry.to_string(),
                cell,
                histogram: name.to_string(),
                got,
                expected,
            });
        }
    }
    for (histogram, row, h, expected) in histograms {
        if h.len() != expected {
            return Err(BankError::HistogramLength {
                entry: entry.to_string(),
                cell,
                histogram: name(histogram, row),
                got: h.len(),
                expected,
            });
        }
        for (i, &x) in h.iter().enumerate() {
            non_negative(x, || format!("{entry}, cell `{cell}`: {}[{i}]", name(histogram, row)))?;
        }
    }
    let rate = non_negative(c.rate, || format!("{entry}, cell `{cell}`: rate"))?;
    let count = non_negative(c.count, || format!("{entry}, cell `{cell}`: count"))?;
    let counts = |detail: String| BankError::Counts {
        entry: entry.to_string(),
        cell,
        detail,
    };
    let sum: f64 = c.speed.iter().sum();
    if (sum - count).abs() > COUNT_TOLERANCE * count.max(1.0) {
        return Err(counts(format!("the speed counts sum to {sum}, not the count {count}")));
    }
    // each speed bin's collisions, over the lifetime bins
    for (i, &n) in c.speed.iter().enumerate() {
        let sum: f64 = c.speed_by_life.iter().map(|row| row[i]).sum();
        if (sum - n).abs() > COUNT_TOLERANCE * n.max(1.0) {
            return Err(counts(format!(
                "the speed_by_life counts of speed bin {i} sum to {sum}, not speed[{i}] = {n}"
            )));
        }
    }
    // each speed bin's angles are that bin's collisions
    for (i, (row, &n)) in c.angle_by_speed.iter().zip(&c.speed).enumerate() {
        let sum: f64 = row.iter().sum();
        if (sum - n).abs() > COUNT_TOLERANCE * n.max(1.0) {
            return Err(counts(format!(
                "the angle_by_speed[{i}] counts sum to {sum}, not speed[{i}] = {n}"
            )));
        }
    }
    if (rate > 0.0) != (count > 0.0) {
        return Err(counts(format!(
            "rate {rate} with count {count}: a rate needs collisions and collisions a rate"
        )));
    }
    fn shares<const N: usize>(h: &[f64]) -> [f32; N] {
        let total: f64 = h.iter().sum();
        std::array::from_fn(|i| if total > 0.0 { (h[i] / total) as f32 } else { 0.0 })
    }
    let total: f64 = c.speed.iter().sum();
    Ok(CellData {
        rate: rate as f32,
        speed: shares(&c.speed),
        speed_by_life: std::array::from_fn(|k| {
            std::array::from_fn(|i| {
                if total > 0.0 {
                    (c.speed_by_life[k][i] / total) as f32
                } else {
                    0.0
                }
            })
        }),
        angle_by_speed: std::array::from_fn(|i| {
            std::array::from_fn(|j| {
                if total > 0.0 {
                    (c.angle_by_speed[i][j] / total) as f32
                } else {
                    0.0
                }
            })
        }),
    })
}

/// `out` (a selection of `g`'s grains) with the tree's descent in `g` (`Bank::select`): the
/// two restitutions about the grains', each one's two frictions about theirs, each grain's two
/// sizes about theirs (`descend`), each size's two falls about the pour's; `grain_diameter_m`
/// and `fall_height_m` in the bank's scenes (over the scale).
fn descend_grid(
    g: &Grid,
    mut out: Selection,
    restitution: f32,
    friction: f32,
    grain_diameter_m: f32,
    fall_height_m: f32,
) -> Selection {
    let (ar, wr) = place(&g.restitutions, restitution);
    let mut grains = [(0, 0.0); 4];
    let af = descend(&wr, &g.by_restitution, &g.frictions, friction, &mut grains, |_, a| {
        a.used
    });
    let ad = descend(
        &grains,
        &g.by_grain,
        &g.ln_diameters,
        grain_diameter_m.ln(),
        &mut out.sizes,
        |r, a| {
            // the diameter reported in metres: the asked one, or the end it was clamped to
            match a.clamped {
                false => grain_diameter_m,
                true if a.used <= g.ln_diameters[r.start] => g.diameters[r.start],
                true => g.diameters[r.end - 1],
            }
        },
    );
    let ad = Axis {
        asked: grain_diameter_m,
        ..ad
    };
    // each size's two falls about the pour's, weighted within the size (the corners'
    // weights are multiplied as they were when one fall axis served every size)
    let mut ah = Axis {
        asked: fall_height_m,
        used: 0.0,
        clamped: false,
    };
    for (&(s, w), pair) in out.sizes.iter().zip(out.heights.chunks_exact_mut(2)) {
        let falls = g.by_size[s].clone();
        let (a, wk) = place(&g.falls[falls.clone()], fall_height_m);
        if w > 0.0 {
            ah.used += w * a.used;
            ah.clamped |= a.clamped;
        }
        for (o, (k, wk)) in pair.iter_mut().zip(wk) {
            *o = (falls.start + k, wk);
        }
    }
    (out.restitution, out.friction, out.grain_diameter_m, out.fall_height_m) = (ar, af, ad, ah);
    out
}

impl Selection {
    /// Some axis of the settings' is outside the grid's range.
    fn clamped(&self) -> bool {
        self.restitution.clamped || self.friction.clamped || self.grain_diameter_m.clamped || self.fall_height_m.clamped
    }
}

/// Entry (s, j, k)'s place in a grid's `cells` (`Grid`): size s's entries after the earlier
/// sizes' (`by_size[s].start` falls, each at every one of the `fills` fills), fill j's falls
/// in a run, fall k of `by_size[s]`.
fn index(by_size: &[Range<usize>], fills: usize, s: usize, j: usize, k: usize) -> usize {
    let falls = &by_size[s];
    falls.start * fills + j * falls.len() + (k - falls.start)
}

/// One family's entries of grains of one shape as their grid (`Grid`), or the error naming
/// what is missing or doubled: every size of every grain (restitution, friction, diameter)
/// over the same fills and, under each fill, the same falls as its other fills (the size's
/// own).
fn grid(of: Family, shape: Shape, entries: Vec<KeyedEntry>) -> Result<Grid, BankError> {
    let family = of.id();
    let shaped = match shape {
        Shape::Sphere => String::new(),
        _ => format!("{} grains, ", shape.id()),
    };
    // the distinct, ascending keys of the first `n` of an entry's, lexicographically
    let distinct = |n: usize| {
        let mut v: Vec<[f32; 3]> = entries
            .iter()
            .map(|(x, _)| std::array::from_fn(|a| if a < n { x[a] } else { 0.0 }))
            .collect();
        v.sort_by(|a, b| {
            a.iter()
                .zip(b)
                .map(|(x, y)| x.total_cmp(y))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        v.dedup();
        v
    };
    let (restitutions, grains, sizes) = (distinct(1), distinct(2), distinct(3));
    let ascending = |mut v: Vec<f32>| {
        v.sort_by(f32::total_cmp);
        v.dedup();
        v
    };
    let fills = ascending(entries.iter().map(|(x, _)| x[3]).collect());
    // each size's own falls, one after another in the sizes' order
    let (mut falls, mut by_size) = (Vec::new(), Vec::new());
    for size in &sizes {
        let own = ascending(
            entries
                .iter()
                .filter(|(x, _)| x[..3] == size[..])
                .map(|(x, _)| x[4])
                .collect(),
        );
        by_size.push(falls.len()..falls.len() + own.len());
        falls.extend(own);
    }
    // the children of each node of a level: the run of the next level's keys that start with it
    let children = |parents: &[[f32; 3]], kids: &[[f32; 3]], n: usize| -> Vec<Range<usize>> {
        parents
            .iter()
            .map(|p| {
                let first = kids.iter().position(|k| k[..n] == p[..n]).unwrap_or(0);
                first..first + kids.iter().filter(|k| k[..n] == p[..n]).count()
            })
            .collect()
    };
    let nf = fills.len();
    let describe = |s: usize, j: usize, k: usize| {
        let [r, f, d] = sizes[s];
        format!(
            "{shaped}restitution {r}, friction {f}, grain_diameter_m {d}, fill {}, fall_height_m {}",
            fills[j], falls[k]
        )
    };
    let index = |s: usize, j: usize, k: usize| index(&by_size, nf, s, j, k);
    let mut cells: Vec<Option<[CellData; BANKED_CELLS]>> = vec![None; falls.len() * nf];
    for (x, c) in entries.iter() {
        let s = sizes.iter().position(|k| k[..] == x[..3]).unwrap_or(0);
        let j = fills.iter().position(|&v| v == x[3]).unwrap_or(0);
        let k = by_size[s]
            .clone()
            .find(|&k| falls[k] == x[4])
            .unwrap_or(by_size[s].start);
        let slot = &mut cells[index(s, j, k)];
        if slot.is_some() {
            return Err(BankError::Grid {
                family,
                detail: format!("two entries at {}", describe(s, j, k)),
            });
        }
        *slot = Some(*c);
    }
    let mut full = Vec::with_capacity(cells.len());
    let mut fill_of = Vec::with_capacity(cells.len());
    for (s, own) in by_size.iter().enumerate() {
        for j in 0..nf {
            for k in own.clone() {
                match cells[index(s, j, k)] {
                    Some(c) => {
                        full.push(c);
                        fill_of.push(fills[j]);
                    }
                    None => {
                        return Err(BankError::Grid {
                            family,
                            detail: format!(
                                "no entry at {} (that size's {nf} fills x {} falls)",
                                describe(s, j, k),
                                own.len()
                            ),
                        });
                    }
                }
            }
        }
    }
    let diameters: Vec<f32> = sizes.iter().map(|s| s[2]).collect();
    // a cup's floor fades (`Grid::floor_fade`): each size of a grain that heaps
    let cup = match of {
        Family::Cup(shape) => Some(Cup::new(shape, BANK_CUP_SIZE)),
        Family::Surface => None,
    };
    let floor_fade = sizes
        .iter()
        .map(|&[r, _, d]| {
            cup.as_ref()
                .filter(|_| r <= FLOOR_FADE_MAX_RESTITUTION)
                .map(|cup| floor_fade_mean(cup, d))
        })
        .collect();
    let profiles = full
        .iter()
        .zip(&fill_of)
        .map(|(corner, &fill)| WallProfile::new(fill, std::array::from_fn(|k| corner[WALL_RING_0 + k].rate)))
        .collect();
    Ok(Grid {
        restitutions: restitutions.iter().map(|r| r[0]).collect(),
        by_restitution: children(&restitutions, &grains, 1),
        frictions: grains.iter().map(|g| g[1]).collect(),
        by_grain: children(&grains, &sizes, 2),
        ln_diameters: diameters.iter().map(|d| d.ln()).collect(),
        diameters,
        by_size,
        falls,
        fills,
        cells: full,
        profiles,
        depth_m: cup.map_or(0.0, |c| c.depth),
        floor_fade,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// A cell's JSON: `rate` per grain of 1000 grains, the speed counts in `speed_bin`, all
    /// their angles in `angle_bin`, `late` of them in lifetime bin 7 (0.5 to 1 s after
    /// their grain arrived) and the rest in bin 0 (as it arrives).
    fn cell_json(rate: f64, speed: &[(usize, f64)], angle_bin: usize, late: f64) -> Value {
        let count: f64 = speed.iter().map(|s| s.1).sum();
        let mut life = vec![vec![0.0; SPEED_BINS]; LIFE_BINS];
        let mut s = vec![0.0; SPEED_BINS];
        let mut a = vec![vec![0.0; ANGLE_BINS]; SPEED_BINS];
        for &(i, n) in speed {
            s[i] = n;
            a[i][angle_bin] = n;
            life[0][i] = n * (1.0 - late);
            life[7][i] = n * late;
        }
        json!({"rate": rate, "count": count, "speed": s, "angle_by_speed": a, "time": vec![count / 8.0; 8], "speed_by_life": life})
    }

    /// A small synthetic bank: mug (grains of restitution 0.5 at frictions 0.3 and 0.5 and of
    /// restitution 0.9 at friction 0.5 alone, each of 2 and 4 mm and the first of 3 mm too,
    /// fill 0 and 0.5, fall 0.1 and 0.3 m) and surface (2 mm grains and fill 0 only). In every entry the impact zone's rate is
    /// (1 + restitution + fill + fall + 0.5 - friction) x diameter / 2 mm and its speeds all in bin 10, angle bin 0 (restitution
    /// 0.5) or speed bin 12, angle bin 2 (0.9), made as their grains arrive (0.5) or half of
    /// them 0.5 to 1 s later (0.9); the cup floor has collisions only at fill 0 (rate 2, speed bin 8); the other
    /// cells have a rate of 0.1 in speed bin 4, angle bin 1.
    pub(crate) fn synthetic() -> Value {
        let mut entries = Vec::new();
        for (family, diameters, fills) in [
            ("mug", vec![0.002, 0.004], vec![0.0, 0.5]),
            ("surface", vec![0.002], vec![0.0]),
        ] {
            for &(e, mu) in &[(0.5, 0.3), (0.5, 0.5), (0.9, 0.5)] {
                let mut diameters = diameters.clone();
                if mu < 0.4 && diameters.len() > 1 {
                    diameters.insert(1, 0.003);
                }
                for (&d, &fill) in diameters.iter().flat_map(|d| fills.iter().map(move |f| (d, f))) {
                    for &h in &[0.1, 0.3] {
                        let rate: f64 = (1.0 + e + fill + h + 0.5 - mu) * d / 0.002;
                        let bin = if e < 0.7 { 10 } else { 12 };
                        let mut cells = serde_json::Map::new();
                        for id in CELL_IDS {
                            let c = match id {
                                "impact_zone" => {
                                    let (angle, late) = if e < 0.7 { (0, 0.0) } else { (2, 0.5) };
                                    cell_json(rate, &[(bin, rate * 1000.0)], angle, late)
                                }
                                "cup_floor" if fill > 0.0 => cell_json(0.0, &[], 0, 0.0),
                                "cup_floor" => cell_json(2.0, &[(8, 2000.0)], 0, 0.0),
                                _ => cell_json(0.1, &[(4, 100.0)], 1, 0.0),
                            };
                            cells.insert(id.to_string(), c);
                        }
                        entries.push(json!({
                            "family": family, "restitution": e, "friction": mu, "grain_diameter_m": d, "fill": fill, "fall_height_m": h,
                            "grains": 1000, "impact_speed_m_s": 1.5, "cells": cells,
                        }));
                    }
                }
            }
        }
        json!({
            "format": "granary-bank", "version": VERSION, "source": "test",
            "speed_bins": {"lo": 0.001953125, "hi": 2.0, "n": 16},
            "angle_bins": {"lo": 0.0, "hi": 1.5707964, "n": 8},
            "time_bins": 8,
            "life_edges_s": LIFE_EDGES_S,
            "cells": CELL_IDS,
            "entries": entries,
        })
    }

    pub(crate) fn synthetic_bank() -> Bank {
        Bank::parse(&synthetic().to_string()).unwrap()
    }

    /// A version 4 file (no shapes: every entry of spheres) reads as it did.
    #[test]
    fn a_version_4_bank_is_of_spheres() {
        let mut v = synthetic();
        v["version"] = json!(4);
        assert_eq!(Bank::parse(&v.to_string()).unwrap(), synthetic_bank());
    }

    /// The grains' own shape where the bank holds it: the synthetic mug's grains of
    /// restitution 0.5 and friction 0.5 also as cubes of 2 and 4 mm, their impact zone's
    /// rate three times the spheres'. A cube inside that grid is looked up among the cubes;
    /// one outside it (a 1.5 mm cube, a cube of another restitution) among the spheres, as
    /// is a shape the bank lacks; the lookup says which.
    #[test]
    fn grains_are_looked_up_in_their_own_shape_where_the_bank_holds_it() {
        let mut v = synthetic();
        let cubes: Vec<Value> = v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["family"] == "mug" && e["restitution"] == 0.5 && e["friction"] == 0.5)
            .map(|e| {
                let mut c = e.clone();
                c["shape"] = json!("cube");
                let rate = 3.0 * c["cells"]["impact_zone"]["rate"].as_f64().unwrap();
                c["cells"]["impact_zone"]["rate"] = json!(rate);
                c
            })
            .collect();
        assert_eq!(cubes.len(), 8);
        v["entries"].as_array_mut().unwrap().extend(cubes);
        let b = Bank::parse(&v.to_string()).unwrap();
        let impact = |shape: Shape, e: f32, d: f32| {
            let l = b.lookup_at(&b.select(MUG, shape, e, MU, d, 0.2, 1.0), 0.25);
            (l.shape, l.cells[0].rate, l.clamped())
        };
        let spheres = impact(Shape::Sphere, 0.5, 0.003);
        let (shape, rate, clamped) = impact(Shape::Cube, 0.5, 0.003);
        assert_eq!((shape, clamped), (Shape::Cube, false));
        assert!(
            (rate - 3.0 * spheres.1).abs() <= 1e-5 * rate,
            "{rate} against {spheres:?}"
        );
        // outside the cubes' grid: the spheres', which hold it
        assert_eq!(impact(Shape::Cube, 0.5, 0.0015), impact(Shape::Sphere, 0.5, 0.0015));
        assert_eq!(impact(Shape::Cube, 0.7, 0.003), impact(Shape::Sphere, 0.7, 0.003));
        assert_eq!(impact(Shape::Rice, 0.5, 0.003), spheres);
        // the spheres' own lookup is the bank's without the cubes
        assert_eq!(
            b.lookup(MUG, 0.5, MU, 0.003, 0.25, 0.2),
            synthetic_bank().lookup(MUG, 0.5, MU, 0.003, 0.25, 0.2)
        );
        // a shaped grid is a full grid too
        let mut v2 = v.clone();
        let last = v2["entries"].as_array().unwrap().len() - 1;
        v2["entries"].as_array_mut().unwrap().remove(last);
        let e = Bank::parse(&v2.to_string()).unwrap_err().to_string();
        assert!(
            e.contains("family `mug`") && e.contains("no entry at cube grains, restitution 0.5"),
            "{e}"
        );
    }

    const MUG: Family = Family::Cup(CupShape::Mug);
    /// The synthetic bank's friction at both its restitutions.
    const MU: f32 = 0.5;
    /// The synthetic bank's smaller grains, m.
    const D2: f32 = 0.002;

    /// The grain size is interpolated in its logarithm: half-way between 2 and 4 mm is
    /// 2.83 mm, where the synthetic impact zone's rate (proportional to the diameter there)
    /// is the mean of the two; a size outside the grid takes the nearest and says so.
    #[test]
    fn the_grain_size_is_interpolated_in_its_logarithm() {
        let bank = synthetic_bank();
        let at = |d: f32| bank.lookup(MUG, 0.5, MU, d, 0.0, 0.1);
        let r2 = 1.0f32 + 0.5 + 0.1;
        let mid = at(D2 * 2f32.sqrt());
        assert!((mid.cells[0].rate - 1.5 * r2).abs() < 1e-5, "{}", mid.cells[0].rate);
        assert!(!mid.clamped());
        let small = at(0.001);
        assert_eq!(
            (small.grain_diameter_m.used, small.grain_diameter_m.clamped),
            (D2, true)
        );
        assert_eq!(small.cells, at(D2).cells);
        assert!((at(0.004).cells[0].rate - 2.0 * r2).abs() < 1e-5);
        // the surface has 2 mm grains only: every size is theirs
        let l = bank.lookup(Family::Surface, 0.5, MU, 0.004, 0.0, 0.1);
        assert!(l.grain_diameter_m.clamped && l.grain_diameter_m.used == D2);
        // a size that is not a number takes the first
        assert_eq!(at(f32::NAN).grain_diameter_m.used, D2);
    }

    /// A size may hold falls the others lack (the sweep runs a grain further where its
    /// factory presets fall further): the synthetic mug's 4 mm grains of restitution 0.5 and
    /// friction 0.5 also from 0.5 m. At 4 mm from 0.4 m the lookup is inside the grid (the
    /// rate between the 0.3 and 0.5 m entries'); half-way between 2 and 4 mm the 2 mm corner
    /// clamps at 0.3 m and says so, the 4 mm one interpolates; the added fall needs every
    /// fill of its size.
    #[test]
    fn a_size_may_hold_falls_of_its_own() {
        let mut v = synthetic();
        let entries = v["entries"].as_array_mut().unwrap();
        let extra: Vec<Value> = entries
            .iter()
            .filter(|e| e["family"] == "mug" && e["friction"] == 0.5 && e["restitution"] == 0.5)
            .filter(|e| e["grain_diameter_m"] == 0.004 && e["fall_height_m"] == 0.3)
            .map(|e| {
                let mut e = e.clone();
                e["fall_height_m"] = json!(0.5);
                let rate = (1.0 + 0.5 + e["fill"].as_f64().unwrap() + 0.5) * 2.0;
                e["cells"]["impact_zone"] = cell_json(rate, &[(10, rate * 1000.0)], 0, 0.0);
                e
            })
            .collect();
        assert_eq!(extra.len(), 2, "both fills");
        entries.extend(extra.iter().cloned());
        let bank = Bank::parse(&v.to_string()).unwrap();
        assert_eq!(bank.falls(MUG, 0.5, MU, 0.004), [0.1, 0.3, 0.5]);
        assert_eq!(bank.falls(MUG, 0.5, MU, D2), [0.1, 0.3]);
        assert_eq!(bank.falls(MUG, 0.5, 0.3, 0.004), [0.1, 0.3]);
        let l = bank.lookup(MUG, 0.5, MU, 0.004, 0.0, 0.4);
        assert!(!l.clamped(), "{:?}", l.fall_height_m);
        assert!(
            (l.cells[0].rate - (1.0 + 0.5 + 0.4) * 2.0).abs() < 1e-5,
            "{}",
            l.cells[0].rate
        );
        let mid = bank.lookup(MUG, 0.5, MU, D2 * 2f32.sqrt(), 0.0, 0.4);
        assert!(mid.fall_height_m.clamped);
        assert!((mid.fall_height_m.used - 0.35).abs() < 1e-6, "{:?}", mid.fall_height_m);
        let want = 0.5 * (1.0 + 0.5 + 0.3) + 0.5 * (1.0 + 0.5 + 0.4) * 2.0;
        assert!(
            (mid.cells[0].rate - want).abs() < 1e-5,
            "{} against {want}",
            mid.cells[0].rate
        );
        // within the falls every size holds, nothing changed
        let base = synthetic_bank();
        for (d, h) in [(0.004, 0.2), (D2, 0.3), (0.003, 0.1)] {
            assert_eq!(
                bank.lookup(MUG, 0.5, MU, d, 0.5, h),
                base.lookup(MUG, 0.5, MU, d, 0.5, h)
            );
        }
        // one fill without the added fall: not a full grid
        v["entries"].as_array_mut().unwrap().pop();
        let e = Bank::parse(&v.to_string()).unwrap_err().to_string();
        assert!(
            e.contains(
                "no entry at restitution 0.5, friction 0.5, grain_diameter_m 0.004, fill 0.5, fall_height_m 0.5"
            ),
            "{e}"
        );
    }

    /// Two grid values of no distance between them (two diameters whose logarithms are one
    /// number in single precision) give finite weights: the lower one's.
    #[test]
    fn an_interval_of_no_width_takes_its_lower_end() {
        let ln = [0.002f32.ln(), 0.002f32.next_up().ln()];
        assert_eq!(place(&[ln[0], ln[0]], ln[0]).1, [(0, 1.0), (1, 0.0)]);
        let (_, w) = place(&ln, ln[0]);
        assert!(w.iter().all(|(_, w)| w.is_finite()), "{w:?}");
    }

    /// A wall ring's hits keep their height above the bed: the synthetic mug's rings have 0.1
    /// a grain at fills 0 and 0.5 (at 0.5 ring 0 is buried: its hits at the bed's edge). At
    /// 0.25 the bed's edge is a quarter up ring 0. From the corner at 0, evenly spread (the
    /// profile is a line): ring 0 keeps the quarter of its hits nearest the bed (0.025), ring
    /// 1 gets the rest of ring 0's and a quarter of its own (0.1), ring 2 the rest (0.175).
    /// From the corner at 0.5 (0.1 at the bed's edge, 0.2 at 1/6 of the depth above it, 0.3
    /// at 1/2), the monotone cubic's 0.1559 up to 1/12 and 0.2862 up to 5/12 (Fritsch and
    /// Carlson's slopes 0.7, 0.4154 and 0.1 worked by hand, and by SciPy's `PchipInterpolator`
    /// formulas): 0.1559, 0.1302 and 0.0138. Half of each; the wall's total is the corners'
    /// mean, 0.3. At 0.5 itself, ring 0 is buried: its hits are ring 1's.
    #[test]
    fn wall_rings_keep_their_hits_height_above_the_bed() {
        let bank = synthetic_bank();
        let l = bank.lookup(MUG, 0.5, MU, D2, 0.25, 0.1);
        let rate = |n: usize| l.cells[WALL_RING_0 + n].rate;
        for (n, want) in [0.090465, 0.115124, 0.094411].into_iter().enumerate() {
            assert!((rate(n) - want).abs() < 2e-6, "ring {n}: {}", rate(n));
        }
        let full = bank.lookup(MUG, 0.5, MU, D2, 0.5, 0.1);
        let rate = |n: usize| full.cells[WALL_RING_0 + n].rate;
        assert_eq!(rate(0), 0.0, "buried");
        assert!((rate(1) - 0.2).abs() < 1e-6 && (rate(2) - 0.1).abs() < 1e-6);
    }

    /// `ring_transfer` moves every hit somewhere (each column with hits sums to 1), to no
    /// buried ring (the top ring reaches above the rim), leaves the rings as they are at the
    /// same fill (all bare at 0), keeps a hit's height above the bed (at a bed at 0.5 every
    /// hit is within half the depth above it: at 0, in rings 0 and 1) and never takes hits
    /// away as the height grows (the profile is monotone, whatever the rates).
    #[test]
    fn a_wall_hit_keeps_its_height_above_the_bed() {
        let rate_sets = [
            [0.1, 0.1, 0.1],
            [0.4, 0.8, 0.2],
            [0.0, 0.04, 0.008],
            [0.03, 0.0, 0.5],
            [1.3, 0.3, 0.2],
        ];
        for rates in rate_sets {
            for from in [0.0, 0.1, 0.3, 0.45, 0.6, 0.9, 1.0] {
                let profile = WallProfile::new(from, rates);
                let mut last = 0.0;
                for i in 0..=100 {
                    let c = profile.at(i as f32 / 100.0);
                    assert!(c >= last - 1e-7, "{rates:?} at {from}: falls at {i} %");
                    last = c;
                }
                for to in [0.0, 0.2, 0.3, 0.45, 0.6, 0.75, 1.0] {
                    let t = ring_transfer(from, to, rates);
                    for (k2, &r) in rates.iter().enumerate() {
                        let sum: f32 = t.iter().map(|row| row[k2]).sum();
                        let want = if r > 0.0 { 1.0 } else { 0.0 };
                        assert!((sum - want).abs() < 1e-5, "{from} -> {to}: ring {k2} sums to {sum}");
                    }
                    for (k, row) in t.iter().enumerate() {
                        // (the top ring reaches on above the rim: a full cup's hits are there)
                        let buried = k + 1 < RINGS && (k + 1) as f32 / RINGS as f32 <= to;
                        assert!(
                            !buried || row.iter().all(|&x| x == 0.0),
                            "{from} -> {to}: ring {k} buried"
                        );
                    }
                }
            }
            let same = ring_transfer(0.0, 0.0, rates);
            for (k, row) in same.iter().enumerate() {
                for (k2, &x) in row.iter().enumerate() {
                    let want = if k == k2 && rates[k2] > 0.0 { 1.0 } else { 0.0 };
                    assert!((x - want).abs() < 1e-6, "{rates:?}: {same:?}");
                }
            }
            let down = ring_transfer(0.5, 0.0, rates);
            assert!(down[2].iter().all(|&x| x == 0.0), "{rates:?}: {down:?}");
        }
    }

    fn error(edit: impl FnOnce(&mut Value)) -> String {
        let mut v = synthetic();
        edit(&mut v);
        Bank::parse(&v.to_string()).unwrap_err().to_string()
    }

    #[test]
    fn parse_errors_name_what_is_wrong() {
        assert!(error(|v| v["format"] = json!("granary-preset")).contains("format `granary-preset`"));
        assert!(
            error(|v| v["version"] = json!(1)).contains("version 1: this build reads versions 4 (spheres only) and 5")
        );
        assert!(error(|v| v["version"] = json!(6)).contains("version 6: this build reads"));
        let e = error(|v| v["entries"][2]["shape"] = json!("pyramid"));
        assert!(
            e.contains("entry 2 (mug, shape pyramid") && e.contains("unknown shape `pyramid`"),
            "{e}"
        );
        let e = error(|v| v["speed_bins"]["n"] = json!(12));
        assert!(e.contains("speed_bins: 12 bins; the generator has 16"), "{e}");
        let e = error(|v| v["angle_bins"]["n"] = json!(9));
        assert!(e.contains("angle_bins: 9 bins; the generator has 8"), "{e}");
        let e = error(|v| {
            v["entries"][3]["cells"].as_object_mut().unwrap().remove("wall_ring_1");
        });
        assert!(
            e.contains("entry 3 (mug") && e.contains("cell `wall_ring_1` is missing"),
            "{e}"
        );
        let e = error(|v| v["entries"][2]["cells"]["stream"]["speed"] = json!([1.0, 2.0]));
        assert!(
            e.contains("entry 2") && e.contains("`speed` has 2 bins, expected 16"),
            "{e}"
        );
        let e = error(|v| v["entries"][2]["cells"]["stream"]["angle_by_speed"][4] = json!(vec![0.0; 9]));
        assert!(
            e.contains("cell `stream`: `angle_by_speed[4]` has 9 bins, expected 8"),
            "{e}"
        );
        let e = error(|v| v["entries"][2]["cells"]["stream"]["angle_by_speed"] = json!(vec![vec![0.0; 8]; 3]));
        assert!(e.contains("`angle_by_speed` has 3 bins, expected 16"), "{e}");
        let e = error(|v| v["entries"][2]["cells"]["stream"]["angle_by_speed"][4][0] = json!(3.0));
        assert!(
            e.contains("the angle_by_speed[4] counts sum to 103, not speed[4] = 100"),
            "{e}"
        );
        let e = error(|v| {
            v["entries"].as_array_mut().unwrap().remove(5);
        });
        assert!(
            e.contains("family `mug`: not a full grid") && e.contains("no entry at"),
            "{e}"
        );
        // a restitution's frictions each need the whole grid: the first mug entry of
        // restitution 0.5 and friction 0.3 removed
        let e = error(|v| {
            v["entries"].as_array_mut().unwrap().remove(0);
        });
        assert!(
            e.contains("no entry at restitution 0.5, friction 0.3, grain_diameter_m 0.002, fill 0, fall_height_m 0.1 (that size's 2 fills x 2 falls)"),
            "{e}"
        );
        let e = error(|v| {
            let dup = v["entries"][0].clone();
            v["entries"].as_array_mut().unwrap()[1] = dup;
        });
        assert!(
            e.contains("family `mug`: not a full grid") && e.contains("two entries"),
            "{e}"
        );
        let e = error(|v| v["entries"][1]["cells"]["surface"]["rate"] = json!(-0.5));
        assert!(
            e.contains("entry 1") && e.contains("`surface`: rate: -0.5 is not a finite number >= 0"),
            "{e}"
        );
        let e = error(|v| v["entries"][1]["fill"] = json!(-1.0));
        assert!(e.contains("fill: -1 is not a finite number >= 0"), "{e}");
        let e = error(|v| v["entries"][0]["cells"]["impact_zone"]["speed"][3] = json!(-2.0));
        assert!(e.contains("impact_zone`: speed[3]: -2"), "{e}");
        // JSON has no NaN or infinity: an overflowing number is refused by the reader
        let text = synthetic()
            .to_string()
            .replacen("\"rate\":", "\"rate\":1e999,\"x\":", 1);
        assert!(Bank::parse(&text)
            .unwrap_err()
            .to_string()
            .starts_with("not a bank file"));
        let e = error(|v| v["entries"][0]["family"] = json!("teapot"));
        assert!(e.contains("unknown family `teapot`"), "{e}");
        let e = error(|v| v["cells"] = json!(["impact_zone"]));
        assert!(e.contains("`cells`: cell `cup_floor` is missing"), "{e}");
        let e = error(|v| v["entries"][0]["cells"]["impact_zone"]["count"] = json!(5.0));
        assert!(e.contains("speed counts sum to"), "{e}");
        let e = error(|v| v["life_edges_s"][3] = json!(0.03));
        assert!(e.contains("life_edges_s: ") && e.contains("the generator's are"), "{e}");
        let e = error(|v| v["entries"][0]["cells"]["impact_zone"]["speed_by_life"][2][10] = json!(7.0));
        assert!(e.contains("the speed_by_life counts of speed bin 10 sum to"), "{e}");
        let e = error(|v| v["entries"][0]["cells"]["impact_zone"]["speed_by_life"] = json!([vec![0.0; 16]]));
        assert!(e.contains("`speed_by_life` has 1 bins, expected 10"), "{e}");
        let e = error(|v| v["entries"] = json!([]));
        assert_eq!(e, "the bank has no entries");
        assert!(Bank::parse("{").unwrap_err().to_string().starts_with("not a bank file"));
    }

    #[test]
    fn a_lookup_at_a_grid_point_is_that_entry() {
        let b = synthetic_bank();
        let l = b.lookup(MUG, 0.9, MU, D2, 0.5, 0.1);
        assert!(!l.clamped() && !l.fell_back());
        let iz = &l.cells[0];
        assert_eq!(iz.rate, (1.0f64 + 0.9 + 0.5 + 0.1) as f32);
        assert_eq!(iz.speed[12], 1.0);
        assert_eq!(iz.speed.iter().sum::<f32>(), 1.0);
        assert_eq!(iz.angle_by_speed[12][2], 1.0);
        assert_eq!(iz.angle()[2], 1.0);
        // the rows summed once, as the generator draws them
        for (cdf, row) in iz.angle_cdf.iter().zip(&iz.angle_by_speed) {
            assert_eq!(*cdf, cumulative(row));
        }
        assert_eq!(iz.angle_cdf[12], [0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
        assert_eq!((iz.life[0], iz.life[7]), (0.5, 0.5));
        assert_eq!((iz.speed_by_life[0][12], iz.speed_by_life[7][12]), (0.5, 0.5));
        assert!((iz.mean_life_s() - 0.5 * (0.0025 + 0.75)).abs() < 1e-6);
        // no floor collisions on a covered floor: rate 0, empty histograms
        assert_eq!(l.cells[1], CellLookup::ZERO);
        assert_eq!(
            (l.cells[6].rate, l.cells[6].speed[4], l.cells[6].angle_by_speed[4][1]),
            (0.1, 1.0, 1.0)
        );
    }

    #[test]
    fn half_way_is_the_mean_rate_and_the_rate_weighted_mixture() {
        let b = synthetic_bank();
        // half-way in restitution (0.7) at a grid point in fill and fall
        let l = b.lookup(MUG, 0.7, MU, D2, 0.0, 0.3);
        let (r5, r9) = (1.0f32 + 0.5 + 0.3, 1.0f32 + 0.9 + 0.3);
        let iz = &l.cells[0];
        assert!((iz.rate - 0.5 * (r5 + r9)).abs() < 1e-6, "{}", iz.rate);
        // bin 10 from restitution 0.5, bin 12 from 0.9: weighted by their rates
        assert!((iz.speed[10] - r5 / (r5 + r9)).abs() < 1e-6, "{:?}", iz.speed);
        assert!((iz.speed[12] - r9 / (r5 + r9)).abs() < 1e-6, "{:?}", iz.speed);
        // and each speed keeps its own angles: bin 10's in angle bin 0, bin 12's in 2
        assert!((iz.angle_by_speed[10][0] - r5 / (r5 + r9)).abs() < 1e-6);
        assert!((iz.angle_by_speed[12][2] - r9 / (r5 + r9)).abs() < 1e-6);
        assert_eq!(iz.angle_by_speed[10][2] + iz.angle_by_speed[12][0], 0.0);
        // the lifetime profiles mix as the speeds do: half of 0.9's collisions come late
        assert!((iz.life[7] - 0.5 * r9 / (r5 + r9)).abs() < 1e-6, "{:?}", iz.life);
        assert!((iz.life.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        // half-way in fill: the floor's rate halves, but its histogram is the one corner
        // with collisions, undiluted by the covered floor (at the beads' restitution, where
        // the floor does not fade with the bed: `FLOOR_FADE_MAX_RESTITUTION`)
        let l = b.lookup(MUG, 0.9, MU, D2, 0.25, 0.1);
        assert!((l.cells[1].rate - 1.0).abs() < 1e-6);
        assert!((l.cells[1].speed[8] - 1.0).abs() < 1e-6);
        // the centre of the cube: the mean of all eight corners' rates
        let l = b.lookup(MUG, 0.7, MU, D2, 0.25, 0.2);
        assert!(
            (l.cells[0].rate - (1.0 + 0.7 + 0.25 + 0.2)).abs() < 1e-5,
            "{}",
            l.cells[0].rate
        );
    }

    /// Friction is interpolated at each bracketing restitution over that restitution's own
    /// frictions: the synthetic mug has 0.3 and 0.5 at restitution 0.5, 0.5 alone at 0.9
    /// (the impact zone's rate is 1 + restitution + fill + fall + 0.5 - friction, 2 mm).
    #[test]
    fn friction_is_interpolated_over_each_restitutions_own_frictions() {
        let b = synthetic_bank();
        let at = |e: f32, mu: f32| b.lookup(MUG, e, mu, D2, 0.0, 0.1);
        let close = |x: f32, y: f32| (x - y).abs() < 1e-6;
        assert_eq!(b.frictions(MUG, 0.5), [0.3, 0.5]);
        assert_eq!(b.frictions(MUG, 0.9), [0.5]);
        assert!(b.frictions(MUG, 0.7).is_empty());
        // at a banked grain, its entry; half-way between two frictions, their mean
        let l = at(0.5, 0.3);
        assert!(close(l.cells[0].rate, 1.8) && !l.clamped(), "{:?}", l.friction);
        let l = at(0.5, 0.4);
        assert!(close(l.cells[0].rate, 1.7), "{}", l.cells[0].rate);
        assert_eq!((l.friction.used, l.friction.clamped), (0.4, false));
        // below restitution 0.5's frictions: its lowest, said so
        let l = at(0.5, 0.2);
        assert!(close(l.cells[0].rate, 1.8) && l.friction.clamped && l.friction.used == 0.3);
        // restitution 0.9 has one friction: any other takes it, said so
        let l = at(0.9, 0.3);
        assert!(close(l.cells[0].rate, 2.0) && l.friction.clamped && l.friction.used == 0.5);
        assert!(l.clamped(), "a friction clamped alone is a clamped lookup");
        assert!(!at(0.9, 0.5).clamped());
        // half-way in restitution: 0.5's entries at friction 0.4 (1.7), 0.9's at 0.5 (2.0)
        let l = at(0.7, 0.4);
        assert!(close(l.cells[0].rate, 0.5 * (1.7 + 2.0)), "{}", l.cells[0].rate);
        assert!(close(l.friction.used, 0.45) && l.friction.clamped, "{:?}", l.friction);
        // a friction that is not a number takes each restitution's lowest, as other axes do
        let l = at(0.5, f32::NAN);
        assert!(close(l.cells[0].rate, 1.8) && l.friction.clamped);
    }

    /// Each grain has its own sizes: the synthetic mug's grain of friction 0.3 has 2, 3 and
    /// 4 mm, the others 2 and 4 mm (a rate proportional to the size).
    #[test]
    fn each_grain_is_interpolated_over_its_own_sizes() {
        let b = synthetic_bank();
        assert_eq!(b.diameters(MUG, 0.5, 0.3), [0.002, 0.003, 0.004]);
        assert_eq!(b.diameters(MUG, 0.5, 0.5), [0.002, 0.004]);
        assert!(b.diameters(MUG, 0.5, 0.4).is_empty());
        let at = |mu: f32, d: f32| b.lookup(MUG, 0.5, mu, d, 0.0, 0.1);
        let close = |x: f32, y: f32| (x - y).abs() < 1e-5;
        // at its own 3 mm, the entry: (1 + 0.5 + 0.1 + 0.2) x 1.5
        let l = at(0.3, 0.003);
        assert!(close(l.cells[0].rate, 2.7) && !l.clamped(), "{}", l.cells[0].rate);
        // the other grain at 3 mm: between its 2 and 4 mm in the logarithm
        let t = 1.5f32.ln() / 2.0f32.ln();
        let other = 1.6 * (1.0 + t);
        assert!(close(at(0.5, 0.003).cells[0].rate, other));
        // half-way in friction: the mean of the two grains' own interpolations
        let l = at(0.4, 0.003);
        assert!(close(l.cells[0].rate, 0.5 * (2.7 + other)), "{}", l.cells[0].rate);
        assert_eq!((l.grain_diameter_m.used, l.grain_diameter_m.clamped), (0.003, false));
        // 2.5 mm: between 2 and 3 mm for the one, 2 and 4 for the other
        let t25 = (1.25f32.ln() / 1.5f32.ln(), 1.25f32.ln() / 2.0f32.ln());
        let l = at(0.4, 0.0025);
        let own = 1.8 * (1.0 - t25.0) + 2.7 * t25.0;
        assert!(
            close(l.cells[0].rate, 0.5 * (own + 1.6 * (1.0 + t25.1))),
            "{}",
            l.cells[0].rate
        );
        // beyond every grain's sizes: each grain's largest, said so
        let l = at(0.4, 0.01);
        assert_eq!(
            (
                l.grain_diameter_m.asked,
                l.grain_diameter_m.used,
                l.grain_diameter_m.clamped
            ),
            (0.01, 0.004, true)
        );
    }

    #[test]
    fn values_outside_the_grid_take_the_nearest_entry_and_say_so() {
        let b = synthetic_bank();
        let l = b.lookup(MUG, 0.2, MU, D2, 0.8, 0.05);
        assert!(l.clamped());
        assert_eq!(
            l.restitution,
            Axis {
                asked: 0.2,
                used: 0.5,
                clamped: true
            }
        );
        assert_eq!((l.fill.used, l.fill.clamped), (0.5, true));
        assert_eq!((l.fall_height_m.used, l.fall_height_m.clamped), (0.1, true));
        assert_eq!(l.cells[0].rate, b.lookup(MUG, 0.5, MU, D2, 0.5, 0.1).cells[0].rate);
        let l = b.lookup(MUG, f32::NAN, MU, D2, 0.3, 0.2);
        assert!(l.restitution.clamped && l.restitution.used == 0.5 && !l.fill.clamped);
        // the surface family has fill 0 only, its entries' heaps growing in their runs: not
        // a clamp
        let l = b.lookup(Family::Surface, 0.5, MU, D2, 0.3, 0.1);
        assert_eq!(
            (l.fill.used, l.fill.clamped, l.restitution.clamped),
            (0.0, false, false)
        );
        assert!(!l.clamped());
        assert_eq!(l.cells, b.lookup(Family::Surface, 0.5, MU, D2, 0.0, 0.1).cells);
        // a family the bank lacks: the mug's entries, said so
        let l = b.lookup(Family::Cup(CupShape::Bowl), 0.5, MU, D2, 0.0, 0.1);
        assert!(l.fell_back() && l.family == MUG);
        assert_eq!(l.cells, b.lookup(MUG, 0.5, MU, D2, 0.0, 0.1).cells);
    }

    /// A pour `scale` times the bank's is looked up as the similar one: grains and fall
    /// `scale` times smaller (Froude similarity, `Bank::select`), the scale reported; a
    /// scale that is not a positive number is 1.
    #[test]
    fn a_scaled_pour_is_looked_up_as_the_similar_pour() {
        let b = shipped();
        let (e, mu) = (0.5, 0.35);
        for family in Family::ALL {
            for (d, h, fill) in [(0.0056, 0.44, 0.3), (0.005, 0.3, 0.7), (0.0036, 0.2, 0.0)] {
                let scaled = b.lookup_at(&b.select(family, Shape::Sphere, e, mu, d, h, 2.0), fill);
                let similar = b.lookup(family, e, mu, 0.5 * d, fill, 0.5 * h);
                assert_eq!(scaled.cells, similar.cells, "{} {d} {h}", family.id());
                assert_eq!(
                    (scaled.grain_diameter_m, scaled.fall_height_m),
                    (similar.grain_diameter_m, similar.fall_height_m)
                );
                assert_eq!((scaled.scale, similar.scale), (2.0, 1.0));
            }
        }
        // against an unscaled lookup of the same numbers, the scale moves the rates
        let mug = Family::Cup(CupShape::Mug);
        let (scaled, plain) = (
            b.lookup_at(&b.select(mug, Shape::Sphere, e, mu, 0.0056, 0.44, 2.0), 0.3),
            b.lookup(mug, e, mu, 0.0056, 0.3, 0.44),
        );
        assert_ne!(scaled.cells, plain.cells);
        for bad in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            let l = b.lookup_at(&b.select(mug, Shape::Sphere, e, mu, 0.0028, 0.2, bad), 0.3);
            assert_eq!(
                (l.scale, l.cells),
                (1.0, b.lookup(mug, e, mu, 0.0028, 0.3, 0.2).cells),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_bare_floor_fades_with_the_bed_in_grain_diameters() {
        let b = shipped();
        let mug = Family::Cup(CupShape::Mug);
        let g = b.grids[mug.index()].as_ref().unwrap();
        let cup = Cup::new(CupShape::Mug, BANK_CUP_SIZE);
        // a run of 0.5 mm sugar hardly covers the floor (its thousand make a bed of 0.06 of
        // a diameter), 4 mm sugar's covers it many times over
        let (fine, coarse) = (floor_fade_mean(&cup, 0.0005), floor_fade_mean(&cup, 0.004));
        assert!(fine > 0.85 && fine < 1.0, "{fine}");
        assert!(coarse > 0.1 && coarse < 0.25, "{coarse}");
        let floor = |e: f32, mu: f32, d: f32, fill: f32| b.lookup(mug, e, mu, d, fill, 0.15).cells[FLOOR].rate;
        let first_bed = g.fills[1];
        for d in [0.0005, 0.002, 0.004] {
            // on the bare floor: the empty cup's run mean over the fade's mean over the run
            let r = g.restitutions.iter().position(|&x| x == 0.5).unwrap();
            let sugar = g.by_restitution[r].clone().find(|&k| g.frictions[k] == 0.45).unwrap();
            let s = g.by_grain[sugar].clone().find(|&s| g.diameters[s] == d).unwrap();
            let mean = g.floor_fade[s].unwrap();
            let empty = floor(0.5, 0.45, d, 0.0);
            let k = g.by_size[s].clone().find(|&k| g.falls[k] == 0.15).unwrap();
            let entry = g.cells[index(&g.by_size, g.fills.len(), s, 0, k)][FLOOR].rate;
            assert!(
                (empty - entry / mean).abs() <= 1e-4 * empty,
                "{d} m: {empty} against {entry} / {mean}"
            );
            // falling with the bed, to none at the first bed
            let rates: Vec<f32> = (0..=20)
                .map(|i| floor(0.5, 0.45, d, first_bed * i as f32 / 20.0))
                .collect();
            assert!(rates.windows(2).all(|w| w[1] <= w[0]), "{d} m: {rates:?}");
            assert_eq!(rates[20], 0.0);
            // a bed one diameter high: e^(-1 / 0.42) of the bare floor's, blended to the bed
            let fill = d / g.depth_m;
            let want = empty * (-1.0 / FLOOR_FADE_DIAMETERS).exp() * (1.0 - fill / first_bed);
            let got = floor(0.5, 0.45, d, fill);
            assert!((got - want).abs() <= 1e-3 * empty, "{d} m: {got} against {want}");
        }
        // the default preset's 0.5 mm sugar a second in (a bed of 0.041, 7.3 diameters): none
        assert!(
            floor(0.5, 0.45, 0.0005, 0.041) < 1e-3,
            "{}",
            floor(0.5, 0.45, 0.0005, 0.041)
        );
        // glass beads keep the linear blend: they bounce off their low heap onto the floor
        let beads_empty = floor(0.85, 0.4, 0.002, 0.0);
        let half = floor(0.85, 0.4, 0.002, 0.5 * first_bed);
        assert!(
            (half - 0.5 * beads_empty).abs() <= 1e-4 * beads_empty,
            "{half} against {beads_empty}"
        );
        // onto the surface nothing fades: the fill is not an axis there
        let surface = b.lookup(Family::Surface, 0.5, 0.45, 0.002, 0.03, 0.15).cells[FLOOR].rate;
        assert_eq!(
            surface,
            b.lookup(Family::Surface, 0.5, 0.45, 0.002, 0.0, 0.15).cells[FLOOR].rate
        );
    }

    #[test]
    fn the_shipped_bank_parses_and_holds_every_family() {
        let b = shipped();
        for f in Family::ALL {
            assert!(b.axes(f).is_some(), "the shipped bank lacks `{}`", f.id());
            assert!(b.axes(f).unwrap().iter().all(|a| !a.is_empty()));
            // sugar's restitution at rice's friction, its own and gravel's, rice at its own
            // 2.8 mm too; coffee beans' and lentils' restitutions (`granary-dem`'s sweep)
            assert_eq!(b.frictions(f, 0.5), [0.35, 0.45, 0.6], "{}", f.id());
            // rice at 1.4 mm in the bowl, lentils in the metal cup, sugar at 0.4 and 0.5 mm
            // in the mug (`granary-dem`'s `SMALL_SIZES`: the factory presets' 1.56 and
            // 1.95 mm in the bank's cups, sugar's and salt's 0.5 and 0.44 mm)
            let small = |family, d: &'static [f32]| if f == family { d } else { &[][..] };
            // and sugar and gravel at 0.9 mm in the metal cup (steel shot's 1 mm in the tin)
            // and at 1 mm onto the surface (steel shot's onto the steel plate)
            let metal = |d: &'static [f32]| -> &'static [f32] {
                match f {
                    Family::Cup(CupShape::MetalCup) => d,
                    Family::Surface => &[0.001],
                    _ => &[],
                }
            };
            let rice = [small(Family::Cup(CupShape::Bowl), &[0.0014]), &[0.002, 0.0028, 0.004]].concat();
            assert_eq!(b.diameters(f, 0.5, 0.35), rice, "{}", f.id());
            let mug = small(Family::Cup(CupShape::Mug), &[0.0004, 0.0005]);
            let sugar = [mug, metal(&[0.0009]), &[0.002, 0.004]].concat();
            assert_eq!(b.diameters(f, 0.5, 0.45), sugar, "{}", f.id());
            // gravel and coffee beans at 6 mm too (the factory presets' 6 and 5 mm)
            let gravel = [metal(&[0.0009]), &[0.002, 0.004, 0.006]].concat();
            assert_eq!(b.diameters(f, 0.5, 0.6), gravel, "{}", f.id());
            // the beads' restitution at their friction and gravel's (a bead of friction
            // 0.6, 2 mm: sand's 0.55 and steel shot's 0.57 between them)
            assert_eq!(b.frictions(f, 0.85), [0.4, 0.6], "{}", f.id());
            // and at 0.9 mm in the metal cup, the beads at 0.5 mm in the tumbler (the fine
            // beads')
            let beads = [
                small(Family::Cup(CupShape::Tumbler), &[0.0005]),
                metal(&[0.0009]),
                &[0.002, 0.004],
            ]
            .concat();
            assert_eq!(b.diameters(f, 0.85, 0.4), beads, "{}", f.id());
            assert_eq!(
                b.diameters(f, 0.85, 0.6),
                [metal(&[0.0009]), &[0.002]].concat(),
                "{}",
                f.id()
            );
            assert_eq!(b.frictions(f, 0.4), [0.35], "{}", f.id());
            assert_eq!(b.diameters(f, 0.4, 0.35), [0.002, 0.004, 0.006], "{}", f.id());
            // the falls: 8 to 40 cm, gravel's to 45 cm (gravel onto soil's 41.9 cm), coffee
            // beans' from 5 cm (the coffee jar's 7.1 cm in the bank's cup)
            let falls = [0.08, 0.15, 0.22, 0.3, 0.4];
            // onto the surface sugar and the beads at 2 mm from 45 cm too (sand onto
            // concrete's 40.8 cm: `granary-dem`'s `EXTRA_FALLS`)
            let two_mm = if f == Family::Surface {
                &[0.08, 0.15, 0.22, 0.3, 0.4, 0.45][..]
            } else {
                &falls[..]
            };
            assert_eq!(b.falls(f, 0.5, 0.45, 0.002), two_mm, "{}", f.id());
            assert_eq!(b.falls(f, 0.85, 0.4, 0.002), two_mm, "{}", f.id());
            assert_eq!(b.falls(f, 0.85, 0.6, 0.002), two_mm, "{}", f.id());
            assert_eq!(b.falls(f, 0.5, 0.45, 0.004), falls, "{}", f.id());
            assert_eq!(b.falls(f, 0.85, 0.4, 0.004), falls, "{}", f.id());
            assert_eq!(
                b.falls(f, 0.5, 0.6, 0.006),
                [0.08, 0.15, 0.22, 0.3, 0.4, 0.45],
                "{}",
                f.id()
            );
            assert_eq!(
                b.falls(f, 0.4, 0.35, 0.002),
                [0.05, 0.08, 0.15, 0.22, 0.3, 0.4],
                "{}",
                f.id()
            );
            assert_eq!(b.frictions(f, 0.45), [0.32], "{}", f.id());
            let lentils = [small(Family::Cup(CupShape::MetalCup), &[0.0014]), &[0.002, 0.004]].concat();
            assert_eq!(b.diameters(f, 0.45, 0.32), lentils, "{}", f.id());
            // a cup's beds from empty to full (at the rim: a full cup's overflow)
            if f != Family::Surface {
                assert_eq!(b.axes(f).unwrap()[1], [0.0, 0.05, 0.3, 0.6, 0.9, 1.0], "{}", f.id());
            }
        }
        assert_eq!(b.families().count(), Family::ALL.len());
    }

    #[test]
    fn every_generator_cell_but_settling_is_banked_once() {
        let mut seen = [false; BANKED_CELLS];
        for cell in crate::base::window::CELLS {
            match bank_cell(cell) {
                Some(i) => {
                    assert!(!seen[i]);
                    seen[i] = true;
                }
                None => assert_eq!(cell, Cell::Settling),
            }
        }
        assert!(seen.iter().all(|&s| s));
    }
}

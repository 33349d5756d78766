//! The collision databank: per-cell collision statistics measured from rigid-body simulations
//! of pours (`cargo xtask bank`, crate granary-dem), which the window/cell generator can draw
//! from instead of its hand-written model (`statistics` = bank).
//!
//! Thesis 7.1 proposes exactly this: precompute the local PDFs of the probabilistic generator
//! (5.5–5.6: a Poisson count per window and cell, eq. 5.6, and histograms of the collisions'
//! speeds and normals, "the simple histogram reconstruction method") from simulations over a
//! range of scene parameters, and look them up while synthesising. The file (format
//! "granary-bank", version 1; docs/architecture.md, "The collision databank") holds entries
//! on a full grid over restitution x
//! fill x fall height per family (a cup shape, or the pour onto the surface), each with, per
//! cell, the collisions per arriving grain and the counts per speed bin (log-spaced, in units
//! of the impact speed sqrt(2 g h)) and per normal-angle bin (linear, 0..pi/2 from the cell's
//! mean normal).
//!
//! `Bank::parse` checks everything once (outside the audio thread); `Bank::lookup` is
//! allocation-free: multilinear interpolation over the family's grid, clamped to it, mixing
//! the corners' histograms weighted by their rates.

use crate::cups::CupShape;
use crate::generator::Cell;
use crate::settings::{PourTarget, Settings};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The file format's name and the version this build reads.
pub const FORMAT: &str = "granary-bank";
pub const VERSION: u64 = 1;
/// Speed and angle bins: the generator's histograms' (`generator::Shapes`), bin for bin.
pub const SPEED_BINS: usize = crate::generator::SPEED_BINS;
pub const ANGLE_BINS: usize = crate::generator::ANGLE_BINS;

/// The banked cells' ids, in the generator's order (`generator::CELLS` less `Settling`,
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
        Cell::WallRing(k) if k < 3 => Some(2 + k),
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
    #[error("version {0}: this build reads version {VERSION}")]
    Version(u64),
    #[error("{axis}: {detail}")]
    Bins { axis: &'static str, detail: String },
    #[error("`cells`: {0}")]
    Cells(String),
    #[error("{entry}: unknown family `{family}` (expected one of mug, tumbler, bowl, jar, metal_cup, surface)")]
    Family { entry: String, family: String },
    #[error("{entry}: cell `{cell}` is missing")]
    MissingCell { entry: String, cell: &'static str },
    #[error("{entry}: unknown cell `{cell}`")]
    UnknownCell { entry: String, cell: String },
    #[error("{entry}, cell `{cell}`: `{histogram}` has {got} bins, expected {expected}")]
    HistogramLength {
        entry: String,
        cell: &'static str,
        histogram: &'static str,
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
    #[error("family `{family}`: not a full grid over restitution x fill x fall_height_m: {detail}")]
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
    fill: f64,
    fall_height_m: f64,
    cells: BTreeMap<String, RawCell>,
}

#[derive(Deserialize)]
struct RawCell {
    rate: f64,
    count: f64,
    speed: Vec<f64>,
    angle: Vec<f64>,
    time: Vec<f64>,
}

/// One cell of one entry: its rate and its histograms as shares (each sums to 1, or all 0
/// for a cell without collisions).
#[derive(Debug, Clone, Copy, PartialEq)]
struct CellData {
    rate: f32,
    speed: [f32; SPEED_BINS],
    angle: [f32; ANGLE_BINS],
}

/// One family's entries on its grid: `axes` (restitution, fill, fall height, m), each
/// ascending and distinct; entry (i, j, k) at `(i * fills + j) * falls + k`.
#[derive(Debug, Clone, PartialEq)]
struct Grid {
    axes: [Vec<f32>; 3],
    cells: Vec<[CellData; BANKED_CELLS]>,
}

/// A parsed, checked bank.
#[derive(Debug, Clone, PartialEq)]
pub struct Bank {
    /// What produced it (the file's free text).
    pub source: String,
    /// The speed bins' range, in units of the impact speed (log-spaced), and the angle
    /// bins', rad (linear).
    pub speed_range: (f32, f32),
    pub angle_range: (f32, f32),
    grids: [Option<Grid>; 6],
}

/// One axis of a lookup: the value asked, the value used (the nearest within the grid),
/// and whether they differ (outside the bank's range: nearest entry used).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Axis {
    pub asked: f32,
    pub used: f32,
    pub clamped: bool,
}

/// One cell of a lookup: collisions per arriving grain, and the mixture's speed and angle
/// distributions as shares per bin (each sums to 1, or all 0 where the rate is 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellLookup {
    pub rate: f32,
    pub speed: [f32; SPEED_BINS],
    pub angle: [f32; ANGLE_BINS],
}

impl CellLookup {
    const ZERO: CellLookup = CellLookup {
        rate: 0.0,
        speed: [0.0; SPEED_BINS],
        angle: [0.0; ANGLE_BINS],
    };
}

/// What the bank gives for one pour state (`Bank::lookup`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lookup {
    /// The family asked for, and the one used (another when the bank lacks it).
    pub asked: Family,
    pub family: Family,
    pub restitution: Axis,
    pub fill: Axis,
    /// The spout's height above the rim, m.
    pub fall_height_m: Axis,
    /// As `Bank::speed_range` and `Bank::angle_range`.
    pub speed_range: (f32, f32),
    pub angle_range: (f32, f32),
    /// By bank cell (`CELL_IDS`, `bank_cell`).
    pub cells: [CellLookup; BANKED_CELLS],
}

impl Lookup {
    /// The bank lacked the family asked for: another one's entries were used.
    pub fn fell_back(&self) -> bool {
        self.asked != self.family
    }

    /// Some axis was outside the bank's range (the nearest entries were used).
    pub fn clamped(&self) -> bool {
        self.restitution.clamped || self.fill.clamped || self.fall_height_m.clamped
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
pub const SHIPPED_JSON: &str = include_str!("../../assets/bank/bank.json");

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
    /// Parses and checks a bank file (format `granary-bank`, version 1).
    pub fn parse(text: &str) -> Result<Bank, BankError> {
        let raw: RawBank = serde_json::from_str(text).map_err(|e| BankError::Json(e.to_string()))?;
        if raw.format != FORMAT {
            return Err(BankError::Format(raw.format));
        }
        if raw.version != VERSION {
            return Err(BankError::Version(raw.version));
        }
        let speed_range = check_bins("speed_bins", &raw.speed_bins, SPEED_BINS, true)?;
        let angle_range = check_bins("angle_bins", &raw.angle_bins, ANGLE_BINS, false)?;
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
        // every entry, checked, by family
        let mut by_family: [Vec<([f32; 3], [CellData; BANKED_CELLS])>; 6] = Default::default();
        for (n, e) in raw.entries.iter().enumerate() {
            let label = format!(
                "entry {n} ({}, restitution {}, fill {}, fall_height_m {})",
                e.family, e.restitution, e.fill, e.fall_height_m
            );
            let family = Family::from_id(&e.family).ok_or_else(|| BankError::Family {
                entry: format!("entry {n}"),
                family: e.family.clone(),
            })?;
            let axes = [
                non_negative(e.restitution, || format!("{label}: restitution"))? as f32,
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
                angle: [0.0; ANGLE_BINS],
            }; BANKED_CELLS];
            for (i, id) in CELL_IDS.into_iter().enumerate() {
                let c = e.cells.get(id).ok_or_else(|| BankError::MissingCell {
                    entry: label.clone(),
                    cell: id,
                })?;
                cells[i] = check_cell(&label, id, c, raw.time_bins)?;
            }
            by_family[family.index()].push((axes, cells));
        }
        let mut grids: [Option<Grid>; 6] = Default::default();
        for (f, entries) in by_family.into_iter().enumerate() {
            if !entries.is_empty() {
                grids[f] = Some(grid(Family::ALL[f].id(), entries)?);
            }
        }
        Ok(Bank {
            source: raw.source,
            speed_range,
            angle_range,
            grids,
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

    /// A family's grid axes (restitution, fill, fall height m), if the bank holds it.
    pub fn axes(&self, family: Family) -> Option<[&[f32]; 3]> {
        self.grids[family.index()]
            .as_ref()
            .map(|g| [&g.axes[0][..], &g.axes[1][..], &g.axes[2][..]])
    }

    /// The statistics for a pour of `family` with grains of coefficient of restitution
    /// `restitution`, the cup filled to `fill` (of its depth) and the spout `fall_height_m`
    /// above the rim (thesis 7.1: the precomputed PDFs looked up by the scene's parameters).
    ///
    /// Multilinear interpolation over the family's grid, each axis clamped to its range (the
    /// clamped ones reported). Per cell the rate is the corners' rates weighted by the
    /// interpolation weights w_i, and the speed and angle distributions are the mixture
    /// sum_i w_i rate_i h_i (h_i the corner's normalised histogram), normalised: a corner
    /// without collisions in the cell does not dilute the others, and a cell with none at
    /// every corner has rate 0. A family the bank lacks falls back to `mug`, else to the
    /// first it holds. No allocation: the generator calls this once a window on the audio
    /// thread.
    pub fn lookup(&self, family: Family, restitution: f32, fill: f32, fall_height_m: f32) -> Lookup {
        let used = if self.grids[family.index()].is_some() {
            family
        } else if self.grids[Family::Cup(CupShape::Mug).index()].is_some() {
            Family::Cup(CupShape::Mug)
        } else {
            self.families().next().unwrap_or(family)
        };
        let mut out = Lookup {
            asked: family,
            family: used,
            restitution: Axis::default(),
            fill: Axis::default(),
            fall_height_m: Axis::default(),
            speed_range: self.speed_range,
            angle_range: self.angle_range,
            cells: [CellLookup::ZERO; BANKED_CELLS],
        };
        let Some(g) = &self.grids[used.index()] else {
            return out;
        };
        let (ar, wr) = place(&g.axes[0], restitution);
        let (af, wf) = place(&g.axes[1], fill);
        let (ah, wh) = place(&g.axes[2], fall_height_m);
        (out.restitution, out.fill, out.fall_height_m) = (ar, af, ah);
        let (nf, nh) = (g.axes[1].len(), g.axes[2].len());
        let mut exposed_weight = [0.0f32; BANKED_CELLS];
        for (i, w_i) in wr {
            for (j, w_j) in wf {
                for (k, w_k) in wh {
                    let w = w_i * w_j * w_k;
                    if w <= 0.0 {
                        continue;
                    }
                    let corner = &g.cells[(i * nf + j) * nh + k];
                    for (n, (o, c)) in out.cells.iter_mut().zip(corner).enumerate() {
                        // a wall ring's collisions per exposed share of it (`ring_exposed`):
                        // a corner where the ring is buried says nothing of it
                        let (rate, w) = match (used, ring_of(n)) {
                            (Family::Cup(_), Some(ring)) => {
                                let e = ring_exposed(ring, g.axes[1][j]);
                                if e <= 0.0 {
                                    continue;
                                }
                                exposed_weight[n] += w;
                                (c.rate / e, w)
                            }
                            _ => (c.rate, w),
                        };
                        o.rate += w * rate;
                        let m = w * rate;
                        for (s, &x) in o.speed.iter_mut().zip(&c.speed) {
                            *s += m * x;
                        }
                        for (a, &x) in o.angle.iter_mut().zip(&c.angle) {
                            *a += m * x;
                        }
                    }
                }
            }
        }
        // the wall rings: the rate per exposed share over the corners that see the ring,
        // times the share exposed at the fill asked (0 for a ring the pile buries)
        if let Family::Cup(_) = used {
            for (n, o) in out.cells.iter_mut().enumerate() {
                if let Some(ring) = ring_of(n) {
                    let e = ring_exposed(ring, af.used);
                    o.rate = if exposed_weight[n] > 0.0 && e > 0.0 {
                        o.rate / exposed_weight[n] * e
                    } else {
                        0.0
                    };
                }
            }
        }
        for o in &mut out.cells {
            normalise(&mut o.speed);
            normalise(&mut o.angle);
            if o.speed.iter().all(|&x| x == 0.0) {
                o.rate = 0.0;
            }
        }
        out
    }
}

/// The wall ring a banked cell is (`CELL_IDS`), if it is one.
fn ring_of(n: usize) -> Option<usize> {
    (2..2 + crate::cups::RINGS).contains(&n).then(|| n - 2)
}

/// The share of wall ring `ring` above a pile at `fill` of the cup's depth: the rings are
/// equal thirds of the depth (`Cup::ring_edges`), so ring k is bare below fill k/3 and
/// buried above (k + 1)/3. The bank's wall rates are interpolated per exposed share and
/// scaled by it: across the fill where a ring is buried the rate is not linear (a bed at
/// 0.45 buries ring 0, which a bed at 0.3 does not: interpolated as they were, the simulated
/// rates of 2 mm glass beads into a bowl at 0.45 came out 6 times too high on ring 0).
pub fn ring_exposed(ring: usize, fill: f32) -> f32 {
    ((ring + 1) as f32 - crate::cups::RINGS as f32 * fill).clamp(0.0, 1.0)
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
    let t = ((used - values[i]) / (values[i + 1] - values[i])).clamp(0.0, 1.0);
    (axis, [(i, 1.0 - t), (i + 1, t)])
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
    for (histogram, h, expected) in [
        ("speed", &c.speed, SPEED_BINS),
        ("angle", &c.angle, ANGLE_BINS),
        ("time", &c.time, time_bins),
    ] {
        if h.len() != expected {
            return Err(BankError::HistogramLength {
                entry: entry.to_string(),
                cell,
                histogram,
                got: h.len(),
                expected,
            });
        }
        for (i, &x) in h.iter().enumerate() {
            non_negative(x, || format!("{entry}, cell `{cell}`: {histogram}[{i}]"))?;
        }
    }
    let rate = non_negative(c.rate, || format!("{entry}, cell `{cell}`: rate"))?;
    let count = non_negative(c.count, || format!("{entry}, cell `{cell}`: count"))?;
    let counts = |detail: String| BankError::Counts {
        entry: entry.to_string(),
        cell,
        detail,
    };
    for (histogram, h) in [("speed", &c.speed), ("angle", &c.angle)] {
        let sum: f64 = h.iter().sum();
        if (sum - count).abs() > COUNT_TOLERANCE * count.max(1.0) {
            return Err(counts(format!(
                "the {histogram} counts sum to {sum}, not the count {count}"
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
    Ok(CellData {
        rate: rate as f32,
        speed: shares(&c.speed),
        angle: shares(&c.angle),
    })
}

/// One family's entries as a full grid, or the error naming what is missing or doubled.
fn grid(family: &'static str, entries: Vec<([f32; 3], [CellData; BANKED_CELLS])>) -> Result<Grid, BankError> {
    const NAMES: [&str; 3] = ["restitution", "fill", "fall_height_m"];
    let axes: [Vec<f32>; 3] = std::array::from_fn(|a| {
        let mut v: Vec<f32> = entries.iter().map(|(x, _)| x[a]).collect();
        v.sort_by(f32::total_cmp);
        v.dedup();
        v
    });
    let (nr, nf, nh) = (axes[0].len(), axes[1].len(), axes[2].len());
    let mut cells: Vec<Option<[CellData; BANKED_CELLS]>> = vec![None; nr * nf * nh];
    for (x, c) in entries {
        let at = |a: usize| axes[a].iter().position(|&v| v == x[a]).unwrap_or(0);
        let slot = &mut cells[(at(0) * nf + at(1)) * nh + at(2)];
        if slot.is_some() {
            return Err(BankError::Grid {
                family,
                detail: format!(
                    "two entries at restitution {}, fill {}, fall_height_m {}",
                    x[0], x[1], x[2]
                ),
            });
        }
        *slot = Some(c);
    }
    let mut full = Vec::with_capacity(cells.len());
    for (n, c) in cells.into_iter().enumerate() {
        match c {
            Some(c) => full.push(c),
            None => {
                let (i, j, k) = (n / (nf * nh), (n / nh) % nf, n % nh);
                return Err(BankError::Grid {
                    family,
                    detail: format!(
                        "no entry at {} {}, {} {}, {} {} ({nr} x {nf} x {nh} values)",
                        NAMES[0], axes[0][i], NAMES[1], axes[1][j], NAMES[2], axes[2][k]
                    ),
                });
            }
        }
    }
    Ok(Grid { axes, cells: full })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// A cell's JSON: `rate` per grain of 1000 grains, the speed counts in `speed_bin`, the
    /// angle counts in `angle_bin`.
    fn cell_json(rate: f64, speed: &[(usize, f64)], angle_bin: usize) -> Value {
        let count: f64 = speed.iter().map(|s| s.1).sum();
        let mut s = vec![0.0; SPEED_BINS];
        for &(i, n) in speed {
            s[i] = n;
        }
        let mut a = vec![0.0; ANGLE_BINS];
        a[angle_bin] = count;
        json!({"rate": rate, "count": count, "speed": s, "angle": a, "time": vec![count / 8.0; 8]})
    }

    /// A small synthetic bank: mug (restitution 0.5 and 0.9, fill 0 and 0.5, fall 0.1 and
    /// 0.3 m) and surface (fill 0 only). In every entry the impact zone's rate is
    /// 1 + restitution + fill + fall and its speeds all in bin 10 (restitution 0.5) or bin 12
    /// (0.9); the cup floor has collisions only at fill 0 (rate 2, speed bin 8); the other
    /// cells have a rate of 0.1 in speed bin 4, angle bin 1.
    pub(crate) fn synthetic() -> Value {
        let mut entries = Vec::new();
        for (family, fills) in [("mug", vec![0.0, 0.5]), ("surface", vec![0.0])] {
            for &e in &[0.5, 0.9] {
                for &fill in &fills {
                    for &h in &[0.1, 0.3] {
                        let rate: f64 = 1.0 + e + fill + h;
                        let bin = if e < 0.7 { 10 } else { 12 };
                        let mut cells = serde_json::Map::new();
                        for id in CELL_IDS {
                            let c = match id {
                                "impact_zone" => cell_json(rate, &[(bin, rate * 1000.0)], 0),
                                "cup_floor" if fill > 0.0 => cell_json(0.0, &[], 0),
                                "cup_floor" => cell_json(2.0, &[(8, 2000.0)], 0),
                                _ => cell_json(0.1, &[(4, 100.0)], 1),
                            };
                            cells.insert(id.to_string(), c);
                        }
                        entries.push(json!({
                            "family": family, "restitution": e, "fill": fill, "fall_height_m": h,
                            "grains": 1000, "impact_speed_m_s": 1.5, "cells": cells,
                        }));
                    }
                }
            }
        }
        json!({
            "format": "granary-bank", "version": 1, "source": "test",
            "speed_bins": {"lo": 0.001953125, "hi": 2.0, "n": 16},
            "angle_bins": {"lo": 0.0, "hi": 1.5707964, "n": 8},
            "time_bins": 8,
            "cells": CELL_IDS,
            "entries": entries,
        })
    }

    pub(crate) fn synthetic_bank() -> Bank {
        Bank::parse(&synthetic().to_string()).unwrap()
    }

    const MUG: Family = Family::Cup(CupShape::Mug);

    /// A wall ring's rate is interpolated per share of it above the pile and scaled by the
    /// share at the fill asked: the synthetic mug's rings have 0.1 a grain at fills 0 and 0.5;
    /// at 0.25 ring 0 is a quarter bare (its rate from the bare corner alone, 0.1 x 0.25),
    /// ring 1 is bare (from 0.1 and, half bare at 0.5, 0.1 / 0.5), ring 2 untouched; a ring
    /// the pile buries has none.
    #[test]
    fn wall_rings_are_interpolated_per_exposed_share() {
        let bank = synthetic_bank();
        let l = bank.lookup(MUG, 0.5, 0.25, 0.1);
        let rate = |n: usize| l.cells[n].rate;
        assert!((rate(2) - 0.025).abs() < 1e-6, "{}", rate(2));
        assert!((rate(3) - 0.15).abs() < 1e-6, "{}", rate(3));
        assert!((rate(4) - 0.1).abs() < 1e-6, "{}", rate(4));
        let buried = bank.lookup(MUG, 0.5, 0.5, 0.1);
        assert_eq!(buried.cells[2].rate, 0.0);
        assert_eq!(
            (ring_exposed(0, 0.0), ring_exposed(1, 0.5), ring_exposed(2, 1.0)),
            (1.0, 0.5, 0.0)
        );
    }

    fn error(edit: impl FnOnce(&mut Value)) -> String {
        let mut v = synthetic();
        edit(&mut v);
        Bank::parse(&v.to_string()).unwrap_err().to_string()
    }

    #[test]
    fn parse_errors_name_what_is_wrong() {
        assert!(error(|v| v["format"] = json!("granary-preset")).contains("format `granary-preset`"));
        assert!(error(|v| v["version"] = json!(2)).contains("version 2: this build reads version 1"));
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
        let e = error(|v| v["entries"][2]["cells"]["stream"]["angle"] = json!(vec![0.0; 9]));
        assert!(e.contains("cell `stream`: `angle` has 9 bins, expected 8"), "{e}");
        let e = error(|v| {
            v["entries"].as_array_mut().unwrap().remove(5);
        });
        assert!(
            e.contains("family `mug`: not a full grid") && e.contains("no entry at"),
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
        let e = error(|v| v["entries"] = json!([]));
        assert_eq!(e, "the bank has no entries");
        assert!(Bank::parse("{").unwrap_err().to_string().starts_with("not a bank file"));
    }

    #[test]
    fn a_lookup_at_a_grid_point_is_that_entry() {
        let b = synthetic_bank();
        let l = b.lookup(MUG, 0.9, 0.5, 0.1);
        assert!(!l.clamped() && !l.fell_back());
        let iz = &l.cells[0];
        assert_eq!(iz.rate, (1.0f64 + 0.9 + 0.5 + 0.1) as f32);
        assert_eq!(iz.speed[12], 1.0);
        assert_eq!(iz.speed.iter().sum::<f32>(), 1.0);
        assert_eq!(iz.angle[0], 1.0);
        // no floor collisions on a covered floor: rate 0, empty histograms
        assert_eq!(l.cells[1], CellLookup::ZERO);
        assert_eq!(
            (l.cells[6].rate, l.cells[6].speed[4], l.cells[6].angle[1]),
            (0.1, 1.0, 1.0)
        );
    }

    #[test]
    fn half_way_is_the_mean_rate_and_the_rate_weighted_mixture() {
        let b = synthetic_bank();
        // half-way in restitution (0.7) at a grid point in fill and fall
        let l = b.lookup(MUG, 0.7, 0.0, 0.3);
        let (r5, r9) = (1.0f32 + 0.5 + 0.3, 1.0f32 + 0.9 + 0.3);
        let iz = &l.cells[0];
        assert!((iz.rate - 0.5 * (r5 + r9)).abs() < 1e-6, "{}", iz.rate);
        // bin 10 from restitution 0.5, bin 12 from 0.9: weighted by their rates
        assert!((iz.speed[10] - r5 / (r5 + r9)).abs() < 1e-6, "{:?}", iz.speed);
        assert!((iz.speed[12] - r9 / (r5 + r9)).abs() < 1e-6, "{:?}", iz.speed);
        // half-way in fill: the floor's rate halves, but its histogram is the one corner
        // with collisions, undiluted by the covered floor
        let l = b.lookup(MUG, 0.5, 0.25, 0.1);
        assert!((l.cells[1].rate - 1.0).abs() < 1e-6);
        assert!((l.cells[1].speed[8] - 1.0).abs() < 1e-6);
        // the centre of the cube: the mean of all eight corners' rates
        let l = b.lookup(MUG, 0.7, 0.25, 0.2);
        assert!(
            (l.cells[0].rate - (1.0 + 0.7 + 0.25 + 0.2)).abs() < 1e-5,
            "{}",
            l.cells[0].rate
        );
    }

    #[test]
    fn values_outside_the_grid_take_the_nearest_entry_and_say_so() {
        let b = synthetic_bank();
        let l = b.lookup(MUG, 0.2, 0.8, 0.05);
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
        assert_eq!(l.cells[0].rate, b.lookup(MUG, 0.5, 0.5, 0.1).cells[0].rate);
        let l = b.lookup(MUG, f32::NAN, 0.3, 0.2);
        assert!(l.restitution.clamped && l.restitution.used == 0.5 && !l.fill.clamped);
        // the surface family has fill 0 only
        let l = b.lookup(Family::Surface, 0.5, 0.3, 0.1);
        assert_eq!((l.fill.used, l.fill.clamped, l.restitution.clamped), (0.0, true, false));
        // a family the bank lacks: the mug's entries, said so
        let l = b.lookup(Family::Cup(CupShape::Bowl), 0.5, 0.0, 0.1);
        assert!(l.fell_back() && l.family == MUG);
        assert_eq!(l.cells, b.lookup(MUG, 0.5, 0.0, 0.1).cells);
    }

    #[test]
    fn the_shipped_bank_parses_and_holds_every_family() {
        let b = shipped();
        for f in Family::ALL {
            assert!(b.axes(f).is_some(), "the shipped bank lacks `{}`", f.id());
            let [r, fill, h] = b.axes(f).unwrap();
            assert!(!r.is_empty() && !fill.is_empty() && !h.is_empty());
        }
        assert_eq!(b.families().count(), Family::ALL.len());
    }

    #[test]
    fn every_generator_cell_but_settling_is_banked_once() {
        let mut seen = [false; BANKED_CELLS];
        for cell in crate::generator::CELLS {
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

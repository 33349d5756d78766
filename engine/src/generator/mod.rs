//! Window/cell collision generator (thesis 5.5–5.6).
//!
//! Time is cut into windows of `WINDOW` samples and the scene into cells. For each
//! window/cell the scene gives an expected count lambda (thesis eq. 5.6: the count is
//! Poisson(lambda)) and a local PDF over (t, n, v0) held as histograms (thesis 5.6: "we
//! choose the simple histogram reconstruction method"), with position independent of the
//! rest and uniform in the cell (eq. 5.5). The histograms here are parametric, filled from
//! the pour state each window; a bank measured from a discrete-element simulation can
//! replace them (thesis 7.1) without touching the sampler.
//!
//! Normals: fast collisions keep their physical direction (a narrow cone about the cell's
//! normal); slow ones are close to random (thesis 5.4: randomising the normals of slow
//! collisions changes the sound little).
//!
//! `generate` takes every random draw of a window, cell by cell, in stream order; the
//! arithmetic on a cell's draws (sines and cosines, speeds, positions, normals) then runs
//! for up to 16 collisions at once in SIMD lanes, in `lanes` (`lanes::finish_lanes`,
//! beside its scalar version, `lanes::finish_one`).

mod lanes;
mod rebound;

use crate::base::fastmath;
use crate::base::simd::Isa;
use crate::base::window::{cumulative, Cell, Collision, CollisionKind, ANGLE_BINS, CELLS, SPEED_BINS, WINDOW};
use crate::control::choices::Shape;
use crate::control::settings::Settings;
use crate::derived::cups::{wall_bus, FLOOR_BUS, SURFACE_BUS, WALL_RINGS};
use crate::derived::cups::{Cup, SECTORS};
use crate::derived::Derived;
use crate::pour::scene::PourState;
use crate::statistics::bank::{Bank, CellLookup, Family, Lookup, Selection};
use lanes::{finish_lanes, Finished, Lanes, TrigBatch, AXIS, AZIMUTH, NORMAL, PLACE, TRIG_BATCH};
use rand::{Rng, RngCore};
use rand_distr::{Distribution, Poisson};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Audibility culling speed (thesis 6.1: collisions slower than 1e-4 m/s are inaudible).
pub const V_MIN: f32 = 1e-4;
/// Audibility culling by masking (thesis 6.1 extended to dense streams): in each window and
/// cell, the slowest collisions whose summed energy is at most this share of the cell's
/// energy are counted but not rendered. Energy is taken as v0^2 (the cup's modal energy
/// goes as the impulse squared; acceleration noise, p ~ v0^1.4 by Table 6.1, falls even
/// faster), so culling lowers a cell's level by at most -10 log10(1 - share) dB: 0.044 dB.
/// The thesis's absolute threshold alone (V_MIN) would keep almost every collision of a
/// pour, and a threshold from the audibility of one collision alone (2e-5 Pa) would wrongly
/// silence a dense stream of individually inaudible sugar grains.
pub const CULL_ENERGY_SHARE: f32 = 0.01;
/// Collisions rendered one by one per second and cell. Above it a cell's pulse train is a
/// dense noise, and its collisions are rendered as this many draws per second from the same
/// PDF, each standing for a group, with amplitude sqrt(group size): an incoherent sum keeps
/// its energy, so every collision still contributes (aggregation, not culling).
///
/// Why 12,000: sparse pulse trains of about 2,000 pulses per second already sound as
/// smooth as Gaussian noise (velvet noise: Järveläinen & Karjalainen 2007; Välimäki et al.
/// 2013), and a pour has several dense cells at once. A grouped draw's spheres' pulses are
/// written twice, at times spread over the window (`collision::GROUP_COPIES`): without the
/// copies the default preset on the bank, whose wall hits are a smooth stream of 230,000 a
/// second, crackled more than every collision rendered (grains kurtosis 4.50 against 3.44).
/// Against rendering every collision, the default preset at this budget (about 50 times
/// fewer rendered) keeps the octave bands from 250 Hz up within 0.6 dB (grains) and 1.0 dB
/// (cup), and the grains stem's kurtosis within 9 %; at a quarter of the budget it grows
/// by 63 % (`tests/engine.rs`, the grouping test).
pub const RENDERED_PER_CELL_PER_S: f32 = 12_000.0;

/// Most pulses through the bed a cell writes into the cup per second (`Collision::bed_weight`):
/// one rendered collision in k pushes on the cup, with sqrt(k) times its amplitude (an
/// incoherent sum keeps its power; the first to push a random one of the first k, so that
/// n / k of n push on average, `Bed::start_cell`). The cup hears these pulses through its modes, which ring
/// for tens of milliseconds and longer, so a few thousand a second are a dense, steady push;
/// writing all of a dense pour's (up to `RENDERED_PER_CELL_PER_S` a cell) would cost more
/// than the grains' own sound.
pub const BED_PULSES_PER_CELL_PER_S: f32 = 3_000.0;

/// Reference quality's ceiling (`Quality::Reference`): collisions rendered one by one per
/// second and cell, beyond which even reference quality groups. Above every factory preset:
/// fine sand leaves the spout in clumps (`stream`), and as a clump lands one cell's rate
/// jumps for a few windows far above the pour's mean: to 94 M/s on the pile of sand poured
/// into a wooden bowl and 150 M/s on the heap of sand poured onto concrete (the busiest
/// windows of three seeds), where a ceiling of 20 M/s grouped them and the reference lost
/// a clump's mean push on the cup (1.9 dB below realtime from 300 to 700 Hz). It only bounds
/// the cost of an absurd setting (200 g/s of the finest sand is billions a second): at
/// about 90 ns a collision, two cells at the ceiling cost 36 s of rendering a second.
pub const REFERENCE_RENDERED_PER_CELL_PER_S: f32 = 200e6;

/// The per-window budget of one cell at reference quality (`REFERENCE_RENDERED_PER_CELL_PER_S`).
pub fn reference_rendered_per_cell(sample_rate: f32) -> u32 {
    (REFERENCE_RENDERED_PER_CELL_PER_S * WINDOW as f32 / sample_rate.max(1.0)).ceil() as u32
}

/// The per-window budget of one cell (`RENDERED_PER_CELL_PER_S`) at `sample_rate`.
pub fn max_rendered_per_cell(sample_rate: f32) -> u32 {
    let n = (RENDERED_PER_CELL_PER_S * WINDOW as f32 / sample_rate.max(1.0)).ceil();
    n.clamp(1.0, MAX_RENDERED_PER_CELL as f32) as u32
}

/// The largest per-window budget of a cell at any sample rate the engine runs at (8 kHz).
pub const MAX_RENDERED_PER_CELL: u32 = 192;

/// Texture masking: a dense cell much quieter than the loudest cell of its kind (the
/// grain-grain cells against each other, the grain-cup cells against each other: the cup
/// stem holds the latter's forces, the grains stem every cell's grains) is rendered
/// with fewer, heavier draws. Its level and spectrum stay (the group weights keep its
/// energy, the PDF is the same); only its own texture, how impulsive its pulse train is,
/// coarsens, and that is masked by the louder cell. Shot noise of N pulses per second has
/// an excess kurtosis (its crackle) proportional to 1/N, and independent signals add their
/// fourth cumulants, so a cell with energy share r of its stem adds r^2 / N to the stem's
/// excess kurtosis. Scaling the budget as `(r / MASKING_RATIO)^2` below `MASKING_RATIO`
/// keeps each quiet cell's addition at most 1/16 of what a full-budget cell at the
/// stem's level adds; `MIN_BUDGET_SHARE` keeps every cell a stationary noise (1,500 draws
/// per second at the default budget, dense enough for velvet noise to sound smooth).
/// The grouping test (`tests/engine.rs`) checks level, octave bands and kurtosis against
/// rendering every collision.
pub const MASKING_RATIO: f32 = 0.25;
/// The smallest share of `RENDERED_PER_CELL_PER_S` a dense cell is rendered with.
pub const MIN_BUDGET_SHARE: f32 = 0.125;

/// A cell's per-window budget: `max_per_cell` scaled by texture masking (see
/// `MASKING_RATIO`) for a cell with `energy_ratio` = its expected energy over that of the
/// loudest cell of its kind. `u32::MAX` (render every collision) is kept as it is.
pub fn masked_budget(max_per_cell: u32, energy_ratio: f32) -> u32 {
    if max_per_cell == u32::MAX {
        return max_per_cell;
    }
    let r = if energy_ratio.is_finite() {
        energy_ratio.max(0.0)
    } else {
        1.0
    };
    let share = (r / MASKING_RATIO).powi(2).clamp(MIN_BUDGET_SHARE, 1.0);
    ((max_per_cell as f32 * share).ceil() as u32).clamp(1, max_per_cell.max(1))
}

/// Geometry the cells need, m.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    /// The cup: its inner profile, wall rings and sectors (origin at the centre of its
    /// inner floor, z up).
    pub cup: Cup,
    pub grain_radius: f32,
    /// Radius of the stream's landing zone.
    pub stream_radius: f32,
    /// Where the stream lands, 0 (the cup's axis) .. 1 (against the wall), towards the
    /// first wall sector's azimuth (`Cup::sector_azimuths`).
    pub aim: f32,
    /// Tangent of the grains' angle of repose (the heap's steepest slope).
    pub repose_tan: f32,
    /// How fast the stream's grains spread sideways as they fall, m/s (`Heap`).
    pub spread_m_s: f32,
    /// The grains' dynamic friction on each other (`GrainMaterial::friction`): how far their
    /// rebounds run on towards the wall (`rebound`).
    pub friction: f32,
    /// A pour onto the bare surface: no cup (its floor and wall cells are empty), the pile
    /// is a heap on the ground, and the heap's collisions push on the ground.
    pub open: bool,
}

/// Grains land on the floor within this share of its radius (the share the assets' floor
/// gains are averaged over), and on the pile within this share of its top's radius.
pub const FLOOR_HIT_SHARE: f32 = 0.9;
/// Half the angular width of a wall sector about its azimuth (`Cup::sector_azimuths`), rad.
pub const SECTOR_HALF_WIDTH: f32 = 0.6;

/// A histogram over [lo, hi] with its cumulative sums; sampled by inversion.
#[derive(Clone, Copy)]
struct Histogram<const N: usize> {
    lo: f32,
    hi: f32,
    log: bool,
    /// log2(hi / lo) and log2(lo) of a log-spaced histogram.
    log2_ratio: f32,
    log2_lo: f32,
    cdf: [f32; N],
    /// How each bin's values spread over it (`tilted`); none: evenly on the histogram's
    /// scale, thesis 5.6's histogram reconstruction.
    tilt: Option<Tilt<N>>,
}

/// The speeds within a banked histogram's bins. A bin spans a factor 1.54 of speed, and a
/// pour's speeds end inside one: its landings, all near the impact speed, sit in the lower
/// third of their bin, so that spread evenly over it they came out faster than the
/// simulation's, 0.5 to 1.0 dB in sound energy (v^2.8) in every cell of the bank presets'
/// simulated scenes (docs/dem.md, "What the speed bins add"). Here bin i's density on the
/// log scale is exp(lambda_i t), t from 0 at its lower edge to 1 at its upper, with lambda_i
/// the slope of the masses' logarithm across it, (ln m_(i+1) - ln m_(i-1)) / 2 (a bin
/// beyond the ends, or empty, counts `TILT_FLOOR` of the whole): a piecewise power law
/// through the histogram, its masses kept. Against the simulated contacts themselves the
/// counted cells of the same scenes come within 0.3 dB (`granary-bank-check --verbose`).
#[derive(Clone, Copy)]
struct Tilt<const N: usize> {
    /// Each bin's row of `TILT_FRACTIONS` (its tilt on the table's grid); the middle row,
    /// `TILT_ROWS / 2` (a tilt of 0): spread evenly.
    row: [u8; N],
    /// E[x | i] and E[x^2 | i]: the bin's lower edge and its square times M(w + lambda) /
    /// M(lambda) and M(2 w + lambda) / M(lambda) (`tilted_mean_power`), w the bin's width
    /// on the natural-log scale (`Tilt::new` gives the multipliers, `Histogram::tilted`
    /// the moments).
    mean: [f32; N],
    square: [f32; N],
    /// The bins' centres (`LogBins`), which `Histogram::centres_and_masses` would step to.
    centre: [f32; N],
}

/// A tilted histogram's bins: the smallest mass a neighbour counts as (a share of the whole:
/// an empty bin beside a full one is where the distribution ends), and the largest slope.
pub const TILT_FLOOR: f32 = 1e-4;
pub const TILT_MAX: f32 = 8.0;
/// The tilts are taken on a grid of this many steps a unit (a quarter), so that a draw
/// reads its place in the bin from a table (`TILT_FRACTIONS`) rather than taking a
/// logarithm: at 240 times real time a logarithm a draw cost a fifth of the bank presets'
/// time.
const TILT_GRID: f32 = 4.0;
/// The table's rows (tilts -`TILT_MAX` to `TILT_MAX`) and its points a row (u in [0, 1]).
const TILT_ROWS: usize = (2.0 * TILT_MAX * TILT_GRID) as usize + 1;
const TILT_POINTS: usize = 64;

/// For each tilt l on the grid, the place t in the bin of u = k / `TILT_POINTS`:
/// ln(1 + u (e^l - 1)) / l, the inverse of the bin's cumulative density; a draw interpolates
/// between two points (the inverse is smooth: within 1e-4). Built once, when the first
/// engine is (`warm_tables`), so that the audio thread only reads it.
static TILT_FRACTIONS: std::sync::LazyLock<[[f32; TILT_POINTS + 1]; TILT_ROWS]> = std::sync::LazyLock::new(|| {
    std::array::from_fn(|r| {
        let l = (r as f64 - (TILT_ROWS / 2) as f64) / TILT_GRID as f64;
        std::array::from_fn(|k| {
            let u = k as f64 / TILT_POINTS as f64;
            if l == 0.0 {
                u as f32
            } else {
                ((u * l.exp_m1()).ln_1p() / l).clamp(0.0, 1.0) as f32
            }
        })
    })
});

/// Builds the generator's tables (`TILT_FRACTIONS`) outside the audio thread.
pub fn warm_tables() {
    std::sync::LazyLock::force(&TILT_FRACTIONS);
}

/// The tilt of each bin of a histogram whose bins hold `masses` (`Tilt`): the slope of the
/// masses' logarithm across the bin, per bin, within +-`TILT_MAX` and on the grid of
/// `TILT_GRID` (0 for an empty bin). One logarithm a bin, in lanes (`fastmath::log2_each`):
/// the tilts are found every window for each banked cell.
pub fn bin_tilts<const N: usize>(masses: &[f32; N]) -> [f32; N] {
    let total: f32 = masses.iter().map(|m| m.max(0.0)).sum();
    let floor = TILT_FLOOR * total;
    if !(floor > 0.0 && floor.is_finite()) {
        return [0.0; N];
    }
    let ln = fastmath::log2_each(&masses.map(|m| m.max(0.0).max(floor))).map(|l| l * std::f32::consts::LN_2);
    let ln_floor = fastmath::ln(floor);
    std::array::from_fn(|i| {
        // an empty bin (or NaN) is never drawn
        if masses[i].is_nan() || masses[i] <= 0.0 {
            return 0.0;
        }
        let below = if i == 0 { ln_floor } else { ln[i - 1] };
        let above = if i + 1 < N { ln[i + 1] } else { ln_floor };
        // to the grid's nearest step, ties to even (`round_int`: no library call)
        fastmath::round_int((0.5 * (above - below)).clamp(-TILT_MAX, TILT_MAX) * TILT_GRID).0 / TILT_GRID
    })
}

/// expm1(s) / s, 1 at s = 0: the mean of exp(s t) over t in [0, 1].
fn mean_exp(s: f64) -> f64 {
    if s.abs() < 1e-9 {
        1.0
    } else {
        s.exp_m1() / s
    }
}

/// E[x^p] over a bin from `lo` to `lo e^w` whose density on ln x is exp(`tilt` t) (`Tilt`),
/// t = ln(x / lo) / w: lo^p M(p w + tilt) / M(tilt), M(s) = expm1(s) / s.
pub fn tilted_mean_power(lo: f64, w: f64, tilt: f64, p: f64) -> f64 {
    lo.powf(p) * mean_exp(p * w + tilt) / mean_exp(tilt)
}

impl<const N: usize> Tilt<N> {
    /// The tilts of bins holding `masses`, with their means and mean squares (`LogBins`:
    /// the bins' edges and each tilt's multipliers on the grid).
    fn new(masses: &[f32; N], bins: &LogBins<N>) -> Self {
        let lambda = bin_tilts(masses);
        // the tilts are on the grid: l TILT_GRID is a whole number (an exact product)
        let row = lambda.map(|l| (fastmath::round_int(l * TILT_GRID).1 + (TILT_ROWS / 2) as i32) as u8);
        Tilt {
            row,
            mean: std::array::from_fn(|i| bins.mean[row[i] as usize] * bins.lower[i]),
            square: std::array::from_fn(|i| bins.square[row[i] as usize] * bins.lower_squared[i]),
            centre: bins.centre,
        }
    }

    /// The place within bin `i` (0..1) of a uniform number `u` in [0, 1): the inverse of
    /// the bin's cumulative density, ln(1 + u (e^lambda - 1)) / lambda, from
    /// `TILT_FRACTIONS`.
    #[inline(always)]
    fn fraction(&self, i: usize, u: f32) -> f32 {
        let row = self.row[i] as usize;
        if row == TILT_ROWS / 2 {
            return u;
        }
        let t = &TILT_FRACTIONS[row.min(TILT_ROWS - 1)];
        let x = u.clamp(0.0, 1.0) * TILT_POINTS as f32;
        let k = (x as usize).min(TILT_POINTS - 1);
        let f = x - k as f32;
        (t[k] + f * (t[k + 1] - t[k])).clamp(0.0, 1.0 - f32::EPSILON)
    }
}

/// Each bin's lower edge and centre of a histogram of `N` bins over [lo, hi]: stepped from
/// `lo` by one ratio (log-spaced, `log2_ratio` = log2(hi / lo)) or one width.
fn bin_edges<const N: usize>(lo: f32, hi: f32, log: bool, log2_ratio: f32) -> ([f32; N], [f32; N]) {
    let step = if log {
        fastmath::exp2(log2_ratio / N as f32)
    } else {
        1.0
    };
    let width = (hi - lo) / N as f32;
    let (mut lower, mut centre) = ([0.0f32; N], [0.0f32; N]);
    let mut edge = lo;
    for i in 0..N {
        let upper = if log { edge * step } else { edge + width };
        lower[i] = edge;
        centre[i] = 0.5 * (edge + upper);
        edge = upper;
    }
    (lower, centre)
}

/// What a log-spaced histogram over [lo, hi] with N bins holds whatever its masses: its bins'
/// lower edges and centres (`bin_edges`) and, for each tilt on the grid (`TILT_FRACTIONS`' rows), the multipliers of a
/// tilted bin's mean and mean square over its lower edge and its square, M(w + lambda) /
/// M(lambda) and M(2 w + lambda) / M(lambda) (`tilted_mean_power`; w the bins' width on the
/// natural-log scale). The bank's speed histograms share one range, so these are found once
/// per bank (`Shapes::keep_bank_bins`) rather than for every banked cell every window.
#[derive(Clone, Copy)]
struct LogBins<const N: usize> {
    lo: f32,
    hi: f32,
    log2_ratio: f32,
    log2_lo: f32,
    lower: [f32; N],
    lower_squared: [f32; N],
    centre: [f32; N],
    mean: [f32; TILT_ROWS],
    square: [f32; TILT_ROWS],
}

impl<const N: usize> LogBins<N> {
    fn new(lo: f32, hi: f32) -> Self {
        let log2_ratio = fastmath::log2(hi / lo);
        let (lower, centre) = bin_edges(lo, hi, true, log2_ratio);
        let w = log2_ratio * std::f32::consts::LN_2 / N as f32;
        let (r1, r2) = ((w as f64).exp() as f32, (2.0 * w as f64).exp() as f32);
        // e^(p w + l) - 1 from e^l - 1 (one exponential a tilt) and e^(p w)
        let ratio = |l: f32, r: f32, pw: f32| {
            if l == 0.0 {
                (r - 1.0) / pw
            } else {
                let e = fastmath::exp(l) - 1.0;
                // M(p w + l) / M(l) = ((r (e + 1) - 1) / (p w + l)) / (e / l)
                ((r - 1.0) + r * e) / (pw + l) * (l / e)
            }
        };
        let tilt = |row: usize| (row as f32 - (TILT_ROWS / 2) as f32) / TILT_GRID;
        LogBins {
            lo,
            hi,
            log2_ratio,
            log2_lo: fastmath::log2(lo),
            lower,
            lower_squared: lower.map(|x| x * x),
            centre,
            mean: std::array::from_fn(|r| ratio(tilt(r), r1, w)),
            square: std::array::from_fn(|r| ratio(tilt(r), r2, 2.0 * w)),
        }
    }

    /// A tilted histogram (`Tilt`) over these bins from each bin's mass (as
    /// `Histogram::from_weights` takes them).
    fn tilted(&self, weights: &[f32; N]) -> Histogram<N> {
        let mut h = Histogram::from_weights_in(self.lo, self.hi, true, (self.log2_ratio, self.log2_lo), weights);
        let masses = h.masses();
        h.tilt = Some(Tilt::new(&masses, self));
        h
    }
}

impl<const N: usize> Histogram<N> {
    fn fill(lo: f32, hi: f32, log: bool, weight: impl Fn(f32) -> f32) -> Self {
        let mut cdf = [0.0; N];
        let mut acc = 0.0;
        let log2_ratio = if log { fastmath::log2(hi / lo) } else { 0.0 };
        let log2_lo = if log { fastmath::log2(lo) } else { 0.0 };
        let mut h = Histogram {
            lo,
            hi,
            log,
            log2_ratio,
            log2_lo,
            cdf,
            tilt: None,
        };
        for (i, c) in cdf.iter_mut().enumerate() {
            let x = h.at((i as f32 + 0.5) / N as f32);
            acc += weight(x).max(0.0);
            *c = acc;
        }
        if acc <= 0.0 {
            for (i, c) in cdf.iter_mut().enumerate() {
                *c = (i + 1) as f32;
            }
        }
        h.cdf = cdf;
        h
    }

    /// A histogram over [lo, hi] from each bin's mass (as `fill` holds them: `weights[i]` is
    /// bin i's share, unnormalised; negative or NaN weights count as 0, and all-zero weights
    /// give a uniform histogram). The bank's measured histograms (`bank::Lookup`) come in
    /// this way: thesis 5.6's histogram reconstruction of a local PDF.
    fn from_weights(lo: f32, hi: f32, log: bool, weights: &[f32; N]) -> Self {
        let logs = if log {
            (fastmath::log2(hi / lo), fastmath::log2(lo))
        } else {
            (0.0, 0.0)
        };
        Self::from_weights_in(lo, hi, log, logs, weights)
    }

    /// `from_weights` with log2(hi / lo) and log2(lo) known (zeros on a linear scale).
    fn from_weights_in(lo: f32, hi: f32, log: bool, logs: (f32, f32), weights: &[f32; N]) -> Self {
        Self::from_cdf(lo, hi, log, logs, cumulative(weights))
    }

    /// `from_weights_in` with the weights' cumulative sums known (`window::cumulative`).
    #[inline]
    fn from_cdf(lo: f32, hi: f32, log: bool, (log2_ratio, log2_lo): (f32, f32), cdf: [f32; N]) -> Self {
        Histogram {
            lo,
            hi,
            log,
            log2_ratio,
            log2_lo,
            cdf,
            tilt: None,
        }
    }

    /// Each bin's mass (unnormalised).
    fn masses(&self) -> [f32; N] {
        let mut prev = 0.0;
        std::array::from_fn(|i| {
            let m = self.cdf[i] - prev;
            prev = self.cdf[i];
            m
        })
    }

    /// The histogram with its bins' values spread by `Tilt` (a log-spaced histogram of the
    /// bank's measured speeds; `LogBins::tilted` where the bins are known already).
    #[cfg(test)]
    fn tilted(mut self) -> Self {
        debug_assert!(self.log);
        self.tilt = Some(Tilt::new(&self.masses(), &LogBins::new(self.lo, self.hi)));
        self
    }

    /// Each bin's mean and mean square, E[x | i] and E[x^2 | i]: a tilted bin's
    /// (`tilted_mean_power`); `None` where the bins are spread evenly, whose moments are
    /// taken at their centres.
    fn tilted_means(&self) -> Option<([f32; N], [f32; N])> {
        self.tilt.as_ref().map(|t| (t.mean, t.square))
    }

    /// The value a fraction `u` (0..1) of the way from `lo` to `hi`, on the histogram's scale.
    #[inline]
    fn at(&self, u: f32) -> f32 {
        if self.log {
            self.lo * fastmath::exp2(u * self.log2_ratio)
        } else {
            self.lo + (self.hi - self.lo) * u
        }
    }

    /// Value of bin `i`'s lower edge.
    fn edge(&self, i: usize) -> f32 {
        self.at(i as f32 / N as f32)
    }

    /// Each bin's centre (`bin_edges`) and mass (unnormalised); a tilted histogram keeps its
    /// centres (`Tilt::centre`): a bank's shapes are built every window.
    fn centres_and_masses(&self) -> ([f32; N], [f32; N]) {
        if let Some(t) = &self.tilt {
            return (t.centre, self.masses());
        }
        (bin_edges(self.lo, self.hi, self.log, self.log2_ratio).1, self.masses())
    }

    /// The distribution's first moment above `cut`, E[x; x >= cut], each bin's mass at
    /// its centre (the bins whose centre is at or above the cut; 0: the mean).
    fn mean_above(&self, cut: f32) -> f32 {
        let (centres, masses) = self.centres_and_masses();
        let means = self.tilted_means().map_or(centres, |(m, _)| m);
        let m1: f32 = (0..N)
            .map(|i| if centres[i] >= cut { masses[i] * means[i] } else { 0.0 })
            .sum();
        m1 / self.cdf[N - 1]
    }

    /// Each bin's share of the distribution's second moment E[x^2] (its mass times its
    /// centre squared, unnormalised), and their sum.
    fn bin_moments(&self) -> ([f32; N], f32) {
        let (centres, masses) = self.centres_and_masses();
        let moments: [f32; N] = match self.tilted_means() {
            Some((_, squares)) => std::array::from_fn(|i| masses[i] * squares[i]),
            None => std::array::from_fn(|i| masses[i] * centres[i] * centres[i]),
        };
        (moments, moments.iter().sum())
    }

    /// The distribution's second moment E[x^2].
    fn second_moment(&self) -> f32 {
        self.bin_moments().1 / self.cdf[N - 1]
    }

    /// The largest bin edge below which the bins hold at most `share` of the distribution's
    /// second moment E[x^2].
    fn second_moment_cut(&self, share: f32) -> f32 {
        if share <= 0.0 {
            return 0.0;
        }
        self.cut_of(self.bin_moments(), share)
    }

    /// `second_moment_cut` and `second_moment` together, from one pass over the bins (the
    /// bank's shapes are rebuilt every window).
    fn second_moment_and_cut(&self, share: f32) -> (f32, f32) {
        let moments = self.bin_moments();
        let cut = if share <= 0.0 { 0.0 } else { self.cut_of(moments, share) };
        (moments.1 / self.cdf[N - 1], cut)
    }

    /// The cut of `second_moment_cut` from the bins' moments.
    fn cut_of(&self, (moments, total): ([f32; N], f32), share: f32) -> f32 {
        let mut acc = 0.0;
        for (i, m) in moments.iter().enumerate() {
            acc += m;
            if acc > share * total {
                return self.edge(i);
            }
        }
        self.hi
    }

    /// A sample, from two uniform numbers in [0, 1) (`uniform_pair`): the first picks the
    /// bin, the second the place within it.
    #[inline(always)]
    fn sample(&self, u: (f32, f32)) -> f32 {
        self.at(self.sample_fraction(u))
    }

    /// A sample's fraction of the way from `lo` to `hi` (0..1, on the histogram's scale).
    #[inline(always)]
    fn sample_fraction(&self, (u_bin, u_within): (f32, f32)) -> f32 {
        let total = self.cdf[N - 1];
        let target = u_bin * total;
        let i = self.bins_below(target).min(N - 1);
        let within = match &self.tilt {
            Some(t) => t.fraction(i, u_within),
            None => u_within,
        };
        (i as f32 + within) / N as f32
    }

    /// The number of bins whose cumulative sum is below `target`: the first bin that
    /// reaches it (`partition_point` on the non-decreasing `cdf`). Found without branches
    /// (a binary search branches on the random target at every step): the comparisons of
    /// four bins at a time as a bit mask (SSE, part of every x86-64), and since the sums
    /// do not decrease, the bins below the target are the mask's run of ones from bit 0.
    #[inline(always)]
    fn bins_below(&self, target: f32) -> usize {
        #[cfg(target_arch = "x86_64")]
        if N.is_multiple_of(4) && N <= 32 {
            use std::arch::x86_64::*;
            let mut below = 0u64;
            // SAFETY: SSE is part of every x86-64 CPU; bins 4j..4j + 4 are inside `cdf` (N
            // is a multiple of 4).
            unsafe {
                let t = _mm_set1_ps(target);
                for j in 0..N / 4 {
                    let c = _mm_loadu_ps(self.cdf.as_ptr().add(4 * j));
                    below |= (_mm_movemask_ps(_mm_cmplt_ps(c, t)) as u64) << (4 * j);
                }
            }
            return (!below).trailing_zeros() as usize;
        }
        self.cdf.iter().filter(|&&c| c < target).count()
    }

    /// A sample of a log-spaced histogram, as (fraction `u` for `at`, log2 of the value):
    /// the value itself (an `exp2`) is left for the caller to evaluate in SIMD lanes.
    #[inline]
    fn sample_log(&self, u: (f32, f32)) -> (f32, f32) {
        debug_assert!(self.log);
        let u = self.sample_fraction(u);
        (u, self.log2_lo + u * self.log2_ratio)
    }
}

/// The time density of a cell's collisions over one window: linear from `from` at its start
/// to `to` at its end (the arrival rate at the window's two ends, `PourState`), so that the
/// rate is continuous from window to window. A histogram of it (thesis 5.6's reconstruction)
/// would be a staircase: its steps, every `WINDOW / bins` samples, are a sawtooth on the
/// rate whose size follows the rate's slope, and a dense pour's millions of collisions a
/// second follow it coherently, a hump near fs / 16 (3 kHz at 48 kHz, 8 bins) that grows as
/// the collision rate squared (2.4 dB over the cup of fine sand poured with a wavering
/// stream into a wooden bowl, 40 g/s; none with a steady stream). The exact density has
/// none.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ramp {
    from: f32,
    to: f32,
}

impl Ramp {
    /// A uniform density.
    const FLAT: Ramp = Ramp { from: 1.0, to: 1.0 };

    /// The density from rate `from` to rate `to` (per second, or any common unit; both at
    /// least a tiny positive rate, so it is never empty).
    fn new(from: f32, to: f32) -> Ramp {
        let clean = |x: f32| if x.is_finite() { x.max(1e-9) } else { 1e-9 };
        Ramp {
            from: clean(from),
            to: clean(to),
        }
    }

    /// The density at the window's start and end over its mean, `(a, b) / ((a + b) / 2)`.
    fn density(&self) -> [f32; 2] {
        let mean = 0.5 * (self.from + self.to);
        [self.from / mean, self.to / mean]
    }

    /// The share of the window's collisions before the fraction `x` (0..1) of it:
    /// F(x) = (a x + (b - a) x^2 / 2) / ((a + b) / 2), a = `from`, b = `to`.
    #[cfg(test)]
    fn cdf(&self, x: f32) -> f32 {
        let (a, b) = (self.from, self.to);
        let x = x.clamp(0.0, 1.0);
        (a * x + 0.5 * (b - a) * x * x) / (0.5 * (a + b))
    }

    /// A collision's time, as a fraction of the window (0..1), from a uniform number `u` in
    /// [0, 1): F^-1(u), the root of (b - a) x^2 / 2 + a x - u (a + b) / 2 = 0 in 0..1, in the
    /// form that stays exact as b approaches a: x = u (a + b) / (a + sqrt(a^2 + u (b^2 - a^2))).
    #[inline]
    fn sample(&self, u: f32) -> f32 {
        let (a, b) = (self.from, self.to);
        let root = (a * a + u * (b * b - a * a)).max(0.0).sqrt();
        (u * (a + b) / (a + root)).min(1.0 - f32::EPSILON)
    }
}

/// The local PDF and expected count of one window/cell. Its speed and angle histograms
/// are the cell's `Shapes`; the speed one is scaled by `mean_v`.
struct CellPdf {
    lambda: f64,
    time: Ramp,
    /// Mean speed of the cell's collisions this window, m/s.
    mean_v: f32,
    /// The share of a wall ring's hits that are the aimed stream's grazes, which strike the
    /// aimed sector (the rest, rebounds, strike either sector alike); 0 for other cells.
    aimed: f32,
}

/// Log-normal spread of the speed (sigma of ln v) and angular spread of the normal (rad)
/// of each cell: constants of the cell, not of the pour state.
fn spreads(cell: Cell) -> (f32, f32) {
    match cell {
        Cell::ImpactZone => (0.15, 0.35),
        Cell::CupFloor => (0.25, 0.3),
        Cell::WallRing(_) => (0.5, 0.6),
        Cell::PileSurface => (0.8, 1.0),
        Cell::Stream => (0.8, 1.5),
        Cell::Settling => (0.7, 1.8),
        Cell::Surface => (0.4, 0.35),
    }
}

/// Span of the speed histogram around the mean, in units of sigma: [e^(-3 sigma), e^(2 sigma)].
const SPEED_SPAN_SIGMAS: (f32, f32) = (-3.0, 2.0);

/// The parts of every cell's PDF that do not change with the pour state, built once (in
/// `Engine::new`, never in `process`): each cell's speed histogram in units of its mean
/// speed (the log-normal's shape depends only on sigma, so the window's PDF is this one
/// scaled by the window's mean speed), its angle histogram, and the audibility cut of its
/// speed histogram for one culling share (`CULL_ENERGY_SHARE`), also in units of the mean.
#[derive(Clone)]
pub struct Shapes {
    /// The instruction set of the lane arithmetic (`lanes`, `simd`).
    isa: Isa,
    speed: [Histogram<SPEED_BINS>; CELLS.len()],
    angle: [Histogram<ANGLE_BINS>; CELLS.len()],
    cull_share: f32,
    cut: [f32; CELLS.len()],
    /// E[v0^2] of each cell's speed shape, in units of its mean speed squared (a window's
    /// expected energy is lambda mean_v^2 times this; see `MASKING_RATIO`).
    speed_m2: [f32; CELLS.len()],
    /// Each cell's speed shape weighted by energy, for its grouped draws (`EnergyShape`).
    energy: [EnergyShape; CELLS.len()],
    /// The rebounds' reach to the wall (`rebound`), for the hand model's wall hits.
    reach: rebound::ReachTable,
    /// The bins of the bank's speed histograms (`LogBins`), once a bank has been drawn from
    /// (`keep_bank_bins`).
    bank_bins: Option<LogBins<SPEED_BINS>>,
}

impl Shapes {
    pub fn new(cull_share: f32, isa: Isa) -> Self {
        let speed = CELLS.map(|cell| {
            let sigma = spreads(cell).0;
            let (lo, hi) = (SPEED_SPAN_SIGMAS.0 * sigma, SPEED_SPAN_SIGMAS.1 * sigma);
            Histogram::fill(lo.exp(), hi.exp(), true, lognormal(1.0, sigma))
        });
        let angle = CELLS.map(|cell| Histogram::fill(0.0, std::f32::consts::PI * 0.5, false, cone(spreads(cell).1)));
        let mut shapes = Shapes {
            isa,
            speed_m2: speed.map(|h| h.second_moment()),
            energy: speed.map(|h| EnergyShape::new(&h)),
            speed,
            angle,
            cull_share: 0.0,
            cut: [0.0; CELLS.len()],
            reach: rebound::ReachTable::new(),
            bank_bins: None,
        };
        shapes.set_cull_share(cull_share);
        shapes
    }

    /// Keeps the bins of a bank's speed histograms over `speed_range` (`Lookup::speed_range`)
    /// for the windows that draw from it (`WindowShapes`); found again only when the range
    /// changes (another bank), a few microseconds.
    pub fn keep_bank_bins(&mut self, (lo, hi): (f32, f32)) {
        if self.bank_bins.is_none_or(|b| (b.lo, b.hi) != (lo, hi)) {
            self.bank_bins = Some(LogBins::new(lo, hi));
        }
    }

    /// Recomputes the cached cuts for another culling share.
    pub fn set_cull_share(&mut self, share: f32) {
        self.cull_share = share;
        for (cut, h) in self.cut.iter_mut().zip(&self.speed) {
            *cut = h.second_moment_cut(share);
        }
    }
}

/// Collisions on the ground per grain that runs down a heap on the surface and out onto
/// the ground around its foot (a modelling value: most grains stop on the heap).
const RUNOUT_COLLISIONS: f32 = 0.3;
/// The share of rebounds off the pile that head out over the rim: those from near the wall,
/// thrown upwards and outwards (a modelling value).
const OUTWARD_SHARE: f32 = 0.1;

/// The share of arriving grains that bounce out of the cup: rebounds off the pile at
/// `rebound` m/s (uniform in 0..rebound) clear the rim `clearance` m above the pile if
/// their height v²/(2g) exceeds it; `OUTWARD_SHARE` of those leave the cup.
fn bounce_outs(rebound: f32, clearance: f32) -> f32 {
    let needed = (2.0 * crate::base::materials::GRAVITY * clearance).sqrt();
    if rebound <= needed {
        0.0
    } else {
        OUTWARD_SHARE * (1.0 - needed / rebound)
    }
}

/// Wall hits per grain arriving on a covered floor (the pile), spread over the rings by the
/// share of each above it (a modelling value; the databank's cups on a bed: 0.01 to 0.2 a grain of sugar by the
/// fall, docs/dem.md). A bare floor's come from where the grains land (`rebound`).
const PILE_WALL_SHARE: f32 = 0.105;

/// Cascade length on the pile.
const CASCADE_COLLISIONS: f32 = 3.0;
const STREAM_COLLISIONS: f32 = 0.4;

fn lognormal(mean: f32, sigma_ln: f32) -> impl Fn(f32) -> f32 {
    move |v: f32| {
        let z = fastmath::ln(v / mean) / sigma_ln;
        fastmath::exp(-0.5 * z * z)
    }
}

fn cone(spread: f32) -> impl Fn(f32) -> f32 {
    move |a: f32| fastmath::sin_cos(a).0 * fastmath::exp(-0.5 * (a / spread).powi(2))
}

/// Window-local PDF of `cell` from the pour state. Rates per second times window seconds.
/// `None` for a cell that expects no collision in this window (its histograms are not built).
fn cell_pdf(cell: Cell, s: &PourState, g: &Geometry, heap: &Heap, restitution: f32, window_s: f32) -> Option<CellPdf> {
    let arrive = 0.5 * (s.arrivals_start + s.arrivals_end);
    let v = s.impact_speed.max(V_MIN * 2.0);
    let cov = heap.coverage;
    let mut aimed = 0.0;
    let (rate, mean_v): (f32, f32) = match cell {
        Cell::CupFloor | Cell::WallRing(_) if g.open => (0.0, v),
        Cell::Surface if g.open => {
            // the bare ground where the stream lands, until the heap covers it (as the cup's
            // floor), and grains that run down the heap and out onto the ground around it
            let (direct, v_direct) = (
                arrive * (1.0 - cov) * (1.0 + restitution),
                v * (0.5 + 0.5 * (1.0 - cov)),
            );
            let (runout, v_runout) = (arrive * cov * RUNOUT_COLLISIONS, v * restitution * 0.3);
            let rate = direct + runout;
            let mean_v = if rate > 0.0 {
                ((direct * v_direct * v_direct + runout * v_runout * v_runout) / rate).sqrt()
            } else {
                v_direct
            };
            (rate, mean_v)
        }
        Cell::Surface => {
            // spills: rebounds off the pile that clear the rim (`bounce_outs`), and, once the
            // cup is full, the overflow: grains running over the rim. Both fall the cup's
            // height to the surface it stands on.
            let depth = g.cup.depth;
            let clearance = (depth - s.pile_height_m).max(0.0);
            let bounced = arrive * bounce_outs(v * restitution, clearance);
            let rate = bounced + s.overflow;
            let v_fall = (2.0 * crate::base::materials::GRAVITY * depth).sqrt();
            (rate, v_fall)
        }
        Cell::ImpactZone => (arrive * cov, v),
        Cell::CupFloor => (
            arrive * (1.0 - cov) * (1.0 + restitution),
            v * (0.5 + 0.5 * (1.0 - cov)),
        ),
        Cell::WallRing(k) => {
            // the grains' rebounds off the bare floor and the pile that reach the wall
            // (`rebound`), and the aimed stream's grains grazing this ring on their way down
            // (`Heap::glance`)
            let (rebounds, v_rebound) = (arrive * heap.rebound[k], v * restitution * 0.5);
            let (grazes, v_graze) = heap.glance(k, arrive);
            let rate = rebounds + grazes;
            if rate > 0.0 {
                aimed = (grazes + rebounds * heap.rebound_aimed) / rate;
            }
            // one log-normal for both: the mean speed that keeps their energy
            let mean_v = if rate > 0.0 {
                ((rebounds * v_rebound * v_rebound + grazes * v_graze * v_graze) / rate).sqrt()
            } else {
                v_rebound
            };
            (rate, mean_v)
        }
        Cell::PileSurface => (arrive * cov * CASCADE_COLLISIONS, v * restitution * 0.3),
        Cell::Stream => (arrive * STREAM_COLLISIONS, 0.05 * v),
        Cell::Settling => (s.settle_rate, 0.03),
    };
    let lambda = (rate * window_s) as f64;
    if lambda.is_nan() || lambda <= 1e-9 {
        return None;
    }
    let time = if matches!(cell, Cell::Settling) {
        Ramp::FLAT
    } else {
        Ramp::new(s.arrivals_start, s.arrivals_end)
    };
    Some(CellPdf {
        lambda,
        time,
        mean_v: mean_v.max(V_MIN * 2.0),
        aimed,
    })
}

/// A banked cell's window-local PDF (thesis 7.1: the PDFs of 5.5–5.6 precomputed from
/// simulations): the count is Poisson (eq. 5.6) with lambda = the bank's collisions per
/// arriving grain x the window x the arrivals weighted by the cell's lifetime profile: the
/// share p_0 made as a grain arrives times this window's arrivals, plus each later share p_k
/// times the mean arrival rate between its bin's edges before now (`PourState::arrived_ago`),
/// the collisions of grains that arrived then. In a steady pour that is the arrival rate
/// (the shares sum to 1); when the pour starts they come as the grains' lives fill up, and
/// after it stops the late ones go on (a glass bead bounces for a second). Over the window
/// the first part follows the arrivals' ramp, the rest is steady (`Ramp`); the mean speed
/// is the impact speed, the unit of the bank's speed histograms. No aimed share: the bank is
/// simulated with the stream at the cup's axis (aim 0). `None` for a cell that expects no
/// collision in this window.
fn bank_pdf(c: &CellLookup, s: &PourState, window_s: f32) -> Option<CellPdf> {
    let (start, end) = lifetime_arrivals(c, s);
    let lambda = (0.5 * (start + end) * c.rate * window_s) as f64;
    if lambda.is_nan() || lambda <= 1e-9 {
        return None;
    }
    Some(CellPdf {
        lambda,
        time: Ramp::new(start, end),
        mean_v: s.impact_speed.max(V_MIN * 2.0),
        aimed: 0.0,
    })
}

/// The arrivals a banked cell's collisions come from at the window's start and end, grains
/// a second: its lifetime profile's first share times the arrivals now, plus each later
/// share times the arrivals of its bin's span ago (`bank_pdf`).
pub fn lifetime_arrivals(c: &CellLookup, s: &PourState) -> (f32, f32) {
    let at_once = c.life[0];
    let late: f32 = c.life[1..].iter().zip(&s.arrived_ago[1..]).map(|(p, a)| p * a).sum();
    (at_once * s.arrivals_start + late, at_once * s.arrivals_end + late)
}

/// A banked cell's speed distribution this window (unnormalised shares per speed bin): its
/// speeds in each lifetime bin (`CellLookup::speed_by_life`) weighted by the arrivals that
/// bin's collisions come from, as their count is (`lifetime_arrivals`). In a steady pour
/// that is the cell's speeds; as a pour starts, the landings' (fast); after it stops, the
/// late collisions' (a bouncing bead's are ever slower). All 0 without arrivals: the
/// cell's own speeds.
fn lifetime_speeds(c: &CellLookup, s: &PourState) -> [f32; SPEED_BINS] {
    let mut out = [0.0f32; SPEED_BINS];
    let now = 0.5 * (s.arrivals_start + s.arrivals_end);
    for (k, row) in c.speed_by_life.iter().enumerate() {
        let a = if k == 0 { now } else { s.arrived_ago[k] };
        if a > 0.0 {
            for (o, &x) in out.iter_mut().zip(row) {
                *o += a * x;
            }
        }
    }
    if out.iter().all(|&x| x <= 0.0) {
        return c.speed;
    }
    out
}

/// The bank's statistics for `cell` this window, if it draws from the bank: every cell but
/// `Settling` (the bank has no settling cell: a grain's collisions until it rests are in the
/// others, so with a bank the settling cell is silent, `generate`) and, while a full cup
/// overflows, `Surface` (the bank has no overflowing pours: the model's overflow and
/// bounce-outs).
fn banked<'l>(cell: Cell, s: &PourState, lookup: &'l Lookup) -> Option<&'l CellLookup> {
    match cell {
        Cell::Settling => None,
        Cell::Surface if s.overflow > 0.0 => None,
        _ => lookup.cell(cell),
    }
}

/// Where the cells' rates and their speed and angle distributions come from.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
// not boxed: made in the audio thread when the settings change, which must not allocate
#[allow(clippy::large_enum_variant)]
pub enum CellStatistics {
    /// The hand-written model (`cell_pdf`, `Shapes`).
    #[default]
    Model,
    /// A collision databank (thesis 7.1): the cells of `family` looked up each window at the
    /// grains' restitution (`GeneratorSetup::restitution`), the pour's fill level
    /// (`PourState::fill`) and the spout's height above the rim, `fall_height_m` (the
    /// `fall_height` setting: with the fill it gives the bank's fall h = fall_height_m +
    /// depth - fill x depth, exactly the scene's `PourState::impact_speed`), for grains of
    /// `grain_diameter_m` whose friction on each other is `friction` (dynamic).
    Bank {
        bank: &'static Bank,
        /// Where the settings sit in the bank (`Bank::select`, made when they change).
        selection: Selection,
    },
}

impl CellStatistics {
    /// The bank's cells of `family`, for grains of `shape` (their own where the bank holds
    /// it, else spheres), coefficient of restitution `restitution`, `friction` and
    /// `grain_diameter_m`, the spout `fall_height_m` above the rim, in a scene `scale` times
    /// the bank's (`Derived::bank_scale`): the settings' part of the lookup, made once
    /// (`Bank::select`).
    #[allow(clippy::too_many_arguments)]
    pub fn bank(
        bank: &'static Bank,
        family: Family,
        shape: Shape,
        restitution: f32,
        friction: f32,
        grain_diameter_m: f32,
        fall_height_m: f32,
        scale: f32,
    ) -> CellStatistics {
        let selection = bank.select(
            family,
            shape,
            restitution,
            friction,
            grain_diameter_m,
            fall_height_m,
            scale,
        );
        CellStatistics::Bank { bank, selection }
    }

    /// The bank's cells for a pour of settings `s` (derived `d`), as `statistics` = bank
    /// looks them up: its family (`Family::of`), its grains' shape (`resolved_grain_shape`),
    /// restitution, friction and diameter, and its spout's height above the rim, in a scene `Derived::bank_scale`
    /// times the bank's (Froude similarity: `Bank::select`); onto the surface, the spout
    /// as far above the ground as it is (`Derived::bank_fall_offset_m`).
    pub fn bank_for(bank: &'static Bank, s: &Settings, d: &Derived) -> CellStatistics {
        CellStatistics::bank(
            bank,
            Family::of(s),
            s.resolved_grain_shape(),
            s.grain_material.data().restitution,
            s.grain_material.friction(),
            2.0 * s.grain_radius_m(),
            s.fall_height_m + d.bank_fall_offset_m,
            d.bank_scale,
        )
    }

    /// The bank's statistics for a window of `state` (`Bank::lookup_at`; no allocation), or
    /// `None` for the model: at the fill to a thousandth (`bank_fill_step`), so a caller
    /// may keep a lookup while the fill stays in its step (`Engine` does).
    pub fn lookup(&self, state: &PourState) -> Option<Lookup> {
        match self {
            CellStatistics::Model => None,
            CellStatistics::Bank { bank, selection } => {
                Some(bank.lookup_at(selection, bank_fill_step(state.fill) as f32 / BANK_FILL_STEPS))
            }
        }
    }

    /// What a bank's lookup for `state` depends on (`lookup`): the settings' selection and
    /// the fill's step; `None` for the model.
    pub fn lookup_key(&self, state: &PourState) -> Option<(Selection, u32)> {
        match self {
            CellStatistics::Model => None,
            CellStatistics::Bank { selection, .. } => Some((*selection, bank_fill_step(state.fill))),
        }
    }
}

/// One window's cell shapes with the bank's (`Lookup`): each banked cell's speed histogram
/// in units of the impact speed, built from the bank's bin shares (`Histogram::from_weights`),
/// with its audibility cut and second moment; the other cells keep `Shapes`'. A banked
/// cell's angles are drawn per collision from its speed bin's row of the joint histogram
/// (`CellLookup::angle_by_speed`, `generate`): a window draws a few dozen, fewer than the
/// rows it would build; the others' angles are always `Shapes`'.
struct WindowShapes {
    /// The banked cells' speed histograms (`None`: the cell's is `Shapes`').
    speed: [Option<Histogram<SPEED_BINS>>; CELLS.len()],
    cut: [f32; CELLS.len()],
    speed_m2: [f32; CELLS.len()],
}

impl WindowShapes {
    fn new(
        shapes: &Shapes,
        lookup: &Lookup,
        banked: &[Option<&CellLookup>; CELLS.len()],
        state: &PourState,
    ) -> WindowShapes {
        let mut w = WindowShapes {
            speed: [None; CELLS.len()],
            cut: shapes.cut,
            speed_m2: shapes.speed_m2,
        };
        // the bins the bank's speed histograms share: kept with the shapes, or found here
        let (s_lo, s_hi) = lookup.speed_range;
        let found;
        let bins = match &shapes.bank_bins {
            Some(b) if (b.lo, b.hi) == (s_lo, s_hi) => b,
            _ => {
                found = LogBins::new(s_lo, s_hi);
                &found
            }
        };
        for (i, b) in banked.iter().enumerate() {
            let Some(b) = b else { continue };
            if b.rate <= 0.0 {
                continue;
            }
            let speed = bins.tilted(&lifetime_speeds(b, state));
            (w.speed_m2[i], w.cut[i]) = speed.second_moment_and_cut(shapes.cull_share);
            w.speed[i] = Some(speed);
        }
        w
    }
}

/// How the generator treats normals (thesis 5.4 experiment).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum NormalMode {
    /// Physical direction: a cone about the cell's normal.
    #[default]
    Physical,
    /// Random (uniform on the sphere) for collisions slower than the given speed, m/s.
    RandomBelow(f32),
}

/// Steps of the fill the bank is looked up at (`CellStatistics::lookup`): a thousandth of
/// the cup's depth, a tenth of a millimetre in a 10 cm cup, where the bank's fill axis is
/// interpolated between entries 0.05 to 0.3 of the depth apart (`granary_dem::bank::FILLS`). The
/// fill moves a little every window of a pour; a lookup mixes up to 32 corners of 8 cells'
/// histograms (10 KB), so the engine reuses it while the fill stays in its step.
pub const BANK_FILL_STEPS: f32 = 1000.0;

/// The step of `fill` (0..1) the bank is looked up at (`BANK_FILL_STEPS`).
pub fn bank_fill_step(fill: f32) -> u32 {
    (fill.clamp(0.0, 1.0) * BANK_FILL_STEPS).round() as u32
}

/// What the generator needs besides the pour state; constant over a window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeneratorSetup<'a> {
    pub geometry: Geometry,
    /// Coefficient of restitution of the grains.
    pub restitution: f32,
    /// Window length, s.
    pub window_s: f32,
    pub normals: NormalMode,
    /// See `RENDERED_PER_CELL_PER_S`.
    pub max_per_cell: u32,
    /// Reference quality (`Quality::Reference`): no texture masking (`masked_budget`) and
    /// no grouped pushes through the bed (`BED_PULSES_PER_CELL_PER_S`): every rendered
    /// collision writes its own. `max_per_cell` is then `reference_rendered_per_cell`.
    pub reference: bool,
    /// The hand-written model, or a bank's measured statistics (thesis 7.1).
    pub statistics: CellStatistics,
    /// The bank's statistics for this window (`statistics.lookup`), when the caller keeps
    /// them; `None`: looked up here (and nothing for the model).
    pub lookup: Option<&'a Lookup>,
}

/// The mean push a grouped cell's window leaves out, for the engine to add as a smooth force
/// (`Engine`'s group mean). A group of k collisions drawn as one of amplitude sqrt(k) keeps
/// their energy but carries sqrt(k) times their mean push, not k times: every push on the
/// cup has the same sign, so a dense stream's pushes add up to a mean force, and its
/// fluctuation with the Poisson count of each window is the pour's rumble below the window
/// rate (the realtime quality lost 4-17 dB from 100 to 250 Hz of the default preset's cup,
/// `docs/performance.md`). What is missing is `missing` collisions' mean push, spread over
/// the window as the cell's collisions are (`density`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GroupMean {
    /// Collisions (drawn count) whose mean push the rendered draws do not carry:
    /// count - rendered x carry, carry = w (a group's amplitude) or, through the bed, w /
    /// sqrt(every) (one draw in `every` pushes, with sqrt(every) times the amplitude).
    pub missing: f32,
    /// The mean-push units the rendered draws carry (rendered x carry).
    pub carried: f32,
    /// The cell's mean speed this window, m/s (the draws' impulses go as their speeds).
    pub mean_v: f32,
    /// The density of the cell's collisions in time at the window's start and end, over
    /// its mean (mean 1): at the fraction x of the window (samples 0..`WINDOW` from the
    /// collisions' time origin, `Collision::time`) it is `d0 + (d1 - d0) x`, the time PDF's
    /// ramp (`Ramp`).
    pub density: [f32; 2],
}

/// Generates one window's collisions and appends them to `out`, never beyond its capacity
/// (no allocation: the audio thread calls this); the ones that do not fit go to
/// `overflow`, in order. Returns the number of physical collisions the window holds,
/// [grain-grain, grain-cup, culled, grain-surface] (merged ones counted with their group
/// size; culled ones are included in the others).
pub fn generate(
    state: &PourState,
    setup: &GeneratorSetup,
    shapes: &Shapes,
    rng: &mut Xoshiro256PlusPlus,
    out: &mut Vec<Collision>,
    means: &mut [GroupMean; CELLS.len()],
    mut overflow: impl FnMut(&Collision),
) -> [u64; 4] {
    *means = [GroupMean::default(); CELLS.len()];
    let GeneratorSetup {
        ref geometry,
        restitution,
        window_s,
        normals,
        max_per_cell,
        reference,
        statistics,
        lookup,
    } = *setup;
    let mut total = [0u64; 4];
    // the bank's statistics (the caller's, or looked up once a window), and the cells that
    // draw from them
    let looked_up = match lookup {
        Some(_) => None,
        None => statistics.lookup(state),
    };
    let lookup: Option<&Lookup> = lookup.or(looked_up.as_ref());
    let heap = Heap::new(
        state,
        geometry,
        lookup.is_none().then_some((&shapes.reach, restitution)),
    );
    let banked: [Option<&CellLookup>; CELLS.len()] = match lookup {
        Some(l) => CELLS.map(|cell| banked(cell, state, l)),
        None => [None; CELLS.len()],
    };
    let pdfs: [Option<CellPdf>; CELLS.len()] = std::array::from_fn(|i| match banked[i] {
        Some(b) => bank_pdf(b, state, window_s),
        // the bank counts every collision of a grain's life, until it rests (`granary-dem`'s
        // reduction), in the cells where they happen: the model's settling would count the
        // slow ones twice
        None if lookup.is_some() && CELLS[i] == Cell::Settling => None,
        None => cell_pdf(CELLS[i], state, geometry, &heap, restitution, window_s),
    });
    let window_shapes = lookup.map(|l| WindowShapes::new(shapes, l, &banked, state));
    let angle_shapes = &shapes.angle;
    let (cuts, speed_m2) = match &window_shapes {
        Some(w) => (&w.cut, &w.speed_m2),
        None => (&shapes.cut, &shapes.speed_m2),
    };
    let mut bed = Bed::new(state, &geometry.cup, &heap, geometry.open);
    let bed_budget = if reference {
        u64::MAX
    } else {
        ((BED_PULSES_PER_CELL_PER_S * window_s).ceil() as u64).max(1)
    };
    // texture masking (see `MASKING_RATIO`): each cell's expected energy against the
    // loudest cell of its kind
    let energy: [f32; CELLS.len()] = std::array::from_fn(|i| match &pdfs[i] {
        Some(p) => p.lambda as f32 * p.mean_v * p.mean_v * speed_m2[i],
        None => 0.0,
    });
    let mut loudest = [0.0f32; 3];
    for (cell, e) in CELLS.iter().zip(energy) {
        let k = &mut loudest[cell.kind() as usize];
        *k = k.max(e);
    }
    for (cell_index, (&cell, pdf)) in CELLS.iter().zip(pdfs).enumerate() {
        let Some(pdf) = pdf else {
            continue;
        };
        // thesis eq. 5.6: number of samples ~ Pois(lambda)
        let count = match Poisson::new(pdf.lambda.min(1e9)) {
            Ok(p) => p.sample(rng) as u64,
            Err(_) => 0,
        };
        if count == 0 {
            continue;
        }
        total[match cell.kind() {
            CollisionKind::GrainGrain => 0,
            CollisionKind::GrainCup => 1,
            CollisionKind::GrainSurface => 3,
        }] += count;
        // Merge into groups beyond the per-window budget: each rendered collision stands
        // for `group` collisions; amplitudes of incoherent sums add in power (sqrt).
        let share = if reference {
            max_per_cell
        } else {
            masked_budget(max_per_cell, energy[cell_index] / loudest[cell.kind() as usize])
        } as u64;
        let (rendered, weight) = if count > share {
            (share, ((count as f64) / share as f64).sqrt() as f32)
        } else {
            (count, 1.0)
        };
        // thesis 6.1 audibility culling, plus masking within the cell (see CULL_ENERGY_SHARE)
        let v_cull = if shapes.cull_share > 0.0 {
            (cuts[cell_index] * pdf.mean_v).max(V_MIN)
        } else {
            0.0
        };
        // the cut in the speed shapes' units (of the mean speed)
        let cut = v_cull / pdf.mean_v;
        // a banked cell's speeds this window, or the cell's shape
        let own = window_shapes.as_ref().and_then(|w| w.speed[cell_index].as_ref());
        let (speed, angle) = (own.unwrap_or(&shapes.speed[cell_index]), &angle_shapes[cell_index]);
        // a grouped cell draws its speeds by their energy (`EnergyDraw`): the model's shapes
        // have theirs built once, a banked cell's this window's
        let banked_energy;
        let by_energy = if weight > 1.0 {
            let shape = if own.is_some() {
                banked_energy = EnergyShape::new(speed);
                &banked_energy
            } else {
                &shapes.energy[cell_index]
            };
            shape.draw(count as f32 / rendered as f32, cut)
        } else {
            None
        };
        let sampler = by_energy.as_ref().map_or(speed, |e| e.energy);
        // One draw in `every` pushes through the bed, the first a random one of the first
        // `every` (counted from the first draw, ceil(n / every) of n pushed at sqrt(every)
        // times the amplitude: +0.12 dB for 34 draws at every 5, +0.97 dB for 12; lentils
        // into the aluminium pot's cup +0.2 dB against reference, docs/dem.md "Within the
        // bounds"). The phase is the low 16 bits of the random number the cell's first draw
        // takes next (`uniform_pair` uses bits 16 to 63), read without drawing it: the
        // stream, and every draw's values, stay as they were.
        let every = rendered.div_ceil(bed_budget);
        let phase = if every > 1 {
            (rng.clone().next_u64() & 0xFFFF) % every
        } else {
            0
        };
        bed.start_cell(every, phase);
        // the mean push the draws leave out (`GroupMean`): through the bed on the pile's
        // cells (one draw in `every` pushes, sqrt(every) times as hard), directly elsewhere
        let through_bed = matches!(cell, Cell::ImpactZone | Cell::PileSurface | Cell::Settling);
        let weight_carried = weight * by_energy.as_ref().map_or(1.0, |e| e.carry);
        let carry = if through_bed {
            weight_carried / bed.weight
        } else {
            weight_carried
        };
        let missing = count as f32 - rendered as f32 * carry;
        if missing > 0.0 {
            // A banked cell's speeds change shape from window to window (`lifetime_speeds`:
            // a clump's landings are fast, its grains' later collisions slower) where the
            // model's keep theirs: the mean push follows the window's mean speed of the
            // collisions above the audible cut, not only the pour's (a full mug's cup lost
            // 3 dB at 100 Hz against every collision rendered while it followed `mean_v`
            // alone, docs/performance.md).
            let shape_mean = if own.is_some() { speed.mean_above(cut) } else { 1.0 };
            means[cell_index] = GroupMean {
                missing,
                carried: rendered as f32 * carry,
                mean_v: pdf.mean_v * shape_mean,
                density: pdf.time.density(),
            };
        }
        // a banked cell draws each normal's angle for the collision's speed bin
        let angle_by_speed = match (lookup, banked[cell_index]) {
            (Some(l), Some(b)) if b.rate > 0.0 => Some((&b.angle_cdf, l.angle_range)),
            _ => None,
        };
        // A banked wall ring's angle is the normal's tilt from the inward horizontal
        // (`granary-dem`'s reduction): on the wall's faces, up where the wall flares (a
        // bowl: a grain on its slope is pushed in and up), down where it narrows. The
        // generator turns it that way (the azimuth about the inward horizontal that points
        // up, `lanes::around_lanes`: pi/2) rather than about it at random, which sent half
        // of a bowl's wall normals downwards, away from a listener above: the grains of
        // glass beads hitting a bowl's wall came out 2.5 dB quieter than the simulation's.
        let wall_tilt = match (cell, angle_by_speed) {
            (Cell::WallRing(k), Some(_)) => {
                let cup = &geometry.cup;
                let (lo, hi) = (cup.ring_edges[k], cup.ring_edges[k + 1]);
                Some(if cup.radius_at(hi) >= cup.radius_at(lo) {
                    std::f32::consts::FRAC_PI_2
                } else {
                    -std::f32::consts::FRAC_PI_2
                })
            }
            _ => None,
        };
        let log2_mean_v = fastmath::log2(pdf.mean_v);
        // the speed tests are made on log2 v0 (the speed itself is evaluated later, in
        // lanes); a zero limit is no limit
        let log2_or_none = |v: f32| if v > 0.0 { fastmath::log2(v) } else { f32::NEG_INFINITY };
        let log2_cull = log2_or_none(v_cull);
        let log2_random_below = match normals {
            NormalMode::RandomBelow(limit) => log2_or_none(limit),
            NormalMode::Physical => f32::NEG_INFINITY,
        };
        let group = count / rendered;
        // Every random draw is taken here, in stream order; the speeds, sines and cosines
        // of a batch of collisions are then evaluated together in SIMD lanes
        // (`TrigBatch`), and the collisions finished and handed on in the same order.
        let mut batch = TrigBatch {
            spread: count > share,
            ..TrigBatch::default()
        };
        let lanes = Lanes {
            speed,
            mean_v: pdf.mean_v,
            isa: shapes.isa,
        };
        for _ in 0..rendered {
            let time = WINDOW as f32 * pdf.time.sample(uniform_pair(rng).0);
            let (speed_u, log2_shape) = sampler.sample_log(uniform_pair(rng));
            // the draw's amplitude weight: sqrt(group), or its speed bin's by energy
            let draw_weight = match &by_energy {
                Some(e) => e.amplitude * e.inv_centre[((speed_u * SPEED_BINS as f32) as usize).min(SPEED_BINS - 1)],
                None => weight,
            };
            let log2_v0 = log2_shape + log2_mean_v;
            // v0 < limit, decided on the logs; within their rounding of each other, on the
            // speed itself (as `finish` will evaluate it), so the decision never differs
            let below = |log2_limit: f32, limit: f32| {
                if (log2_v0 - log2_limit).abs() > 1e-4 {
                    log2_v0 < log2_limit
                } else {
                    speed.at(speed_u) * pdf.mean_v < limit
                }
            };
            if below(log2_cull, v_cull) {
                total[2] += if by_energy.is_some() {
                    (draw_weight * draw_weight + 0.5) as u64
                } else {
                    group
                };
                continue;
            }
            let lane = batch.len;
            let (u_azimuth, u_place) = uniform_pair(rng);
            let azimuth = u_azimuth * std::f32::consts::TAU;
            draw_place(
                cell,
                geometry,
                state,
                (pdf.aimed, wall_tilt.is_some()),
                (u_place, rng),
                &mut batch,
                lane,
            );
            let random_normal = match normals {
                NormalMode::RandomBelow(limit) => below(log2_random_below, limit),
                NormalMode::Physical => false,
            };
            let u_normal = uniform_pair(rng);
            if random_normal {
                batch.normal_z[lane] = 2.0 * u_normal.0 - 1.0;
                batch.angle[NORMAL][lane] = u_normal.1 * std::f32::consts::TAU;
            } else {
                batch.angle[NORMAL][lane] = match angle_by_speed {
                    Some((rows, (lo, hi))) => {
                        let row = &rows[((speed_u * SPEED_BINS as f32) as usize).min(SPEED_BINS - 1)];
                        Histogram::from_cdf(lo, hi, false, (0.0, 0.0), *row).sample(u_normal)
                    }
                    None => angle.sample(u_normal),
                };
            }
            batch.random_normal[lane] = random_normal;
            batch.angle[AZIMUTH][lane] = wall_tilt.unwrap_or(azimuth);
            batch.speed_u[lane] = speed_u;
            batch.weight[lane] = draw_weight;
            batch.time[lane] = time;
            batch.ln_v0[lane] = log2_v0 * std::f32::consts::LN_2;
            batch.len += 1;
            if batch.len == TRIG_BATCH {
                batch.finish(cell, cell_index, &mut bed, &lanes, out, &mut overflow);
            }
        }
        batch.finish(cell, cell_index, &mut bed, &lanes, out, &mut overflow);
    }
    total
}

/// A grouped cell's draws taken by their energy (importance sampling; `EnergyShape::draw`,
/// `EnergyDraw`). A draw that stands
/// for a group of k collisions (`RENDERED_PER_CELL_PER_S`) carries k collisions' energy; drawn
/// from the speed distribution p and weighted sqrt(k), that energy is k v^2 of the one speed
/// drawn, and with the cells' wide speed spread (a decade and more) a 50 ms window's few
/// hundred draws of a dense pour rise and fall with their few fastest: the octave bands'
/// envelopes came out more peaked than every collision's (sugar overflowing a mug: crest
/// factor +12 % at 4 kHz, docs/performance.md). Here the speed bin is drawn from the
/// energy-weighted histogram, q_i = p_i c_i^2 / m2 (c_i the bin's centre, m2 = sum p_i c_i^2),
/// and the draw weighted by p_i / q_i, amplitude sqrt(k m2) / c_i: every draw then carries
/// about the group's mean energy k m2, and any quantity of the collisions' energies is still
/// estimated without bias, sum_i q_i (k m2 / c_i^2) E[f | i] = k sum_i p_i E[f | i] (within a
/// bin the speed is drawn as before). The draws' mean push changes with it: a draw carries
/// sqrt(k m2) / c times its speed, about sqrt(k m2) / m1 collisions' mean push (m1 = sum p_i
/// c_i, `carry`); a group smaller than m2 / m1^2 would carry more than its k collisions' and
/// is drawn as before. The draws below the audible cut are culled as plain ones are, but
/// fewer of them are slow: a grouped cell renders more of its draws (the default preset
/// about 4 % more, docs/performance.md).
#[derive(Clone, Copy)]
struct EnergyShape {
    /// The speed histogram's bins weighted by their centre squared.
    energy: Histogram<SPEED_BINS>,
    /// One over each bin's centre, c_i.
    inv_centre: [f32; SPEED_BINS],
    /// m1 = sum p_i c_i and m2 = sum p_i c_i^2 (p normalised).
    m1: f32,
    m2: f32,
    /// Each bin's centre c_i, and its shares of m1 and m2, p_i c_i and p_i c_i^2.
    centre: [f32; SPEED_BINS],
    first: [f32; SPEED_BINS],
    second: [f32; SPEED_BINS],
}

impl EnergyShape {
    /// The energy-weighted form of `speed` (a cell's shape, built once; a bank's banked
    /// cells' each window).
    fn new(speed: &Histogram<SPEED_BINS>) -> EnergyShape {
        let (centres, masses) = speed.centres_and_masses();
        let (moments, m2) = speed.bin_moments();
        let mass = speed.cdf[SPEED_BINS - 1];
        let second = moments.map(|m| m / mass);
        // the draws by energy spread within a bin as the speeds do (the weight is the bin's);
        // a tilted bin's draw carries its mean square, E[x^2 | i], and its mean E[x | i]
        let mut energy = Histogram::from_weights(speed.lo, speed.hi, speed.log, &moments);
        energy.tilt = speed.tilt;
        let (inv_centre, first) = match speed.tilted_means() {
            Some((means, squares)) => (
                squares.map(|q| 1.0 / q.sqrt()),
                std::array::from_fn(|i| masses[i] / mass * means[i]),
            ),
            None => {
                let inv_centre = centres.map(|c| 1.0 / c);
                (inv_centre, std::array::from_fn(|i| second[i] * inv_centre[i]))
            }
        };
        EnergyShape {
            energy,
            inv_centre,
            m1: speed.mean_above(0.0),
            m2: m2 / mass,
            centre: centres,
            first,
            second,
        }
    }

    /// The draws of a window whose draws stand for `k` collisions each, with the audible
    /// cut at `cut` (in the histogram's units; 0: none); none if the group is too small
    /// (the type's doc) or the histogram empty.
    fn draw(&self, k: f32, cut: f32) -> Option<EnergyDraw<'_>> {
        let (m1, m2) = (self.m1, self.m2);
        if !(m1 > 0.0 && m2 > 0.0 && k * m1 * m1 >= m2) {
            return None;
        }
        Some(EnergyDraw {
            energy: &self.energy,
            inv_centre: &self.inv_centre,
            amplitude: (k * m2).sqrt(),
            carry: self.carry(cut),
        })
    }

    /// The mean push a draw carries in collisions of the cell's mean speed, per sqrt(k),
    /// where the draws and the collisions slower than `cut` are culled (and push nothing):
    /// a draw keeps its push with the probability m2' / m2, the share of the energy above
    /// the cut (the draws are taken by energy), and pushes sqrt(k m2) then, where a
    /// collision pushes m1' on average, the first moment above the cut: sqrt(k) m2' /
    /// (sqrt(m2) m1') collisions' worth. Without a cut, sqrt(m2) / m1
    /// (the type's doc). The cut is a bin edge (`Histogram::second_moment_cut`, or below
    /// the histogram), so the bins above it are those whose centre is.
    fn carry(&self, cut: f32) -> f32 {
        let (mut first, mut second) = (0.0f32, 0.0f32);
        for i in 0..SPEED_BINS {
            if self.centre[i] >= cut {
                first += self.first[i];
                second += self.second[i];
            }
        }
        if first > 0.0 && second > 0.0 {
            second / (self.m2.sqrt() * first)
        } else {
            self.m2.sqrt() / self.m1
        }
    }
}

struct EnergyDraw<'a> {
    /// The speed histogram's bins weighted by their centre squared.
    energy: &'a Histogram<SPEED_BINS>,
    /// One over each bin's centre.
    inv_centre: &'a [f32; SPEED_BINS],
    /// sqrt(k m2): a draw's amplitude weight is this over its bin's centre.
    amplitude: f32,
    /// The mean push a draw carries, in collisions of the cell's mean speed, per sqrt(k):
    /// sqrt(m2) / m1.
    carry: f32,
}

impl TrigBatch {
    /// Finishes the batch's collisions (`finish_lanes`) and appends them to `out` in the
    /// order they were drawn (to `overflow` once `out` is at its capacity); empties the
    /// batch.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &mut self,
        cell: Cell,
        cell_index: usize,
        bed: &mut Bed,
        lanes: &Lanes,
        out: &mut Vec<Collision>,
        overflow: &mut impl FnMut(&Collision),
    ) {
        if self.len == 0 {
            return;
        }
        let mut f = Finished::default();
        finish_lanes(cell, self, lanes, &mut f);
        let kind = cell.kind();
        let heap = &bed.heap;
        // the aimed cells' discs are centred on the stream's landing point
        let centre = match cell {
            Cell::ImpactZone | Cell::Stream => heap.centre,
            Cell::CupFloor => heap.floor_centre,
            Cell::Surface if bed.open => heap.centre,
            _ => [0.0; 2],
        };
        for i in 0..self.len {
            let mut position = [
                f.position[0][i] + centre[0],
                f.position[1][i] + centre[1],
                f.position[2][i],
            ];
            let (bus, bed_m, bed_weight) = match cell {
                Cell::WallRing(k) => (wall_bus(k, self.sector[i] as usize), 0.0, 0.0),
                Cell::ImpactZone | Cell::PileSurface | Cell::Settling => {
                    position[2] = heap.surface(position);
                    let writes = bed.count.is_multiple_of(bed.every);
                    let (bus, path) = if bed.open {
                        // a heap on the ground pushes on the ground beneath it
                        (SURFACE_BUS, position[2].max(BED_MIN_PATH_M))
                    } else if writes {
                        // the normal's azimuth: a uniform draw that nothing else here depends on
                        bed_path(position, bed, self.angle[AZIMUTH][i] * (1.0 / std::f32::consts::TAU))
                    } else {
                        (FLOOR_BUS, position[2].max(BED_MIN_PATH_M))
                    };
                    bed.count += 1;
                    (bus, path, if writes { bed.weight } else { 0.0 })
                }
                Cell::Stream => {
                    // the stream's column stands on the heap's apex
                    position[2] += heap.surface([centre[0], centre[1], 0.0]) - heap.pile_height;
                    (FLOOR_BUS, 0.0, 0.0)
                }
                Cell::CupFloor => (FLOOR_BUS, 0.0, 0.0),
                Cell::Surface => (SURFACE_BUS, 0.0, 0.0),
            };
            let c = || Collision {
                time: self.time[i],
                kind,
                cell: cell_index,
                bus,
                position,
                normal: [f.normal[0][i], f.normal[1][i], f.normal[2][i]],
                v0: f.v0[i],
                ln_v0: self.ln_v0[i],
                weight: self.weight[i],
                bed_m,
                bed_weight,
                spread: self.spread,
            };
            // built in place in `out` (a copy through the stack, read back as soon as its
            // fields are written, stalls the CPU: failed store forwarding)
            if out.len() < out.capacity() {
                out.push(c());
            } else {
                overflow(&c());
            }
        }
        self.len = 0;
    }
}

/// Where the pile's collisions push on the cup: the pile's top radius and the wall rings'
/// and sectors' places (`bed_path`).
struct Bed {
    /// One rendered collision in `every` of the cell writes its pulse, `weight` = sqrt(every)
    /// times its amplitude; `count` counts the cell's collisions so far.
    every: u64,
    weight: f32,
    count: u64,
    pile_radius_m: f32,
    ring_edges: [f32; WALL_RINGS + 1],
    /// Unit vectors towards the wall sectors' azimuths.
    sectors: [[f32; 2]; SECTORS],
    heap: Heap,
    /// A heap on the bare surface (`Geometry::open`): pushes go to the ground.
    open: bool,
}

impl Bed {
    fn new(state: &PourState, cup: &Cup, heap: &Heap, open: bool) -> Bed {
        Bed {
            open,
            every: 1,
            weight: 1.0,
            count: 0,
            pile_radius_m: state.pile_radius_m,
            ring_edges: cup.ring_edges,
            sectors: cup.sector_dirs,
            heap: *heap,
        }
    }
}

impl Bed {
    /// A new cell, one of whose collisions in `every` writes its pulse through the bed, the
    /// first the one at `phase` (0..every): a uniformly random phase makes the draws that
    /// push n / every of n on average, as their weight sqrt(every) assumes.
    fn start_cell(&mut self, every: u64, phase: u64) {
        self.every = every.max(1);
        self.weight = (self.every as f32).sqrt();
        // the draw at `phase` is the first whose count is a multiple of `every`
        self.count = (self.every - phase % self.every) % self.every;
    }
}

/// The cup surface a collision on the pile at `p` pushes on through the grain bed, and the
/// length of that path, m. Two ways lead out of the bed: straight down to the floor (the
/// pile's height there) and straight across to the wall (the pile top's radius less the
/// collision's distance from the axis). The contact network spreads a push over both, the
/// nearer one taking more: a share across^2 / (down^2 + across^2) goes down, the rest
/// across (the share of a spreading force each surface meets goes as the inverse square of
/// its distance). Each pulse through the bed takes one of them with that probability (`u`,
/// uniform in [0, 1), decides), so the energy splits in those shares and the split changes
/// smoothly as the pile rises. A wall
/// is the ring at the contact's height and the sector whose axis (its azimuth or the
/// opposite one) is nearest the contact's azimuth: the modes' sector values are sampled on
/// those axes (`cups::Cup::sector_azimuths`). At least a grain's contact away: never 0.
fn bed_path(p: [f32; 3], bed: &Bed, u: f32) -> (usize, f32) {
    let down = p[2].max(BED_MIN_PATH_M);
    let rho = (p[0] * p[0] + p[1] * p[1]).sqrt();
    let across = (bed.pile_radius_m - rho).max(BED_MIN_PATH_M);
    let share_down = across * across / (down * down + across * across);
    if u < share_down {
        return (FLOOR_BUS, down);
    }
    let ring = (1..WALL_RINGS).filter(|&k| p[2] >= bed.ring_edges[k]).count();
    let facing = |s: &[f32; 2]| (s[0] * p[0] + s[1] * p[1]).abs();
    let sector = usize::from(facing(&bed.sectors[1]) > facing(&bed.sectors[0]));
    (wall_bus(ring, sector), across)
}

/// The share of the arriving grains that land on grains rather than on the bare floor of a
/// cup. The stream's grains build a heap under it, which covers its own footprint (a disc of
/// the stream's radius r_s) long before the poured volume, spread over the whole floor,
/// covers the floor (`PourState::floor_coverage`, which sets the floor's damping): once
/// about a layer has landed on it, N₁ = (r_s / a)² grains of radius a, with the chance
/// exp(−N/N₁) for a grain to find the floor bare after N. So 1 − exp(−V / (4/3 π a r_s²)),
/// V the poured grains' solid volume, and never less than the floor's coverage.
/// `granary-dem`'s 2 mm sugar into an empty mug (3,000 grains a second, an 8 mm stream):
/// a fast landing (over half the impact speed) finds the floor 42 % of the time among the
/// first 75 grains, 25 % among the next 75, 5 % after (0.56, 0.17 and 0.05 by the formula),
/// where the floor's coverage would have left it bare 95 % of the time. A pour onto the
/// surface keeps the ground's coverage. An empty cup held empty (`auto_fill` off) stays bare.
fn landing_coverage(s: &PourState, g: &Geometry) -> f32 {
    let floor = s.floor_coverage.clamp(0.0, 1.0);
    if g.open {
        return floor;
    }
    let (a, r_s) = (g.grain_radius.max(1e-5), g.stream_radius.max(1e-4));
    let solid = crate::base::materials::PACKING_FRACTION * g.cup.volume_below(s.pile_height_m.max(0.0));
    let layers = solid / (4.0 / 3.0 * std::f32::consts::PI * a * r_s * r_s);
    let landing = 1.0 - fastmath::exp(-layers.min(80.0));
    if landing.is_finite() {
        floor.max(landing)
    } else {
        floor
    }
}

/// Where the stream lands and the heap it builds, for one window (the `aim` parameter).
///
/// The stream lands around a point `aim` of the way from the axis to the wall, towards the
/// first wall sector. The heap under it is a cone of the grains' angle of repose with its
/// apex there (a pile poured from a point is a cone at the angle of repose: Al-Hashemi &
/// Al-Amoudi 2018), over the flat pile the scene tracks, so a stream aimed at the wall
/// builds a lopsided heap: high on the near side, its grains closer to that wall. The
/// cone's mean height over the pile top is the pile's (it only moves grains about), and
/// its slope grows with the pile: no steeper than the pile is high over its radius (a thin
/// first layer is flat), never steeper than repose. The mean distance of the pile top from
/// the apex, r_mean, is 2R/3 for a centred apex and 32R/(9 pi) = 1.13 R for one on the
/// edge; between them it is interpolated as R (2/3 + 0.465 (c / R)^2) (within 2 % of the
/// exact mean).
///
/// The stream widens as it falls: its grains spread sideways at `Geometry::spread_m_s`
/// (about a quarter of the spout's exit speed sqrt(g D), `stream`), so at the pile it is
/// r_s + u t_fall wide. Where that disc reaches past the wall, its grains graze the wall on
/// the way down (a share: the circular segment beyond the wall): glancing hits on the
/// exposed rings, at the normal speed v sin(beta + gamma) (beta the wall's tilt from the
/// vertical there, gamma the grains' sideways angle, atan(u / v)), `GRAZE_CONTACTS` each,
/// before they land on the heap.
#[derive(Clone, Copy)]
struct Heap {
    /// The landing point on the pile and on the bare floor, m (x, y).
    centre: [f32; 2],
    floor_centre: [f32; 2],
    /// The pile top's height, m, the cone's slope (rise per metre) and the mean distance of
    /// the pile top from its apex, m.
    pile_height: f32,
    depth: f32,
    slope: f32,
    r_mean: f32,
    /// Share of the stream grazing the wall, and each ring's share of the grazes and their
    /// normal speed, m/s.
    graze_share: f32,
    ring_share: [f32; WALL_RINGS],
    ring_speed: [f32; WALL_RINGS],
    /// Each ring's wall hits per arriving grain from the grains' rebounds off the bare floor
    /// and the pile (`rebound::wall_hits`), and the share of them on the aimed sector beyond
    /// an even spread; zero with the bank (its wall rings are banked).
    rebound: [f32; WALL_RINGS],
    rebound_aimed: f32,
    /// The share of the arriving grains that land on grains, not on the bare floor
    /// (`landing_coverage`).
    coverage: f32,
}

/// Wall contacts of a grazing grain on its way down (a glancing hit and a bounce or two).
pub const GRAZE_CONTACTS: f32 = 2.0;

impl Heap {
    /// The heap and the stream for this window; with `reach`, the hand model's rebounds to
    /// the wall too (restitution `restitution`).
    fn new(s: &PourState, g: &Geometry, reach: Option<(&rebound::ReachTable, f32)>) -> Heap {
        let cup = &g.cup;
        let r_top = s.pile_radius_m.max(1e-4);
        let aim = if g.aim.is_finite() { g.aim.clamp(0.0, 1.0) } else { 0.0 };
        let towards = cup.sector_azimuths[0];
        let dir = [towards.cos(), towards.sin()];
        // the landing disc stays inside the pile top's hit zone (`draw_place`)
        let r_land = g.stream_radius.min(FLOOR_HIT_SHARE * r_top);
        let c = aim * (FLOOR_HIT_SHARE * r_top - r_land).max(0.0);
        let r_floor = (g.stream_radius * 2.0).min(FLOOR_HIT_SHARE * cup.floor_radius);
        let c_floor = aim * (FLOOR_HIT_SHARE * cup.floor_radius - r_floor).max(0.0);
        let pile_height = s.pile_height_m;
        let slope = g.repose_tan.max(0.0).min(pile_height / r_top);
        let q = c / r_top;
        let r_mean = r_top * (2.0 / 3.0 + 0.465 * q * q);
        // the widened stream at the pile, and its share beyond the wall: a circular segment
        let v = s.impact_speed.max(1e-3);
        let t_fall = v / crate::base::materials::GRAVITY;
        let u = g.spread_m_s.max(0.0);
        let r_wide = g.stream_radius + u * t_fall;
        let d = (r_top - c) / r_wide;
        let graze_share = if aim > 0.0 && d < 1.0 {
            let th = d.max(-1.0).acos();
            (th - th.sin() * th.cos()) / std::f32::consts::PI
        } else {
            0.0
        };
        // the exposed rings above the pile, by their exposed height; speeds where they are
        let mut ring_share = [0.0f32; WALL_RINGS];
        let mut ring_speed = [0.0f32; WALL_RINGS];
        let gamma = (u / v).atan();
        let mut exposed_total = 0.0;
        for k in 0..WALL_RINGS {
            let (lo, hi) = (cup.ring_edges[k].max(pile_height), cup.ring_edges[k + 1]);
            if hi <= lo {
                continue;
            }
            let z = 0.5 * (lo + hi);
            ring_share[k] = hi - lo;
            exposed_total += hi - lo;
            // the wall's tilt from the vertical at z, from the profile
            let dz = 0.25 * (hi - lo);
            let beta = ((cup.radius_at(z + dz) - cup.radius_at(z - dz)) / (2.0 * dz))
                .atan()
                .abs();
            // falling from the spout, the grain is slower higher up: v^2 - 2 g (z - pile)
            let v_z = (v * v - 2.0 * crate::base::materials::GRAVITY * (z - pile_height))
                .max(0.0)
                .sqrt();
            ring_speed[k] = v_z * (beta + gamma).min(std::f32::consts::FRAC_PI_2).sin();
        }
        if exposed_total > 0.0 {
            ring_share.iter_mut().for_each(|x| *x /= exposed_total);
        }
        // rebounds: the bare floor's share of the arrivals from where the stream lands
        // (`rebound`): its own disc, which touches the wall at aim 1 (as `granary-dem` aims;
        // the floor cell's hits are drawn over twice its radius within 0.9 of the floor's,
        // where the floor's gains are averaged); the pile's a constant share over the
        // exposed rings
        let coverage = landing_coverage(s, g);
        let (mut rebound, mut rebound_aimed) = ([0.0f32; WALL_RINGS], 0.0);
        if let (Some((table, restitution)), false) = (reach, g.open) {
            if coverage < 1.0 {
                let r_stream = g.stream_radius.min(cup.floor_radius);
                let floor = rebound::Landing {
                    centre_m: aim * (cup.floor_radius - r_stream),
                    radius_m: r_stream,
                    bed_m: 0.0,
                    speed_m_s: v,
                    restitution,
                    friction: g.friction,
                };
                let (rings, aimed) = rebound::wall_hits(table, cup, &floor);
                for (r, x) in rebound.iter_mut().zip(rings) {
                    *r += (1.0 - coverage) * x;
                }
                rebound_aimed = aimed;
            }
            let from_floor: f32 = rebound.iter().sum();
            for (k, r) in rebound.iter_mut().enumerate() {
                // by the share of the ring above the pile (a step at its middle made the
                // cup's level jump as the pile passed it)
                let (lo, hi) = (cup.ring_edges[k], cup.ring_edges[k + 1]);
                let exposed = ((hi - pile_height.max(lo)) / (hi - lo).max(1e-6)).clamp(0.0, 1.0);
                *r += coverage * exposed * PILE_WALL_SHARE / WALL_RINGS as f32;
            }
            // the pile's hits strike either sector alike
            let total: f32 = rebound.iter().sum();
            rebound_aimed = if total > 0.0 {
                rebound_aimed * from_floor / total
            } else {
                0.0
            };
        }
        Heap {
            centre: [c * dir[0], c * dir[1]],
            floor_centre: [c_floor * dir[0], c_floor * dir[1]],
            pile_height,
            depth: cup.depth,
            slope,
            r_mean,
            graze_share: if exposed_total > 0.0 { graze_share } else { 0.0 },
            ring_share,
            ring_speed,
            rebound,
            rebound_aimed,
            coverage,
        }
    }

    /// The heap's surface height at `p` (x, y), m: the cone about the landing point.
    #[inline]
    fn surface(&self, p: [f32; 3]) -> f32 {
        if self.slope <= 0.0 {
            return self.pile_height;
        }
        let (dx, dy) = (p[0] - self.centre[0], p[1] - self.centre[1]);
        let d = (dx * dx + dy * dy).sqrt();
        (self.pile_height + self.slope * (self.r_mean - d)).clamp(0.0, self.depth)
    }

    /// Grazing hits on ring `k` a second, for `arrive` grains a second, and their normal
    /// speed, m/s.
    fn glance(&self, k: usize, arrive: f32) -> (f32, f32) {
        (
            arrive * self.graze_share * GRAZE_CONTACTS * self.ring_share[k],
            self.ring_speed[k],
        )
    }
}

/// Shortest path through a bed, m (a collision on a one-grain layer still pushes through it).
const BED_MIN_PATH_M: f32 = 1e-4;

/// Rise of the stream cell's mean normal per unit of its horizontal part.
pub const STREAM_RISE: f32 = 0.3;
/// Height of the column above the pile where the stream's grains meet each other, m: the
/// last few centimetres of the fall, where the stream has narrowed and grains catch up (a
/// modelling choice, not a measured value).
const STREAM_COLUMN_M: f32 = 0.03;

/// Two independent uniform numbers in [0, 1) from one 64-bit output of the generator: its
/// top 24 bits and the 24 below them, each with the resolution of rand's `f32` draws
/// (xoshiro256++ output bits are all of full quality, so half the generator steps of one
/// draw each).
#[inline(always)]
fn uniform_pair(rng: &mut Xoshiro256PlusPlus) -> (f32, f32) {
    const SCALE: f32 = 1.0 / (1u32 << 24) as f32;
    let x = rng.next_u64();
    (
        (x >> 40) as u32 as f32 * SCALE,
        ((x >> 16) as u32 & 0xFF_FFFF) as f32 * SCALE,
    )
}

/// Draws a position in the cell into lane `lane` of `batch`, uniform in the cell (thesis
/// 5.5, eq. 5.5: position independent of the rest and uniform in the cell; its angles are
/// evaluated later, `lanes::finish_lanes`), from the uniform number `u` and further draws.
/// Every place is inside the cup (`Geometry::cup`): wall hits on its inner profile, a share
/// `aimed` of them (the grazes of a stream aimed at the wall) on the aimed sector; with
/// `around` (a banked wall ring) all the way around the wall.
#[inline(always)]
fn draw_place(
    cell: Cell,
    g: &Geometry,
    s: &PourState,
    (aimed, around): (f32, bool),
    (u, rng): (f32, &mut Xoshiro256PlusPlus),
    batch: &mut TrigBatch,
    lane: usize,
) {
    let mut disc = |u: (f32, f32), radius: f32, z: f32| {
        batch.radius[lane] = radius * u.0.sqrt();
        batch.angle[PLACE][lane] = u.1 * std::f32::consts::TAU;
        batch.z[lane] = z;
    };
    let cup = &g.cup;
    // a disc on the pile's top: within the cup's radius there
    let on_pile = |radius: f32| radius.min(FLOOR_HIT_SHARE * s.pile_radius_m);
    match cell {
        Cell::ImpactZone => disc((u, rng.random()), on_pile(g.stream_radius), s.pile_height_m),
        Cell::CupFloor => disc(
            (u, rng.random()),
            (g.stream_radius * 2.0).min(FLOOR_HIT_SHARE * cup.floor_radius),
            0.0,
        ),
        Cell::WallRing(k) => {
            let (u_sector, u_azimuth) = uniform_pair(rng);
            let (lo, hi) = (cup.ring_edges[k], cup.ring_edges[k + 1]);
            let z = lo + (hi - lo) * u;
            batch.z[lane] = z;
            // the aimed stream's grazes strike the sector it is aimed at (`Heap`), rebounds
            // either; with no grazes (`aimed` 0) the draw is the plain uniform one
            let sector = if u_sector < aimed {
                0
            } else {
                let u = (u_sector - aimed) / (1.0 - aimed);
                ((u * SECTORS as f32) as usize).min(SECTORS - 1)
            };
            // centred at the azimuths where the asset samples the modes' sector shapes
            batch.angle[PLACE][lane] = cup.sector_azimuths[sector] + SECTOR_HALF_WIDTH * (2.0 * u_azimuth - 1.0);
            batch.radius[lane] = cup.radius_at(z);
            batch.sector[lane] = sector as u8;
            if around {
                // all the way around (a banked wall ring: the simulation's hits are), in the
                // sector whose axis it faces more (as a logged contact's, `logged::Contact`):
                // kept in the two sectors, the hits on the far side of the cup, whose normals
                // point at a listener beyond the axis, were missing
                let azimuth = u_azimuth * std::f32::consts::TAU;
                batch.angle[PLACE][lane] = azimuth;
                batch.sector[lane] = cup.facing_sector_at(azimuth) as u8;
            }
        }
        Cell::PileSurface | Cell::Settling => disc((u, rng.random()), on_pile(f32::INFINITY), s.pile_height_m),
        Cell::Surface if g.open => {
            // the landing zone and the ground around the heap's foot
            let reach = (2.0 * g.stream_radius).max(1.3 * s.pile_radius_m);
            disc((u, rng.random()), reach, 0.0);
        }
        Cell::Surface => {
            // a ring around the cup on the surface it stands on (at its floor's height),
            // from its widest radius out to half as far again
            let (u_ring, u_angle) = (u, rng.random::<f32>());
            let inner = cup.widest_radius();
            batch.radius[lane] = inner * (1.0 + 0.5 * u_ring);
            batch.angle[PLACE][lane] = u_angle * std::f32::consts::TAU;
            batch.z[lane] = 0.0;
        }
        Cell::Stream => {
            let (u_within, u_z) = uniform_pair(rng);
            disc((u, u_within), on_pile(g.stream_radius * 0.5), 0.0);
            let (u_height, u_axis) = (u_z, rng.random::<f32>());
            batch.z[lane] = s.pile_height_m + u_height * STREAM_COLUMN_M;
            batch.angle[AXIS][lane] = u_axis * std::f32::consts::TAU;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn state(arrivals: f32, fill: f32) -> PourState {
        PourState {
            arrivals_start: arrivals,
            arrivals_end: arrivals,
            impact_speed: 1.5,
            pile_height_m: fill * 0.09,
            pile_radius_m: 0.04,
            floor_coverage: if fill > 0.01 { 1.0 } else { 0.0 },
            fill,
            settle_rate: 0.0,
            flow_kg_s: 0.0,
            flow_factor: 1.0,
            overflow: 0.0,
            arrived_ago: [arrivals; crate::statistics::bank::LIFE_BINS],
        }
    }

    fn geometry() -> Geometry {
        Geometry {
            cup: Cup::new(crate::control::choices::CupShape::Mug, 1.0),
            grain_radius: 0.5e-3,
            stream_radius: 0.006,
            aim: 0.0,
            repose_tan: 0.6,
            spread_m_s: 0.08,
            friction: 0.45,
            open: false,
        }
    }

    /// The tests' generator setup: `geometry()`, 128-sample windows at 48 kHz, physical
    /// normals, every collision rendered (no budget), realtime quality.
    fn setup(statistics: CellStatistics, restitution: f32) -> GeneratorSetup<'static> {
        GeneratorSetup {
            geometry: geometry(),
            restitution,
            window_s: 128.0 / 48_000.0,
            normals: NormalMode::Physical,
            max_per_cell: u32::MAX,
            reference: false,
            statistics,
            lookup: None,
        }
    }

    fn count_kinds(s: &PourState) -> (u64, u64) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let shapes = Shapes::new(0.0, Isa::detect());
        let (mut gg, mut gc) = (0, 0);
        for _ in 0..200 {
            generate(
                s,
                &setup(CellStatistics::Model, 0.5),
                &shapes,
                &mut rng,
                &mut Vec::new(),
                &mut [GroupMean::default(); CELLS.len()],
                |c| match c.kind {
                    CollisionKind::GrainGrain => gg += 1,
                    CollisionKind::GrainCup => gc += 1,
                    CollisionKind::GrainSurface => {}
                },
            );
        }
        (gg, gc)
    }

    /// The synthetic bank of `bank::tests`, for the generator's lifetime.
    fn synthetic_bank() -> &'static Bank {
        static BANK: std::sync::OnceLock<Bank> = std::sync::OnceLock::new();
        BANK.get_or_init(crate::statistics::bank::tests::synthetic_bank)
    }

    /// Per cell over `windows` windows of `s` with `statistics`, every collision rendered
    /// (none culled, none grouped): the counts and the collisions themselves.
    fn run_cells(
        s: &PourState,
        statistics: CellStatistics,
        windows: usize,
        seed: u64,
    ) -> ([u64; CELLS.len()], Vec<Collision>) {
        run_cells_at(s, statistics, 0.5, windows, seed)
    }

    /// `run_cells` for grains of `restitution`.
    fn run_cells_at(
        s: &PourState,
        statistics: CellStatistics,
        restitution: f32,
        windows: usize,
        seed: u64,
    ) -> ([u64; CELLS.len()], Vec<Collision>) {
        run_setup(s, &setup(statistics, restitution), windows, seed)
    }

    /// `run_cells` with `setup`.
    fn run_setup(
        s: &PourState,
        setup: &GeneratorSetup,
        windows: usize,
        seed: u64,
    ) -> ([u64; CELLS.len()], Vec<Collision>) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let shapes = Shapes::new(0.0, Isa::detect());
        let mut counts = [0u64; CELLS.len()];
        let mut all = Vec::new();
        for _ in 0..windows {
            generate(
                s,
                setup,
                &shapes,
                &mut rng,
                &mut Vec::new(),
                &mut [GroupMean::default(); CELLS.len()],
                |c| {
                    counts[c.cell] += 1;
                    all.push(*c);
                },
            );
        }
        (counts, all)
    }

    /// The synthetic bank's mug at `fall_height_m`, for grains of `restitution`.
    fn bank_statistics(fall_height_m: f32, restitution: f32) -> CellStatistics {
        CellStatistics::bank(
            synthetic_bank(),
            crate::statistics::bank::Family::Cup(crate::control::choices::CupShape::Mug),
            Shape::Sphere,
            restitution,
            0.5,
            0.002,
            fall_height_m,
            1.0,
        )
    }

    /// With the bank, each cell's count over many windows is Poisson with the mean arrivals
    /// x the bank's rate per arriving grain x the time (thesis eq. 5.6 with the rates of
    /// 7.1's databank): within 4 standard deviations, for every banked cell; settling is
    /// silent (its collisions are in the bank's cells).
    #[test]
    fn bank_counts_follow_the_arrivals_times_the_bank_rate() {
        let mut s = state(3000.0, 0.0);
        s.settle_rate = 400.0;
        let windows = 2000;
        let (counts, _) = run_cells(&s, bank_statistics(0.1, 0.5), windows, 21);
        let lookup = synthetic_bank().lookup(
            crate::statistics::bank::Family::Cup(crate::control::choices::CupShape::Mug),
            0.5,
            0.5,
            0.002,
            0.0,
            0.1,
        );
        let seconds = windows as f64 * 128.0 / 48_000.0;
        for (i, &cell) in CELLS.iter().enumerate() {
            let rate = match lookup.cell(cell) {
                Some(c) => 3000.0 * c.rate as f64,
                None => 0.0,
            };
            let expected = rate * seconds;
            let sigma = expected.sqrt().max(1.0);
            let got = counts[i] as f64;
            assert!(
                (got - expected).abs() < 4.0 * sigma,
                "{cell:?}: {got} collisions, expected {expected:.0} +- {sigma:.0}"
            );
        }
        // the synthetic bank's rates: impact zone 1 + e + fill + h, floor 2 (on the bare
        // floor the run's mean over the floor's fade over the run, `floor_fade_mean`), the
        // rest 0.1
        let cup = crate::derived::cups::Cup::new(crate::control::choices::CupShape::Mug, crate::derived::BANK_CUP_SIZE);
        let bare = 2.0 / crate::statistics::bank::floor_fade_mean(&cup, 0.002);
        assert!((lookup.cells[0].rate - 1.6).abs() < 1e-6 && (lookup.cells[1].rate - bare).abs() < 1e-5 * bare);
    }

    /// With the bank, a cell's collisions come over its grains' lives as its lifetime
    /// profile says: the synthetic bank's impact zone at restitution 0.9 makes half of them
    /// as its grains arrive and half 0.5 to 1 s later. In a steady pour the count is the
    /// arrivals x the rate; as the pour starts (no arrivals before), half of it; after the
    /// arrivals stop, the other half goes on while the grains of 0.5 to 1 s ago bounce, and
    /// none comes from grains 1 to 2 s ago.
    #[test]
    fn bank_counts_follow_the_lifetime_profile() {
        let windows = 2000;
        let seconds = windows as f64 * 128.0 / 48_000.0;
        let rate = 3000.0 * (1.0 + 0.9 + 0.0 + 0.1);
        let impact_zone = CELLS.iter().position(|&c| c == Cell::ImpactZone).unwrap();
        let impact = |s: &PourState, seed: u64| {
            run_cells_at(s, bank_statistics(0.1, 0.9), 0.9, windows, seed).0[impact_zone] as f64
        };
        let steady = state(3000.0, 0.0);
        let mut starting = steady;
        starting.arrived_ago = [0.0; crate::statistics::bank::LIFE_BINS];
        starting.arrived_ago[0] = 3000.0;
        let mut stopped = state(0.0, 0.0);
        stopped.arrived_ago[7] = 3000.0;
        let mut long_stopped = state(0.0, 0.0);
        long_stopped.arrived_ago[8] = 3000.0;
        for (s, share, seed) in [
            (&steady, 1.0, 1),
            (&starting, 0.5, 2),
            (&stopped, 0.5, 3),
            (&long_stopped, 0.0, 4),
        ] {
            let expected = share * rate * seconds;
            let got = impact(s, seed);
            let sigma = expected.sqrt().max(1.0);
            assert!(
                (got - expected).abs() < 4.0 * sigma,
                "{share}: {got} collisions, expected {expected:.0} +- {sigma:.0}"
            );
        }
    }

    /// With the bank, a cell's speeds this window are those of the collisions its arrivals
    /// make then: a cell whose landings (within 5 ms) are in speed bin 12 and whose
    /// collisions 0.5 to 1 s later are in bin 4 draws both in a steady pour, the landings'
    /// as the pour starts, and the slow ones after it stops; with no arrivals at all, its own
    /// speeds.
    #[test]
    fn bank_speeds_follow_the_lifetime_profile() {
        use crate::statistics::bank::LIFE_BINS;
        let mut c = CellLookup {
            rate: 1.0,
            speed: [0.0; SPEED_BINS],
            angle_by_speed: [[0.0; ANGLE_BINS]; SPEED_BINS],
            angle_cdf: [cumulative(&[0.0; ANGLE_BINS]); SPEED_BINS],
            speed_by_life: [[0.0; SPEED_BINS]; LIFE_BINS],
            life: [0.0; LIFE_BINS],
        };
        (c.speed[12], c.speed[4]) = (0.6, 0.4);
        (c.speed_by_life[0][12], c.speed_by_life[7][4]) = (0.6, 0.4);
        (c.life[0], c.life[7]) = (0.6, 0.4);
        let shares = |s: &PourState| {
            let w = lifetime_speeds(&c, s);
            let total: f32 = w.iter().sum();
            w.map(|x| x / total)
        };
        let steady = state(3000.0, 0.0);
        assert_eq!(shares(&steady), c.speed);
        let mut starting = steady;
        starting.arrived_ago = [0.0; LIFE_BINS];
        starting.arrived_ago[0] = 3000.0;
        assert_eq!((shares(&starting)[12], shares(&starting)[4]), (1.0, 0.0));
        let mut stopped = state(0.0, 0.0);
        stopped.arrived_ago[7] = 3000.0;
        assert_eq!((shares(&stopped)[12], shares(&stopped)[4]), (0.0, 1.0));
        assert_eq!(lifetime_speeds(&c, &state(0.0, 0.0)), c.speed);
    }

    /// With the bank, a cell's speeds follow the bank's histogram (in units of the impact
    /// speed): half-way between two restitutions, the impact zone's speeds are the rates'
    /// mixture of bin 10 and bin 12, each sampled log-uniformly within its bin; each one's
    /// normal drawn for its speed: bin 10's (restitution 0.5) within the first angle bin
    /// (pi/16 of vertical), bin 12's (0.9) within the third (pi/8 to 3 pi/16).
    #[test]
    fn bank_speeds_and_angles_follow_the_bank_histograms() {
        let s = state(3000.0, 0.0);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let shapes = Shapes::new(0.0, Isa::detect());
        let setup = setup(bank_statistics(0.3, 0.7), 0.7);
        let (mut n, mut sum) = (0u64, 0.0f64);
        let (mut n_hi, mut lo_v, mut hi_v) = (0u64, f32::INFINITY, 0.0f32);
        for _ in 0..2000 {
            generate(
                &s,
                &setup,
                &shapes,
                &mut rng,
                &mut Vec::new(),
                &mut [GroupMean::default(); CELLS.len()],
                |c| {
                    if CELLS[c.cell] == Cell::ImpactZone {
                        let u = c.v0 / s.impact_speed;
                        n += 1;
                        sum += u as f64;
                        n_hi += u64::from(u > 0.3);
                        (lo_v, hi_v) = (lo_v.min(u), hi_v.max(u));
                        // the angle bins of `synthetic`: 0 for speed bin 10, 2 for bin 12
                        let polar = c.normal[2].clamp(-1.0, 1.0).acos() / (std::f32::consts::PI / 16.0);
                        let bin = if u > 0.3 { 2.0 } else { 0.0 };
                        assert!(polar >= bin - 1e-3 && polar <= bin + 1.0 + 1e-3, "{u}: {:?}", c.normal);
                    }
                },
            );
        }
        let (r5, r9) = (1.0 + 0.5 + 0.3, 1.0 + 0.9 + 0.3);
        let edge = |i: usize| 0.001953125f64 * (2.0f64 / 0.001953125).powf(i as f64 / 16.0);
        // the mean of a log-uniform value on [a, b]: (b - a) / ln(b / a)
        let bin_mean = |i: usize| (edge(i + 1) - edge(i)) / (edge(i + 1) / edge(i)).ln();
        let expected = (r5 * bin_mean(10) + r9 * bin_mean(12)) / (r5 + r9);
        let mean = sum / n as f64;
        assert!((mean / expected - 1.0).abs() < 0.02, "mean {mean} against {expected}");
        // bin 12 (0.35 to 0.5 of the impact speed; bin 10 is 0.18 to 0.25) holds its rate's share
        let share = n_hi as f64 / n as f64;
        assert!((share - r9 / (r5 + r9)).abs() < 0.02, "{share}");
        assert!(
            lo_v >= edge(10) as f32 * 0.999 && hi_v <= edge(13) as f32 * 1.001,
            "{lo_v}..{hi_v}"
        );
    }

    /// With a bank the settling cell is silent (the bank's cells hold every collision of a
    /// grain's life until it rests; the model's settling would count the slow ones twice),
    /// while the model's settles; the surface of a cup that overflows is the model's in both
    /// modes (the bank holds no overflow); the bank's surface rate applies otherwise.
    #[test]
    fn settling_is_the_banks_and_an_overflow_keeps_the_model() {
        let settling = CELLS.iter().position(|&c| c == Cell::Settling).unwrap();
        let surface = CELLS.iter().position(|&c| c == Cell::Surface).unwrap();
        let mut s = state(3000.0, 0.3);
        s.settle_rate = 2000.0;
        let (model, _) = run_cells(&s, CellStatistics::Model, 1500, 8);
        let (bank, _) = run_cells(&s, bank_statistics(0.1, 0.5), 1500, 9);
        let close = |a: u64, b: u64| (a as f64 - b as f64).abs() < 4.0 * ((a + b) as f64).sqrt();
        let expected = 2000.0 * 1500.0 * 128.0 / 48_000.0;
        assert!(
            (model[settling] as f64 - expected).abs() < 4.0 * expected.sqrt(),
            "{}",
            model[settling]
        );
        assert_eq!(bank[settling], 0, "the bank's settling is in its other cells");
        // an overflowing cup: the surface takes the model's overflow
        s.overflow = 2000.0;
        let (model, _) = run_cells(&s, CellStatistics::Model, 1500, 10);
        let (bank, _) = run_cells(&s, bank_statistics(0.1, 0.5), 1500, 11);
        assert!(
            close(model[surface], bank[surface]),
            "{} against {}",
            model[surface],
            bank[surface]
        );
        // not overflowing: the bank's 0.1 per arriving grain (the model's bounce-outs differ)
        s.overflow = 0.0;
        let (bank, _) = run_cells(&s, bank_statistics(0.1, 0.5), 1500, 12);
        let expected = 3000.0 * 0.1 * 1500.0 * 128.0 / 48_000.0;
        assert!(
            (bank[surface] as f64 - expected).abs() < 4.0 * expected.sqrt(),
            "{}",
            bank[surface]
        );
    }

    #[test]
    fn bins_below_counts_the_bins_under_the_target() {
        let h = Histogram::<16>::fill(1.0, 100.0, true, |x| if (10.0..20.0).contains(&x) { 0.0 } else { x });
        let total = h.cdf[15];
        let mut targets = vec![-1.0, 0.0, total, 2.0 * total, f32::NAN, f32::INFINITY];
        targets.extend(h.cdf);
        targets.extend((0..1000).map(|i| i as f32 / 999.0 * total));
        for t in targets {
            let want = h.cdf.iter().filter(|&&c| c < t).count();
            assert_eq!(h.bins_below(t), want, "{t}");
        }
    }

    #[test]
    fn empty_cup_is_mostly_grain_cup_and_filled_is_mostly_grain_grain() {
        let (gg, gc) = count_kinds(&state(2000.0, 0.0));
        assert!(gc > gg, "empty: {gg} grain-grain vs {gc} grain-cup");
        let (gg, gc) = count_kinds(&state(2000.0, 0.5));
        assert!(gg > 5 * gc, "filled: {gg} grain-grain vs {gc} grain-cup");
    }

    /// The model's wall hits over `windows` windows of `s` with the stream at `aim`: wall hits
    /// a grain arriving, their share on the lowest ring and on the aimed sector (sector 0).
    fn wall_hits(aim: f32, s: &PourState, windows: usize, seed: u64) -> (f64, f64, f64) {
        let setup = GeneratorSetup {
            geometry: Geometry { aim, ..geometry() },
            ..setup(CellStatistics::Model, 0.5)
        };
        let (_, all) = run_setup(s, &setup, windows, seed);
        let (mut wall, mut low, mut aimed) = (0u64, 0u64, 0u64);
        for c in &all {
            if let Cell::WallRing(k) = CELLS[c.cell] {
                wall += 1;
                low += u64::from(k == 0);
                aimed += u64::from(c.bus == wall_bus(k, 0));
            }
        }
        let grains = s.arrivals_end as f64 * windows as f64 * setup.window_s as f64;
        (
            wall as f64 / grains,
            low as f64 / wall as f64,
            aimed as f64 / wall as f64,
        )
    }

    #[test]
    fn a_stream_aimed_at_the_wall_of_an_empty_cup_hits_its_wall_more_and_lower() {
        // sugar landing on the bare floor of a mug at 2.5 m/s (from 22 cm over the floor)
        let s = PourState {
            impact_speed: 2.5,
            ..state(5000.0, 0.0)
        };
        let (centre, at_wall) = (wall_hits(0.0, &s, 2000, 4), wall_hits(1.0, &s, 2000, 4));
        eprintln!("wall hits a grain, share on ring 0, on the aimed sector: aim 0 {centre:.3?}, aim 1 {at_wall:.3?}");
        // on the axis, about one grain in five reaches the wall (`rebound`; the databank's
        // empty mug at 2.46 m/s: 0.21), nearly all on the lowest ring, the two sectors alike
        assert!((0.1..0.4).contains(&centre.0), "aim 0: {centre:?}");
        assert!(centre.1 > 0.8 && (centre.2 - 0.5).abs() < 0.05, "aim 0: {centre:?}");
        // at the wall, several times as many (the simulated pour: 5.2 times), on the near side
        assert!(at_wall.0 > 3.0 * centre.0, "{centre:?} -> {at_wall:?}");
        assert!(at_wall.2 > 0.7, "aim 1: {at_wall:?}");
    }

    #[test]
    fn a_stream_aimed_at_the_wall_grazes_the_sector_it_is_aimed_at() {
        // a part-filled mug: the share of wall hits on the aimed sector (sector 0, `Heap`)
        let s = state(2000.0, 0.3);
        let (centre, at_wall) = (wall_hits(0.0, &s, 1600, 3).2, wall_hits(1.0, &s, 1600, 3).2);
        assert!((centre - 0.5).abs() < 0.05, "aim 0: {centre}");
        assert!(at_wall > 0.6, "aim 1: {at_wall} of the wall hits on the aimed sector");
    }

    #[test]
    fn counts_follow_the_arrival_rate() {
        let (a, b) = count_kinds(&state(1000.0, 0.3));
        let (c, d) = count_kinds(&state(4000.0, 0.3));
        let ratio = (c + d) as f64 / (a + b) as f64;
        assert!((ratio - 4.0).abs() < 0.4, "{ratio}");
    }

    #[test]
    fn quiet_dense_cells_get_smaller_budgets_and_keep_their_energy() {
        // a covered floor: the impact zone is the loudest grain-grain cell, the stream
        // (5 % of the impact speed) is about 30 dB below it, and both are far denser than
        // the budget
        let mut s = state(200_000.0, 0.3);
        s.settle_rate = 0.0;
        let budgeted = |max_per_cell| GeneratorSetup {
            max_per_cell,
            ..setup(CellStatistics::Model, 0.5)
        };
        let shapes = Shapes::new(0.0, Isa::detect());
        // per cell: draws and energy (sum of weight^2 v0^2) over many windows
        let run = |max_per_cell| {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
            let mut draws = [0u64; CELLS.len()];
            let mut energy = [0.0f64; CELLS.len()];
            let mut out = Vec::with_capacity(CELLS.len() * MAX_RENDERED_PER_CELL as usize);
            for _ in 0..400 {
                out.clear();
                let mut add = |c: &Collision| {
                    draws[c.cell] += 1;
                    energy[c.cell] += (c.weight as f64 * c.v0 as f64).powi(2);
                };
                generate(
                    &s,
                    &budgeted(max_per_cell),
                    &shapes,
                    &mut rng,
                    &mut out,
                    &mut [GroupMean::default(); CELLS.len()],
                    &mut add,
                );
                out.iter().for_each(add);
            }
            (draws, energy)
        };
        let (budget, every) = (run(32), run(u32::MAX));
        let impact = CELLS.iter().position(|&c| c == Cell::ImpactZone).unwrap();
        let stream = CELLS.iter().position(|&c| c == Cell::Stream).unwrap();
        assert_eq!(budget.0[impact], 400 * 32, "the loudest cell keeps the whole budget");
        assert_eq!(budget.0[stream], 400 * 4, "a masked cell gets the smallest share");
        for cell in [impact, stream] {
            let ratio = budget.1[cell] / every.1[cell];
            assert!((ratio - 1.0).abs() < 0.05, "cell {cell}: energy ratio {ratio}");
        }
    }

    /// Through the bed, one draw in `every` pushes at sqrt(every) times the amplitude: the
    /// pushes' power, the sum of their weights squared, is the draws' count, window for
    /// window on average (`Bed::start_cell`'s random first push). With 11 draws a window and
    /// the bed's 8 (`every` 2), pushing from the first draw pushed ceil(n / 2) of n, 9 % too
    /// much power for an odd n.
    #[test]
    fn the_pushes_through_the_bed_keep_the_draws_power() {
        let mut s = state(200_000.0, 0.3);
        s.settle_rate = 0.0;
        let set = GeneratorSetup {
            max_per_cell: 11,
            ..setup(CellStatistics::Model, 0.5)
        };
        let shapes = Shapes::new(0.0, Isa::detect());
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let impact = CELLS.iter().position(|&c| c == Cell::ImpactZone).unwrap();
        let (mut draws, mut power, mut everies) = (0u64, 0.0f64, std::collections::BTreeSet::new());
        let mut out = Vec::with_capacity(CELLS.len() * MAX_RENDERED_PER_CELL as usize);
        for _ in 0..2000 {
            out.clear();
            let mut add = |c: &Collision| {
                if c.cell == impact {
                    draws += 1;
                    power += (c.bed_weight as f64).powi(2);
                    if c.bed_weight > 0.0 {
                        everies.insert((c.bed_weight * c.bed_weight).round() as u64);
                    }
                }
            };
            generate(
                &s,
                &set,
                &shapes,
                &mut rng,
                &mut out,
                &mut [GroupMean::default(); CELLS.len()],
                &mut add,
            );
            out.iter().for_each(&mut add);
        }
        assert_eq!(everies.into_iter().collect::<Vec<_>>(), vec![2], "one push in two");
        // 11 draws a window, an odd count: the old first-draw rule gave 12 / 11
        assert!(draws > 15_000, "{draws} draws");
        let ratio = power / draws as f64;
        assert!((ratio - 1.0).abs() < 0.015, "the pushes' power over the draws: {ratio}");
    }

    /// One grouped cell's windows as `floor_windows` reads them: the draws' energy (sum of
    /// weight^2 v0^2) and push (sum of weight v0), the mean push they say they carry
    /// (`GroupMean::carried`, collisions) and its speed, the draws, their speeds, and the
    /// collisions the window holds (carried + missing; 0 when nothing is grouped).
    struct FloorWindow {
        energy: f64,
        push: f64,
        carried: f64,
        mean_v: f64,
        draws: u64,
        speeds: Vec<f64>,
        count: f64,
    }

    /// 600 windows of an empty cup's floor under a dense stream (a direct cell), drawn with
    /// `max_per_cell` and the audible cut at `cull_share` of the energy.
    fn floor_windows(max_per_cell: u32, cull_share: f32) -> Vec<FloorWindow> {
        floor_windows_of(CellStatistics::Model, max_per_cell, cull_share)
    }

    /// The synthetic bank (`bank_statistics`) with its cup floor's speeds over four bins,
    /// rising to the fastest and ending there (bins 5 to 8: 300, 600, 1,000 and 2,000), so
    /// that its bins are tilted (`Tilt`).
    fn sloped_floor_bank() -> CellStatistics {
        static BANK: std::sync::OnceLock<Bank> = std::sync::OnceLock::new();
        CellStatistics::bank(
            BANK.get_or_init(sloped_floor_bank_file),
            crate::statistics::bank::Family::Cup(crate::control::choices::CupShape::Mug),
            Shape::Sphere,
            0.5,
            0.5,
            0.002,
            0.1,
            1.0,
        )
    }

    fn sloped_floor_bank_file() -> Bank {
        use crate::statistics::bank::{ANGLE_BINS as A, LIFE_BINS as L, SPEED_BINS as S};
        let mut v = crate::statistics::bank::tests::synthetic();
        let bins = [(5usize, 300.0f64), (6, 600.0), (7, 1000.0), (8, 2000.0)];
        for e in v["entries"].as_array_mut().unwrap() {
            let c = &mut e["cells"]["cup_floor"];
            if c["rate"].as_f64().unwrap() <= 0.0 {
                continue;
            }
            let (mut speed, mut angle, mut life) = (vec![0.0; S], vec![vec![0.0; A]; S], vec![vec![0.0; S]; L]);
            for &(i, n) in &bins {
                (speed[i], angle[i][0], life[0][i]) = (n, n, n);
            }
            c["count"] = serde_json::json!(bins.iter().map(|b| b.1).sum::<f64>());
            c["speed"] = serde_json::json!(speed);
            c["angle_by_speed"] = serde_json::json!(angle);
            c["speed_by_life"] = serde_json::json!(life);
        }
        Bank::parse(&v.to_string()).unwrap()
    }

    /// `floor_windows` drawing from `statistics`.
    fn floor_windows_of(statistics: CellStatistics, max_per_cell: u32, cull_share: f32) -> Vec<FloorWindow> {
        let s = state(200_000.0, 0.0);
        let floor = CELLS.iter().position(|&c| c == Cell::CupFloor).unwrap();
        let shapes = Shapes::new(cull_share, Isa::detect());
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let setup = GeneratorSetup {
            max_per_cell,
            ..setup(statistics, 0.5)
        };
        let mut out = Vec::with_capacity(CELLS.len() * MAX_RENDERED_PER_CELL as usize);
        let mut windows = Vec::new();
        for _ in 0..600 {
            out.clear();
            let mut means = [GroupMean::default(); CELLS.len()];
            // beyond `out`'s room the collisions come to the closure
            let mut beyond = Vec::new();
            generate(&s, &setup, &shapes, &mut rng, &mut out, &mut means, |c| beyond.push(*c));
            let m = means[floor];
            let mut w = FloorWindow {
                energy: 0.0,
                push: 0.0,
                carried: m.carried as f64,
                mean_v: m.mean_v as f64,
                draws: 0,
                speeds: Vec::new(),
                count: (m.carried + m.missing) as f64,
            };
            for c in out.iter().chain(&beyond).filter(|c| c.cell == floor) {
                w.energy += (c.weight as f64 * c.v0 as f64).powi(2);
                w.push += c.weight as f64 * c.v0 as f64;
                w.draws += 1;
                w.speeds.push(c.v0 as f64);
            }
            windows.push(w);
        }
        windows
    }

    /// A grouped cell's draws taken by their energy (`EnergyDraw`): over many windows they
    /// carry the energy (sum of weight^2 v0^2) of every collision and the mean push that
    /// `GroupMean::carried` says (sum of weight v0 against carried x mean speed), and a
    /// window's energy fluctuates about as every collision's does, where plain draws of the
    /// speed, sqrt(group) each, fluctuate with the few fastest (the crest factors of
    /// docs/performance.md).
    #[test]
    fn grouped_draws_by_energy_keep_energy_and_mean_push_and_steady_the_windows() {
        let run = |max_per_cell| floor_windows(max_per_cell, 0.0);
        let (grouped, every) = (run(16), run(u32::MAX));
        let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
        let cv = |x: &[f64]| {
            let m = mean(x);
            (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / x.len() as f64).sqrt() / m
        };
        let energy = |w: &[FloorWindow]| w.iter().map(|w| w.energy).collect::<Vec<_>>();
        let (eg, ee) = (energy(&grouped), energy(&every));
        assert!(
            grouped.iter().all(|w| w.draws == 16),
            "the floor is grouped in every window"
        );
        let ratio = mean(&eg) / mean(&ee);
        assert!((ratio - 1.0).abs() < 0.03, "energy: grouped / every collision {ratio}");
        let (pushed, carried): (f64, f64) = grouped
            .iter()
            .map(|w| (w.push, w.carried * w.mean_v))
            .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
        assert!(
            (pushed / carried - 1.0).abs() < 0.03,
            "mean push: drawn {pushed} against carried {carried}"
        );
        // plain draws: 16 speeds from the same distribution, each sqrt(n / 16) -> a window's
        // energy's relative spread sqrt(Var(v^2) / (16 E[v^2]^2)) on top of the count's
        let v2: Vec<f64> = every.iter().flat_map(|w| w.speeds.iter().map(|v| v * v)).collect();
        let plain = (cv(&v2).powi(2) / 16.0 + cv(&ee).powi(2)).sqrt();
        let (cg, ce) = (cv(&eg), cv(&ee));
        assert!(
            cg < 1.5 * ce,
            "window energy spread: grouped {cg:.3}, every collision {ce:.3}"
        );
        assert!(
            plain > 2.0 * cg,
            "plain draws would spread {plain:.3}, the test could not tell"
        );
    }

    /// With the audible cut, the draws by energy and the collisions lose different shares of
    /// their push (the slow draws are few, the slow collisions many, and both push nothing
    /// when culled): the push a draw says it carries (`EnergyShape::carry`) is the push per
    /// collision of every collision, culled ones counted, so that the mean push grouping
    /// adds back makes up the collisions' own. A cut at a fifth of the energy, far above the
    /// engine's (`CULL_ENERGY_SHARE`), makes the difference plain: without the cut in the
    /// carry the draws' push per unit came out 1.09 times every collision's.
    #[test]
    fn the_mean_push_grouping_carries_is_every_collisions_above_the_audible_cut() {
        let ratio = carried_push_ratio(&floor_windows(16, 0.2), &floor_windows(u32::MAX, 0.2));
        assert!(
            (ratio - 1.0).abs() < 0.03,
            "push per unit carried against per collision: {ratio}"
        );
    }

    /// The grouped windows' push per unit carried over every collision's push per collision
    /// (every collision's counted by the grouped run's: the same Poisson counts' mean).
    fn carried_push_ratio(grouped: &[FloorWindow], every: &[FloorWindow]) -> f64 {
        let sum = |w: &[FloorWindow], f: &dyn Fn(&FloorWindow) -> f64| w.iter().map(f).sum::<f64>();
        let per_collision = sum(every, &|w| w.push) / sum(grouped, &|w| w.count);
        let per_unit = sum(grouped, &|w| w.push) / sum(grouped, &|w| w.carried);
        per_unit / per_collision
    }

    /// A banked cell's tilted bins (`Tilt`) group as the model's do: its draws by energy
    /// keep every collision's energy and, with a cut at a fifth of the energy, the mean push
    /// they say they carry is every collision's above the cut. With the bins' moments taken
    /// at their centres (the draws tilted, `tilted_means` not used), the draws pushed 0.90
    /// of the push they said they carried; with only the draws' weights at the centres, their
    /// energy came out 0.84 of every collision's.
    #[test]
    fn a_banked_cells_tilted_bins_group_with_their_energy_and_push() {
        let run = |max, cull| floor_windows_of(sloped_floor_bank(), max, cull);
        let (grouped, every) = (run(16, 0.0), run(u32::MAX, 0.0));
        assert!(grouped.iter().all(|w| w.draws == 16));
        let sum = |w: &[FloorWindow], f: &dyn Fn(&FloorWindow) -> f64| w.iter().map(f).sum::<f64>();
        let energy = sum(&grouped, &|w| w.energy) / sum(&every, &|w| w.energy);
        assert!(
            (energy - 1.0).abs() < 0.03,
            "energy: grouped / every collision {energy}"
        );
        let push = sum(&grouped, &|w| w.push) / sum(&grouped, &|w| w.carried * w.mean_v);
        assert!((push - 1.0).abs() < 0.03, "mean push: drawn / carried {push}");
        let ratio = carried_push_ratio(&run(16, 0.2), &run(u32::MAX, 0.2));
        assert!(
            (ratio - 1.0).abs() < 0.03,
            "push per unit carried against per collision: {ratio}"
        );
    }

    #[test]
    fn masked_budget_scales_with_the_energy_ratio_squared() {
        assert_eq!(masked_budget(32, 1.0), 32);
        assert_eq!(masked_budget(32, MASKING_RATIO), 32);
        assert_eq!(masked_budget(32, 0.5 * MASKING_RATIO), 8);
        assert_eq!(masked_budget(32, 1e-6), 4);
        assert_eq!(masked_budget(32, f32::NAN), 32);
        assert_eq!(masked_budget(1, 1e-6), 1);
        assert_eq!(masked_budget(u32::MAX, 1e-6), u32::MAX);
    }

    /// A tilted histogram (the bank's speeds, `Tilt`) keeps each bin's mass and spreads
    /// its draws within the bin as exp(lambda t): where the bin above is empty the draws
    /// crowd its lower edge (a pour's landings), and the moments the grouping and the mean
    /// push take (`tilted_means`, `bin_moments`, `mean_above`) are the draws' own.
    #[test]
    fn a_tilted_histograms_draws_follow_its_bins_slopes() {
        let mut m = [0.0f32; 16];
        for (i, w) in [
            (9, 200.0),
            (10, 300.0),
            (11, 400.0),
            (12, 600.0),
            (13, 500.0),
            (14, 700.0),
        ] {
            m[i] = w;
        }
        let h = Histogram::<16>::from_weights(1.0 / 512.0, 2.0, true, &m).tilted();
        let even = Histogram::<16>::from_weights(1.0 / 512.0, 2.0, true, &m);
        let lambda = bin_tilts(&m);
        assert!(lambda[14] < -3.0 && lambda[9] > 0.0, "{lambda:?}");
        let (means, squares) = h.tilted_means().unwrap();
        // the stored multipliers are the closed form's (`tilted_mean_power`, f64)
        let w = (1024.0f64).ln() / 16.0;
        for i in 0..16 {
            let lo = (1.0 / 512.0) * (w * i as f64).exp();
            for (got, p) in [(means[i], 1.0), (squares[i], 2.0)] {
                let want = tilted_mean_power(lo, w, lambda[i] as f64, p);
                assert!(
                    (got as f64 / want - 1.0).abs() < 1e-4,
                    "bin {i}, p {p}: {got} against {want}"
                );
            }
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let n = 400_000;
        let (mut count, mut sum, mut sum2, mut frac) = ([0u32; 16], [0.0f64; 16], [0.0f64; 16], [0.0f64; 16]);
        let (mut all2, mut all2_even) = (0.0f64, 0.0f64);
        for _ in 0..n {
            let u = uniform_pair(&mut rng);
            let f = h.sample_fraction(u);
            let i = ((f * 16.0) as usize).min(15);
            let x = h.at(f) as f64;
            count[i] += 1;
            sum[i] += x;
            sum2[i] += x * x;
            frac[i] += (f * 16.0 - i as f32) as f64;
            all2 += x * x;
            all2_even += (even.sample(u) as f64).powi(2);
        }
        let total: f32 = m.iter().sum();
        for i in 9..=14 {
            let c = count[i] as f64;
            assert!((c / n as f64 - (m[i] / total) as f64).abs() < 0.003, "bin {i}: {c}");
            assert!((sum[i] / c / means[i] as f64 - 1.0).abs() < 0.005, "bin {i} mean");
            assert!((sum2[i] / c / squares[i] as f64 - 1.0).abs() < 0.01, "bin {i} square");
        }
        // the top bin's draws sit low in it; the middle bin with rising and falling
        // neighbours nearly evenly
        assert!(frac[14] / (count[14] as f64) < 0.35, "{}", frac[14] / count[14] as f64);
        assert!((frac[13] / (count[13] as f64) - 0.5).abs() < 0.05);
        let second = h.second_moment() as f64;
        assert!((all2 / n as f64 / second - 1.0).abs() < 0.01, "E[x^2] {second}");
        assert!(all2 < 0.9 * all2_even, "tilted {all2}, even {all2_even}");
        // the mean above no cut is the draws' mean
        let mean: f64 = sum.iter().sum::<f64>() / n as f64;
        assert!((mean / h.mean_above(0.0) as f64 - 1.0).abs() < 0.005);
    }

    #[test]
    fn histogram_sampling_respects_bounds() {
        let h = Histogram::<16>::fill(0.01, 2.0, true, lognormal(0.3, 0.5));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for _ in 0..10_000 {
            let x = h.sample(uniform_pair(&mut rng));
            assert!((0.01..=2.0).contains(&x));
        }
    }

    /// The window's collision times follow the arrival rate's straight line exactly, at any
    /// resolution: a histogram of 8 bins would be a staircase 16 samples a step (its hump
    /// near 3 kHz, `Ramp`). Evenly spaced uniform numbers give the exact shares of 64 bins
    /// to within one count; the staircase misses them by up to 5 % of the mean share.
    #[test]
    fn collision_times_follow_the_rate_line_not_a_staircase() {
        let ramp = Ramp::new(1.0, 3.0);
        let n = 64_000;
        let bins = 64;
        let mut counts = vec![0u32; bins];
        for k in 0..n {
            let x = ramp.sample((k as f32 + 0.5) / n as f32);
            assert!((0.0..1.0).contains(&x), "{x}");
            counts[(x * bins as f32) as usize] += 1;
        }
        for (i, &c) in counts.iter().enumerate() {
            let exact = n as f32 * (ramp.cdf((i + 1) as f32 / bins as f32) - ramp.cdf(i as f32 / bins as f32));
            assert!((c as f32 - exact).abs() <= 1.0, "bin {i}: {c} against {exact}");
        }
        // the density is the line a + (b - a) x over its mean, (a + b) / 2
        let density = |x: f32| (1.0 + 2.0 * x) / 2.0;
        let share = |i: usize| counts[i] as f32 * bins as f32 / n as f32;
        assert!((share(0) - density(0.5 / 64.0)).abs() < 0.01, "{}", share(0));
        assert!((share(63) - density(63.5 / 64.0)).abs() < 0.01, "{}", share(63));
        // the inverse of its cumulative share, also for a flat and a near-flat line
        for ramp in [
            ramp,
            Ramp::FLAT,
            Ramp::new(1.0, 1.0 + 1e-6),
            Ramp::new(0.0, 5.0),
            Ramp::new(f32::NAN, 2.0),
        ] {
            for u in [0.0, 0.1, 0.5, 0.9, 0.999] {
                let x = ramp.sample(u);
                assert!((ramp.cdf(x) - u).abs() < 1e-5, "{ramp:?} {u} {x}");
            }
        }
    }
}

//! The window/cell grid and the collision record: the vocabulary every stage after the
//! settings speaks (thesis 5.3: a collision is a time, a location, a normal and a velocity;
//! 5.5: time is cut into windows and the scene into cells). The generator (`generator`)
//! draws `Collision`s per window and cell; gestures (`pour::gesture`) and logged contacts
//! (`statistics::logged`, `control::events`) make them too; the renderer
//! (`impact::collision`, `impact::batch`) sounds them.

/// Generator window length, samples.
pub const WINDOW: usize = 128;

/// Bins of a cell's speed histogram (log-spaced) and normal-angle histogram (linear, 0..pi/2):
/// the model's and the bank's (`bank`).
pub const SPEED_BINS: usize = 16;
pub const ANGLE_BINS: usize = 8;

/// A histogram's cumulative sums, bin by bin (a negative weight as 0), or 1, 2, .. N where
/// its weights sum to nothing (drawn evenly): what the generator draws a bin from
/// (`generator::Histogram`), and a bank lookup's angle rows summed once
/// (`CellLookup::angle_cdf`).
pub fn cumulative<const N: usize>(weights: &[f32; N]) -> [f32; N] {
    let mut cdf = [0.0; N];
    let mut acc = 0.0;
    for (c, &w) in cdf.iter_mut().zip(weights) {
        acc += w.max(0.0);
        *c = acc;
    }
    if acc <= 0.0 {
        for (i, c) in cdf.iter_mut().enumerate() {
            *c = (i + 1) as f32;
        }
    }
    cdf
}

/// What collided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollisionKind {
    GrainGrain,
    GrainCup,
    /// A grain on the surface (the ground): spills from the cup, or a pour onto the
    /// surface (`Geometry::open`).
    GrainSurface,
}

/// One collision (thesis 5.3: time, location, normal, velocity).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Collision {
    /// Time within the window, samples (0..WINDOW).
    pub time: f32,
    pub kind: CollisionKind,
    /// Cell index (see `Cell`).
    pub cell: usize,
    /// Cup force bus: the surface a grain–cup collision hits, or the one a collision on the
    /// pile pushes on through the grain bed (`bed_m`).
    pub bus: usize,
    /// Contact point, m (origin at the centre of the cup floor, z up).
    pub position: [f32; 3],
    /// Unit normal: the direction of the (first) grain's acceleration.
    pub normal: [f32; 3],
    /// Normal impact speed, m/s.
    pub v0: f32,
    /// `ln v0` (v0 in m/s), known to the generator without a logarithm: it samples speeds
    /// on a log scale. The renderer needs it for the contact duration (PAN eq. 7).
    pub ln_v0: f32,
    /// Amplitude weight: 1, or for a draw that stands for a group of collisions the square
    /// root of the collisions it stands for: sqrt(group size), or by its speed bin when
    /// drawn by energy (`EnergyDraw`: sqrt(k m2) / c_i, below 1 for the fastest bins).
    pub weight: f32,
    /// Path through the grain bed, m, from a grain–grain contact on or in the pile to the
    /// cup surface it pushes on (`bus`): the shorter of the way down to the floor and across
    /// to the wall (`bed_path`). 0 for a collision with no bed beneath it (grain–cup hits,
    /// the falling stream): its force reaches the cup directly or not at all.
    pub bed_m: f32,
    /// The pulses through the bed this collision's stands for, as an amplitude: a cell's
    /// pushes on the cup are rendered as energy-preserving groups (`BED_PULSES_PER_CELL_PER_S`),
    /// so one collision in k writes its pulse, times sqrt(k), and the others write none (0).
    pub bed_weight: f32,
    /// A draw that stands for a group of collisions (`generator::RENDERED_PER_CELL_PER_S`):
    /// its spheres' pulses are written `collision::GROUP_COPIES` times, at times spread over
    /// the window (`collision::copies`). False for a collision rendered as itself.
    pub spread: bool,
}

/// The cells of the pour scene.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// Where the stream lands on the pile (grain–grain).
    ImpactZone,
    /// The exposed cup floor (grain–cup).
    CupFloor,
    /// Wall ring 0 (low) .. 2 (high) (grain–cup, rebounds).
    WallRing(usize),
    /// The pile surface around the impact zone (grain–grain, cascades).
    PileSurface,
    /// Inside the falling stream (grain–grain, small relative speeds).
    Stream,
    /// The settling pile after arrivals (grain–grain, slow).
    Settling,
    /// The surface (grain–surface): beside the cup, where what bounces out or overflows
    /// lands; or, in a pour onto the surface, the bare ground at the landing point and
    /// around the heap's foot.
    Surface,
}

impl Cell {
    pub fn kind(self) -> CollisionKind {
        match self {
            Cell::CupFloor | Cell::WallRing(_) => CollisionKind::GrainCup,
            Cell::Surface => CollisionKind::GrainSurface,
            _ => CollisionKind::GrainGrain,
        }
    }
}

pub const CELLS: [Cell; 9] = [
    Cell::ImpactZone,
    Cell::CupFloor,
    Cell::WallRing(0),
    Cell::WallRing(1),
    Cell::WallRing(2),
    Cell::PileSurface,
    Cell::Stream,
    Cell::Settling,
    Cell::Surface,
];

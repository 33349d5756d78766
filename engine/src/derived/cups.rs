//! Cup models from the offline finite-element modal analysis (`cargo xtask modal`,
//! crate `granary-fem`; thesis = seed 000, ch. 3).
//!
//! Each shape's `assets/cups/<shape>.json` holds its geometry (size 1), the reference
//! material the modes were computed with, and for each of its lowest elastic modes the
//! frequency, the mass-normalised shape's normal displacement where grains hit (floor,
//! wall rings, rim: the van den Doel gains `A_{n,k}` of thesis 3.1), the peak normal
//! displacement, the radiating area and the azimuthal order and orientation. The files are
//! compiled in (`include_str!`) and parsed once, outside the audio thread
//! ([`library`] is called by `Engine::new`); the plugin does not link the FEM code.
//!
//! Scaling (linear elasticity, same Poisson's ratio): `K` scales with `E L`, `M` with
//! `rho L^3`, so the frequencies of a cup of material (E, rho) and size s are
//! `f = f_ref sqrt((E / rho) / (E_ref / rho_ref)) / s`, and a mass-normalised shape scales
//! with `1 / sqrt(rho L^3)`.

use crate::base::fastmath;
use crate::base::materials::CupMaterial;
use crate::control::choices::CupShape;
use crate::control::settings::Settings;
use serde::Deserialize;
use std::sync::OnceLock;

/// Wall rings of the assets (bottom to top; equal heights of the inner wall).
pub const RINGS: usize = 3;
/// Wall sectors of the assets (the azimuths where the sector shapes are sampled).
pub const SECTORS: usize = 2;
/// Most points of an inner profile (fixed capacity of `Cup`; `parse` checks it).
pub const MAX_PROFILE: usize = 8;

impl CupShape {
    fn json(self) -> &'static str {
        match self {
            CupShape::Mug => include_str!("../../../assets/cups/mug.json"),
            CupShape::Tumbler => include_str!("../../../assets/cups/tumbler.json"),
            CupShape::Bowl => include_str!("../../../assets/cups/bowl.json"),
            CupShape::Jar => include_str!("../../../assets/cups/jar.json"),
            CupShape::MetalCup => include_str!("../../../assets/cups/metal_cup.json"),
        }
    }
}

/// Gains of a mode where grains hit: RMS normal displacement of the mass-normalised shape
/// (1/sqrt(kg)) over the floor (within 0.9 of its radius), each wall ring and the rim.
#[derive(Debug, Clone, Deserialize)]
pub struct Gains {
    pub floor: f64,
    pub wall: [f64; RINGS],
    pub rim: f64,
}

/// One mode of an asset, for the reference material and size 1.
#[derive(Debug, Clone, Deserialize)]
pub struct ModeRecord {
    pub freq_hz: f64,
    /// Azimuthal order n (nodal diameters).
    pub order: usize,
    pub gains: Gains,
    /// Signed normal displacement at each wall ring's mid-height and each sector azimuth.
    pub sectors: [[f64; 2]; RINGS],
    /// Largest surface-normal displacement, 1/sqrt(kg) (modal mass 1 / peak^2).
    pub peak: f64,
    /// Outer area times the mean square of the peak-normalised shape, m^2.
    pub radiating_area_m2: f64,
    /// The outer surface moves as cos(order (theta - orientation)).
    pub orientation_rad: f64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Areas {
    pub floor: f64,
    pub wall: [f64; RINGS],
    pub rim: f64,
    pub outer: f64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RefMaterial {
    pub name: String,
    pub youngs_pa: f64,
    pub poisson: f64,
    pub density: f64,
}

/// A cup model (asset file), size 1, reference material.
#[derive(Debug, Clone, Deserialize)]
pub struct CupModel {
    pub format: u32,
    pub shape: String,
    pub name: String,
    pub reference_material: RefMaterial,
    pub inner_profile_m: Vec<[f64; 2]>,
    pub wall_m: f64,
    pub floor_m: f64,
    pub height_m: f64,
    pub rim_radius_m: f64,
    pub floor_radius_m: f64,
    pub mass_kg: f64,
    pub areas_m2: Areas,
    pub sector_azimuths_rad: [f64; SECTORS],
    pub mesh_nodes: usize,
    pub mesh_elements: usize,
    pub modes: Vec<ModeRecord>,
}

impl CupModel {
    /// `sqrt((E / rho) / (E_ref / rho_ref))`: the frequency ratio for another material.
    pub fn speed_ratio(&self, youngs_pa: f64, density: f64) -> f64 {
        let r = &self.reference_material;
        ((youngs_pa / density) / (r.youngs_pa / r.density)).sqrt()
    }
}

/// Parses one asset; `Err` names what is wrong.
pub fn parse(json: &str) -> Result<CupModel, String> {
    let m: CupModel = serde_json::from_str(json).map_err(|e| e.to_string())?;
    if m.format != 1 {
        return Err(format!("{}: unknown format {}", m.shape, m.format));
    }
    let positive = [
        m.reference_material.youngs_pa,
        m.reference_material.density,
        m.height_m,
        m.rim_radius_m,
        m.mass_kg,
        m.wall_m,
        m.areas_m2.outer,
    ];
    if positive.iter().any(|x| !(x.is_finite() && *x > 0.0)) || m.modes.is_empty() {
        return Err(format!("{}: geometry, material or modes missing", m.shape));
    }
    let p = &m.inner_profile_m;
    let profile_ok = (2..=MAX_PROFILE).contains(&p.len())
        && p[0] == [0.0, m.floor_m]
        && p.iter().all(|q| q[0] >= 0.0 && q[0].is_finite() && q[1].is_finite())
        && p.windows(2).all(|w| w[1][1] >= w[0][1])
        && p[1][1] == m.floor_m
        && p[1][0] > 0.0
        && p[p.len() - 1] == [m.rim_radius_m, m.height_m]
        && p[1][0] == m.floor_radius_m
        && m.height_m > m.floor_m;
    if !profile_ok {
        return Err(format!(
            "{}: the inner profile must run from the floor's centre (0, floor_m) along the floor to \
             (floor_radius_m, floor_m), then up to the rim (rim_radius_m, height_m), z never falling, \
             at most {MAX_PROFILE} points",
            m.shape
        ));
    }
    if m.modes
        .iter()
        .any(|md| !(md.freq_hz > 0.0 && md.peak > 0.0 && md.radiating_area_m2.is_finite()))
    {
        return Err(format!("{}: a mode has no frequency or shape", m.shape));
    }
    Ok(m)
}

static LIBRARY: OnceLock<Vec<CupModel>> = OnceLock::new();

/// All cup models, parsed on first use (call it outside the audio thread first).
pub fn library() -> &'static [CupModel] {
    LIBRARY.get_or_init(|| {
        CupShape::ALL
            .iter()
            .map(|s| match parse(s.json()) {
                Ok(m) => m,
                // the assets are compiled in and checked by the tests: a failure here is a
                // broken build, not bad input
                Err(e) => panic!("assets/cups/{}.json is invalid: {e}", s.id()),
            })
            .collect()
    })
}

pub fn model(shape: CupShape) -> &'static CupModel {
    let i = CupShape::ALL.iter().position(|s| *s == shape).unwrap_or(0);
    &library()[i]
}

/// One cup as every part of the engine sees it: the asset's geometry (`CupModel`) scaled by
/// `cup_size`, in the engine's frame: origin at the centre of the inner floor, z up, m.
/// The scene (fill level, fall, pile volume), the generator (where grains hit), the
/// panning, the listener, the modes (`modal::CupState`) and the editor's drawing all read
/// this one struct; the modes' records stay in the asset (`Cup::model`). Fixed size and
/// `Copy`: built at a window boundary without allocating.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cup {
    pub shape: CupShape,
    /// The `cup_size` factor every length of the asset is multiplied by.
    pub size: f32,
    /// Inner profile (r, z) from the floor's centre (0, 0) along the floor to
    /// (`floor_radius`, 0), then up the wall to the rim (`rim_radius`, `depth`); z never
    /// falls. The first `profile_len` points are used.
    profile: [[f32; 2]; MAX_PROFILE],
    profile_len: usize,
    /// Inner radius at the rim, m.
    pub rim_radius: f32,
    /// Inner radius of the flat floor, m (where the wall starts).
    pub floor_radius: f32,
    /// Inner depth, floor to rim, m.
    pub depth: f32,
    /// Thickness of the floor and of the wall, m (the outer bottom is at z = -floor).
    pub floor_thickness: f32,
    pub wall_thickness: f32,
    /// Heights of the wall rings' edges above the floor, m: ring k spans
    /// `ring_edges[k]..ring_edges[k + 1]` (the asset's rings, equal heights of the wall).
    pub ring_edges: [f32; RINGS + 1],
    /// Azimuths of the wall sectors, rad: the asset samples each mode's shape there
    /// (`ModeRecord::sectors`), so the generator centres its wall hits there.
    pub sector_azimuths: [f32; SECTORS],
    /// Unit vectors (x, y) towards the sectors' azimuths: (cos, sin) of `sector_azimuths`.
    pub sector_dirs: [[f32; 2]; SECTORS],
    /// What the cup holds up to its rim, m^3 (`volume_below(depth)`).
    pub volume_m3: f32,
}

impl Cup {
    /// The cup of `shape` at size `size` (a size that is not a positive number counts as 1).
    pub fn new(shape: CupShape, size: f32) -> Cup {
        let m = model(shape);
        let size = if size.is_finite() && size > 0.0 { size } else { 1.0 };
        let s = size as f64;
        let z0 = m.floor_m;
        let mut profile = [[0.0f32; 2]; MAX_PROFILE];
        for (out, p) in profile.iter_mut().zip(&m.inner_profile_m) {
            *out = [(p[0] * s) as f32, ((p[1] - z0) * s) as f32];
        }
        let depth = ((m.height_m - z0) * s) as f32;
        let sector_azimuths = m.sector_azimuths_rad.map(|a| a as f32);
        let mut cup = Cup {
            shape,
            size,
            profile,
            profile_len: m.inner_profile_m.len().min(MAX_PROFILE),
            rim_radius: (m.rim_radius_m * s) as f32,
            floor_radius: (m.floor_radius_m * s) as f32,
            depth,
            floor_thickness: (m.floor_m * s) as f32,
            wall_thickness: (m.wall_m * s) as f32,
            ring_edges: std::array::from_fn(|k| depth * k as f32 / RINGS as f32),
            sector_azimuths,
            sector_dirs: sector_azimuths.map(|a| [a.cos(), a.sin()]),
            volume_m3: 0.0,
        };
        cup.volume_m3 = cup.volume_below(cup.depth);
        cup
    }

    /// The cup's mass in `material`, kg: the asset's, scaled by the density and the size's
    /// cube (as `modal::build_modes` scales it).
    pub fn mass_kg(&self, material: CupMaterial) -> f32 {
        let m = self.model();
        let rho = material.data().elastic.density as f64;
        (m.mass_kg * (rho / m.reference_material.density) * (self.size as f64).powi(3)) as f32
    }

    /// The radius of the sphere of the cup's outer volume (what it holds and its walls,
    /// `mass / density`), m: the cup as one body (`resonators::body`).
    pub fn outer_sphere_radius_m(&self, material: CupMaterial) -> f32 {
        let walls = self.mass_kg(material) / material.data().elastic.density;
        (3.0 * (self.volume_m3 + walls) / (4.0 * std::f32::consts::PI)).cbrt()
    }

    /// The cup the settings describe (shape, or the material's usual one, and size).
    pub fn for_settings(s: &Settings) -> Cup {
        Cup::new(s.resolved_cup_shape(), s.cup_size)
    }

    /// The asset: the modes' records, the areas, the reference material (size 1).
    pub fn model(&self) -> &'static CupModel {
        model(self.shape)
    }

    /// The inner profile (see the field's doc), m.
    pub fn profile(&self) -> &[[f32; 2]] {
        &self.profile[..self.profile_len]
    }

    /// The wall sector (0 or 1) a point or direction (x, y) faces more: the one whose
    /// axis, through `sector_azimuths`, it lies closer to, either way along it. A logged
    /// wall contact's (`logged::Contact::collision`) and a banked wall hit's
    /// (`generator::draw_place`).
    pub fn facing_sector(&self, x: f32, y: f32) -> usize {
        let facing = |[c, s]: [f32; 2]| (c * x + s * y).abs();
        usize::from(facing(self.sector_dirs[1]) > facing(self.sector_dirs[0]))
    }

    /// `facing_sector` of the direction at `azimuth` (rad), from angles alone: the sector
    /// whose axis lies nearer the azimuth, either way along it (each axis's distance folded
    /// to [0, pi/2] rad; |cos| falls with it there), without a sine and cosine a draw.
    /// Agrees with `facing_sector(cos, sin)` but within rounding of a boundary.
    #[inline]
    pub fn facing_sector_at(&self, azimuth: f32) -> usize {
        use std::f32::consts::PI;
        let off_axis = |a: f32| {
            let turns = (azimuth - a) * (1.0 / PI);
            (turns - fastmath::round_int(turns).0).abs()
        };
        usize::from(off_axis(self.sector_azimuths[1]) < off_axis(self.sector_azimuths[0]))
    }

    /// Height of ring `k`'s middle above the floor, m.
    pub fn ring_mid(&self, k: usize) -> f32 {
        let k = k.min(RINGS - 1);
        0.5 * (self.ring_edges[k] + self.ring_edges[k + 1])
    }

    /// Inner radius at height `z` above the floor (clamped to the cup: the floor's radius
    /// below it, the rim's above it), m. A linear interpolation along the wall's segments.
    pub fn radius_at(&self, z: f32) -> f32 {
        let p = self.profile();
        let z = z.clamp(0.0, self.depth);
        // the wall starts at point 1 (the floor's edge)
        for w in p[1..].windows(2) {
            if z <= w[1][1] {
                return segment_radius(w[0], w[1], z);
            }
        }
        self.rim_radius
    }

    /// The widest inner radius, m (the panning spans it).
    pub fn widest_radius(&self) -> f32 {
        self.profile().iter().map(|p| p[0]).fold(0.0, f32::max)
    }

    /// Inner cross-section at height `z`, m^2.
    pub fn cross_section(&self, z: f32) -> f32 {
        let r = self.radius_at(z);
        std::f32::consts::PI * r * r
    }

    /// Inner volume below height `z` above the floor, m^3: the wall's segments as frusta,
    /// `V = pi h (r0^2 + r0 r1 + r1^2) / 3` each (cut at `z`).
    pub fn volume_below(&self, z: f32) -> f32 {
        let p = self.profile();
        let z = z.clamp(0.0, self.depth);
        let mut v = 0.0;
        for w in p[1..].windows(2) {
            let ([r0, z0], z1) = (w[0], w[1][1]);
            if z <= z0 {
                break;
            }
            // cut at `z` (a flat ledge, z1 = z0, holds no volume)
            let top = z.min(z1);
            let r1 = segment_radius(w[0], w[1], top);
            v += std::f32::consts::PI * (top - z0) * (r0 * r0 + r0 * r1 + r1 * r1) / 3.0;
        }
        v
    }

    /// The height below which the cup holds `volume` m^3 (the inverse of `volume_below`,
    /// by bisection to a micrometre; the depth for a volume it cannot hold), m.
    pub fn height_holding(&self, volume: f32) -> f32 {
        if volume.is_nan() || volume <= 0.0 {
            return 0.0;
        }
        let (mut lo, mut hi) = (0.0f32, self.depth);
        if self.volume_below(hi) <= volume {
            return hi;
        }
        while hi - lo > 1e-6 {
            let mid = 0.5 * (lo + hi);
            if self.volume_below(mid) < volume {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }
}

/// The radius at height `z` of the wall segment from `a` to `b` (r, z): a linear
/// interpolation (a flat ledge, `b`'s z equal to `a`'s, gives `a`'s radius).
fn segment_radius([r0, z0]: [f32; 2], [r1, z1]: [f32; 2], z: f32) -> f32 {
    if z1 > z0 {
        r0 + (r1 - r0) * (z - z0) / (z1 - z0)
    } else {
        r0
    }
}

/// Force buses of the cup, one per place a grain can hit: the floor, the wall rings x
/// sectors (the generator's cells), the rim.
pub const CUP_BUSES: usize = 8;
/// Bus index of the floor; walls are `wall_bus(ring, sector)`.
pub const FLOOR_BUS: usize = 0;
/// The surface's force bus: after the cup's (`CUP_BUSES`), into the ground's radiation
/// filter (`surface::Radiation`), not the cup's modes.
pub const SURFACE_BUS: usize = CUP_BUSES;
/// Bus index of wall ring `ring` (0..`WALL_RINGS`), sector `sector` (0..`cups::SECTORS`).
pub const fn wall_bus(ring: usize, sector: usize) -> usize {
    1 + SECTORS * ring + sector
}
/// Bus index of the rim.
pub const RIM_BUS: usize = 7;
pub const WALL_RINGS: usize = RINGS;
/// Geometry and state of the cup that the mode set depends on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CupState {
    pub material: CupMaterial,
    /// The cup's shape and size (its asset's modes are scaled by `cup.size`).
    pub cup: Cup,
    /// Fill level 0..1 (height of the pile over the cup's inner depth).
    pub fill: f32,
    /// Density of the grains' solid, kg/m^3 (for the added mass).
    pub grain_density: f32,
    /// Grain diameter, m (a layer of a few grains already covers the floor).
    pub grain_diameter_m: f32,
}

/// Fraction of the floor covered by grains for a pile of height `h` (m).
pub fn floor_coverage(pile_height_m: f64, grain_diameter_m: f64) -> f64 {
    if pile_height_m <= 0.0 {
        0.0
    } else {
        1.0 - (-pile_height_m / (2.0 * grain_diameter_m.max(1e-5))).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A banked wall hit's sector from its azimuth alone (`facing_sector_at`) is a logged
    /// contact's from its direction (`facing_sector`), for every cup, all the way around,
    /// but within rounding of a boundary between the two.
    #[test]
    fn a_wall_hits_sector_from_its_azimuth_is_its_directions() {
        for shape in CupShape::ALL {
            let cup = Cup::new(shape, 1.3);
            let mut ones = 0;
            for i in 0..100_000 {
                let az = i as f32 * (std::f32::consts::TAU / 100_000.0);
                let (x, y) = (az.cos(), az.sin());
                let got = cup.facing_sector_at(az);
                ones += got;
                if got != cup.facing_sector(x, y) {
                    let facing = |[c, s]: [f32; 2]| (c * x + s * y).abs();
                    let (a, b) = (facing(cup.sector_dirs[0]), facing(cup.sector_dirs[1]));
                    assert!((a - b).abs() < 1e-5, "{shape:?} at {az} rad: {a} against {b}");
                }
            }
            // the two sectors' axes are not the same, so each takes some of the way round
            assert!(
                ones > 10_000 && ones < 90_000,
                "{shape:?}: {ones} of 100,000 in sector 1"
            );
        }
    }

    #[test]
    fn every_asset_parses_and_matches_its_shape() {
        for s in CupShape::ALL {
            let m = model(s);
            assert_eq!(m.shape, s.id());
            assert!(m.modes.len() >= 40, "{}: {} modes", s.id(), m.modes.len());
            assert!(m.modes.windows(2).all(|w| w[0].freq_hz <= w[1].freq_hz));
        }
        assert!(parse("{}").is_err());
        assert!(parse("not json").is_err());
    }

    #[test]
    fn a_profile_that_is_not_a_cup_is_refused() {
        let good: serde_json::Value = serde_json::from_str(CupShape::Jar.json()).unwrap();
        assert!(parse(&good.to_string()).is_ok());
        let with_profile = |profile: serde_json::Value| {
            let mut v = good.clone();
            v["inner_profile_m"] = profile;
            parse(&v.to_string())
        };
        // a wall that comes down again, a floor that does not start on the axis, a rim that
        // is not the asset's, and more points than a `Cup` holds
        let bad = [
            serde_json::json!([[0.0, 0.005], [0.04, 0.005], [0.04, 0.09], [0.031, 0.08], [0.031, 0.12]]),
            serde_json::json!([
                [0.01, 0.005],
                [0.04, 0.005],
                [0.04, 0.09],
                [0.031, 0.105],
                [0.031, 0.12]
            ]),
            serde_json::json!([[0.0, 0.005], [0.04, 0.005], [0.04, 0.09], [0.031, 0.105], [0.035, 0.12]]),
            {
                let mut p = vec![serde_json::json!([0.0, 0.005]), serde_json::json!([0.04, 0.005])];
                for i in 1..MAX_PROFILE {
                    p.push(serde_json::json!([0.04, 0.005 + 0.1 * i as f64 / MAX_PROFILE as f64]));
                }
                p.push(serde_json::json!([0.031, 0.12]));
                serde_json::Value::Array(p)
            },
        ];
        for b in bad {
            assert!(with_profile(b.clone()).is_err(), "{b}");
        }
    }
}

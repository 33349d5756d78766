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

use crate::materials::CupMaterial;
use serde::Deserialize;
use std::sync::OnceLock;

/// Wall rings of the assets (bottom to top).
pub const RINGS: usize = 3;

/// The cup geometries of `assets/cups`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CupShape {
    Mug,
    Tumbler,
    Bowl,
    Jar,
    MetalCup,
}

impl CupShape {
    pub const ALL: [CupShape; 5] = [
        CupShape::Mug,
        CupShape::Tumbler,
        CupShape::Bowl,
        CupShape::Jar,
        CupShape::MetalCup,
    ];

    /// Stable identifier (asset file name, presets, `--shape`).
    pub fn id(self) -> &'static str {
        match self {
            CupShape::Mug => "mug",
            CupShape::Tumbler => "tumbler",
            CupShape::Bowl => "bowl",
            CupShape::Jar => "jar",
            CupShape::MetalCup => "metal_cup",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CupShape::Mug => "Mug",
            CupShape::Tumbler => "Tumbler",
            CupShape::Bowl => "Bowl",
            CupShape::Jar => "Jar",
            CupShape::MetalCup => "Metal cup",
        }
    }

    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.id() == id)
    }

    /// The shape a cup of this material usually has (the `auto` choice of `cup_shape`).
    pub fn usual_for(material: CupMaterial) -> CupShape {
        match material {
            CupMaterial::Ceramic | CupMaterial::Porcelain => CupShape::Mug,
            CupMaterial::Glass => CupShape::Tumbler,
            CupMaterial::Steel | CupMaterial::Aluminium => CupShape::MetalCup,
            CupMaterial::Plastic | CupMaterial::Wood => CupShape::Bowl,
        }
    }

    fn json(self) -> &'static str {
        match self {
            CupShape::Mug => include_str!("../../assets/cups/mug.json"),
            CupShape::Tumbler => include_str!("../../assets/cups/tumbler.json"),
            CupShape::Bowl => include_str!("../../assets/cups/bowl.json"),
            CupShape::Jar => include_str!("../../assets/cups/jar.json"),
            CupShape::MetalCup => include_str!("../../assets/cups/metal_cup.json"),
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
    pub sector_azimuths_rad: [f64; 2],
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

#[cfg(test)]
mod tests {
    use super::*;

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
}

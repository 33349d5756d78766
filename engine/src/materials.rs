//! Material tables: grains and cups, in SI units, with their sources.
//!
//! Grain values are those of the solid the grain is made of (not the bulk), plus the
//! nominal diameter of the spherical proxy (thesis 5.3: every grain is a sphere) and a
//! coefficient of restitution for grain–grain and grain–cup impacts.
//!
//! Sources, abbreviated in the tables:
//! - `T6.1`: thesis (seed 000) Table 6.1 / appendix B.5, glass spheres: rho 2520, E 72 GPa, nu 0.22.
//! - `QJ2`: Qu & James, *On the Impact of Ground Sound* (seed 002) Table 2.
//! - `HB`: handbook values (CRC Handbook of Chemistry and Physics; ASM / MatWeb data sheets).
//! - `AG`: agricultural-engineering DEM literature (Mohsenin, *Physical Properties of Plant
//!   and Animal Materials*; typical DEM calibrations for rice, lentils, coffee beans).
//!   Biological grains scatter widely; the values are mid-range.
//! - `AR`: angles of repose: Al-Hashemi & Al-Amoudi, *A review on the angle of repose of
//!   granular materials*, Powder Technology 330 (2018) 397–417 (glass beads 22–25°, steel
//!   shot 24–27°, sand 30–35°, sugar and salt 32–38°, grains and pulses 25–35°, crushed rock
//!   35–40°); mid-range values.
//! - `HL`: cohesion of nominally dry grains in room air: capillary bridges at the asperities
//!   of the contact, F = 2 pi gamma r (gamma = 0.072 N/m, water), with r the asperity scale
//!   rather than the grain's radius (Halsey & Levine, *How sandcastles fall*, PRL 80 (1998)
//!   3141). r: 0.2 µm for smooth glass and metal, 1 µm for quartz sand and hard crops, 2 µm
//!   for the hygroscopic crystals (sugar, salt), which hold more water at their surfaces.
//!   Order-of-magnitude modelling values: they decide whether a material's Bond number (its
//!   cohesion over its weight, `GrainMaterialData::bond_number`) is above or below 1.

/// Air at 20 °C.
pub const AIR_DENSITY: f32 = 1.204; // kg/m^3
/// Speed of sound in air at 20 °C.
pub const SPEED_OF_SOUND: f32 = 343.2; // m/s
/// Standard gravity.
pub const GRAVITY: f32 = 9.806_65; // m/s^2
/// Bulk density of a loose pile relative to the solid's density (DESIGN: about 0.6 rho).
pub const PACKING_FRACTION: f32 = 0.6;

/// Elastic solid: Young's modulus, Poisson's ratio, density.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Elastic {
    /// Young's modulus E, Pa.
    pub youngs_pa: f32,
    /// Poisson's ratio nu.
    pub poisson: f32,
    /// Density rho, kg/m^3.
    pub density: f32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrainMaterialData {
    pub name: &'static str,
    pub elastic: Elastic,
    /// Diameter of the spherical proxy (volume-equivalent sphere), m.
    pub diameter_m: f32,
    /// Coefficient of restitution of an impact (kappa in seed 002, e in thesis).
    pub restitution: f32,
    /// Angle of repose of a loose pile, degrees (`AR`).
    pub repose_deg: f32,
    /// Cohesive force of one contact in room air, N (`HL`).
    pub cohesion_n: f32,
    pub source: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GrainMaterial {
    Sugar,
    Salt,
    FineSand,
    Rice,
    Lentils,
    CoffeeBeans,
    GlassBeads05,
    GlassBeads1,
    GlassBeads2,
    SteelShot1,
    PlasticDiscs4,
    Gravel,
}

impl GrainMaterial {
    pub const ALL: [GrainMaterial; 12] = [
        GrainMaterial::Sugar,
        GrainMaterial::Salt,
        GrainMaterial::FineSand,
        GrainMaterial::Rice,
        GrainMaterial::Lentils,
        GrainMaterial::CoffeeBeans,
        GrainMaterial::GlassBeads05,
        GrainMaterial::GlassBeads1,
        GrainMaterial::GlassBeads2,
        GrainMaterial::SteelShot1,
        GrainMaterial::PlasticDiscs4,
        GrainMaterial::Gravel,
    ];

    /// Stable identifier used in presets and parameter files.
    pub const fn id(self) -> &'static str {
        match self {
            GrainMaterial::Sugar => "sugar",
            GrainMaterial::Salt => "salt",
            GrainMaterial::FineSand => "fine_sand",
            GrainMaterial::Rice => "rice",
            GrainMaterial::Lentils => "lentils",
            GrainMaterial::CoffeeBeans => "coffee_beans",
            GrainMaterial::GlassBeads05 => "glass_beads_0_5mm",
            GrainMaterial::GlassBeads1 => "glass_beads_1mm",
            GrainMaterial::GlassBeads2 => "glass_beads_2mm",
            GrainMaterial::SteelShot1 => "steel_shot_1mm",
            GrainMaterial::PlasticDiscs4 => "plastic_discs_4mm",
            GrainMaterial::Gravel => "gravel",
        }
    }

    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.id() == id)
    }

    pub fn data(self) -> GrainMaterialData {
        let e = |youngs_pa, poisson, density| Elastic {
            youngs_pa,
            poisson,
            density,
        };
        let glass = e(72e9, 0.22, 2520.0); // T6.1
        let (name, elastic, diameter_m, restitution, source) = match self {
            // Sucrose crystal: E ~ 32 GPa (Duncan-Hewitt & Weatherly 1989), rho 1587.
            GrainMaterial::Sugar => ("Sugar", e(32e9, 0.30, 1587.0), 0.5e-3, 0.5, "HB; granulated 0.4-0.6 mm"),
            // Halite (NaCl): E ~ 37 GPa, nu 0.25, rho 2165.
            GrainMaterial::Salt => ("Salt", e(37e9, 0.25, 2165.0), 0.4e-3, 0.5, "HB; table salt 0.3-0.5 mm"),
            // Quartz sand.
            GrainMaterial::FineSand => (
                "Fine sand",
                e(70e9, 0.17, 2650.0),
                0.2e-3,
                0.6,
                "HB (quartz); fine sand 0.1-0.25 mm",
            ),
            // Long-grain rice, 7 x 2 mm kernel -> 2.8 mm volume-equivalent sphere.
            GrainMaterial::Rice => ("Rice", e(2.5e9, 0.30, 1450.0), 2.8e-3, 0.5, "AG"),
            // Lentil, 5 mm x 2.5 mm lens -> 3.9 mm volume-equivalent sphere.
            GrainMaterial::Lentils => ("Lentils", e(0.6e9, 0.30, 1350.0), 3.9e-3, 0.45, "AG"),
            // Roasted Arabica bean, ~10 x 7 x 5 mm, porous.
            GrainMaterial::CoffeeBeans => ("Coffee beans", e(0.3e9, 0.30, 650.0), 7.0e-3, 0.4, "AG"),
            GrainMaterial::GlassBeads05 => ("Glass beads 0.5 mm", glass, 0.5e-3, 0.85, "T6.1"),
            GrainMaterial::GlassBeads1 => ("Glass beads 1 mm", glass, 1.0e-3, 0.85, "T6.1"),
            GrainMaterial::GlassBeads2 => ("Glass beads 2 mm", glass, 2.0e-3, 0.85, "T6.1"),
            // Stainless steel, QJ2: 1.965e11, 0.27, 7955.
            GrainMaterial::SteelShot1 => ("Steel shot 1 mm", e(1.965e11, 0.27, 7955.0), 1.0e-3, 0.8, "QJ2"),
            // ABS, QJ2: 1.4e9, 0.35, 1070. 4 mm x 1.5 mm disc -> 3.1 mm sphere.
            GrainMaterial::PlasticDiscs4 => ("Plastic discs 4 mm", e(1.4e9, 0.35, 1070.0), 3.1e-3, 0.7, "QJ2 (ABS)"),
            // Granite, QJ2: 5.07e10, 0.28, 2670.
            GrainMaterial::Gravel => ("Gravel", e(5.07e10, 0.28, 2670.0), 6.0e-3, 0.5, "QJ2 (granite)"),
        };
        // AR and HL (the module doc): angle of repose, degrees; asperity scale, m
        let (repose_deg, asperity_m) = match self {
            GrainMaterial::Sugar => (35.0, 2e-6),
            GrainMaterial::Salt => (34.0, 2e-6),
            GrainMaterial::FineSand => (33.0, 1e-6),
            GrainMaterial::Rice => (32.0, 1e-6),
            GrainMaterial::Lentils => (28.0, 1e-6),
            GrainMaterial::CoffeeBeans => (31.0, 1e-6),
            GrainMaterial::GlassBeads05 | GrainMaterial::GlassBeads1 | GrainMaterial::GlassBeads2 => (23.0, 0.2e-6),
            GrainMaterial::SteelShot1 => (26.0, 0.2e-6),
            GrainMaterial::PlasticDiscs4 => (30.0, 0.2e-6),
            GrainMaterial::Gravel => (38.0, 1e-6),
        };
        GrainMaterialData {
            name,
            elastic,
            diameter_m,
            restitution,
            repose_deg,
            cohesion_n: 2.0 * std::f32::consts::PI * WATER_SURFACE_TENSION * asperity_m,
            source,
        }
    }
}

/// Surface tension of water at 20 °C, N/m (`HL`).
pub const WATER_SURFACE_TENSION: f32 = 0.072;

impl GrainMaterialData {
    /// Granular Bond number: one contact's cohesion over the grain's weight, for a grain of
    /// radius `radius_m` and density `density` (kg/m^3). Above about 1 a material flows in
    /// clumps; far below it, grain by grain (Castellanos, *The relationship between
    /// attractive interparticle forces and bulk behaviour in dry and uncharged fine powders*,
    /// Adv. Phys. 54 (2005) 263–376).
    pub fn bond_number(&self, radius_m: f32, density: f32) -> f32 {
        let weight = density * 4.0 / 3.0 * std::f32::consts::PI * radius_m.powi(3) * GRAVITY;
        self.cohesion_n / weight.max(1e-12)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CupMaterialData {
    pub name: &'static str,
    pub elastic: Elastic,
    /// Structural loss factor eta (modal decay rate = eta * omega / 2, see `modal`).
    pub loss_factor: f32,
    /// Sources of the elastic constants and of the loss factor.
    pub source: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CupMaterial {
    Ceramic,
    Porcelain,
    Glass,
    Steel,
    Aluminium,
    Plastic,
    Wood,
}

impl CupMaterial {
    pub const ALL: [CupMaterial; 7] = [
        CupMaterial::Ceramic,
        CupMaterial::Porcelain,
        CupMaterial::Glass,
        CupMaterial::Steel,
        CupMaterial::Aluminium,
        CupMaterial::Plastic,
        CupMaterial::Wood,
    ];

    pub const fn id(self) -> &'static str {
        match self {
            CupMaterial::Ceramic => "ceramic",
            CupMaterial::Porcelain => "porcelain",
            CupMaterial::Glass => "glass",
            CupMaterial::Steel => "steel",
            CupMaterial::Aluminium => "aluminium",
            CupMaterial::Plastic => "plastic",
            CupMaterial::Wood => "wood",
        }
    }

    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.id() == id)
    }

    /// Loss factors: material loss (`CH`: Cremer & Heckl, *Structure-Borne Sound*, table of
    /// loss factors: steel/aluminium 1e-4..6e-4, glass 6e-4..2e-3, ceramics/brick 1e-3..2e-2,
    /// plastics (ABS, acrylic) 2e-2..5e-2, wood 8e-3..3e-2 (dry timber, MDF at the top))
    /// raised, for metals and glass, to what a cup standing on a table shows (contact with the
    /// table and radiation add loss: a free steel shell rings for a minute, a steel cup on a
    /// table for seconds). Frequencies come from the cup's shape (`cups`); the material sets
    /// E, rho (scaling) and eta. They order the ring times steel > aluminium > glass >
    /// porcelain > ceramic > plastic > wood for the same shape.
    pub fn data(self) -> CupMaterialData {
        let e = |youngs_pa, poisson, density| Elastic {
            youngs_pa,
            poisson,
            density,
        };
        let (name, elastic, loss_factor, source) = match self {
            // Stoneware mug: QJ2 "ceramics".
            CupMaterial::Ceramic => ("Ceramic", e(7.2e10, 0.19, 2700.0), 4.0e-3, "QJ2; eta CH (ceramics)"),
            CupMaterial::Porcelain => ("Porcelain", e(1.0e11, 0.22, 2400.0), 3.0e-3, "HB; eta CH (ceramics)"),
            CupMaterial::Glass => ("Glass", e(7.2e10, 0.22, 2520.0), 2.0e-3, "T6.1; eta CH (glass)"),
            CupMaterial::Steel => (
                "Steel",
                e(1.965e11, 0.27, 7955.0),
                8.0e-4,
                "QJ2; eta CH (steel) + mounting",
            ),
            CupMaterial::Aluminium => (
                "Aluminium",
                e(6.9e10, 0.33, 2700.0),
                1.2e-3,
                "HB; eta CH (aluminium) + mounting",
            ),
            CupMaterial::Plastic => (
                "Plastic",
                e(1.4e9, 0.35, 1070.0),
                2.0e-2,
                "QJ2 (ABS); eta CH (plastics)",
            ),
            CupMaterial::Wood => ("Wood", e(1.1e10, 0.25, 750.0), 3.0e-2, "QJ2 (MDF); eta CH (wood)"),
        };
        CupMaterialData {
            name,
            elastic,
            loss_factor,
            source,
        }
    }
}

/// What the cup stands on, and the ground a pour lands on (`surface_material`): the
/// materials of seed 002's Table 2 (`QJ2`), as an elastic half-space each
/// (`ground::HalfSpace`: the model is a deep, homogeneous ground, seed 002 §6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SurfaceMaterial {
    Steel,
    Ceramic,
    Granite,
    Concrete,
    Wood,
    Plastic,
    Soil,
    Wax,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SurfaceMaterialData {
    pub name: &'static str,
    pub elastic: Elastic,
    pub source: &'static str,
}

impl SurfaceMaterial {
    pub const ALL: [SurfaceMaterial; 8] = [
        SurfaceMaterial::Steel,
        SurfaceMaterial::Ceramic,
        SurfaceMaterial::Granite,
        SurfaceMaterial::Concrete,
        SurfaceMaterial::Wood,
        SurfaceMaterial::Plastic,
        SurfaceMaterial::Soil,
        SurfaceMaterial::Wax,
    ];

    pub const fn id(self) -> &'static str {
        match self {
            SurfaceMaterial::Steel => "steel",
            SurfaceMaterial::Ceramic => "ceramic",
            SurfaceMaterial::Granite => "granite",
            SurfaceMaterial::Concrete => "concrete",
            SurfaceMaterial::Wood => "wood",
            SurfaceMaterial::Plastic => "plastic",
            SurfaceMaterial::Soil => "soil",
            SurfaceMaterial::Wax => "wax",
        }
    }

    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.id() == id)
    }

    /// Seed 002 Table 2, every row (E, nu, rho as published; "wood" is medium-density
    /// fibreboard there).
    pub fn data(self) -> SurfaceMaterialData {
        let e = |youngs_pa, poisson, density| Elastic {
            youngs_pa,
            poisson,
            density,
        };
        let (name, elastic) = match self {
            SurfaceMaterial::Steel => ("Steel plate", e(1.965e11, 0.27, 7955.0)),
            SurfaceMaterial::Ceramic => ("Ceramic tile", e(7.2e10, 0.19, 2700.0)),
            SurfaceMaterial::Granite => ("Granite", e(5.07e10, 0.28, 2670.0)),
            SurfaceMaterial::Concrete => ("Concrete", e(1.85e10, 0.20, 2250.0)),
            SurfaceMaterial::Wood => ("Wood (MDF)", e(1.1e10, 0.25, 750.0)),
            SurfaceMaterial::Plastic => ("Plastic (ABS)", e(1.4e9, 0.35, 1070.0)),
            SurfaceMaterial::Soil => ("Soil", e(4.0e7, 0.25, 1350.0)),
            SurfaceMaterial::Wax => ("Paraffin wax", e(5.57e7, 0.37, 786.0)),
        };
        SurfaceMaterialData {
            name,
            elastic,
            source: "QJ2 (seed 002 Table 2)",
        }
    }
}

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
/// Slope span of an avalanche, degrees: a granular surface lets go at its angle of repose and
/// comes to rest this much below it (Jaeger, Liu & Nagel, "Relaxation at the angle of
/// repose", PRL 62 (1989) 40: about 2 degrees). A heap's and a tilted cup's avalanches
/// (`gesture`) and a hand-held container's fits (`stream`).
pub const AVALANCHE_SPAN_DEG: f32 = 2.0;

/// A thin plate's bending stiffness D = E h^3 / (12 (1 - nu^2)), N m (Leissa, *Vibration of
/// Plates*, 1969, eq. 1.3): the table tops' (`Plate::bending_stiffness`) and a jar's lid's
/// (`resonators::air::Lid`).
pub fn bending_stiffness(youngs_pa: f64, thickness_m: f64, poisson: f64) -> f64 {
    youngs_pa * thickness_m.powi(3) / (12.0 * (1.0 - poisson.powi(2)))
}

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

    /// The grain's dynamic friction coefficient on a grain of its kind (its `friction_surface`
    /// row's mu_d: a pair's is the geometric mean of its two sides'): the rigid-body pour's
    /// grain–grain friction (granary-dem) and the collision databank's friction axis
    /// (`bank::Bank::lookup`).
    pub fn friction(self) -> f32 {
        FrictionMaterial::Grain(self).friction_surface().mu_dynamic
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
    // plates (issue 44, `resonators::plate`): surfaces of a finite size that ring
    WoodTable,
    MdfShelf,
    GlassTable,
    SteelTray,
    CeramicTile,
}

/// A surface of a finite size (issue 44): a plate of `elastic` with the material's loss
/// factor, `length_m` x `width_m` x `thickness_m`, simply supported on its edges; the grains
/// land (and the cup stands) at `spot`, fractions of its sides. Its modes and sound:
/// `resonators::plate`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plate {
    pub elastic: Elastic,
    pub loss_factor: f32,
    pub length_m: f32,
    pub width_m: f32,
    pub thickness_m: f32,
    pub spot: [f32; 2],
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SurfaceMaterialData {
    pub name: &'static str,
    pub elastic: Elastic,
    pub source: &'static str,
}

impl SurfaceMaterial {
    /// The half-spaces: seed 002's Table 2, in its order (its Table 3 is over these).
    pub const HALF_SPACES: [SurfaceMaterial; 8] = [
        SurfaceMaterial::Steel,
        SurfaceMaterial::Ceramic,
        SurfaceMaterial::Granite,
        SurfaceMaterial::Concrete,
        SurfaceMaterial::Wood,
        SurfaceMaterial::Plastic,
        SurfaceMaterial::Soil,
        SurfaceMaterial::Wax,
    ];

    /// The plates (`plate`).
    pub const PLATES: [SurfaceMaterial; 5] = [
        SurfaceMaterial::WoodTable,
        SurfaceMaterial::MdfShelf,
        SurfaceMaterial::GlassTable,
        SurfaceMaterial::SteelTray,
        SurfaceMaterial::CeramicTile,
    ];

    /// Every surface: the half-spaces, then the plates (the parameter's order).
    pub const ALL: [SurfaceMaterial; 13] = {
        let mut out = [SurfaceMaterial::Steel; 13];
        let mut i = 0;
        while i < out.len() {
            out[i] = if i < 8 {
                Self::HALF_SPACES[i]
            } else {
                Self::PLATES[i - 8]
            };
            i += 1;
        }
        out
    };

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
            SurfaceMaterial::WoodTable => "wood_table",
            SurfaceMaterial::MdfShelf => "mdf_shelf",
            SurfaceMaterial::GlassTable => "glass_table",
            SurfaceMaterial::SteelTray => "steel_tray",
            SurfaceMaterial::CeramicTile => "ceramic_tile",
        }
    }

    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.id() == id)
    }

    /// Seed 002 Table 2, every row (E, nu, rho as published; "wood" is medium-density
    /// fibreboard there); a plate's, its material's (the wood and MDF plates Table 2's wood,
    /// glass the cups' glass).
    pub fn data(self) -> SurfaceMaterialData {
        let e = |youngs_pa, poisson, density| Elastic {
            youngs_pa,
            poisson,
            density,
        };
        if let Some(p) = self.plate() {
            let name = match self {
                SurfaceMaterial::WoodTable => "Table top (wood)",
                SurfaceMaterial::MdfShelf => "Shelf (MDF)",
                SurfaceMaterial::GlassTable => "Table top (glass)",
                SurfaceMaterial::SteelTray => "Tray (steel)",
                _ => "Tile (ceramic)",
            };
            return SurfaceMaterialData {
                name,
                elastic: p.elastic,
                source: "QJ2 / T6.1 (the material), a plate (`plate`)",
            };
        }
        let (name, elastic) = match self {
            SurfaceMaterial::Steel => ("Steel plate", e(1.965e11, 0.27, 7955.0)),
            SurfaceMaterial::Ceramic => ("Ceramic tile", e(7.2e10, 0.19, 2700.0)),
            SurfaceMaterial::Granite => ("Granite", e(5.07e10, 0.28, 2670.0)),
            SurfaceMaterial::Concrete => ("Concrete", e(1.85e10, 0.20, 2250.0)),
            SurfaceMaterial::Wood => ("Wood (MDF)", e(1.1e10, 0.25, 750.0)),
            SurfaceMaterial::Plastic => ("Plastic (ABS)", e(1.4e9, 0.35, 1070.0)),
            SurfaceMaterial::Soil => ("Soil", e(4.0e7, 0.25, 1350.0)),
            SurfaceMaterial::Wax => ("Paraffin wax", e(5.57e7, 0.37, 786.0)),
            _ => unreachable!("plates return above"),
        };
        SurfaceMaterialData {
            name,
            elastic,
            source: "QJ2 (seed 002 Table 2)",
        }
    }

    /// The plate this surface is, or `None` for a half-space (seed 002's grounds). Sizes of
    /// common furniture and kitchenware; the loss factors are the cup table's for the same
    /// material (`CupMaterial::data`, Cremer & Heckl); the supports add theirs
    /// (`resonators::plate::SUPPORT_LOSS`). Wood as an isotropic plate of Table 2's MDF.
    pub fn plate(self) -> Option<Plate> {
        let e = |youngs_pa, poisson, density| Elastic {
            youngs_pa,
            poisson,
            density,
        };
        let wood = e(1.1e10, 0.25, 750.0);
        let (elastic, loss_factor, length_m, width_m, thickness_m) = match self {
            // a dining table's top, solid wood (eta of oak and fir, Cremer & Heckl: about 0.01)
            SurfaceMaterial::WoodTable => (wood, 1.0e-2, 1.2, 0.8, 0.028),
            // a bookshelf's board
            SurfaceMaterial::MdfShelf => (wood, 3.0e-2, 0.8, 0.3, 0.018),
            // a toughened-glass table top
            SurfaceMaterial::GlassTable => (e(7.2e10, 0.22, 2520.0), 2.0e-3, 1.0, 0.6, 0.010),
            // a pressed steel serving tray
            SurfaceMaterial::SteelTray => (e(1.965e11, 0.27, 7955.0), 8.0e-4, 0.45, 0.32, 0.001),
            // a loose floor tile (or a trivet) on a counter
            SurfaceMaterial::CeramicTile => (e(7.2e10, 0.19, 2700.0), 4.0e-3, 0.30, 0.30, 0.009),
            _ => return None,
        };
        Some(Plate {
            elastic,
            loss_factor,
            length_m,
            width_m,
            thickness_m,
            spot: [0.42, 0.37],
        })
    }
}

/// Speed at which the friction tables' patch sizes and plate frequencies are stated
/// (`FrictionSurfaceData::patch_side_m`, `plate_hz`), m/s: a spoon stirring, a grain sliding
/// down a tilted bowl.
pub const FRICTION_REFERENCE_SPEED: f32 = 0.1;

/// Loss factor of a contact patch ringing as a plate (seed 003 eq. 17's attenuation R, as
/// a decay rate `eta omega / 2`). A fit, not a material constant: a patch is held by a few
/// asperities, not clamped, and loses its energy into the body around it within a few
/// cycles (Q = 10). The materials' own loss factors (1e-4..3e-2, `CupMaterial::data`) are
/// small beside it and are not added.
pub const PATCH_LOSS_FACTOR: f32 = 0.1;

/// Share of the friction work done between two junctions that the junction's patch
/// receives as vibration (the rest heats the contact). A fit, to the engine's own impacts:
/// a watt of sliding friction work sounds about as loud as a watt of the grains' impact energy
/// does through the collision physics (a spoon stirring a mug of sugar at 0.375 m/s, about
/// 30 mW of friction work on its sliding contacts, as loud as the default pour's 30 mW of
/// arriving kinetic energy: `engine/tests/gesture.rs` checks the two within 6 dB). About
/// 2e-6 of the friction power then radiates (the `friction` tests print it).
pub const FRICTION_VIBRATION_SHARE: f32 = 8.0e-6;

/// Natural frequency of the stick-slip oscillator (Phya §6.2.4: the sliding body on the
/// lateral spring of its contact), Hz. A fit: real tangential contact stiffnesses put it in
/// the kHz, where it would merge with the patches' ringing; at 50 Hz the stick-slip is
/// heard as the creak and chatter of a slow slide.
pub const STICK_SLIP_HZ: f32 = 50.0;

/// Sliding friction of one surface (seed 003 §4.1, §4.3; Phya §6.2.4): its friction
/// coefficients against itself and its contact patches (micro-rectangles).
///
/// Sources of the coefficients, abbreviated in `friction_surface`:
/// - `CRC`: CRC Handbook of Chemistry and Physics, "Coefficient of friction" (dry, clean,
///   self-mated): glass 0.9–1.0 / 0.4, mild steel 0.74 / 0.57, aluminium 1.05–1.35 / 1.4
///   (static below dynamic: no stick-slip), wood 0.25–0.5 / 0.2, hard plastics 0.5 / 0.4.
/// - `BY`: Byerlee, *Friction of rocks*, Pure Appl. Geophys. 116 (1978) 615–626: rock on
///   rock 0.6–0.85 (granite, concrete, gravel, quartz).
/// - `AG` (as the grain table): DEM calibrations of sugar, salt, rice, lentils and coffee,
///   sliding friction 0.3–0.6, static some 0.1 above dynamic.
/// - `FIT`: the patch sizes, spreads and plate frequencies (see the fields).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrictionSurfaceData {
    /// Static friction coefficient mu_s, against the same material.
    pub mu_static: f32,
    /// Dynamic (sliding) friction coefficient mu_d, against the same material.
    pub mu_dynamic: f32,
    /// Side `a` (along the slide) of a contact patch at `FRICTION_REFERENCE_SPEED`, m. A
    /// fit: a quarter of a grain's diameter (a patch cannot be larger than the grain; seed
    /// 003 takes the thread diameter for cloth), 1 mm on a cup or a surface.
    pub patch_side_m: f32,
    /// Side `b` (across the slide) over side `a`. A fit: 0.8, junctions drawn out along
    /// the slide; it also keeps the (1,3) and (3,1) modes apart.
    pub aspect: f32,
    /// Spread of the sides: the normal distribution's standard deviation over its mean
    /// (seed 003 §4.1: the roughness is the sides' dispersion). A fit: 0.2 for smooth
    /// surfaces (glass, metal, glaze, plastic), 0.35 for rough ones.
    pub spread: f32,
    /// Fundamental (1,1) of a mean patch at `FRICTION_REFERENCE_SPEED` (seed 003 eq. 18),
    /// Hz; the patch's thickness is derived from it (`PatchSurface::from_surface`). A fit by
    /// ear to the brightness order of scrapes (glass, metal, stone, crystals brightest;
    /// crops, plastic and wood duller; soil and wax dullest), not a measurement.
    pub plate_hz: f32,
    /// Largest side a patch may have, m: a patch cannot be larger than the body it rings on
    /// (eq. 8 alone makes it grow without bound as the slip speed falls to 0, as it does at
    /// every stick). The grain's diameter; 10 mm on a cup or a surface (a few wall
    /// thicknesses).
    pub max_side_m: f32,
    /// Mean distance slid between two junctions (asperity spacing), m: seed 003 §3.1, the
    /// local slips per unit time are proportional to the sliding speed. A fit: the patch
    /// side at the reference speed.
    pub asperity_spacing_m: f32,
    pub source: &'static str,
}

/// A material that slides: a grain, a cup or a surface (`granary inspect friction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrictionMaterial {
    Grain(GrainMaterial),
    Cup(CupMaterial),
    Surface(SurfaceMaterial),
}

impl FrictionMaterial {
    /// A grain material's id first, then a cup's, then a surface's (cup and surface ids
    /// overlap: "steel" is the cup; `surface:steel` names the surface).
    pub fn from_id(id: &str) -> Option<Self> {
        if let Some(s) = id.strip_prefix("surface:") {
            return SurfaceMaterial::from_id(s).map(Self::Surface);
        }
        if let Some(s) = id.strip_prefix("cup:") {
            return CupMaterial::from_id(s).map(Self::Cup);
        }
        GrainMaterial::from_id(id)
            .map(Self::Grain)
            .or_else(|| CupMaterial::from_id(id).map(Self::Cup))
            .or_else(|| SurfaceMaterial::from_id(id).map(Self::Surface))
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Grain(m) => m.data().name,
            Self::Cup(m) => m.data().name,
            Self::Surface(m) => m.data().name,
        }
    }

    pub fn elastic(self) -> Elastic {
        match self {
            Self::Grain(m) => m.data().elastic,
            Self::Cup(m) => m.data().elastic,
            Self::Surface(m) => m.data().elastic,
        }
    }

    /// The friction row of the material (`FrictionSurfaceData`).
    pub fn friction_surface(self) -> FrictionSurfaceData {
        // (mu_s, mu_d, rough, plate_hz, source)
        let (mu_static, mu_dynamic, rough, plate_hz, source) = match self {
            Self::Grain(g) => match g {
                GrainMaterial::Sugar => (0.55, 0.45, true, 1500.0, "AG"),
                GrainMaterial::Salt => (0.55, 0.45, true, 1500.0, "AG"),
                GrainMaterial::FineSand => (0.65, 0.55, true, 1500.0, "BY (quartz)"),
                GrainMaterial::Rice => (0.45, 0.35, true, 1000.0, "AG"),
                GrainMaterial::Lentils => (0.40, 0.32, true, 1000.0, "AG"),
                GrainMaterial::CoffeeBeans => (0.45, 0.35, true, 1000.0, "AG"),
                GrainMaterial::GlassBeads05 | GrainMaterial::GlassBeads1 | GrainMaterial::GlassBeads2 => {
                    (0.9, 0.4, false, 2000.0, "CRC (glass)")
                }
                GrainMaterial::SteelShot1 => (0.74, 0.57, false, 2000.0, "CRC (mild steel)"),
                GrainMaterial::PlasticDiscs4 => (0.5, 0.4, false, 800.0, "CRC (hard plastics)"),
                GrainMaterial::Gravel => (0.7, 0.6, true, 1500.0, "BY"),
            },
            Self::Cup(c) => match c {
                CupMaterial::Ceramic => (0.7, 0.5, false, 1500.0, "BY (glazed ceramic as stone)"),
                CupMaterial::Porcelain => (0.7, 0.5, false, 1500.0, "BY (glazed ceramic as stone)"),
                CupMaterial::Glass => (0.9, 0.4, false, 2000.0, "CRC"),
                CupMaterial::Steel => (0.74, 0.57, false, 2000.0, "CRC"),
                CupMaterial::Aluminium => (1.05, 1.4, false, 2000.0, "CRC"),
                CupMaterial::Plastic => (0.5, 0.4, false, 800.0, "CRC"),
                CupMaterial::Wood => (0.4, 0.2, true, 800.0, "CRC"),
            },
            Self::Surface(s) => match s {
                SurfaceMaterial::Steel => (0.74, 0.57, false, 2000.0, "CRC"),
                SurfaceMaterial::Ceramic => (0.7, 0.5, false, 1500.0, "BY (glazed ceramic as stone)"),
                SurfaceMaterial::Granite => (0.7, 0.6, true, 1500.0, "BY"),
                SurfaceMaterial::Concrete => (0.7, 0.6, true, 1200.0, "BY"),
                SurfaceMaterial::Wood => (0.4, 0.2, true, 800.0, "CRC"),
                SurfaceMaterial::Plastic => (0.5, 0.4, false, 800.0, "CRC"),
                SurfaceMaterial::Soil => (0.6, 0.5, true, 400.0, "BY (granular soil)"),
                SurfaceMaterial::Wax => (0.3, 0.3, false, 400.0, "FIT (paraffin, lubricious)"),
                SurfaceMaterial::WoodTable | SurfaceMaterial::MdfShelf => (0.4, 0.2, true, 800.0, "CRC"),
                SurfaceMaterial::GlassTable => (0.9, 0.4, false, 2000.0, "CRC"),
                SurfaceMaterial::SteelTray => (0.74, 0.57, false, 2000.0, "CRC"),
                SurfaceMaterial::CeramicTile => (0.7, 0.5, false, 1500.0, "BY (glazed ceramic as stone)"),
            },
        };
        let (patch_side_m, max_side_m) = match self {
            Self::Grain(g) => (0.25 * g.data().diameter_m, g.data().diameter_m),
            Self::Cup(_) | Self::Surface(_) => (1e-3, 10e-3),
        };
        FrictionSurfaceData {
            mu_static,
            mu_dynamic,
            patch_side_m,
            aspect: 0.8,
            spread: if rough { 0.35 } else { 0.2 },
            plate_hz,
            max_side_m,
            asperity_spacing_m: patch_side_m,
            source,
        }
    }
}

/// One side of a sliding contact as a field of plates (seed 003 §4.1, §4.3): the parameters
/// of eq. 8 (`alpha`, `beta`) and eq. 18 (thickness, with the material's E, nu, rho).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PatchSurface {
    pub elastic: Elastic,
    /// alpha of seed 003 eq. 8, `1/a = alpha v`, s/m^2.
    pub alpha_s_m2: f32,
    /// beta of seed 003 eq. 8, `1/b = beta v`, s/m^2.
    pub beta_s_m2: f32,
    /// Standard deviation of side a over its mean (seed 003's sigma_a, relative).
    pub spread_a: f32,
    /// Standard deviation of side b over its mean (sigma_b, relative).
    pub spread_b: f32,
    /// Thickness h of the vibrating layer (seed 003 eq. 16–18), m.
    pub thickness_m: f32,
    /// Largest side of a patch, m (`FrictionSurfaceData::max_side_m`).
    pub max_side_m: f32,
}

impl PatchSurface {
    /// From the surface's friction row: alpha and beta put the mean sides at
    /// `patch_side_m` and `aspect * patch_side_m` at `FRICTION_REFERENCE_SPEED` (eq. 8);
    /// the thickness puts the mean patch's (1,1) mode at `plate_hz` there (eq. 18, solved
    /// for h: `h = 2 f11 / (pi (1/a^2 + 1/b^2) c)` with `c = sqrt(E / (12 rho (1 - nu^2)))`).
    pub fn from_surface(elastic: Elastic, s: &FrictionSurfaceData) -> Self {
        let a = s.patch_side_m;
        let b = s.aspect * a;
        let c = plate_speed(elastic);
        let h = 2.0 * s.plate_hz / (std::f32::consts::PI * (1.0 / (a * a) + 1.0 / (b * b)) * c);
        PatchSurface {
            elastic,
            alpha_s_m2: 1.0 / (a * FRICTION_REFERENCE_SPEED),
            beta_s_m2: 1.0 / (b * FRICTION_REFERENCE_SPEED),
            spread_a: s.spread,
            spread_b: s.spread,
            thickness_m: h,
            max_side_m: s.max_side_m,
        }
    }
}

/// `sqrt(E / (12 rho (1 - nu^2)))`, m/s: with the thickness h, `h` times this squared is
/// `D / (rho h)`, the plate's flexural rigidity over its mass per area (seed 003 eq. 24).
pub fn plate_speed(e: Elastic) -> f32 {
    (e.youngs_pa / (12.0 * e.density * (1.0 - e.poisson * e.poisson))).sqrt()
}

/// The friction parameters of material A sliding on material B.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrictionPairData {
    /// Static friction coefficient of the pair: the geometric mean of the two surfaces'
    /// (the mixing rule of Box2D and Bullet; the tables give no pair values).
    pub mu_static: f32,
    /// Dynamic friction coefficient of the pair (geometric mean, as `mu_static`).
    pub mu_dynamic: f32,
    /// Mean distance slid between junctions, m: the mean of the two surfaces'.
    pub asperity_spacing_m: f32,
    /// Natural frequency of the stick-slip oscillator, Hz (`STICK_SLIP_HZ`).
    pub stick_slip_hz: f32,
    /// Share of the friction work that becomes patch vibration (`FRICTION_VIBRATION_SHARE`).
    pub vibration_share: f32,
    /// Loss factor of a ringing patch (`PATCH_LOSS_FACTOR`).
    pub patch_loss_factor: f32,
    /// The patches of A's surface and of B's.
    pub sides: [PatchSurface; 2],
    /// Share of the junctions whose patch rings on A: the share of the contact's elastic
    /// energy stored in A, `(1/E*_A) / (1/E*_A + 1/E*_B)` with `E* = E / (1 - nu^2)` (each
    /// body's compliance in Hertz's contact). The rest ring on B.
    pub share_a: f32,
}

impl FrictionPairData {
    /// Material `a` sliding on material `b`.
    pub fn new(a: FrictionMaterial, b: FrictionMaterial) -> Self {
        let (fa, fb) = (a.friction_surface(), b.friction_surface());
        let (ea, eb) = (a.elastic(), b.elastic());
        let compliance = |e: Elastic| (1.0 - e.poisson * e.poisson) / e.youngs_pa;
        FrictionPairData {
            mu_static: (fa.mu_static * fb.mu_static).sqrt(),
            mu_dynamic: (fa.mu_dynamic * fb.mu_dynamic).sqrt(),
            asperity_spacing_m: 0.5 * (fa.asperity_spacing_m + fb.asperity_spacing_m),
            stick_slip_hz: STICK_SLIP_HZ,
            vibration_share: FRICTION_VIBRATION_SHARE,
            patch_loss_factor: PATCH_LOSS_FACTOR,
            sides: [PatchSurface::from_surface(ea, &fa), PatchSurface::from_surface(eb, &fb)],
            share_a: compliance(ea) / (compliance(ea) + compliance(eb)),
        }
    }

    /// Stick-slip happens only where static friction exceeds dynamic (Phya §6.2.4).
    pub fn stick_slip(&self) -> bool {
        self.mu_static > self.mu_dynamic
    }
}

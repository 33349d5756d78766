//! The choices a sound designer makes that the later stages read: the cup's shape, the
//! gesture (with its MIDI keyswitches) and the grains' shape. Their data (the cup's modes,
//! the gestures' mechanics, the shapes' fields) is derived from them downstream, in
//! `derived::cups`, `pour::gesture` and `derived::shape`.

use crate::base::materials::{CupMaterial, GrainMaterial};

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
    pub const fn id(self) -> &'static str {
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
}

/// What a note (or continuous mode) does to the grains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Gesture {
    /// Pour them from the spout (the notes open it).
    #[default]
    Pour,
    /// Stir them with a spoon.
    Stir,
    /// Shake the closed cup.
    Shake,
    /// Tilt the cup: the grains slide and, tilted far enough, spill.
    Tilt,
}

impl Gesture {
    pub const ALL: [Gesture; 4] = [Gesture::Pour, Gesture::Stir, Gesture::Shake, Gesture::Tilt];

    /// Stable id (presets, hosts, the command line). Never rename one.
    pub const fn id(self) -> &'static str {
        match self {
            Gesture::Pour => "pour",
            Gesture::Stir => "stir",
            Gesture::Shake => "shake",
            Gesture::Tilt => "tilt",
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Gesture::Pour => "Pour",
            Gesture::Stir => "Stir",
            Gesture::Shake => "Shake",
            Gesture::Tilt => "Tilt",
        }
    }

    pub fn from_id(id: &str) -> Option<Gesture> {
        Gesture::ALL.into_iter().find(|g| g.id() == id)
    }

    /// The gesture a keyswitch selects (`GESTURE_KEYS`, in `ALL`'s order), if `key` is one.
    pub fn from_key(key: u8) -> Option<Gesture> {
        GESTURE_KEYS
            .contains(&key)
            .then(|| Gesture::ALL[(key - GESTURE_KEYS.start()) as usize])
    }
}

/// MIDI keyswitches for the gesture: C1 (24) pour, C#1 stir, D1 shake, D#1 tilt (middle C =
/// C4 = 60). They play nothing; the gesture holds until the next keyswitch.
pub const GESTURE_KEYS: std::ops::RangeInclusive<u8> = 24..=27;
/// MIDI key E1 (28): the heap avalanches now.
pub const AVALANCHE_KEY: u8 = 28;

/// A grain's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Shape {
    #[default]
    Sphere,
    Rice,
    Lentil,
    Disc,
    Bean,
    Cube,
    Stone,
}

impl Shape {
    /// In the table's order.
    pub const ALL: [Shape; 7] = [
        Shape::Sphere,
        Shape::Rice,
        Shape::Lentil,
        Shape::Disc,
        Shape::Bean,
        Shape::Cube,
        Shape::Stone,
    ];

    /// Stable identifier (the asset's name).
    pub const fn id(self) -> &'static str {
        match self {
            Shape::Sphere => "sphere",
            Shape::Rice => "rice",
            Shape::Lentil => "lentil",
            Shape::Disc => "disc",
            Shape::Bean => "bean",
            Shape::Cube => "cube",
            Shape::Stone => "stone",
        }
    }

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Sphere => "Sphere",
            Shape::Rice => "Rice grain",
            Shape::Lentil => "Lentil",
            Shape::Disc => "Disc",
            Shape::Bean => "Bean",
            Shape::Cube => "Cube",
            Shape::Stone => "Stone",
        }
    }

    pub fn from_id(id: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|s| s.id() == id)
    }

    /// What the shape is (docs/grains.md, "The shapes", with the sources).
    pub fn describe(self) -> &'static str {
        match self {
            Shape::Sphere => "sphere",
            Shape::Rice => "prolate spheroid, length/width 3.5 (long axis x)",
            Shape::Lentil => "oblate spheroid, diameter/thickness 2.75 (axis z)",
            Shape::Disc => "flat cylinder, diameter/thickness 3 (axis z)",
            Shape::Bean => "ellipsoid 10 : 7.5 : 8 cut flat, with a groove (flat side -z)",
            Shape::Cube => "cube",
            Shape::Stone => "ellipsoid 1 : 0.75 : 0.55 with a smooth ±15 % perturbation",
        }
    }

    /// The shape of a grain material's grains.
    pub fn of(material: GrainMaterial) -> Shape {
        match material {
            GrainMaterial::Sugar | GrainMaterial::Salt => Shape::Cube,
            GrainMaterial::Rice => Shape::Rice,
            GrainMaterial::Lentils => Shape::Lentil,
            GrainMaterial::CoffeeBeans => Shape::Bean,
            GrainMaterial::PlasticDiscs4 => Shape::Disc,
            GrainMaterial::Gravel => Shape::Stone,
            GrainMaterial::FineSand
            | GrainMaterial::GlassBeads05
            | GrainMaterial::GlassBeads1
            | GrainMaterial::GlassBeads2
            | GrainMaterial::SteelShot1 => Shape::Sphere,
        }
    }
}

/// How the pour is triggered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TriggerMode {
    /// Note-on starts the stream, velocity scales it, note-off stops it.
    #[default]
    Midi,
    /// `pour_rate` alone drives the pour (0 = silent).
    Continuous,
}

/// Where the stream lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PourTarget {
    /// Into the cup; what bounces out or overflows falls on the surface it stands on.
    #[default]
    Cup,
    /// Onto the bare surface: a heap grows at the grains' angle of repose.
    Surface,
}

/// Where the generator's cells take their collision rates and their speed and normal-angle
/// distributions from (thesis 5.5–5.6 and 7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Statistics {
    /// The hand-written model of each cell (`generator::cell_pdf`, `generator::Shapes`).
    Model,
    /// The databank measured from rigid-body simulations of pours (`bank`,
    /// `assets/bank/bank.json`), looked up each window; settling stays the model's. The
    /// default since preset format 2.
    #[default]
    Bank,
}

impl Statistics {
    pub const ALL: [Statistics; 2] = [Statistics::Model, Statistics::Bank];

    /// Stable id (presets, `--set statistics=`, `bank-check --statistics`). Never rename one.
    pub const fn id(self) -> &'static str {
        match self {
            Statistics::Model => "model",
            Statistics::Bank => "bank",
        }
    }

    pub fn from_id(id: &str) -> Option<Statistics> {
        Statistics::ALL.into_iter().find(|s| s.id() == id)
    }
}

/// How many of the generator's collisions are rendered one by one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Quality {
    /// Realtime while playing, reference when the host says it renders offline
    /// (`Engine::set_offline`; the command line's `granary render` does, Ardour 7's export
    /// does not): a bounce's samples then depend on the host.
    Auto,
    /// Dense cells rendered as energy-preserving groups and texture masking
    /// (`generator::RENDERED_PER_CELL_PER_S`, `BED_PULSES_PER_CELL_PER_S`): a dense pour in a
    /// live session at a few per cent of a core. The default, so that a pour is the same
    /// samples in every host and in `granary render` (`cargo xtask transparency` checks that
    /// it sounds as reference does).
    #[default]
    Realtime,
    /// Every collision the generator produces rendered one by one (no groups, no texture
    /// masking; the thesis 6.1 audibility culling stays): for the final bounce.
    Reference,
}

impl Quality {
    /// Whether the engine renders at reference quality, for an engine that is (`offline`) or
    /// is not rendering offline.
    pub fn is_reference(self, offline: bool) -> bool {
        match self {
            Quality::Auto => offline,
            Quality::Realtime => false,
            Quality::Reference => true,
        }
    }
}

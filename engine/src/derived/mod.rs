//! Stage 2, derived: what follows from the settings alone, computed when they change and
//! read every window after: the cup (its geometry, modes' data and force buses), the
//! grains' shapes, and `Derived`, the settings' numbers that the later stages read.
//! See docs/architecture.md, "Derived once".

pub mod cups;
pub mod shape;

use crate::base::materials::{FrictionMaterial, PACKING_FRACTION};
use crate::control::choices::{CupShape, PourTarget};
use crate::control::settings::Settings;
use cups::Cup;

/// What the settings fix for the stages after them, computed once per change of the settings
/// (`Derived::new`, from `Engine::set_settings`: on the control side of a window boundary,
/// never per window). Every field is the expression it replaces, to the bit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Derived {
    /// The cup (every part of the engine reads this one `Cup`).
    pub cup: Cup,
    /// Grain radius, m (`Settings::grain_radius_m`).
    pub grain_radius_m: f32,
    /// Density of the grains' solid, kg/m^3 (`Settings::grain_density`).
    pub grain_density: f32,
    /// Radius of the sphere whose radiation filter the grains' pulses take, m
    /// (`Settings::radiation_radius_m`).
    pub radiation_radius_m: f32,
    /// One grain's volume, m^3 (a sphere of `grain_radius_m`), and its mass, kg.
    pub grain_volume_m3: f32,
    pub grain_mass_kg: f32,
    /// Bulk density of a bed of the grains, kg/m^3 (`PACKING_FRACTION` of the solid's).
    pub bulk_density: f32,
    /// Tangent of the grains' angle of repose.
    pub repose_tan: f32,
    /// Coefficient of restitution of the grains (material table).
    pub restitution: f32,
    /// A pour onto the bare surface (no cup).
    pub open: bool,
    /// What the grains slide on beside each other: the cup's material, or the surface's.
    pub cup_friction: FrictionMaterial,
    /// The listener's offset from where it looks from, m: `listener_distance` times the sine
    /// (across) and cosine (up) of `listener_angle` from the vertical.
    pub listener_across_m: f32,
    pub listener_up_m: f32,
    /// Radius of the falling stream's landing zone, m: a few grains wide, at least 4 mm.
    pub stream_radius_m: f32,
    /// The cup's mass, kg, and the radius of the sphere of its outer volume, m (the cup as
    /// one body: `resonators::body`).
    pub cup_mass_kg: f32,
    pub cup_sphere_radius_m: f32,
    /// Linear gains of the grains, cup, surface and friction stems and the output (the
    /// `*_level_db` settings).
    pub gains: [f32; 5],
    /// The pour's length scale over the collision databank's scenes (`BANK_CUP_SIZE`): the
    /// cup's size over the banked cups' for a pour into a cup, 1 onto the surface. By Froude
    /// similarity (docs/dem.md, "The cup's size") the bank is looked up with the grains and
    /// the fall this much smaller (`statistics::bank::Bank::select`) and its lifetime
    /// profile read `life_scale` times slower (`pour::scene::SceneInput::life_scale`).
    pub bank_scale: f32,
    /// The square root of `bank_scale`: times scale as the square root of lengths under
    /// gravity.
    pub life_scale: f32,
    /// What a pour onto the surface falls further than the databank's surface scenes with
    /// the same `fall_height`, m: the spout is the fall above where the rim would be
    /// (`pour::scene`), and the bank's surface scenes were simulated beside a
    /// `BANK_SURFACE_CUP` of `BANK_CUP_SIZE`; 0 for a pour into a cup.
    pub bank_fall_offset_m: f32,
}

/// The cup size every scene of the collision databank is simulated at (granary-dem's
/// `bank::values`): a pour into a cup `cup_size` large is looked up as a similar one into a
/// cup of this size (`Derived::bank_scale`).
pub const BANK_CUP_SIZE: f32 = 1.0;
/// The cup beside which the databank's pours onto the surface are simulated (its depth sets
/// their spout's height: `Derived::bank_fall_offset_m`).
pub const BANK_SURFACE_CUP: CupShape = CupShape::Mug;

impl Derived {
    pub fn new(s: &Settings) -> Derived {
        let grain = s.grain_material.data();
        let open = s.pour_target == PourTarget::Surface;
        let th = s.listener_angle_deg.to_radians();
        let a = s.grain_radius_m();
        let db = |x: f32| 10f32.powf(x / 20.0);
        let cup = Cup::for_settings(s);
        let bank_scale = if open { 1.0 } else { cup.size / BANK_CUP_SIZE };
        let bank_fall_offset_m = if open {
            cup.depth - Cup::new(BANK_SURFACE_CUP, BANK_CUP_SIZE).depth
        } else {
            0.0
        };
        Derived {
            cup,
            cup_mass_kg: cup.mass_kg(s.cup_material),
            cup_sphere_radius_m: cup.outer_sphere_radius_m(s.cup_material),
            grain_radius_m: a,
            grain_density: s.grain_density(),
            radiation_radius_m: s.radiation_radius_m(),
            grain_volume_m3: 4.0 / 3.0 * std::f32::consts::PI * a.powi(3),
            grain_mass_kg: 4.0 / 3.0 * std::f32::consts::PI * a.powi(3) * s.grain_density(),
            bulk_density: PACKING_FRACTION * s.grain_density(),
            repose_tan: grain.repose_deg.to_radians().tan(),
            restitution: grain.restitution,
            open,
            cup_friction: if open {
                FrictionMaterial::Surface(s.surface_material)
            } else {
                FrictionMaterial::Cup(s.cup_material)
            },
            listener_across_m: s.listener_distance_m * th.sin(),
            listener_up_m: s.listener_distance_m * th.cos(),
            stream_radius_m: (8.0 * a).max(0.004),
            bank_scale,
            life_scale: bank_scale.sqrt(),
            bank_fall_offset_m,
            gains: [
                db(s.grains_level_db),
                db(s.cup_level_db),
                db(s.surface_level_db),
                db(s.friction_level_db),
                db(s.output_gain_db),
            ],
        }
    }
}

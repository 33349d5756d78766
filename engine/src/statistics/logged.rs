//! Logged contacts: collisions that come from outside the generator — a rigid-body
//! simulation, an animation exported from Blender, Houdini or a game engine — rendered
//! through the same collision physics as the generator's (`granary render --collisions`).
//!
//! A contact is what a simulation logs when two bodies start touching: when, where, along
//! which normal, how fast they approach, and which bodies touch. One body is always a grain;
//! the other is a grain, the cup or the surface the cup stands on. Each becomes one
//! [`Collision`] (weight 1: every contact is rendered one by one, none grouped), placed at its
//! own time to the sample's fraction.
//!
//! Frame and units (SI): positions in metres in the cup's frame — origin at the centre of the
//! cup's inner floor, z up (the generator's frame, `Collision::position`); the surface is the
//! plane the cup stands on. The normal is the direction the grain is pushed (from the other
//! body towards the grain); it is normalised here. The speed is the relative normal speed at
//! the contact's start, m/s.

use crate::base::window::{Cell, Collision, CollisionKind, CELLS};
use crate::derived::cups::Cup;
use crate::derived::cups::{wall_bus, FLOOR_BUS, SURFACE_BUS, WALL_RINGS};

/// The body a grain touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    Grain,
    Cup,
    Surface,
}

/// The columns of a contact file (docs/contacts.md), in the order the docs give them.
pub const COLUMNS: [&str; 12] = [
    "time_s",
    "x_m",
    "y_m",
    "z_m",
    "nx",
    "ny",
    "nz",
    "speed_m_s",
    "body_a",
    "material_a",
    "body_b",
    "material_b",
];

impl Body {
    pub const ALL: [Body; 3] = [Body::Grain, Body::Cup, Body::Surface];

    /// The body's name in a contact file.
    pub fn name(self) -> &'static str {
        match self {
            Body::Grain => "grain",
            Body::Cup => "cup",
            Body::Surface => "surface",
        }
    }

    pub fn parse(name: &str) -> Option<Body> {
        let name = name.trim().to_ascii_lowercase();
        Body::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// One logged contact between a grain and `other`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// Time of the contact's start, s from the render's start.
    pub time_s: f64,
    /// Contact point, m (the cup's frame: origin at the centre of its inner floor, z up).
    pub position_m: [f32; 3],
    /// Direction the grain is pushed (any length but zero).
    pub normal: [f32; 3],
    /// Relative normal speed at the start of the contact, m/s.
    pub speed_m_s: f32,
    pub other: Body,
}

/// The fastest contact rendered, m/s: far beyond what grains reach falling through air (a
/// 5 mm stone's terminal speed is about 17 m/s: v = sqrt(8 r ρ g / (3 ρ_air C_d)), C_d =
/// 0.47), and where Hertz's elastic contact no longer holds (grains yield and shatter;
/// Johnson 1985, *Contact Mechanics*, §11.3).
pub const MAX_SPEED_M_S: f64 = 100.0;
/// The slowest, m/s: a micrometre a second (far below hearing; a smaller speed is a unit
/// slip, not a contact).
pub const MIN_SPEED_M_S: f64 = 1e-6;
/// How far from the cup's floor centre a contact may be, m, in each coordinate: the scene
/// is the cup and the ground around it, heard from a listener a few metres away at most.
pub const MAX_DISTANCE_M: f64 = 10.0;

/// A number as a person reads it: `{:e}` where the plain form would run to many digits
/// (1e-300, 1e30), else the plain form (0.125, 100).
fn num(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e6).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

impl Contact {
    /// Why a contact with these values (as given, before they become `f32`) cannot be
    /// rendered, if it cannot: a quantity not finite, a negative time, a speed or a place
    /// outside what the physics covers (`MIN_SPEED_M_S`..=`MAX_SPEED_M_S`,
    /// ±`MAX_DISTANCE_M`), a zero normal.
    pub fn check_values(time_s: f64, position_m: [f64; 3], normal: [f64; 3], speed_m_s: f64) -> Result<(), String> {
        if !time_s.is_finite() || time_s < 0.0 {
            return Err(format!(
                "time {} s: must be a finite number of seconds >= 0",
                num(time_s)
            ));
        }
        for (axis, x) in ["x", "y", "z"].iter().zip(position_m) {
            if x.is_nan() || x.abs() > MAX_DISTANCE_M {
                return Err(format!(
                    "{axis} = {} m: a contact must be within ±{MAX_DISTANCE_M} m of the cup's floor centre (the scene is the cup and the ground around it)",
                    num(x)
                ));
            }
        }
        let n2: f64 = normal.iter().map(|x| x * x).sum();
        if !n2.is_finite() || n2 <= 0.0 || normal.iter().all(|&x| (x as f32) == 0.0) {
            return Err(format!(
                "normal ({}, {}, {}): must be a finite, non-zero vector",
                num(normal[0]),
                num(normal[1]),
                num(normal[2])
            ));
        }
        if !(MIN_SPEED_M_S..=MAX_SPEED_M_S).contains(&speed_m_s) {
            return Err(format!(
                "speed {} m/s: must be within {}..={MAX_SPEED_M_S} m/s (faster than any grain falls through air, grains shatter and the elastic contact does not hold)",
                num(speed_m_s),
                num(MIN_SPEED_M_S)
            ));
        }
        Ok(())
    }

    /// `check_values` on this contact's values.
    pub fn check(&self) -> Result<(), String> {
        Contact::check_values(
            self.time_s,
            self.position_m.map(f64::from),
            self.normal.map(f64::from),
            f64::from(self.speed_m_s),
        )
    }

    /// The contact as the engine's collision at `time` samples within its window, for the
    /// cup `cup`: the cell and force bus it belongs to, the unit normal, weight 1. A grain–cup
    /// contact whose normal points more up than sideways (within 45 degrees of the vertical)
    /// is on the floor; otherwise on the wall, in the ring at its height and the sector facing
    /// its azimuth (as the generator places a push through the bed, `generator::bed_path`).
    /// A grain–grain contact writes no push through the bed (`bed_weight` 0): a simulation
    /// logs the grains' contacts with the cup itself.
    pub fn collision(&self, time: f32, cup: &Cup) -> Collision {
        let len = self.normal.iter().map(|x| x * x).sum::<f32>().sqrt();
        let normal = self.normal.map(|x| x / len);
        let p = self.position_m;
        let (kind, cell, bus) = match self.other {
            Body::Grain => (CollisionKind::GrainGrain, Cell::PileSurface, FLOOR_BUS),
            Body::Surface => (CollisionKind::GrainSurface, Cell::Surface, SURFACE_BUS),
            Body::Cup if normal[2] >= std::f32::consts::FRAC_1_SQRT_2 => {
                (CollisionKind::GrainCup, Cell::CupFloor, FLOOR_BUS)
            }
            Body::Cup => {
                let ring = (1..WALL_RINGS).filter(|&k| p[2] >= cup.ring_edges[k]).count();
                let sector = cup.facing_sector(p[0], p[1]);
                (CollisionKind::GrainCup, Cell::WallRing(ring), wall_bus(ring, sector))
            }
        };
        Collision {
            time,
            kind,
            cell: CELLS.iter().position(|&c| c == cell).unwrap_or(0),
            bus,
            position: p,
            normal,
            v0: self.speed_m_s,
            ln_v0: self.speed_m_s.ln(),
            weight: 1.0,
            bed_m: 0.0,
            bed_weight: 0.0,
            spread: false,
        }
    }
}

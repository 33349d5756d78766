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

impl Contact {
    /// Why this contact cannot be rendered, if it cannot: a quantity not finite, a negative
    /// time, a zero normal, a speed not above 0.
    pub fn check(&self) -> Result<(), String> {
        if !self.time_s.is_finite() || self.time_s < 0.0 {
            return Err(format!(
                "time {} s: must be a finite number of seconds >= 0",
                self.time_s
            ));
        }
        if !self.position_m.iter().all(|x| x.is_finite()) {
            return Err("the position is not finite".into());
        }
        let n2: f32 = self.normal.iter().map(|x| x * x).sum();
        if !n2.is_finite() || n2 <= 0.0 {
            return Err("the normal must be a finite, non-zero vector".into());
        }
        if !self.speed_m_s.is_finite() || self.speed_m_s <= 0.0 {
            return Err(format!("speed {} m/s: must be above 0", self.speed_m_s));
        }
        Ok(())
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
        }
    }
}

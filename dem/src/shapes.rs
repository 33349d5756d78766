//! The grains' own shapes in the simulation (issue 48: "its own shape (rapier's convex
//! shapes or compounds for rice, lentils, discs, beans, cubes, stones)").
//!
//! Each shape is the one the engine renders (`granary_grains::shape`, the wave solver's
//! geometry, docs/grains.md, "The shapes"), at the grain's equivalent-volume diameter, as a
//! rapier collider:
//!
//! - the sphere: a ball (rotations stay locked, lib.rs says why);
//! - the cube (sugar, salt): a cuboid of side `d (pi/6)^(1/3)`;
//! - the disc (plastic discs): rapier's cylinder, its axis along the body's y (a prism's
//!   convex hull, tried first, sank into the surface plane edge first: parry's
//!   polyhedron against a half-space with twenty coplanar vertices a face);
//! - rice, lentils, coffee beans, gravel: the convex hull of `HULL_POINTS` points of the
//!   surface, the outermost crossing of the shape's implicit surface along directions spread
//!   evenly over the sphere (a Fibonacci lattice). The hull fills the bean's groove and any
//!   hollow of the stone: contacts see the grain's convex envelope.
//!
//! Every shaped grain carries the mass of its equivalent-volume sphere (`Scene::grain_kg`),
//! whatever its hull's volume (an inscribed polyhedron's is a few per cent less); rapier
//! takes its inertia from the collider's geometry at that mass.

use granary_engine::control::choices::Shape;
use granary_grains::shape::{Shape as Geometry, ShapeKind};
use rapier3d::prelude::*;

/// Surface points whose convex hull is a smooth grain's collider.
pub const HULL_POINTS: usize = 64;

/// A grain's collider and its extents.
#[derive(Clone)]
pub struct GrainForm {
    pub shape: Shape,
    /// In the world's length unit (`GrainForm::new`'s `unit_m`).
    pub collider: SharedShape,
    /// The least distance from the centre of mass to the surface points sampled, m: about the
    /// height of the centre over a floor the grain lies flat on (its half-thickness; a hull's
    /// face lies a hair nearer than its points).
    pub min_half_m: f32,
    /// The largest distance from the centre of mass to the surface, m.
    pub bounding_m: f32,
}

impl GrainForm {
    /// The grain of `shape` whose equivalent-volume sphere has radius `radius_m`, its
    /// collider in a world whose length unit is `unit_m` metres.
    pub fn new(shape: Shape, radius_m: f32, unit_m: f32) -> GrainForm {
        let mut form = GrainForm::scaled(shape, radius_m / unit_m);
        form.min_half_m *= unit_m;
        form.bounding_m *= unit_m;
        form
    }

    /// The grain with equivalent radius `radius` in some length unit; its collider and extents
    /// in that unit.
    fn scaled(shape: Shape, radius: f32) -> GrainForm {
        let a = radius;
        match shape {
            Shape::Sphere => GrainForm {
                shape,
                collider: SharedShape::ball(a),
                min_half_m: a,
                bounding_m: a,
            },
            Shape::Cube => {
                // the cube of the sphere's volume: side (4/3 pi)^(1/3) a
                let h = 0.5 * (4.0 / 3.0 * std::f32::consts::PI).cbrt() * a;
                GrainForm {
                    shape,
                    collider: SharedShape::cuboid(h, h, h),
                    min_half_m: h,
                    bounding_m: h * 3f32.sqrt(),
                }
            }
            Shape::Disc => {
                // granary_grains::shape: diameter three times the thickness, pi r^2 (2r/3) =
                // 4/3 pi a^3, so r = 2^(1/3) a, half-height r/3; rapier's cylinder has its
                // axis along the body's y
                let r = 2f32.cbrt() * a;
                let hh = r / 3.0;
                GrainForm {
                    shape,
                    collider: SharedShape::cylinder(hh, r),
                    min_half_m: hh,
                    bounding_m: r.hypot(hh),
                }
            }
            Shape::Rice | Shape::Lentil | Shape::Bean | Shape::Stone => {
                let kind = ShapeKind::from_name(shape.id()).expect("the engine's shapes are the solver's");
                let geometry = Geometry::new(kind, 2.0 * a as f64);
                let points = surface_points(&geometry, HULL_POINTS);
                let (mut lo, mut hi) = (f32::INFINITY, 0.0f32);
                for p in &points {
                    lo = lo.min(p.length());
                    hi = hi.max(p.length());
                }
                GrainForm {
                    shape,
                    collider: SharedShape::convex_hull(&points).expect("the surface points span a volume"),
                    min_half_m: lo,
                    bounding_m: hi,
                }
            }
        }
    }

    /// Whether the grain may turn (every shape but the sphere).
    pub fn turns(&self) -> bool {
        self.shape != Shape::Sphere
    }

    /// Whether its contacts resist its rolling (`Sim::resist_rolling`): every turning shape
    /// but the disc. A disc's flat faces hold it in a heap, and the resisting torque, which
    /// holds any tilt whose gravity torque is below it, stood a dropped disc on its rim (held
    /// up to about 9 degrees from upright: sin = mu_r a / r).
    pub fn resists_rolling(&self) -> bool {
        self.turns() && self.shape != Shape::Disc
    }
}

/// `n` points of the surface of `g` (body frame, in the unit of `g`'s diameter): along each of
/// `n` directions of a Fibonacci lattice on the sphere (Gonzalez 2010, "Measurement of areas on
/// a sphere using Fibonacci and latitude-longitude lattices", eq. 2-3), the outermost crossing
/// of the surface (`Shape::surface_radius`).
pub fn surface_points(g: &Geometry, n: usize) -> Vec<Vector> {
    let golden = (1.0 + 5f64.sqrt()) / 2.0;
    (0..n)
        .map(|i| {
            let z = 1.0 - (2.0 * i as f64 + 1.0) / n as f64;
            let phi = std::f64::consts::TAU * i as f64 / golden;
            let s = (1.0 - z * z).sqrt();
            let u = [s * phi.cos(), s * phi.sin(), z];
            let r = g
                .surface_radius(u)
                .expect("every direction from the centre of mass meets the grain");
            Vector::new((u[0] * r) as f32, (u[1] * r) as f32, (u[2] * r) as f32)
        })
        .collect()
}

/// A uniformly random orientation from three uniform numbers in [0, 1) (Shoemake 1992,
/// "Uniform random rotations", Graphics Gems III).
pub fn uniform_rotation(u: [f32; 3]) -> Rotation {
    let tau = std::f32::consts::TAU;
    let (s1, s2) = ((1.0 - u[0]).sqrt(), u[0].sqrt());
    let (t1, t2) = (tau * u[1], tau * u[2]);
    Rotation::from_xyzw(s1 * t1.sin(), s1 * t1.cos(), s2 * t2.sin(), s2 * t2.cos()).normalize()
}

//! A discrete-element pour (rapier3d): spheres of the preset's grain poured from a spout into
//! the cup's real geometry (its inner profile revolved into a closed trimesh shell) or onto a
//! flat surface, with every contact *start* logged as a contact file (`docs/contacts.md`),
//! so that `granary render --collisions` renders the simulated pour.
//!
//! Frame and units (SI), the contact file's: origin at the centre of the cup's inner floor, z
//! up; the surface the cup stands on is the plane z = -(floor thickness). A pour onto the
//! surface has no cup and its surface at z = 0. The spout is a disc of the stream's radius
//! at `fall_height` above the rim (`depth + fall_height` above the floor, as the engine's
//! scene has it), `aim` of the way from the axis towards the wall; grains leave it downwards
//! at the spout's exit speed `sqrt(g D)` (D: the opening that passes the flow, Beverloo,
//! `stream::StreamParams`), spawned at the mass flow `pour_rate` (g/s) until the pour ends.
//!
//! Grains: spheres of the material's volume (`Scene::new`), or each material's own shape
//! (`Scene::own_shape`, `shapes`: rice, lentils, discs, beans, cubes, stones), free to turn,
//! spawned at uniformly random orientations, in a world measured in millimetres
//! (`SHAPED_UNIT_M`), their rolling resisted (`ROLLING_RESISTANCE`). A shaped grain lands,
//! bounces and comes to rest as a rigid body of its shape does (tests/shapes.rs), and its
//! heaps stand near the material's angle of repose but the lentils' (tests/repose.rs;
//! docs/dem.md, "Shaped grains"). `granary-dem` pours the grains' own shapes; the databank's
//! sweep stays on spheres (`bank::scene`).
//!
//! Choices (docs/dem.md says why): time step `DT_S`, `SOLVER_ITERATIONS` solver iterations,
//! rapier's CCD on every grain, a sphere's rotations locked (rapier has no rolling resistance:
//! free spheres roll on for ever and pile at a few degrees; real grains are not spheres and
//! interlock, so a sphere here slides and sticks by Coulomb friction alone), the length unit the grain's diameter, contact recycling off
//! (the log reads the narrow phase's fresh separations). Friction: the pair's dynamic
//! coefficient, the geometric mean of the two materials' mu_d (rapier's `GeometricMean` rule,
//! as `materials::FrictionPairData`); restitution: the grain's coefficient for every impact
//! (the cup and the surface carry 1 with the `Min` rule).

pub mod bank;
pub mod check;
pub mod shapes;
pub mod shards;

use granary_engine::base::materials::GRAVITY;
use granary_engine::base::materials::{FrictionMaterial, GrainMaterial};
use granary_engine::control::choices::Shape;
use granary_engine::derived::cups::Cup;
use granary_engine::pour::stream::StreamParams;
use granary_engine::statistics::logged::COLUMNS;
pub use granary_engine::statistics::logged::{Body, Contact};
use granary_engine::{PourTarget, Settings};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rapier3d::prelude::*;
use shapes::{uniform_rotation, GrainForm};
use std::collections::HashSet;
use std::io::Write;

/// Time step, s: 0.2 ms. A grain falling 0.3 m lands at 2.4 m/s and moves 0.5 mm a step
/// (its own diameter for sugar); CCD catches what moves further.
pub const DT_S: f32 = 2.0e-4;
/// Solver iterations per step (rapier's default is 4; piles need more to hold).
pub const SOLVER_ITERATIONS: usize = 8;
/// Natural frequency of rapier's soft contacts, Hz (a quarter of the solver's substep rate
/// `SOLVER_ITERATIONS / DT_S` would still be stable; Box2D's rule).
pub const CONTACT_HZ: f32 = 4000.0;
/// Segments of the cup's revolved profile around the axis (3 degrees each).
pub const REVOLVE_SEGMENTS: usize = 120;
/// Longest segment of the cup's profile before it is revolved, m.
pub const MAX_EDGE_M: f32 = 2.0e-3;
/// A pair counts as touching when its gap, less what the approach closes in the step, is
/// below this share of the grain's radius (rapier holds resting contacts within about 1 %).
pub const TOUCH_SLOP: f32 = 0.05;
/// Contacts slower than this are not written (inaudible, and the pile's creep), m/s.
pub const MIN_LOGGED_SPEED_M_S: f32 = 1.0e-3;
/// Spawning: tries for a place clear of the last `SPAWN_CHECK` grains spawned.
const SPAWN_TRIES: usize = 16;
const SPAWN_CHECK: usize = 64;
/// Speed cap, m/s (rapier's guard against bodies flung to absurd speeds).
pub const MAX_SPEED_M_S: f32 = 50.0;
/// A grain slower than this counts as settled, m/s.
pub const SETTLED_SPEED_M_S: f32 = 0.05;
/// Rolling resistance of a shaped grain's contacts, `mu_r` (`Sim::resist_rolling`): what its
/// smooth convex collider lacks of the real grain (a sugar crystal's chipped edges, a rice
/// grain's flattened, rough cross-section; rolling friction standing in for shape detail,
/// Wensrich & Katterfeld 2012, Powder Technology 217). Chosen so that poured heaps stand
/// near the materials' angle of repose: without it cubes of sugar piled at 18 degrees and
/// rice at 19 (about atan of their friction, 24 and 19), with 0.2 at 32 and 24 (the table: 35
/// and 32; tests/repose.rs). One value for every shape but the disc
/// (`GrainForm::resists_rolling`).
pub const ROLLING_RESISTANCE: f32 = 0.2;
/// The world's length unit for shaped grains, m: millimetres. parry's convex-shape queries
/// (GJK, EPA) hold absolute tolerances (`eps_tol` = 10 f32 epsilons, 1.2e-6 of the length
/// unit); in metres a millimetre grain is within them, and rice, lentils and discs of their
/// real sizes fell through the cup's mesh (docs/dem.md, "Shaped grains"). Spheres, whose
/// contacts are closed forms, stay in metres (the shipped databank's runs, bit for bit).
pub const SHAPED_UNIT_M: f32 = 1.0e-3;

/// The scene, from the settings.
#[derive(Debug, Clone, Copy)]
pub struct Scene {
    pub settings: Settings,
    /// The grains' equivalent-volume radius, m (a sphere's radius).
    pub grain_radius_m: f32,
    pub grain_density: f32,
    /// The grains' shape (`Scene::new`: spheres; `Scene::own_shape`: the material's).
    pub shape: Shape,
    /// One grain's mass, kg.
    pub grain_kg: f32,
    /// The cup (`None`: a pour onto the surface).
    pub cup: Option<Cup>,
    /// Height of the surface plane, m.
    pub surface_z_m: f32,
    /// Spout centre (x, y, z), m, and the radius of its disc, m.
    pub spout_m: [f32; 3],
    pub spout_radius_m: f32,
    /// Exit speed, m/s (downwards).
    pub exit_speed_m_s: f32,
    /// Mass flow, kg/s.
    pub flow_kg_s: f32,
    /// The grains' dynamic friction on each other (and, combined as a geometric mean, on
    /// the cup and the surface): the material's (`GrainMaterial::friction`), or another
    /// where the databank's sweep asks one (`with_friction`).
    pub grain_friction: f32,
}

impl Scene {
    pub fn new(settings: &Settings) -> Scene {
        let grain_size = settings.sanitized().grain_size;
        Scene::with_grain_size(settings, grain_size)
    }

    /// The scene of `settings` with grains `grain_size` times the material's diameter, even
    /// beyond the `grain_size` setting's range (an offline simulation is not bound by the
    /// plugin's: the databank's 4 mm sugar is 8 times the material's 0.5 mm). A size that is
    /// not a positive number takes the setting's.
    pub fn with_grain_size(settings: &Settings, grain_size: f32) -> Scene {
        let mut s = settings.sanitized();
        if grain_size.is_finite() && grain_size > 0.0 {
            s.grain_size = grain_size;
        }
        let a = s.grain_radius_m();
        let rho = s.grain_density();
        let grain_kg = rho * 4.0 / 3.0 * std::f32::consts::PI * a.powi(3);
        let cup = Cup::for_settings(&s);
        // the engine's stream: a few grains wide, at least 4 mm
        let spout_radius = (8.0 * a).max(0.004);
        let aim = s.aim.clamp(0.0, 1.0);
        let x = aim * (cup.rim_radius - spout_radius).max(0.0);
        let (cup, surface_z) = match s.pour_target {
            PourTarget::Cup => (Some(cup), -cup.floor_thickness),
            PourTarget::Surface => (None, 0.0),
        };
        Scene {
            settings: s,
            grain_radius_m: a,
            grain_density: rho,
            shape: Shape::Sphere,
            grain_kg,
            cup,
            surface_z_m: surface_z,
            spout_m: [x, 0.0, Cup::for_settings(&s).depth + s.fall_height_m],
            spout_radius_m: spout_radius,
            exit_speed_m_s: 0.0,
            flow_kg_s: 0.0,
            grain_friction: s.grain_material.friction(),
        }
        .with_flow(s.pour_rate_g_s * 1e-3)
    }

    /// The same scene with the spout pouring `flow_kg_s`, even beyond the `pour_rate`
    /// setting's range (`bank::similar_scene`: a pour in a larger cup pours more), and the
    /// stream's exit speed for it: sqrt(g D), D the spout's diameter for the flow
    /// (`stream::StreamParams`).
    pub fn with_flow(mut self, flow_kg_s: f32) -> Scene {
        let stream = StreamParams::new(
            0.0,
            flow_kg_s,
            &self.settings.grain_material.data(),
            self.grain_radius_m,
            self.grain_density,
        );
        self.exit_speed_m_s = (GRAVITY * stream.spout_m).sqrt();
        self.flow_kg_s = flow_kg_s;
        self
    }

    /// The same scene with grains of `shape` (of the same volume and mass).
    pub fn with_shape(mut self, shape: Shape) -> Scene {
        self.shape = shape;
        self
    }

    /// The same scene with the grain material's own shape (`Shape::of`).
    pub fn own_shape(self) -> Scene {
        let shape = Shape::of(self.settings.grain_material);
        self.with_shape(shape)
    }

    /// The top of the pre-filled bed, m above the floor: the `fill` setting's share of the
    /// cup's depth (`None` for an empty cup or a pour onto the surface). The engine's pile
    /// is at the same height (`scene::PourScene`: `fill` times the depth).
    pub fn bed_top_m(&self) -> Option<f32> {
        let cup = self.cup?;
        let fill = self.settings.fill.clamp(0.0, 1.0);
        (fill > 0.0).then_some(fill * cup.depth)
    }

    /// The same scene with grains of friction `mu` on each other (a friction of the
    /// databank's sweep that no material of the table has: `bank::GRAINS`' friction).
    pub fn with_friction(mut self, mu: f32) -> Scene {
        self.grain_friction = mu;
        self
    }

    pub fn grain_material(&self) -> GrainMaterial {
        self.settings.grain_material
    }

    /// The material id written for a body.
    pub fn material_id(&self, body: Body) -> &'static str {
        match body {
            Body::Grain => self.settings.grain_material.id(),
            Body::Cup => self.settings.cup_material.id(),
            Body::Surface => self.settings.surface_material.id(),
        }
    }
}

/// Where the grains are (`Sim::census`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Census {
    pub spawned: usize,
    /// Settled inside the cup (or, onto the surface, in the heap).
    pub in_cup: usize,
    /// Still moving.
    pub in_flight: usize,
    /// Settled outside the cup, on the surface.
    pub spilled: usize,
    /// Where no grain can be: under the surface, through the cup's floor or wall.
    pub lost: usize,
}

/// The revolved cup: a closed shell (inner profile, rim, outer profile offset by the wall's
/// thickness, outer bottom) around the z axis, `segments` segments, the profile cut into
/// pieces of at most `MAX_EDGE_M`. Vertices and triangles.
pub fn cup_mesh(cup: &Cup, segments: usize) -> (Vec<Vector>, Vec<[u32; 3]>) {
    let inner = cup.profile();
    let w = cup.wall_thickness;
    // the closed profile (r, z): inner floor from the axis out and up the wall, the rim, the
    // outer wall down, the outer bottom back to the axis
    let mut profile: Vec<[f32; 2]> = inner.to_vec();
    for p in inner[1..].iter().rev() {
        profile.push([p[0] + w, p[1]]);
    }
    profile.push([cup.floor_radius + w, -cup.floor_thickness]);
    profile.push([0.0, -cup.floor_thickness]);
    // no segment longer than `MAX_EDGE_M`: the floor would otherwise be a fan of slivers
    // 3 degrees wide meeting on the axis
    let mut fine = vec![profile[0]];
    for pair in profile.windows(2) {
        let ([r0, z0], [r1, z1]) = (pair[0], pair[1]);
        let n = ((r1 - r0).hypot(z1 - z0) / MAX_EDGE_M).ceil().max(1.0) as usize;
        for k in 1..=n {
            let t = k as f32 / n as f32;
            fine.push([r0 + (r1 - r0) * t, z0 + (z1 - z0) * t]);
        }
    }
    let profile = fine;
    let mut vertices = Vec::new();
    // a ring of `segments` vertices per profile point, one vertex for a point on the axis
    let mut rings: Vec<Vec<u32>> = Vec::new();
    for &[r, z] in &profile {
        if r <= 1e-9 {
            vertices.push(Vector::new(0.0, 0.0, z));
            rings.push(vec![(vertices.len() - 1) as u32; segments]);
        } else {
            let start = vertices.len() as u32;
            for k in 0..segments {
                let a = std::f32::consts::TAU * k as f32 / segments as f32;
                vertices.push(Vector::new(r * a.cos(), r * a.sin(), z));
            }
            rings.push((start..start + segments as u32).collect());
        }
    }
    let mut triangles = Vec::new();
    for w in rings.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        for k in 0..segments {
            let k1 = (k + 1) % segments;
            let quad = [a[k], a[k1], b[k1], b[k]];
            for t in [[quad[0], quad[1], quad[2]], [quad[0], quad[2], quad[3]]] {
                if t[0] != t[1] && t[1] != t[2] && t[0] != t[2] {
                    triangles.push(t);
                }
            }
        }
    }
    (vertices, triangles)
}

/// A pour in progress.
pub struct Sim {
    pub scene: Scene,
    /// Metres per length unit of `world` (1, or `SHAPED_UNIT_M` for shaped grains); what
    /// `Sim` gives and takes is in metres.
    pub unit_m: f32,
    /// The grains' collider and extents (`shapes`).
    pub form: GrainForm,
    pub world: PhysicsWorld,
    grains: Vec<RigidBodyHandle>,
    /// What each collider is (indexed by the collider handle's index).
    kinds: Vec<Option<Body>>,
    touching: HashSet<(ColliderHandle, ColliderHandle)>,
    pub contacts: Vec<Contact>,
    /// Beside each contact: the vertical velocities of its two bodies before the step, m/s
    /// (the grain's, the other's; 0 for a fixed body). The databank's reduction tells the
    /// falling stream's collisions by them (`bank`).
    pub falling: Vec<[f32; 2]>,
    /// Beside each contact: when the younger poured grain of the two left the spout, s (the
    /// databank's lifetime profile counts a contact by the time since its grain arrived,
    /// `bank::reduce`).
    pub born_s: Vec<f64>,
    /// When each poured grain left the spout, s (indexed by the body handle's index; NaN
    /// for a body that is not a poured grain).
    born: Vec<f64>,
    /// Grains of the pre-filled bed (`Scene::bed_top_m`): fixed, one layer.
    pub bed_grains: usize,
    /// Time, s.
    pub time_s: f64,
    /// Grains owed to the flow (fractional), and until when the spout pours, s.
    owed: f64,
    pub pour_until_s: f64,
    rng: Xoshiro256PlusPlus,
}

impl Sim {
    /// The scene with nothing poured yet; the spout pours for `pour_s` seconds.
    pub fn new(scene: Scene, pour_s: f64) -> Sim {
        let unit = if scene.shape == Shape::Sphere {
            1.0
        } else {
            SHAPED_UNIT_M
        };
        let mut world = PhysicsWorld::new();
        world.gravity = Vector::new(0.0, 0.0, -GRAVITY / unit);
        let p = &mut world.integration_parameters;
        p.dt = DT_S;
        p.num_solver_iterations = SOLVER_ITERATIONS;
        p.length_unit = 2.0 * scene.grain_radius_m / unit;
        p.contact_recycling = false;
        // stiff contacts: rapier's soft contacts (30 Hz, 60 Hz against fixed bodies) sink a
        // grain under a column of n grains by n g / (2 pi f)^2, half a radius under a heap of
        // a few grains; at `CONTACT_HZ` a column of 100 sinks 1.6 um. A dense, fast stream
        // still presses grains into what it lands on (docs/dem.md)
        p.contact_softness.natural_frequency = CONTACT_HZ;
        p.static_contact_softness.natural_frequency = CONTACT_HZ;
        // rapier caps speeds at 400 length units a second (0.2 m/s for sugar): a fall is faster
        p.normalized_max_linear_velocity = MAX_SPEED_M_S / unit / p.length_unit;
        let mut sim = Sim {
            scene,
            unit_m: unit,
            form: GrainForm::new(scene.shape, scene.grain_radius_m, unit),
            world,
            grains: Vec::new(),
            kinds: Vec::new(),
            touching: HashSet::new(),
            contacts: Vec::new(),
            falling: Vec::new(),
            born_s: Vec::new(),
            born: Vec::new(),
            bed_grains: 0,
            time_s: 0.0,
            owed: 0.0,
            pour_until_s: pour_s,
            rng: Xoshiro256PlusPlus::seed_from_u64(scene.settings.seed),
        };
        let mu = |m: FrictionMaterial| m.friction_surface().mu_dynamic;
        let s = scene.settings;
        let surface = ColliderBuilder::new(SharedShape::halfspace(Vector::Z))
            .translation(Vector::new(0.0, 0.0, scene.surface_z_m / unit))
            .friction(mu(FrictionMaterial::Surface(s.surface_material)))
            .friction_combine_rule(CoefficientCombineRule::GeometricMean)
            .restitution(1.0)
            .restitution_combine_rule(CoefficientCombineRule::Min)
            .build();
        let h = sim.world.colliders.insert(surface);
        sim.set_kind(h, Body::Surface);
        if let Some(cup) = scene.cup {
            let (v, t) = cup_mesh(&cup, REVOLVE_SEGMENTS);
            let v = v.into_iter().map(|x| x / unit).collect();
            let collider = ColliderBuilder::trimesh(v, t)
                .expect("the revolved cup is a valid mesh")
                .friction(mu(FrictionMaterial::Cup(s.cup_material)))
                .friction_combine_rule(CoefficientCombineRule::GeometricMean)
                .restitution(1.0)
                .restitution_combine_rule(CoefficientCombineRule::Min)
                .build();
            let h = sim.world.colliders.insert(collider);
            sim.set_kind(h, Body::Cup);
            if let Some(top) = scene.bed_top_m() {
                sim.add_bed(&cup, top);
            }
        }
        sim
    }

    /// The pre-filled bed: one layer of fixed grains, hexagonally packed, their tops at
    /// `top` m above the floor, inside the cup's cross-section there. A layer is enough for
    /// what lands on it: the poured grains meet grains (grain-grain contacts, the grain's
    /// restitution and friction) at the fill height, and a close-packed layer lets none
    /// through. What the bed below does (its own settling) is not simulated. The bed's grains
    /// are spheres of the grains' volume whatever their shape (a packed layer of shaped grains
    /// would need settling to be a bed).
    fn add_bed(&mut self, cup: &Cup, top: f32) {
        let a = self.scene.grain_radius_m;
        let z = top - a;
        // out to the wall at the bed's top and half a radius into it: the outermost grains
        // leave no gap a grain could fall through, whatever the wall's slope (a bowl's wall
        // widens by a few radii over a grain's height; kept clear of it, the bed left a ring
        // of gap that glass beads fell through to the floor). Fixed grains inside the fixed
        // wall touch nothing
        let reach = cup.radius_at(top) + 0.5 * a;
        let body = self.world.bodies.insert(RigidBodyBuilder::fixed());
        let g = self.scene.grain_material();
        let row = 3f32.sqrt() * a;
        let rows = (reach / row).floor() as i32;
        for j in -rows..=rows {
            let y = j as f32 * row;
            let shift = if j.rem_euclid(2) == 1 { a } else { 0.0 };
            let cols = ((reach + a) / (2.0 * a)).ceil() as i32 + 1;
            for i in -cols..=cols {
                let x = i as f32 * 2.0 * a + shift;
                if x.hypot(y) > reach {
                    continue;
                }
                let u = self.unit_m;
                let collider = ColliderBuilder::ball(a / u)
                    .translation(Vector::new(x, y, z) / u)
                    .friction(self.scene.grain_friction)
                    .friction_combine_rule(CoefficientCombineRule::GeometricMean)
                    .restitution(g.data().restitution)
                    .restitution_combine_rule(CoefficientCombineRule::Min)
                    .build();
                let h = self
                    .world
                    .colliders
                    .insert_with_parent(collider, body, &mut self.world.bodies);
                self.set_kind(h, Body::Grain);
                self.bed_grains += 1;
            }
        }
    }

    fn set_kind(&mut self, h: ColliderHandle, body: Body) {
        let i = h.into_raw_parts().0 as usize;
        if self.kinds.len() <= i {
            self.kinds.resize(i + 1, None);
        }
        self.kinds[i] = Some(body);
    }

    fn kind(&self, h: ColliderHandle) -> Option<Body> {
        self.kinds.get(h.into_raw_parts().0 as usize).copied().flatten()
    }

    /// Adds a grain at `position` with velocity `velocity` (m, m/s); a shaped grain at a
    /// uniformly random orientation (three draws of the scene's stream), a sphere with its
    /// rotations locked.
    pub fn spawn_grain(&mut self, position: [f32; 3], velocity: [f32; 3]) -> RigidBodyHandle {
        let sc = &self.scene;
        let g = sc.grain_material();
        let u = self.unit_m;
        let body = RigidBodyBuilder::dynamic()
            .translation(Vector::from(position) / u)
            .linvel(Vector::from(velocity) / u)
            .ccd_enabled(true);
        let (body, collider) = if self.form.turns() {
            let q = uniform_rotation([self.rng.random(), self.rng.random(), self.rng.random()]);
            let collider = ColliderBuilder::new(self.form.collider.clone()).mass(sc.grain_kg);
            let body = body.pose(Pose::from_parts(Vector::from(position) / u, q));
            (body, collider)
        } else {
            (
                body.lock_rotations(),
                ColliderBuilder::ball(sc.grain_radius_m).density(sc.grain_density),
            )
        };
        let collider = collider
            .friction(sc.grain_friction)
            .friction_combine_rule(CoefficientCombineRule::GeometricMean)
            .restitution(g.data().restitution)
            .restitution_combine_rule(CoefficientCombineRule::Min);
        let (b, c) = self.world.insert(body, collider);
        self.set_kind(c, Body::Grain);
        self.grains.push(b);
        let i = b.into_raw_parts().0 as usize;
        if self.born.len() <= i {
            self.born.resize(i + 1, f64::NAN);
        }
        self.born[i] = self.time_s;
        b
    }

    /// Where the body `h`'s origin is, m: the grain's centre of mass (a shaped grain's
    /// collider, a convex hull, has its own a hair off it: `RigidBody::center_of_mass`).
    pub fn position_m(&self, h: RigidBodyHandle) -> Vector {
        self.world.bodies[h].translation() * self.unit_m
    }

    /// How fast the body `h` moves, m/s.
    pub fn velocity_m_s(&self, h: RigidBodyHandle) -> Vector {
        self.world.bodies[h].linvel() * self.unit_m
    }

    /// The grains' handles, in the order they were spawned.
    pub fn grains(&self) -> &[RigidBodyHandle] {
        &self.grains
    }

    /// Spawns what the flow owes this step: uniformly over the spout's disc, downwards at the
    /// exit speed.
    fn pour(&mut self) {
        if self.time_s >= self.pour_until_s || self.scene.flow_kg_s <= 0.0 {
            return;
        }
        self.owed += (self.scene.flow_kg_s / self.scene.grain_kg) as f64 * DT_S as f64;
        let (c, r, v) = (self.scene.spout_m, self.scene.spout_radius_m, self.scene.exit_speed_m_s);
        let a = self.scene.grain_radius_m;
        let clearance = 2.05 * self.form.bounding_m;
        while self.owed >= 1.0 {
            self.owed -= 1.0;
            // uniform over the disc; a random height within one step's travel, so grains
            // spawned in the same step do not start level
            // (a grain is not spawned overlapping one of the last spawned: a few tries)
            let mut p = Vector::ZERO;
            for _ in 0..SPAWN_TRIES {
                let rr = (r - a).max(0.0) * self.rng.random::<f32>().sqrt();
                let th = std::f32::consts::TAU * self.rng.random::<f32>();
                let dz = v * DT_S * self.rng.random::<f32>() + 2.5 * a * self.rng.random::<f32>();
                p = Vector::new(c[0] + rr * th.cos(), c[1] + rr * th.sin(), c[2] + dz);
                let clear = self
                    .grains
                    .iter()
                    .rev()
                    .take(SPAWN_CHECK)
                    .all(|&h| (self.position_m(h) - p).length() > clearance);
                if clear {
                    break;
                }
            }
            self.spawn_grain(p.into(), [0.0, 0.0, -v]);
        }
    }

    /// One step: pour, step the world, log the contacts that started.
    pub fn step(&mut self) {
        self.pour();
        // the bodies' state before the solver acts on it, in metres: the centre of mass (a
        // shaped grain's collider's, which its velocity is of: a hull's is a hair off the
        // shape's), its velocity and spin
        let u = self.unit_m;
        let turns = self.form.turns();
        let before: Vec<(Vector, Vector, Vector)> = self
            .world
            .bodies
            .iter()
            .map(|(_, b)| {
                let x = if turns { b.center_of_mass() } else { b.translation() };
                (x * u, b.linvel() * u, b.angvel())
            })
            .collect();
        let poses: Vec<Pose> = if self.form.turns() {
            self.world.bodies.iter().map(|(_, b)| *b.position()).collect()
        } else {
            Vec::new()
        };
        let index: std::collections::HashMap<RigidBodyHandle, usize> =
            self.world.bodies.iter().enumerate().map(|(i, (h, _))| (h, i)).collect();
        self.world.step();
        if self.form.resists_rolling() {
            self.resist_rolling();
        }
        let g = self.world.gravity * u;
        let dt = DT_S;
        let a = self.scene.grain_radius_m;
        let slop = TOUCH_SLOP * a;
        let mut now = HashSet::new();
        for pair in self.world.narrow_phase.contact_pairs() {
            let (c1, c2) = (pair.collider1, pair.collider2);
            let (Some(k1), Some(k2)) = (self.kind(c1), self.kind(c2)) else {
                continue;
            };
            // the grain is body 1 of the logged pair (the first grain of two)
            let dynamic = |c: ColliderHandle| {
                self.world.colliders[c]
                    .parent()
                    .is_some_and(|b| self.world.bodies[b].is_dynamic())
            };
            // a poured grain on the pre-filled bed's fixed grains is the poured grain's contact
            let (grain_c, other_c, other, flip) = if k1 == Body::Grain && (k2 != Body::Grain || dynamic(c1)) {
                (c1, c2, k2, false)
            } else if k2 == Body::Grain {
                (c2, c1, k1, true)
            } else {
                continue;
            };
            // the deepest point of the pair's manifolds, on the grain's surface in its own
            // frame (collider 1's point when the grain is collider 1)
            let mut best: Option<(f32, Vector, Vector)> = None;
            for m in pair.manifolds() {
                // rapier's normal points from collider 1 to collider 2: towards the grain
                // when the grain is collider 2
                let n = if flip { m.data.normal } else { -m.data.normal };
                for p in &m.points {
                    if best.is_none_or(|(d, _, _)| p.dist < d) {
                        best = Some((p.dist, n, if flip { p.local_p2 } else { p.local_p1 }));
                    }
                }
            }
            let Some((dist, n, local)) = best else { continue };
            let dist = dist * u;
            let state = |c: ColliderHandle| {
                self.world.colliders[c]
                    .parent()
                    .and_then(|b| index.get(&b).map(|&i| (before[i], self.world.bodies[b].is_dynamic())))
            };
            let Some(((x, v, w), _)) = state(grain_c) else {
                continue;
            };
            // a sphere touches a radius from its centre against the normal (exact, and the
            // shipped databank's), a shaped grain where the narrow phase found the point
            // (its collider sits at its body's origin: the body's pose before the step)
            let point = match self.world.colliders[grain_c].parent() {
                Some(b) if self.form.turns() => index
                    .get(&b)
                    .map_or(x - n * a, |&i| poses[i].transform_point(local) * u),
                _ => x - n * a,
            };
            let vel_at = |st: Option<((Vector, Vector, Vector), bool)>, p: Vector| match st {
                Some(((xo, vo, wo), dynamic)) => (vo + wo.cross(p - xo), dynamic),
                None => (Vector::ZERO, false),
            };
            let (v_grain, _) = vel_at(Some(((x, v, w), true)), point);
            let (v_other, other_dynamic) = vel_at(state(other_c), point);
            let approach = (v_other - v_grain).dot(n);
            if dist > slop + approach.max(0.0) * dt {
                continue;
            }
            let key = (c1, c2);
            now.insert(key);
            if self.touching.contains(&key) {
                continue;
            }
            // the start: when the approach closes the gap within the step, both bodies in
            // free flight until then (gravity acts on a dynamic body's speed)
            let tau = if dist > 0.0 && approach > 0.0 {
                (dist / approach).min(dt)
            } else {
                0.0
            };
            let rel_g = if other_dynamic { Vector::ZERO } else { -g };
            let speed = approach + rel_g.dot(n) * tau;
            if speed < MIN_LOGGED_SPEED_M_S {
                continue;
            }
            let p = point + v * tau + 0.5 * g * tau * tau;
            let p = if other == Body::Grain {
                // half-way between the two surfaces
                p - n * (0.5 * dist.max(0.0))
            } else {
                p
            };
            self.falling
                .push([v.z, state(other_c).map_or(0.0, |((_, vo, _), _)| vo.z)]);
            // the younger poured grain of the two (a fixed bed grain or the cup has no birth)
            let born = |c: ColliderHandle| {
                self.world.colliders[c]
                    .parent()
                    .and_then(|b| self.born.get(b.into_raw_parts().0 as usize).copied())
                    .unwrap_or(f64::NAN)
            };
            self.born_s.push(born(grain_c).max(born(other_c)));
            self.contacts.push(Contact {
                time_s: self.time_s + tau as f64,
                position_m: p.into(),
                normal: n.into(),
                speed_m_s: speed,
                other,
            });
        }
        self.touching = now;
        self.time_s += dt as f64;
    }

    /// Rolling resistance (Ai, Chen, Rotter & Ooi 2011, "Assessment of rolling resistance
    /// models in discrete element simulations", Powder Technology 206, model A): each contact
    /// resists a grain's turning with a torque `mu_r R F_n` against its spin, `R` the grain's
    /// equivalent radius, `F_n` the contact's normal force and `mu_r` = `ROLLING_RESISTANCE`.
    /// Applied after the step as the step's torque impulse (`F_n dt` is the contact's normal
    /// impulse), against the grain's own spin rather than the pair's relative one (the same at
    /// rest, where it matters); it slows the spin, never reverses its component along itself
    /// (with unequal moments of inertia the impulse's change of spin is not quite along it).
    fn resist_rolling(&mut self) {
        let lever = ROLLING_RESISTANCE * self.scene.grain_radius_m / self.unit_m;
        let mut budget: std::collections::HashMap<RigidBodyHandle, f32> = std::collections::HashMap::new();
        for pair in self.world.narrow_phase.contact_pairs() {
            // the solver's manifolds: a pair of several (a grain on two of the cup's
            // triangles) is solved as their cluster, whose impulses the plain ones lack
            let jn = pair.total_impulse_magnitude();
            if jn <= 0.0 {
                continue;
            }
            for c in [pair.collider1, pair.collider2] {
                if let Some(b) = self.world.colliders[c].parent() {
                    if self.world.bodies[b].is_dynamic() {
                        *budget.entry(b).or_insert(0.0) += lever * jn;
                    }
                }
            }
        }
        for (h, t) in budget {
            let b = &mut self.world.bodies[h];
            let w = b.angvel();
            let speed = w.length();
            if speed <= 0.0 {
                continue;
            }
            let dw = b.mass_properties().effective_world_inv_inertia * (-w / speed * t);
            let along = -dw.dot(w) / speed;
            let new = if along >= speed { Vector::ZERO } else { w + dw };
            b.set_angvel(new, false);
        }
    }

    /// Steps until `until_s`.
    pub fn run_until(&mut self, until_s: f64) {
        while self.time_s + 0.5 * DT_S as f64 <= until_s {
            self.step();
        }
    }

    /// Whether `p` is inside the cup's inner volume (a grain's radius of tolerance).
    fn inside_cup(&self, p: Vector) -> bool {
        let Some(cup) = self.scene.cup else { return false };
        let a = self.scene.grain_radius_m;
        let r = p.x.hypot(p.y);
        p.z > -a && p.z < cup.depth + 0.05 && r < cup.radius_at(p.z) + a
    }

    /// Whether a grain at `p` is where none can be: below the surface, in the cup's floor or
    /// wall, or beneath the cup.
    fn impossible(&self, p: Vector) -> bool {
        let a = self.scene.grain_radius_m;
        if p.z < self.scene.surface_z_m + 0.5 * self.form.min_half_m {
            return true;
        }
        if let Some(cup) = self.scene.cup {
            let r = p.x.hypot(p.y);
            let outer = cup.radius_at(p.z.max(0.0)) + cup.wall_thickness;
            if p.z < cup.depth && p.z > self.scene.surface_z_m && r < outer + 0.5 * a && !self.inside_cup(p) {
                // under the rim, within the wall's outer radius, not inside: in the wall or the
                // floor (a grain resting against the outside of the wall is a radius out)
                return r > cup.radius_at(p.z) + 0.5 * a || p.z < -0.5 * a;
            }
        }
        false
    }

    /// Where the grains are.
    pub fn census(&self) -> Census {
        let mut c = Census {
            spawned: self.grains.len(),
            ..Census::default()
        };
        for &h in &self.grains {
            let p = self.position_m(h);
            if self.impossible(p) {
                c.lost += 1;
            } else if self.velocity_m_s(h).length() > SETTLED_SPEED_M_S {
                c.in_flight += 1;
            } else if self.scene.cup.is_none() || self.inside_cup(p) {
                c.in_cup += 1;
            } else {
                c.spilled += 1;
            }
        }
        c
    }

    /// Positions of the grains that are where none can be (`Census::lost`), m.
    pub fn lost_positions(&self) -> Vec<[f32; 3]> {
        self.grains
            .iter()
            .map(|&h| self.position_m(h))
            .filter(|&p| self.impossible(p))
            .map(Into::into)
            .collect()
    }

    /// Contacts a second by the other body's kind over `seconds` (grain, cup, surface).
    pub fn rates(&self, seconds: f64) -> [f64; 3] {
        let mut n = [0usize; 3];
        for c in &self.contacts {
            n[c.other as usize] += 1;
        }
        n.map(|k| k as f64 / seconds.max(1e-9))
    }

    /// Writes the log as a contact file (docs/contacts.md), sorted by time.
    pub fn write_contacts(&self, out: impl Write) -> csv::Result<()> {
        let mut rows = self.contacts.clone();
        // a start the step could not place (the pair already touching at the step's start, or
        // not approaching) sits on the step's grid: thousands of them a second at exactly
        // 0.2 ms apart would ring as a 5 kHz line and its harmonics in the render (the
        // simulation's comb, not the pour's). Each is spread uniformly over the step before
        // it, in which it started, by a hash of its place in the log (deterministic)
        let dt = DT_S as f64;
        for (i, c) in rows.iter_mut().enumerate() {
            let steps = c.time_s / dt;
            if (steps - steps.round()).abs() < 1e-6 {
                c.time_s = (c.time_s - dt * unit_hash(i as u64 ^ self.scene.settings.seed.rotate_left(32))).max(0.0);
            }
        }
        rows.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
        let mut w = csv::Writer::from_writer(out);
        w.write_record(COLUMNS)?;
        for c in &rows {
            let [x, y, z] = c.position_m;
            let [nx, ny, nz] = c.normal;
            w.write_record([
                format!("{:.7}", c.time_s),
                format!("{x:.6}"),
                format!("{y:.6}"),
                format!("{z:.6}"),
                format!("{nx:.5}"),
                format!("{ny:.5}"),
                format!("{nz:.5}"),
                format!("{:.5}", c.speed_m_s),
                Body::Grain.name().into(),
                self.scene.material_id(Body::Grain).into(),
                c.other.name().into(),
                self.scene.material_id(c.other).into(),
            ])?;
        }
        w.flush()?;
        Ok(())
    }
}

/// A number in [0, 1) from `x` (SplitMix64's finaliser): deterministic, well spread.
fn unit_hash(x: u64) -> f64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

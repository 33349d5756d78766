//! The live scene: the spout and the falling stream, the cup in section with its current
//! fill standing on the surface (a band in the surface material's colour, named), and a
//! flash at each generator cell when collisions happen there, coloured by kind (grain–grain,
//! grain–cup or grain–surface). A full cup's overflow runs over its rim onto the surface
//! beside it. In a pour onto the surface there is no cup: the heap grows on the ground, a
//! cone of the engine's height and base radius. Everything comes from the telemetry
//! snapshot and the parameters; nothing here touches the audio thread. The cup is the
//! engine's `Cup` (the shape's finite-element asset at the `cup_size`): a bowl draws as a
//! bowl. The gesture shows as the engine reports it (`GestureView`): the cup turned by its
//! tilt with the grains' surface at the bed's slope, the spoon on its circle at its depth
//! while stirring, the closed cup moved sideways while shaken, an avalanche marked on the
//! heap while one runs, and the gesture named at the top right.

use super::meters::{cell_kind, Flashes};
use crate::telemetry::Snapshot;
use egui::{pos2, vec2, Align2, Color32, FontId, Pos2, Rect, Stroke};
use granary_engine::base::materials::{CupMaterial, SurfaceMaterial};
use granary_engine::base::window::{Cell, CollisionKind, CELLS};
use granary_engine::control::choices::Gesture;
use granary_engine::derived::cups::Cup;
use granary_engine::pour::gesture::{GestureView, SPOON_CIRCLE_SHARE, SPOON_WIDTH_M};

pub const GRAIN_GRAIN: Color32 = Color32::from_rgb(255, 185, 60);
pub const GRAIN_CUP: Color32 = Color32::from_rgb(70, 205, 255);
/// Collisions on the surface the cup stands on (spills) or that a pour lands on.
pub const GRAIN_SURFACE: Color32 = Color32::from_rgb(120, 220, 120);
/// The spoon, and the mark of an avalanche under way.
pub const SPOON: Color32 = Color32::from_rgb(196, 200, 210);
pub const AVALANCHE: Color32 = Color32::from_rgb(255, 120, 200);

/// What the view draws besides the snapshot.
pub struct SceneInfo {
    /// Spout height above the rim, m (the `fall_height` parameter).
    pub fall_height_m: f32,
    /// The cup the parameters describe (`Cup::for_settings`, as the engine builds it).
    pub cup: Cup,
    /// Grain colour (from the grain material).
    pub grain_colour: Color32,
    /// The cup's material (its colour and its name in the label).
    pub cup_material: CupMaterial,
    /// What the cup stands on, or the ground of a pour onto the surface (its colour and name).
    pub surface_material: SurfaceMaterial,
    /// Tangent of the grains' angle of repose (the heap's slope; the scene's width holds
    /// the heap of a full cup).
    pub repose_tan: f32,
    /// Seconds since the editor opened (animates the stream).
    pub time_s: f64,
}

/// A display colour for each grain material (index of `GrainMaterial::ALL`).
pub fn grain_colour(material: usize) -> Color32 {
    const COLOURS: [Color32; 12] = [
        Color32::from_rgb(240, 236, 225), // sugar
        Color32::from_rgb(225, 230, 235), // salt
        Color32::from_rgb(214, 184, 128), // fine sand
        Color32::from_rgb(236, 226, 196), // rice
        Color32::from_rgb(214, 120, 60),  // lentils
        Color32::from_rgb(120, 74, 44),   // coffee beans
        Color32::from_rgb(170, 215, 225), // glass beads 0.5 mm
        Color32::from_rgb(170, 215, 225), // glass beads 1 mm
        Color32::from_rgb(170, 215, 225), // glass beads 2 mm
        Color32::from_rgb(160, 165, 172), // steel shot
        Color32::from_rgb(220, 80, 90),   // plastic discs
        Color32::from_rgb(140, 138, 130), // gravel
    ];
    COLOURS.get(material).copied().unwrap_or(Color32::GRAY)
}

/// A display colour for each cup material.
pub fn cup_colour(material: CupMaterial) -> Color32 {
    match material {
        CupMaterial::Ceramic => Color32::from_rgb(214, 200, 178),
        CupMaterial::Porcelain => Color32::from_rgb(242, 242, 248),
        CupMaterial::Glass => Color32::from_rgb(150, 215, 230),
        CupMaterial::Steel => Color32::from_rgb(160, 168, 178),
        CupMaterial::Aluminium => Color32::from_rgb(200, 204, 210),
        CupMaterial::Plastic => Color32::from_rgb(80, 150, 230),
        CupMaterial::Wood => Color32::from_rgb(160, 110, 64),
    }
}

/// A display colour for each surface material.
pub fn surface_colour(material: SurfaceMaterial) -> Color32 {
    match material {
        SurfaceMaterial::Steel => Color32::from_rgb(120, 128, 140),
        SurfaceMaterial::Ceramic => Color32::from_rgb(200, 196, 188),
        SurfaceMaterial::Granite => Color32::from_rgb(150, 126, 126),
        SurfaceMaterial::Concrete => Color32::from_rgb(140, 140, 134),
        SurfaceMaterial::Wood => Color32::from_rgb(150, 104, 62),
        SurfaceMaterial::Plastic => Color32::from_rgb(225, 225, 215),
        SurfaceMaterial::Soil => Color32::from_rgb(96, 70, 46),
        SurfaceMaterial::Wax => Color32::from_rgb(236, 222, 170),
        SurfaceMaterial::WoodTable => Color32::from_rgb(170, 118, 70),
        SurfaceMaterial::MdfShelf => Color32::from_rgb(184, 150, 110),
        SurfaceMaterial::GlassTable => Color32::from_rgb(170, 205, 200),
        SurfaceMaterial::SteelTray => Color32::from_rgb(160, 166, 176),
        SurfaceMaterial::CeramicTile => Color32::from_rgb(214, 210, 200),
    }
}

/// The label of a pour onto the surface: the ground and the heap's size (height x base
/// diameter).
pub fn heap_label(surface: SurfaceMaterial, height_m: f32, radius_m: f32) -> String {
    format!(
        "Heap on {} · {:.0} x {:.0} mm",
        surface.data().name.to_lowercase(),
        1e3 * height_m,
        2e3 * radius_m
    )
}

/// The heap on the ground holding `fill` cups of grains, as the engine builds it
/// (`granary_engine::pour::scene::heap`). Returns (height, base radius), m.
pub fn heap_at(fill: f32, cup: &Cup, repose_tan: f32) -> (f32, f32) {
    granary_engine::pour::scene::heap(fill, cup, repose_tan)
}

/// Spilled grains land on the surface this many widest inner radii from the cup's axis
/// (where the engine's `Cell::Surface` flashes beside the cup).
pub const SPILL_AT: f32 = 1.25;

/// How the cup stands: turned clockwise by the tilt (the low rim on the right) about the
/// middle of its axis, lifted so that no part of it goes below the ground, and moved sideways
/// by a shake. Maps the cup's own frame (x across from its axis, z up from its floor, m) to
/// the scene's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    pub tilt_rad: f32,
    /// The point the cup turns about, in its own frame, m.
    pub centre: [f32; 2],
    /// Where that point goes in the scene, m.
    pub at: [f32; 2],
}

impl Pose {
    /// The cup standing upright where it stands.
    pub const UPRIGHT: Pose = Pose {
        tilt_rad: 0.0,
        centre: [0.0, 0.0],
        at: [0.0, 0.0],
    };

    /// The cup of `view` (tilted, shaken), or upright (pour, stir).
    pub fn of(view: &GestureView, cup: &Cup) -> Pose {
        let tilt = if view.tilt_rad.is_finite() {
            view.tilt_rad.clamp(-std::f32::consts::PI, std::f32::consts::PI)
        } else {
            0.0
        };
        let shake = if view.shake_offset_m.is_finite() {
            view.shake_offset_m.clamp(-cup.widest_radius(), cup.widest_radius())
        } else {
            0.0
        };
        let centre = [0.0, 0.5 * cup.depth];
        let turned = Pose {
            tilt_rad: tilt,
            centre,
            at: centre,
        };
        // lifted off the ground by as much as the turned section went below it
        let low = section(cup)
            .into_iter()
            .map(|q| turned.apply(q)[1])
            .fold(0.0f32, f32::min);
        Pose {
            at: [shake, centre[1] - low],
            ..turned
        }
    }

    /// A point of the cup's frame in the scene.
    pub fn apply(&self, [x, z]: [f32; 2]) -> [f32; 2] {
        let (sin, cos) = self.tilt_rad.sin_cos();
        let (dx, dz) = (x - self.centre[0], z - self.centre[1]);
        [self.at[0] + dx * cos + dz * sin, self.at[1] - dx * sin + dz * cos]
    }
}

/// The spoon while stirring, in the cup's frame (m): seen from the side, its circle is an
/// ellipse on the grains' surface, its bowl at the tip, at its depth below the surface.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spoon {
    /// The circle's centre (on the axis, at the grains' surface) and radius.
    pub circle: ([f32; 2], f32),
    /// The bowl's middle and the handle's top end.
    pub tip: [f32; 2],
    pub handle: [f32; 2],
    /// On the far half of its circle (drawn behind the grains).
    pub behind: bool,
}

/// What the scene draws, in m: x across from the cup's axis, z up from the ground (the
/// surface the cup stands on, level with its inner floor).
#[derive(Debug, Clone, PartialEq)]
pub struct Parts {
    /// The cup's inner wall in section (`section`); none in a pour onto the surface.
    pub cup: Option<Vec<[f32; 2]>>,
    /// The pile in the cup (`pile_section`, or `tilted_pile` in a tilted cup): convex
    /// polygons in the cup's frame.
    pub pile: Vec<Vec<[f32; 2]>>,
    /// Where the cup stands (`Pose::of`): the cup, its pile, the spoon and the flashes in
    /// the cup go through it.
    pub pose: Pose,
    /// The gesture in effect.
    pub gesture: Gesture,
    /// The spoon, while stirring a cup.
    pub spoon: Option<Spoon>,
    /// The shaken cup is closed: a lid across its rim.
    pub lid: bool,
    /// An avalanche under way: the slab's path down the heap, from its top to its foot (in
    /// the cup's frame in a cup, the scene's on the surface).
    pub avalanche: Option<[[f32; 2]; 2]>,
    /// The heap on the ground: left foot, apex, right foot; none in a cup.
    pub heap: Option<[[f32; 2]; 3]>,
    /// Where the stream lands: the pile's top in the cup, the heap's apex (or the bare
    /// ground) on the surface.
    pub landing: [f32; 2],
    /// A full cup's overflow: from each rim (left, right) down to the surface beside it; a
    /// tilted cup's from its low rim only (in the scene's frame).
    pub spills: Option<Vec<[[f32; 2]; 2]>>,
    /// Half the width the scene spans, m (the heap of a full cup fits: the scale stays as
    /// it grows).
    pub half_width: f32,
}

/// The scene's parts for `snap` (the pour state, `open` for a pour onto the surface, the
/// gesture) and `info`.
pub fn parts(snap: &Snapshot, info: &SceneInfo) -> Parts {
    let cup = &info.cup;
    let view = &snap.gesture;
    let stream_r = stream_radius(snap);
    let cup_half = 0.5 * SCENE_WIDTH * cup.widest_radius();
    if snap.open {
        let (height, radius) = (snap.pile_height_m.max(0.0), snap.pile_radius_m.max(0.0));
        let x = snap.aim.clamp(0.0, 1.0) * (0.9 * radius - stream_r).max(0.0);
        let full = heap_at(1.0, cup, info.repose_tan).1;
        let heap = (radius > 0.0 && height > 0.0).then_some([[x - radius, 0.0], [x, height], [x + radius, 0.0]]);
        Parts {
            cup: None,
            pile: Vec::new(),
            pose: Pose::UPRIGHT,
            gesture: view.gesture,
            spoon: None,
            lid: false,
            // down the heap's right flank, from just below its apex to just above its foot
            avalanche: heap.filter(|_| view.avalanche).map(|[_, apex, foot]| {
                let along = |t: f32| [apex[0] + t * (foot[0] - apex[0]), apex[1] + t * (foot[1] - apex[1])];
                [along(0.15), along(0.85)]
            }),
            heap,
            landing: [x, height],
            spills: None,
            half_width: cup_half.max(1.15 * full),
        }
    } else {
        let pile = snap.pile_height_m.clamp(0.0, cup.depth);
        let x = snap.aim.clamp(0.0, 1.0) * (0.9 * cup.radius_at(pile) - stream_r).max(0.0);
        let (rim, out) = (cup.rim_radius, SPILL_AT * cup.widest_radius());
        let pose = Pose::of(view, cup);
        // the grains' surface in the cup's frame: level with the floor in an upright cup;
        // in a tilted one at the bed's slope in the scene, so it rises towards the low rim
        // by the tilt the bed did not follow
        let rise = if pose.tilt_rad.abs() > 1e-3 && view.slope_rad.is_finite() {
            (pose.tilt_rad - view.slope_rad).clamp(-1.4, 1.4).tan()
        } else {
            0.0
        };
        let pile_polys = if rise == 0.0 {
            pile_section(cup, pile).into_iter().map(Vec::from).collect()
        } else {
            tilted_pile(cup, pile, rise)
        };
        let spills = (snap.overflow > 0.0).then(|| {
            let shake = pose.at[0];
            if pose.tilt_rad.abs() > 1e-3 {
                // over the low rim only, down to the ground beside it
                let lip = pose.apply([rim, cup.depth]);
                vec![[lip, [lip[0] + 0.5 * cup.widest_radius(), 0.0]]]
            } else {
                vec![
                    [pose.apply([-rim, cup.depth]), [shake - out, 0.0]],
                    [pose.apply([rim, cup.depth]), [shake + out, 0.0]],
                ]
            }
        });
        let spoon = (view.gesture == Gesture::Stir && view.spoon_depth_m > 0.0 && view.spoon_angle_rad.is_finite())
            .then(|| spoon_at(cup, pile, view.spoon_angle_rad, view.spoon_depth_m));
        // an avalanche runs down the grains' surface, from the high side to the low rim (in a
        // pour, down the heap under the stream towards the wall)
        let avalanche = view.avalanche.then(|| {
            let r = cup.radius_at(pile);
            let top = |x: f32| [x, (pile + rise * x).clamp(0.0, cup.depth)];
            if rise == 0.0 {
                [[x, pile], [x + 0.8 * (r - x.abs()).max(0.2 * r), pile]]
            } else {
                [top(-0.7 * r), top(0.7 * r)]
            }
        });
        Parts {
            cup: Some(section(cup)),
            pile: pile_polys,
            pose,
            gesture: view.gesture,
            spoon,
            lid: view.gesture == Gesture::Shake,
            avalanche,
            heap: None,
            landing: [x, pile],
            spills,
            half_width: cup_half,
        }
    }
}

/// The spoon on its circle (`SPOON_CIRCLE_SHARE` of the radius at the grains' surface
/// `pile`) at `angle` (0: to the right, pi/2: the far side), `depth` below the surface.
pub fn spoon_at(cup: &Cup, pile: f32, angle: f32, depth: f32) -> Spoon {
    let r = SPOON_CIRCLE_SHARE * cup.radius_at(pile);
    let x = r * angle.cos();
    let tip = [x, (pile - depth).max(0.0)];
    Spoon {
        circle: ([0.0, pile], r),
        tip,
        // the handle leans out over the rim, a third of the cup's depth above it
        handle: [x + 0.35 * cup.rim_radius, cup.depth + 0.35 * cup.depth],
        behind: angle.sin() > 0.0,
    }
}

/// The pile up to `pile` m on the axis in a tilted cup, its surface the line
/// `z = pile + rise x` in the cup's frame (rising towards the low rim, x > 0), cut at the
/// rim: convex polygons (the `pile_section` trapezoids clipped by the surface).
pub fn tilted_pile(cup: &Cup, pile: f32, rise: f32) -> Vec<Vec<[f32; 2]>> {
    let reach = (pile + rise.abs() * cup.widest_radius()).min(cup.depth);
    pile_section(cup, reach)
        .into_iter()
        .map(|quad| clip_below(&quad, pile, rise))
        .filter(|poly| poly.len() >= 3)
        .collect()
}

/// The part of convex polygon `poly` on or below the line `z = z0 + slope x`
/// (Sutherland–Hodgman against one edge).
fn clip_below(poly: &[[f32; 2]], z0: f32, slope: f32) -> Vec<[f32; 2]> {
    let side = |[x, z]: [f32; 2]| z0 + slope * x - z; // >= 0: kept
    let mut out = Vec::with_capacity(poly.len() + 1);
    for (i, &a) in poly.iter().enumerate() {
        let b = poly[(i + 1) % poly.len()];
        let (sa, sb) = (side(a), side(b));
        if sa >= 0.0 {
            out.push(a);
        }
        if (sa >= 0.0) != (sb >= 0.0) {
            let t = sa / (sa - sb);
            out.push([a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])]);
        }
    }
    out
}

/// What the scene says of the gesture (the top right): its name, and what it is doing.
pub fn gesture_label(view: &GestureView) -> String {
    let mut text = view.gesture.name().to_string();
    match view.gesture {
        Gesture::Stir if view.spoon_depth_m > 0.0 => {
            text += &format!(" · spoon {:.0} mm deep", 1e3 * view.spoon_depth_m);
        }
        Gesture::Shake if view.shake_energy_j > 0.0 || view.shake_offset_m != 0.0 => {
            text += &format!(" · {:+.0} mm", 1e3 * view.shake_offset_m);
        }
        Gesture::Tilt => {
            text += &format!(" · {:.0}°", view.tilt_rad.to_degrees());
        }
        _ => {}
    }
    if view.avalanche {
        text += " · avalanche";
    }
    text
}

/// The stream's radius, m; before the audio thread has published a geometry, the engine's
/// smallest.
fn stream_radius(snap: &Snapshot) -> f32 {
    if snap.stream_radius_m > 0.0 {
        snap.stream_radius_m
    } else {
        0.004
    }
}

/// Where cell `cell`'s flash shows (two spots: x, z and radius, m), or `None` for a cell
/// the scene has no place for (the cup's cells in a pour onto the surface).
pub fn flash_spots(cell: Cell, parts: &Parts, cup: &Cup, stream_r: f32) -> Option<[(f32, f32, f32); 2]> {
    let [x, pile] = parts.landing;
    let stream_r = stream_r.max(0.003);
    if parts.cup.is_none() {
        // on the surface: the heap's slope and its foot (the bare ground before it grows)
        let foot = parts.heap.map_or(x, |h| h[2][0]);
        let r = (foot - x).max(1.5 * stream_r);
        return match cell {
            Cell::ImpactZone => Some([(x, pile, 1.5 * stream_r); 2]),
            Cell::Stream => Some([(x, pile + 0.015, stream_r); 2]),
            Cell::PileSurface => Some([
                (x - 0.45 * r, 0.55 * pile, 0.2 * r),
                (x + 0.45 * r, 0.55 * pile, 0.2 * r),
            ]),
            Cell::Settling => Some([(x - 0.7 * r, 0.3 * pile, 0.15 * r), (x + 0.7 * r, 0.3 * pile, 0.15 * r)]),
            Cell::Surface => Some([(x - r, 0.0, 0.25 * r), (x + r, 0.0, 0.25 * r)]),
            Cell::CupFloor | Cell::WallRing(_) => None,
        };
    }
    Some(match cell {
        Cell::ImpactZone => [(0.0, pile, stream_r * 1.5); 2],
        Cell::CupFloor => [(0.0, 0.0, 2.0 * stream_r); 2],
        Cell::WallRing(k) => {
            let z = cup.ring_mid(k);
            let (x, size) = (cup.radius_at(z), 0.5 * (cup.ring_edges[k + 1] - cup.ring_edges[k]));
            [(-x, z, size), (x, z, size)]
        }
        Cell::PileSurface => {
            let rp = cup.radius_at(pile);
            [(-0.45 * rp, pile, 0.3 * rp), (0.45 * rp, pile, 0.3 * rp)]
        }
        Cell::Stream => [(0.0, pile + 0.015, stream_r); 2],
        Cell::Settling => {
            let rp = cup.radius_at(pile);
            [(-0.7 * rp, pile, 0.18 * rp), (0.7 * rp, pile, 0.18 * rp)]
        }
        Cell::Surface => {
            let x = SPILL_AT * cup.widest_radius();
            [(-x, 0.0, 0.2 * x), (x, 0.0, 0.2 * x)]
        }
    })
}

/// The scene label: the cup's shape, material and inner size (rim diameter x depth).
pub fn cup_label(cup: &Cup, material: CupMaterial) -> String {
    format!(
        "{}, {} · {:.0} x {:.0} mm",
        cup.shape.name(),
        material.data().name.to_lowercase(),
        2e3 * cup.rim_radius,
        1e3 * cup.depth
    )
}

/// The band at the top of the scene (the legend), points.
const TOP_BAND: f32 = 44.0;
/// The band at the bottom (two label lines) when the labels do not wrap, points.
pub const BOTTOM_BAND: f32 = 36.0;
/// The ground's band under the floor (the surface, named), points.
const GROUND_BAND: f32 = 18.0;
/// The scene spans this many widest inner radii of the cup (the cup and the spills beside it).
const SCENE_WIDTH: f32 = 3.4;

/// Where the scene draws in `rect` above a label band `bottom_band` points high, spanning
/// `half_width_m` either side of the axis: the world-to-screen scale (points per m), and
/// the screen position of the floor's centre (on the ground).
pub fn placement(rect: Rect, cup: &Cup, fall_height_m: f32, half_width_m: f32, bottom_band: f32) -> (f32, Pos2) {
    let h = cup.depth;
    let fall_drawn = fall_height_m.clamp(0.0, 1.2 * h);
    let world_w = 2.0 * half_width_m;
    let world_h = h + fall_drawn + 0.2 * h;
    let inner = Rect::from_min_max(
        rect.min + vec2(12.0, TOP_BAND),
        rect.max - vec2(12.0, bottom_band + GROUND_BAND),
    );
    let scale = (inner.width().max(1.0) / world_w).min(inner.height().max(1.0) / world_h);
    (scale, pos2(inner.center().x, inner.bottom()))
}

/// The cup's outline on screen (its bounding box) when the scene is drawn into `rect`.
pub fn cup_screen_rect(rect: Rect, cup: &Cup, fall_height_m: f32) -> Rect {
    let half_width = 0.5 * SCENE_WIDTH * cup.widest_radius();
    let (scale, floor) = placement(rect, cup, fall_height_m, half_width, BOTTOM_BAND);
    let mut out = Rect::NOTHING;
    for [x, z] in section(cup) {
        out.extend_with(pos2(floor.x + x * scale, floor.y - z * scale));
    }
    out
}

/// The cup's inner wall in section, (x, z) in m from the floor's centre: the profile
/// mirrored, from the left rim down to the floor and up to the right rim.
pub fn section(cup: &Cup) -> Vec<[f32; 2]> {
    let p = cup.profile();
    let left = p.iter().rev().filter(|q| q[0] > 0.0).map(|&[r, z]| [-r, z]);
    let right = p.iter().filter(|q| q[0] > 0.0).map(|&[r, z]| [r, z]);
    left.chain(right).collect()
}

/// The pile in section up to `pile` m above the floor, as trapezoids (x, z) (each convex,
/// one per wall segment it reaches; a jar's neck is not convex as a whole): bottom left,
/// bottom right, top right, top left.
pub fn pile_section(cup: &Cup, pile: f32) -> Vec<[[f32; 2]; 4]> {
    let pile = pile.min(cup.depth);
    let p = cup.profile();
    let mut out = Vec::new();
    for w in p[1..].windows(2) {
        let (z0, z1) = (w[0][1], w[1][1]);
        if pile <= z0 || z1 <= z0 {
            continue;
        }
        let top = pile.min(z1);
        let (r0, rt) = (cup.radius_at(z0), cup.radius_at(top));
        out.push([[-r0, z0], [r0, z0], [rt, top], [-rt, top]]);
    }
    out
}

/// Draws the scene into `rect`.
pub fn draw(ui: &mut egui::Ui, rect: Rect, snap: &Snapshot, flashes: &Flashes, info: &SceneInfo) {
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    let text = visuals.text_color();
    let weak = visuals.weak_text_color();
    painter.rect_filled(rect, 4.0, visuals.extreme_bg_color);

    let cup = &info.cup;
    let parts = parts(snap, info);
    // the cup's inner depth sets the drawing's height (a heap is lower than its cup)
    let h = cup.depth;
    let stream_r = stream_radius(snap);
    let [landing_x, landing_z] = parts.landing;
    // The stream above the rim is drawn at most 1.2 cup heights long (a break marks a
    // longer fall); the cup and the fill are to scale.
    let fall_drawn = info.fall_height_m.clamp(0.0, 1.2 * h);
    // the labels, wrapped to the width, in a band below the drawing
    let font = FontId::proportional(12.0);
    let wrap = (rect.width() - 20.0).max(40.0);
    let first = match parts.heap {
        None if snap.open => heap_label(info.surface_material, 0.0, 0.0),
        None => cup_label(cup, info.cup_material),
        Some([_, [_, height], [foot, _]]) => heap_label(info.surface_material, height, foot - landing_x),
    };
    let mut second = format!(
        "fill {:.0} % · fall {:.0} cm · impact {:.2} m/s",
        100.0 * snap.fill,
        100.0 * info.fall_height_m,
        snap.impact_speed_m_s
    );
    if snap.overflow > 0.0 {
        second += &format!(" · overflow {} grains/s", super::format_rate(snap.overflow));
    }
    let labels = [first, second].map(|t| painter.layout(t, font.clone(), text, wrap));
    let band = labels.iter().map(|g| g.size().y).sum::<f32>() + 8.0;
    let (scale, floor) = placement(rect, cup, info.fall_height_m, parts.half_width, band);
    let (cx, floor_y) = (floor.x, floor.y);
    let to_screen = |x: f32, z: f32| pos2(cx + x * scale, floor_y - z * scale);
    // a point of the cup's own frame (tilted, shaken)
    let in_cup = |q: [f32; 2]| {
        let [x, z] = parts.pose.apply(q);
        to_screen(x, z)
    };

    // the surface: a band under the floor across the scene, named at its right end
    let ground = surface_colour(info.surface_material);
    let ground_rect = Rect::from_min_max(
        pos2(rect.left() + 6.0, floor_y + 2.0),
        pos2(rect.right() - 6.0, floor_y + GROUND_BAND - 2.0),
    );
    painter.rect_filled(ground_rect, 2.0, ground);
    let [r, g, b, _] = ground.to_array();
    let on_ground = if 0.299 * r as f32 + 0.587 * g as f32 + 0.114 * b as f32 > 140.0 {
        Color32::from_gray(20)
    } else {
        Color32::from_gray(240)
    };
    painter.text(
        ground_rect.right_center() - vec2(6.0, 0.0),
        Align2::RIGHT_CENTER,
        info.surface_material.data().name,
        FontId::proportional(11.0),
        on_ground,
    );

    // the fill (pile) and the cup in section, or the heap on the ground; a spoon on the far
    // side of its circle goes behind the grains
    let grains = info.grain_colour.gamma_multiply(0.75);
    if let Some(spoon) = parts.spoon.filter(|s| s.behind) {
        draw_spoon(&painter, &spoon, &in_cup, weak);
    }
    for poly in &parts.pile {
        painter.add(egui::Shape::convex_polygon(
            poly.iter().map(|&q| in_cup(q)).collect(),
            grains,
            Stroke::NONE,
        ));
    }
    if let Some(heap) = parts.heap {
        painter.add(egui::Shape::convex_polygon(
            heap.iter().map(|&[x, z]| to_screen(x, z)).collect(),
            grains,
            Stroke::new(1.0, info.grain_colour),
        ));
    }
    if let Some(section) = &parts.cup {
        painter.add(egui::Shape::line(
            section.iter().map(|&q| in_cup(q)).collect(),
            Stroke::new(4.0, cup_colour(info.cup_material)),
        ));
        if parts.lid {
            // the shaken cup is closed
            let r = info.cup.rim_radius + 0.08 * info.cup.rim_radius;
            painter.line_segment(
                [in_cup([-r, h]), in_cup([r, h])],
                Stroke::new(5.0, cup_colour(info.cup_material).gamma_multiply(0.8)),
            );
        }
    }
    if let Some(spoon) = parts.spoon.filter(|s| !s.behind) {
        draw_spoon(&painter, &spoon, &in_cup, weak);
    }
    // an avalanche under way: an arrow down the grains' surface
    if let Some([a, b]) = parts.avalanche {
        let (a, b) = if parts.cup.is_some() {
            (in_cup(a), in_cup(b))
        } else {
            (to_screen(a[0], a[1]), to_screen(b[0], b[1]))
        };
        painter.arrow(a, b - a, Stroke::new(3.0, AVALANCHE));
    }

    // the spout and the stream, over where it lands (`aim`: the engine's `generator::Heap`);
    // the other gestures pour nothing
    let top = h + fall_drawn;
    let landing = if parts.cup.is_some() {
        in_cup([landing_x, landing_z])
    } else {
        to_screen(landing_x, landing_z)
    };
    let spout = pos2(landing.x, to_screen(0.0, top).y);
    let flow_g_s = snap.flow_kg_s * 1e3;
    if parts.gesture == Gesture::Pour || flow_g_s > 0.01 {
        painter.rect_filled(
            Rect::from_center_size(spout - vec2(0.0, 6.0), vec2(34.0, 12.0)),
            2.0,
            Color32::from_rgb(120, 120, 130),
        );
    }
    if flow_g_s > 0.01 {
        let width = (stream_r * scale * (flow_g_s / 20.0).sqrt().clamp(0.3, 2.0)).max(2.0);
        painter.rect_filled(
            Rect::from_min_max(
                pos2(spout.x - 0.5 * width, spout.y),
                pos2(spout.x + 0.5 * width, landing.y),
            ),
            0.0,
            info.grain_colour.gamma_multiply(0.35),
        );
        // falling grains, animated (speed ~ the impact speed, for the eye only)
        let n = (8.0 + 4.0 * flow_g_s.sqrt()).min(60.0) as usize;
        let length = (top - (floor_y - landing.y) / scale).max(1e-3);
        let speed = (snap.impact_speed_m_s.max(0.5) * 0.5) as f64;
        for i in 0..n {
            let phase = ((i as f64 * 0.618_034 + info.time_s * speed / length as f64) % 1.0) as f32;
            let z = top - phase * phase * length; // accelerating: s ~ t^2
            let jitter = (((i * 7919) % 13) as f32 / 6.0 - 1.0) * 0.45 * width;
            painter.circle_filled(pos2(spout.x + jitter, to_screen(0.0, z).y), 1.8, info.grain_colour);
        }
    }
    if info.fall_height_m > fall_drawn + 1e-4 && parts.gesture == Gesture::Pour {
        // break mark: the fall is longer than drawn
        let y = to_screen(0.0, h + 0.6 * fall_drawn).y;
        for dy in [-3.0, 3.0] {
            painter.line_segment(
                [pos2(spout.x - 14.0, y + dy + 3.0), pos2(spout.x + 14.0, y + dy - 3.0)],
                Stroke::new(1.5, weak),
            );
        }
    }

    // a full cup's overflow: grains over each rim, falling beside the cup onto the surface
    if let Some(spills) = &parts.spills {
        let n = (4.0 + snap.overflow.max(0.0).sqrt() * 0.2).min(16.0) as usize;
        for &[[x0, z0], [x1, z1]] in spills {
            for i in 0..n {
                let t = ((i as f64 / n as f64 + info.time_s * 0.8) % 1.0) as f32;
                // out over the rim, then down: x eases out, z falls as t²
                let x = x0 + (x1 - x0) * (1.0 - (1.0 - t) * (1.0 - t));
                let z = z0 + (z1 - z0) * t * t;
                painter.circle_filled(to_screen(x, z), 1.8, info.grain_colour);
            }
            // what has landed: a little spill on the surface
            let w = 0.18 * x1.abs();
            painter.add(egui::Shape::convex_polygon(
                vec![to_screen(x1 - w, 0.0), to_screen(x1 + w, 0.0), to_screen(x1, 0.3 * w)],
                grains,
                Stroke::NONE,
            ));
        }
    }

    // collision flashes per cell, coloured by kind
    for (i, &level) in flashes.level.iter().enumerate() {
        if level <= 0.01 {
            continue;
        }
        let Some(spots) = flash_spots(CELLS[i], &parts, cup, stream_r) else {
            continue;
        };
        // the cup's cells move with the cup; the surface's stay on the ground
        let in_cup_frame = parts.cup.is_some() && CELLS[i] != Cell::Surface;
        let colour = match cell_kind(i) {
            CollisionKind::GrainGrain => GRAIN_GRAIN,
            CollisionKind::GrainCup => GRAIN_CUP,
            CollisionKind::GrainSurface => GRAIN_SURFACE,
        }
        .gamma_multiply(level);
        for (x, z, radius) in spots {
            let c = if in_cup_frame { in_cup([x, z]) } else { to_screen(x, z) };
            let px = (radius * scale).max(4.0) * (0.7 + 0.5 * level);
            painter.circle_filled(c, px, colour.gamma_multiply(0.45));
            painter.circle_filled(c, 0.45 * px, colour);
        }
    }

    // the labels in their band, the legend in the top band: nothing covers them
    let mut y = rect.bottom() - band + 4.0;
    for g in labels {
        let h = g.size().y;
        painter.galley(pos2(rect.left() + 10.0, y), g, text);
        y += h;
    }
    legend(&painter, rect.left_top() + vec2(10.0, 4.0), text);
    painter.text(
        rect.right_top() + vec2(-10.0, 6.0),
        Align2::RIGHT_TOP,
        gesture_label(&snap.gesture),
        FontId::proportional(14.0),
        text,
    );
}

/// The spoon: its circle (an ellipse seen from the side, on the grains' surface), the handle
/// and the bowl at its tip.
fn draw_spoon(painter: &egui::Painter, spoon: &Spoon, in_cup: &impl Fn([f32; 2]) -> Pos2, weak: Color32) {
    let ([cx, cz], r) = spoon.circle;
    let ring: Vec<Pos2> = (0..=32)
        .map(|k| {
            let a = k as f32 / 32.0 * std::f32::consts::TAU;
            in_cup([cx + r * a.cos(), cz + 0.2 * r * a.sin()])
        })
        .collect();
    painter.add(egui::Shape::line(ring, Stroke::new(1.0, weak)));
    let colour = if spoon.behind { SPOON.gamma_multiply(0.6) } else { SPOON };
    let (tip, handle) = (in_cup(spoon.tip), in_cup(spoon.handle));
    painter.line_segment([tip, handle], Stroke::new(3.0, colour));
    let bowl = (in_cup([spoon.tip[0] + 0.5 * SPOON_WIDTH_M, spoon.tip[1]]) - tip).length();
    painter.add(egui::Shape::ellipse_filled(
        tip,
        vec2(bowl, 0.6 * bowl).max(vec2(4.0, 3.0)),
        colour,
    ));
}

fn legend(painter: &egui::Painter, at: Pos2, text: Color32) {
    let font = FontId::proportional(12.0);
    for (k, (colour, label)) in [
        (GRAIN_GRAIN, "grain–grain"),
        (GRAIN_CUP, "grain–cup"),
        (GRAIN_SURFACE, "grain–surface"),
    ]
    .iter()
    .enumerate()
    {
        let y = at.y + 8.0 + 18.0 * k as f32;
        painter.circle_filled(pos2(at.x + 6.0, y), 5.0, *colour);
        painter.text(pos2(at.x + 16.0, y), Align2::LEFT_CENTER, *label, font.clone(), text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use granary_engine::control::choices::CupShape;

    #[test]
    fn the_section_is_the_cups_profile_mirrored() {
        for shape in CupShape::ALL {
            let cup = Cup::new(shape, 1.3);
            let s = section(&cup);
            let p = cup.profile();
            // the floor's centre is not a corner of the section
            assert_eq!(s.len(), 2 * (p.len() - 1), "{}", shape.id());
            assert_eq!(s[0], [-cup.rim_radius, cup.depth]);
            assert_eq!(s[s.len() - 1], [cup.rim_radius, cup.depth]);
            assert!(s.contains(&[-cup.floor_radius, 0.0]) && s.contains(&[cup.floor_radius, 0.0]));
            for &[x, z] in &s {
                assert!((x.abs() - cup.radius_at(z)).abs() < 1e-6, "{}: ({x}, {z})", shape.id());
            }
        }
        // a bowl draws wider than deep, a tumbler deeper than wide
        let bowl = Cup::new(CupShape::Bowl, 1.0);
        let tumbler = Cup::new(CupShape::Tumbler, 1.0);
        assert!(2.0 * bowl.rim_radius > 2.0 * bowl.depth && tumbler.depth > 2.0 * tumbler.rim_radius);
    }

    /// The cup as the plugin's parameters describe it (the preset's values, `cup_shape` set).
    fn cup_of(preset: &str, shape: Option<&str>) -> (Cup, CupMaterial) {
        let mut values = granary_engine::control::preset::find(preset).unwrap().values;
        if let Some(shape) = shape {
            values.set_text("cup_shape", shape).unwrap();
        }
        let settings = values.to_settings();
        (Cup::for_settings(&settings), settings.cup_material)
    }

    #[test]
    fn the_scene_draws_the_cup_the_engine_uses() {
        let rect = Rect::from_min_size(pos2(0.0, 0.0), vec2(300.0, 320.0));
        // "Rice, plastic bowl": a wide low bowl, as wide as the cup is on screen
        let (bowl, material) = cup_of("rice_plastic_bowl", None);
        assert_eq!(bowl.shape, CupShape::Bowl);
        let r = cup_screen_rect(rect, &bowl, 0.15);
        assert!(r.width() > 2.0 * r.height(), "{r:?}");
        let ratio = r.width() / r.height();
        assert!(
            (ratio / (2.0 * bowl.rim_radius / bowl.depth) - 1.0).abs() < 0.02,
            "{ratio}"
        );
        assert!(rect.contains_rect(r));
        let label = cup_label(&bowl, material);
        assert!(label.starts_with("Bowl, plastic"), "{label}");
        assert!(label.contains(&format!("{:.0} x {:.0} mm", 2e3 * bowl.rim_radius, 1e3 * bowl.depth)));
        // the cup_shape parameter changes the drawing and the label
        let mut seen = Vec::new();
        for shape in CupShape::ALL {
            let (cup, material) = cup_of("rice_plastic_bowl", Some(shape.id()));
            assert_eq!(cup.shape, shape);
            let r = cup_screen_rect(rect, &cup, 0.15);
            let label = cup_label(&cup, material);
            assert!(label.starts_with(shape.name()), "{label}");
            assert!(rect.contains_rect(r), "{label}: {r:?}");
            seen.push((section(&cup), label));
        }
        // every shape its own label, and its own drawing where its geometry differs (the
        // mug's and the metal cup's assets share one inner profile)
        for (i, a) in seen.iter().enumerate() {
            for b in &seen[i + 1..] {
                assert_ne!(a.1, b.1);
            }
        }
        let mut drawings: Vec<_> = seen.iter().map(|s| format!("{:?}", s.0)).collect();
        drawings.dedup();
        drawings.sort();
        drawings.dedup();
        assert!(drawings.len() >= 4, "{seen:?}");
        let (tumbler, _) = cup_of("rice_plastic_bowl", Some("tumbler"));
        let r = cup_screen_rect(rect, &tumbler, 0.15);
        assert!(r.height() > r.width(), "a tumbler is tall: {r:?}");
        // each material its own colour
        for (i, a) in CupMaterial::ALL.iter().enumerate() {
            for b in &CupMaterial::ALL[i + 1..] {
                assert_ne!(cup_colour(*a), cup_colour(*b));
            }
        }
    }

    #[test]
    fn the_drawn_pile_holds_the_cups_volume_up_to_its_height() {
        for shape in CupShape::ALL {
            let cup = Cup::new(shape, 1.0);
            assert!(pile_section(&cup, 0.0).is_empty());
            for fill in [0.1f32, 0.5, 0.95, 1.0] {
                let pile = fill * cup.depth;
                let quads = pile_section(&cup, pile);
                let top = quads.last().unwrap();
                assert_eq!(top[2][1], pile);
                assert!((top[2][0] - cup.radius_at(pile)).abs() < 1e-6);
                // each half trapezoid turned about the axis is a frustum
                let volume: f32 = quads
                    .iter()
                    .map(|q| {
                        let (r0, r1, h) = (q[1][0], q[2][0], q[2][1] - q[1][1]);
                        std::f32::consts::PI * h * (r0 * r0 + r0 * r1 + r1 * r1) / 3.0
                    })
                    .sum();
                let want = cup.volume_below(pile);
                assert!(
                    (volume / want - 1.0).abs() < 1e-5,
                    "{} at {fill}: {volume} vs {want}",
                    shape.id()
                );
            }
        }
    }

    /// The scene as the editor describes `preset` (its settings).
    fn info_of(preset: &str) -> SceneInfo {
        let settings = granary_engine::control::preset::find(preset)
            .unwrap()
            .values
            .to_settings();
        SceneInfo {
            fall_height_m: settings.fall_height_m,
            cup: Cup::for_settings(&settings),
            grain_colour: Color32::WHITE,
            cup_material: settings.cup_material,
            surface_material: settings.surface_material,
            repose_tan: settings.grain_material.data().repose_deg.to_radians().tan(),
            time_s: 0.0,
        }
    }

    /// `preset` poured for `seconds` (auto fill on), as the telemetry publishes it.
    fn poured(preset: &str, seconds: f32) -> Snapshot {
        let settings = granary_engine::control::preset::find(preset)
            .unwrap()
            .values
            .to_settings();
        let mut engine = granary_engine::Engine::new(settings, 48_000.0, 512);
        let (mut writer, mut reader) = crate::telemetry::channel();
        writer.set_sample_rate(48_000.0);
        engine.note_on(1.0, 60);
        let mut bufs: [Vec<f32>; 10] = std::array::from_fn(|_| vec![0.0; 512]);
        for _ in 0..(seconds * 48_000.0 / 512.0) as usize {
            let [a, b, c, d, e, f, g, h, i, j] = &mut bufs;
            engine.process(granary_engine::Outputs {
                main: [a, b],
                grains: [c, d],
                cup: [e, f],
                surface: Some([g, h]),
                friction: Some([i, j]),
            });
            writer.write_audio([a, b], [c, d], [e, f], [g, h], [i, j]);
            writer.write_engine(&engine);
        }
        reader.snapshot()
    }

    #[test]
    fn a_pour_onto_the_surface_draws_the_heap_the_engine_builds_and_no_cup() {
        let info = info_of("sand_onto_concrete");
        let snap = poured("sand_onto_concrete", 3.0);
        assert!(snap.open && snap.fill > 0.0, "{snap:?}");
        // the editor's heap for a fill is the engine's
        let (height, radius) = heap_at(snap.fill, &info.cup, info.repose_tan);
        assert!((height / snap.pile_height_m - 1.0).abs() < 1e-3, "{height} vs {snap:?}");
        assert!((radius / snap.pile_radius_m - 1.0).abs() < 1e-3, "{radius} vs {snap:?}");
        let p = parts(&snap, &info);
        assert!(p.cup.is_none() && p.pile.is_empty() && p.spills.is_none());
        let [[left, z0], [x, top], [right, z1]] = p.heap.expect("the heap is drawn");
        assert_eq!((z0, z1), (0.0, 0.0));
        assert_eq!(top, snap.pile_height_m);
        assert!((right - x - snap.pile_radius_m).abs() < 1e-6 && (x - left - snap.pile_radius_m).abs() < 1e-6);
        // the stream lands on its top; the scene holds the heap of a full cup
        assert_eq!(p.landing, [x, top]);
        assert!(p.half_width >= 1.1 * heap_at(1.0, &info.cup, info.repose_tan).1);
        // grain–surface flashes sit at the heap's foot, and the cup's cells have no place
        let spots = flash_spots(Cell::Surface, &p, &info.cup, snap.stream_radius_m).unwrap();
        for ((sx, sz, _), foot) in spots.iter().zip([left, right]) {
            assert!((sx - foot).abs() < 1e-6 && *sz == 0.0, "{spots:?}");
        }
        assert!(flash_spots(Cell::CupFloor, &p, &info.cup, snap.stream_radius_m).is_none());
        assert!(flash_spots(Cell::WallRing(0), &p, &info.cup, snap.stream_radius_m).is_none());
        let label = heap_label(info.surface_material, top, right - x);
        assert!(label.starts_with("Heap on concrete"), "{label}");
        // the same pour into the cup: the cup, its pile, no heap
        let cup_snap = Snapshot { open: false, ..snap };
        let p = parts(&cup_snap, &info);
        assert!(p.cup.is_some() && p.heap.is_none());
    }

    #[test]
    fn a_full_cup_spills_onto_the_surface_beside_it() {
        let info = info_of("sugar_overflowing_a_mug");
        let cup = &info.cup;
        let before = parts(&Snapshot::default(), &info);
        assert!(before.spills.is_none());
        let snap = poured("sugar_overflowing_a_mug", 3.0);
        assert!(!snap.open && snap.fill > 0.99 && snap.overflow > 0.0, "{snap:?}");
        let p = parts(&snap, &info);
        assert!(p.cup.is_some() && p.heap.is_none());
        let spills = p.spills.clone().expect("the overflow is drawn");
        let out = SPILL_AT * cup.widest_radius();
        assert_eq!(spills[0], [[-cup.rim_radius, cup.depth], [-out, 0.0]]);
        assert_eq!(spills[1], [[cup.rim_radius, cup.depth], [out, 0.0]]);
        // where they land, the grain–surface flashes; the scene is wide enough for them
        let spots = flash_spots(Cell::Surface, &p, cup, snap.stream_radius_m).unwrap();
        assert_eq!([spots[0].0, spots[1].0], [-out, out]);
        assert!(p.half_width > out + spots[1].2);
        // every surface its own colour
        for (i, a) in SurfaceMaterial::ALL.iter().enumerate() {
            for b in &SurfaceMaterial::ALL[i + 1..] {
                assert_ne!(surface_colour(*a), surface_colour(*b));
            }
        }
    }

    /// A snapshot of a half-full cup of `info` doing `view`.
    fn doing(info: &SceneInfo, view: GestureView) -> Snapshot {
        let pile = 0.5 * info.cup.depth;
        Snapshot {
            fill: 0.5,
            pile_height_m: pile,
            pile_radius_m: info.cup.radius_at(pile),
            gesture: view,
            ..Default::default()
        }
    }

    #[test]
    fn a_tilted_cup_turns_towards_its_low_rim_and_its_grains_pile_up_against_it() {
        let info = info_of("sugar_ceramic_mug");
        let cup = &info.cup;
        let (rim, depth) = (cup.rim_radius, cup.depth);
        let upright = parts(&doing(&info, GestureView::default()), &info);
        assert_eq!(
            upright.pose.apply([rim, depth]),
            [rim, depth],
            "upright: the cup where it stands"
        );
        assert!(upright.avalanche.is_none() && upright.spoon.is_none() && !upright.lid);
        let tilted = |tilt_deg: f32, slope_deg: f32| {
            let view = GestureView {
                gesture: Gesture::Tilt,
                tilt_rad: tilt_deg.to_radians(),
                slope_rad: slope_deg.to_radians(),
                ..Default::default()
            };
            parts(&doing(&info, view), &info)
        };
        // the bed turned with the cup (its slope the tilt): its surface level in the cup
        let p = tilted(20.0, 20.0);
        assert!((p.pose.tilt_rad - 20f32.to_radians()).abs() < 1e-6);
        let [low, high] = [p.pose.apply([rim, depth]), p.pose.apply([-rim, depth])];
        assert!(
            low[1] < high[1] && low[0] > high[0],
            "the right rim is the low one: {low:?} {high:?}"
        );
        // the rim's line turns by the tilt
        let turned = ((high[1] - low[1]) / (low[0] - high[0])).atan().to_degrees();
        assert!((turned - 20.0).abs() < 1e-3, "{turned}");
        // lifted as need be: nothing of the cup under the ground, and it touches it
        let lowest = section(cup)
            .into_iter()
            .map(|q| p.pose.apply(q)[1])
            .fold(f32::MAX, f32::min);
        assert!(lowest.abs() < 1e-6, "{lowest}");
        let top = |p: &Parts| {
            p.pile
                .iter()
                .flatten()
                .fold([f32::MAX, f32::MIN], |[lo, hi], q| [lo.min(q[1]), hi.max(q[1])])
        };
        assert!((top(&p)[1] - 0.5 * depth).abs() < 1e-6, "{:?}", top(&p));
        // past the angle of repose the bed stays at it: in the cup its surface rises towards the
        // low rim (x > 0), and stands level in the scene at the slope's angle
        let p = tilted(50.0, 32.0);
        let right = p
            .pile
            .iter()
            .flatten()
            .filter(|q| q[0] > 0.5 * rim)
            .map(|q| q[1])
            .fold(0.0, f32::max);
        let left = p
            .pile
            .iter()
            .flatten()
            .filter(|q| q[0] < -0.5 * rim)
            .map(|q| q[1])
            .fold(0.0, f32::max);
        assert!(right > 0.5 * depth && left < 0.5 * depth, "left {left}, right {right}");
        for poly in &p.pile {
            for &q in poly {
                assert!(
                    q[1] <= 0.5 * depth + (50f32 - 32.0).to_radians().tan() * q[0] + 1e-5,
                    "{q:?}"
                );
                assert!(
                    q[1] <= depth + 1e-6 && q[0].abs() <= cup.radius_at(q[1]) + 1e-5,
                    "{q:?} outside the cup"
                );
            }
        }
        // what spills runs over the low rim only
        let spill = Snapshot {
            overflow: 100.0,
            ..doing(
                &info,
                GestureView {
                    gesture: Gesture::Tilt,
                    tilt_rad: 1.2,
                    slope_rad: 0.6,
                    ..Default::default()
                },
            )
        };
        let spills = parts(&spill, &info).spills.unwrap();
        assert_eq!(spills.len(), 1);
        let lip = parts(&spill, &info).pose.apply([rim, depth]);
        assert_eq!(spills[0][0], lip);
        assert!(spills[0][1][1] == 0.0 && spills[0][1][0] > lip[0]);
        assert!(
            gesture_label(&spill.gesture).starts_with("Tilt · 69°"),
            "{}",
            gesture_label(&spill.gesture)
        );
    }

    #[test]
    fn the_spoon_circles_at_its_depth_and_a_shaken_cup_is_closed_and_moves() {
        let info = info_of("sugar_ceramic_mug");
        let cup = &info.cup;
        let pile = 0.5 * cup.depth;
        let stir = |angle: f32, depth: f32| {
            let view = GestureView {
                gesture: Gesture::Stir,
                spoon_angle_rad: angle,
                spoon_depth_m: depth,
                ..Default::default()
            };
            parts(&doing(&info, view), &info)
        };
        let r = SPOON_CIRCLE_SHARE * cup.radius_at(pile);
        let front = stir(0.0, 0.01).spoon.expect("the spoon is drawn");
        assert_eq!(front.tip, [r, pile - 0.01]);
        assert_eq!(front.circle, ([0.0, pile], r));
        assert!(
            !front.behind && front.handle[1] > cup.depth,
            "the handle stands out of the cup"
        );
        let side = stir(std::f32::consts::FRAC_PI_2, 0.02).spoon.unwrap();
        assert!(side.tip[0].abs() < 1e-6 && side.behind && side.tip[1] == pile - 0.02);
        assert!((stir(std::f32::consts::PI, 0.01).spoon.unwrap().tip[0] + r).abs() < 1e-6);
        // lifted out, no spoon; and none in the other gestures
        assert!(stir(0.0, 0.0).spoon.is_none());
        let label = gesture_label(&GestureView {
            gesture: Gesture::Stir,
            spoon_depth_m: 0.012,
            ..Default::default()
        });
        assert_eq!(label, "Stir · spoon 12 mm deep");
        // a shake: the closed cup, moved sideways by the offset, upright
        let view = GestureView {
            gesture: Gesture::Shake,
            shake_offset_m: 0.015,
            shake_energy_j: 1e-3,
            ..Default::default()
        };
        let p = parts(&doing(&info, view), &info);
        assert!(p.lid && p.spoon.is_none());
        assert_eq!(p.pose.apply([0.0, 0.0]), [0.015, 0.0]);
        assert_eq!(
            p.pose.apply([cup.rim_radius, cup.depth]),
            [cup.rim_radius + 0.015, cup.depth]
        );
        assert_eq!(gesture_label(&view), "Shake · +15 mm");
        assert_eq!(gesture_label(&GestureView::default()), "Pour");
    }

    #[test]
    fn an_avalanche_is_marked_down_the_heap_while_it_runs() {
        let info = info_of("sugar_ceramic_mug");
        let running = GestureView {
            avalanche: true,
            avalanches: 1,
            ..Default::default()
        };
        // in the cup: from the stream's landing towards the wall, on the grains' surface
        let p = parts(&doing(&info, running), &info);
        let [a, b] = p.avalanche.expect("marked");
        let pile = 0.5 * info.cup.depth;
        assert!(a[1] == pile && b[1] == pile && b[0] > a[0], "{a:?} {b:?}");
        assert!(gesture_label(&running).ends_with(" · avalanche"));
        // on the surface: down the heap's flank, apex to foot
        let info = info_of("sand_onto_concrete");
        let heap = Snapshot {
            open: true,
            pile_height_m: 0.02,
            pile_radius_m: 0.05,
            ..doing(&info, running)
        };
        let p = parts(&heap, &info);
        let [a, b] = p.avalanche.unwrap();
        assert!(a[1] > b[1] && b[0] > a[0] && a[1] < 0.02 && b[1] > 0.0, "{a:?} {b:?}");
        // and none when it has stopped
        let stopped = GestureView {
            avalanche: false,
            avalanches: 1,
            ..Default::default()
        };
        assert!(parts(
            &Snapshot {
                gesture: stopped,
                ..heap
            },
            &info
        )
        .avalanche
        .is_none());
        assert!(parts(&doing(&info, stopped), &info).avalanche.is_none());
    }
}

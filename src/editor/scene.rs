//! The live scene: the spout and the falling stream, the cup in section with its current
//! fill, and a flash at each generator cell when collisions happen there, coloured by kind
//! (grain–grain or grain–cup). Everything comes from the telemetry snapshot and the
//! parameters; nothing here touches the audio thread. The cup is the engine's `Cup` (the
//! shape's finite-element asset at the `cup_size`): a bowl draws as a bowl.

use super::meters::{cell_kind, Flashes};
use crate::telemetry::Snapshot;
use egui::{pos2, vec2, Align2, Color32, FontId, Pos2, Rect, Stroke};
use granary_engine::cups::Cup;
use granary_engine::generator::{Cell, CollisionKind, CELLS};
use granary_engine::materials::CupMaterial;

pub const GRAIN_GRAIN: Color32 = Color32::from_rgb(255, 185, 60);
pub const GRAIN_CUP: Color32 = Color32::from_rgb(70, 205, 255);
/// Collisions on the surface the cup stands on (spills) or that a pour lands on.
pub const GRAIN_SURFACE: Color32 = Color32::from_rgb(120, 220, 120);

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

/// Where the scene draws in `rect` above a label band `bottom_band` points high: the
/// world-to-screen scale (points per m), and the screen position of the floor's centre.
pub fn placement(rect: Rect, cup: &Cup, fall_height_m: f32, bottom_band: f32) -> (f32, Pos2) {
    let (r, h) = (cup.widest_radius(), cup.depth);
    let fall_drawn = fall_height_m.clamp(0.0, 1.2 * h);
    let world_w = 3.4 * r;
    let world_h = h + fall_drawn + 0.25 * h;
    let inner = Rect::from_min_max(rect.min + vec2(12.0, TOP_BAND), rect.max - vec2(12.0, bottom_band));
    let scale = (inner.width().max(1.0) / world_w).min(inner.height().max(1.0) / world_h);
    (scale, pos2(inner.center().x, inner.bottom() - 0.05 * h * scale))
}

/// The cup's outline on screen (its bounding box) when the scene is drawn into `rect`.
pub fn cup_screen_rect(rect: Rect, cup: &Cup, fall_height_m: f32) -> Rect {
    let (scale, floor) = placement(rect, cup, fall_height_m, BOTTOM_BAND);
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
    // the widest inner radius sets the drawing's width, the inner depth its height
    let h = cup.depth;
    // before the audio thread has published a geometry: the engine's smallest stream
    let stream_r = if snap.stream_radius_m > 0.0 {
        snap.stream_radius_m
    } else {
        0.004
    };
    let pile = snap.pile_height_m.clamp(0.0, h);
    // The stream above the rim is drawn at most 1.2 cup heights long (a break marks a
    // longer fall); the cup and the fill are to scale.
    let fall_drawn = info.fall_height_m.clamp(0.0, 1.2 * h);
    // the labels, wrapped to the width, in a band below the drawing
    let font = FontId::proportional(12.0);
    let wrap = (rect.width() - 20.0).max(40.0);
    let labels = [
        cup_label(cup, info.cup_material),
        format!(
            "fill {:.0} % · fall {:.0} cm · impact {:.2} m/s",
            100.0 * snap.fill,
            100.0 * info.fall_height_m,
            snap.impact_speed_m_s
        ),
    ]
    .map(|t| painter.layout(t, font.clone(), text, wrap));
    let band = labels.iter().map(|g| g.size().y).sum::<f32>() + 8.0;
    let (scale, floor) = placement(rect, cup, info.fall_height_m, band);
    let (cx, floor_y) = (floor.x, floor.y);
    let to_screen = |x: f32, z: f32| pos2(cx + x * scale, floor_y - z * scale);

    // the fill (pile) and the cup in section
    let wall = Stroke::new(4.0, cup_colour(info.cup_material));
    for quad in pile_section(cup, pile) {
        painter.add(egui::Shape::convex_polygon(
            quad.iter().map(|&[x, z]| to_screen(x, z)).collect(),
            info.grain_colour.gamma_multiply(0.75),
            Stroke::NONE,
        ));
    }
    painter.add(egui::Shape::line(
        section(cup).iter().map(|&[x, z]| to_screen(x, z)).collect(),
        wall,
    ));

    // the spout and the stream, over where it lands (`aim`: the engine's `generator::Heap`)
    let top = h + fall_drawn;
    let landing = snap.aim.clamp(0.0, 1.0) * (0.9 * cup.radius_at(pile) - stream_r).max(0.0);
    let spout = to_screen(landing, top);
    painter.rect_filled(
        Rect::from_center_size(spout - vec2(0.0, 6.0), vec2(34.0, 12.0)),
        2.0,
        Color32::from_rgb(120, 120, 130),
    );
    let flow_g_s = snap.flow_kg_s * 1e3;
    if flow_g_s > 0.01 {
        let width = (stream_r * scale * (flow_g_s / 20.0).sqrt().clamp(0.3, 2.0)).max(2.0);
        painter.rect_filled(
            Rect::from_min_max(
                pos2(spout.x - 0.5 * width, spout.y),
                pos2(spout.x + 0.5 * width, to_screen(landing, pile).y),
            ),
            0.0,
            info.grain_colour.gamma_multiply(0.35),
        );
        // falling grains, animated (speed ~ the impact speed, for the eye only)
        let n = (8.0 + 4.0 * flow_g_s.sqrt()).min(60.0) as usize;
        let length = (top - pile).max(1e-3);
        let speed = (snap.impact_speed_m_s.max(0.5) * 0.5) as f64;
        for i in 0..n {
            let phase = ((i as f64 * 0.618_034 + info.time_s * speed / length as f64) % 1.0) as f32;
            let z = top - phase * phase * length; // accelerating: s ~ t^2
            let jitter = (((i * 7919) % 13) as f32 / 6.0 - 1.0) * 0.45 * width;
            painter.circle_filled(pos2(spout.x + jitter, to_screen(0.0, z).y), 1.8, info.grain_colour);
        }
    }
    if info.fall_height_m > fall_drawn + 1e-4 {
        // break mark: the fall is longer than drawn
        let y = to_screen(0.0, h + 0.6 * fall_drawn).y;
        for dy in [-3.0, 3.0] {
            painter.line_segment(
                [pos2(spout.x - 14.0, y + dy + 3.0), pos2(spout.x + 14.0, y + dy - 3.0)],
                Stroke::new(1.5, weak),
            );
        }
    }

    // collision flashes per cell, coloured by kind
    for (i, &level) in flashes.level.iter().enumerate() {
        if level <= 0.01 {
            continue;
        }
        let colour = match cell_kind(i) {
            CollisionKind::GrainGrain => GRAIN_GRAIN,
            CollisionKind::GrainCup => GRAIN_CUP,
            CollisionKind::GrainSurface => GRAIN_SURFACE,
        }
        .gamma_multiply(level);
        let spots: &[(f32, f32, f32)] = &match CELLS[i] {
            Cell::ImpactZone => [(0.0, pile, stream_r.max(0.003) * 1.5); 2],
            Cell::CupFloor => [(0.0, 0.0, 2.0 * stream_r.max(0.003)); 2],
            Cell::WallRing(k) => {
                let z = cup.ring_mid(k);
                let (x, size) = (cup.radius_at(z), 0.5 * (cup.ring_edges[k + 1] - cup.ring_edges[k]));
                [(-x, z, size), (x, z, size)]
            }
            Cell::PileSurface => {
                let rp = cup.radius_at(pile);
                [(-0.45 * rp, pile, 0.3 * rp), (0.45 * rp, pile, 0.3 * rp)]
            }
            Cell::Stream => [(0.0, pile + 0.015, stream_r.max(0.003)); 2],
            Cell::Settling => {
                let rp = cup.radius_at(pile);
                [(-0.7 * rp, pile, 0.18 * rp), (0.7 * rp, pile, 0.18 * rp)]
            }
            Cell::Surface => {
                let x = 1.25 * cup.widest_radius();
                [(-x, 0.0, 0.2 * x), (x, 0.0, 0.2 * x)]
            }
        };
        for &(x, z, radius) in spots {
            let c = to_screen(x, z);
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
    use granary_engine::cups::CupShape;

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
        let mut values = granary_engine::preset::find(preset).unwrap().values;
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
}

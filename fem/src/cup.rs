//! Parametric cups, their meshes, and the reduction of their modes to what Granary plays.
//!
//! A cup is a solid of revolution: its inner surface is a polyline in the (r, z) half
//! plane from the floor's centre to the rim, offset outwards by the floor or wall
//! thickness. `CupSpec::mesh` revolves that profile into quadratic tetrahedra (one element
//! through the thickness; quadratic elements bend without locking).
//!
//! `reduce` turns each mass-normalised mode `phi` into the van den Doel gains of thesis
//! (seed 000) 3.1, the `A_{n,k}` matrix: the mode's surface-normal displacement at the
//! places a grain can hit (floor, each wall ring, rim) — the gain of a unit impulse there —
//! plus the radiating quantities of thesis 3.5 (pressure comes from the surface's normal
//! velocity): the peak normal displacement, the outer surface's mean square of the shape
//! normalised to that peak, and the mode's azimuthal order.

use crate::element::Material;
use crate::mesh::Mesh;
use crate::solve::{lowest_modes, EigenOptions, FemError, Modes, System};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// Wall rings a grain can hit (equal heights, bottom to top).
pub const WALL_RINGS: usize = 3;
/// Azimuths (rad) of the wall sectors where the engine's generator puts wall hits.
pub const SECTOR_AZIMUTHS: [f64; 2] = [0.4, 2.1];
/// Modes kept per cup.
pub const MODES_PER_CUP: usize = 48;
/// Floor hits land within this fraction of the floor radius.
const FLOOR_HIT_RADIUS: f64 = 0.9;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Mug,
    Tumbler,
    Bowl,
    Jar,
    MetalCup,
}

impl Shape {
    pub const ALL: [Shape; 5] = [Shape::Mug, Shape::Tumbler, Shape::Bowl, Shape::Jar, Shape::MetalCup];

    pub fn id(self) -> &'static str {
        match self {
            Shape::Mug => "mug",
            Shape::Tumbler => "tumbler",
            Shape::Bowl => "bowl",
            Shape::Jar => "jar",
            Shape::MetalCup => "metal_cup",
        }
    }

    /// The cup's dimensions and the reference material its modes are computed with.
    pub fn spec(self) -> CupSpec {
        let mat = |name: &str, youngs_pa, poisson, density| RefMaterial {
            name: name.to_string(),
            material: Material {
                youngs_pa,
                poisson,
                density,
            },
        };
        // Reference materials: those of Granary's cup-material table (engine/src/base/materials.rs).
        let ceramic = mat("ceramic", 7.2e10, 0.19, 2700.0);
        let glass = mat("glass", 7.2e10, 0.22, 2520.0);
        let wood = mat("wood", 1.1e10, 0.25, 750.0);
        let steel = mat("steel", 1.965e11, 0.27, 7955.0);
        let (name, material, profile, wall_m, floor_m) = match self {
            // stoneware mug without its handle: straight thick wall, thick floor
            Shape::Mug => (
                "Mug",
                ceramic,
                vec![[0.0, 0.006], [0.040, 0.006], [0.040, 0.095]],
                0.005,
                0.006,
            ),
            // tapered drinking glass with a heavy base
            Shape::Tumbler => (
                "Tumbler",
                glass,
                vec![[0.0, 0.008], [0.031, 0.008], [0.036, 0.110]],
                0.0025,
                0.008,
            ),
            // flared turned bowl
            Shape::Bowl => (
                "Bowl",
                wood,
                vec![[0.0, 0.006], [0.035, 0.006], [0.070, 0.060]],
                0.005,
                0.006,
            ),
            // preserving jar: shoulder and neck
            Shape::Jar => (
                "Jar",
                glass,
                vec![
                    [0.0, 0.005],
                    [0.040, 0.005],
                    [0.040, 0.090],
                    [0.031, 0.105],
                    [0.031, 0.120],
                ],
                0.003,
                0.005,
            ),
            // thin drawn steel cup
            Shape::MetalCup => (
                "Metal cup",
                steel,
                vec![[0.0, 0.001], [0.040, 0.001], [0.040, 0.090]],
                0.0008,
                0.001,
            ),
        };
        CupSpec {
            shape: self.id().to_string(),
            name: name.to_string(),
            reference_material: material,
            inner_profile_m: profile,
            wall_m,
            floor_m,
            segments: 40,
            element_m: 0.006,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RefMaterial {
    pub name: String,
    #[serde(flatten)]
    pub material: Material,
}

/// A cup's geometry (reference size 1), material and mesh resolution.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CupSpec {
    pub shape: String,
    pub name: String,
    pub reference_material: RefMaterial,
    /// Inner surface, (r, z) in m, from the floor's centre (r = 0) to the rim. The first
    /// segment is the floor; the outer surface is offset by `floor_m` / `wall_m`.
    pub inner_profile_m: Vec<[f64; 2]>,
    pub wall_m: f64,
    pub floor_m: f64,
    /// Elements around the circumference.
    pub segments: usize,
    /// Element length along the profile, m.
    pub element_m: f64,
}

/// One station of the meshed profile.
#[derive(Debug, Clone, Copy)]
struct Station {
    inner: [f64; 2],
    outer: [f64; 2],
    /// Outward unit normal of the surfaces in the (r, z) plane.
    normal: [f64; 2],
    /// Length of profile this station stands for, m.
    ds: f64,
    floor: bool,
}

/// A meshed cup: the tetrahedra and the grid that maps profile stations to nodes.
pub struct CupMesh {
    pub mesh: Mesh,
    stations: Vec<Station>,
    /// node id of (station i, through-thickness j in 0..=1, azimuth k in 0..=segments)
    grid: Vec<usize>,
    segments: usize,
}

impl CupSpec {
    pub fn height_m(&self) -> f64 {
        self.inner_profile_m.last().map_or(0.0, |p| p[1])
    }

    pub fn rim_radius_m(&self) -> f64 {
        self.inner_profile_m.last().map_or(0.0, |p| p[0])
    }

    pub fn floor_radius_m(&self) -> f64 {
        self.inner_profile_m.get(1).map_or(0.0, |p| p[0])
    }

    fn stations(&self) -> Vec<Station> {
        let p = &self.inner_profile_m;
        let nseg = p.len() - 1;
        let thick = |s: usize| if s == 0 { self.floor_m } else { self.wall_m };
        let normal = |s: usize| {
            let (dr, dz) = (p[s + 1][0] - p[s][0], p[s + 1][1] - p[s][1]);
            let l = (dr * dr + dz * dz).sqrt();
            [dz / l, -dr / l]
        };
        let mut out: Vec<Station> = Vec::new();
        for s in 0..nseg {
            let (a, b) = (p[s], p[s + 1]);
            let len = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt();
            let pieces = (len / self.element_m).ceil().max(1.0) as usize;
            let n = normal(s);
            let first = if s == 0 { 0 } else { 1 };
            for q in first..=pieces {
                let u = q as f64 / pieces as f64;
                let inner = [a[0] + u * (b[0] - a[0]), a[1] + u * (b[1] - a[1])];
                let (offset, nrm) = if q == pieces && s + 1 < nseg {
                    // corner: the point whose distances to both offset lines are the thicknesses
                    let m = normal(s + 1);
                    let (t1, t2) = (thick(s), thick(s + 1));
                    let det = n[0] * m[1] - n[1] * m[0];
                    let d = [(t1 * m[1] - t2 * n[1]) / det, (n[0] * t2 - m[0] * t1) / det];
                    let sum = [n[0] + m[0], n[1] + m[1]];
                    let l = (sum[0] * sum[0] + sum[1] * sum[1]).sqrt();
                    (d, [sum[0] / l, sum[1] / l])
                } else {
                    ([thick(s) * n[0], thick(s) * n[1]], n)
                };
                let mut outer = [inner[0] + offset[0], inner[1] + offset[1]];
                if q == 0 && s == 0 {
                    outer[0] = 0.0; // the axis
                }
                out.push(Station {
                    inner,
                    outer,
                    normal: nrm,
                    ds: len / pieces as f64,
                    floor: s == 0 && !(q == pieces && s + 1 < nseg),
                });
            }
        }
        // a station stands for half of each neighbouring interval
        let n = out.len();
        let lens: Vec<f64> = out.iter().map(|s| s.ds).collect();
        for (i, st) in out.iter_mut().enumerate() {
            let left = if i > 0 { lens[i] } else { 0.0 };
            let right = if i + 1 < n { lens[i + 1] } else { 0.0 };
            st.ds = 0.5 * (left + right);
        }
        out
    }

    pub fn mesh(&self) -> CupMesh {
        let stations = self.stations();
        let profile: Vec<Vec<[f64; 2]>> = stations.iter().map(|s| vec![s.inner, s.outer]).collect();
        let (mesh, grid) = Mesh::revolve(&profile, self.segments);
        CupMesh {
            mesh,
            stations,
            grid,
            segments: self.segments,
        }
    }
}

/// What the runtime needs of one mode (reference material, size 1). Displacements are of
/// the mass-normalised shape, 1/sqrt(kg).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModeRecord {
    pub freq_hz: f64,
    /// Azimuthal order n (number of nodal diameters) of the mode's outer-surface motion.
    pub order: usize,
    /// RMS normal displacement where grains hit: floor, wall rings (bottom to top), rim.
    pub gains: Gains,
    /// Signed normal displacement at each wall ring's mid-height and each sector azimuth.
    pub sectors: Vec<Vec<f64>>,
    /// Largest surface-normal displacement (the modal mass is 1 / peak^2), 1/sqrt(kg).
    pub peak: f64,
    /// Outer surface area times the mean square of the shape normalised to its peak, m^2
    /// (thesis 3.5: the normal velocity radiates; times the radiation efficiency at runtime).
    pub radiating_area_m2: f64,
    /// Orientation theta0 of the mode's azimuthal pattern: the outer surface moves as
    /// cos(order (theta - theta0)), so a far listener at azimuth theta hears the mode with
    /// the directivity sqrt(2) cos(order (theta - theta0)) relative to its mean (rad).
    pub orientation_rad: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Gains {
    pub floor: f64,
    pub wall: Vec<f64>,
    pub rim: f64,
}

/// Areas of the places grains hit, m^2 (weights of the fill damping).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Areas {
    pub floor: f64,
    pub wall: Vec<f64>,
    pub rim: f64,
    pub outer: f64,
}

/// The file `assets/cups/<shape>.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CupAsset {
    pub format: u32,
    pub generated_by: String,
    #[serde(flatten)]
    pub spec: CupSpec,
    pub height_m: f64,
    pub rim_radius_m: f64,
    pub floor_radius_m: f64,
    /// Mass of the cup in the reference material, kg.
    pub mass_kg: f64,
    pub areas_m2: Areas,
    pub sector_azimuths_rad: Vec<f64>,
    pub mesh_nodes: usize,
    pub mesh_elements: usize,
    pub modes: Vec<ModeRecord>,
}

impl CupMesh {
    fn node(&self, i: usize, j: usize, k: usize) -> usize {
        self.grid[(i * 2 + j) * (self.segments + 1) + k]
    }

    fn theta(&self, k: usize) -> f64 {
        2.0 * PI * k as f64 / self.segments as f64
    }

    /// Normal displacement of `shape` at node (i, j, k) along the (r, z) normal `n`.
    fn normal_disp(&self, shape: &[f64], i: usize, j: usize, k: usize, n: [f64; 2]) -> f64 {
        let id = self.node(i, j, k);
        let th = self.theta(k);
        let u = &shape[3 * id..3 * id + 3];
        (u[0] * th.cos() + u[1] * th.sin()) * n[0] + u[2] * n[1]
    }

    /// Reduces modes to records (module doc). `height` is the rim's z, `floor_m` the floor.
    pub fn reduce(&self, spec: &CupSpec, modes: &Modes) -> (Vec<ModeRecord>, Areas) {
        let dth = 2.0 * PI / self.segments as f64;
        let seg = self.segments;
        let last = self.stations.len() - 1;
        let z0 = spec.floor_m;
        let z1 = spec.height_m();
        let ring_of = |z: f64| (((z - z0) / (z1 - z0) * WALL_RINGS as f64) as usize).min(WALL_RINGS - 1);
        let floor_r = FLOOR_HIT_RADIUS * spec.floor_radius_m();
        let area_w = |r: f64, ds: f64| r.max(ds / 4.0) * ds * dth;
        // places: (kind, station, j, normal, weight); kind 0 floor, 1+ring wall, 4 rim, 5 outer only
        let mut areas = Areas {
            floor: 0.0,
            wall: vec![0.0; WALL_RINGS],
            rim: 0.0,
            outer: 0.0,
        };
        struct Place {
            kind: usize,
            i: usize,
            j: usize,
            n: [f64; 2],
            w: f64,
            outer: bool,
        }
        let mut places = Vec::new();
        for (i, st) in self.stations.iter().enumerate() {
            // inner surface (the normal's sign does not matter for the gains)
            let w = area_w(st.inner[0], st.ds);
            let kind = if st.floor {
                (st.inner[0] <= floor_r).then_some(0)
            } else if i < last {
                Some(1 + ring_of(st.inner[1]))
            } else {
                None
            };
            if let Some(kind) = kind {
                match kind {
                    0 => areas.floor += w * seg as f64,
                    k => areas.wall[k - 1] += w * seg as f64,
                }
                places.push(Place {
                    kind,
                    i,
                    j: 0,
                    n: st.normal,
                    w,
                    outer: false,
                });
            }
            let wo = area_w(st.outer[0], st.ds);
            areas.outer += wo * seg as f64;
            places.push(Place {
                kind: 5,
                i,
                j: 1,
                n: st.normal,
                w: wo,
                outer: true,
            });
        }
        let rim = self.stations[last];
        let rim_w = 0.5 * spec.wall_m * rim.inner[0] * dth;
        for j in 0..2 {
            areas.rim += rim_w * seg as f64;
            areas.outer += rim_w * seg as f64;
            places.push(Place {
                kind: 4,
                i: last,
                j,
                n: [0.0, 1.0],
                w: rim_w,
                outer: true,
            });
        }
        // sector points: the station nearest each ring's mid-height
        let ring_station: Vec<usize> = (0..WALL_RINGS)
            .map(|r| {
                let z = z0 + (r as f64 + 0.5) / WALL_RINGS as f64 * (z1 - z0);
                (0..last)
                    .filter(|&i| !self.stations[i].floor)
                    .min_by(|&a, &b| {
                        (self.stations[a].inner[1] - z)
                            .abs()
                            .total_cmp(&(self.stations[b].inner[1] - z).abs())
                    })
                    .unwrap_or(last)
            })
            .collect();
        let mut records = Vec::with_capacity(modes.freqs_hz.len());
        for (f, shape) in modes.freqs_hz.iter().zip(&modes.shapes) {
            let mut sum = [0.0f64; 5];
            let mut wsum = [0.0f64; 5];
            let (mut outer2, mut outer_w, mut peak) = (0.0f64, 0.0f64, 0.0f64);
            let mut strongest = (0.0f64, 0.0f64, 0.0f64);
            let mut fourier = vec![(0.0f64, 0.0f64); seg / 2 + 1];
            let mut power = vec![0.0f64; seg / 2 + 1];
            let mut fouriers: Vec<Vec<(f64, f64)>> = Vec::new();
            for p in &places {
                fourier.iter_mut().for_each(|c| *c = (0.0, 0.0));
                for k in 0..seg {
                    let d = self.normal_disp(shape, p.i, p.j, k, p.n);
                    peak = peak.max(d.abs());
                    if p.kind < 5 {
                        sum[p.kind] += p.w * d * d;
                        wsum[p.kind] += p.w;
                    }
                    if p.outer {
                        outer2 += p.w * d * d;
                        outer_w += p.w;
                        for (n, c) in fourier.iter_mut().enumerate() {
                            let a = n as f64 * self.theta(k);
                            c.0 += d * a.cos();
                            c.1 += d * a.sin();
                        }
                    }
                }
                if p.outer {
                    for (pw, c) in power.iter_mut().zip(&fourier) {
                        *pw += p.w * (c.0 * c.0 + c.1 * c.1);
                    }
                    fouriers.push(fourier.clone());
                }
            }
            let rms = |k: usize| if wsum[k] > 0.0 { (sum[k] / wsum[k]).sqrt() } else { 0.0 };
            let order = (0..power.len())
                .max_by(|&a, &b| power[a].total_cmp(&power[b]))
                .unwrap_or(0);
            // orientation from the outer station where the order-n component is strongest
            for c in &fouriers {
                let (re, im) = c[order];
                if re * re + im * im > strongest.0 {
                    strongest = (re * re + im * im, re, im);
                }
            }
            fouriers.clear();
            let orientation_rad = if order > 0 {
                strongest.2.atan2(strongest.1) / order as f64
            } else {
                0.0
            };
            let sectors = ring_station
                .iter()
                .map(|&i| {
                    SECTOR_AZIMUTHS
                        .iter()
                        .map(|az| {
                            let k = ((az / dth).round() as usize) % seg;
                            self.normal_disp(shape, i, 0, k, self.stations[i].normal)
                        })
                        .collect()
                })
                .collect();
            let peak = peak.max(1e-30);
            records.push(ModeRecord {
                freq_hz: *f,
                order,
                gains: Gains {
                    floor: rms(0),
                    wall: (0..WALL_RINGS).map(|r| rms(1 + r)).collect(),
                    rim: rms(4),
                },
                sectors,
                peak,
                radiating_area_m2: areas.outer * outer2 / outer_w.max(1e-30) / (peak * peak),
                orientation_rad,
            });
        }
        (records, areas)
    }
}

/// Meshes the cup, solves for its lowest `count` elastic modes and reduces them.
pub fn analyse(shape: Shape, count: usize) -> Result<CupAsset, FemError> {
    let spec = shape.spec();
    let cm = spec.mesh();
    let mat = spec.reference_material.material;
    let sys = System::assemble(&cm.mesh, &mat);
    let modes = lowest_modes(&cm.mesh, &sys, count, EigenOptions::default())?;
    let (records, areas) = cm.reduce(&spec, &modes);
    Ok(CupAsset {
        format: 1,
        generated_by: "cargo xtask modal (granary-fem)".to_string(),
        height_m: spec.height_m(),
        rim_radius_m: spec.rim_radius_m(),
        floor_radius_m: spec.floor_radius_m(),
        mass_kg: mat.density * cm.mesh.volume(),
        areas_m2: areas,
        sector_azimuths_rad: SECTOR_AZIMUTHS.to_vec(),
        mesh_nodes: cm.mesh.nodes.len(),
        mesh_elements: cm.mesh.tets.len(),
        modes: records,
        spec,
    })
}

/// Analyses the named shapes (all if `only` is empty) and writes `<dir>/<shape>.json`;
/// returns one line of summary per file.
pub fn write_assets(dir: &std::path::Path, only: &[String]) -> Result<Vec<String>, String> {
    let known: Vec<&str> = Shape::ALL.iter().map(|s| s.id()).collect();
    if let Some(bad) = only.iter().find(|n| !known.contains(&n.as_str())) {
        return Err(format!("unknown cup shape {bad:?} (known: {})", known.join(", ")));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut lines = Vec::new();
    for shape in Shape::ALL {
        if !only.is_empty() && !only.iter().any(|s| s == shape.id()) {
            continue;
        }
        let start = std::time::Instant::now();
        let asset = analyse(shape, MODES_PER_CUP).map_err(|e| format!("{}: {e}", shape.id()))?;
        let path = dir.join(format!("{}.json", shape.id()));
        let json = serde_json::to_string_pretty(&asset).map_err(|e| e.to_string())? + "\n";
        std::fs::write(&path, json).map_err(|e| format!("{}: {e}", path.display()))?;
        let first: Vec<String> = asset
            .modes
            .iter()
            .take(6)
            .map(|m| format!("{:.0}", m.freq_hz))
            .collect();
        lines.push(format!(
            "{}: {} nodes, {} tetrahedra, {} modes {:.0}..{:.0} Hz (first {} Hz), {:.1} s",
            path.display(),
            asset.mesh_nodes,
            asset.mesh_elements,
            asset.modes.len(),
            asset.modes.first().map_or(0.0, |m| m.freq_hz),
            asset.modes.last().map_or(0.0, |m| m.freq_hz),
            first.join(", "),
            start.elapsed().as_secs_f64()
        ));
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cup_meshes_have_the_volume_of_their_profile() {
        for shape in Shape::ALL {
            let spec = shape.spec();
            let cm = spec.mesh();
            // Pappus: volume of the revolved meridian polygon (inner + outer outline)
            let mut poly: Vec<[f64; 2]> = cm.stations.iter().map(|s| s.inner).collect();
            poly.extend(cm.stations.iter().rev().map(|s| s.outer));
            let (mut area, mut moment) = (0.0, 0.0);
            for i in 0..poly.len() {
                let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
                let cr = a[0] * b[1] - b[0] * a[1];
                area += cr / 2.0;
                moment += cr * (a[0] + b[0]) / 6.0;
            }
            let exact = 2.0 * PI * moment.abs();
            let v = cm.mesh.volume();
            // the straight-sided polygon around is 0.4 % smaller than the circle (40 segments)
            assert!(
                (v / exact - 1.0).abs() < 0.01,
                "{}: {v} vs {exact} (area {area})",
                shape.id()
            );
        }
    }
}

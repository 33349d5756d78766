//! `granary inspect cup`: the geometry, the modes and the diffuse bands the engine plays
//! for a cup of a material, shape, size and fill level (computed by the engine's own
//! functions: `cups::Cup`, `modal::build_modes`, `modal::diffuse_params`,
//! `DiffuseResonator::set`).

use granary_engine::base::materials::{CupMaterial, GrainMaterial};
use granary_engine::base::simd::Isa;
use granary_engine::control::choices::CupShape;
use granary_engine::derived::cups::Cup;
use granary_engine::derived::cups::CupState;
use granary_engine::limits;
use granary_engine::resonators::air::{self, AirMode, AIR_MODES};
use granary_engine::resonators::diffuse::DiffuseResonator;
use granary_engine::resonators::modal::{build_modes, diffuse_params, Mode, MAX_MODES};
use serde::Serialize;
use std::io::Write;

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct CupArgs {
    /// Cup material (ceramic, porcelain, glass, steel, aluminium, plastic, wood).
    #[arg(long)]
    pub material: String,
    /// Cup shape (mug, tumbler, bowl, jar, metal_cup) or `auto` (the material's usual one).
    #[arg(long, default_value = "auto")]
    pub shape: String,
    /// Size factor: multiplies every length of the shape, 0.5..=2.5.
    #[arg(long, default_value_t = 1.0)]
    pub size: f64,
    /// Fill level, 0..=1 of the cup's inner depth.
    #[arg(long, default_value_t = 0.0)]
    pub fill: f64,
    /// Grain material filling the cup (added mass; the floor is covered by a few layers).
    #[arg(long, default_value = "sugar")]
    pub grain: String,
    /// Sample rate the modes are prepared for, Hz, within 8000..=768000 (modes above 0.45 of
    /// it are dropped).
    #[arg(long, default_value_t = 48_000.0)]
    pub sample_rate: f32,
    /// The vessel closed under a twist-off lid, as a shaken jar is (the engine closes only a
    /// jar; here any shape, to compare): the air's resonances are then those of the column
    /// under the lid, which radiates them.
    #[arg(long)]
    pub closed: bool,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct GainsOut {
    pub floor: f64,
    pub wall: Vec<f64>,
    pub rim: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModeOut {
    pub freq_hz: f64,
    pub t60_s: f64,
    /// Azimuthal order (nodal diameters).
    pub order: u32,
    pub modal_mass_kg: f64,
    /// sigma S <psi^2>, m^2.
    pub radiating_area_m2: f64,
    /// Modal velocity per unit impulse at each place (RMS normal displacement of the
    /// mass-normalised shape), 1/sqrt(kg).
    pub gains: GainsOut,
}

#[derive(Debug, Clone, Serialize)]
pub struct BandOut {
    pub centre_hz: f64,
    pub t60_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct DiffuseOut {
    pub low_hz: f64,
    pub loss_factor: f64,
    pub modal_density_per_hz: f64,
    pub coincidence_hz: f64,
    pub bands: Vec<BandOut>,
}

/// The cup's geometry as the engine uses it (`cups::Cup`), m: origin at the centre of
/// the inner floor, z up.
#[derive(Debug, Clone, Serialize)]
pub struct GeometryOut {
    pub rim_radius_m: f64,
    pub floor_radius_m: f64,
    pub widest_radius_m: f64,
    pub depth_m: f64,
    pub floor_thickness_m: f64,
    pub wall_thickness_m: f64,
    /// Inner profile (r, z) from the floor's centre to the rim.
    pub inner_profile_m: Vec<[f64; 2]>,
    /// Heights of the wall rings' edges above the floor.
    pub ring_edges_m: Vec<f64>,
    pub sector_azimuths_rad: Vec<f64>,
    /// Inner volume, m^3, and the pile height at the fill level, m.
    pub volume_m3: f64,
    pub pile_height_m: f64,
}

impl GeometryOut {
    fn of(c: &Cup, fill: f64) -> Self {
        let f = |x: f32| x as f64;
        GeometryOut {
            rim_radius_m: f(c.rim_radius),
            floor_radius_m: f(c.floor_radius),
            widest_radius_m: f(c.widest_radius()),
            depth_m: f(c.depth),
            floor_thickness_m: f(c.floor_thickness),
            wall_thickness_m: f(c.wall_thickness),
            inner_profile_m: c.profile().iter().map(|p| p.map(f)).collect(),
            ring_edges_m: c.ring_edges.iter().copied().map(f).collect(),
            sector_azimuths_rad: c.sector_azimuths.iter().copied().map(f).collect(),
            volume_m3: f(c.volume_below(c.depth)),
            pile_height_m: fill * f(c.depth),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CupReport {
    pub material: String,
    pub shape: String,
    pub size: f64,
    pub fill: f64,
    pub sample_rate_hz: f64,
    pub reference_material: String,
    pub mass_kg: f64,
    pub geometry: GeometryOut,
    pub modes: Vec<ModeOut>,
    pub diffuse: DiffuseOut,
    /// The air's resonances over the grains (`resonators::air`), for the `--grain` given.
    pub air: Vec<AirOut>,
    /// Whether the vessel is closed under a lid (`--closed`), and the lid's own (0, 0) mode
    /// in vacuo, Hz.
    pub closed: bool,
    pub lid_hz: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AirOut {
    pub freq_hz: f64,
    pub q: f64,
    /// |H| at the peak: the grains' sound there over their sound in the open.
    pub peak: f64,
}

fn mode_out(m: &Mode) -> ModeOut {
    let g = m.impulse_gains();
    ModeOut {
        freq_hz: m.freq_hz as f64,
        t60_s: m.t60_s() as f64,
        order: m.order,
        modal_mass_kg: m.mass_kg as f64,
        radiating_area_m2: m.radiating_area_m2 as f64,
        gains: GainsOut {
            floor: g[0] as f64,
            wall: g[1..4].iter().map(|&x| x as f64).collect(),
            rim: g[4] as f64,
        },
    }
}

impl CupArgs {
    /// The cup these arguments describe, validated.
    pub fn state(&self) -> Result<CupState, String> {
        let material = CupMaterial::from_id(self.material.trim()).ok_or_else(|| {
            let known: Vec<&str> = CupMaterial::ALL.iter().map(|m| m.id()).collect();
            format!("unknown cup material `{}` (known: {})", self.material, known.join(", "))
        })?;
        let shape = match self.shape.trim() {
            "auto" => CupShape::usual_for(material),
            s => CupShape::from_id(s).ok_or_else(|| {
                let known: Vec<&str> = CupShape::ALL.iter().map(|s| s.id()).collect();
                format!("unknown cup shape `{s}` (known: auto, {})", known.join(", "))
            })?,
        };
        let grain = GrainMaterial::from_id(self.grain.trim()).ok_or_else(|| {
            let known: Vec<&str> = GrainMaterial::ALL.iter().map(|m| m.id()).collect();
            format!("unknown grain material `{}` (known: {})", self.grain, known.join(", "))
        })?;
        let (lo, hi) = limits::CUP_SIZE;
        if !(self.size.is_finite() && self.size >= lo as f64 && self.size <= hi as f64) {
            return Err(format!("--size must be within {lo}..={hi}, got {}", self.size));
        }
        if !(self.fill.is_finite() && (0.0..=1.0).contains(&self.fill)) {
            return Err(format!("--fill must be within 0..=1, got {}", self.fill));
        }
        if !(self.sample_rate.is_finite() && (8_000.0..=768_000.0).contains(&self.sample_rate)) {
            return Err(format!(
                "--sample-rate must be within 8000..=768000 Hz, got {}",
                self.sample_rate
            ));
        }
        let g = grain.data();
        Ok(CupState {
            material,
            cup: Cup::new(shape, self.size as f32),
            fill: self.fill as f32,
            grain_density: g.elastic.density,
            grain_diameter_m: g.diameter_m,
        })
    }

    pub fn report(&self) -> Result<CupReport, String> {
        let cup = self.state()?;
        let mut modes = [Mode::ZERO; MAX_MODES];
        let max_f = granary_engine::resonators::modal::max_mode_freq_hz(self.sample_rate);
        let n = build_modes(&cup, max_f, &mut modes);
        let modes = &modes[..n];
        // the diffuse part's level at the default listener distance (the engine uses the
        // listener's distance from the cup)
        let distance = granary_engine::Settings::default().listener_distance_m;
        let params = diffuse_params(&cup, modes, distance);
        let mut diffuse = DiffuseResonator::new(self.sample_rate, 1, Isa::detect());
        diffuse.set(&params, |lo, hi| {
            modes.iter().filter(|m| m.freq_hz >= lo && m.freq_hz < hi).count()
        });
        let mut air = [AirMode::ZERO; AIR_MODES];
        let n_air = air::for_cup_to(&cup, self.closed, max_f as f64, &mut air);
        let lid_hz = self.closed.then(|| air::Lid::over(&cup.cup).fundamental_hz());
        let m = cup.cup.model();
        let el = cup.material.data().elastic;
        Ok(CupReport {
            material: cup.material.id().to_string(),
            shape: cup.cup.shape.id().to_string(),
            size: self.size,
            fill: self.fill,
            sample_rate_hz: self.sample_rate as f64,
            reference_material: m.reference_material.name.clone(),
            mass_kg: m.mass_kg * el.density as f64 / m.reference_material.density * self.size.powi(3),
            geometry: GeometryOut::of(&cup.cup, self.fill),
            modes: modes.iter().map(mode_out).collect(),
            diffuse: DiffuseOut {
                low_hz: params.low_hz as f64,
                loss_factor: params.loss_factor as f64,
                modal_density_per_hz: params.modal_density_per_hz as f64,
                coincidence_hz: params.coincidence_hz as f64,
                bands: diffuse
                    .band_centres()
                    .zip(diffuse.band_t60s())
                    .map(|(c, t)| BandOut {
                        centre_hz: c as f64,
                        t60_s: t as f64,
                    })
                    .collect(),
            },
            air: air[..n_air]
                .iter()
                .map(|a| AirOut {
                    freq_hz: a.freq_hz as f64,
                    q: a.q as f64,
                    peak: a.peak as f64,
                })
                .collect(),
            closed: self.closed,
            lid_hz,
        })
    }
}

/// `values` times `scale`, comma-separated, with `decimals` decimals.
fn list(values: &[f64], scale: f64, decimals: usize) -> String {
    let v: Vec<String> = values.iter().map(|x| format!("{:.*}", decimals, x * scale)).collect();
    v.join(", ")
}

/// Runs `granary inspect cup`, printing to `out`.
pub fn run(args: &CupArgs, out: &mut dyn Write) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let r = args.report()?;
    if args.json {
        let json = serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?;
        return writeln!(out, "{json}").map_err(io);
    }
    writeln!(
        out,
        "{} cup, shape {}, size {}, fill {}: {:.3} kg, {} modes (FEM, reference {}), diffuse above {:.0} Hz",
        r.material,
        r.shape,
        r.size,
        r.fill,
        r.mass_kg,
        r.modes.len(),
        r.reference_material,
        r.diffuse.low_hz
    )
    .map_err(io)?;
    let g = &r.geometry;
    writeln!(
        out,
        "inner: rim radius {:.1} mm, floor radius {:.1} mm, depth {:.1} mm, {:.0} ml; pile {:.1} mm; \
         wall rings' edges at {} mm; sectors at {} rad",
        1e3 * g.rim_radius_m,
        1e3 * g.floor_radius_m,
        1e3 * g.depth_m,
        1e6 * g.volume_m3,
        1e3 * g.pile_height_m,
        list(&g.ring_edges_m, 1e3, 1),
        list(&g.sector_azimuths_rad, 1.0, 2),
    )
    .map_err(io)?;
    writeln!(
        out,
        "{:>9} {:>8} {:>3}  {:>8} {:>8} {:>8} {:>8} {:>8}   (gains: 1/sqrt(kg))",
        "freq Hz", "T60 s", "n", "floor", "wall 1", "wall 2", "wall 3", "rim"
    )
    .map_err(io)?;
    for m in &r.modes {
        writeln!(
            out,
            "{:>9.1} {:>8.3} {:>3}  {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
            m.freq_hz, m.t60_s, m.order, m.gains.floor, m.gains.wall[0], m.gains.wall[1], m.gains.wall[2], m.gains.rim
        )
        .map_err(io)?;
    }
    writeln!(
        out,
        "diffuse: loss factor {:.4}, modal density {:.4} /Hz, coincidence {:.0} Hz",
        r.diffuse.loss_factor, r.diffuse.modal_density_per_hz, r.diffuse.coincidence_hz
    )
    .map_err(io)?;
    for b in &r.diffuse.bands {
        writeln!(out, "  band {:>8.0} Hz  T60 {:.3} s", b.centre_hz, b.t60_s).map_err(io)?;
    }
    if let Some(lid) = r.lid_hz {
        writeln!(
            out,
            "closed under a twist-off lid (0.2 mm tinplate, its own mode {lid:.0} Hz): the air sounds through it"
        )
        .map_err(io)?;
    }
    if r.air.is_empty() {
        writeln!(out, "air: no resonance over the grains").map_err(io)?;
    }
    let against = if r.closed { "against" } else { "over" };
    for a in &r.air {
        writeln!(
            out,
            "air: {:>8.1} Hz  Q {:.1}  peak {:+.1} dB {against} the grains' own sound",
            a.freq_hz,
            a.q,
            20.0 * a.peak.log10()
        )
        .map_err(io)?;
    }
    Ok(())
}

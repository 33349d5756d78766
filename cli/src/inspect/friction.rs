//! `granary inspect friction`: one sliding contact (seed 003's micro-rectangles, Phya
//! §6.2.4's stick-slip), computed by the engine's `friction::Friction`: the contact patches'
//! statistics, the stick-slip, and the spectral centroid and level of a rendered second.

use super::contact::unit_text;
use granary_engine::base::materials::{FrictionMaterial, FrictionPairData, GrainMaterial, PatchSurface};
use granary_engine::control::params::{show_number, CUP_IDS, GRAIN_IDS, SURFACE_IDS};
use granary_engine::resonators::friction;
use granary_engine::resonators::friction::{Friction, REFERENCE_DISTANCE_M};
use serde::Serialize;
use std::io::Write;

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct FrictionArgs {
    /// The sliding material: a grain material (sugar, salt, fine_sand, rice, lentils,
    /// coffee_beans, glass_beads_0_5mm, glass_beads_1mm, glass_beads_2mm, steel_shot_1mm,
    /// plastic_discs_4mm, gravel).
    #[arg(long)]
    pub material: String,
    /// What it slides on: a grain material, a cup material (ceramic, porcelain, glass,
    /// steel, aluminium, plastic, wood) or a surface material (steel, ceramic, granite,
    /// concrete, wood, plastic, soil, wax; `surface:NAME` where a cup has the same name).
    #[arg(long)]
    pub on: String,
    /// Sliding speed, m/s, within (0, 10].
    #[arg(long)]
    pub speed: f64,
    /// Normal load, N, within (0, 1000].
    #[arg(long, default_value_t = 1.0)]
    pub load: f64,
    /// Length of the render the centroid and level are measured on, s, within [0.1, 60].
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    /// Sample rate of the render, Hz, within [8000, 768000].
    #[arg(long, default_value_t = 48_000.0)]
    pub rate: f64,
    /// Seed of the contact's junctions.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Errors in a sliding contact's description; each names the argument at fault.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FrictionError {
    #[error("--material: unknown grain material '{0}' (grain materials: {grains})", grains = GRAIN_IDS.join(", "))]
    UnknownMaterial(String),
    #[error("--on: unknown material '{0}' (grain materials: {grains}; cup materials: {cups}; surface materials: {surfaces})", grains = GRAIN_IDS.join(", "), cups = CUP_IDS.join(", "), surfaces = SURFACE_IDS.join(", "))]
    UnknownOn(String),
    /// A number outside its physical range.
    #[error("{arg} must be within {}{}, {}]{}, got {}", if *open_lo { "(" } else { "[" }, show_number(*lo), show_number(*hi), unit_text(unit), show_number(*value))]
    Arg {
        arg: &'static str,
        value: f64,
        lo: f64,
        hi: f64,
        /// The lower end is excluded.
        open_lo: bool,
        unit: &'static str,
    },
}

/// An `f32` as the `f64` its shortest decimal form reads as (0.2, not 0.20000000298...).
fn decimal(x: f32) -> f64 {
    x.to_string().parse().unwrap_or(x as f64)
}

/// `value` within `[lo, hi]` (or `(lo, hi]` if `open_lo`), or the error naming `arg`.
fn range(
    arg: &'static str,
    value: f64,
    lo: f64,
    hi: f64,
    open_lo: bool,
    unit: &'static str,
) -> Result<f64, FrictionError> {
    let below = if open_lo { value <= lo } else { value < lo };
    if !value.is_finite() || below || value > hi {
        return Err(FrictionError::Arg {
            arg,
            value,
            lo,
            hi,
            open_lo,
            unit,
        });
    }
    Ok(value)
}

/// One side of the contact, as the engine's table gives it (seed 003 eq. 8 and 18).
#[derive(Debug, Clone, Serialize)]
pub struct SideReport {
    pub material: String,
    /// alpha of eq. 8, `1/a = alpha v`, s/m^2.
    pub alpha_s_m2: f64,
    /// beta of eq. 8, `1/b = beta v`, s/m^2.
    pub beta_s_m2: f64,
    /// Standard deviation of the sides over their mean.
    pub spread: f64,
    pub thickness_m: f64,
    /// Share of the junctions whose patch rings on this side.
    pub share: f64,
}

/// What `granary inspect friction` prints. Units in the field names.
#[derive(Debug, Clone, Serialize)]
pub struct FrictionReport {
    pub material: String,
    pub on: String,
    pub speed_m_s: f64,
    pub load_n: f64,
    pub seconds: f64,
    pub sample_rate_hz: f64,
    pub mu_static: f64,
    pub mu_dynamic: f64,
    /// Whether the contact sticks and slips (mu_s > mu_d).
    pub stick_slip: bool,
    /// Slips per second (0 without stick-slip).
    pub stick_slip_rate_hz: f64,
    /// Junctions (contact patches) per second.
    pub patches_per_s: f64,
    /// Side a (along the slide) of the patches: mean and standard deviation, m.
    pub side_a_mean_m: f64,
    pub side_a_sd_m: f64,
    /// Side b (across the slide), m.
    pub side_b_mean_m: f64,
    pub side_b_sd_m: f64,
    /// Lowest and highest plate-mode frequency of the patches (eq. 18), Hz.
    pub plate_min_hz: f64,
    pub plate_max_hz: f64,
    /// Modes at or above this are not rendered (inaudible), Hz.
    pub rendered_max_hz: f64,
    /// Share of the patches' modes above `rendered_max_hz`.
    pub modes_above_share: f64,
    pub sides: [SideReport; 2],
    /// Spectral centroid of the render, Hz.
    pub spectral_centroid_hz: f64,
    /// Level of the render, dB SPL at `reference_distance_m` (null if silent).
    pub level_db_spl: Option<f64>,
    pub reference_distance_m: f64,
}

impl FrictionArgs {
    /// The two materials (A, the grain, and B, what it slides on), every number checked.
    pub fn check(&self) -> Result<(FrictionMaterial, FrictionMaterial), FrictionError> {
        let a = GrainMaterial::from_id(self.material.trim())
            .map(FrictionMaterial::Grain)
            .ok_or_else(|| FrictionError::UnknownMaterial(self.material.clone()))?;
        let b = FrictionMaterial::from_id(self.on.trim()).ok_or_else(|| FrictionError::UnknownOn(self.on.clone()))?;
        range("--speed", self.speed, 0.0, 10.0, true, "m/s")?;
        range("--load", self.load, 0.0, 1000.0, true, "N")?;
        range("--seconds", self.seconds, 0.1, 60.0, false, "s")?;
        range("--rate", self.rate, 8000.0, 768_000.0, false, "Hz")?;
        Ok((a, b))
    }
}

fn material_name(m: FrictionMaterial) -> String {
    match m {
        FrictionMaterial::Grain(g) => g.id().to_string(),
        FrictionMaterial::Cup(c) => format!("cup:{}", c.id()),
        FrictionMaterial::Surface(s) => format!("surface:{}", s.id()),
    }
}

fn side(m: FrictionMaterial, p: &PatchSurface, share: f32) -> SideReport {
    SideReport {
        material: material_name(m),
        alpha_s_m2: decimal(p.alpha_s_m2),
        beta_s_m2: decimal(p.beta_s_m2),
        spread: decimal(p.spread_a),
        thickness_m: decimal(p.thickness_m),
        share: decimal(share),
    }
}

/// Renders the contact and measures it.
pub fn report(args: &FrictionArgs) -> Result<FrictionReport, FrictionError> {
    let (a, b) = args.check()?;
    let pair = FrictionPairData::new(a, b);
    let rate = args.rate as f32;
    let mut contact = Friction::new(rate, args.seed, pair);
    let n = (args.seconds * args.rate).round() as usize;
    let mut out = vec![0.0f32; n];
    for chunk in out.chunks_mut(1024) {
        contact.render(args.speed as f32, args.load as f32, chunk);
    }
    let s = *contact.stats();
    let (a_mean, a_sd) = s.side_a();
    let (b_mean, b_sd) = s.side_b();
    let level = friction::level_db_spl(&out);
    let modes = s.patches as f64 * friction::MODES_PER_PATCH as f64;
    Ok(FrictionReport {
        material: material_name(a),
        on: material_name(b),
        speed_m_s: args.speed,
        load_n: args.load,
        seconds: args.seconds,
        sample_rate_hz: args.rate,
        mu_static: decimal(pair.mu_static),
        mu_dynamic: decimal(pair.mu_dynamic),
        stick_slip: pair.stick_slip(),
        stick_slip_rate_hz: s.slips_per_s(rate),
        patches_per_s: s.patches_per_s(rate),
        side_a_mean_m: a_mean,
        side_a_sd_m: a_sd,
        side_b_mean_m: b_mean,
        side_b_sd_m: b_sd,
        plate_min_hz: decimal(s.min_hz),
        plate_max_hz: decimal(s.max_hz),
        rendered_max_hz: decimal(contact.max_freq_hz()),
        modes_above_share: if modes > 0.0 { s.modes_above as f64 / modes } else { 0.0 },
        sides: [
            side(a, &pair.sides[0], pair.share_a),
            side(b, &pair.sides[1], 1.0 - pair.share_a),
        ],
        spectral_centroid_hz: friction::spectral_centroid_hz(&out, rate),
        level_db_spl: level.is_finite().then_some(level),
        reference_distance_m: decimal(REFERENCE_DISTANCE_M),
    })
}

/// Runs `granary inspect friction`, printing to `out`.
pub fn run(args: &FrictionArgs, out: &mut dyn Write) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let r = report(args).map_err(|e| e.to_string())?;
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?).map_err(io)?;
        return Ok(());
    }
    writeln!(
        out,
        "{} sliding on {} at {} m/s under {} N; {} s at {} Hz, listener {} m away",
        r.material, r.on, r.speed_m_s, r.load_n, r.seconds, r.sample_rate_hz, r.reference_distance_m
    )
    .map_err(io)?;
    let rows = [
        ("static friction mu_s", r.mu_static, ""),
        ("dynamic friction mu_d", r.mu_dynamic, ""),
        ("patches (junctions) per second", r.patches_per_s, "1/s"),
        ("side a, mean (eq. 8)", r.side_a_mean_m, "m"),
        ("side a, standard deviation", r.side_a_sd_m, "m"),
        ("side b, mean (eq. 8)", r.side_b_mean_m, "m"),
        ("side b, standard deviation", r.side_b_sd_m, "m"),
        ("lowest plate mode (eq. 18)", r.plate_min_hz, "Hz"),
        ("highest plate mode (eq. 18)", r.plate_max_hz, "Hz"),
        ("highest mode rendered", r.rendered_max_hz, "Hz"),
        ("spectral centroid", r.spectral_centroid_hz, "Hz"),
    ];
    for (what, value, unit) in rows {
        writeln!(out, "{what:<40}{value:.4e} {unit}").map_err(io)?;
    }
    let stick = if r.stick_slip {
        format!("on, {:.1} slips/s (Phya 6.2.4)", r.stick_slip_rate_hz)
    } else {
        "off (mu_s <= mu_d)".to_string()
    };
    writeln!(out, "{:<40}{stick}", "stick-slip").map_err(io)?;
    writeln!(
        out,
        "{:<40}{:.1} %",
        "modes above the rendered band",
        100.0 * r.modes_above_share
    )
    .map_err(io)?;
    let level = r
        .level_db_spl
        .map_or("silent".to_string(), |l| format!("{l:.1} dB SPL"));
    writeln!(out, "{:<40}{level}", "level at the listener").map_err(io)?;
    for s in &r.sides {
        writeln!(
            out,
            "patches on {:<29}{:.0} %: alpha {:.4e} s/m^2, beta {:.4e} s/m^2, spread {:.2}, thickness {:.4e} m",
            s.material,
            100.0 * s.share,
            s.alpha_s_m2,
            s.beta_s_m2,
            s.spread,
            s.thickness_m
        )
        .map_err(io)?;
    }
    Ok(())
}

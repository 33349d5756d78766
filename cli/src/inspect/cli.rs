//! `granary inspect …`: the command-line face of this module.

use super::contact::{material, ContactError, ContactSetup, Partner};
use super::table::{
    ground_ball_drop, loglog_slope, pan_ball_bearing_time_scale_s, table_6_1, GROUND_BALL_DROP_TC_S,
    PAN_BALL_BEARING_H_S,
};
use granary_engine::materials::Elastic;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Subcommand, Debug)]
pub enum InspectCommand {
    /// One collision of sphere A with sphere B, a rigid plane or a massive half-space: Hertz
    /// contact time, peak force, peak accelerations and peak acoustic pressure.
    Contact(Box<ContactArgs>),
    /// The seeds' published numbers beside Granary's: thesis Table 6.1 (peak pressure against
    /// v0 and its log-log slope), PAN Table 1's pulse time scale, the ground-sound paper's
    /// contact time.
    Tables {
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Also draw Table 6.1 (peak pressure against v0, log-log) into this PNG file.
        #[arg(long, value_name = "PNG")]
        plot: Option<PathBuf>,
    },
    /// The cup's modes (finite-element model scaled to material and size; frequency, T60,
    /// gains on the floor, wall rings and rim) and its diffuse bands, as the engine plays them.
    Cup(super::cup::CupArgs),
}

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct ContactArgs {
    /// Sphere A's material (a grain or cup material of the engine's table).
    #[arg(long)]
    pub a: String,
    /// What A hits: MATERIAL (a sphere), `rigid` (infinitely stiff and massive plane) or
    /// `plane:MATERIAL` (infinitely massive half-space). Default: a sphere identical to A.
    #[arg(long)]
    pub b: Option<String>,
    /// A's radius, mm. Default: the grain material's proxy radius.
    #[arg(long)]
    pub a_radius_mm: Option<f64>,
    /// B's radius, mm. Default: the grain material's proxy radius, or A's if B is A's material.
    #[arg(long)]
    pub b_radius_mm: Option<f64>,
    /// Override A's Young's modulus, Pa.
    #[arg(long)]
    pub a_e: Option<f64>,
    /// Override A's Poisson ratio.
    #[arg(long)]
    pub a_nu: Option<f64>,
    /// Override A's density, kg/m^3.
    #[arg(long)]
    pub a_rho: Option<f64>,
    /// Override B's Young's modulus, Pa.
    #[arg(long)]
    pub b_e: Option<f64>,
    /// Override B's Poisson ratio.
    #[arg(long)]
    pub b_nu: Option<f64>,
    /// Override B's density, kg/m^3.
    #[arg(long)]
    pub b_rho: Option<f64>,
    /// Coefficient of restitution (impulse m_eff (1 + e) v0). Default 1: elastic.
    #[arg(long, default_value_t = 1.0)]
    pub restitution: f64,
    /// Normal speed of approach, m/s.
    #[arg(long)]
    pub v0: f64,
    /// Distance from A's centre to the listener, m.
    #[arg(long, default_value_t = 0.15)]
    pub distance: f64,
    /// Angle between the collision normal (A's acceleration) and the listener, degrees.
    #[arg(long, default_value_t = 0.0)]
    pub angle: f64,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also draw the pressure waveform into this PNG file.
    #[arg(long, value_name = "PNG")]
    pub plot: Option<PathBuf>,
    /// Sample rate of the engine rendering drawn in the plot, Hz.
    #[arg(long, default_value_t = 96_000.0)]
    pub plot_rate: f32,
}

fn with_overrides(mut e: Elastic, youngs: Option<f64>, nu: Option<f64>, rho: Option<f64>) -> Elastic {
    if let Some(x) = youngs {
        e.youngs_pa = x as f32;
    }
    if let Some(x) = nu {
        e.poisson = x as f32;
    }
    if let Some(x) = rho {
        e.density = x as f32;
    }
    e
}

impl ContactArgs {
    /// The collision these arguments describe, validated.
    pub fn setup(&self) -> Result<ContactSetup, ContactError> {
        let (a_el, a_diameter) = material(self.a.trim())?;
        let a = with_overrides(a_el, self.a_e, self.a_nu, self.a_rho);
        let a_radius_m = match (self.a_radius_mm, a_diameter) {
            (Some(mm), _) => mm * 1e-3,
            (None, Some(d)) => d / 2.0,
            (None, None) => return Err(ContactError::NoRadius(self.a.clone())),
        };
        let b_spec = self.b.as_deref().map(str::trim);
        let b = match b_spec {
            Some("rigid") => Partner::Rigid,
            Some(s) if s.starts_with("plane:") => {
                let (el, _) = material(&s["plane:".len()..])?;
                Partner::Plane {
                    elastic: with_overrides(el, self.b_e, self.b_nu, self.b_rho),
                }
            }
            other => {
                let (el, diameter, same) = match other {
                    None => (a, Some(a_radius_m * 2.0), true),
                    Some(name) => {
                        let (el, d) = material(name)?;
                        (el, d, name == self.a.trim())
                    }
                };
                let radius_m = match (self.b_radius_mm, diameter) {
                    (Some(mm), _) => mm * 1e-3,
                    _ if same => a_radius_m,
                    (None, Some(d)) => d / 2.0,
                    (None, None) => return Err(ContactError::NoRadius(other.unwrap_or_default().to_string())),
                };
                let base = if other.is_none() { a } else { el };
                Partner::Sphere {
                    elastic: with_overrides(base, self.b_e, self.b_nu, self.b_rho),
                    radius_m,
                }
            }
        };
        let setup = ContactSetup {
            a,
            a_radius_m,
            b,
            v0: self.v0,
            restitution: self.restitution,
            distance_m: self.distance,
            angle_rad: self.angle.to_radians(),
        };
        setup.validate()?;
        Ok(setup)
    }
}

/// Runs one `inspect` command, printing to `out`.
pub fn run(command: &InspectCommand, out: &mut dyn Write) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    match command {
        InspectCommand::Cup(args) => super::cup::run(args, out),
        InspectCommand::Contact(args) => {
            let setup = args.setup().map_err(|e| e.to_string())?;
            let r = setup.report();
            if args.json {
                let json = serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?;
                writeln!(out, "{json}").map_err(io)?;
            } else {
                let opt = |x: Option<f64>, unit: &str| x.map_or("-".to_string(), |x| format!("{x:.4e} {unit}"));
                writeln!(out, "contact time (Hertz, PAN eq. 7)       {:.4e} s", r.contact_time_s).map_err(io)?;
                writeln!(out, "impulse m_eff (1 + e) v0              {:.4e} N s", r.impulse_n_s).map_err(io)?;
                writeln!(out, "peak force (half-sine, PAN eq. 10)    {:.4e} N", r.peak_force_n).map_err(io)?;
                writeln!(
                    out,
                    "peak force (Hertz law, PAN eq. 5)     {:.4e} N",
                    r.hertz_peak_force_n
                )
                .map_err(io)?;
                writeln!(
                    out,
                    "peak acceleration of A                {:.4e} m/s^2",
                    r.peak_accel_a_m_s2
                )
                .map_err(io)?;
                writeln!(
                    out,
                    "peak acceleration of B                {}",
                    opt(r.peak_accel_b_m_s2, "m/s^2")
                )
                .map_err(io)?;
                writeln!(
                    out,
                    "peak pressure of A (thesis eq. 4.1-2) {:.4e} Pa",
                    r.peak_pressure_pa
                )
                .map_err(io)?;
                writeln!(
                    out,
                    "peak pressure of A + B                {}",
                    opt(r.peak_pressure_pair_pa, "Pa")
                )
                .map_err(io)?;
            }
            if let Some(path) = &args.plot {
                if !(8_000.0..=768_000.0).contains(&args.plot_rate) {
                    return Err("--plot-rate must be within 8000..=768000 Hz".into());
                }
                super::plot::collision_waveform(&setup, args.plot_rate, path).map_err(|e| e.to_string())?;
                if !args.json {
                    writeln!(out, "wrote {}", path.display()).map_err(io)?;
                }
            }
            Ok(())
        }
        InspectCommand::Tables { json, plot } => {
            let rows = table_6_1();
            let slope = |f: fn(&super::table::PressureRow) -> f64| loglog_slope(rows.iter().map(|r| (r.v0_m_s, f(r))));
            let pan = pan_ball_bearing_time_scale_s();
            let ground = ground_ball_drop().report().contact_time_s;
            if *json {
                let v = serde_json::json!({
                    "table_6_1": {
                        "rows": rows,
                        "slope_thesis": slope(|r| r.thesis_pa),
                        "slope_granary": slope(|r| r.granary_pa),
                        "slope_granary_hertz_peak": slope(|r| r.granary_hertz_peak_pa),
                    },
                    "pan_table_1_ball_bearing_h_s": { "published": PAN_BALL_BEARING_H_S, "granary": pan },
                    "ground_table_1_contact_time_s": { "published": GROUND_BALL_DROP_TC_S, "granary": ground },
                });
                writeln!(out, "{}", serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?).map_err(io)?;
            } else {
                writeln!(
                    out,
                    "Thesis Table 6.1: peak pressure (Pa) of one glass sphere, a = 1 mm, r = 0.15 m"
                )
                .map_err(io)?;
                writeln!(
                    out,
                    "{:>10}  {:>11}  {:>11} {:>6}  {:>11} {:>6}",
                    "v0 (m/s)", "thesis", "hertz peak", "ratio", "engine", "ratio"
                )
                .map_err(io)?;
                for r in &rows {
                    writeln!(
                        out,
                        "{:>10.4e}  {:>11.4e}  {:>11.4e} {:>6.3}  {:>11.4e} {:>6.3}",
                        r.v0_m_s,
                        r.thesis_pa,
                        r.granary_hertz_peak_pa,
                        r.granary_hertz_peak_pa / r.thesis_pa,
                        r.granary_pa,
                        r.granary_pa / r.thesis_pa
                    )
                    .map_err(io)?;
                }
                writeln!(
                    out,
                    "log-log slope: thesis {:.4}, hertz peak {:.4}, engine {:.4}",
                    slope(|r| r.thesis_pa),
                    slope(|r| r.granary_hertz_peak_pa),
                    slope(|r| r.granary_pa)
                )
                .map_err(io)?;
                writeln!(
                    out,
                    "PAN Table 1, ball bearing pulse time scale h = tau/5: published {:.4e} s, Granary {:.4e} s",
                    PAN_BALL_BEARING_H_S, pan
                )
                .map_err(io)?;
                writeln!(
                    out,
                    "Ground-sound Table 1, steel ball on MDF contact time: published {:.4e} s, Granary {:.4e} s",
                    GROUND_BALL_DROP_TC_S, ground
                )
                .map_err(io)?;
            }
            if let Some(path) = plot {
                super::plot::table_6_1(&rows, path).map_err(|e| e.to_string())?;
                if !*json {
                    writeln!(out, "wrote {}", path.display()).map_err(io)?;
                }
            }
            Ok(())
        }
    }
}

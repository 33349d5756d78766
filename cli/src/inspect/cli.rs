//! `granary inspect …`: the command-line face of this module.

use super::contact::{material, ContactError, ContactSetup, Partner};
use super::table::{
    ground_ball_drop, loglog_slope, pan_ball_bearing_time_scale_s, table_6_1, GROUND_BALL_DROP_TC_S,
    PAN_BALL_BEARING_H_S,
};
use granary_engine::base::materials::{Elastic, GrainMaterial};
use granary_engine::control::choices::Shape;
use granary_engine::control::params::show_number;
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
    /// One ball dropped on the ground (seed 002): the ground's own sound (Lamb's problem and
    /// the Rayleigh integral) beside the ball's, their peaks and intensity ratio; or, with
    /// `--table3`, seed 002 Table 3 as computed beside the published one.
    Ground(Box<super::ground::GroundArgs>),
    /// One grain sliding on a grain, a cup or a surface (seed 003's micro-rectangles, Phya's
    /// stick-slip): contact-patch statistics, stick-slip, and the spectral centroid and level
    /// of a rendered second.
    Friction(Box<super::friction::FrictionArgs>),
    /// A contact file (`granary render --collisions`, `cargo xtask dem`) reduced to the
    /// generator's cells: per cell (floor, wall rings, grain on grain, surface) the contacts,
    /// their rate and their normal speeds.
    Collisions(Box<super::contacts::ContactsArgs>),
    /// A grain as the engine renders it: shape, size, volume, mass, inertia tensor and each
    /// body axis's far-field dipole coefficient D_i, m³ (a sphere's: a³/2, seed 002 eq. 16).
    Grain(Box<super::grain::GrainArgs>),
    /// The collision databank's lookup at a moment of a preset's pour (thesis 7.1): the
    /// family, the restitution, friction, grain diameter, fill and fall height asked and used
    /// (clamped to the bank's grid; a cup larger than the bank's asked as the similar pour
    /// into it), and per cell the rate per arriving grain, the collisions a second and their
    /// mean speed, as the generator draws them with `statistics` = bank.
    Bank(Box<super::bank::BankArgs>),
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
    /// A's radius, mm, within [0.001, 1000]. Default: the grain material's proxy radius.
    #[arg(long)]
    pub a_radius_mm: Option<f64>,
    /// B's radius, mm, within [0.001, 1000] (B a sphere only). Default: the grain material's
    /// proxy radius, or A's if B is A's material.
    #[arg(long)]
    pub b_radius_mm: Option<f64>,
    /// Override A's Young's modulus, Pa, within [1e5, 1e13].
    #[arg(long)]
    pub a_e: Option<f64>,
    /// Override A's Poisson ratio, within [-1, 0.5).
    #[arg(long)]
    pub a_nu: Option<f64>,
    /// Override A's density, kg/m^3, within [1, 1e5].
    #[arg(long)]
    pub a_rho: Option<f64>,
    /// Override B's Young's modulus, Pa, within [1e5, 1e13] (not with `--b rigid`).
    #[arg(long)]
    pub b_e: Option<f64>,
    /// Override B's Poisson ratio, within [-1, 0.5) (not with `--b rigid`).
    #[arg(long)]
    pub b_nu: Option<f64>,
    /// Override B's density, kg/m^3, within [1, 1e5] (B a sphere only).
    #[arg(long)]
    pub b_rho: Option<f64>,
    /// Coefficient of restitution, within [0, 1] (impulse m_eff (1 + e) v0). Default 1: elastic.
    #[arg(long, default_value_t = 1.0)]
    pub restitution: f64,
    /// Normal speed of approach, m/s, within [1e-6, 100] (Hertz's elastic contact).
    #[arg(long)]
    pub v0: f64,
    /// Distance from A's centre to the listener, m, within [0.001, 100] and outside A.
    #[arg(long, default_value_t = 0.15)]
    pub distance: f64,
    /// Angle between the collision normal (A's acceleration) and the listener, degrees, within [0, 180].
    #[arg(long, default_value_t = 0.0)]
    pub angle: f64,
    /// A's shape (and B's, if B is a sphere): sphere, rice, lentil, disc, bean, cube, stone, or
    /// auto (A's grain material's own). Not a sphere: the collision over 1000 orientations is
    /// added (impulse, contact time, peak pressure, against spheres of the same volume).
    #[arg(long, default_value = "sphere")]
    pub shape: String,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also draw the pressure waveform into this PNG file.
    #[arg(long, value_name = "PNG")]
    pub plot: Option<PathBuf>,
    /// Sample rate of the engine rendering drawn in the plot, Hz, within [8000, 768000].
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

/// The physical range of each numeric argument: (flag, value, low, high, high excluded, unit).
type Range = (&'static str, Option<f64>, f64, f64, bool, &'static str);

impl ContactArgs {
    /// Every numeric argument given, with its range.
    fn ranges(&self) -> [Range; 13] {
        const MM: (f64, f64) = (1e-3, 1e3);
        const E: (f64, f64) = (1e5, 1e13);
        const RHO: (f64, f64) = (1.0, 1e5);
        [
            ("--v0", Some(self.v0), 1e-6, 100.0, false, "m/s"),
            ("--a-radius-mm", self.a_radius_mm, MM.0, MM.1, false, "mm"),
            ("--b-radius-mm", self.b_radius_mm, MM.0, MM.1, false, "mm"),
            ("--a-e", self.a_e, E.0, E.1, false, "Pa"),
            ("--b-e", self.b_e, E.0, E.1, false, "Pa"),
            ("--a-nu", self.a_nu, -1.0, 0.5, true, ""),
            ("--b-nu", self.b_nu, -1.0, 0.5, true, ""),
            ("--a-rho", self.a_rho, RHO.0, RHO.1, false, "kg/m^3"),
            ("--b-rho", self.b_rho, RHO.0, RHO.1, false, "kg/m^3"),
            ("--restitution", Some(self.restitution), 0.0, 1.0, false, ""),
            ("--distance", Some(self.distance), 1e-3, 100.0, false, "m"),
            ("--angle", Some(self.angle), 0.0, 180.0, false, "degrees"),
            (
                "--plot-rate",
                Some(self.plot_rate as f64),
                8_000.0,
                768_000.0,
                false,
                "Hz",
            ),
        ]
    }

    /// Checks every argument against its physical range and the combinations; the error
    /// names the argument at fault.
    pub fn check(&self) -> Result<(), ContactError> {
        for (arg, value, lo, hi, open_hi, unit) in self.ranges() {
            let Some(value) = value else { continue };
            let above = if open_hi { value >= hi } else { value > hi };
            if !value.is_finite() || value < lo || above {
                return Err(ContactError::Arg {
                    arg,
                    value,
                    lo,
                    hi,
                    open_hi,
                    unit,
                });
            }
        }
        let b = self.b.as_deref().map(str::trim);
        let given = |v: Option<f64>, flag: &'static str| v.map(|_| flag);
        let unused: Vec<&str> = match b {
            Some("rigid") => [
                given(self.b_e, "--b-e"),
                given(self.b_nu, "--b-nu"),
                given(self.b_rho, "--b-rho"),
                given(self.b_radius_mm, "--b-radius-mm"),
            ]
            .into_iter()
            .flatten()
            .collect(),
            Some(s) if s.starts_with("plane:") => {
                [given(self.b_rho, "--b-rho"), given(self.b_radius_mm, "--b-radius-mm")]
                    .into_iter()
                    .flatten()
                    .collect()
            }
            _ => Vec::new(),
        };
        if !unused.is_empty() {
            let what = if b == Some("rigid") {
                "`--b rigid` is infinitely stiff and massive: it has no elastic constants, density or radius"
            } else {
                "`--b plane:MATERIAL` is an infinitely massive half-space: it has no density or radius"
            };
            return Err(ContactError::Combination(format!(
                "{} cannot be used with --b {}: {what}",
                unused.join(", "),
                b.unwrap_or_default()
            )));
        }
        Ok(())
    }

    /// The collision these arguments describe, validated.
    pub fn setup(&self) -> Result<ContactSetup, ContactError> {
        self.check()?;
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
        if self.distance <= a_radius_m {
            return Err(ContactError::Combination(format!(
                "--distance {} m must be larger than A's radius, {} m: the listener is outside sphere A",
                show_number(self.distance),
                show_number(a_radius_m)
            )));
        }
        let setup = ContactSetup {
            a,
            a_radius_m,
            b,
            v0: self.v0,
            restitution: self.restitution,
            distance_m: self.distance,
            angle_rad: self.angle.to_radians(),
            shape: match self.shape.trim() {
                "auto" => GrainMaterial::from_id(self.a.trim())
                    .map(Shape::of)
                    .unwrap_or(Shape::Sphere),
                id => Shape::from_id(id).ok_or_else(|| {
                    ContactError::Combination(format!(
                        "--shape {id}: unknown shape (auto, {})",
                        Shape::ALL.map(Shape::id).join(", ")
                    ))
                })?,
            },
        };
        setup.validate()?;
        let t = setup.contact().duration_s as f64;
        if !(t.is_finite() && t <= MAX_CONTACT_S) {
            return Err(ContactError::Combination(format!(
                "this collision's contact would last {} s, beyond the {} s a collision may last \
                 (soft, heavy, large or slow): raise --v0 or the Young's modulus, or lower the radius or density",
                show_number(t),
                show_number(MAX_CONTACT_S)
            )));
        }
        Ok(setup)
    }
}

/// Longest contact `inspect contact` computes, s (a grain's lasts microseconds).
pub const MAX_CONTACT_S: f64 = 0.1;

/// Runs one `inspect` command, printing to `out`.
pub fn run(command: &InspectCommand, out: &mut dyn Write) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    match command {
        InspectCommand::Cup(args) => super::cup::run(args, out),
        InspectCommand::Ground(args) => super::ground::run(args, out),
        InspectCommand::Friction(args) => super::friction::run(args, out),
        InspectCommand::Collisions(args) => super::contacts::run(args, out),
        InspectCommand::Grain(args) => super::grain::run(args, out),
        InspectCommand::Bank(args) => super::bank::run(args, out),
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
                if let Some(s) = &r.shape {
                    writeln!(
                        out,
                        "as {}: {} orientations (the figures above: spheres of the same volume)",
                        s.shape, s.orientations
                    )
                    .map_err(io)?;
                    let [lo, mean, hi] = s.impulse_over_spheres;
                    writeln!(
                        out,
                        "  impulse over the spheres'           {lo:.3} to {hi:.3}, mean {mean:.3}"
                    )
                    .map_err(io)?;
                    let [lo, mid, hi] = s.contact_time_s;
                    writeln!(
                        out,
                        "  contact time                        {lo:.4e} to {hi:.4e} s, median {mid:.4e}"
                    )
                    .map_err(io)?;
                    let [p10, p50, p90] = s.peak_pressure_pa;
                    writeln!(
                        out,
                        "  peak pressure (engine, 96 kHz)      {p10:.4e} / {p50:.4e} / {p90:.4e} Pa (10th, 50th, 90th percentile); spheres {:.4e} Pa",
                        s.peak_pressure_spheres_pa
                    )
                    .map_err(io)?;
                }
            }
            if let Some(path) = &args.plot {
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

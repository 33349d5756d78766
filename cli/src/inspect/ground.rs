//! `granary inspect ground`: one ball dropped on the ground, and the ground's own sound beside
//! the ball's (seed 002, Qu & James), computed by the engine's ground model
//! (`engine::ground`: `BallDrop`, `BallDropSound`, `table_3`); and seed 002 Table 3 as
//! computed beside the published one.

use super::contact::ContactError;
use granary_engine::base::materials::{GrainMaterial, SurfaceMaterial};
use granary_engine::control::params::show_number;
use granary_engine::resonators::ground;
use granary_engine::resonators::ground::TABLE_3_PUBLISHED;
use granary_engine::resonators::ground::{BallDrop, BallDropSound, HalfSpace};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

/// Steps per contact time of the computation (`BallDrop::run`), as `ground::table_3` and the
/// engine's tests use.
pub const STEPS_PER_CONTACT: f64 = 16.0;

/// The largest time grid `inspect ground` computes on with the listener overhead
/// (`BallDrop::grid`): about a second of work.
pub const MAX_GRID: usize = 1 << 20;
/// The same with the listener off the vertical, where each step also integrates over
/// azimuth (about 50 times the work): about 10 s.
pub const MAX_GRID_OFF_AXIS: usize = 1 << 17;

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct GroundArgs {
    /// The ball's material: a surface material (steel, ceramic, granite, concrete, wood,
    /// plastic, soil, wax: seed 002 Table 2) or a grain material (sugar, salt, fine_sand,
    /// rice, lentils, coffee_beans, glass_beads_0_5mm, glass_beads_1mm, glass_beads_2mm,
    /// steel_shot_1mm, plastic_discs_4mm, gravel).
    #[arg(long, default_value = "steel", conflicts_with = "table3")]
    pub ball: String,
    /// The ground's material, a half-space: steel, ceramic, granite, concrete, wood (MDF),
    /// plastic (ABS), soil or wax (seed 002 Table 2).
    #[arg(long, default_value = "wood", conflicts_with = "table3")]
    pub ground: String,
    /// The ball's diameter, mm, within [0.01, 500]. Default: 20 (seed 002 Table 1), or the
    /// grain's own diameter if the ball is a grain material.
    #[arg(long, conflicts_with = "table3")]
    pub diameter_mm: Option<f64>,
    /// The drop height, cm, within [0.01, 1000] (impact speed sqrt(2 g h)).
    #[arg(long, default_value_t = 15.0, conflicts_with = "table3")]
    pub drop_height_cm: f64,
    /// Coefficient of restitution, within [0, 1] (impulse (1 + e) m v). Default: 0.5 (seed 002
    /// Table 1), or the grain's own if the ball is a grain material.
    #[arg(long, conflicts_with = "table3")]
    pub restitution: Option<f64>,
    /// The contact time, s, within [1e-7, 0.1]. Default: Hertz's for this ball, ground and
    /// speed (seed 002 eq. 11); Table 3 holds it at 1.633e-4 for every pair.
    #[arg(long, conflicts_with = "table3")]
    pub contact_time_s: Option<f64>,
    /// The listener relative to the impact point, X,Y,Z in m (Z up, the height above the
    /// ground, within (0, 100]; X and Y within [-100, 100]).
    #[arg(
        long,
        default_value = "0,0,0.2",
        allow_hyphen_values = true,
        conflicts_with = "table3"
    )]
    pub listener: String,
    /// Seed 002 Table 3 (ground over ball, dB, for every ball material on every ground) as
    /// computed, beside the published values, instead of one drop.
    #[arg(long)]
    pub table3: bool,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also draw the push response on this ground for a few regularisations (seed 002
    /// Fig. 2) and the drop's pressure at the listener into this PNG file.
    #[arg(long, value_name = "PNG", conflicts_with = "table3")]
    pub plot: Option<PathBuf>,
}

/// Errors in a ball drop's description; each names the argument at fault.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum GroundError {
    #[error("--ball: unknown material '{0}' (surface materials: {surfaces}; grain materials: {grains})", surfaces = surface_ids(), grains = grain_ids())]
    UnknownBall(String),
    #[error("--ground: unknown material '{0}' (surface materials: {surfaces})", surfaces = surface_ids())]
    UnknownGround(String),
    /// A number outside its physical range.
    #[error(transparent)]
    Range(#[from] ContactError),
    /// A malformed or out-of-range `--listener`.
    #[error("--listener {0}")]
    Listener(String),
    /// Arguments that do not go together.
    #[error("{0}")]
    Combination(String),
}

fn surface_ids() -> String {
    SurfaceMaterial::ALL.map(|m| m.id()).join(", ")
}

fn grain_ids() -> String {
    GrainMaterial::ALL.map(|m| m.id()).join(", ")
}

/// The ball's material: its elastic constants, and for a grain material its own diameter
/// (m) and restitution.
pub fn ball_material(name: &str) -> Result<(HalfSpace, Option<(f64, f64)>), GroundError> {
    if let Some(m) = SurfaceMaterial::from_id(name) {
        return Ok((HalfSpace::from_elastic(m.data().elastic), None));
    }
    if let Some(g) = GrainMaterial::from_id(name) {
        let d = g.data();
        return Ok((
            HalfSpace::from_elastic(d.elastic),
            Some((d.diameter_m as f64, d.restitution as f64)),
        ));
    }
    Err(GroundError::UnknownBall(name.to_string()))
}

/// The ground's material (seed 002 Table 2).
pub fn ground_material(name: &str) -> Result<HalfSpace, GroundError> {
    SurfaceMaterial::from_id(name)
        .map(|m| HalfSpace::from_elastic(m.data().elastic))
        .ok_or_else(|| GroundError::UnknownGround(name.to_string()))
}

/// `X,Y,Z` in metres: three finite numbers, X and Y within [-100, 100], Z within (0, 100].
pub fn parse_listener(text: &str) -> Result<[f64; 3], GroundError> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let malformed = || {
        GroundError::Listener(format!(
            "must be three numbers X,Y,Z in metres (Z the height above the ground, e.g. 0,0,0.2), got '{text}'"
        ))
    };
    if parts.len() != 3 {
        return Err(malformed());
    }
    let mut p = [0.0; 3];
    for (x, s) in p.iter_mut().zip(&parts) {
        *x = s.parse::<f64>().map_err(|_| malformed())?;
    }
    for (axis, x) in ["X", "Y"].into_iter().zip(p) {
        if !(x.is_finite() && (-100.0..=100.0).contains(&x)) {
            return Err(GroundError::Listener(format!(
                "{axis} must be within [-100, 100] m, got {}",
                show_number(x)
            )));
        }
    }
    if !(p[2].is_finite() && p[2] > 0.0 && p[2] <= 100.0) {
        return Err(GroundError::Listener(format!(
            "Z (the height above the ground) must be within (0, 100] m, got {}",
            show_number(p[2])
        )));
    }
    Ok(p)
}

fn range(arg: &'static str, value: f64, lo: f64, hi: f64, unit: &'static str) -> Result<f64, GroundError> {
    if value.is_finite() && (lo..=hi).contains(&value) {
        Ok(value)
    } else {
        Err(ContactError::Arg {
            arg,
            value,
            lo,
            hi,
            open_hi: false,
            unit,
        }
        .into())
    }
}

impl GroundArgs {
    /// The drop these arguments describe, validated (materials, ranges, the listener outside
    /// the ball, a grid small enough to compute in seconds).
    pub fn drop(&self) -> Result<BallDrop, GroundError> {
        let diameter_mm = self
            .diameter_mm
            .map(|d| range("--diameter-mm", d, 0.01, 500.0, "mm"))
            .transpose()?;
        let height_cm = range("--drop-height-cm", self.drop_height_cm, 0.01, 1000.0, "cm")?;
        let restitution = self
            .restitution
            .map(|e| range("--restitution", e, 0.0, 1.0, ""))
            .transpose()?;
        let contact_s = self
            .contact_time_s
            .map(|t| range("--contact-time-s", t, 1e-7, 0.1, "s"))
            .transpose()?;
        let listener = parse_listener(&self.listener)?;
        let (ball, grain) = ball_material(self.ball.trim())?;
        let ground = ground_material(self.ground.trim())?;
        let mut drop = BallDrop::table1(ball, ground);
        drop.listener = listener;
        drop.drop_height_m = height_cm * 1e-2;
        if let Some((d, e)) = grain {
            drop.diameter_m = d;
            drop.restitution = e;
        }
        if let Some(mm) = diameter_mm {
            drop.diameter_m = mm * 1e-3;
        }
        if let Some(e) = restitution {
            drop.restitution = e;
        }
        drop.contact_s = contact_s;
        let r = 0.5 * drop.diameter_m;
        let from_centre = (listener[0].powi(2) + listener[1].powi(2) + (listener[2] - r).powi(2)).sqrt();
        if from_centre <= r {
            return Err(GroundError::Combination(format!(
                "--listener {} is inside the ball (radius {} m, its centre {} m above the impact): move it \
                 further away or make --diameter-mm smaller",
                self.listener.trim(),
                show_number(r),
                show_number(r)
            )));
        }
        let off_axis = off_axis(listener);
        let max = max_grid(listener);
        let n = drop.grid(STEPS_PER_CONTACT).n;
        if n > max {
            return Err(GroundError::Combination(format!(
                "this drop needs {n} time steps (at most {max}{}): its contact, {} s, is short against \
                 the time the ground's waves take to pass under the listener (a few milliseconds at \
                 least); raise --diameter-mm (or --contact-time-s){}",
                if off_axis {
                    " with the listener off the vertical"
                } else {
                    ""
                },
                show_number(drop.contact_s.unwrap_or_else(|| drop.hertz_contact_s())),
                if off_axis {
                    ", or put --listener overhead (0,0,Z)"
                } else {
                    ""
                },
            )));
        }
        Ok(drop)
    }
}

/// How many times finer than the printed numbers' grid the plot's is: up to 8, keeping the
/// plot's grid within a sixteenth of `MAX_GRID` (of `MAX_GRID_OFF_AXIS` off the vertical).
pub fn plot_refinement(drop: &BallDrop) -> usize {
    (max_grid(drop.listener) / 16 / drop.grid(STEPS_PER_CONTACT).n).clamp(1, 8)
}

/// Whether the listener is off the vertical through the impact (`ground::RayleighPush`
/// then integrates over azimuth too).
fn off_axis(listener: [f64; 3]) -> bool {
    listener[0].hypot(listener[1]) >= 1e-6 * listener[2]
}

fn max_grid(listener: [f64; 3]) -> usize {
    if off_axis(listener) {
        MAX_GRID_OFF_AXIS
    } else {
        MAX_GRID
    }
}

/// What `granary inspect ground` prints for one drop. Units in the field names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroundReport {
    pub ball: String,
    pub ground: String,
    pub diameter_mm: f64,
    pub drop_height_cm: f64,
    pub restitution: f64,
    /// Relative to the impact point, Z up.
    pub listener_m: [f64; 3],
    pub ball_mass_kg: f64,
    /// The contact time the sounds are computed with: `--contact-time-s`, or Hertz's.
    pub contact_time_s: f64,
    /// Hertz's contact time (seed 002 eq. 11, PAN eq. 7).
    pub hertz_contact_time_s: f64,
    /// sqrt(2 g h).
    pub impact_speed_m_s: f64,
    /// (1 + e) m v.
    pub impulse_n_s: f64,
    /// The regularisation's length eps = c_s t_c / 4 (seed 002 eq. 11).
    pub epsilon_m: f64,
    pub ground_shear_speed_m_s: f64,
    pub ground_rayleigh_speed_m_s: f64,
    pub ground_pressure_speed_m_s: f64,
    /// The ground's own sound (seed 002 eq. 12).
    pub ground_peak_pa: f64,
    /// The ball's dipole and its image (seed 002 eq. 16–17).
    pub ball_peak_pa: f64,
    /// Their sum.
    pub sum_peak_pa: f64,
    /// 10 log10 of the time-integrated intensities, ground over ball (seed 002 Table 3).
    pub ground_to_ball_db: f64,
}

/// The ground and ball pressures added sample by sample (`BallDrop::run` computes both on
/// one grid).
pub fn sum(sound: &BallDropSound) -> Vec<f64> {
    sound
        .ground
        .samples
        .iter()
        .zip(&sound.ball.samples)
        .map(|(g, b)| g + b)
        .collect()
}

/// One drop, computed.
pub fn report(args: &GroundArgs, drop: &BallDrop, sound: &BallDropSound) -> GroundReport {
    let g = &drop.ground;
    GroundReport {
        ball: args.ball.trim().to_string(),
        ground: args.ground.trim().to_string(),
        diameter_mm: drop.diameter_m * 1e3,
        drop_height_cm: drop.drop_height_m * 1e2,
        restitution: drop.restitution,
        listener_m: drop.listener,
        ball_mass_kg: drop.mass_kg(),
        contact_time_s: sound.contact_s,
        hertz_contact_time_s: drop.hertz_contact_s(),
        impact_speed_m_s: sound.impact_speed_m_s,
        impulse_n_s: sound.impulse_ns,
        epsilon_m: g.shear_speed() * sound.contact_s / 4.0,
        ground_shear_speed_m_s: g.shear_speed(),
        ground_rayleigh_speed_m_s: g.rayleigh_speed(),
        ground_pressure_speed_m_s: g.pressure_speed(),
        ground_peak_pa: sound.ground.peak(),
        ball_peak_pa: sound.ball.peak(),
        sum_peak_pa: sum(sound).iter().fold(0.0, |m, x| m.max(x.abs())),
        ground_to_ball_db: sound.ground_to_ball_db(),
    }
}

/// Seed 002 Table 3, computed (`ground::table_3`) beside the published values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table3Report {
    /// The rows' ball materials and the columns' grounds (Table 2's order).
    pub balls: Vec<&'static str>,
    pub grounds: Vec<&'static str>,
    /// Ground over ball, dB, [ball][ground].
    pub computed_db: [[f64; 8]; 8],
    pub published_db: [[f64; 8]; 8],
    /// Computed minus published, dB.
    pub difference_db: [[f64; 8]; 8],
    pub worst_abs_difference_db: f64,
    /// The table's conventions (seed 002 §5.3): one contact time, the ground's Poisson ratio.
    pub contact_time_s: f64,
    pub ground_poisson: f64,
}

pub fn table_3_report() -> Table3Report {
    let computed = ground::table_3();
    let diff: [[f64; 8]; 8] =
        std::array::from_fn(|i| std::array::from_fn(|j| computed[i][j] - TABLE_3_PUBLISHED[i][j]));
    let ids = || SurfaceMaterial::HALF_SPACES.map(|m| m.id()).to_vec();
    Table3Report {
        balls: ids(),
        grounds: ids(),
        computed_db: computed,
        published_db: TABLE_3_PUBLISHED,
        difference_db: diff,
        worst_abs_difference_db: diff.iter().flatten().fold(0.0, |m, d| m.max(d.abs())),
        contact_time_s: 1.633e-4,
        ground_poisson: 0.25,
    }
}

/// Table 3 as a markdown table: a row per ball, a column per ground, each cell "computed /
/// published" in dB.
pub fn table_3_markdown(t: &Table3Report) -> String {
    let mut s = format!("| ball \\ ground | {} |\n", t.grounds.join(" | "));
    s += &format!("|---|{}\n", "---:|".repeat(t.grounds.len()));
    for (i, ball) in t.balls.iter().enumerate() {
        let cells: Vec<String> = (0..t.grounds.len())
            .map(|j| format!("{:.2} / {:.2}", t.computed_db[i][j], t.published_db[i][j]))
            .collect();
        s += &format!("| {ball} | {} |\n", cells.join(" | "));
    }
    s
}

/// Runs `granary inspect ground`, printing to `out`.
pub fn run(args: &GroundArgs, out: &mut dyn Write) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    if args.table3 {
        let t = table_3_report();
        if args.json {
            writeln!(out, "{}", serde_json::to_string_pretty(&t).map_err(|e| e.to_string())?).map_err(io)?;
        } else {
            writeln!(
                out,
                "Seed 002 Table 3: ground over ball, dB (time-integrated intensity), computed / published;\n\
                 2 cm ball dropped 15 cm, restitution 0.5, listener 20 cm above, t_c = {} s, ground's Poisson ratio {}\n",
                show_number(t.contact_time_s),
                t.ground_poisson
            )
            .map_err(io)?;
            write!(out, "{}", table_3_markdown(&t)).map_err(io)?;
            writeln!(
                out,
                "\nlargest difference from the published table: {:.2} dB",
                t.worst_abs_difference_db
            )
            .map_err(io)?;
        }
        return Ok(());
    }
    let drop = args.drop().map_err(|e| e.to_string())?;
    let sound = drop.run(STEPS_PER_CONTACT);
    let r = report(args, &drop, &sound);
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?).map_err(io)?;
    } else {
        let l = r.listener_m;
        writeln!(
            out,
            "{} ball, {} mm ({:.4e} kg), dropped {} cm on {}; listener at ({}, {}, {}) m",
            r.ball,
            show_number(r.diameter_mm),
            r.ball_mass_kg,
            show_number(r.drop_height_cm),
            r.ground,
            show_number(l[0]),
            show_number(l[1]),
            show_number(l[2])
        )
        .map_err(io)?;
        let rows = [
            ("contact time (Hertz, seed 002 eq. 11)", r.hertz_contact_time_s, "s"),
            ("contact time of the sounds below", r.contact_time_s, "s"),
            ("impact speed sqrt(2 g h)", r.impact_speed_m_s, "m/s"),
            ("impulse (1 + e) m v", r.impulse_n_s, "N s"),
            ("epsilon = c_s t_c / 4", r.epsilon_m, "m"),
            ("ground's shear wave speed c_s", r.ground_shear_speed_m_s, "m/s"),
            ("ground's Rayleigh wave speed c_R", r.ground_rayleigh_speed_m_s, "m/s"),
            (
                "ground's compression wave speed c_P",
                r.ground_pressure_speed_m_s,
                "m/s",
            ),
            ("peak pressure of the ground (eq. 12)", r.ground_peak_pa, "Pa"),
            ("peak pressure of the ball (eq. 16-17)", r.ball_peak_pa, "Pa"),
            ("peak pressure of both", r.sum_peak_pa, "Pa"),
        ];
        for (what, value, unit) in rows {
            writeln!(out, "{what:<40}{value:.4e} {unit}").map_err(io)?;
        }
        writeln!(
            out,
            "{:<40}{:.2} dB",
            "ground / ball (intensity, Table 3)", r.ground_to_ball_db
        )
        .map_err(io)?;
    }
    if let Some(path) = &args.plot {
        let title = format!(
            "A {} mm {} ball dropped {} cm on {}",
            show_number(r.diameter_mm),
            r.ball,
            show_number(r.drop_height_cm),
            r.ground
        );
        // the same drop on a finer grid, for smooth curves, where that is cheap
        let fine = match plot_refinement(&drop) {
            1 => sound,
            k => drop.run(STEPS_PER_CONTACT * k as f64),
        };
        super::plot::ground(&drop, &fine, r.ground_to_ball_db, &title, path).map_err(|e| e.to_string())?;
        if !args.json {
            writeln!(out, "wrote {}", path.display()).map_err(io)?;
        }
    }
    Ok(())
}

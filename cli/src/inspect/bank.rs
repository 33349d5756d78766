//! `granary inspect bank --preset P`: the collision databank's lookup (thesis §7.1; the
//! window/cell generator of §5.5–5.6) at one moment of a preset's pour — the family, the
//! three axes asked and used, and per cell the rate per arriving grain, the collisions a
//! second and their mean speed — as the generator draws from it with `statistics` = bank.

use crate::render::preset_with_changes;
use granary_engine::base::window::WINDOW;
use granary_engine::generator::lifetime_arrivals;
use granary_engine::render::{RenderOptions, Renderer};
use granary_engine::statistics::bank::{Axis, CELL_IDS};
use serde::Serialize;
use std::io::Write;

/// The sample rate the pour runs at, Hz (the plugin's usual rate; the scene's windows are
/// `WINDOW` samples).
const SAMPLE_RATE: f32 = 48_000.0;
/// The latest moment `--at` may ask for, s.
pub const MAX_AT_S: f64 = 60.0;

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct BankArgs {
    /// Factory preset id or name, or a preset file (a path: with a `/` or ending in `.json`).
    /// Default: the default preset.
    #[arg(long)]
    pub preset: Option<String>,
    /// Override a parameter: ID=VALUE (repeatable), e.g. --set fill=0.5 --set cup_shape=bowl.
    #[arg(long = "set", value_name = "ID=VALUE")]
    pub set: Vec<String>,
    /// The moment of the pour, s after it starts (it pours at the preset's rate from 0 s), within (0, 60].
    #[arg(long, default_value_t = 1.0)]
    pub at: f64,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// One axis of the lookup: the value asked, the grid value used, and whether the asked one
/// was outside the bank's range (the nearest entries used).
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct AxisReport {
    pub asked: f64,
    pub used: f64,
    pub clamped: bool,
}

impl From<Axis> for AxisReport {
    fn from(a: Axis) -> AxisReport {
        AxisReport {
            asked: a.asked as f64,
            used: a.used as f64,
            clamped: a.clamped,
        }
    }
}

/// One banked cell at that moment. Units in the field names.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CellReport {
    /// The bank's cell id (`bank::CELL_IDS`).
    pub cell: String,
    /// Collisions per arriving grain.
    pub rate_per_grain: f64,
    /// The generator's expected collisions a second: the rate times the arrivals weighted by
    /// the cell's lifetime profile (`generator::lifetime_arrivals`; in a steady pour, the
    /// arrivals).
    pub collisions_per_s: f64,
    /// The mixture's mean speed (bins at their geometric centres) times the impact speed.
    pub mean_speed_m_s: f64,
    /// The mean time from a grain's arrival to its collisions in the cell, s (lifetime bins
    /// at their middles; the bank's similar scene's times `sqrt(scale)`).
    pub mean_life_s: f64,
}

/// What `granary inspect bank` prints. Units in the field names.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BankReport {
    pub preset: String,
    pub at_s: f64,
    /// The preset's `statistics` setting (`model` or `bank`): whether its generator uses this.
    pub statistics: String,
    pub bank_source: String,
    /// The family asked for (`surface` or the cup's shape) and the one used.
    pub family_asked: String,
    pub family: String,
    pub family_fallback: bool,
    /// The grains' shape (the preset's, `shape`), and the shape of the entries used: their
    /// own where the bank holds it for the pour, else spheres of their volume.
    pub shape_asked: String,
    pub shape: String,
    pub restitution: AxisReport,
    /// The grains' friction on each other (dynamic; `used`: the frictions used at the two
    /// restitutions bracketing the grains', as weighted).
    pub friction: AxisReport,
    /// The pour's length scale over the bank's scenes: the cup's size over the banked cups'
    /// (1 onto the surface). By Froude similarity the grains' diameter and the fall height
    /// below are asked at the pour's over this (`Bank::select`; docs/dem.md, "The cup's
    /// size").
    pub scale: f64,
    /// The grains' diameter, m (the pour's over `scale`).
    pub grain_diameter_m: AxisReport,
    pub fill: AxisReport,
    /// The spout's height above the rim, m (the pour's over `scale`).
    pub fall_height_m: AxisReport,
    pub impact_speed_m_s: f64,
    pub arrivals_per_s: f64,
    pub cells: Vec<CellReport>,
}

/// Pours `args`' preset (its rate, from 0 s on) to `--at` and reads the engine's bank lookup
/// for the window there (`Engine::bank_lookup`).
pub fn report(args: &BankArgs) -> Result<BankReport, String> {
    if !(args.at.is_finite() && args.at > 0.0 && args.at <= MAX_AT_S) {
        return Err(format!("--at must be within (0, {MAX_AT_S}] s, got {}", args.at));
    }
    let p = preset_with_changes(args.preset.as_deref(), &args.set)?;
    let opts = RenderOptions {
        // the pour lasts until a second after the moment asked
        seconds: args.at + 2.0,
        sample_rate: SAMPLE_RATE,
        block_size: WINDOW,
        pour: None,
    };
    let mut r = Renderer::pour(&p.values, &opts);
    r.run_to((args.at * SAMPLE_RATE as f64).round() as usize);
    let engine = r.engine();
    let pour = engine.pour_state();
    let lookup = engine.bank_lookup();
    let arrivals = 0.5 * (pour.arrivals_start as f64 + pour.arrivals_end as f64);
    let v = pour.impact_speed as f64;
    let cells = CELL_IDS
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let c = &lookup.cells[i];
            let (start, end) = lifetime_arrivals(c, &pour);
            CellReport {
                cell: id.to_string(),
                rate_per_grain: c.rate as f64,
                collisions_per_s: 0.5 * (start + end) as f64 * c.rate as f64,
                mean_speed_m_s: lookup.mean_speed(i) as f64 * v,
                // the bank's scene's lives, sqrt(scale) times longer here (Froude similarity)
                mean_life_s: c.mean_life_s() as f64 * (lookup.scale as f64).sqrt(),
            }
        })
        .collect();
    Ok(BankReport {
        preset: p.name.clone(),
        at_s: args.at,
        statistics: engine.settings().statistics.id().into(),
        bank_source: granary_engine::statistics::bank::shipped().source.clone(),
        family_asked: lookup.asked.id().into(),
        family: lookup.family.id().into(),
        family_fallback: lookup.fell_back(),
        shape_asked: engine.settings().resolved_grain_shape().id().into(),
        shape: lookup.shape.id().into(),
        restitution: lookup.restitution.into(),
        friction: lookup.friction.into(),
        scale: lookup.scale as f64,
        grain_diameter_m: lookup.grain_diameter_m.into(),
        fill: lookup.fill.into(),
        fall_height_m: lookup.fall_height_m.into(),
        impact_speed_m_s: v,
        arrivals_per_s: arrivals,
        cells,
    })
}

/// Runs `granary inspect bank`, printing to `out`.
pub fn run(args: &BankArgs, out: &mut dyn Write) -> Result<(), String> {
    let r = report(args)?;
    let io = |e: std::io::Error| e.to_string();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?).map_err(io)?;
        return Ok(());
    }
    let uses = match r.statistics.as_str() {
        "bank" => "its generator draws from the bank",
        _ => "its generator uses the model; --set statistics=bank draws from this",
    };
    writeln!(out, "{} at {} s into the pour ({uses})", r.preset, r.at_s).map_err(io)?;
    writeln!(out, "bank: {}", r.bank_source).map_err(io)?;
    let family = if r.family_fallback {
        format!(
            "{} (the bank has no `{}`: nearest family used)",
            r.family, r.family_asked
        )
    } else {
        r.family.clone()
    };
    writeln!(out, "{:<16}{family}", "family").map_err(io)?;
    let shape = if r.shape == r.shape_asked {
        r.shape.clone()
    } else {
        format!(
            "{} (the bank holds no {} grains for this pour: spheres of their volume used)",
            r.shape, r.shape_asked
        )
    };
    writeln!(out, "{:<16}{shape}", "grain shape").map_err(io)?;
    if r.scale != 1.0 {
        writeln!(
            out,
            "{:<16}{1:.3}: the cup is {1:.3} times the bank's, so the grains and the fall are asked {1:.3} times smaller (Froude similarity)",
            "scale", r.scale
        )
        .map_err(io)?;
    }
    for (name, a, unit) in [
        ("restitution", r.restitution, ""),
        ("friction", r.friction, ""),
        ("grain diameter", r.grain_diameter_m, " m"),
        ("fill", r.fill, ""),
        ("fall height", r.fall_height_m, " m"),
    ] {
        let note = if a.clamped {
            "   outside the bank's range: nearest entry used"
        } else if name == "fill" && r.family == "surface" {
            "   (onto the surface the bank's entries start bare and hold the heap they build)"
        } else {
            ""
        };
        writeln!(
            out,
            "{name:<16}asked {:.4}{unit}, used {:.4}{unit}{note}",
            a.asked, a.used
        )
        .map_err(io)?;
    }
    writeln!(
        out,
        "{:<16}{:.4} m/s, arrivals {:.0} grains/s",
        "impact speed", r.impact_speed_m_s, r.arrivals_per_s
    )
    .map_err(io)?;
    writeln!(
        out,
        "{:<14}{:>16}{:>16}{:>18}{:>15}",
        "cell", "per grain", "per second", "mean speed m/s", "mean life s"
    )
    .map_err(io)?;
    for c in &r.cells {
        writeln!(
            out,
            "{:<14}{:>16.4}{:>16.0}{:>18.4}{:>15.3}",
            c.cell, c.rate_per_grain, c.collisions_per_s, c.mean_speed_m_s, c.mean_life_s
        )
        .map_err(io)?;
    }
    writeln!(
        out,
        "(no settling cell: a grain's collisions until it rests are in the cells above)"
    )
    .map_err(io)?;
    Ok(())
}

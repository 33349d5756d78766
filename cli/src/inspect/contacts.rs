//! `granary inspect contacts FILE.csv`: a contact file reduced to the generator's form — per
//! cell (the floor, each wall ring, the pile, the surface) the count, the rate and the normal
//! speeds — the first step from a simulated pour (`cargo xtask dem`) towards the collision
//! statistics the generator draws from (thesis §5.5–5.6).

use crate::contacts::ContactFile;
use granary_engine::base::window::{Cell, CELLS};
use granary_engine::control::preset;
use granary_engine::derived::cups::Cup;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ContactsArgs {
    /// The contact file (docs/contacts.md).
    pub file: PathBuf,
    /// The preset whose cup the contacts are placed on (its shape and size decide the wall
    /// rings). Default: the default preset.
    #[arg(long)]
    pub preset: Option<String>,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// One cell's contacts.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CellRow {
    /// The generator's cell the contacts fall in (`Collision::cell`).
    pub cell: String,
    pub contacts: usize,
    /// Share of all the file's contacts.
    pub share: f64,
    /// Contacts a second over the file's span (first to last contact).
    pub rate_per_s: f64,
    /// Normal speed: mean, and the 10th, 50th and 90th percentiles, m/s.
    pub speed_mean_m_s: f64,
    pub speed_p10_m_s: f64,
    pub speed_p50_m_s: f64,
    pub speed_p90_m_s: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ContactsReport {
    pub file: String,
    pub contacts: usize,
    /// First and last contact, s.
    pub first_s: f64,
    pub last_s: f64,
    pub grain: String,
    pub cup: Option<String>,
    pub surface: Option<String>,
    /// The cells with contacts, in the generator's order.
    pub cells: Vec<CellRow>,
}

fn cell_name(cell: Cell) -> String {
    match cell {
        Cell::ImpactZone => "impact zone".into(),
        Cell::CupFloor => "cup floor".into(),
        Cell::WallRing(k) => format!("wall ring {k}"),
        Cell::PileSurface => "grain on grain".into(),
        Cell::Stream => "stream".into(),
        Cell::Settling => "settling".into(),
        Cell::Surface => "surface".into(),
    }
}

/// The `p`-quantile (0..1) of sorted `x` (nearest rank).
fn quantile(sorted: &[f32], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)] as f64
}

/// The report of `file`'s contacts on `cup`.
pub fn report(file: &ContactFile, name: &str, cup: &Cup) -> ContactsReport {
    let mut speeds: Vec<Vec<f32>> = vec![Vec::new(); CELLS.len()];
    for c in &file.contacts {
        let cell = c.collision(0.0, cup).cell;
        speeds[cell].push(c.speed_m_s);
    }
    let first_s = file.contacts.iter().map(|c| c.time_s).fold(f64::INFINITY, f64::min);
    let last_s = file.last_s();
    let span = (last_s - first_s).max(f64::MIN_POSITIVE);
    let total = file.contacts.len();
    let cells = CELLS
        .iter()
        .zip(&mut speeds)
        .filter(|(_, s)| !s.is_empty())
        .map(|(&cell, s)| {
            s.sort_by(f32::total_cmp);
            CellRow {
                cell: cell_name(cell),
                contacts: s.len(),
                share: s.len() as f64 / total as f64,
                rate_per_s: s.len() as f64 / span,
                speed_mean_m_s: s.iter().map(|&v| v as f64).sum::<f64>() / s.len() as f64,
                speed_p10_m_s: quantile(s, 0.1),
                speed_p50_m_s: quantile(s, 0.5),
                speed_p90_m_s: quantile(s, 0.9),
            }
        })
        .collect();
    ContactsReport {
        file: name.to_string(),
        contacts: total,
        first_s,
        last_s,
        grain: file.grain.clone(),
        cup: file.cup.clone(),
        surface: file.surface.clone(),
        cells,
    }
}

pub fn run(args: &ContactsArgs, out: &mut dyn Write) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let file = ContactFile::read(&args.file)?;
    let mut p = preset::find(args.preset.as_deref().unwrap_or(preset::DEFAULT_PRESET)).map_err(|e| e.to_string())?;
    file.apply(&mut p.values)?;
    let cup = Cup::for_settings(&p.values.to_settings());
    let r = report(&file, &args.file.display().to_string(), &cup);
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?).map_err(io)?;
        return Ok(());
    }
    let on = [
        r.cup.as_deref().map(|c| format!("a {c} cup")),
        r.surface.as_deref().map(|s| s.to_string()),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" and ");
    writeln!(
        out,
        "{}: {} contacts of {} grains{}{}, {:.4} s to {:.4} s (the cup of {})",
        r.file,
        r.contacts,
        r.grain,
        if on.is_empty() { "" } else { " on " },
        on,
        r.first_s,
        r.last_s,
        p.name
    )
    .map_err(io)?;
    writeln!(
        out,
        "{:<16}{:>10}{:>8}{:>12}   normal speed m/s: mean, p10, p50, p90",
        "cell", "contacts", "share", "per second"
    )
    .map_err(io)?;
    for c in &r.cells {
        writeln!(
            out,
            "{:<16}{:>10}{:>7.1}%{:>12.0}   {:.4} {:.4} {:.4} {:.4}",
            c.cell,
            c.contacts,
            100.0 * c.share,
            c.rate_per_s,
            c.speed_mean_m_s,
            c.speed_p10_m_s,
            c.speed_p50_m_s,
            c.speed_p90_m_s
        )
        .map_err(io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contacts_fall_in_their_cells_with_their_speeds() {
        let text = "time_s,x_m,y_m,z_m,nx,ny,nz,speed_m_s,body_a,material_a,body_b,material_b\n\
                    0.0,0,0,0,0,0,1,1.0,grain,rice,cup,steel\n\
                    0.5,0,0,0,0,0,1,3.0,grain,rice,cup,steel\n\
                    1.0,0.03,0,0.001,-1,0,0,2.0,grain,rice,cup,steel\n\
                    2.0,0,0,0.01,0,0,1,0.5,grain,rice,grain,rice\n";
        let file = ContactFile::parse(text.as_bytes()).unwrap();
        let cup = Cup::for_settings(&granary_engine::control::params::ParamValues::default().to_settings());
        let r = report(&file, "t.csv", &cup);
        assert_eq!((r.contacts, r.first_s, r.last_s), (4, 0.0, 2.0));
        let names: Vec<&str> = r.cells.iter().map(|c| c.cell.as_str()).collect();
        assert_eq!(names, ["cup floor", "wall ring 0", "grain on grain"]);
        let floor = &r.cells[0];
        assert_eq!(floor.contacts, 2);
        assert_eq!(floor.rate_per_s, 1.0);
        assert_eq!(floor.speed_mean_m_s, 2.0);
        assert_eq!((floor.speed_p10_m_s, floor.speed_p90_m_s), (1.0, 3.0));
        assert_eq!(r.cells[2].share, 0.25);
    }
}

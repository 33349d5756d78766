//! `cargo run --release -p granary-grains -- assets/grains [SHAPE...]`: precomputes the
//! acceleration-noise assets (all shapes when none is named) at `Settings::ASSET`.
//! `... -- --engine-table engine/src/derived/shape/table.rs` writes the engine's shape table from the
//! committed assets (`moments::engine_table`); `... -- --plots docs` the validation plots of
//! docs/grains.md (`plots`).

use granary_grains::asset::{file_name, precompute, Asset, Settings};
use granary_grains::moments;
use granary_grains::shape::{Shape, ShapeKind};
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("--plots") {
        args.next();
        let dir = args.next().map(PathBuf::from).unwrap_or_else(|| PathBuf::from("docs"));
        let assets = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/grains"));
        if let Err(e) = std::fs::create_dir_all(&dir) {
            eprintln!("{}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
        return match granary_grains::plots::write(&assets, &dir) {
            Ok(()) => {
                println!("wrote {0}/grains_sphere.png, {0}/grains_rice.png", dir.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        };
    }
    if args.peek().map(String::as_str) == Some("--engine-table") {
        args.next();
        return engine_table(args.next().map(PathBuf::from));
    }
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: granary-grains OUTPUT_DIR [SHAPE...]  (shapes: sphere rice lentil disc bean cube stone)");
        return ExitCode::FAILURE;
    };
    let names: Vec<String> = args.collect();
    let kinds: Vec<ShapeKind> = if names.is_empty() {
        ShapeKind::ALL.to_vec()
    } else {
        let mut kinds = Vec::new();
        for n in &names {
            match ShapeKind::from_name(n) {
                Some(k) => kinds.push(k),
                None => {
                    eprintln!("unknown shape {n}");
                    return ExitCode::FAILURE;
                }
            }
        }
        kinds
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("{}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    for kind in kinds {
        let start = std::time::Instant::now();
        let shape = Shape::reference(kind);
        let asset = match precompute(&shape, Settings::ASSET) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("{}: {e}", kind.name());
                return ExitCode::FAILURE;
            }
        };
        let path = dir.join(file_name(kind));
        if let Err(e) = asset.write(&path) {
            eprintln!("{}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        let h = &asset.header;
        println!(
            "{}: {} cells^3, D diag {:.3e} {:.3e} {:.3e} m^3, fit residual {:?}, {:.0} kB, {:.1} s",
            kind.name(),
            h.grid.cells,
            h.dipole_m3[0][0],
            h.dipole_m3[1][1],
            h.dipole_m3[2][2],
            h.fit_residual.map(|r| (r * 1e4).round() / 1e4),
            std::fs::metadata(&path).map(|m| m.len() as f64 / 1e3).unwrap_or(0.0),
            start.elapsed().as_secs_f64()
        );
    }
    ExitCode::SUCCESS
}

/// Writes the engine's shape table from the assets in `assets/grains` beside this crate.
fn engine_table(out: Option<PathBuf>) -> ExitCode {
    let Some(out) = out else {
        eprintln!("usage: granary-grains --engine-table OUTPUT.rs");
        return ExitCode::FAILURE;
    };
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/grains"));
    let mut assets = Vec::new();
    for kind in ShapeKind::ALL {
        let path = dir.join(file_name(kind));
        match Asset::read(&path) {
            Ok(a) => assets.push((kind, a)),
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
    }
    if let Err(e) = std::fs::write(&out, moments::engine_table(&assets)) {
        eprintln!("{}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    println!("wrote {}", out.display());
    ExitCode::SUCCESS
}

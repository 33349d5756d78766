//! `granary-fem DIR [SHAPE…]`: writes the cups' modal analyses to `DIR/<shape>.json` (all
//! shapes unless some are named). `cargo xtask modal` runs it with `DIR = assets/cups`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((dir, only)) = args.split_first() else {
        eprintln!("usage: granary-fem DIR [SHAPE...]   (shapes: mug, tumbler, bowl, jar, metal_cup)");
        std::process::exit(2);
    };
    match granary_fem::cup::write_assets(std::path::Path::new(dir), only) {
        Ok(lines) => lines.iter().for_each(|l| eprintln!("{l}")),
        Err(e) => {
            eprintln!("granary-fem: {e}");
            std::process::exit(1);
        }
    }
}

//! The committed `assets/cups/*.json` are what `cargo xtask modal` computes: the mug is
//! recomputed and compared (frequencies, orders and the orientation-free gains; the
//! orientation of a degenerate cos/sin pair is arbitrary).

use granary_fem::cup::{analyse, CupAsset, Shape, MODES_PER_CUP};

#[test]
fn committed_mug_asset_is_reproduced() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/cups/mug.json");
    let text = std::fs::read_to_string(path).expect("assets/cups/mug.json");
    let committed: CupAsset = serde_json::from_str(&text).expect("asset parses");
    let fresh = analyse(Shape::Mug, MODES_PER_CUP).expect("modal analysis");
    assert_eq!(fresh.modes.len(), committed.modes.len());
    assert_eq!(fresh.mesh_nodes, committed.mesh_nodes);
    assert!((fresh.mass_kg / committed.mass_kg - 1.0).abs() < 1e-9);
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-3);
    for (a, b) in fresh.modes.iter().zip(&committed.modes) {
        assert!(close(a.freq_hz, b.freq_hz, 1e-7), "{} vs {}", a.freq_hz, b.freq_hz);
        assert_eq!(a.order, b.order);
        assert!(close(a.peak, b.peak, 1e-3));
        assert!(close(a.gains.floor, b.gains.floor, 1e-3));
        assert!(close(a.gains.rim, b.gains.rim, 1e-3));
        for (x, y) in a.gains.wall.iter().zip(&b.gains.wall) {
            assert!(close(*x, *y, 1e-3));
        }
    }
}

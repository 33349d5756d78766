//! The ground's own sound (seed 002, Qu & James) against the paper's published numbers and
//! trends: `engine::ground`.

use granary_engine::base::materials::SurfaceMaterial;
use granary_engine::impact::contact::hertz_duration;
use granary_engine::resonators::ground::*;

fn hs(youngs_pa: f64, poisson: f64, density: f64) -> HalfSpace {
    HalfSpace {
        youngs_pa,
        poisson,
        density,
    }
}

fn table2(m: SurfaceMaterial) -> HalfSpace {
    HalfSpace::from_elastic(m.data().elastic)
}

fn steel() -> HalfSpace {
    table2(SurfaceMaterial::Steel)
}

fn wood() -> HalfSpace {
    table2(SurfaceMaterial::Wood)
}

/// Seed 002 Table 1: t_c = 1.633e-4 s for the 2 cm steel ball dropped 15 cm on MDF. With
/// the standard Hertz modulus 1/E* = (1 - nu1²)/E1 + (1 - nu2²)/E2 Granary finds 1.591e-4 s
/// (2.6 % less); the published figure is reproduced to 0.1 % when the Poisson factors are
/// left out (1/E* = 1/E1 + 1/E2), which is what the paper must have used.
#[test]
fn table_1_contact_time() {
    let drop = BallDrop::table1(steel(), wood());
    let tc = drop.hertz_contact_s();
    println!("contact time: {tc:.4e} s (published 1.633e-4 s)");
    assert!((tc / 1.633e-4 - 1.0).abs() < 0.03, "{tc}");
    let e_plain = 1.0 / (1.0 / steel().youngs_pa + 1.0 / wood().youngs_pa);
    let plain = hertz_duration(drop.mass_kg() as f32, 0.01, e_plain as f32, drop.impact_speed() as f32) as f64;
    assert!((plain / 1.633e-4 - 1.0).abs() < 0.005, "{plain}");
    // Table 1's epsilon = c_s t_c / 4 = 9.888e-2 m ... as printed; c_s t_c / 4 with c_s =
    // 2422 m/s and t_c = 1.633e-4 s is 9.888e-2 (the table's "m" for eps is a length)
    assert!((wood().shear_speed() - 2422.0).abs() < 1.0);
}

/// Seed 002 Table 3, every cell within ±3 dB (the paper keeps t_c = 1.63e-4 s and the
/// ground's Poisson ratio at 0.25 for the whole table).
#[test]
fn table_3_every_cell() {
    let published = TABLE_3_PUBLISHED;
    let table = table_3();
    let mut worst: f64 = 0.0;
    for (i, ball) in SurfaceMaterial::HALF_SPACES.into_iter().enumerate() {
        for (j, ground) in SurfaceMaterial::HALF_SPACES.into_iter().enumerate() {
            let err = table[i][j] - published[i][j];
            worst = worst.max(err.abs());
            assert!(
                err.abs() <= 3.0,
                "{} on {}: {:.2} dB, published {:.2}",
                ball.id(),
                ground.id(),
                table[i][j],
                published[i][j]
            );
        }
    }
    println!("Table 3: worst cell {worst:.2} dB from the published value");
}

/// Ground louder relative to the ball at low listening angles (seed 002 §5.3, Fig. 11):
/// the listener 20 cm from the impact, from overhead down to 5° above the ground.
#[test]
fn ground_gains_on_the_ball_at_low_angles() {
    let ratio = |deg: f64| {
        let th = deg.to_radians();
        let mut d = BallDrop::table1(steel(), wood());
        d.listener = [0.2 * th.cos(), 0.0, 0.2 * th.sin()];
        d.run(16.0).ground_to_ball_db()
    };
    let r: Vec<(f64, f64)> = [90.0, 45.0, 20.0, 10.0, 5.0]
        .into_iter()
        .map(|d| (d, ratio(d)))
        .collect();
    println!("ground/ball, dB, against elevation: {r:?}");
    assert!(r[2].1 > r[0].1 + 5.0 && r[3].1 > r[2].1 + 5.0, "{r:?}");
    assert!(r[4].1 > r[0].1 + 10.0, "{r:?}");
}

/// Ground amplitude ∝ rho_ball / E_ground (seed 002 §5.3), the ball's own sound unchanged:
/// doubling the ground's E (and its density, to keep c_s) costs the ground 6.02 dB,
/// doubling the ball's density gains it 6.02 dB.
#[test]
fn ground_amplitude_follows_ball_density_over_ground_stiffness() {
    let run = |ball: HalfSpace, ground: HalfSpace| {
        let mut d = BallDrop::table1(ball, ground);
        d.contact_s = Some(1.633e-4);
        let s = d.run(16.0);
        (10.0 * s.ground.energy().log10(), 10.0 * s.ball.energy().log10())
    };
    let (g0, b0) = run(steel(), wood());
    let w = wood();
    let (g1, b1) = run(steel(), hs(2.0 * w.youngs_pa, w.poisson, 2.0 * w.density));
    let s = steel();
    let (g2, b2) = run(hs(s.youngs_pa, s.poisson, 2.0 * s.density), wood());
    println!("ground {g0:.2} / {g1:.2} / {g2:.2} dB, ball {b0:.2} / {b1:.2} / {b2:.2} dB");
    assert!((g1 - g0 + 6.02).abs() < 0.05 && (b1 - b0).abs() < 1e-6);
    assert!((g2 - g0 - 6.02).abs() < 0.05 && (b2 - b0).abs() < 1e-6);
}

/// The knee in the ground's shear wave speed (seed 002 §5.3, Fig. 10): the ground's
/// intensity grows as c_s² for slow grounds and levels off for fast ones; the knee
/// (where the c_s² asymptote meets the plateau) near the paper's 2576 m/s for Table 1,
/// with A = c_k / sqrt(c0 R / t_c) between 3 and 5 (the paper: between 3 and 4).
#[test]
fn knee_in_shear_wave_speed() {
    let level = |cs: f64| {
        let (e, nu) = (1.1e10, 0.25);
        let rho = e / (2.0 * (1.0 + nu)) / (cs * cs);
        let mut d = BallDrop::table1(steel(), hs(e, nu, rho));
        d.contact_s = Some(1.633e-4);
        10.0 * d.run(16.0).ground.energy().log10()
    };
    let low = (level(30.0), level(60.0));
    let high = (level(25_600.0), level(51_200.0));
    let low_slope = (low.1 - low.0) / 2f64.log10();
    let high_slope = (high.1 - high.0) / 2f64.log10();
    let knee = 30.0 * 10f64.powf((high.1 - low.0) / 20.0);
    let a = knee / (343.2 * 0.2 / 1.633e-4f64).sqrt();
    println!("slopes {low_slope:.2} and {high_slope:.2} dB/decade, knee {knee:.0} m/s, A = {a:.2}");
    assert!((low_slope - 20.0).abs() < 0.5, "{low_slope}");
    assert!(high_slope.abs() < 2.0, "{high_slope}");
    assert!((3.0..5.0).contains(&a), "{a}");
}

/// Seed 002 §5.1: the volume displacement under the regularised push converges to the
/// unregularised (Pekeris) solution as eps shrinks, and for t >> eps / c_s equals it.
#[test]
fn volume_displacement_matches_the_unregularised_solution() {
    let grid = Grid {
        t0: -2e-3,
        dt: 1e-6,
        n: 8192,
    };
    let ground = wood();
    let mut last = f64::INFINITY;
    for tc in [4e-4, 1e-4, 2.5e-5] {
        let v = regularized_push_volume(&ground, tc, grid);
        let at = |t: f64| {
            let k = ((t - v.t0) / v.dt).round() as usize;
            (v.samples[k], push_volume(&ground, v.t0 + k as f64 * v.dt))
        };
        let (early, exact_early) = at(1e-4);
        let (late, exact_late) = at(2e-3);
        let err = (early / exact_early - 1.0).abs();
        println!(
            "t_c {tc:e}: D(0.1 ms) off by {:.3} %, D(2 ms) by {:.4} %",
            100.0 * err,
            100.0 * (late / exact_late - 1.0)
        );
        assert!((late / exact_late - 1.0).abs() < 2e-3);
        assert!(err < last, "no convergence as eps shrinks");
        last = err;
    }
    // the static region alone gives (1 - nu) c_r t / mu; the fronts ahead of it add little
    let t = 1e-3;
    let static_part = (1.0 - ground.poisson) * ground.rayleigh_speed() * t / ground.shear_modulus();
    let d = push_volume(&ground, t);
    println!("D(1 ms) = {d:.4e} m³/N, static part {static_part:.4e}");
    assert!(d > 0.5 * static_part && d < 1.5 * static_part);
}

/// The regularised response is finite for every material of the table (and Poisson's
/// ratio from 0 to 0.49, across the 0.2631 where kappa_2,3 turn complex), for a grain's
/// contact of microseconds as for Table 1's; U is continuous at the P and S fronts.
#[test]
fn finite_for_every_material() {
    for nu in [0.0, 0.1, 0.2, 0.25, 0.2631, 0.27, 0.3, 0.37, 0.45, 0.49] {
        let l = Lamb::new(nu);
        assert!(l.shape(l.a + 1e-10).abs() < 1e-4, "U jumps at the P front for nu {nu}");
        let jump = l.shape(1.0 - 1e-10) - l.shape(1.0 + 1e-10);
        assert!(jump.abs() < 1e-4, "U jumps at the S front for nu {nu}: {jump}");
        assert!(l.gamma > 1.0 && l.gamma < 1.2);
    }
    for m in SurfaceMaterial::ALL {
        for tc in [2e-6, 1.633e-4] {
            let mut d = BallDrop::table1(hs(2500.0e6, 0.22, 2500.0), table2(m));
            d.contact_s = Some(tc);
            let s = d.run(16.0);
            assert!(s.ground.samples.iter().all(|x| x.is_finite()), "{} at {tc}", m.id());
            assert!(s.ground.peak() > 0.0 && s.ground_to_ball_db().is_finite());
        }
    }
}

/// Halving the time step changes Table 1's ratio by less than 0.3 dB.
#[test]
fn converges_with_the_time_step() {
    let d = BallDrop::table1(steel(), wood());
    let coarse = d.run(16.0).ground_to_ball_db();
    let fine = d.run(32.0).ground_to_ball_db();
    println!("Table 1 ground/ball: {coarse:.3} dB at t_c/16, {fine:.3} dB at t_c/32");
    assert!((coarse - fine).abs() < 0.3);
}

//! Logged contacts (`logged`, `render::Renderer::contacts`): rendered through the collision
//! physics at their own times, whatever the block size.

use granary_engine::control::params::ParamValues;
use granary_engine::render::{RenderOptions, Renderer};
use granary_engine::statistics::logged::{Body, Contact};

const FS: f32 = 48_000.0;

fn opts(seconds: f64, block_size: usize) -> RenderOptions {
    RenderOptions {
        seconds,
        sample_rate: FS,
        block_size,
        pour: None,
    }
}

fn contact(time_s: f64, other: Body, normal: [f32; 3], position_m: [f32; 3]) -> Contact {
    Contact {
        time_s,
        position_m,
        normal,
        speed_m_s: 1.0,
        other,
    }
}

/// First sample whose magnitude passes `fraction` of the largest.
fn onset(x: &[f32], fraction: f32) -> usize {
    let peak = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    x.iter().position(|v| v.abs() >= fraction * peak).unwrap()
}

#[test]
fn a_contact_sounds_at_its_time_in_its_stem() {
    let values = ParamValues::default();
    let floor = [0.0, 0.0, 0.0];
    for (other, normal, position) in [
        (Body::Grain, [0.0, 0.0, 1.0], [0.0, 0.0, 0.01]),
        (Body::Cup, [0.0, 0.0, 1.0], floor),
    ] {
        let mut onsets = Vec::new();
        for t in [0.1, 0.25] {
            let r = Renderer::contacts(&values, &opts(0.5, 512), &[contact(t, other, normal, position)])
                .unwrap()
                .collect();
            let stem = match other {
                Body::Grain => &r.grains[0],
                _ => &r.cup[0],
            };
            assert!(stem.iter().all(|v| v.is_finite()));
            assert!(
                stem[..(0.09 * FS) as usize].iter().all(|&v| v == 0.0),
                "{other:?}: silent before"
            );
            onsets.push(onset(stem, 0.1));
        }
        // a later contact sounds exactly as much later (to the sample)
        let shift = onsets[1] as i64 - onsets[0] as i64;
        assert_eq!(shift, (0.15 * FS) as i64, "{other:?}: onsets {onsets:?}");
        // and after its time by the sound's travel to the listener (the default's 0.35 m and
        // so on: about 1 ms), not by the engine's lead or the render's preroll (5.3 ms)
        let delay = onsets[0] as f32 / FS - 0.1;
        assert!((0.0003..0.003).contains(&delay), "{other:?}: delay {delay} s");
    }
}

#[test]
fn the_render_does_not_depend_on_the_block_size() {
    let values = ParamValues::default();
    let contacts: Vec<Contact> = (0..400)
        .map(|i| {
            let t = i as f64 * 0.0011;
            let other = [Body::Grain, Body::Cup, Body::Cup][i % 3];
            let normal = if i % 2 == 0 { [0.0, 0.0, 1.0] } else { [1.0, 0.2, 0.1] };
            let mut c = contact(t, other, normal, [0.01, 0.0, 0.02]);
            c.speed_m_s = 0.3 + 0.01 * (i % 50) as f32;
            c
        })
        .collect();
    let a = Renderer::contacts(&values, &opts(0.6, 512), &contacts)
        .unwrap()
        .collect();
    let b = Renderer::contacts(&values, &opts(0.6, 37), &contacts)
        .unwrap()
        .collect();
    assert_eq!(a.main, b.main);
    assert_eq!(a.cup, b.cup);
    assert!(a.main[0].iter().any(|&v| v != 0.0));
    assert_eq!(a.stats.rendered, 400, "every contact rendered once");
}

#[test]
fn bad_contacts_are_refused_and_busy_windows_rendered_whole() {
    let values = ParamValues::default();
    let good = contact(0.1, Body::Cup, [0.0, 0.0, 1.0], [0.0; 3]);
    let mut zero_normal = good;
    zero_normal.normal = [0.0; 3];
    let mut no_speed = good;
    no_speed.speed_m_s = 0.0;
    let mut nan_time = good;
    nan_time.time_s = f64::NAN;
    for (bad, says) in [(zero_normal, "normal"), (no_speed, "speed"), (nan_time, "time")] {
        let e = Renderer::contacts(&values, &opts(0.2, 64), &[good, bad]).err().unwrap();
        assert!(e.starts_with("contact 2:") && e.contains(says), "{e}");
    }
    // a window far busier than the engine's built-in room: every contact rendered
    let crowd = vec![good; 20 * granary_engine::INJECT_CAPACITY];
    let r = Renderer::contacts(&values, &opts(0.2, 64), &crowd).unwrap().collect();
    assert_eq!(r.stats.rendered, crowd.len() as u64);
    let one = Renderer::contacts(&values, &opts(0.2, 64), &[good]).unwrap().collect();
    // the same contact n times at once: n times the pressure (linear), to rounding
    let (peak_n, peak_1) = [&r, &one]
        .map(|x| x.cup[0].iter().fold(0.0f32, |m, v| m.max(v.abs())))
        .into();
    let ratio = peak_n / peak_1;
    assert!((ratio / crowd.len() as f32 - 1.0).abs() < 1e-3, "{ratio}");
}

#[test]
fn the_surface_sounds_from_the_first_contact_of_a_render() {
    // a grain on the ground 0.125 s into a contact render, and the same contact 24,064
    // samples (188 windows) later: the surface's filter (built a little every window while
    // the engine idles) must be whole from the first contact, so both sound alike in the
    // Surface stem. Before: the first was silent on all three grounds (a filter still building)
    let shift = 24_064;
    for material in ["concrete", "soil", "wax"] {
        let mut values = ParamValues::default();
        values.set_text("surface_material", material).unwrap();
        let stem = |t: f64| {
            let c = contact(t, Body::Surface, [0.0, 0.0, 1.0], [0.2, 0.0, 0.0]);
            Renderer::contacts(&values, &opts(1.0, 512), &[c])
                .unwrap()
                .collect()
                .surface[0]
                .clone()
        };
        let (early, late) = (stem(0.125), stem((6_000 + shift) as f64 / 48_000.0));
        assert!(early.iter().all(|v| v.is_finite()), "{material}");
        assert!(early[..5_900].iter().all(|&v| v == 0.0), "{material}: silent before");
        assert!(
            late[..5_900 + shift].iter().all(|&v| v == 0.0),
            "{material}: the later one early"
        );
        let energy = |x: &[f32]| x.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>();
        let (e, l) = (&early[..early.len() - shift], &late[shift..]);
        assert!(energy(l) > 0.0, "{material}: the later contact is silent");
        let db = 10.0 * (energy(e) / energy(l)).log10();
        assert!(
            db.abs() < 0.01,
            "{material}: the first contact is {db:.1} dB from a later one"
        );
        // sample by sample, as the same contact later
        let peak = l.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let worst = e.iter().zip(l).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(
            worst <= 1e-4 * peak,
            "{material}: differs by {worst:e} of a peak {peak:e}"
        );
    }
}

//! Real-time safety of the engine: no allocation in `process`, whatever it renders.
//!
//! With the `assert_process_allocs` feature (as `cargo xtask test` runs), nice-plug installs
//! an allocator that aborts on any allocation inside `assert_no_alloc`; without it this
//! test installs the same checker itself. Release builds compile the checker out: run this
//! test in a debug build (as `cargo xtask test` does).

use granary::engine::{Engine, Outputs};
use granary::preset;
use nice_assert_no_alloc::assert_no_alloc;

#[cfg(all(debug_assertions, not(feature = "assert_process_allocs")))]
#[global_allocator]
static ALLOCATOR: nice_assert_no_alloc::AllocDisabler = nice_assert_no_alloc::AllocDisabler;

#[test]
fn process_never_allocates_for_any_preset_event_or_block_size() {
    for (stem, p) in preset::factory() {
        let mut settings = p.values.to_settings();
        let mut engine = Engine::new(settings, 48_000.0, 4096);
        let mut bufs: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; 4096]);
        let mut frames = 0usize;
        assert_no_alloc(|| {
            engine.note_on(0.9);
            for (i, &block) in [1usize, 17, 64, 512, 4096, 0, 333].iter().cycle().take(80).enumerate() {
                if i == 40 {
                    engine.set_modulation(0.7);
                    settings.cup_size *= 1.3;
                    settings.fill = 0.5;
                    engine.set_settings(&settings);
                }
                if i == 60 {
                    engine.note_off();
                    engine.reseed(7);
                }
                let [a, b, c, d, e, f] = &mut bufs;
                engine.process(Outputs {
                    main: [&mut a[..block], &mut b[..block]],
                    grains: [&mut c[..block], &mut d[..block]],
                    cup: [&mut e[..block], &mut f[..block]],
                });
                frames += block;
            }
            engine.reset();
        });
        assert!(frames > 48_000, "{stem}");
    }
}

//! The one loop that feeds typed, timestamped events (`control::events`) to the engine: it
//! splits a buffer at the events' times and calls `Engine::process` once per span. The
//! plugin (one host block at a time), the offline renders (`render`) and the tests all go
//! through [`process`].
//!
//! An event applies to the engine before the sample it is stamped with is rendered, and
//! acts from that sample (the engine's "Determinism" says how each kind of change does).
//! Where a host cuts its blocks never matters.

use crate::control::events::{Event, Timed};
use crate::{Engine, Outputs};
use std::ops::Range;

impl Event {
    /// Hands the event to the engine (real-time safe).
    pub fn apply(&self, engine: &mut Engine) {
        match *self {
            Event::NoteOn { velocity, key } => engine.note_on(velocity, key),
            Event::NoteOff => engine.note_off(),
            Event::KeyOff(key) => engine.key_off(key),
            Event::AllNotesOff => engine.all_notes_off(),
            Event::Modulation(amount) => engine.set_modulation(amount),
            Event::Settings(ref settings) => engine.set_settings(settings),
            Event::Inject(collision) => {
                engine.inject(collision);
            }
        }
    }
}

/// Renders `len` samples with `events` (sample offsets in `0..len`, non-decreasing), split
/// at the events' times: `span(engine, a..b)` must render samples `a..b` with
/// `Engine::process`. Each event is applied before the sample it is stamped with; an event
/// stamped before one already passed applies at once, one at or after `len` after the
/// last sample (so before the next buffer's first). Allocation-free.
pub fn process<I, F>(engine: &mut Engine, len: usize, events: I, mut span: F)
where
    I: IntoIterator<Item = Timed>,
    F: FnMut(&mut Engine, Range<usize>),
{
    let mut pos = 0;
    for Timed { at, event } in events {
        let at = at.min(len);
        if at > pos {
            span(engine, pos..at);
            pos = at;
        }
        event.apply(engine);
    }
    if len > pos {
        span(engine, pos..len);
    }
}

/// [`process`] into `outputs` (all slices of the same length).
pub fn process_outputs<I: IntoIterator<Item = Timed>>(engine: &mut Engine, mut outputs: Outputs<'_>, events: I) {
    let len = outputs.len();
    process(engine, len, events, |engine, r| engine.process(outputs.slice(r)));
}

/// Renders `out` (main, grains and cup, left and right; equal lengths; the surface is in
/// the main output, not kept apart) from the start, in
/// host blocks of `block` samples, as a host would: each block gets the `events` that fall
/// in it (`at` from the start of the render, non-decreasing), through [`process`].
pub fn render_blocks<I: IntoIterator<Item = Timed>>(
    engine: &mut Engine,
    out: &mut [Vec<f32>; 6],
    block: usize,
    events: I,
) {
    let total = out.iter().map(Vec::len).min().unwrap_or(0);
    let block = block.max(1);
    let mut events = events.into_iter().peekable();
    let mut start = 0;
    while start < total {
        let end = (start + block).min(total);
        let in_block = std::iter::from_fn(|| events.next_if(|e| e.at < end))
            .map(|e| Timed::new(e.at.saturating_sub(start), e.event));
        let [ml, mr, gl, gr, cl, cr] = out;
        process_outputs(
            engine,
            Outputs {
                main: [&mut ml[start..end], &mut mr[start..end]],
                grains: [&mut gl[start..end], &mut gr[start..end]],
                cup: [&mut cl[start..end], &mut cr[start..end]],
                surface: None,
                friction: None,
            },
            in_block,
        );
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Settings;

    /// The loop as the engine's API reads: events and `process` called one sample at a time.
    fn sample_by_sample(settings: Settings, frames: usize, events: &[Timed]) -> [Vec<f32>; 6] {
        let mut e = Engine::new(settings, 48_000.0, 1);
        let mut out: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; frames]);
        let mut next = 0;
        for t in 0..frames {
            while next < events.len() && events[next].at <= t {
                events[next].event.apply(&mut e);
                next += 1;
            }
            let [ml, mr, gl, gr, cl, cr] = &mut out;
            e.process(Outputs {
                main: [&mut ml[t..t + 1], &mut mr[t..t + 1]],
                grains: [&mut gl[t..t + 1], &mut gr[t..t + 1]],
                cup: [&mut cl[t..t + 1], &mut cr[t..t + 1]],
                surface: None,
                friction: None,
            });
        }
        out
    }

    #[test]
    fn blocks_and_spans_give_the_samples_of_a_sample_by_sample_loop() {
        let settings = Settings {
            fall_height_m: 0.02,
            ..Settings::default()
        };
        let louder = Settings {
            output_gain_db: 60.0,
            ..settings
        };
        let events = [
            Timed::new(0, Event::NoteOn { velocity: 0.7, key: 60 }),
            Timed::new(700, Event::Modulation(0.5)),
            Timed::new(700, Event::Settings(louder)),
            Timed::new(1_500, Event::NoteOn { velocity: 1.0, key: 60 }),
            Timed::new(2_000, Event::NoteOff),
            Timed::new(2_001, Event::AllNotesOff),
            Timed::new(3_000, Event::NoteOn { velocity: 0.3, key: 60 }),
        ];
        // the first grains land after about 0.15 s (2 cm above the rim of the 9 cm deep mug)
        let frames = 16_000;
        let reference = sample_by_sample(settings, frames, &events);
        assert!(reference[0].iter().any(|x| *x != 0.0), "the test pour is silent");
        for block in [1, 64, 128, 333, 4096] {
            let mut e = Engine::new(settings, 48_000.0, block);
            let mut out: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; frames]);
            render_blocks(&mut e, &mut out, block, events);
            assert_eq!(out, reference, "block {block}");
        }
        // an event moved by one window changes the output (the test can fail)
        let mut late = events;
        late[4].at += 128;
        let mut e = Engine::new(settings, 48_000.0, 64);
        let mut out: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; frames]);
        render_blocks(&mut e, &mut out, 64, late);
        assert_ne!(out, reference);
    }

    #[test]
    fn process_splits_at_events_and_clamps_late_ones() {
        let mut e = Engine::new(Settings::default(), 48_000.0, 64);
        let mut spans = Vec::new();
        let events = [
            Timed::new(0, Event::NoteOn { velocity: 1.0, key: 60 }),
            Timed::new(10, Event::NoteOff),
            Timed::new(10, Event::Modulation(0.2)),
            Timed::new(5, Event::AllNotesOff),
            Timed::new(99, Event::NoteOff),
        ];
        process(&mut e, 64, events, |_, r| spans.push(r));
        assert_eq!(spans, [0..10, 10..64]);
    }
}

//! What a DAW does to a plugin between opening a project and bouncing it, through the real
//! CLAP entry (clack-host): the pour a project bounces depends only on its settings, seed and
//! notes. Not on whether the state was loaded into a fresh or a running instance, on
//! deactivation and re-activation, on idle blocks before the first note, on the host's blocks,
//! nor on how early the host sends the notes to compensate the plugin's latency; and it
//! equals `granary render` of the same settings and notes.

use crate::support;
use crate::support::{Ev, Host, Ports};
use granary_engine::control::params::{Kind, ParamValues, SPECS};
use granary_engine::control::preset;
use granary_engine::render::{NoteEvent, RenderOptions, Renderer};

const SR: f64 = 48_000.0;
const MAX_FRAMES: u32 = 1024;

/// A preset that is not the default, with a short fall (the grains land within 0.15 s) and a
/// seed of its own.
fn project() -> ParamValues {
    let mut v = preset::find("rice_plastic_bowl").expect("factory preset").values;
    v.set_text("fall_height", "3").unwrap();
    v.set_text("seed", "777").unwrap();
    v
}

fn note_on(velocity: f64) -> Ev {
    Ev::NoteOn {
        key: 60,
        channel: 0,
        velocity,
    }
}

fn note_off() -> Ev {
    Ev::NoteOff { key: 60, channel: 0 }
}

/// The notes of the test pour: (first frame, last frame, MIDI velocity), frames from its first
/// note; two overlapping notes.
const NOTES: [(usize, usize, u8); 2] = [(0, 9_001, 102), (5_003, 14_117, 127)];

/// The notes as host events (velocity as `granary render` reads a MIDI velocity).
fn performance() -> Vec<(usize, Ev)> {
    let mut events: Vec<(usize, Ev)> = NOTES
        .iter()
        .flat_map(|&(on, off, velocity)| [(on, note_on((velocity as f32 / 127.0) as f64)), (off, note_off())])
        .collect();
    events.sort_by_key(|&(t, _)| t);
    events
}

/// The plugin's parameters set to `values` through the host, as nice-plug's CLAP parameters
/// take them: floats as their normalised 0..1 value (which the plugin reports), the others
/// plain (choices as their index, booleans as 0 or 1).
fn set_values(host: &mut Host, values: &ParamValues) {
    let plugin = granary::params::GranaryParams::default();
    let changes: Vec<(usize, f64)> = SPECS
        .iter()
        .map(|s| {
            let plain = values.get(s.id).unwrap();
            let value = match s.kind {
                Kind::Float { .. } => (unsafe { plugin.ptr(s.id).unwrap().preview_normalized(plain.as_f32()) }) as f64,
                _ => plain.as_f32() as f64,
            };
            (host.param(s.id), value)
        })
        .collect();
    host.flush(&changes);
}

/// Processes `frames` frames in blocks of `block` with `events` at absolute frames (from the
/// first frame of this call); returns the 10 channels (main and the four stems).
fn play(host: &mut Host, frames: usize, block: usize, events: &[(usize, Ev)]) -> Vec<Vec<f32>> {
    let mut out: Vec<Vec<f32>> = (0..2 * (1 + granary::STEMS))
        .map(|_| Vec::with_capacity(frames))
        .collect();
    let mut pos = 0;
    while pos < frames {
        let n = block.min(frames - pos);
        let in_block: Vec<(u32, Ev)> = events
            .iter()
            .filter(|(t, _)| (pos..pos + n).contains(t))
            .map(|&(t, e)| ((t - pos) as u32, e))
            .collect();
        for (o, c) in out.iter_mut().zip(host.process(n, &in_block, Ports::All)) {
            o.extend_from_slice(&c);
        }
        pos += n;
    }
    out
}

/// The pour played from frame `start` of a `frames`-frame call.
fn play_pour(host: &mut Host, start: usize, frames: usize, block: usize) -> Vec<Vec<f32>> {
    let events: Vec<(usize, Ev)> = performance().into_iter().map(|(t, e)| (start + t, e)).collect();
    play(host, frames, block, &events)
}

/// `b` from `b_start` on equals `a` from `a_start` on, bit for bit, over `len` frames.
fn assert_same(a: &[Vec<f32>], a_start: usize, b: &[Vec<f32>], b_start: usize, len: usize, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: channels");
    for ch in 0..a.len() {
        let x = &a[ch][a_start..a_start + len];
        let y = &b[ch][b_start..b_start + len];
        if let Some(i) = x.iter().zip(y).position(|(p, q)| p.to_bits() != q.to_bits()) {
            panic!(
                "{what}: channel {ch} differs {i} frames into the pour ({} vs {})",
                x[i], y[i]
            );
        }
    }
}

/// Length of the compared pour: the last note-off, its grains' landing and some tail.
const POUR: usize = 24_000;

fn reference() -> Vec<Vec<f32>> {
    let mut host = Host::new(support::load_linked());
    set_values(&mut host, &project());
    host.activate(SR, MAX_FRAMES);
    let out = play_pour(&mut host, 0, POUR, 512);
    let level = support::rms(&out[..2]);
    assert!(
        level > 1e-3,
        "the test pour is silent (RMS {level:e}): the comparisons would mean nothing"
    );
    out
}

#[test]
fn a_project_bounces_the_same_pour_however_it_was_opened() {
    let reference = reference();
    let state = {
        let mut host = Host::new(support::load_linked());
        set_values(&mut host, &project());
        host.save_state()
    };

    // the state loaded into a fresh instance, before activation
    let mut host = Host::new(support::load_linked());
    host.load_state(&state).unwrap();
    host.activate(SR, MAX_FRAMES);
    let out = play_pour(&mut host, 0, POUR, 256);
    assert_same(&reference, 0, &out, 0, POUR, "state loaded before activation");

    // ... into a running instance that played with other settings, after idle blocks (a
    // project opened into a DAW that has been running)
    let mut host = Host::new(support::load_linked());
    host.activate(SR, MAX_FRAMES);
    play(&mut host, 3_000, 300, &[(10, note_on(1.0)), (2_000, note_off())]);
    play(&mut host, 48_000 * 8, 1024, &[]);
    host.load_state(&state).unwrap();
    play(&mut host, 4_321, 97, &[]);
    let out = play_pour(&mut host, 1_111, 1_111 + POUR, 512);
    assert_same(&reference, 0, &out, 1_111, POUR, "state loaded into a running instance");

    // the next bounces of the session, each after the host deactivated and re-activated
    // the plugin (one such bounce in eight was once silent in Ardour: 24 catch that 24
    // times in 25), at the block sizes hosts use
    for (k, block) in [1000, 64, 512, 4096, 333, 1024]
        .into_iter()
        .cycle()
        .take(24)
        .enumerate()
    {
        host.deactivate();
        host.activate(SR, MAX_FRAMES.max(block as u32));
        let out = play_pour(&mut host, 0, POUR, block);
        let what = format!("after deactivation and activation {} (block {block})", k + 1);
        assert_same(&reference, 0, &out, 0, POUR, &what);
    }

    // a host reset (transport jump) and a bounce at once
    host.reset();
    let out = play_pour(&mut host, 0, POUR, 64);
    assert_same(&reference, 0, &out, 0, POUR, "after a reset");
}

/// Where the notes start in the bounces compared with `granary render`: half a second in.
const OFFSET: usize = SR as usize / 2;

/// `granary render --note START:END:VELOCITY` of the test notes, `OFFSET` frames in, with
/// `values`; `offline` as `granary render` renders (auto quality is reference then) or as
/// a live session plays. The 10 channels: main and the four stems.
fn render(values: &ParamValues, offline: bool) -> Vec<Vec<f32>> {
    let notes: Vec<NoteEvent> = NOTES
        .iter()
        .map(|&(on, off, velocity)| {
            let s = |frame: usize| (OFFSET + frame) as f64 / SR;
            NoteEvent::parse(&format!("{}:{}:{velocity}", s(on), s(off))).unwrap()
        })
        .collect();
    let opts = RenderOptions {
        seconds: (OFFSET + POUR) as f64 / SR,
        sample_rate: SR as f32,
        block_size: 512,
        pour: None,
    };
    let r = Renderer::notes(values, &opts, &notes).offline(offline).collect();
    let out: Vec<Vec<f32>> = [r.main, r.grains, r.cup, r.surface, r.friction]
        .into_iter()
        .flatten()
        .collect();
    assert!(support::rms(&out[..2]) > 1e-3, "the offline render is silent");
    out
}

/// The plugin's bounce of the test notes, `OFFSET` frames in, with `values`, the host in
/// its offline render mode or not; the main output aligned by the plugin's latency, as a DAW
/// compensates it.
fn bounce(values: &ParamValues, offline: bool) -> Vec<Vec<f32>> {
    let mut host = Host::new(support::load_linked());
    set_values(&mut host, values);
    host.set_render_mode(offline);
    host.activate(SR, MAX_FRAMES);
    let latency = host.latency() as usize;
    let mut out = play_pour(&mut host, OFFSET, OFFSET + POUR + latency, 333);
    for ch in &mut out[..2] {
        ch.drain(..latency);
    }
    out
}

#[test]
fn the_bounce_equals_granary_render_of_the_same_settings_and_notes() {
    let reference = reference();
    let out = bounce(&project(), false);
    assert_same(&render(&project(), false), 0, &out, 0, OFFSET + POUR, "granary render");
    // and its stems are the reference pour's, half a second later
    let stems = |c: &[Vec<f32>], start: usize| {
        c[2..]
            .iter()
            .map(|x| x[start..start + POUR].to_vec())
            .collect::<Vec<_>>()
    };
    assert_eq!(stems(&reference, 0), stems(&out, OFFSET), "the reference pour");
}

#[test]
fn the_default_bounce_is_the_same_in_every_host_mode_and_auto_follows_the_host() {
    // quality realtime (the default): the same samples whether the host says it renders
    // offline or not (Ardour 7's export does not), and `granary render`'s (always offline)
    let default = project();
    assert_eq!(default.get("quality").unwrap().as_f32(), 1.0, "realtime is the default");
    let want = render(&default, true);
    for host_offline in [false, true] {
        let what = format!("default quality, host offline: {host_offline}");
        assert_same(&want, 0, &bounce(&default, host_offline), 0, OFFSET + POUR, &what);
    }
    // quality auto: reference when the host renders offline, realtime when it plays live
    let mut auto = project();
    auto.set_text("quality", "auto").unwrap();
    let offline = bounce(&auto, true);
    assert_same(
        &render(&auto, true),
        0,
        &offline,
        0,
        OFFSET + POUR,
        "offline bounce, auto",
    );
    // which is not what the plugin plays live (rice is dense enough to be grouped live)
    let live = bounce(&auto, false);
    assert_same(&want, 0, &live, 0, OFFSET + POUR, "live bounce, auto");
    assert!(
        live[2..4] != offline[2..4],
        "reference and realtime grains are the same"
    );
    // reference set explicitly: the bounce is reference, whatever the host's mode
    let mut pinned = project();
    pinned.set_text("quality", "reference").unwrap();
    let want = render(&pinned, false);
    assert_same(&want, 0, &offline, 0, OFFSET + POUR, "reference is auto offline");
    for host_offline in [false, true] {
        let what = format!("reference, host offline: {host_offline}");
        assert_same(&want, 0, &bounce(&pinned, host_offline), 0, OFFSET + POUR, &what);
    }
}

#[test]
fn notes_sent_early_by_k_frames_give_the_same_output_k_frames_earlier() {
    // a host compensating a latency of k frames sends every note k frames early
    let reference = reference();
    let on_time = 2_000;
    for k in 1..=127 {
        let mut host = Host::new(support::load_linked());
        set_values(&mut host, &project());
        host.activate(SR, MAX_FRAMES);
        let block = [128, 512, 100, 1024][k % 4];
        let out = play_pour(&mut host, on_time - k, on_time - k + POUR, block);
        assert_same(&reference, 0, &out, on_time - k, POUR, &format!("{k} frames early"));
        assert!(out.iter().all(|c| c[..on_time - k].iter().all(|x| *x == 0.0)));
    }
}

#[test]
fn idle_blocks_before_the_first_note_change_nothing() {
    let reference = reference();
    for (idle, block) in [(1, 1), (63, 64), (128, 128), (1_000, 77), (48_000, 1024)] {
        let mut host = Host::new(support::load_linked());
        set_values(&mut host, &project());
        host.activate(SR, MAX_FRAMES);
        play(&mut host, idle, block, &[]);
        let out = play_pour(&mut host, 0, POUR, block);
        assert_same(&reference, 0, &out, 0, POUR, &format!("{idle} idle frames"));
    }
}

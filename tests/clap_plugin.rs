//! Granary driven through its real CLAP entry point, in-process, by clack-host.
//!
//! The plugin is not loaded from a bundled `.so`: the test links the `granary` rlib and hands
//! its exported `clap_entry` static to clack-host, so the whole CLAP wrapper (factory,
//! instance, activation, port and event translation, process callback) runs exactly as a
//! host would drive it. With `--features assert_process_allocs` (debug profile), nice-plug
//! aborts the test binary on any allocation inside the plugin's process callback.

use clack_host::entry::EntryDescriptor;
use clack_host::events::event_types::{MidiEvent, NoteOffEvent, NoteOnEvent};
use clack_host::events::Match;
use clack_host::prelude::*;
use std::ffi::CString;

const SAMPLE_RATE: f64 = 48_000.0;
const MAX_FRAMES: usize = 1024;
const PLUGIN_ID: &str = "org.granary.granary";
/// Key used for every note (Granary ignores the pitch; any key pours).
const KEY: u16 = 60;

/// One host event, placed at an absolute frame by [`render`].
#[derive(Clone, Copy, Debug)]
enum Ev {
    NoteOn(f64),
    NoteOff,
    Midi([u8; 3]),
}

/// The 10 output channels: main, Grains, Cup, Surface, Friction, L/R each.
type Channels = Vec<Vec<f32>>;
/// Main and the stems, stereo each.
const CHANNELS: usize = 2 * (1 + granary::STEMS);

/// Loads Granary's CLAP entry from the `clap_entry` static linked into this test binary.
fn load_entry() -> PluginEntry {
    // SAFETY of the cast: `granary::clap_entry` is nice-plug's re-export of clap-sys's
    // `clap_plugin_entry`, and `EntryDescriptor` is clack-common's alias of clap-sys's
    // `clap_plugin_entry`. Even if the two come from different clap-sys versions, both are
    // the `#[repr(C)]` transcription of the same C struct from the CLAP ABI (`clap_version`
    // followed by the `init`, `deinit` and `get_factory` function pointers), so they have the
    // same layout and reading one as the other is sound. The static lives for the whole
    // program, so the `'static` lifetime is genuine.
    let descriptor: &'static EntryDescriptor =
        unsafe { &*(&granary::clap_entry as *const _ as *const EntryDescriptor) };
    // A plausible plugin path: the file the entry really lives in, i.e. this executable.
    let exe = std::env::current_exe().expect("current_exe");
    let path = CString::new(exe.to_string_lossy().into_owned()).expect("path has no NUL");
    // SAFETY: the entry is nice-plug's CLAP wrapper, a compliant CLAP entry.
    unsafe { PluginEntry::load_from_raw(descriptor, &path) }.expect("entry init failed")
}

fn host_info() -> HostInfo {
    HostInfo::new("granary-tests", "granary", "https://example.invalid", "0.1.0").expect("host info")
}

/// Renders `total` frames in host blocks of `block` frames, sending each `(frame, event)` at
/// its offset inside the block that contains it. Always passes all 5 stereo output ports.
fn render(events: &[(usize, Ev)], total: usize, block: usize) -> Channels {
    assert!((1..=MAX_FRAMES).contains(&block));
    let entry = load_entry();
    let id = CString::new(PLUGIN_ID).unwrap();
    let mut instance = PluginInstance::<()>::new(|_| (), |_| (), &entry, &id, &host_info()).expect("instantiate");
    let stopped = instance
        .activate(
            |_, _| (),
            PluginAudioConfiguration {
                sample_rate: SAMPLE_RATE,
                min_frames_count: 1,
                max_frames_count: MAX_FRAMES as u32,
            },
        )
        .expect("activate");
    let mut processor = stopped
        .start_processing()
        .map_err(|_| "start_processing failed")
        .unwrap();

    let mut result: Channels = (0..CHANNELS).map(|_| Vec::with_capacity(total)).collect();
    let mut out_ports = AudioPorts::with_capacity(CHANNELS, CHANNELS / 2);
    let inputs = InputAudioBuffers::empty();
    let mut in_events = EventBuffer::with_capacity(16);
    let mut out_events = EventBuffer::with_capacity(16);
    let mut pos = 0;
    while pos < total {
        let n = block.min(total - pos);
        // garbage in the host buffers: the plugin must overwrite every sample it owns
        let mut out = vec![vec![f32::NAN; n]; CHANNELS];
        in_events.clear();
        for &(frame, ev) in events.iter().filter(|(f, _)| (pos..pos + n).contains(f)) {
            let t = (frame - pos) as u32;
            let pckn = Pckn::new(0u16, 0u16, KEY, Match::All);
            match ev {
                Ev::NoteOn(velocity) => in_events.push(&NoteOnEvent::new(t, pckn, velocity)),
                Ev::NoteOff => in_events.push(&NoteOffEvent::new(t, pckn, 0.0)),
                Ev::Midi(data) => in_events.push(&MidiEvent::new(t, 0, data)),
            }
        }
        in_events.sort();
        out_events.clear();
        {
            let mut outputs = out_ports.with_output_buffers(out.chunks_mut(2).map(|port| AudioPortBuffer {
                latency: 0,
                channels: AudioPortBufferType::f32_output_only(port.iter_mut().map(|c| c.as_mut_slice())),
            }));
            processor
                .process(
                    &inputs,
                    &mut outputs,
                    &in_events.as_input(),
                    &mut out_events.as_output(),
                    Some(pos as u64),
                    None,
                )
                .expect("process");
        }
        for (dst, src) in result.iter_mut().zip(&out) {
            dst.extend_from_slice(src);
        }
        pos += n;
    }
    let stopped = processor.stop_processing();
    instance.deactivate(stopped);
    result
}

fn seconds(s: f64) -> usize {
    (s * SAMPLE_RATE).round() as usize
}

/// RMS over a stereo pair, frames `a..b`.
fn rms(pair: &[Vec<f32>], a: usize, b: usize) -> f64 {
    let sum: f64 = pair
        .iter()
        .flat_map(|c| &c[a..b])
        .map(|&x| (x as f64) * (x as f64))
        .sum();
    (sum / (pair.len() * (b - a)) as f64).sqrt()
}

fn db(x: f64) -> f64 {
    20.0 * x.max(1e-30).log10()
}

#[test]
fn renders_a_note_through_the_clap_entry() {
    let entry = load_entry();
    let factory = entry.get_plugin_factory().expect("plugin factory");
    let desc = factory
        .plugin_descriptors()
        .find(|d| d.id().is_some_and(|id| id.to_bytes() == PLUGIN_ID.as_bytes()))
        .expect("plugin org.granary.granary in the factory");
    assert_eq!(
        desc.name().map(|n| n.to_string_lossy().into_owned()),
        Some("Granary".to_owned())
    );
    drop(entry);

    let note_off = seconds(2.5);
    // the default sugar's last grains trickle for about 2.2 s after note-off (`flow_variation`)
    let total = note_off + seconds(3.0);
    let out = render(&[(0, Ev::NoteOn(0.9)), (note_off, Ev::NoteOff)], total, 512);
    let (main, grains, cup) = (&out[0..2], &out[2..4], &out[4..6]);

    for (ch, samples) in out.iter().enumerate() {
        assert_eq!(samples.len(), total);
        if let Some(i) = samples.iter().position(|x| !x.is_finite()) {
            panic!("channel {ch}, frame {i}: non-finite sample {}", samples[i]);
        }
    }
    let ceiling = granary_engine::LIMITER_CEILING;
    assert_eq!(ceiling, 0.944);
    for (ch, samples) in main.iter().enumerate() {
        let (i, peak) = samples
            .iter()
            .map(|x| x.abs())
            .enumerate()
            .fold((0, 0.0f32), |m, (i, x)| if x > m.1 { (i, x) } else { m });
        assert!(
            peak <= ceiling,
            "main channel {ch}: peak {peak} at frame {i} exceeds the limiter ceiling {ceiling}"
        );
    }

    let (a, b) = (seconds(0.5), note_off);
    let pour = rms(main, a, b);
    let pour_grains = rms(grains, a, b);
    let pour_cup = rms(cup, a, b);
    let tail = rms(main, total - seconds(0.3), total);
    eprintln!(
        "pour RMS: main {:.1} dB, grains {:.1} dB, cup {:.1} dB; last 0.3 s main {:.1} dB",
        db(pour),
        db(pour_grains),
        db(pour_cup),
        db(tail)
    );
    assert!(pour > 1e-4, "main output silent during the pour: RMS {pour:e}");
    assert!(
        pour_grains > 1e-4,
        "Grains output silent during the pour: RMS {pour_grains:e}"
    );
    assert!(pour_cup > 1e-4, "Cup output silent during the pour: RMS {pour_cup:e}");
    assert!(
        db(pour) - db(tail) >= 30.0,
        "last 0.3 s after the note-off only {:.1} dB below the pour ({:.1} dB vs {:.1} dB)",
        db(pour) - db(tail),
        db(tail),
        db(pour)
    );
}

#[test]
fn block_size_does_not_change_the_output() {
    let events = [(100, Ev::NoteOn(0.9)), (60_000, Ev::NoteOff)];
    let small = render(&events, 96_000, 64);
    let large = render(&events, 96_000, 1000);
    assert!(
        rms(&small[0..2], 0, 96_000) > 1e-4,
        "the note must sound for the comparison to mean anything"
    );
    for ch in 0..2 {
        let (s, l) = (&small[ch], &large[ch]);
        assert_eq!(s.len(), l.len());
        if let Some(i) = (0..s.len()).find(|&i| s[i].to_bits() != l[i].to_bits()) {
            panic!(
                "main channel {ch} differs first at frame {i}: {} (64-frame blocks) vs {} \
                 (1000-frame blocks)",
                s[i], l[i]
            );
        }
    }
}

/// Length of the held note in [`grains_rms_with`], and the window measured, s.
const HELD_S: f64 = 4.0;
const STEADY_S: (f64, f64) = (2.0, 4.0);

/// Grains-port RMS over [`STEADY_S`] of a held note (velocity 0.9), with `midi` (if any)
/// sent at frame 0, before the note-on.
///
/// Why not the 2nd second: the grains first hit the bare cup floor (loud grain-cup
/// impacts); as the pile covers the floor they become quieter grain-grain impacts. More
/// flow covers the floor sooner, so over 1-2 s the extra flow is offset by the earlier end
/// of that loud phase (measured: +0.46 dB only, and -1.5 dB over 1.0-1.25 s). Once the floor
/// is covered (from ~2 s on) the pour is steady and the energy follows the flow.
fn grains_rms_with(midi: Option<[u8; 3]>) -> f64 {
    let mut events = Vec::new();
    if let Some(data) = midi {
        events.push((0, Ev::Midi(data)));
    }
    events.push((0, Ev::NoteOn(0.9)));
    let out = render(&events, seconds(HELD_S), 512);
    rms(&out[2..4], seconds(STEADY_S.0), seconds(STEADY_S.1))
}

#[test]
fn mod_wheel_and_pressure_raise_the_flow() {
    let plain = grains_rms_with(None);
    let wheel = grains_rms_with(Some([0xB0, 1, 127]));
    let pressure = grains_rms_with(Some([0xD0, 127, 0]));
    eprintln!(
        "Grains RMS over {:?} s: plain {:.2} dB, mod wheel 127 {:.2} dB, \
         pressure 127 {:.2} dB",
        STEADY_S,
        db(plain),
        db(wheel),
        db(pressure)
    );
    assert!(plain > 1e-4, "the plain note must pour: RMS {plain:e}");
    // twice the flow: clearly more energy (at least +1.5 dB, i.e. ~1.41x the energy)
    assert!(
        db(wheel) - db(plain) >= 1.5,
        "mod wheel at 127 raised the Grains energy by only {:.2} dB",
        db(wheel) - db(plain)
    );
    assert!(
        db(pressure) - db(plain) >= 1.5,
        "channel pressure at 127 raised the Grains energy by only {:.2} dB",
        db(pressure) - db(plain)
    );
}

/// The plugin, driven through CLAP with notes inside host blocks, gives exactly the samples
/// of `granary render --note` (`render_notes`, the same event loop offline): the main output
/// once aligned by the plugin's latency, the stems as they are.
#[test]
fn a_bounce_equals_the_offline_render_of_the_same_notes() {
    use granary_engine::control::params::ParamValues;
    use granary_engine::render::{render_notes, NoteEvent, RenderOptions};
    let notes = [
        NoteEvent::parse("0.01:0.6:100").unwrap(),
        NoteEvent::parse("0.4:1.1:127").unwrap(),
    ];
    let opts = RenderOptions {
        seconds: 1.5,
        sample_rate: SAMPLE_RATE as f32,
        block_size: 512,
        pour: None,
    };
    let offline = render_notes(&ParamValues::default(), &opts, &notes);
    let frame = |t: f64| (t * SAMPLE_RATE).round() as usize;
    let mut events: Vec<(usize, Ev)> = notes
        .iter()
        .flat_map(|n| {
            [
                (frame(n.start_s), Ev::NoteOn(n.velocity_01() as f64)),
                (frame(n.end_s), Ev::NoteOff),
            ]
        })
        .collect();
    events.sort_by_key(|&(t, ev)| (t, matches!(ev, Ev::NoteOn(_))));
    let frames = offline.grains[0].len();
    // the plugin's main output is late by its latency: render that much more
    let latency =
        granary_engine::Engine::new(granary_engine::Settings::default(), SAMPLE_RATE as f32, 512).latency_samples();
    let out = render(&events, frames + latency, 333);
    assert!(rms(&out[2..4], 0, frames) > 1e-4, "the bounce must sound");
    let same = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
    for ch in 0..2 {
        assert!(same(&out[ch][latency..], &offline.main[ch]), "main {ch}");
        assert!(same(&out[2 + ch][..frames], &offline.grains[ch]), "grains {ch}");
        assert!(same(&out[4 + ch][..frames], &offline.cup[ch]), "cup {ch}");
        assert!(same(&out[6 + ch][..frames], &offline.surface[ch]), "surface {ch}");
        assert!(same(&out[8 + ch][..frames], &offline.friction[ch]), "friction {ch}");
    }
}

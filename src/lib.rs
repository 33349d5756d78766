//! Granary: a physically-based instrument for the sound of grains poured into a cup.
//!
//! This crate is the plugin (nice-plug): this file holds the IO layout, MIDI to engine and the
//! exports; `params` the host parameters, `state` the saved-state check, `editor` the GUI,
//! `telemetry` the audio -> GUI channel. The synthesis is the `granary-engine` crate, which
//! knows nothing of plugins; the command line is the `granary-cli` crate.

pub mod editor;
pub mod params;
pub mod state;
pub mod telemetry;

use granary_engine::control::events::{Event, Timed};
use granary_engine::feed;
use granary_engine::{Engine, Outputs};
use nice_plug::prelude::*;
use nice_plug_egui::EguiEditorState;
use params::GranaryParams;
use std::ops::Range;
use std::sync::Arc;
use telemetry::{TelemetryReader, TelemetryWriter};

pub struct Granary {
    params: Arc<GranaryParams>,
    editor_state: Arc<EguiEditorState>,
    /// Built in `activate` (it allocates); `None` before.
    engine: Option<Engine>,
    /// Stem buffers for hosts that do not connect the stem ports (grains, cup, surface and
    /// friction, left and right each; a host may connect some stems and not others).
    stem_scratch: [[Vec<f32>; 2]; STEMS],
    /// MIDI -> engine events.
    midi: MidiIn,
    /// Meters, analyser samples, collision counts to the editor (wait-free, audio side).
    telemetry: TelemetryWriter,
    /// The editor's end of the telemetry (the audio thread never touches it).
    telemetry_reader: TelemetryReader,
}

impl Default for Granary {
    fn default() -> Self {
        let params = Arc::new(GranaryParams::default());
        let size = *params.editor_size.lock().unwrap_or_else(|e| e.into_inner());
        let (telemetry, telemetry_reader) = telemetry::channel();
        Granary {
            telemetry,
            telemetry_reader,
            editor_state: editor::default_state(size),
            params,
            engine: None,
            stem_scratch: Default::default(),
            midi: MidiIn::default(),
        }
    }
}

/// MIDI CC numbers Granary reacts to.
const CC_MOD_WHEEL: u8 = 1;
const CC_ALL_SOUND_OFF: u8 = 120;
const CC_ALL_NOTES_OFF: u8 = 123;
/// The stem outputs (stereo aux ports, in this order): Grains, Cup, Surface, Friction.
pub const STEMS: usize = 4;
/// Velocity of the note the editor's Pour button holds.
const EDITOR_POUR_VELOCITY: f32 = 0.8;

/// The MIDI Granary plays, as engine events: notes play the gesture (pour, or stir, shake,
/// tilt; keys 24-27 switch it and key 28 sets off an avalanche, in the engine), the mod wheel
/// (CC 1) and channel pressure modulate it (the larger of the two), CC 120/123 stop every note.
#[derive(Debug, Default)]
struct MidiIn {
    mod_wheel: f32,
    pressure: f32,
}

impl MidiIn {
    /// The engine event of a host event, if Granary reacts to it.
    fn translate<S>(&mut self, event: NoteEvent<S>) -> Option<Timed> {
        let event = match event {
            NoteEvent::NoteOn {
                timing, velocity, key, ..
            } => Timed::new(
                timing as usize,
                Event::NoteOn {
                    velocity,
                    key: key.number_or_middle_c(),
                },
            ),
            NoteEvent::NoteOff { timing, key, .. } | NoteEvent::Choke { timing, key, .. } => {
                Timed::new(timing as usize, Event::KeyOff(key.number_or_middle_c()))
            }
            NoteEvent::MidiCC {
                timing,
                cc: CC_MOD_WHEEL,
                value,
                ..
            } => {
                self.mod_wheel = value;
                Timed::new(timing as usize, Event::Modulation(self.mod_wheel.max(self.pressure)))
            }
            NoteEvent::MidiCC {
                timing,
                cc: CC_ALL_NOTES_OFF | CC_ALL_SOUND_OFF,
                ..
            } => Timed::new(timing as usize, Event::AllNotesOff),
            NoteEvent::MidiChannelPressure { timing, pressure, .. } => {
                self.pressure = pressure;
                Timed::new(timing as usize, Event::Modulation(self.mod_wheel.max(self.pressure)))
            }
            _ => return None,
        };
        Some(event)
    }
}

impl Plugin for Granary {
    const NAME: &'static str = "Granary";
    const VENDOR: &'static str = "Granary";
    const URL: &'static str = "https://example.invalid/granary";
    const EMAIL: &'static str = "granary@example.invalid";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    const AUDIO_IO_LAYOUTS: &'static [AudioIOLayout] = &[
        AudioIOLayout {
            main_input_channels: None,
            main_output_channels: NonZeroU32::new(2),
            aux_input_ports: &[],
            aux_output_ports: &[new_nonzero_u32(2); STEMS],
            names: PortNames {
                layout: Some("Stereo + Grains + Cup + Surface + Friction"),
                main_input: None,
                main_output: Some("Main"),
                aux_inputs: &[],
                aux_outputs: &["Grains", "Cup", "Surface", "Friction"],
            },
        },
        AudioIOLayout {
            // For hosts that cannot feed the stem outputs (some VST3 hosts leave inactive busses
            // without buffers, and then nice-plug would not call `process` at all).
            main_input_channels: None,
            main_output_channels: NonZeroU32::new(2),
            aux_input_ports: &[],
            aux_output_ports: &[],
            names: PortNames {
                layout: Some("Stereo"),
                main_input: None,
                main_output: Some("Main"),
                aux_inputs: &[],
                aux_outputs: &[],
            },
        },
    ];

    const MIDI_INPUT: MidiConfig = MidiConfig::MidiCCs;
    const SAMPLE_ACCURATE_AUTOMATION: bool = true;

    type Editor = nice_plug_egui::EguiEditor<editor::GranaryEditor>;
    type SysExMessage = ();
    type BackgroundTask = ();

    fn params(&self) -> Arc<dyn Params> {
        self.params.clone()
    }

    fn editor(&mut self, _async_executor: AsyncExecutor<Self>) -> Option<Self::Editor> {
        editor::create(
            self.params.clone(),
            self.editor_state.clone(),
            self.telemetry_reader.handle(),
        )
    }

    fn filter_state(state: &mut PluginState) {
        // Migrate pre-release states; refuse (log, change nothing) corrupted ones.
        state::filter_plugin_state(state);
    }

    fn activate(
        &mut self,
        _layout: &AudioIOLayout,
        config: &BufferConfig,
        context: &mut impl ActivateContext<Self>,
    ) -> bool {
        let settings = self.params.settings();
        let mut engine = Engine::new(settings, config.sample_rate, config.max_buffer_size as usize);
        // the host's offline process mode (not every host sets it: Ardour 7's export does
        // not) renders `quality` = auto at reference quality; the default, realtime, ignores
        // it. A change of mode while active reactivates the plugin (nice-plug)
        engine.set_offline(config.process_mode == ProcessMode::Offline);
        context.set_latency_samples(engine.latency_samples() as u32);
        self.engine = Some(engine);
        self.telemetry.set_sample_rate(config.sample_rate);
        self.telemetry.clear_pour();
        let len = (config.max_buffer_size as usize).clamp(64, 8192);
        self.stem_scratch = std::array::from_fn(|_| [vec![0.0; len], vec![0.0; len]]);
        true
    }

    fn reset(&mut self) {
        if let Some(engine) = &mut self.engine {
            engine.set_settings(&self.params.settings());
            engine.reset();
        }
        self.midi = MidiIn::default();
        // the engine forgot its notes: a Pour button still held starts a new one
        self.telemetry.clear_pour();
    }

    fn process(
        &mut self,
        buffer: &mut Buffer,
        aux: &mut AuxiliaryBuffers,
        context: &mut impl ProcessContext<Self>,
    ) -> ProcessStatus {
        let n = buffer.samples();
        let main = buffer.as_slice();
        let Some(engine) = &mut self.engine else {
            main.iter_mut().for_each(|c| c.fill(0.0));
            return ProcessStatus::Normal;
        };
        // the host's values (automation, a state load) from this block's first sample; a new
        // seed reseeds, a pour that starts later restarts from the seed (engine "Determinism")
        engine.set_settings(&self.params.settings());
        // the editor's Pour button: a held note, from the start of the block
        let pour_button = self.telemetry.pour_edge().map(|held| {
            let event = if held {
                Event::NoteOn {
                    velocity: EDITOR_POUR_VELOCITY,
                    // middle C: pours at the `aim` parameter
                    key: 60,
                }
            } else {
                Event::NoteOff
            };
            Timed::new(0, event)
        });
        if main.len() < 2 {
            if let Some(pour) = pour_button {
                pour.event.apply(engine);
            }
            main.iter_mut().for_each(|c| c.fill(0.0));
            return ProcessStatus::Normal;
        }
        // Without a stem port (the main-only layout, or a host that leaves one unconnected),
        // that stem goes to scratch buffers.
        let mut host: [Option<&mut [&mut [f32]]>; STEMS] = Default::default();
        for (slot, port) in host.iter_mut().zip(aux.outputs.iter_mut()) {
            if connected(port, n) {
                *slot = Some(port.as_slice());
            }
        }
        let mut stems = Stems {
            host,
            scratch: &mut self.stem_scratch,
        };
        let midi = &mut self.midi;
        let host_events = std::iter::from_fn(|| context.next_event()).filter_map(|e| midi.translate(e));
        let telemetry = &mut self.telemetry;
        feed::process(engine, n, pour_button.into_iter().chain(host_events), |engine, span| {
            render_span(engine, telemetry, main, &mut stems, span)
        });
        self.telemetry.write_engine(engine);
        ProcessStatus::KeepAlive
    }

    fn deactivate(&mut self) {
        // The engine stays until the next `activate` replaces it. Ardour 7 deactivates and
        // reactivates a VST3 plugin from its own thread as an export starts, while its audio
        // threads go on processing it: the export ran in that gap (up to 180 ms of wall
        // time, several seconds of freewheeled audio) and, with no engine, was silent, note
        // and all (`cargo xtask daw-test`: one export in eight after a deactivation once;
        // under load, several in every run of 24). A deactivated plugin that the host still
        // processes now plays on.
    }
}

/// A stereo port the host gave buffers for (hosts may leave stem ports unconnected).
fn connected(port: &Buffer, n: usize) -> bool {
    let channels = port.as_slice_immutable();
    channels.len() >= 2 && channels.iter().all(|c| c.len() == n)
}

/// Where the stems go: each to the host's aux port if it connected that one, else to its
/// scratch buffers (the editor meters every stem either way).
struct Stems<'a, 'b> {
    /// Grains, cup, surface and friction: the host's port, when connected.
    host: [Option<&'a mut [&'b mut [f32]]>; STEMS],
    scratch: &'a mut [[Vec<f32>; 2]; STEMS],
}

/// Samples `pos..end` of one stem: the host's port, or the start of its scratch buffers.
fn stem<'s>(
    host: &'s mut Option<&mut [&mut [f32]]>,
    scratch: &'s mut [Vec<f32>; 2],
    pos: usize,
    end: usize,
) -> [&'s mut [f32]; 2] {
    match host {
        Some(port) => {
            let (l, r) = port.split_at_mut(1);
            [&mut l[0][pos..end], &mut r[0][pos..end]]
        }
        None => {
            let [l, r] = scratch;
            [&mut l[..end - pos], &mut r[..end - pos]]
        }
    }
}

/// Renders samples `span` of the host's buffers and publishes them (the main output and
/// every stem, the ones the host did not take included) to the editor.
fn render_span(
    engine: &mut Engine,
    telemetry: &mut TelemetryWriter,
    main: &mut [&mut [f32]],
    stems: &mut Stems,
    span: Range<usize>,
) {
    let Range { start: a, end: b } = span;
    let (ml, mr) = main.split_at_mut(1);
    // the span in pieces the scratch buffers hold (the whole span when the host took all)
    let chunk = if stems.host.iter().all(Option::is_some) {
        (b - a).max(1)
    } else {
        stems.scratch[0][0].len().max(1)
    };
    let mut pos = a;
    while pos < b {
        let end = (pos + chunk).min(b);
        let (ml, mr) = (&mut ml[0][pos..end], &mut mr[0][pos..end]);
        let [hg, hc, hs, hf] = &mut stems.host;
        let [sg, sc, ss, sf] = &mut *stems.scratch;
        let [gl, gr] = stem(hg, sg, pos, end);
        let [cl, cr] = stem(hc, sc, pos, end);
        let [sl, sr] = stem(hs, ss, pos, end);
        let [fl, fr] = stem(hf, sf, pos, end);
        engine.process(Outputs {
            main: [&mut *ml, &mut *mr],
            grains: [&mut *gl, &mut *gr],
            cup: [&mut *cl, &mut *cr],
            surface: Some([&mut *sl, &mut *sr]),
            friction: Some([&mut *fl, &mut *fr]),
        });
        telemetry.write_audio([ml, mr], [gl, gr], [cl, cr], [sl, sr], [fl, fr]);
        pos = end;
    }
}

impl ClapPlugin for Granary {
    const CLAP_ID: &'static str = "org.granary.granary";
    const CLAP_DESCRIPTION: Option<&'static str> = Some("Grains poured into a cup, synthesised from physics");
    const CLAP_MANUAL_URL: Option<&'static str> = None;
    const CLAP_SUPPORT_URL: Option<&'static str> = None;
    const CLAP_FEATURES: &'static [ClapFeature] =
        &[ClapFeature::Instrument, ClapFeature::Synthesizer, ClapFeature::Stereo];
}

impl Vst3Plugin for Granary {
    const VST3_CLASS_ID: [u8; 16] = *b"GranaryPourInstr";
    const VST3_SUBCATEGORIES: &'static [Vst3SubCategory] = &[Vst3SubCategory::Instrument, Vst3SubCategory::Synth];
}

// The plugin's entry points; not in the unit tests' build of this crate, which tests its
// parts and never loads it as a plugin (the integration tests and the bundles link the
// library built with them): about a third less to compile there (70 s to 50 s here).
#[cfg(not(test))]
nice_export_clap!(Granary);
#[cfg(not(test))]
nice_export_vst3!(Granary);

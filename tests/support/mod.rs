//! A small CLAP host (clack-host) for the integration tests: loads Granary through a CLAP
//! entry point (the built `granary.clap` bundle, or the entry linked into the test binary),
//! lists its parameters, activates it at any sample rate, processes blocks of any size with
//! note, MIDI and parameter events, and saves and loads its state, as a DAW does.
#![allow(dead_code)]

use clack_extensions::params::{ParamInfoBuffer, PluginParams};
use clack_extensions::state::PluginState;
use clack_host::events::event_types::{MidiEvent, NoteOffEvent, NoteOnEvent, ParamValueEvent};
use clack_host::events::Match;
use clack_host::prelude::*;
use granary_engine::control::params::SPECS;
use std::ffi::CString;
use std::path::Path;

pub const PLUGIN_ID: &str = "org.granary.granary";

/// The env variable that points the bundle tests at a built `granary.clap`.
pub const BUNDLE_ENV: &str = "GRANARY_CLAP_BUNDLE";

/// Loads the CLAP bundle (on Linux the `.clap` file is the shared library) through its
/// `clap_entry` symbol, as a host does. The library is closed again when the last clone of
/// the entry, and the last instance made from it, is dropped (`tests/unload.rs`).
pub fn load_bundle(path: &Path) -> PluginEntry {
    assert!(path.is_file(), "{}: no such CLAP bundle", path.display());
    // SAFETY: the file is Granary's CLAP bundle, built by `cargo xtask bundle`; loading it runs
    // only nice-plug's entry initialisation.
    unsafe { PluginEntry::load(path) }.unwrap_or_else(|e| panic!("{}: cannot load: {e}", path.display()))
}

/// The bundle named by `GRANARY_CLAP_BUNDLE`. Its tests are `#[ignore]`d in a plain
/// `cargo test` (there is no bundle to load); `cargo xtask test` builds the bundle and runs
/// them with `--ignored` and the variable set. Asked to run without it, they fail: a bundle
/// test never passes without loading the bundle.
pub fn bundle_from_env() -> PluginEntry {
    match std::env::var_os(BUNDLE_ENV) {
        Some(p) if !p.is_empty() => load_bundle(Path::new(&p)),
        _ => panic!(
            "{BUNDLE_ENV} is not set: build the bundle and point it there \
             ({BUNDLE_ENV}=target/bundled/granary.clap; cargo xtask test does both)"
        ),
    }
}

/// Granary's CLAP entry from the `clap_entry` static linked into this test binary.
pub fn load_linked() -> PluginEntry {
    use clack_host::entry::EntryDescriptor;
    // SAFETY of the cast: `granary::clap_entry` is nice-plug's re-export of clap-sys's
    // `clap_plugin_entry`, and `EntryDescriptor` is the same `#[repr(C)]` struct of the CLAP
    // ABI (`clap_version`, then the `init`, `deinit` and `get_factory` function pointers).
    // The static lives for the whole program.
    let descriptor: &'static EntryDescriptor =
        unsafe { &*(&granary::clap_entry as *const _ as *const EntryDescriptor) };
    let exe = std::env::current_exe().expect("current_exe");
    let path = CString::new(exe.to_string_lossy().into_owned()).expect("path has no NUL");
    // SAFETY: the entry is nice-plug's CLAP wrapper, a compliant CLAP entry.
    unsafe { PluginEntry::load_from_raw(descriptor, &path) }.expect("entry init failed")
}

/// One host event inside a block, at `frame` (offset in the block).
#[derive(Clone, Copy, Debug)]
pub enum Ev {
    NoteOn {
        key: u16,
        channel: u16,
        velocity: f64,
    },
    NoteOff {
        key: u16,
        channel: u16,
    },
    Midi([u8; 3]),
    /// A parameter change by index into [`Host::params`], plain value (anything, NaN too).
    Param {
        index: usize,
        value: f64,
    },
}

/// Which output ports the host connects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ports {
    /// Main and every stem: Grains, Cup, Surface and Friction (5 stereo ports).
    All,
    /// Only the main stereo port (what hosts that ignore auxiliary outputs pass).
    MainOnly,
}

/// One of the plugin's parameters as the host sees it.
#[derive(Clone, Debug)]
pub struct HostParam {
    /// Granary's stable id (matched by display name against `params::SPECS`).
    pub id: &'static str,
    pub clap_id: ClapId,
    pub min: f64,
    pub max: f64,
    pub default: f64,
    pub stepped: bool,
}

/// A plugin instance in a host, activated or not.
pub struct Host {
    _entry: PluginEntry,
    instance: PluginInstance<()>,
    processor: Option<StartedPluginAudioProcessor<()>>,
    pub params: Vec<HostParam>,
    pub sample_rate: f64,
    pub max_frames: u32,
    steady: u64,
    in_events: EventBuffer,
    out_events: EventBuffer,
}

fn host_info() -> HostInfo {
    HostInfo::new("granary-tests", "granary", "https://example.invalid", "0.1.0").expect("host info")
}

impl Host {
    pub fn new(entry: PluginEntry) -> Host {
        let factory = entry.get_plugin_factory().expect("plugin factory");
        assert!(
            factory
                .plugin_descriptors()
                .any(|d| d.id().is_some_and(|id| id.to_bytes() == PLUGIN_ID.as_bytes())),
            "{PLUGIN_ID} is not in the plugin factory"
        );
        let id = CString::new(PLUGIN_ID).unwrap();
        let mut instance = PluginInstance::<()>::new(|_| (), |_| (), &entry, &id, &host_info()).expect("instantiate");
        let handle = instance.plugin_handle();
        let ext = handle.get_extension::<PluginParams>().expect("params extension");
        let mut params = Vec::new();
        for i in 0..ext.count(&handle) {
            let mut buf = ParamInfoBuffer::new();
            let info = ext.get_info(&handle, i, &mut buf).expect("param info");
            let name = String::from_utf8_lossy(info.name).into_owned();
            let spec = SPECS
                .iter()
                .find(|s| s.name == name)
                .unwrap_or_else(|| panic!("parameter {name:?} is not in params::SPECS"));
            params.push(HostParam {
                id: spec.id,
                clap_id: info.id,
                min: info.min_value,
                max: info.max_value,
                default: info.default_value,
                stepped: info
                    .flags
                    .contains(clack_extensions::params::ParamInfoFlags::IS_STEPPED),
            });
        }
        Host {
            _entry: entry,
            instance,
            processor: None,
            params,
            sample_rate: 0.0,
            max_frames: 0,
            steady: 0,
            in_events: EventBuffer::with_capacity(256),
            out_events: EventBuffer::with_capacity(256),
        }
    }

    pub fn param(&self, id: &str) -> usize {
        self.params
            .iter()
            .position(|p| p.id == id)
            .unwrap_or_else(|| panic!("no parameter {id}"))
    }

    pub fn activate(&mut self, sample_rate: f64, max_frames: u32) {
        assert!(self.processor.is_none(), "already active");
        let stopped = self
            .instance
            .activate(
                |_, _| (),
                PluginAudioConfiguration {
                    sample_rate,
                    min_frames_count: 1,
                    max_frames_count: max_frames,
                },
            )
            .expect("activate");
        self.processor = Some(stopped.start_processing().map_err(|_| "start_processing").unwrap());
        self.sample_rate = sample_rate;
        self.max_frames = max_frames;
        self.steady = 0;
    }

    pub fn deactivate(&mut self) {
        let p = self.processor.take().expect("not active");
        self.instance.deactivate(p.stop_processing());
    }

    pub fn is_active(&self) -> bool {
        self.processor.is_some()
    }

    /// The host's reset (e.g. on a transport jump): stop, reset, start.
    pub fn reset(&mut self) {
        self.processor.as_mut().expect("not active").reset();
    }

    /// Processes `frames` frames (<= max_frames) with `events` (frame offset, event); returns the
    /// 10 output channels (Main, Grains, Cup, Surface and Friction, L/R each; with
    /// [`Ports::MainOnly`] only Main's 2).
    /// The host buffers start as NaN: the plugin must overwrite every sample.
    pub fn process(&mut self, frames: usize, events: &[(u32, Ev)], ports: Ports) -> Vec<Vec<f32>> {
        assert!(frames <= self.max_frames as usize);
        let n_ports = if ports == Ports::All { 1 + granary::STEMS } else { 1 };
        let mut out = vec![vec![f32::NAN; frames]; 2 * n_ports];
        self.in_events.clear();
        for &(t, ev) in events {
            assert!(
                frames == 0 || (t as usize) < frames,
                "event at {t} outside a {frames}-frame block"
            );
            match ev {
                Ev::NoteOn { key, channel, velocity } => self.in_events.push(&NoteOnEvent::new(
                    t,
                    Pckn::new(0u16, channel, key, Match::All),
                    velocity,
                )),
                Ev::NoteOff { key, channel } => {
                    self.in_events
                        .push(&NoteOffEvent::new(t, Pckn::new(0u16, channel, key, Match::All), 0.0))
                }
                Ev::Midi(data) => self.in_events.push(&MidiEvent::new(t, 0, data)),
                Ev::Param { index, value } => self.in_events.push(&ParamValueEvent::new(
                    t,
                    self.params[index].clap_id,
                    Pckn::match_all(),
                    value,
                )),
            }
        }
        self.in_events.sort();
        self.out_events.clear();
        let mut out_ports = AudioPorts::with_capacity(2 * n_ports, n_ports);
        let inputs = InputAudioBuffers::empty();
        {
            let mut outputs = out_ports.with_output_buffers(out.chunks_mut(2).map(|port| AudioPortBuffer {
                latency: 0,
                channels: AudioPortBufferType::f32_output_only(port.iter_mut().map(|c| c.as_mut_slice())),
            }));
            self.processor
                .as_mut()
                .expect("not active")
                .process(
                    &inputs,
                    &mut outputs,
                    &self.in_events.as_input(),
                    &mut self.out_events.as_output(),
                    Some(self.steady),
                    None,
                )
                .expect("process");
        }
        self.steady += frames as u64;
        out
    }

    /// Current plain values of every parameter, in [`Host::params`] order.
    pub fn values(&mut self) -> Vec<f64> {
        let handle = self.instance.plugin_handle();
        let ext = handle.get_extension::<PluginParams>().expect("params extension");
        self.params
            .iter()
            .map(|p| ext.get_value(&handle, p.clap_id).expect("get_value"))
            .collect()
    }

    /// Sets parameters while the plugin is not processing (CLAP `params.flush`).
    pub fn flush(&mut self, changes: &[(usize, f64)]) {
        let mut events = EventBuffer::with_capacity(changes.len());
        for &(index, value) in changes {
            events.push(&ParamValueEvent::new(
                0,
                self.params[index].clap_id,
                Pckn::match_all(),
                value,
            ));
        }
        let mut out = EventBuffer::new();
        let ext = self
            .instance
            .plugin_handle()
            .get_extension::<PluginParams>()
            .expect("params extension");
        match self.processor.as_mut() {
            Some(p) => ext.flush_active(&mut p.plugin_handle(), &events.as_input(), &mut out.as_output()),
            None => {
                let mut handle = self.instance.inactive_plugin_handle().expect("inactive");
                ext.flush(&mut handle, &events.as_input(), &mut out.as_output())
            }
        }
    }

    /// The host's render mode (CLAP `render.set`): offline for a bounce, realtime live. The
    /// plugin takes it at its next activation (nice-plug restarts an active one).
    pub fn set_render_mode(&mut self, offline: bool) {
        use clack_extensions::render::{PluginRender, RenderMode};
        let handle = self.instance.plugin_handle();
        let ext = handle.get_extension::<PluginRender>().expect("render extension");
        let mode = if offline {
            RenderMode::Offline
        } else {
            RenderMode::Realtime
        };
        ext.set(&handle, mode).expect("render.set");
    }

    /// The latency the plugin reports (CLAP `latency.get`), samples.
    pub fn latency(&mut self) -> u32 {
        let handle = self.instance.plugin_handle();
        let ext = handle
            .get_extension::<clack_extensions::latency::PluginLatency>()
            .expect("latency extension");
        ext.get(&handle)
    }

    pub fn save_state(&mut self) -> Vec<u8> {
        let handle = self.instance.plugin_handle();
        let ext = handle.get_extension::<PluginState>().expect("state extension");
        let mut bytes = Vec::new();
        ext.save(&handle, &mut bytes).expect("state save");
        bytes
    }

    /// Loads a state; `Err` when the plugin reports failure.
    pub fn load_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        let handle = self.instance.plugin_handle();
        let ext = handle.get_extension::<PluginState>().expect("state extension");
        ext.load(&handle, &mut std::io::Cursor::new(bytes))
            .map_err(|e| e.to_string())
    }
}

/// nice-plug's CLAP state stream: an 8-byte little-endian length, then the JSON.
pub fn state_json(bytes: &[u8]) -> serde_json::Value {
    assert!(bytes.len() >= 8, "state shorter than its length prefix");
    let len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    assert_eq!(len, bytes.len() - 8, "state length prefix");
    serde_json::from_slice(&bytes[8..]).expect("state is JSON")
}

/// The inverse of [`state_json`].
pub fn state_bytes(json: &serde_json::Value) -> Vec<u8> {
    let body = serde_json::to_vec(json).unwrap();
    let mut out = (body.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&body);
    out
}

/// Index and value of the first non-finite sample of any channel.
pub fn first_non_finite(channels: &[Vec<f32>]) -> Option<(usize, usize, f32)> {
    channels
        .iter()
        .enumerate()
        .find_map(|(c, ch)| ch.iter().position(|x| !x.is_finite()).map(|i| (c, i, ch[i])))
}

/// Largest absolute sample of the given channels.
pub fn peak(channels: &[Vec<f32>]) -> f32 {
    channels.iter().flatten().fold(0.0f32, |m, x| m.max(x.abs()))
}

pub fn rms(channels: &[Vec<f32>]) -> f64 {
    let (sum, n) = channels
        .iter()
        .flatten()
        .fold((0.0f64, 0usize), |(s, n), &x| (s + (x as f64) * (x as f64), n + 1));
    (sum / n.max(1) as f64).sqrt()
}

/// The CPU time the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`): a bound on how long
/// the engine may work holds on a loaded machine, where wall time also counts the waits for a
/// core.
pub fn thread_cpu_time() -> std::time::Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

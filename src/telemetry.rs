//! Audio -> GUI telemetry, without locks or allocation on the audio side.
//!
//! Thread contract:
//! - [`TelemetryWriter`] belongs to the audio thread. Every method is wait-free: atomics and
//!   an `rtrb` single-producer/single-consumer ring. When the ring is full (the editor is
//!   closed, or slow) samples are dropped and counted, never waited for.
//! - [`TelemetryReader`] belongs to the GUI thread. It only reads (and resets the peak
//!   hold it reads); the audio thread never reads anything the GUI writes, except the
//!   "Pour" button (`pour_held`), which is a control, not telemetry.
//!
//! What is published: output samples of the main mix (mono sum) for the spectrum analyser;
//! peak and RMS of the main output and of each stem (grains, cup, surface, friction); running collision totals (all, and per
//! generator cell) with the sample clock, the limiter's largest gain reduction, from which the GUI derives collisions per second
//! and the flashes per cell; the pour state (fill, pile height, flow, impact speed) and the
//! cup geometry for the scene view; where the stream lands (the cup or the bare surface),
//! the heap's base radius on the surface and the overflow of a full cup; the gesture in effect
//! and its state (the cup's tilt, the spoon, the shake's offset, an avalanche under way).

use atomic_float::AtomicF32;
use granary_engine::base::window::CELLS;
use granary_engine::control::choices::Gesture;
use granary_engine::pour::gesture::GestureView;
use granary_engine::Engine;
use rtrb::{Consumer, Producer, RingBuffer};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

/// Samples the analyser ring holds: about 0.34 s at 48 kHz, several GUI frames.
pub const SCOPE_CAPACITY: usize = 1 << 14;
/// Number of generator cells the scene view shows (one flash each).
pub const CELL_COUNT: usize = CELLS.len();
/// RMS meter integration time, s (a VU-like 300 ms).
pub const RMS_TIME_S: f32 = 0.3;

/// Meter channels: the main output and the four stems.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meter {
    Main = 0,
    Grains = 1,
    Cup = 2,
    /// The ground's own sound.
    Surface = 3,
    /// The sliding contacts' own sound (stirring, sliding, avalanches).
    Friction = 4,
}

/// Number of meters (`Meter::ALL`).
pub const METERS: usize = 5;

impl Meter {
    pub const ALL: [Meter; METERS] = [Meter::Main, Meter::Grains, Meter::Cup, Meter::Surface, Meter::Friction];

    pub fn label(self) -> &'static str {
        match self {
            Meter::Main => "Main",
            Meter::Grains => "Grains",
            Meter::Cup => "Cup",
            Meter::Surface => "Surface",
            Meter::Friction => "Friction",
        }
    }
}

/// What both sides share.
#[derive(Default)]
struct Shared {
    sample_rate: AtomicF32,
    /// Samples rendered since the plugin was activated.
    samples: AtomicU64,
    /// Samples dropped because the analyser ring was full.
    dropped: AtomicU64,
    /// Peak |x| since the GUI last read it, per meter (both channels).
    peak: [AtomicF32; METERS],
    /// RMS over `RMS_TIME_S`, per meter (both channels).
    rms: [AtomicF32; METERS],
    /// The limiter's largest gain reduction since the GUI last read it, dB (>= 0).
    gain_reduction_db: AtomicF32,
    /// Physical collisions since the engine's last reset.
    collisions: AtomicU64,
    /// Collisions per generator cell since the engine's last reset.
    cell_collisions: [AtomicU64; CELL_COUNT],
    fill: AtomicF32,
    pile_height_m: AtomicF32,
    /// The pile's top radius in the cup, or the heap's base radius on the surface, m.
    pile_radius_m: AtomicF32,
    /// Grains per second running over the rim of a full cup.
    overflow: AtomicF32,
    /// The stream lands on the bare surface (`PourTarget::Surface`: no cup).
    open: AtomicBool,
    flow_kg_s: AtomicF32,
    impact_speed_m_s: AtomicF32,
    cup_radius_m: AtomicF32,
    cup_height_m: AtomicF32,
    stream_radius_m: AtomicF32,
    /// Where the stream lands, 0 (the axis) .. 1 (the wall): `aim` or the last note's key.
    aim: AtomicF32,
    /// The editor's "Pour" button is held (GUI -> audio control).
    pour_held: AtomicBool,
    /// The gesture in effect (its index in `Gesture::ALL`) and its state (`GestureView`).
    gesture: AtomicU8,
    tilt_rad: AtomicF32,
    spoon_angle_rad: AtomicF32,
    spoon_depth_m: AtomicF32,
    shake_offset_m: AtomicF32,
    slope_rad: AtomicF32,
    avalanche: AtomicBool,
    avalanches: AtomicU32,
    shake_energy_j: AtomicF32,
}

/// Creates a connected writer (audio thread) and reader (GUI thread).
pub fn channel() -> (TelemetryWriter, TelemetryReader) {
    let shared = Arc::new(Shared::default());
    let (producer, consumer) = RingBuffer::new(SCOPE_CAPACITY);
    (
        TelemetryWriter {
            shared: shared.clone(),
            producer,
            mean_square: [0.0; METERS],
            rms_coef: 0.0,
            pour_down: false,
        },
        TelemetryReader {
            shared,
            consumer: Arc::new(Mutex::new(consumer)),
            last_cells: [0; CELL_COUNT],
        },
    )
}

/// The audio thread's end. Nothing here allocates, locks or waits.
pub struct TelemetryWriter {
    shared: Arc<Shared>,
    producer: Producer<f32>,
    /// Running mean squares of the meters (the audio thread's own state).
    mean_square: [f32; METERS],
    /// One-pole coefficient of the RMS integrator for the current sample rate.
    rms_coef: f32,
    /// The Pour button state last acted on (see `pour_edge`).
    pour_down: bool,
}

impl TelemetryWriter {
    /// Call from `activate` (not real-time) and whenever the sample rate changes.
    pub fn set_sample_rate(&mut self, sample_rate: f32) {
        let fs = if sample_rate.is_finite() && sample_rate > 0.0 {
            sample_rate
        } else {
            48_000.0
        };
        self.shared.sample_rate.store(fs, Ordering::Relaxed);
        self.rms_coef = 1.0 - (-1.0 / (RMS_TIME_S * fs)).exp();
        self.mean_square = [0.0; METERS];
    }

    /// Publishes one rendered span: the main output and the four stems (stereo each, all
    /// the same length), in `Meter` order. Wait-free.
    pub fn write_audio(
        &mut self,
        main: [&[f32]; 2],
        grains: [&[f32]; 2],
        cup: [&[f32]; 2],
        surface: [&[f32]; 2],
        friction: [&[f32]; 2],
    ) {
        let n = main[0].len().min(main[1].len());
        for (k, [l, r]) in [main, grains, cup, surface, friction].into_iter().enumerate() {
            let mut peak = 0.0f32;
            let mut ms = self.mean_square[k];
            for (&a, &b) in l.iter().zip(r.iter()) {
                let a = finite(a);
                let b = finite(b);
                peak = peak.max(a.abs()).max(b.abs());
                ms += self.rms_coef * (0.5 * (a * a + b * b) - ms);
            }
            if ms < 1e-20 {
                ms = 0.0; // no denormals in the integrator
            }
            self.mean_square[k] = ms;
            self.shared.peak[k].fetch_max(peak, Ordering::Relaxed);
            self.shared.rms[k].store(ms.sqrt(), Ordering::Relaxed);
        }
        // the analyser's samples: the mono sum of the main output, dropped when full
        let take = n.min(self.producer.slots());
        if let Ok(chunk) = self.producer.write_chunk_uninit(take) {
            let mono = main[0]
                .iter()
                .zip(main[1].iter())
                .map(|(&a, &b)| 0.5 * (finite(a) + finite(b)));
            chunk.fill_from_iter(mono);
        }
        if take < n {
            self.shared.dropped.fetch_add((n - take) as u64, Ordering::Relaxed);
        }
        self.shared.samples.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Publishes the engine's counters, pour state and geometry (once per host block).
    pub fn write_engine(&mut self, engine: &Engine) {
        let s = &self.shared;
        let gain = engine.limiter_gain();
        let reduction_db = if gain > 0.0 { -20.0 * gain.log10() } else { 120.0 };
        s.gain_reduction_db.fetch_max(reduction_db.max(0.0), Ordering::Relaxed);
        s.collisions.store(engine.stats().collisions, Ordering::Relaxed);
        for (a, &c) in s.cell_collisions.iter().zip(engine.cell_collisions().iter()) {
            a.store(c, Ordering::Relaxed);
        }
        let pour = engine.pour_state();
        s.fill.store(pour.fill, Ordering::Relaxed);
        s.pile_height_m.store(pour.pile_height_m, Ordering::Relaxed);
        s.pile_radius_m.store(pour.pile_radius_m, Ordering::Relaxed);
        s.overflow.store(pour.overflow, Ordering::Relaxed);
        s.flow_kg_s.store(pour.flow_kg_s, Ordering::Relaxed);
        s.impact_speed_m_s.store(pour.impact_speed, Ordering::Relaxed);
        let g = engine.scene_geometry();
        s.cup_radius_m.store(g.cup.rim_radius, Ordering::Relaxed);
        s.cup_height_m.store(g.cup.depth, Ordering::Relaxed);
        s.stream_radius_m.store(g.stream_radius, Ordering::Relaxed);
        s.aim.store(g.aim, Ordering::Relaxed);
        s.open.store(g.open, Ordering::Relaxed);
        let v = engine.gesture_view();
        let index = Gesture::ALL.iter().position(|&g| g == v.gesture).unwrap_or(0);
        s.gesture.store(index as u8, Ordering::Relaxed);
        s.tilt_rad.store(v.tilt_rad, Ordering::Relaxed);
        s.spoon_angle_rad.store(v.spoon_angle_rad, Ordering::Relaxed);
        s.spoon_depth_m.store(v.spoon_depth_m, Ordering::Relaxed);
        s.shake_offset_m.store(v.shake_offset_m, Ordering::Relaxed);
        s.slope_rad.store(v.slope_rad, Ordering::Relaxed);
        s.avalanche.store(v.avalanche, Ordering::Relaxed);
        s.avalanches.store(v.avalanches, Ordering::Relaxed);
        s.shake_energy_j.store(v.shake_energy_j, Ordering::Relaxed);
    }

    /// The Pour button's change since the last call: `Some(true)` when it went down,
    /// `Some(false)` when released, `None` otherwise. The caller turns these into a held
    /// note (note on / note off), so a press is exactly one note.
    pub fn pour_edge(&mut self) -> Option<bool> {
        let held = self.shared.pour_held.load(Ordering::Relaxed);
        if held == self.pour_down {
            return None;
        }
        self.pour_down = held;
        Some(held)
    }

    /// Forgets a held Pour button (the engine was reset: its notes are gone).
    pub fn clear_pour(&mut self) {
        self.pour_down = false;
    }
}

/// A snapshot of the published values, as the GUI reads it once per frame.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Snapshot {
    pub sample_rate: f32,
    pub samples: u64,
    pub dropped: u64,
    /// Peak since the previous snapshot (linear full scale), per `Meter`.
    pub peak: [f32; METERS],
    /// RMS (linear full scale), per `Meter`.
    pub rms: [f32; METERS],
    /// The limiter's largest gain reduction since the previous snapshot, dB (>= 0).
    pub gain_reduction_db: f32,
    pub collisions: u64,
    /// Collisions per cell since the previous snapshot (the flashes).
    pub cell_delta: [u64; CELL_COUNT],
    pub fill: f32,
    /// The pile's height above the cup's floor, or the heap's on the surface, m.
    pub pile_height_m: f32,
    /// The pile's top radius in the cup, or the heap's base radius on the surface, m.
    pub pile_radius_m: f32,
    /// Grains per second running over the rim of a full cup onto the surface.
    pub overflow: f32,
    /// The stream lands on the bare surface (no cup), as the engine last rendered.
    pub open: bool,
    pub flow_kg_s: f32,
    pub impact_speed_m_s: f32,
    pub cup_radius_m: f32,
    pub cup_height_m: f32,
    pub stream_radius_m: f32,
    pub aim: f32,
    /// The gesture in effect and its state (tilt, spoon, shake, avalanche), as last rendered.
    pub gesture: GestureView,
}

/// The GUI thread's end. Cloneable handles are not offered: there is one reader.
pub struct TelemetryReader {
    shared: Arc<Shared>,
    /// The ring's consumer. Only the GUI locks this (the audio thread holds the producer),
    /// so the audio thread never waits on it.
    consumer: Arc<Mutex<Consumer<f32>>>,
    last_cells: [u64; CELL_COUNT],
}

impl TelemetryReader {
    /// Reads every published value; the peaks and per-cell deltas restart from here.
    pub fn snapshot(&mut self) -> Snapshot {
        let s = &self.shared;
        let mut cell_delta = [0u64; CELL_COUNT];
        for (i, a) in s.cell_collisions.iter().enumerate() {
            let now = a.load(Ordering::Relaxed);
            // the engine's counters restart on reset: a drop is a new run, not a negative count
            cell_delta[i] = now.saturating_sub(self.last_cells[i]);
            self.last_cells[i] = now;
        }
        Snapshot {
            sample_rate: s.sample_rate.load(Ordering::Relaxed),
            samples: s.samples.load(Ordering::Relaxed),
            dropped: s.dropped.load(Ordering::Relaxed),
            peak: std::array::from_fn(|k| s.peak[k].swap(0.0, Ordering::Relaxed)),
            rms: std::array::from_fn(|k| s.rms[k].load(Ordering::Relaxed)),
            gain_reduction_db: s.gain_reduction_db.swap(0.0, Ordering::Relaxed),
            collisions: s.collisions.load(Ordering::Relaxed),
            cell_delta,
            fill: s.fill.load(Ordering::Relaxed),
            pile_height_m: s.pile_height_m.load(Ordering::Relaxed),
            pile_radius_m: s.pile_radius_m.load(Ordering::Relaxed),
            overflow: s.overflow.load(Ordering::Relaxed),
            open: s.open.load(Ordering::Relaxed),
            flow_kg_s: s.flow_kg_s.load(Ordering::Relaxed),
            impact_speed_m_s: s.impact_speed_m_s.load(Ordering::Relaxed),
            cup_radius_m: s.cup_radius_m.load(Ordering::Relaxed),
            cup_height_m: s.cup_height_m.load(Ordering::Relaxed),
            stream_radius_m: s.stream_radius_m.load(Ordering::Relaxed),
            aim: s.aim.load(Ordering::Relaxed),
            gesture: GestureView {
                gesture: Gesture::ALL
                    .get(s.gesture.load(Ordering::Relaxed) as usize)
                    .copied()
                    .unwrap_or_default(),
                tilt_rad: s.tilt_rad.load(Ordering::Relaxed),
                spoon_angle_rad: s.spoon_angle_rad.load(Ordering::Relaxed),
                spoon_depth_m: s.spoon_depth_m.load(Ordering::Relaxed),
                shake_offset_m: s.shake_offset_m.load(Ordering::Relaxed),
                slope_rad: s.slope_rad.load(Ordering::Relaxed),
                avalanche: s.avalanche.load(Ordering::Relaxed),
                avalanches: s.avalanches.load(Ordering::Relaxed),
                shake_energy_j: s.shake_energy_j.load(Ordering::Relaxed),
            },
        }
    }

    /// Moves every sample waiting in the ring into `out` (oldest first); returns how many.
    pub fn drain_samples(&self, out: &mut Vec<f32>) -> usize {
        let mut consumer = self.consumer.lock().unwrap_or_else(|e| e.into_inner());
        let n = consumer.slots();
        let Ok(chunk) = consumer.read_chunk(n) else {
            return 0;
        };
        let (a, b) = chunk.as_slices();
        out.extend_from_slice(a);
        out.extend_from_slice(b);
        chunk.commit_all();
        n
    }

    /// The editor's Pour button: held (`true`) or released.
    pub fn set_pour_held(&self, held: bool) {
        self.shared.pour_held.store(held, Ordering::Relaxed);
    }

    pub fn pour_held(&self) -> bool {
        self.shared.pour_held.load(Ordering::Relaxed)
    }

    /// A second handle onto the same telemetry, for another editor instance (the plugin
    /// keeps one reader and hands clones to the editor it creates). The clone shares the
    /// sample ring, so only one of them should drain it at a time.
    pub fn handle(&self) -> TelemetryReader {
        TelemetryReader {
            shared: self.shared.clone(),
            consumer: self.consumer.clone(),
            last_cells: self.last_cells,
        }
    }
}

/// Collisions per second between two snapshots (0 when no audio ran in between).
pub fn collisions_per_second(previous: &Snapshot, now: &Snapshot) -> f32 {
    let samples = now.samples.saturating_sub(previous.samples);
    if samples == 0 || now.sample_rate <= 0.0 {
        return 0.0;
    }
    let collisions = now.collisions.saturating_sub(previous.collisions);
    collisions as f32 * now.sample_rate / samples as f32
}

#[inline]
fn finite(x: f32) -> f32 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meters_ring_and_counters_reach_the_reader() {
        let (mut w, mut r) = channel();
        w.set_sample_rate(48_000.0);
        let sine: Vec<f32> = (0..4800).map(|i| 0.5 * (i as f32 * 0.05).sin()).collect();
        let zero = vec![0.0f32; 4800];
        for _ in 0..10 {
            w.write_audio(
                [&sine, &sine],
                [&sine, &zero],
                [&zero, &zero],
                [&zero, &sine],
                [&sine, &sine],
            );
        }
        let s = r.snapshot();
        assert_eq!(s.samples, 48_000);
        assert!((s.peak[0] - 0.5).abs() < 1e-3, "{:?}", s.peak);
        // a 0.5 sine has RMS 0.354; 1 s is 3.3 time constants of the integrator
        assert!((s.rms[0] - 0.354).abs() < 0.02, "{:?}", s.rms);
        assert!(
            (s.rms[1] - 0.25).abs() < 0.02,
            "half the power in one channel: {:?}",
            s.rms
        );
        assert_eq!(s.rms[2], 0.0);
        // the surface stem has its own meter
        assert_eq!(Meter::ALL.len(), 5);
        assert_eq!(Meter::ALL[Meter::Surface as usize].label(), "Surface");
        assert!((s.peak[3] - 0.5).abs() < 1e-3, "{:?}", s.peak);
        assert!((s.rms[3] - 0.25).abs() < 0.02, "{:?}", s.rms);
        // and so has the friction stem
        assert_eq!(Meter::ALL[Meter::Friction as usize].label(), "Friction");
        assert!((s.peak[4] - 0.5).abs() < 1e-3, "{:?}", s.peak);
        assert!((s.rms[4] - 0.354).abs() < 0.02, "{:?}", s.rms);
        assert_eq!(s.peak[2], 0.0);
        // the peak is "since the last read"
        assert_eq!(r.snapshot().peak[0], 0.0);
        // the ring kept the first SCOPE_CAPACITY samples and counted the rest as dropped
        let mut out = Vec::new();
        assert_eq!(r.drain_samples(&mut out), SCOPE_CAPACITY);
        assert_eq!(s.dropped, 48_000 - SCOPE_CAPACITY as u64);
        assert!((out[100] - sine[100]).abs() < 1e-7);
        // NaN from a broken upstream never reaches the GUI
        w.write_audio(
            [&[f32::NAN], &[1.0]],
            [&[0.0], &[0.0]],
            [&[0.0], &[0.0]],
            [&[0.0], &[0.0]],
            [&[0.0], &[0.0]],
        );
        out.clear();
        r.drain_samples(&mut out);
        assert_eq!(out, [0.5]);
    }

    #[test]
    fn the_gesture_in_effect_and_its_state_reach_the_reader() {
        let settings = granary_engine::Settings {
            gesture: Gesture::Tilt,
            gesture_amount: 0.8,
            fill: 0.5,
            trigger_mode: granary_engine::TriggerMode::Continuous,
            ..Default::default()
        };
        let mut engine = Engine::new(settings, 48_000.0, 512);
        let (mut w, mut r) = channel();
        let mut bufs: [Vec<f32>; 10] = std::array::from_fn(|_| vec![0.0; 512]);
        for _ in 0..50 {
            let [a, b, c, d, e, f, g, h, i, j] = &mut bufs;
            engine.process(granary_engine::Outputs {
                main: [a, b],
                grains: [c, d],
                cup: [e, f],
                surface: Some([g, h]),
                friction: Some([i, j]),
            });
        }
        w.write_engine(&engine);
        let view = engine.gesture_view();
        assert!(view.tilt_rad > 0.1, "{view:?}");
        assert_eq!(r.snapshot().gesture, view);
        // a keyswitch (C#1) changes the gesture in effect, not the parameter
        engine.note_on(1.0, 25);
        w.write_engine(&engine);
        assert_eq!(r.snapshot().gesture.gesture, Gesture::Stir);
    }

    #[test]
    fn pour_button_gives_one_edge_per_press() {
        let (mut w, r) = channel();
        assert_eq!(w.pour_edge(), None);
        r.set_pour_held(true);
        assert_eq!(w.pour_edge(), Some(true));
        assert_eq!(w.pour_edge(), None);
        r.set_pour_held(false);
        assert_eq!(w.pour_edge(), Some(false));
        assert_eq!(w.pour_edge(), None);
    }

    #[test]
    fn collision_rate_from_counters() {
        let a = Snapshot {
            sample_rate: 48_000.0,
            samples: 48_000,
            collisions: 1000,
            ..Default::default()
        };
        let b = Snapshot {
            samples: 72_000,
            collisions: 6000,
            ..a
        };
        assert_eq!(collisions_per_second(&a, &b), 10_000.0);
        assert_eq!(collisions_per_second(&b, &b), 0.0);
    }
}

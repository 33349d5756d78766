//! `granary bench`: how fast the engine renders, measured.
//!
//! Every case drives the engine the way a host does: 48 kHz (unless the case says otherwise),
//! 64-sample blocks, the pour already running (a warm-up renders first, untimed). For each case
//! it measures, over `seconds` of audio, the thread's CPU time; then, over the next `seconds`,
//! the CPU and wall-clock time of every block (two passes, so the per-block clock reads do
//! not count in the real-time factor). That is repeated three times on the running pour and
//! every figure is the median of the three; peak resident memory covers all of it. Figures,
//! not assertions: speed is never assumed.

use granary_engine::control::preset;
use granary_engine::resonators::modal::MAX_MODES;
use granary_engine::{Engine, Outputs, Quality, Settings, TriggerMode};
use serde::Serialize;
use std::time::Instant;

/// Host block size of every case unless it says otherwise, samples.
pub const HOST_BLOCK: usize = 64;
/// Sample rate of every case unless it says otherwise, Hz.
pub const SAMPLE_RATE: f32 = 48_000.0;
/// Untimed warm-up before each case: the stream reaches the cup (fall time ~0.2 s) and the
/// caches are warm, s.
const WARM_UP_S: f64 = 0.5;
/// Timed repeats per case; each figure is the median of the repeats (another process on the
/// machine disturbs one repeat, not the figure).
const REPEATS: usize = 3;
/// Collision rates of the sweep, per second of audio.
pub const RATE_SWEEP: [(&str, f64); 4] = [("1k", 1e3), ("10k", 1e4), ("100k", 1e5), ("1M", 1e6)];
/// Mode counts of the sweep.
pub const MODE_SWEEP: [usize; 4] = [5, 10, 20, MAX_MODES];

/// One benchmark case.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub settings: Settings,
    pub sample_rate: f32,
    pub block: usize,
    /// Cap on the cup's modes (`None`: as many as the cup has).
    pub mode_limit: Option<usize>,
    /// For the rate sweep: the collision rate the pour rate is calibrated to, per s.
    pub target_collisions_per_s: Option<f64>,
}

/// What one case measured.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    pub case: String,
    pub sample_rate: f32,
    pub block_size: usize,
    /// Seconds of audio timed.
    pub audio_s: f64,
    /// Collisions generated (and heard: culled ones only where masked) per second of audio.
    pub collisions_per_s: f64,
    /// Collisions rendered individually per second of audio (the rest are rendered as
    /// energy-preserving groups or culled where inaudible).
    pub rendered_per_s: f64,
    /// The cup's modes ringing at the end of the case.
    pub modes: usize,
    /// Pour rate of the case, g/s.
    pub pour_rate_g_s: f32,
    /// CPU time of the rendering thread per second of audio, s.
    pub cpu_s_per_audio_s: f64,
    /// Audio seconds per CPU second.
    pub realtime_factor: f64,
    /// The slowest block's CPU time over the block's duration (thread CPU time: what the
    /// engine costs, without the time the OS gave other processes).
    pub worst_block_fraction: f64,
    /// The 99.9th percentile of the blocks' CPU time over the block's duration.
    pub p999_block_fraction: f64,
    /// The slowest block's wall-clock time over the block's duration (includes preemption by
    /// other processes: meaningful on an otherwise idle machine only).
    pub worst_block_wall_fraction: f64,
    /// Peak resident set size of the process while the case ran, bytes (Linux only).
    pub peak_rss_bytes: Option<u64>,
}

/// The default preset held, on the hand-written model: the sweeps (collision rate, reference
/// quality, sample rates, modes, block sizes) measure how the engine scales, as they have since
/// before the databank, and the model's cost a window is its fixed cost alone. The default
/// preset as it ships (on the bank) is `preset:sugar_ceramic_mug`.
fn base_settings() -> Settings {
    let mut s = preset::find(preset::DEFAULT_PRESET)
        .map(|p| p.values.to_settings())
        .unwrap_or_default();
    s.trigger_mode = TriggerMode::Continuous;
    s.statistics = granary_engine::Statistics::Model;
    s
}

/// Every case, in the order `granary bench` runs them: factory presets, the collision-rate
/// sweep, reference quality, the default preset on the hand-written model, the sample
/// rates, the mode-count sweep and two host block sizes.
pub fn cases() -> Vec<Case> {
    let case = |name: String, settings: Settings| Case {
        name,
        settings,
        sample_rate: SAMPLE_RATE,
        block: HOST_BLOCK,
        mode_limit: None,
        target_collisions_per_s: None,
    };
    let mut out = Vec::new();
    for (stem, p) in preset::factory() {
        let mut s = p.values.to_settings();
        // MIDI presets pour while a note is held: the bench holds it (pour_rate as played).
        s.trigger_mode = TriggerMode::Continuous;
        out.push(case(format!("preset:{stem}"), s));
    }
    for (label, rate) in RATE_SWEEP {
        let mut s = base_settings();
        // a steady state: the fill does not change while the case runs
        s.auto_fill = false;
        s.fill = 0.3;
        out.push(Case {
            target_collisions_per_s: Some(rate),
            ..case(format!("rate:{label}"), s)
        });
    }
    // reference quality (every collision rendered one by one): the default preset, and the
    // dense end of the rate sweep (the target: a million a second at 5x real time or better)
    let mut reference = base_settings();
    reference.quality = Quality::Reference;
    out.push(case(format!("reference:preset:{}", preset::DEFAULT_PRESET), reference));
    for (label, rate) in &RATE_SWEEP[2..] {
        let mut s = reference;
        s.auto_fill = false;
        s.fill = 0.3;
        out.push(Case {
            target_collisions_per_s: Some(*rate),
            ..case(format!("reference:rate:{label}"), s)
        });
    }
    // the default preset with the cells' statistics from the hand-written model (it ships
    // on the databank: `preset:sugar_ceramic_mug`), for the bank's cost against it
    out.push(case(
        format!("model:preset:{}", preset::DEFAULT_PRESET),
        base_settings(),
    ));
    for fs in [44_100.0, 96_000.0, 192_000.0] {
        out.push(Case {
            sample_rate: fs,
            ..case(format!("sr:{}", fs as u32), base_settings())
        });
    }
    // the mode sweep on the cup with the most modes (a steel cup rings with all of them)
    let mut ringing = base_settings();
    ringing.cup_material = granary_engine::base::materials::CupMaterial::Steel;
    for n in MODE_SWEEP {
        out.push(Case {
            mode_limit: Some(n),
            ..case(format!("modes:{n}"), ringing)
        });
    }
    for block in [16, 1024] {
        out.push(Case {
            block,
            ..case(format!("block:{block}"), base_settings())
        });
    }
    out
}

/// Thread CPU time, s (wall-clock time where the platform has no thread clock).
fn cpu_time_s() -> f64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes one timespec through a valid pointer.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
    }
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// Resets the kernel's peak-RSS counter of this process (Linux: `clear_refs` 5).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident set size since the last reset, bytes (Linux: `VmHWM`).
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// An engine with its output buffers, driven in host blocks.
struct Rig {
    engine: Engine,
    bufs: [Vec<f32>; 6],
    block: usize,
}

impl Rig {
    fn new(case: &Case, settings: Settings) -> Rig {
        let mut engine = Engine::new(settings, case.sample_rate, case.block);
        if let Some(n) = case.mode_limit {
            engine.set_mode_limit(n);
        }
        Rig {
            engine,
            bufs: std::array::from_fn(|_| vec![0.0; case.block]),
            block: case.block,
        }
    }

    /// Renders one host block.
    fn block(&mut self) {
        let [a, b, c, d, e, f] = &mut self.bufs;
        self.engine.process(Outputs {
            main: [a, b],
            grains: [c, d],
            cup: [e, f],
            surface: None,
            friction: None,
        });
    }

    fn render(&mut self, seconds: f64) {
        let n = (seconds * self.engine.sample_rate() as f64 / self.block as f64).ceil() as usize;
        for _ in 0..n {
            self.block();
        }
    }
}

/// Collisions per second of audio the settings produce, measured over `seconds` after the
/// warm-up.
fn measure_rate(case: &Case, settings: Settings, seconds: f64) -> f64 {
    let mut rig = Rig::new(case, settings);
    rig.render(WARM_UP_S);
    let before = rig.engine.stats().collisions;
    rig.render(seconds);
    (rig.engine.stats().collisions - before) as f64 / seconds
}

/// The case's settings, with the pour rate calibrated to its target collision rate (the
/// collision rate is close to proportional to the mass flow; two secant-free corrections).
fn calibrated(case: &Case) -> Settings {
    let mut s = case.settings;
    let Some(target) = case.target_collisions_per_s else {
        return s;
    };
    let (lo, hi) = granary_engine::limits::POUR_RATE_G_S;
    for _ in 0..3 {
        let rate = measure_rate(case, s, 0.5);
        if rate <= 0.0 {
            s.pour_rate_g_s = (s.pour_rate_g_s * 10.0).clamp(1e-3, hi);
            continue;
        }
        let ratio = target / rate;
        if (ratio - 1.0).abs() < 0.05 {
            break;
        }
        s.pour_rate_g_s = (s.pour_rate_g_s * ratio as f32).clamp(lo.max(1e-4), hi);
    }
    s
}

/// Runs one case for `seconds` of audio.
pub fn run(case: &Case, seconds: f64) -> Figures {
    let settings = calibrated(case);
    let mut rig = Rig::new(case, settings);
    rig.render(WARM_UP_S);
    let fs = rig.engine.sample_rate() as f64;
    let blocks = ((seconds * fs / case.block as f64).ceil() as usize).max(1);
    let audio_s = (blocks * case.block) as f64 / fs;
    let block_s = case.block as f64 / fs;
    let before = rig.engine.stats();
    reset_peak_rss();
    let mut cpu = [0.0f64; REPEATS];
    let mut worst = [0.0f64; REPEATS];
    let mut p999 = [0.0f64; REPEATS];
    let mut wall = [0.0f64; REPEATS];
    let mut times = vec![0.0f64; blocks];
    for r in 0..REPEATS {
        // pass 1: the CPU cost, with nothing but the engine inside the timed loop
        let cpu0 = cpu_time_s();
        for _ in 0..blocks {
            rig.block();
        }
        cpu[r] = (cpu_time_s() - cpu0).max(1e-9);
        // pass 2 (the audio that follows): every block's own time, for the worst block
        let mut last = cpu_time_s();
        for t in times.iter_mut() {
            let t0 = Instant::now();
            rig.block();
            wall[r] = wall[r].max(t0.elapsed().as_secs_f64());
            let now = cpu_time_s();
            *t = now - last;
            last = now;
        }
        times.sort_by(f64::total_cmp);
        worst[r] = times[times.len() - 1];
        p999[r] = times[((times.len() as f64 * 0.999) as usize).min(times.len() - 1)];
    }
    let peak = peak_rss_bytes();
    let after = rig.engine.stats();
    let rendered_s = 2.0 * REPEATS as f64 * audio_s;
    let cpu = median(cpu);
    Figures {
        case: case.name.clone(),
        sample_rate: case.sample_rate,
        block_size: case.block,
        audio_s,
        collisions_per_s: (after.collisions - before.collisions) as f64 / rendered_s,
        rendered_per_s: (after.rendered - before.rendered) as f64 / rendered_s,
        modes: rig.engine.modes().len(),
        pour_rate_g_s: settings.pour_rate_g_s,
        cpu_s_per_audio_s: cpu / audio_s,
        realtime_factor: audio_s / cpu,
        worst_block_fraction: median(worst) / block_s,
        p999_block_fraction: median(p999) / block_s,
        worst_block_wall_fraction: median(wall) / block_s,
        peak_rss_bytes: peak,
    }
}

/// The middle of the repeats' figures (robust to one disturbed repeat).
fn median(mut x: [f64; REPEATS]) -> f64 {
    x.sort_by(f64::total_cmp);
    x[REPEATS / 2]
}

/// Least-squares slope of log(y) against log(x) over the positive points.
pub fn loglog_slope(points: &[(f64, f64)]) -> Option<f64> {
    let p: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .map(|(x, y)| (x.ln(), y.ln()))
        .collect();
    if p.len() < 2 {
        return None;
    }
    let n = p.len() as f64;
    let (mx, my) = (
        p.iter().map(|q| q.0).sum::<f64>() / n,
        p.iter().map(|q| q.1).sum::<f64>() / n,
    );
    let sxx: f64 = p.iter().map(|q| (q.0 - mx).powi(2)).sum();
    let sxy: f64 = p.iter().map(|q| (q.0 - mx) * (q.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// How the cost scales, fitted over the figures present: (what, log-log slope of
/// CPU time against it). A slope at most 1 is cost growing at most linearly.
pub fn slopes(figures: &[Figures]) -> Vec<(&'static str, f64)> {
    let pick = |prefix: &str, x: fn(&Figures) -> f64| -> Vec<(f64, f64)> {
        figures
            .iter()
            .filter(|f| f.case.starts_with(prefix))
            .map(|f| (x(f), f.cpu_s_per_audio_s))
            .collect()
    };
    let mut out = Vec::new();
    if let Some(s) = loglog_slope(&pick("rate:", |f| f.collisions_per_s)) {
        out.push(("collision rate", s));
    }
    if let Some(s) = loglog_slope(&pick("modes:", |f| f.modes as f64)) {
        out.push(("mode count", s));
    }
    out
}

/// The figures as an aligned text table.
pub fn table(figures: &[Figures]) -> String {
    let mut s = format!(
        "{:<36} {:>7} {:>6} {:>12} {:>12} {:>5} {:>10} {:>9} {:>9} {:>10} {:>8}\n",
        "case",
        "fs Hz",
        "block",
        "coll/s",
        "rendered/s",
        "modes",
        "x realtime",
        "worst blk",
        "p99.9 blk",
        "wall worst",
        "peak MB"
    );
    for f in figures {
        s += &format!(
            "{:<36} {:>7} {:>6} {:>12.0} {:>12.0} {:>5} {:>10.1} {:>8.1}% {:>8.1}% {:>9.1}% {:>8}\n",
            f.case,
            f.sample_rate as u32,
            f.block_size,
            f.collisions_per_s,
            f.rendered_per_s,
            f.modes,
            f.realtime_factor,
            100.0 * f.worst_block_fraction,
            100.0 * f.p999_block_fraction,
            100.0 * f.worst_block_wall_fraction,
            f.peak_rss_bytes
                .map_or("-".into(), |b| format!("{:.1}", b as f64 / 1e6)),
        );
    }
    s
}

/// One line naming the machine the figures come from (CPU model, cores).
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{cpu}, {cores} cores available, one thread measured")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loglog_slope_of_a_power_law() {
        let p: Vec<(f64, f64)> = (1..6).map(|i| (i as f64, 3.0 * (i as f64).powf(0.8))).collect();
        assert!((loglog_slope(&p).unwrap() - 0.8).abs() < 1e-9);
        assert_eq!(loglog_slope(&p[..1]), None);
    }

    #[test]
    fn case_names_are_unique_and_cover_the_issue() {
        let c = cases();
        let mut names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), c.len());
        assert_eq!(
            c.iter().filter(|c| c.name.starts_with("preset:")).count(),
            preset::factory().len()
        );
        for n in [
            "rate:1k",
            "rate:1M",
            "sr:44100",
            "sr:96000",
            "sr:192000",
            "modes:5",
            "reference:rate:1M",
            "model:preset:sugar_ceramic_mug",
        ] {
            assert!(names.contains(&n), "{n}");
        }
    }
}

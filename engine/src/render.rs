//! Offline rendering, as `granary render` does: the engine driven by a pour-rate curve or by
//! MIDI notes, through the same event loop as the plugin (`events`).
//!
//! The pour curve is sampled at the engine's window boundaries (where control changes take
//! effect) and notes land on their own samples, so the result is identical for every block
//! size.

use crate::base::window::WINDOW;
use crate::control::choices::Gesture;
use crate::control::events::{Event, Timed};
use crate::control::params::{Param, ParamValues};
use crate::feed;
use crate::statistics::logged::Contact;
use crate::{Engine, Outputs, Settings, Stats, TriggerMode, GENERATOR_LEAD};

/// A piecewise-linear pour-rate curve: (time s, rate g/s) points, times non-decreasing.
/// Before the first point the first rate holds; after the last, the last rate.
#[derive(Debug, Clone, PartialEq)]
pub struct PourCurve {
    points: Vec<(f64, f32)>,
}

impl PourCurve {
    /// Pour at `rate` until `stop_s`, then stop.
    pub fn until(rate: f32, stop_s: f64) -> Self {
        PourCurve {
            points: vec![(0.0, rate), (stop_s.max(0.0), rate), (stop_s.max(0.0), 0.0)],
        }
    }

    /// Parses `T:RATE,T:RATE,...` (seconds, g/s).
    pub fn parse(text: &str) -> Result<Self, String> {
        Self::parse_for(text, Gesture::Pour)
    }

    /// Parses a curve for `gesture`: a pour's rate in g/s, or a stir's, shake's or tilt's
    /// amount in percent (`gesture_amount`), over seconds.
    pub fn parse_for(text: &str, gesture: Gesture) -> Result<Self, String> {
        let (param, what, example) = match gesture {
            Gesture::Pour => (Param::PourRate, "rate", "0.5:20"),
            _ => (Param::GestureAmount, "amount", "0.5:60"),
        };
        let unit = param.spec().unit;
        let mut points = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (t, r) = part
                .split_once(':')
                .ok_or_else(|| format!("`{part}`: expected TIME:{}, e.g. {example}", what.to_uppercase()))?;
            let t: f64 = t
                .trim()
                .parse()
                .map_err(|_| format!("`{part}`: time `{t}` is not a number"))?;
            let r: f32 = r
                .trim()
                .parse()
                .map_err(|_| format!("`{part}`: {what} `{r}` is not a number"))?;
            if !t.is_finite() || t < 0.0 {
                return Err(format!("`{part}`: time must be a finite number of seconds >= 0"));
            }
            let (lo, hi) = param.plain_range();
            if !r.is_finite() || !(lo..=hi).contains(&r) {
                return Err(format!("`{part}`: {what} must be within {lo}..={hi} {unit}"));
            }
            if let Some(&(prev, _)) = points.last() {
                if t < prev {
                    return Err(format!("`{part}`: times must not decrease"));
                }
            }
            points.push((t, r));
        }
        if points.is_empty() {
            return Err("the curve has no points".into());
        }
        Ok(PourCurve { points })
    }

    /// When the curve first rises above zero and when it last comes down to zero after that,
    /// seconds: `(start, stop)`, `stop` `None` when it still pours at its last point (and so
    /// to the render's end). `None` when the curve is zero throughout.
    pub fn span(&self) -> Option<(f64, Option<f64>)> {
        let p = &self.points;
        let start = if p[0].1 > 0.0 {
            0.0
        } else {
            // the rate rises from zero along the first segment that ends above zero
            p.windows(2).find(|w| w[1].1 > 0.0).map(|w| w[0].0)?
        };
        let stop = if p[p.len() - 1].1 > 0.0 {
            None
        } else {
            // it reaches zero at the end of the last segment that starts above zero
            p.windows(2).rev().find(|w| w[0].1 > 0.0).map(|w| w[1].0)
        };
        Some((start, stop))
    }

    pub fn rate_at(&self, t: f64) -> f32 {
        let p = &self.points;
        if t < p[0].0 {
            return p[0].1;
        }
        // the last segment containing t (so a step at equal times takes the later value)
        for w in p.windows(2).rev() {
            let ((t0, r0), (t1, r1)) = (w[0], w[1]);
            if t >= t0 && t <= t1 {
                if t1 - t0 <= 0.0 {
                    return r1;
                }
                return r0 + (r1 - r0) * ((t - t0) / (t1 - t0)) as f32;
            }
        }
        p[p.len() - 1].1
    }
}

#[derive(Debug, Clone)]
pub struct RenderOptions {
    pub seconds: f64,
    pub sample_rate: f32,
    pub block_size: usize,
    /// `None`: pour at the preset's rate until one second before the end.
    pub pour: Option<PourCurve>,
}

impl RenderOptions {
    /// Frames in the render: `seconds` at the sample rate, rounded.
    pub fn frames(&self) -> usize {
        (self.seconds.max(0.0) * self.sample_rate as f64).round() as usize
    }
}

/// Rendered audio, aligned: the main output's limiter latency is removed.
pub struct Rendered {
    pub sample_rate: f32,
    pub main: [Vec<f32>; 2],
    pub grains: [Vec<f32>; 2],
    pub cup: [Vec<f32>; 2],
    pub surface: [Vec<f32>; 2],
    pub friction: [Vec<f32>; 2],
    pub stats: Stats,
}

/// One held note of a MIDI pour, as a DAW would send it: note-on at `start_s`, note-off at
/// `end_s` (seconds from the start of the render), MIDI velocity 1..=127, MIDI key 0..=127
/// (keys in `crate::AIM_KEYS` aim the stream).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoteEvent {
    pub start_s: f64,
    pub end_s: f64,
    pub velocity: u8,
    pub key: u8,
}

impl NoteEvent {
    /// Velocity when `:VEL` is left out.
    pub const DEFAULT_VELOCITY: u8 = 100;
    /// Key when `:KEY` is left out: middle C (C4), which pours at the `aim` parameter.
    pub const DEFAULT_KEY: u8 = 60;

    /// Parses `START:END[:VEL[:KEY]]` (seconds, seconds, MIDI velocity 1..=127, MIDI key
    /// 0..=127; keys in `crate::AIM_KEYS` aim the stream).
    pub fn parse(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.split(':').map(str::trim).collect();
        if !(2..=4).contains(&parts.len()) {
            return Err(format!(
                "`{text}`: expected START:END[:VEL[:KEY]], e.g. 0.5:3:100 or 0.5:3:100:84"
            ));
        }
        let time = |what: &str, t: &str| -> Result<f64, String> {
            match t.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
                _ => Err(format!(
                    "`{text}`: {what} `{t}` must be a finite number of seconds >= 0"
                )),
            }
        };
        let start_s = time("start", parts[0])?;
        let end_s = time("end", parts[1])?;
        if end_s <= start_s {
            return Err(format!("`{text}`: the note must end after it starts"));
        }
        let velocity = match parts.get(2) {
            None => Self::DEFAULT_VELOCITY,
            Some(v) => match v.parse::<u8>() {
                Ok(v) if (1..=127).contains(&v) => v,
                _ => {
                    return Err(format!(
                        "`{text}`: velocity `{v}` must be a whole number within 1..=127"
                    ))
                }
            },
        };
        let key = match parts.get(3) {
            None => Self::DEFAULT_KEY,
            Some(k) => match k.parse::<u8>() {
                Ok(k) if k <= 127 => k,
                _ => return Err(format!("`{text}`: key `{k}` must be a MIDI note number within 0..=127")),
            },
        };
        Ok(NoteEvent {
            start_s,
            end_s,
            velocity,
            key,
        })
    }

    /// Velocity as nice-plug hands it to the plugin (and the plugin to the engine).
    pub fn velocity_01(&self) -> f32 {
        self.velocity as f32 / 127.0
    }
}

/// Renders a pour of `values` (trigger mode is forced to Continuous: the curve pours).
pub fn render(values: &ParamValues, opts: &RenderOptions) -> Rendered {
    Renderer::pour(values, opts).collect()
}

/// Renders a MIDI pour: `notes` drive the engine exactly as the plugin does when a host
/// plays them (trigger mode MIDI; each note-on and note-off lands on its own sample,
/// `round(t * sample_rate)`; notes may overlap). The engine only reads events at its window
/// boundaries, so the result does not depend on the block size, and equals a DAW bounce of
/// the same notes, settings and seed once the host's output is aligned by the plugin's
/// latency (`tests/host_vst3.py` checks this in a real VST3 host).
pub fn render_notes(values: &ParamValues, opts: &RenderOptions, notes: &[NoteEvent]) -> Rendered {
    Renderer::notes(values, opts, notes).collect()
}

/// One block of a streaming render, aligned as [`Rendered`] is: sample `i` of each output
/// is the same instant (the main output's limiter latency removed). All eight slices have
/// the same length, at most the render's block size.
pub struct Block<'a> {
    pub main: [&'a [f32]; 2],
    pub grains: [&'a [f32]; 2],
    pub cup: [&'a [f32]; 2],
    pub surface: [&'a [f32]; 2],
    pub friction: [&'a [f32]; 2],
}

impl Block<'_> {
    pub fn len(&self) -> usize {
        self.main[0].len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A render that hands its output over block by block ([`Renderer::next_block`]), so a
/// render of any length needs memory for one block only (plus the limiter's latency). The
/// samples are those of [`render`] and [`render_notes`], which collect them.
pub struct Renderer {
    engine: Engine,
    events: std::iter::Peekable<Box<dyn Iterator<Item = Timed> + Send>>,
    block_size: usize,
    latency: usize,
    /// Engine samples before the render's first (`contacts`): rendered, not handed out.
    preroll: usize,
    /// Aligned frames to hand out in all.
    frames: usize,
    /// Engine samples rendered so far (the main output runs `latency` ahead of the stems).
    rendered: usize,
    /// Aligned frames handed out so far.
    emitted: usize,
    /// One engine block: main, grains, cup, surface and friction, left and right.
    scratch: [Vec<f32>; 10],
    /// Samples rendered but not yet handed out: the main output (from its `latency`-th
    /// sample on) and the stems (up to `frames`).
    queue: [std::collections::VecDeque<f32>; 10],
    /// The block handed out last.
    out: [Vec<f32>; 10],
}

impl Renderer {
    /// A pour of `values` driven by `opts.pour` (trigger mode forced to Continuous; without
    /// a curve the preset's rate pours until one second before the end), as [`render`].
    pub fn pour(values: &ParamValues, opts: &RenderOptions) -> Renderer {
        let mut settings: Settings = values.to_settings();
        settings.trigger_mode = TriggerMode::Continuous;
        // a pour's curve is its rate, g/s; a stir's, shake's or tilt's its amount, %
        let gesture = settings.gesture;
        let apply = move |settings: &mut Settings, value: f32| match gesture {
            Gesture::Pour => settings.pour_rate_g_s = value,
            _ => settings.gesture_amount = value * Param::GestureAmount.to_si(),
        };
        let held = match gesture {
            Gesture::Pour => settings.pour_rate_g_s,
            _ => settings.gesture_amount / Param::GestureAmount.to_si(),
        };
        let curve = opts
            .pour
            .clone()
            .unwrap_or_else(|| PourCurve::until(held, opts.seconds - 1.0));
        apply(&mut settings, curve.rate_at(0.0));
        let fs = opts.sample_rate;
        let engine = Engine::for_render(settings, fs, opts.block_size.max(1));
        let window = engine.window_len();
        // the curve's value at every window boundary, from the first
        let pour = (0..).step_by(window).map(move |t| {
            apply(&mut settings, curve.rate_at(t as f64 / fs as f64));
            Timed::new(t, Event::Settings(settings))
        });
        Renderer::new(engine, opts, Box::new(pour))
    }

    /// A MIDI pour of `notes`, as [`render_notes`].
    pub fn notes(values: &ParamValues, opts: &RenderOptions, notes: &[NoteEvent]) -> Renderer {
        let mut settings: Settings = values.to_settings();
        settings.trigger_mode = TriggerMode::Midi;
        let fs = opts.sample_rate;
        let engine = Engine::for_render(settings, fs, opts.block_size.max(1));
        let at = |t: f64| (t * fs as f64).round() as usize;
        // note-offs before note-ons at the same sample
        let mut events: Vec<Timed> = notes
            .iter()
            .flat_map(|n| {
                [
                    Timed::new(
                        at(n.start_s),
                        Event::NoteOn {
                            velocity: n.velocity_01(),
                            key: n.key,
                        },
                    ),
                    Timed::new(at(n.end_s), Event::KeyOff(n.key)),
                ]
            })
            .collect();
        events.sort_by_key(|e| (e.at, matches!(e.event, Event::NoteOn { .. })));
        Renderer::new(engine, opts, Box::new(events.into_iter()))
    }

    /// Logged contacts (`logged`) rendered through the collision physics, each one by one
    /// at its own time, with the settings of `values` (their materials, cup, surface and
    /// listener) and no pour (trigger mode MIDI, no notes). The engine places a collision at
    /// least `GENERATOR_LEAD` samples after the window boundary it is handed over at, so it
    /// runs `preroll` whole windows (at least that lead) ahead of the render's first sample:
    /// a contact at 0 s is heard at the first sample. The engine makes room for the busiest
    /// window's contacts before rendering (`Engine::reserve_injections`). An error names the
    /// contact (its index in `contacts`) that is not valid.
    pub fn contacts(values: &ParamValues, opts: &RenderOptions, contacts: &[Contact]) -> Result<Renderer, String> {
        let mut settings: Settings = values.to_settings();
        settings.trigger_mode = TriggerMode::Midi;
        let fs = opts.sample_rate;
        let mut engine = Engine::for_render(settings, fs, opts.block_size.max(1));
        let cup = crate::derived::cups::Cup::for_settings(&settings);
        let preroll = GENERATOR_LEAD.div_ceil(WINDOW) * WINDOW;
        let mut order: Vec<usize> = (0..contacts.len()).collect();
        order.sort_by(|&a, &b| contacts[a].time_s.total_cmp(&contacts[b].time_s));
        let mut events = Vec::with_capacity(contacts.len());
        let (mut window, mut in_window, mut busiest) = (usize::MAX, 0, 0);
        for i in order {
            let c = &contacts[i];
            c.check().map_err(|e| format!("contact {}: {e}", i + 1))?;
            // engine sample of the contact, then the window it is handed over at
            let at = c.time_s * fs as f64 + preroll as f64 - GENERATOR_LEAD as f64;
            let mut boundary = (at / WINDOW as f64).floor() as usize * WINDOW;
            let mut time = (at - boundary as f64) as f32;
            if time >= WINDOW as f32 {
                boundary += WINDOW;
                time = 0.0;
            }
            if boundary == window {
                in_window += 1;
            } else {
                (window, in_window) = (boundary, 1);
            }
            busiest = busiest.max(in_window);
            events.push(Timed::new(boundary, Event::Inject(c.collision(time.max(0.0), &cup))));
        }
        engine.reserve_injections(busiest);
        let mut r = Renderer::new(engine, opts, Box::new(events.into_iter()));
        r.preroll = preroll;
        Ok(r)
    }

    fn new(engine: Engine, opts: &RenderOptions, events: Box<dyn Iterator<Item = Timed> + Send>) -> Renderer {
        let block_size = opts.block_size.max(1);
        let latency = engine.latency_samples();
        Renderer {
            engine,
            events: events.peekable(),
            block_size,
            latency,
            preroll: 0,
            frames: opts.frames(),
            rendered: 0,
            emitted: 0,
            scratch: std::array::from_fn(|_| vec![0.0; block_size]),
            queue: std::array::from_fn(|_| std::collections::VecDeque::with_capacity(block_size + latency)),
            out: std::array::from_fn(|_| Vec::with_capacity(block_size + latency)),
        }
    }

    /// Renders as a host that says it renders offline (`Engine::set_offline`): `quality` =
    /// auto renders at reference quality then. `granary render` does; [`render`] and
    /// [`render_notes`] do not, as the plugin does not in a live session. The default
    /// quality (realtime) renders the same either way.
    pub fn offline(mut self, offline: bool) -> Renderer {
        self.engine.set_offline(offline);
        self
    }

    /// Renders with the air in the cup resonating or not (`Engine::set_air`; on by default):
    /// the air's checks compare the two.
    pub fn air(mut self, on: bool) -> Renderer {
        self.engine.set_air(on);
        self
    }

    /// Renders with the cup jolting as one body or not (`Engine::set_body`; on by default):
    /// the jolt's checks compare the two.
    pub fn body(mut self, on: bool) -> Renderer {
        self.engine.set_body(on);
        self
    }

    /// The engine rendering (its pour state, statistics and settings so far).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Aligned frames in the whole render.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Renders on, discarding the blocks, until at least `frame` aligned frames are handed
    /// out or the render ends (the engine's state at a moment: `engine`).
    pub fn run_to(&mut self, frame: usize) {
        while self.position() < frame {
            if self.next_block().is_none() {
                break;
            }
        }
    }

    /// Aligned frames handed out so far.
    pub fn position(&self) -> usize {
        self.emitted
    }

    /// Collision counts so far.
    pub fn stats(&self) -> Stats {
        self.engine.stats()
    }

    /// The next block, or `None` once all `frames` are out. The engine renders in host
    /// blocks of the block size, each with the events that fall in it, as
    /// `feed::render_blocks` does.
    pub fn next_block(&mut self) -> Option<Block<'_>> {
        let total = self.preroll + self.frames + self.latency;
        // until every output has a sample to hand out (the stems run `latency` ahead of
        // the main output; at the end both reach `frames` together)
        while self.queue.iter().any(|q| q.is_empty()) && self.rendered < total {
            let (start, end) = (self.rendered, (self.rendered + self.block_size).min(total));
            let n = end - start;
            let events = &mut self.events;
            let in_block = std::iter::from_fn(|| events.next_if(|e| e.at < end))
                .map(|e| Timed::new(e.at.saturating_sub(start), e.event));
            let [ml, mr, gl, gr, cl, cr, sl, sr, fl, fr] = &mut self.scratch;
            feed::process_outputs(
                &mut self.engine,
                Outputs {
                    main: [&mut ml[..n], &mut mr[..n]],
                    grains: [&mut gl[..n], &mut gr[..n]],
                    cup: [&mut cl[..n], &mut cr[..n]],
                    surface: Some([&mut sl[..n], &mut sr[..n]]),
                    friction: Some([&mut fl[..n], &mut fr[..n]]),
                },
                in_block,
            );
            // main: drop its first `preroll + latency` samples; stems: keep `frames` from
            // `preroll` on
            let main_from = (self.preroll + self.latency).saturating_sub(start).min(n);
            let stems_from = self.preroll.saturating_sub(start).min(n);
            let stems_to = (self.preroll + self.frames).saturating_sub(start).min(n);
            for (c, (q, s)) in self.queue.iter_mut().zip(&self.scratch).enumerate() {
                let range = if c < 2 {
                    main_from..n
                } else {
                    stems_from..stems_to.max(stems_from)
                };
                q.extend(&s[range]);
            }
            self.rendered = end;
        }
        let n = self.queue.iter().map(|q| q.len()).min().unwrap_or(0);
        if n == 0 {
            return None;
        }
        for (q, o) in self.queue.iter_mut().zip(&mut self.out) {
            o.clear();
            o.extend(q.drain(..n));
        }
        self.emitted += n;
        let [ml, mr, gl, gr, cl, cr, sl, sr, fl, fr] = &self.out;
        Some(Block {
            main: [ml, mr],
            grains: [gl, gr],
            cup: [cl, cr],
            surface: [sl, sr],
            friction: [fl, fr],
        })
    }

    /// Renders what is left into whole buffers.
    pub fn collect(mut self) -> Rendered {
        let frames = self.frames - self.emitted;
        let mut out: [Vec<f32>; 10] = std::array::from_fn(|_| Vec::with_capacity(frames));
        let fs = self.engine.sample_rate();
        while let Some(b) = self.next_block() {
            let all = b
                .main
                .iter()
                .chain(&b.grains)
                .chain(&b.cup)
                .chain(&b.surface)
                .chain(&b.friction);
            for (o, s) in out.iter_mut().zip(all) {
                o.extend_from_slice(s);
            }
        }
        let [ml, mr, gl, gr, cl, cr, sl, sr, fl, fr] = out;
        Rendered {
            sample_rate: fs,
            main: [ml, mr],
            grains: [gl, gr],
            cup: [cl, cr],
            surface: [sl, sr],
            friction: [fl, fr],
            stats: self.engine.stats(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curve_parsing_and_interpolation() {
        let c = PourCurve::parse("0:0, 1:20, 2:20, 2:0").unwrap();
        assert_eq!(c.rate_at(0.5), 10.0);
        assert_eq!(c.rate_at(1.5), 20.0);
        assert_eq!(c.rate_at(2.0), 0.0);
        assert_eq!(c.rate_at(9.0), 0.0);
        assert!(PourCurve::parse("1:10,0:5").is_err());
        assert!(PourCurve::parse("0:500").is_err());
        // where it starts and stops pouring (a render's markers)
        assert_eq!(c.span(), Some((0.0, Some(2.0))));
        assert_eq!(
            PourCurve::parse("0:0,0.5:0,1:20,3:0,4:0").unwrap().span(),
            Some((0.5, Some(3.0)))
        );
        assert_eq!(PourCurve::parse("0:20").unwrap().span(), Some((0.0, None)));
        assert_eq!(PourCurve::parse("0:0,5:0").unwrap().span(), None);
        assert_eq!(PourCurve::until(20.0, 5.0).span(), Some((0.0, Some(5.0))));
        assert!(PourCurve::parse("x").is_err());
        assert!(PourCurve::parse("").is_err());
        let u = PourCurve::until(20.0, 3.0);
        assert_eq!(u.rate_at(2.99), 20.0);
        assert_eq!(u.rate_at(3.5), 0.0);
    }

    #[test]
    fn note_parsing() {
        assert_eq!(
            NoteEvent::parse("0.5:3").unwrap(),
            NoteEvent {
                start_s: 0.5,
                end_s: 3.0,
                velocity: 100,
                key: 60
            }
        );
        assert_eq!(NoteEvent::parse(" 1 : 2 : 127 ").unwrap().velocity, 127);
        assert_eq!(NoteEvent::parse("1:2:100:84").unwrap().key, 84);
        for bad in [
            "",
            "1",
            "2:1",
            "1:1",
            "-1:2",
            "0:nan",
            "0:inf",
            "0:1:0",
            "0:1:128",
            "0:1:6.5",
            "0:1:2:128",
            "0:1:2:x",
            "0:1:2:3:4",
            "a:b",
        ] {
            let err = NoteEvent::parse(bad).unwrap_err();
            assert!(err.contains(&format!("`{bad}`")), "{err}");
        }
    }

    #[test]
    fn notes_render_independently_of_the_block_size_and_stop() {
        let values = ParamValues::default();
        let notes = [
            NoteEvent::parse("0.05:0.4:110").unwrap(),
            // overlapping: the stream runs until the last note ends
            NoteEvent::parse("0.3:0.6:60").unwrap(),
        ];
        let opts = |block_size| RenderOptions {
            seconds: 2.1,
            sample_rate: 48_000.0,
            block_size,
            pour: None,
        };
        let a = render_notes(&values, &opts(512), &notes);
        let b = render_notes(&values, &opts(37), &notes);
        assert_eq!(a.main, b.main);
        assert_eq!(a.grains, b.grains);
        assert!(a.stats.collisions > 0);
        let rms = |x: &[f32]| (x.iter().map(|v| (v * v) as f64).sum::<f64>() / x.len() as f64).sqrt();
        let pour = rms(&a.main[0][4_800..28_800]);
        // the last 0.3 s, 1.2 s after the last note-off: at least 26 dB down (the settling
        // pile's last collisions; 28 dB since the first grains land on grains, not on the
        // bare floor: `generator::landing_coverage`)
        let tail = rms(&a.main[0][86_400..100_800]);
        assert!(pour > 1e-3 && tail < pour * 0.05, "pour {pour}, tail {tail}");
        // silence before the first note
        assert!(a.main[0][..2_000].iter().all(|&x| x == 0.0));
    }

    /// The whole render in one buffer, through `feed::render_blocks`, aligned after.
    fn whole(values: &ParamValues, opts: &RenderOptions) -> [Vec<f32>; 6] {
        let mut settings = values.to_settings();
        settings.trigger_mode = TriggerMode::Continuous;
        let curve = opts.pour.clone().unwrap();
        settings.pour_rate_g_s = curve.rate_at(0.0);
        let fs = opts.sample_rate;
        let mut engine = Engine::new(settings, fs, opts.block_size);
        let window = engine.window_len();
        let latency = engine.latency_samples();
        let frames = opts.frames();
        let mut out: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; frames + latency]);
        let pour = (0..).step_by(window).map(|t| {
            settings.pour_rate_g_s = curve.rate_at(t as f64 / fs as f64);
            Timed::new(t, Event::Settings(settings))
        });
        feed::render_blocks(&mut engine, &mut out, opts.block_size, pour);
        for (c, v) in out.iter_mut().enumerate() {
            if c < 2 {
                v.drain(..latency);
            } else {
                v.truncate(frames);
            }
        }
        out
    }

    #[test]
    fn a_streamed_render_is_the_whole_render_aligned() {
        let values = ParamValues::default();
        for block_size in [1000, 64, 7] {
            let opts = RenderOptions {
                seconds: 0.4,
                sample_rate: 44_100.0,
                block_size,
                pour: Some(PourCurve::parse("0:30,0.2:30,0.2:0").unwrap()),
            };
            let want = whole(&values, &opts);
            let mut r = Renderer::pour(&values, &opts);
            let latency = r.latency;
            let mut got: [Vec<f32>; 6] = Default::default();
            let mut blocks = 0;
            while let Some(b) = r.next_block() {
                assert!(b.len() <= block_size + latency && !b.is_empty());
                for (g, x) in got.iter_mut().zip(b.main.iter().chain(&b.grains).chain(&b.cup)) {
                    assert_eq!(x.len(), b.len());
                    g.extend_from_slice(x);
                }
                blocks += 1;
            }
            assert_eq!(r.position(), r.frames());
            assert_eq!(got[0].len(), 17_640);
            assert!(blocks >= 17_640 / (block_size + latency), "{blocks} blocks");
            assert!(got[0].iter().any(|&x| x != 0.0));
            assert!(got == want, "block size {block_size}");
        }
    }
}

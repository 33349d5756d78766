//! The pour scene (DESIGN "Pour scene"; thesis 5.1 and 7.1; Phya 4.6).
//!
//! Mass flow Q (kg/s) leaves the spout; each grain of mass m = rho V falls for
//! `t_fall = sqrt(2 h / g)` and lands at `v = sqrt(2 g h)` (h from the spout, `fall_height`
//! above the rim, to the pile top: a shallow bowl's grains fall a shorter way than a tall
//! tumbler's). The flow that arrives is the flow that left `t_fall` earlier, so after the
//! stream stops the grains still in the air land. Arriving mass raises the pile (bulk
//! density 0.6 rho) by its volume over the cup's cross-section at the pile's top (`Cup`):
//! the fall gets shorter, the floor is covered, and the cup is damped more. The fill level
//! is the pile's height over the cup's inner depth. A settling activity, fed by arrivals
//! and decaying after the pour, keeps grains shifting for a moment when the stream stops.
//!
//! Time is continuous: the spout's command changes at the sample of the event that changes
//! it (`set_command`, any time inside a window), the spout's flow follows it as an exact
//! first-order lag, the flow is recorded at every window boundary, and the arrivals at a
//! window's two ends are read from that record `t_fall` back with linear interpolation (a
//! fractional delay), so a note moved by one sample moves the pour by one sample.
//!
//! The stream is unsteady (`stream`, the `flow_variation` parameter): a surge when the spout
//! opens and a trickle after it closes are part of the spout's flow (exact exponentials,
//! like the lag); the wavering and the clumps multiply the arriving flow (a stationary random
//! factor of mean 1: delaying it by the fall would not change its statistics).

use crate::base::materials::{GRAVITY, PACKING_FRACTION};
use crate::control::choices::CupShape;
use crate::control::settings::limits;
use crate::derived::cups::floor_coverage;
use crate::derived::cups::Cup;
use crate::pour::stream::{StreamParams, Unsteady, SURGE_SHARE, TRICKLE_END, TRICKLE_SHARE};
use crate::statistics::bank::{LIFE_BINS, LIFE_EDGES_S};

/// Longest fall above the rim the delay line is sized for, m (more than the `fall_height`
/// range); the deepest cup at its largest size is added to it.
pub const MAX_FALL_M: f32 = 1.2;
/// Settling time constant after arrivals stop, s.
pub const SETTLE_TIME_S: f32 = 0.35;
/// Settling collisions per arriving grain (while the pile is disturbed).
pub const SETTLE_COLLISIONS_PER_GRAIN: f32 = 0.6;
/// Flow onset/offset time constant of the spout, s (a pour does not start in a sample).
pub const FLOW_SMOOTH_S: f32 = 0.03;

/// What the scene needs from the settings, in SI units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SceneInput {
    /// Grain radius, m.
    pub grain_radius_m: f32,
    /// Grain solid density, kg/m^3.
    pub grain_density: f32,
    /// The cup (shape and size).
    pub cup: Cup,
    /// Height of the spout above the cup rim, m.
    pub fall_height_m: f32,
    pub auto_fill: bool,
    /// A pour onto the bare surface (`PourTarget::Surface`): the pile is a heap on the
    /// ground, a cone at the angle of repose whose tangent is `repose_tan`; the ground is
    /// where the cup's floor would be and the spout stays where it is.
    pub open: bool,
    pub repose_tan: f32,
    /// How much slower a grain's life runs here than in the collision databank's similar
    /// scene (`Derived::life_scale`, the square root of the length scale; at most
    /// `MAX_LIFE_SCALE`): `PourState::arrived_ago` averages the arrivals over the lifetime
    /// bins' edges times this.
    pub life_scale: f32,
}

/// The largest `SceneInput::life_scale`: the square root of the largest cup size over the
/// databank's (`limits::CUP_SIZE`, `BANK_CUP_SIZE`). The arrivals' record reaches this much
/// past the last lifetime edge.
pub const MAX_LIFE_SCALE: f32 = 1.6;

/// The scene's state at one window boundary.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PourState {
    /// Grains arriving per second at the start and the end of the window.
    pub arrivals_start: f32,
    pub arrivals_end: f32,
    /// Impact speed of arriving grains, m/s.
    pub impact_speed: f32,
    /// Pile height above the cup floor, m.
    pub pile_height_m: f32,
    /// Radius of the pile's top (the cup's inner radius there), m.
    pub pile_radius_m: f32,
    /// Fraction of the floor covered by grains, 0..1.
    pub floor_coverage: f32,
    /// Fill level, 0..1 (the pile's height over the cup's inner depth).
    pub fill: f32,
    /// Settling collisions per second.
    pub settle_rate: f32,
    /// Mass flow leaving the spout, kg/s (after smoothing; with the surge and the trickle).
    pub flow_kg_s: f32,
    /// The unsteady stream's factor on the arriving flow at the window's end (1: steady).
    pub flow_factor: f32,
    /// Grains per second running over the rim of a full cup onto the surface (0 in a pour
    /// onto the surface).
    pub overflow: f32,
    /// Grains that arrived per second, on average, between `bank::LIFE_EDGES_S[k]` and
    /// `[k + 1]` seconds times `SceneInput::life_scale` before the window's middle (entry 0:
    /// this window's mean): what a databank's lifetime profile weighs (`generator::bank_pdf`).
    pub arrived_ago: [f32; LIFE_BINS],
}

pub struct PourScene {
    window_s: f32,
    /// Flow leaving the spout at the last window boundaries, kg/s (ring buffer, fixed
    /// capacity; `head` is where the next boundary's value goes).
    history: Vec<f32>,
    head: usize,
    /// Flow leaving the spout at `t_s`, kg/s, and the command it follows.
    flow: f32,
    command: f32,
    /// Time since the last recorded boundary the flow has been advanced to, s.
    t_s: f32,
    /// When the next boundary is recorded, s after the last one: `window_s`, or 0 after a
    /// reset (the boundary that starts the first window).
    next_boundary_s: f32,
    fill: f32,
    settle: f32,
    /// The surge after the spout opens and the trickle after it closes, kg/s (`stream`).
    surge: f32,
    trickle: f32,
    /// Where the trickle ends, kg/s (`TRICKLE_END` of where it started).
    trickle_end: f32,
    stream: StreamParams,
    unsteady: Unsteady,
    /// Grains arrived since the reset at the last window boundaries, the newest the end of
    /// the window last stepped (ring buffer, fixed capacity: `LIFE_EDGES_S`'s last edge
    /// times `MAX_LIFE_SCALE`;
    /// `arrived_head` is where the next goes).
    arrived: Vec<f64>,
    arrived_head: usize,
    /// The lifetime bins' edges times the last `SceneInput::life_scale` (made when it
    /// changes), s, and that scale as given.
    life_edges_s: [f32; LIFE_BINS + 1],
    life_scale: f32,
}

impl PourScene {
    /// `window_s`: duration of one generator window.
    pub fn new(window_s: f32) -> Self {
        let deepest = CupShape::ALL
            .iter()
            .map(|&s| Cup::new(s, limits::CUP_SIZE.1).depth)
            .fold(0.0, f32::max);
        let max_fall_s = (2.0 * (MAX_FALL_M + deepest) / GRAVITY).sqrt();
        let len = (max_fall_s / window_s).ceil() as usize + 3;
        let mut scene = PourScene {
            window_s,
            history: vec![0.0; len],
            head: 0,
            flow: 0.0,
            command: 0.0,
            t_s: 0.0,
            next_boundary_s: 0.0,
            fill: 0.0,
            settle: 0.0,
            surge: 0.0,
            trickle: 0.0,
            trickle_end: 0.0,
            stream: StreamParams::default(),
            unsteady: Unsteady::new(0),
            arrived: vec![0.0; (MAX_LIFE_SCALE * LIFE_EDGES_S[LIFE_BINS] / window_s).ceil() as usize + 3],
            arrived_head: 0,
            life_edges_s: LIFE_EDGES_S,
            life_scale: 1.0,
        };
        scene.reset(0.0, 0);
        scene
    }

    /// Nothing in the air, the spout closed, the pile at `fill` and at rest, the stream's
    /// random numbers restarted from `seed`; the next `step` starts the first window.
    pub fn reset(&mut self, fill: f32, seed: u64) {
        self.history.iter_mut().for_each(|x| *x = 0.0);
        self.head = 0;
        self.arrived.iter_mut().for_each(|x| *x = 0.0);
        self.arrived_head = 0;
        self.flow = 0.0;
        self.command = 0.0;
        self.t_s = 0.0;
        self.next_boundary_s = 0.0;
        self.fill = fill.clamp(0.0, 1.0);
        self.settle = 0.0;
        self.surge = 0.0;
        self.trickle = 0.0;
        self.unsteady.reset(seed);
    }

    /// The stream's time scales and shares from now on (the material, the flow and
    /// `flow_variation`; `stream::StreamParams`).
    pub fn set_stream(&mut self, params: StreamParams) {
        self.stream = params;
    }

    /// The stream's parameters last set (`set_stream`).
    pub fn stream(&self) -> &StreamParams {
        &self.stream
    }

    pub fn fill(&self) -> f32 {
        self.fill
    }

    pub fn set_fill(&mut self, fill: f32) {
        self.fill = fill.clamp(0.0, 1.0);
    }

    /// The commanded flow, kg/s.
    pub fn command(&self) -> f32 {
        self.command
    }

    /// True while the spout is open or pouring, grains are in the air or the pile is still
    /// settling.
    pub fn is_active(&self) -> bool {
        self.command > 0.0
            || self.flow > 1e-9
            || self.surge > 0.0
            || self.trickle > 0.0
            || self.history.iter().any(|&q| q > 1e-9)
            || self.settle > 1e-3
    }

    /// The spout's flow follows its command as a first-order lag (time constant
    /// `FLOW_SMOOTH_S`), and the surge and the trickle decay (`stream`), solved exactly from
    /// `t_s` to `to_s`.
    fn advance(&mut self, to_s: f32) {
        let dt = to_s - self.t_s;
        if dt > 0.0 {
            self.flow = self.command + (self.flow - self.command) * (-dt / FLOW_SMOOTH_S).exp();
            if self.flow < 1e-12 {
                self.flow = 0.0;
            }
            if self.surge > 0.0 {
                self.surge *= (-dt / self.stream.surge_time_s.max(1e-3)).exp();
                if self.surge < 1e-12 {
                    self.surge = 0.0;
                }
            }
            if self.trickle > 0.0 {
                self.trickle *= (-dt / self.stream.trickle_time_s.max(1e-3)).exp();
                // the lip is empty once the trickle is down to `TRICKLE_END` of its start (or
                // to less than a grain a second)
                if self.trickle < self.trickle_end.max(self.stream.grain_kg).max(1e-12) {
                    self.trickle = 0.0;
                }
            }
            self.t_s = to_s;
        }
    }

    /// The spout's flow at `t_s`: the lag's, plus the surge and the trickle, kg/s.
    fn spout_flow(&self) -> f32 {
        self.flow + self.surge + self.trickle
    }

    /// A new commanded flow (kg/s) from `at_s` seconds after the current window's start on
    /// (events between window boundaries; clamped to the window).
    pub fn set_command(&mut self, at_s: f32, flow_cmd: f32) {
        let flow_cmd = if flow_cmd.is_finite() { flow_cmd.max(0.0) } else { 0.0 };
        let at_s = if at_s.is_finite() {
            at_s.clamp(0.0, self.next_boundary_s)
        } else {
            self.t_s
        };
        self.advance(at_s.max(self.t_s));
        // opening the spout starts a surge, closing it a trickle (`stream`)
        let v = self.stream.variation;
        if self.command <= 0.0 && flow_cmd > 0.0 {
            self.surge += v * SURGE_SHARE * flow_cmd;
        } else if self.command > 0.0 && flow_cmd <= 0.0 {
            self.trickle += v * TRICKLE_SHARE * self.command;
            self.trickle_end = TRICKLE_END * self.trickle;
        }
        self.command = flow_cmd;
    }

    /// The spout's flow `delay_s` before the last recorded boundary (linear interpolation
    /// between boundaries; 0 before the record starts).
    fn flow_before(&self, delay_s: f32) -> f32 {
        let len = self.history.len();
        let k = (delay_s / self.window_s).clamp(0.0, (len - 2) as f32);
        let i = k as usize;
        let frac = k - i as f32;
        let last = self.head + len - 1;
        let a = self.history[(last - i) % len];
        let b = self.history[(last - i - 1) % len];
        a + (b - a) * frac
    }

    /// The grains arrived by `before_s` seconds before the end of the window last stepped
    /// (linear between boundaries; the oldest boundary kept beyond the record).
    fn arrived_by(&self, before_s: f32) -> f64 {
        let len = self.arrived.len();
        let k = (before_s / self.window_s).clamp(0.0, (len - 2) as f32);
        let i = k as usize;
        let frac = (k - i as f32) as f64;
        let last = self.arrived_head + len - 1;
        let a = self.arrived[(last - i) % len];
        let b = self.arrived[(last - i - 1) % len];
        a + (b - a) * frac
    }

    /// Records the window boundary that is now (the spout's flow there) and returns the
    /// state of the window that starts here.
    pub fn step(&mut self, input: &SceneInput) -> PourState {
        self.advance(self.next_boundary_s);
        let len = self.history.len();
        self.history[self.head] = self.spout_flow();
        self.head = (self.head + 1) % len;
        self.t_s = 0.0;
        self.next_boundary_s = self.window_s;
        let cup = &input.cup;
        // the pile: a layer in the cup (its height the fill level times the depth), or a
        // heap on the ground holding as many grains as the cup would at that level: a cone
        // at the angle of repose, V = pi r³ tan(theta) / 3
        let pile_h = if input.open {
            heap(self.fill, cup, input.repose_tan).0
        } else {
            self.fill * cup.depth
        };
        // thesis 7.1: the pile rises, the fall gets shorter
        let h = (input.fall_height_m + cup.depth - pile_h).max(0.002);
        let t_fall = (2.0 * h / GRAVITY).sqrt();
        // grains arriving at the window's start and end left the spout `t_fall` earlier (at
        // least a window: the end's flow is already recorded)
        let delay = t_fall.max(self.window_s);
        // the unsteady stream's factor at the window's two ends (`stream`)
        let factor_start = self.unsteady.factor();
        let factor_end = self
            .unsteady
            .step(&self.stream, self.window_s, (2.0 * GRAVITY * h).sqrt());
        let arrived_start = self.flow_before(delay) * factor_start;
        let arrived_end = self.flow_before(delay - self.window_s) * factor_end;
        let arrived_kg_s = 0.5 * (arrived_start + arrived_end);
        let grain_mass = input.grain_density * 4.0 / 3.0 * std::f32::consts::PI * input.grain_radius_m.powi(3);
        let per_grain = 1.0 / grain_mass.max(1e-12);
        let arrivals = arrived_kg_s * per_grain;
        // a full cup overflows: what arrives runs over the rim
        let overflow = if !input.open && self.fill >= 0.999 {
            arrivals
        } else {
            0.0
        };
        if input.auto_fill {
            let bulk = PACKING_FRACTION * input.grain_density;
            let volume = arrived_kg_s * self.window_s / bulk;
            if input.open {
                // the heap's volume, counted in cups
                self.fill = (self.fill + volume / cup.volume_m3.max(1e-9)).min(1.0);
            } else {
                // the arriving bulk volume spread over the cross-section at the pile's top
                let rise = volume / cup.cross_section(pile_h);
                self.fill = (self.fill + rise / cup.depth).min(1.0);
            }
        }
        // the arrivals' record, for the lifetime profile: the window's own arrivals added at
        // its end, then the mean arrival rate over each lifetime bin's span before its middle
        let len = self.arrived.len();
        let total = self.arrived[(self.arrived_head + len - 1) % len] + (arrivals * self.window_s) as f64;
        self.arrived[self.arrived_head] = total;
        self.arrived_head = (self.arrived_head + 1) % len;
        let half = 0.5 * self.window_s;
        if input.life_scale.to_bits() != self.life_scale.to_bits() {
            // a new cup size: the edges once per change (a scale that is not a number is 1)
            self.life_scale = input.life_scale;
            let scale = match input.life_scale {
                s if s.is_finite() => s.clamp(1.0 / MAX_LIFE_SCALE, MAX_LIFE_SCALE),
                _ => 1.0,
            };
            self.life_edges_s = LIFE_EDGES_S.map(|e| scale * e);
        }
        let mut arrived_ago = [arrivals; LIFE_BINS];
        for (k, a) in arrived_ago.iter_mut().enumerate().skip(1) {
            let (near, far) = (self.life_edges_s[k], self.life_edges_s[k + 1]);
            *a = ((self.arrived_by(half + near) - self.arrived_by(half + far)) / (far - near) as f64) as f32;
        }
        let decay = (-self.window_s / SETTLE_TIME_S).exp();
        self.settle = self.settle * decay + (1.0 - decay) * arrivals * SETTLE_COLLISIONS_PER_GRAIN;
        if self.settle < 1e-4 {
            self.settle = 0.0;
        }
        PourState {
            arrivals_start: arrived_start * per_grain,
            arrivals_end: arrived_end * per_grain,
            impact_speed: (2.0 * GRAVITY * h).sqrt(),
            pile_height_m: pile_h,
            pile_radius_m: if input.open {
                heap(self.fill, cup, input.repose_tan).1
            } else {
                cup.radius_at(pile_h)
            },
            floor_coverage: floor_coverage(pile_h as f64, 2.0 * input.grain_radius_m as f64) as f32,
            fill: self.fill,
            settle_rate: self.settle,
            flow_kg_s: self.spout_flow(),
            flow_factor: factor_end,
            overflow,
            arrived_ago,
        }
    }
}

/// The heap on the ground that holds `fill` cups of grains (a pour onto the surface): a cone
/// at the angle of repose (tangent `repose_tan`), V = pi r³ tan(theta) / 3. Returns its height
/// and base radius, m.
pub fn heap(fill: f32, cup: &Cup, repose_tan: f32) -> (f32, f32) {
    let tan = repose_tan.max(0.05);
    let volume = fill.clamp(0.0, 1.0) * cup.volume_m3;
    let radius = (3.0 * volume / (std::f32::consts::PI * tan)).cbrt();
    (radius * tan, radius)
}

//! The cup as it sounds: its modal bank (`modal`, with the nonlinear coupling of metal cups),
//! the bank's output without its steady part (`modal::DcBlocker`) and the diffuse resonator
//! above the highest mode (`diffuse`, Phya 7.2), and the resonances of the air above the
//! grains (`air`), all rebuilt when the cup, what fills it or the listener changes
//! (`CupResonator::update`).

use crate::base::materials::CupMaterial;
use crate::base::simd::Isa;
use crate::control::choices::CupShape;
use crate::derived::cups::{CupState, CUP_BUSES};
use crate::resonators::air::{AirBank, AirMode, AirTable, AIR_MODES};
use crate::resonators::diffuse::DiffuseResonator;
use crate::resonators::modal::{self, build_modes, diffuse_params, DcBlocker, ModalBank, Mode, MAX_MODES};
use crate::resonators::nonlinear::Nonlinear;

/// What the cup's modes, diffuse bands and distance gain depend on (`CupResonator::update`):
/// material, shape, size, fill level, grain density and diameter, and the listener's
/// distance, angle and the stereo width; and the air it holds (`Air`).
pub type CupKey = (CupMaterial, CupShape, f32, f32, f32, f32, f32, f32, f32, Air);

/// The air a vessel holds over its grains (`CupKey`'s last): none (a pour onto the bare
/// surface, or a shaken vessel without a lid), an open column that radiates through its
/// opening, or a closed one that sounds through its lid (a shaken jar: `air::Lid`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Air {
    None,
    Open,
    Closed,
}

pub struct CupResonator {
    sample_rate: f32,
    modal: ModalBank,
    dc: DcBlocker,
    diffuse: DiffuseResonator,
    /// The air column's resonances over the grains (`air`), and their table over the fill.
    air: AirBank,
    air_table: AirTable,
    modes: [Mode; MAX_MODES],
    /// The key the modes were built for (`None`: build at the next `update`).
    key: Option<CupKey>,
    /// At most this many of the cup's modes ring (`granary bench`'s mode sweep).
    mode_limit: usize,
    /// The air resonates (on unless a check turns it off: `set_air`).
    air_on: bool,
    /// The lowest of the cup's modes, Hz (below it the cup moves as one body: `lowest_mode_hz`).
    lowest_hz: f32,
}

impl CupResonator {
    /// Allocates (`Engine::new`); the diffuse resonator's noise is seeded from `seed`.
    pub fn new(sample_rate: f32, seed: u64, isa: Isa) -> CupResonator {
        CupResonator {
            sample_rate,
            modal: ModalBank::new(sample_rate, isa),
            dc: DcBlocker::new(sample_rate),
            diffuse: DiffuseResonator::new(sample_rate, seed, isa),
            air: AirBank::new(sample_rate),
            air_table: AirTable::new(),
            modes: [Mode::ZERO; MAX_MODES],
            key: None,
            mode_limit: MAX_MODES,
            air_on: true,
            lowest_hz: f32::INFINITY,
        }
    }

    /// The lowest of the cup's modes as built (before any `set_mode_limit`), Hz; infinite
    /// for a cup without modes below the bank's top. Below it the cup moves as one rigid
    /// body (`impact::foot`).
    pub fn lowest_mode_hz(&self) -> f32 {
        self.lowest_hz
    }

    /// The modes that ring.
    pub fn modes(&self) -> &[Mode] {
        self.modal.modes()
    }

    /// The air's modes that ring (`air`).
    pub fn air_modes(&self) -> &[AirMode] {
        self.air.modes()
    }

    /// Lets at most `n` modes ring, the lowest first, from the next `update`.
    pub fn set_mode_limit(&mut self, n: usize) {
        self.mode_limit = n.min(MAX_MODES);
        self.key = None;
    }

    /// Lets the air resonate or not, from the next `update` (on when built; the air's checks
    /// hear a render without it beside one with it).
    pub fn set_air(&mut self, on: bool) {
        self.air_on = on;
        self.key = None;
    }

    /// Silent, the diffuse noise reseeded from `seed`, rebuilt at the next `update`.
    pub fn reset(&mut self, seed: u64) {
        self.modal.reset();
        self.dc.reset();
        self.diffuse.reset(seed);
        self.air.reset();
        self.key = None;
    }

    /// The diffuse resonator's noise reseeded, without silencing what rings.
    pub fn reseed(&mut self, seed: u64) {
        self.diffuse.reseed(seed);
    }

    /// Rebuilt at the next `update` (a pour starts: its listener counts from its own pile).
    pub fn rebuild(&mut self) {
        self.key = None;
    }

    /// The modes and diffuse bands for `cup` heard from `distance_m` at `stereo_width`,
    /// rebuilt only when `key` differs from the last one's.
    pub fn update(&mut self, key: CupKey, cup: &CupState, distance_m: f32, stereo_width: f32) {
        if self.key == Some(key) {
            return;
        }
        self.key = Some(key);
        let max_f = modal::max_mode_freq_hz(self.sample_rate);
        let built = build_modes(cup, max_f, &mut self.modes);
        self.lowest_hz = self.modes[..built]
            .iter()
            .map(|m| m.freq_hz)
            .fold(f32::INFINITY, f32::min);
        let n = built.min(self.mode_limit);
        self.modal.set_modes(&self.modes[..n], distance_m, stereo_width);
        self.modal.set_nonlinear(Nonlinear::for_cup(cup));
        // the diffuse resonator takes over above the highest mode (Phya 7.2)
        let params = diffuse_params(cup, &self.modes[..n], distance_m);
        let modes = &self.modes[..n];
        self.diffuse.set(&params, |lo, hi| {
            modes.iter().filter(|m| m.freq_hz >= lo && m.freq_hz < hi).count()
        });
        // the air above the grains (none in a pour onto the bare surface), open or under a lid
        let mut air = [AirMode::ZERO; AIR_MODES];
        let closed = key.9 == Air::Closed;
        let n_air = if key.9 != Air::None && self.air_on {
            self.air_table.modes(cup, closed, max_f as f64, &mut air)
        } else {
            0
        };
        self.air.set(&air[..n_air]);
    }

    /// The modal bank's work at a window boundary (denormals out, the glide's control step),
    /// and a share of the air's next grid point.
    pub fn window(&mut self) {
        self.modal.flush_denormals();
        self.air.flush_denormals();
        self.modal.control();
        // the air at the fill's next grid point, a little a window (`AirTable::advance`)
        self.air_table.advance();
    }

    /// One span: the force on each bus (`forces`) through the modes into `modal` (left,
    /// right; without their steady part), and `total` (the buses' sum, to which the grains
    /// buzzing on a ringing metal floor add, `nonlinear`) through the diffuse resonator into
    /// `diffuse`; the grains' sound (`grains`, left and right) through the air's resonances,
    /// added to `modal` (the air is the vessel's: the cup stem). All slices of the span's
    /// length.
    #[inline(always)]
    pub fn process(
        &mut self,
        forces: &[&[f32]; CUP_BUSES],
        total: &mut [f32],
        grains: [&[f32]; 2],
        modal: [&mut [f32]; 2],
        diffuse: [&mut [f32]; 2],
    ) {
        let [ml, mr] = modal;
        self.modal.process_buzz(forces, ml, mr, total);
        self.dc.process_pair(ml, mr);
        if !self.air.modes().is_empty() {
            // the column radiates from the opening, one source: the grains' mid through it,
            // into both sides
            let len = ml.len();
            let mut mid = [0.0f32; crate::base::window::WINDOW];
            let mut air = [0.0f32; crate::base::window::WINDOW];
            for ((m, l), r) in mid[..len].iter_mut().zip(grains[0]).zip(grains[1]) {
                *m = 0.5 * (l + r);
            }
            self.air.process(&mid[..len], &mut air[..len]);
            for ((l, r), a) in ml.iter_mut().zip(mr.iter_mut()).zip(&air[..len]) {
                *l += a;
                *r += a;
            }
        }
        let [dl, dr] = diffuse;
        self.diffuse.process(total, dl, dr);
    }
}

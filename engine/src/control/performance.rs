//! What the player is doing, as the engine's control stage holds it between samples: the
//! notes held and the last one's velocity and aim key, the modulation, the gesture a
//! keyswitch chose. From these and the settings come the flow the spout is commanded to,
//! the gesture and how hard it goes, and where the stream lands. `Engine` acts on the
//! changes (a pour's start, the scene's flow command).

use crate::control::choices::{Gesture, TriggerMode, AVALANCHE_KEY};
use crate::control::settings::Settings;

/// The MIDI keys that aim the stream: the lowest at the cup's axis (aim 0), the highest
/// against its wall (aim 1), in equal steps (two octaves from C5, MIDI 72, to C7, 96, with
/// middle C = C4 = 60).
pub const AIM_KEYS: std::ops::RangeInclusive<u8> = 72..=96;

/// The aim a MIDI key sets, if it is in `AIM_KEYS`.
pub fn key_aim(key: u8) -> Option<f32> {
    let (lo, hi) = (*AIM_KEYS.start(), *AIM_KEYS.end());
    AIM_KEYS.contains(&key).then(|| (key - lo) as f32 / (hi - lo) as f32)
}

/// The notes, the modulation and the keyswitched gesture.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Performance {
    notes_held: u32,
    velocity: f32,
    /// The aim the last note's key sets (`AIM_KEYS`), if it was in that range.
    key_aim: Option<f32>,
    modulation: f32,
    /// The gesture the last keyswitch chose (`choices::GESTURE_KEYS`), if any.
    key_gesture: Option<Gesture>,
}

/// What a note-on was (`Performance::press`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Press {
    /// Velocity 0: a note-off, by MIDI's convention (already counted).
    Release,
    /// A keyswitch: the gesture from here on; it plays nothing.
    Keyswitch,
    /// The avalanche key: the heap avalanches now; it plays nothing.
    Avalanche,
    /// A note that plays.
    Note,
}

impl Performance {
    /// A note-on of `velocity` (0..1; not finite counts as 0) on `key`.
    pub fn press(&mut self, velocity: f32, key: u8) -> Press {
        let v = if velocity.is_finite() {
            velocity.clamp(0.0, 1.0)
        } else {
            0.0
        };
        if v <= 0.0 {
            self.release();
            return Press::Release;
        }
        if let Some(g) = Gesture::from_key(key) {
            self.key_gesture = Some(g);
            return Press::Keyswitch;
        }
        if key == AVALANCHE_KEY {
            return Press::Avalanche;
        }
        self.notes_held = self.notes_held.saturating_add(1);
        self.velocity = v;
        self.key_aim = key_aim(key);
        Press::Note
    }

    /// Whether releasing `key` ends a note (a keyswitch's or the avalanche key's held none).
    pub fn ends_a_note(key: u8) -> bool {
        Gesture::from_key(key).is_none() && key != AVALANCHE_KEY
    }

    /// One note ends.
    pub fn release(&mut self) {
        self.notes_held = self.notes_held.saturating_sub(1);
    }

    /// Every note ends (host "all notes off", transport stop).
    pub fn release_all(&mut self) {
        self.notes_held = 0;
    }

    /// Flow modulation 0..1 from the mod wheel or channel pressure (not finite: 0).
    pub fn set_modulation(&mut self, amount: f32) {
        self.modulation = if amount.is_finite() {
            amount.clamp(0.0, 1.0)
        } else {
            0.0
        };
    }

    pub fn modulation(&self) -> f32 {
        self.modulation
    }

    /// Where the stream lands, 0 (the axis) .. 1 (the wall): the last note's key, or the
    /// `aim` parameter.
    pub fn aim(&self, s: &Settings) -> f32 {
        self.key_aim.unwrap_or(s.aim)
    }

    /// The gesture notes play: the last keyswitch's, or the `gesture` parameter.
    pub fn gesture(&self, s: &Settings) -> Gesture {
        self.key_gesture.unwrap_or(s.gesture)
    }

    /// How hard the stir, shake or tilt goes, 0..1: `gesture_amount` in continuous mode; the
    /// note's velocity in MIDI mode, raised by the modulation for a shake or a tilt (a stir
    /// takes it as the spoon's depth); 0 without a note.
    pub fn gesture_intensity(&self, s: &Settings) -> f32 {
        match s.trigger_mode {
            TriggerMode::Continuous => s.gesture_amount,
            TriggerMode::Midi if self.notes_held > 0 => match self.gesture(s) {
                Gesture::Stir => self.velocity,
                _ => (self.velocity * (1.0 + self.modulation)).min(1.0),
            },
            TriggerMode::Midi => 0.0,
        }
    }

    /// Commanded mass flow, kg/s: the pour rate (times the note's velocity and 1 + the
    /// modulation in MIDI mode, while a note is held); 0 for the other gestures, which do not
    /// open the spout.
    pub fn flow_command(&self, s: &Settings) -> f32 {
        let rate = s.pour_rate_g_s * 1e-3;
        if self.gesture(s) != Gesture::Pour {
            return 0.0;
        }
        match s.trigger_mode {
            TriggerMode::Continuous => rate,
            TriggerMode::Midi if self.notes_held > 0 => rate * self.velocity * (1.0 + self.modulation),
            TriggerMode::Midi => 0.0,
        }
    }
}

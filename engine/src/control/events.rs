//! Typed, timestamped control events: what the engine can be told between samples. The one
//! loop that feeds them to the engine, splitting a buffer at their times, is `feed`.

use crate::base::window::Collision;
use crate::control::settings::Settings;

/// What the engine can be told between samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event {
    /// Starts (or re-strikes) the stream; velocity 0..1 scales the flow (0 is a note-off);
    /// a MIDI key in `AIM_KEYS` aims it (`Engine::note_on`).
    NoteOn {
        velocity: f32,
        key: u8,
    },
    NoteOff,
    /// The note on MIDI key `key` ends (`Engine::key_off`: a keyswitch's end is no note-off).
    KeyOff(u8),
    /// Stops every note (MIDI all notes off / all sound off, transport stop).
    AllNotesOff,
    /// Flow modulation 0..1 (the larger of the mod wheel and channel pressure).
    Modulation(f32),
    /// New settings (automation, a pour curve).
    Settings(Settings),
    /// A collision from outside the generator, rendered in the next window
    /// (`Engine::inject`; a logged contact, `render::Renderer::contacts`).
    Inject(Collision),
}

/// An event at a sample offset (from the start of the buffer it comes with, or of the whole
/// render for `feed::render_blocks`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timed {
    pub at: usize,
    pub event: Event,
}

impl Timed {
    pub fn new(at: usize, event: Event) -> Self {
        Timed { at, event }
    }
}

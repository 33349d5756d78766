//! Granary as a standalone application (nice-plug's standalone wrapper): the editor in a
//! window, audio through JACK/ALSA or `--backend dummy`.

fn main() {
    nice_plug::nice_export_standalone::<granary::Granary>();
}

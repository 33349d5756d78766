//! Granary as a standalone application (nice-plug's standalone wrapper): the editor in a
//! window, audio through JACK/ALSA or `--backend dummy`. Ctrl+C (SIGINT) or SIGTERM quits,
//! window open or not.

fn main() {
    // the wrapper's event loop never looks at signals: quit from the handler's thread
    if let Err(e) = ctrlc::set_handler(|| std::process::exit(130)) {
        eprintln!("granary-standalone: cannot catch Ctrl+C: {e}");
    }
    nice_plug::nice_export_standalone::<granary::Granary>();
}

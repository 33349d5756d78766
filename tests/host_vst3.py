"""The VST3 bundle in a real third-party host: pedalboard (JUCE).

Run by `cargo xtask test` after it has built the bundles. Needs `pip install pedalboard mido numpy`.
Prints pytest-style results and exits non-zero on any failure.
"""
import sys
import traceback

import numpy as np
import pedalboard
from mido import Message

BUNDLE = sys.argv[1] if len(sys.argv) > 1 else "target/bundled/granary.vst3"
SR = 48_000
CEILING = 0.944


def load():
    return pedalboard.load_plugin(BUNDLE)


def rms(x):
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))


def test_is_an_instrument_with_the_stable_parameters():
    p = load()
    assert p.is_instrument, "Granary must load as an instrument"
    assert p.name == "Granary"
    names = set(p.parameters.keys())
    for name in ["pour_rate_g_s", "fall_height_cm", "grain_material", "cup_material", "listener_angle_deg", "trigger_mode", "seed"]:
        assert name in names, f"{name} missing from {sorted(names)[:20]}"


def test_a_note_pours_and_note_off_stops_it():
    # JUCE hosts connect only the main bus here: the stem busses stay inactive.
    p = load()
    msgs = [Message("note_on", note=60, velocity=110, time=0), Message("note_off", note=60, time=2.0)]
    out = p(msgs, duration=4.0, sample_rate=SR, num_channels=2)
    assert out.shape == (2, 4 * SR)
    assert np.isfinite(out).all()
    assert np.abs(out).max() <= CEILING + 1e-6
    pour = rms(out[:, SR // 2 : 2 * SR])
    tail = rms(out[:, int(3.5 * SR) :])
    assert pour > 1e-3, f"the pour is silent ({pour})"
    assert tail < pour * 10 ** (-30 / 20), f"still pouring after note-off: {tail} vs {pour}"


def test_parameters_change_the_sound_and_continuous_mode_pours_without_notes():
    p = load()
    p.trigger_mode = "Continuous"
    p.pour_rate_g_s = 0.0
    silent = p([], duration=1.0, sample_rate=SR, num_channels=2)
    assert rms(silent) == 0.0, "pour_rate 0 in continuous mode must be silent"
    p.pour_rate_g_s = 40.0
    pouring = p([], duration=2.0, sample_rate=SR, num_channels=2, reset=True)
    assert rms(pouring[:, SR:]) > 1e-3


TESTS = [v for k, v in sorted(globals().items()) if k.startswith("test_")]

if __name__ == "__main__":
    passed = failed = 0
    for t in TESTS:
        try:
            t()
            print(f"test {t.__name__} ... ok")
            passed += 1
        except Exception:
            print(f"test {t.__name__} ... FAILED")
            traceback.print_exc()
            failed += 1
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)

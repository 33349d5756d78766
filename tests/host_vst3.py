"""The VST3 bundle in a real third-party host: pedalboard (JUCE).

Usage: python3 tests/host_vst3.py [BUNDLE.vst3] [GRANARY_BINARY]
Run by `cargo xtask test` after it has built the bundles. Needs `pip install pedalboard mido numpy`.
Prints pytest-style results and exits non-zero on any failure.

The plugin is loaded once (pedalboard takes over a minute to scan and load it) and shared by
the tests, each of which first sets back the parameters the tests change.

"The DAW bounce equals the command-line render": the same MIDI pour, settings and seed are
rendered in the VST3 through pedalboard and by `granary render --note`, then compared.
pedalboard does not compensate the latency the plugin reports (the limiter's 2.5 ms
look-ahead, 120 samples at 48 kHz) while `granary render` writes the main output aligned, so
the host's output is shifted by the latency before the comparison. The host also pushes every
parameter through its normalised value when it starts processing, which leaves some plain values
a unit in the last place off their defaults (fall_height 14.999998 cm, pour_rate 20.000002 g/s):
the command line gets the values the plugin holds, read from its saved state. With both, the
samples are identical (bit for bit; with the defaults instead they differed by up to 1e-4).
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np
import pedalboard
from mido import Message
from pedalboard.io import AudioFile

BUNDLE = sys.argv[1] if len(sys.argv) > 1 else "target/bundled/granary.vst3"
GRANARY = sys.argv[2] if len(sys.argv) > 2 else next(
    (p for p in ["target/bundled/granary", "target/release/granary"] if os.path.exists(p)), "granary"
)
SR = 48_000
CEILING = 0.944
LATENCY = 120  # 2.5 ms at 48 kHz

_PLUGIN = None
_DEFAULTS = {}
# the parameters the tests change
TOUCHED = ["trigger_mode", "pour_rate_g_s", "cup_material", "listener_angle_deg", "seed"]


def plugin():
    """The one loaded instance, with the parameters the tests change set back to their defaults
    (through the host's normalised values, exactly as loaded)."""
    global _PLUGIN
    if _PLUGIN is None:
        started = time.time()
        _PLUGIN = pedalboard.load_plugin(BUNDLE)
        print(f"loaded {BUNDLE} in {time.time() - started:.0f} s")
        for name in TOUCHED:
            _DEFAULTS[name] = _PLUGIN.parameters[name].raw_value
    p = _PLUGIN
    for name in TOUCHED:
        # only when changed: a normalised value set again need not give back the same plain value
        if p.parameters[name].raw_value != _DEFAULTS[name]:
            p.parameters[name].raw_value = _DEFAULTS[name]
    return p


JUCE_B64 = ".ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+"


def plugin_params(p):
    """The parameter values in the plugin's saved state (nice-plug's JSON, inside JUCE's
    VST3 state XML, in JUCE's base64 variant: `size.` then 6 bits per character, LSB first)."""
    raw = bytes(p.raw_state)
    blob = re.search(rb"<IComponent>([^<]*)</IComponent>", raw).group(1).strip()
    size, data = blob.split(b".", 1)
    bits = nbits = 0
    for ch in data.decode():
        bits |= JUCE_B64.index(ch) << nbits
        nbits += 6
    state = bits.to_bytes((nbits + 7) // 8, "little")[: int(size)]
    return json.loads(state[state.find(b'{"') : state.rfind(b"}") + 1])["params"]


def rms(x):
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))


def test_is_an_instrument_with_the_stable_parameters():
    p = plugin()
    assert p.is_instrument, "Granary must load as an instrument"
    assert p.name == "Granary"
    names = set(p.parameters.keys())
    for name in ["pour_rate_g_s", "fall_height_cm", "grain_material", "cup_material", "listener_angle_deg", "trigger_mode", "seed"]:
        assert name in names, f"{name} missing from {sorted(names)[:20]}"
    assert len(names) >= 17, sorted(names)


def test_a_note_pours_and_note_off_stops_it():
    # JUCE hosts connect only the main bus here: the stem busses stay inactive.
    p = plugin()
    msgs = [Message("note_on", note=60, velocity=110, time=0), Message("note_off", note=60, time=2.0)]
    out = p(msgs, duration=4.0, sample_rate=SR, num_channels=2, reset=True)
    assert out.shape == (2, 4 * SR)
    assert np.isfinite(out).all()
    assert np.abs(out).max() <= CEILING + 1e-6
    pour = rms(out[:, SR // 2 : 2 * SR])
    tail = rms(out[:, int(3.5 * SR) :])
    assert pour > 1e-3, f"the pour is silent ({pour})"
    assert tail < pour * 10 ** (-30 / 20), f"still pouring after note-off: {tail} vs {pour}"


def test_parameters_change_the_sound_and_continuous_mode_pours_without_notes():
    p = plugin()
    p.trigger_mode = "Continuous"
    p.pour_rate_g_s = 0.0
    silent = p([], duration=1.0, sample_rate=SR, num_channels=2, reset=True)
    assert rms(silent) == 0.0, "pour_rate 0 in continuous mode must be silent"
    p.pour_rate_g_s = 40.0
    pouring = p([], duration=2.0, sample_rate=SR, num_channels=2, reset=True)
    assert rms(pouring[:, SR:]) > 1e-3


def test_the_daw_bounce_equals_the_command_line_render():
    p = plugin()
    # set through the host's normalised values (pedalboard's own value-to-normalised search is
    # too coarse for the seed's million steps); these land exactly on the plain values
    p.parameters["cup_material"].raw_value = 3 / 6  # steel: choice 3 of 0..=6
    p.parameters["listener_angle_deg"].raw_value = 0.5  # 45 degrees of 0..90
    p.parameters["seed"].raw_value = 4242 / 999_999
    seed = int(float(p.seed))
    angle = float(p.listener_angle_deg)
    assert (str(p.cup_material), seed, angle) == ("Steel cup", 4242, 45.0), (p.cup_material, p.seed, p.listener_angle_deg)
    # overlapping notes; every time falls on a whole sample at 48 kHz
    notes = [(0.25, 2.0, 100), (1.0, 1.5, 64), (2.25, 2.75, 127)]
    seconds = 3.5
    msgs = []
    for start, end, vel in notes:
        msgs.append(Message("note_on", note=60, velocity=vel, time=start))
        msgs.append(Message("note_off", note=60, velocity=0, time=end))
    msgs.sort(key=lambda m: m.time)
    bounce = p(msgs, duration=seconds, sample_rate=SR, num_channels=2, buffer_size=512, reset=True)

    # The plain values the plugin rendered with, from its state: the host pushes every
    # parameter through its normalised value when it starts processing, which leaves some a
    # unit in the last place off (fall_height 14.999998, pour_rate 20.000002, ...). The same
    # values go to the command line (shortest decimal form, which parses back to the same f32).
    held = plugin_params(p)
    assert held["cup_material"] == {"i32": 3} and held["grain_material"] == {"i32": 0}, held
    sets = []
    for name, value in sorted(held.items()):
        if "f32" in value:
            sets += ["--set", f"{name}={value['f32']!r}"]
        elif "bool" in value:
            sets += ["--set", f"{name}={str(value['bool']).lower()}"]
    assert held["seed"] == {"i32": seed}, held

    with tempfile.TemporaryDirectory() as tmp:
        wav = os.path.join(tmp, "cli.wav")
        cmd = [GRANARY, "render", "--seconds", str(seconds), "--sample-rate", str(SR), "--seed", str(seed),
               "--set", "cup_material=steel", *sets, "--output", wav]
        for start, end, vel in notes:
            cmd += ["--note", f"{start}:{end}:{vel}"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with AudioFile(wav) as f:
            assert f.samplerate == SR
            cli = f.read(f.frames)

    n = cli.shape[1] - LATENCY
    host = bounce[:, LATENCY : LATENCY + n]
    ref = cli[:, :n]
    assert np.isfinite(host).all()
    level = rms(ref)
    assert level > 1e-3, f"the command-line render is silent ({level})"
    diff = np.abs(host.astype(np.float64) - ref.astype(np.float64))
    worst = float(diff.max())
    at = int(diff.max(axis=0).argmax())
    # without the latency shift they would not match: the comparison means something
    unaligned = float(np.abs(bounce[:, :n].astype(np.float64) - ref).max())
    identical = bool(np.array_equal(host, ref))
    print(f"  bounce vs granary render: max |diff| {worst:.2e} (at frame {at}), identical samples: {identical}, "
          f"RMS {level:.3e}, unaligned max |diff| {unaligned:.2e}")
    assert identical, f"DAW bounce differs from the command-line render by up to {worst} (frame {at})"
    assert unaligned > 1e-2, "the comparison must depend on the alignment"


# The bounce comparison runs while every other parameter still holds its exact default (no
# host round trip through a normalised value yet), so both renders use the same plain values.
TESTS = [
    test_is_an_instrument_with_the_stable_parameters,
    test_the_daw_bounce_equals_the_command_line_render,
    test_a_note_pours_and_note_off_stops_it,
    test_parameters_change_the_sound_and_continuous_mode_pours_without_notes,
]

if __name__ == "__main__":
    passed = failed = 0
    for t in TESTS:
        started = time.time()
        try:
            t()
            print(f"test {t.__name__} ... ok ({time.time() - started:.1f} s)")
            passed += 1
        except Exception:
            print(f"test {t.__name__} ... FAILED")
            traceback.print_exc()
            failed += 1
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)

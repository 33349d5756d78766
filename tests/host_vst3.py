"""The VST3 bundle in a real third-party host: pedalboard (JUCE).

Usage: python3 tests/host_vst3.py [BUNDLE.vst3] [GRANARY_BINARY]
Run by `cargo xtask test` after it has built the bundles. Needs `pip install pedalboard mido numpy`.
Prints pytest-style results and exits non-zero on any failure.

The plugin is loaded once and shared by the tests, each of which first sets back the
parameters the tests change.

"The DAW bounce equals the command-line render": every factory preset is set through the
host's parameters, as a user (or a project restored by the host) sets them: each value as text
through the plugin's own text-to-value conversion, then as the normalised value the host
stores. The same MIDI pour is rendered in the VST3 through pedalboard and by
`granary render --preset ID --note`, and compared bit for bit, with no value read back from the
plugin: the plugin snaps a value a normalised round trip leaves a unit in the last place off
back onto the value it came from. pedalboard does not compensate the latency the plugin
reports (the limiter's 2.5 ms look-ahead and its true-peak interpolator's 6 samples, 126
samples at 48 kHz) while `granary render` writes
the main output aligned, so the host's output is shifted by the latency before the comparison.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import pedalboard
from mido import Message
from pedalboard.io import AudioFile

import runner

BUNDLE = sys.argv[1] if len(sys.argv) > 1 else "target/bundled/granary.vst3"
GRANARY = sys.argv[2] if len(sys.argv) > 2 else next(
    (p for p in ["target/bundled/granary", "target/release/granary"] if os.path.exists(p)), "granary"
)
SR = 48_000
CEILING = 0.944
LATENCY = 126  # 2.5 ms and 6 samples at 48 kHz

_PLUGIN = None
_ALL_DEFAULTS = {}
# Granary's parameter ids (engine/src/control/params.rs), in its order
PARAM_IDS = ["grain_material", "grain_size", "density", "cup_material", "cup_size", "fill", "auto_fill",
             "pour_rate", "fall_height", "listener_angle", "listener_distance", "stereo_width", "grains_level",
             "cup_level", "output_gain", "trigger_mode", "seed", "cup_shape", "flow_variation", "aim",
             "pour_target", "surface_material", "surface_level", "gesture", "gesture_amount", "shake_rate",
             "friction_level", "quality", "grain_shape", "statistics"]


def plugin():
    """The one loaded instance, with every parameter set back to its default (through the
    host's normalised values, exactly as loaded)."""
    global _PLUGIN
    if _PLUGIN is None:
        started = time.time()
        _PLUGIN = pedalboard.load_plugin(BUNDLE)
        print(f"loaded {BUNDLE} in {time.time() - started:.0f} s")
        for pid in PARAM_IDS:
            _ALL_DEFAULTS[pid] = host_param(_PLUGIN, pid).raw_value
    p = _PLUGIN
    for pid, raw in _ALL_DEFAULTS.items():
        # only when changed: a normalised value set again need not give back the same plain value
        if host_param(p, pid).raw_value != raw:
            host_param(p, pid).raw_value = raw
    return p


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
    # the 2080 hidden MIDI proxies (16 channels of 128 CCs, channel pressure and pitch bend)
    # carry JUCE's names, which JUCE-based hosts leave out of their lists
    assert not [n for n in names if n.startswith("midi")], sorted(names)[:20]


def test_a_note_pours_and_note_off_stops_it():
    # JUCE hosts connect only the main bus here: the stem busses stay inactive.
    p = plugin()
    msgs = [Message("note_on", note=60, velocity=110, time=0), Message("note_off", note=60, time=2.0)]
    # the default sugar's last grains trickle for about 2.2 s after note-off (flow_variation)
    out = p(msgs, duration=5.5, sample_rate=SR, num_channels=2, reset=True)
    assert out.shape == (2, int(5.5 * SR))
    assert np.isfinite(out).all()
    assert np.abs(out).max() <= CEILING + 1e-6
    pour = rms(out[:, SR // 2 : 2 * SR])
    tail = rms(out[:, int(5.0 * SR) :])
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


PRESETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "presets")
# overlapping notes; every time falls on a whole sample at 48 kHz
NOTES = [(0.25, 2.0, 100), (1.0, 1.5, 64), (2.25, 2.75, 127)]
SECONDS = 3.5


_BY_ID = {}


def host_param(p, pid):
    """pedalboard's parameter for Granary's id (pedalboard names it from the display name and
    unit: `pour_rate` is `pour_rate_g_s`). pedalboard builds its list of parameters anew at
    every `p.parameters`, so the lookup is made once per id."""
    if pid not in _BY_ID:
        params = p.parameters
        name = pid if pid in params else next(n for n in params if n.startswith(pid + "_"))
        _BY_ID[pid] = params[name]
    return _BY_ID[pid]


def set_preset(p, values):
    """Every parameter to `values` (a preset's "params"; missing ones to the plugin's defaults),
    through the host: numbers and choices as text, converted by the plugin, then stored as the
    normalised value the host holds."""
    for pid, raw in _ALL_DEFAULTS.items():
        param = host_param(p, pid)
        if pid not in values:
            param.raw_value = raw
            continue
        v = values[pid]
        if isinstance(v, bool):
            param.raw_value = 1.0 if v else 0.0
        elif pid == "seed":
            param.raw_value = v / 999_999  # lands exactly on the integer
        elif isinstance(v, str):
            param.raw_value = param.get_raw_value_for_text(v)
        else:
            # fill, stereo width, flow variation and aim show as percentages
            text = f"{v * 100!r}" if pid in ("fill", "stereo_width", "flow_variation", "aim") else f"{v!r}"
            param.raw_value = param.get_raw_value_for_text(text)


def bounce(p, buffer_size=512):
    msgs = []
    for start, end, vel in NOTES:
        msgs.append(Message("note_on", note=60, velocity=vel, time=start))
        msgs.append(Message("note_off", note=60, velocity=0, time=end))
    msgs.sort(key=lambda m: m.time)
    return p(msgs, duration=SECONDS, sample_rate=SR, num_channels=2, buffer_size=buffer_size, reset=True)


def cli_render(preset_id):
    with tempfile.TemporaryDirectory() as tmp:
        wav = os.path.join(tmp, "cli.wav")
        cmd = [GRANARY, "render", "--preset", preset_id, "--seconds", str(SECONDS), "--sample-rate", str(SR),
               "--output", wav]
        for start, end, vel in NOTES:
            cmd += ["--note", f"{start}:{end}:{vel}"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with AudioFile(wav) as f:
            assert f.samplerate == SR
            return f.read(f.frames)


def compare(bounce_out, ref, what):
    """Bit-for-bit comparison of a host bounce (main output late by the latency) with a
    `granary render` (aligned)."""
    n = ref.shape[1] - LATENCY
    host = bounce_out[:, LATENCY : LATENCY + n]
    ref = ref[:, :n]
    assert np.isfinite(host).all(), what
    level = rms(ref)
    assert level > 1e-3, f"{what}: the command-line render is silent ({level})"
    diff = np.abs(host.astype(np.float64) - ref.astype(np.float64))
    worst = float(diff.max())
    at = int(diff.max(axis=0).argmax())
    # without the latency shift they would not match: the comparison means something
    unaligned = float(np.abs(bounce_out[:, :n].astype(np.float64) - ref).max())
    identical = bool(np.array_equal(host, ref))
    print(f"  {what}: max |diff| {worst:.2e} (at frame {at}), identical: {identical}, RMS {level:.3e}")
    assert identical, f"{what}: the DAW bounce differs from the command-line render by up to {worst} (frame {at})"
    assert unaligned > 1e-3, f"{what}: the comparison must depend on the alignment"


def test_every_factory_preset_bounces_as_granary_render():
    p = plugin()
    stems = sorted(f[: -len(".json")] for f in os.listdir(PRESETS) if f.endswith(".json"))
    assert len(stems) == 21, stems
    for stem in stems:
        with open(os.path.join(PRESETS, stem + ".json")) as f:
            values = json.load(f)["params"]
        set_preset(p, values)
        compare(bounce(p), cli_render(stem), stem)


def test_a_saved_state_loaded_later_bounces_the_same_pour():
    p = plugin()
    with open(os.path.join(PRESETS, "gravel_large_wooden_bowl.json")) as f:
        set_preset(p, json.load(f)["params"])
    first = bounce(p)
    state = p.raw_state
    # other settings and another pour in between, then the saved state back (a project
    # reopened in a running host); another buffer size makes the host deactivate and
    # re-activate the plugin
    with open(os.path.join(PRESETS, "steel_shot_tin.json")) as f:
        set_preset(p, json.load(f)["params"])
    other = bounce(p)
    assert not np.array_equal(other, first)
    p.raw_state = state
    again = bounce(p, buffer_size=333)
    assert np.array_equal(again, first), "the project's state loaded later gives another pour"
    compare(again, cli_render("gravel_large_wooden_bowl"), "state loaded later")


TESTS = [
    test_is_an_instrument_with_the_stable_parameters,
    test_every_factory_preset_bounces_as_granary_render,
    test_a_saved_state_loaded_later_bounces_the_same_pour,
    test_a_note_pours_and_note_off_stops_it,
    test_parameters_change_the_sound_and_continuous_mode_pours_without_notes,
]

if __name__ == "__main__":
    runner.main(TESTS)

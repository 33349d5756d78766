"""Granary's WAV files read by parsers Granary did not write: what a sound library sees.

Usage: python3 tests/wav_metadata.py [GRANARY_BINARY]
Run by `cargo xtask test` after it has built the command line, in the Python of the host
test (tests/requirements.txt: wavinfo, pyloudnorm, soundfile, pedalboard).
Prints pytest-style results and exits non-zero on any failure.

- wavinfo (PyPI, an independent Broadcast WAV reader) finds the bext chunk (description,
  originator, version 2, the EBU R 128 loudness fields), the iXML chunk (project, scene,
  take, note, and the take's parameters in GRANARY_TAKE) and the cue points with their labels;
- the integrated loudness in bext matches pyloudnorm's (ITU-R BS.1770-4) within 0.1 LU;
- libsndfile (soundfile) and JUCE (pedalboard's AudioFile) play the file: 32-bit float,
  stereo, every frame, the same samples;
- a loop's smpl chunk loops the whole file (wavinfo and libsndfile);
- the take renders again from the WAV alone (`granary render --from TAKE.wav`), sample for
  sample.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pyloudnorm
import soundfile
from pedalboard.io import AudioFile
from wavinfo import WavInfoReader

import runner

GRANARY = sys.argv[1] if len(sys.argv) > 1 else next(
    (p for p in ["target/bundled/granary", "target/release/granary"] if os.path.exists(p)), "granary"
)
DIR = tempfile.mkdtemp(prefix="granary-wav-metadata-")


def render(name, *args):
    """`granary render ARGS -o DIR/NAME` (the path) and what it printed."""
    out = os.path.join(DIR, name)
    r = subprocess.run([GRANARY, "render", *args, "-o", out], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out, r.stdout


def test_a_library_finds_the_description_the_loudness_the_take_and_the_markers():
    path, printed = render(
        "pour.wav", "--preset", "rice_plastic_bowl", "--seconds", "4", "--pour", "0:30,1.5:30,1.5:0", "--stems"
    )
    info = WavInfoReader(path)
    b = info.bext
    assert b.description.startswith("Rice poured into a plastic bowl, up to 30 g/s from"), b.description
    assert b.originator.startswith("Granary "), b.originator
    assert b.version == 2 and b.time_reference == 0, (b.version, b.time_reference)
    assert len(b.originator_date) == 10 and len(b.originator_time) == 8
    assert b.coding_history.startswith("A=PCM,F=48000,W=32,M=stereo"), b.coding_history
    # loudness: pyloudnorm on the samples, and the figure the render printed
    x, rate = soundfile.read(path, dtype="float64")
    lufs = pyloudnorm.Meter(rate).integrated_loudness(x)
    assert abs(b.loudness_value - lufs) < 0.1, (b.loudness_value, lufs)
    said = float(printed.split("levels: ")[1].split()[0])
    assert abs(b.loudness_value - said) <= 0.051, (b.loudness_value, said)
    peak = 20 * np.log10(np.abs(x).max())
    assert b.max_true_peak >= peak - 0.01, (b.max_true_peak, peak)
    assert b.max_momentary_loudness >= b.loudness_value and b.loudness_range >= 0
    # iXML: the take
    ixml = info.ixml
    assert ixml.project == "Granary" and ixml.scene == "Rice, plastic bowl" and ixml.take == "1", ixml.source
    assert ixml.raw_xml.findtext("NOTE") == b.description
    t = json.loads(ixml.raw_xml.findtext("GRANARY_TAKE"))
    assert t["format"] == "granary-take" and t["params"]["grain_material"] == "rice", t
    assert t["render"]["pour"] == "0:30,1.5:30,1.5:0" and t["render"]["stems"] is True
    # markers: the stream's start and stop, and the decay to -60 dB after it
    cues = info.cues.to_dict()
    labels = [(c["frame"], c["label"]) for c in cues.values()]
    assert labels[:2] == [(0, "pour starts"), (72000, "pour stops")], labels
    assert labels[2][1] == "decayed to -60 dB" and 72000 < labels[2][0] < 4 * 48000, labels
    # libsndfile plays it: 32-bit float, stereo, every frame
    with soundfile.SoundFile(path) as f:
        assert f.subtype == "FLOAT" and f.channels == 2 and f.frames == 4 * 48000
    # JUCE reads the same samples
    with AudioFile(path) as f:
        y = f.read(f.frames)
    assert np.array_equal(y.T.astype(np.float32), x.astype(np.float32))
    # a stem: its own name and loudness
    stem = WavInfoReader(path.replace(".wav", ".friction.wav"))
    assert stem.bext.description.endswith("(friction stem)"), stem.bext.description
    assert stem.ixml.raw_xml.find("TRACK_LIST/TRACK/NAME").text == "friction L"


def test_a_take_renders_again_from_its_wav_alone():
    path, _ = render("take.wav", "--preset", "gravel_onto_soil", "--seconds", "2", "--variations", "2",
                     "--peak", "-3")
    take = os.path.join(DIR, "take_002.wav")
    os.remove(os.path.join(DIR, "take_002.json"))
    again = os.path.join(DIR, "again.wav")
    r = subprocess.run([GRANARY, "render", "--from", take, "-o", again], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    a, _ = soundfile.read(take, dtype="float32")
    b, _ = soundfile.read(again, dtype="float32")
    assert np.array_equal(a, b)
    t = json.loads(WavInfoReader(take).ixml.raw_xml.findtext("GRANARY_TAKE"))
    assert t["render"]["normalise"]["peak_dbtp"] == -3 and t["take"] == 2, t
    assert abs(WavInfoReader(take).bext.max_true_peak - -3.0) < 0.1


def test_a_loop_loops_the_whole_file():
    path, _ = render("bed.wav", "--preset", "sand_wooden_bowl", "--loop", "2")
    info = WavInfoReader(path)
    loops = info.smpl.sample_loops
    assert len(loops) == 1 and loops[0].start == 0 and loops[0].end == 2 * 48000 - 1, loops
    assert info.data.frame_count == 2 * 48000
    assert "a seamless loop of 2 s" in info.bext.description


TESTS = [
    test_a_library_finds_the_description_the_loudness_the_take_and_the_markers,
    test_a_take_renders_again_from_its_wav_alone,
    test_a_loop_loops_the_whole_file,
]

if __name__ == "__main__":
    runner.main(TESTS)

"""The Python tests' runner (tests/host_vst3.py, tests/wav_metadata.py): runs each test, prints
pytest-style lines and a closing `N passed, N failed` (which `cargo xtask test` reads), and
exits non-zero on any failure."""
import sys
import time
import traceback


def main(tests):
    passed = failed = 0
    for t in tests:
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

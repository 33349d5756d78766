#!/usr/bin/env bash
# Granary's speed against STK's Shakers ("Little Rocks"), side by side (docs/performance.md,
# "Against STK"): ROUNDS alternating runs of the STK program and of `granary bench` on the
# default preset and `rate:1k`, each rendering SECONDS of audio at 48 kHz and timing its own
# render loop; prints each round's real-time factors and the median of the pairwise ratios
# (Granary over STK: above 1, Granary is the faster).
#
#   bench/stk/compare.sh [ROUNDS] [SECONDS]     # defaults 6 and 60
#
# Needs g++ and STK's headers and library (Debian: apt-get install g++ libstk-dev).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-6}
seconds=${2:-60}
if ! echo '#include <stk/Shakers.h>' | g++ -x c++ -fsyntax-only - 2>/dev/null; then
    echo "bench/stk/compare.sh needs g++ and STK's headers: apt-get install g++ libstk-dev" >&2
    exit 2
fi
mkdir -p target/stk
g++ -O2 -o target/stk/little_rocks bench/stk/little_rocks.cpp -lstk
cargo build --release -q -p granary-cli
cases=(--case preset:sugar_ceramic_mug --case rate:1k)
for _ in $(seq "$rounds"); do
    target/stk/little_rocks "$seconds"
    target/release/granary bench "${cases[@]}" --seconds "$seconds" --json | tr -d '\n'
    echo
done | python3 -c '
import json, statistics, sys
rounds, stk = [], None
for line in sys.stdin:
    if line.startswith("stk "):
        stk = float(line.split(": ")[2].split("x")[0])
    elif line.strip():
        rounds.append((stk, {c["case"]: c["realtime_factor"] for c in json.loads(line)}))
for stk, g in rounds:
    print(f"STK {stk:7.1f}x  " + "  ".join(f"{k} {v:7.1f}x ({v / stk:.2f} of STK)" for k, v in g.items()))
for case in rounds[0][1]:
    ratio = statistics.median(g[case] / stk for stk, g in rounds)
    print(f"{case}: median {statistics.median(g[case] for _, g in rounds):.1f}x real time, {ratio:.2f}x STK Little Rocks (median of {len(rounds)} pairs)")
print(f"STK Little Rocks: median {statistics.median(s for s, _ in rounds):.1f}x real time")
'

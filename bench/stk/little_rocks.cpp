// The speed peer of docs/performance.md ("Against STK"): STK's Shakers (Perry Cook's PhISEM,
// Debian's libstk-dev) playing "Little Rocks" (instrument 11), mono at 48 kHz, re-shaken every
// 100 ms so that it sounds all the time (a decayed shaker returns zeros without working). It
// times its own render loop, as `granary bench` does, and prints the real-time factor.
//
//   g++ -O2 -o little_rocks little_rocks.cpp -lstk
//   ./little_rocks [seconds]        # default 60
#include <stk/Shakers.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
    const double seconds = argc > 1 ? std::atof(argv[1]) : 60.0;
    if (!(seconds > 0.0 && seconds <= 3600.0)) {
        std::fprintf(stderr, "seconds must be within (0, 3600], got %s\n", argv[1]);
        return 2;
    }
    const double rate = 48000.0;
    stk::Stk::setSampleRate(rate);
    stk::Shakers shaker(11);  // Little Rocks
    const long total = static_cast<long>(seconds * rate);
    const long shake_every = static_cast<long>(0.1 * rate);
    const long block = 64;
    stk::StkFrames frames(block, 1);
    double energy = 0.0;
    long silent = 0;
    const auto start = std::chrono::steady_clock::now();
    for (long done = 0; done < total; done += block) {
        if (done % shake_every < block) shaker.noteOn(11.0, 1.0);
        shaker.tick(frames);
        for (long i = 0; i < block; i++) {
            energy += frames[i] * frames[i];
            silent += frames[i] == 0.0;
        }
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // the energy is printed so that the loop cannot be optimised away, and shows it sounded
    std::printf("stk little_rocks: %.1f s of audio in %.3f s: %.1fx real time (rms %.4f, %.1f %% of samples silent)\n",
                seconds, wall, seconds / wall, std::sqrt(energy / total), 100.0 * silent / total);
    return energy > 0.0 ? 0 : 1;
}

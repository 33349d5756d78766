//! The trapezoidal (zero-delay-feedback) state-variable filter: Zavalishin, *The Art of VA
//! Filter Design* (2012), §4.4, its band-pass and low-pass outputs. The air's resonances
//! (`resonators::air`) and the cup's push through its foot (`impact::foot`) run on it.

/// The filter's coefficients for g = tan(π f / fs) and the damping k = 1/Q (k = √2: a
/// Butterworth low-pass), set when its frequency or Q change. The state is the caller's,
/// `[ic1, ic2]`, the two integrators' memories.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Svf {
    a1: f32,
    a2: f32,
    a3: f32,
}

impl Svf {
    pub fn new(g: f32, k: f32) -> Svf {
        let a1 = 1.0 / (1.0 + g * (g + k));
        Svf {
            a1,
            a2: g * a1,
            a3: g * g * a1,
        }
    }

    /// The coefficients `[a1, a2, a3]` of `tick` (g = tan(π f / fs), k = 1/Q: a1 =
    /// 1 / (1 + g (g + k)), a2 = g a1, a3 = g² a1).
    pub fn coefficients(&self) -> [f32; 3] {
        [self.a1, self.a2, self.a3]
    }

    /// One sample `x` through the filter of state `state`: its band-pass output (v1, unit
    /// gain at the peak times 1/k) and its low-pass output (v2).
    #[inline(always)]
    pub fn tick(&self, state: &mut [f32; 2], x: f32) -> (f32, f32) {
        let [ic1, ic2] = *state;
        let v3 = x - ic2;
        let v1 = self.a1 * ic1 + self.a2 * v3;
        let v2 = ic2 + self.a2 * ic1 + self.a3 * v3;
        *state = [2.0 * v1 - ic1, 2.0 * v2 - ic2];
        (v1, v2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The low-pass passes a constant whole and the band-pass none of it; at the cut-off the
    /// Butterworth low-pass is 3 dB down (its bilinear frequency warped by g = tan(π f / fs)).
    #[test]
    fn the_outputs_have_the_analog_filters_gains() {
        let fs = 48_000.0f32;
        let svf = Svf::new((std::f32::consts::PI * 1000.0 / fs).tan(), std::f32::consts::SQRT_2);
        let mut s = [0.0; 2];
        let (mut band, mut low) = (0.0, 0.0);
        for _ in 0..48_000 {
            (band, low) = svf.tick(&mut s, 1.0);
        }
        assert!((low - 1.0).abs() < 1e-4 && band.abs() < 1e-4, "{low} {band}");
        let mut s = [0.0; 2];
        let (mut power_in, mut power_out) = (0.0f64, 0.0f64);
        for n in 0..96_000 {
            let x = (2.0 * std::f64::consts::PI * 1000.0 * n as f64 / fs as f64).sin() as f32;
            let (_, y) = svf.tick(&mut s, x);
            if n >= 48_000 {
                power_in += (x as f64).powi(2);
                power_out += (y as f64).powi(2);
            }
        }
        let db = 10.0 * (power_out / power_in).log10();
        assert!((db + 3.01).abs() < 0.05, "{db} dB at the cut-off");
    }
}

//! The radial series of seed 001 eq. 20–25: per direction, the pressure at radii `R_1..R_M`
//! fitted by `p(R, t) = sum_{k=1..N} q_k(t - R/c) / R^k`, each `q_k` a sum of pulses `psi(t -
//! j dt; dt)` (eq. 22) with coefficients `q_k^j`. The least-squares system eq. 25 depends only
//! on the radii and times, not on the direction, so its truncated SVD is computed once and
//! applied to every direction.
//!
//! eq. 20 is printed as `p = sum_k (1/R^k) q_k(theta, phi, t - R/c)`; the garbled extraction
//! shows the retarded time as `t - R/c` with `R` the listener's distance from the centre of
//! mass (not `R - a`), which we keep: a delay that the series absorbs into `q_k`.

use crate::pulse::psi;
use crate::SPEED_OF_SOUND;
use faer::Mat;
use serde::{Deserialize, Serialize};

/// Settings of one fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitSpec {
    /// Number of terms `N` (the paper: 2).
    pub terms: usize,
    /// Radii `R_i`, m (the paper: `2R * 2^((i-1)/4)`, i = 1..5).
    pub radii: Vec<f64>,
    /// Sample interval `dt` of both the pressure series and the coefficients, s.
    pub dt: f64,
    /// Index `l0` of the first pressure sample (time `l0 dt`, s).
    pub first_sample: i64,
    /// Pressure samples per radius.
    pub samples: usize,
    /// Radius of the grain's bounding sphere, m (the earliest retarded time is `-R/c` before
    /// the first sample).
    pub body_radius: f64,
    /// Singular values below this fraction of the largest are truncated (TSVD).
    pub truncation: f64,
}

/// The fitted coefficients for a set of directions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RadialFit {
    pub terms: usize,
    /// Coefficient interval, s.
    pub dt: f64,
    /// Index of the first coefficient: `q_k^j` is at retarded time `(first + j) dt`.
    pub first: i64,
    /// `q[direction][term][j]`, Pa m^k per unit acceleration.
    pub q: Vec<Vec<Vec<f64>>>,
    /// Singular values kept (the truncated SVD's rank) and unknowns (`N x coefficients - 1`:
    /// `q_1^0` is eliminated by the zero-mean constraint).
    pub rank: usize,
    pub columns: usize,
}

/// Error of a fit.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    #[error("the SVD of the radial system did not converge")]
    Svd,
    #[error("pressure series shape does not match the fit settings")]
    Shape,
}

impl FitSpec {
    /// Index range of the coefficients: from the earliest retarded time any radius can see
    /// (`l0 dt - R_body/c`, less the pulse's 2 dt support) to the latest the outermost radius
    /// sees (`(l0 + L - 1) dt - R_M / c`).
    fn coefficient_range(&self) -> (i64, i64) {
        let c = SPEED_OF_SOUND;
        let r_max = self.radii.iter().cloned().fold(0.0, f64::max);
        let lo = self.first_sample + (-(self.body_radius / c) / self.dt).floor() as i64 - 2;
        let hi = self.first_sample + self.samples as i64 - 1 - (r_max / c / self.dt).ceil() as i64;
        (lo, hi)
    }

    /// The rows of eq. 25 used: (radius, sample) whose retarded time lies within the
    /// coefficient range (the later samples at the inner radii would be fitted by
    /// coefficients no other radius constrains), up to its very end, so the last coefficients
    /// are constrained too (with rows stopping 2 dt short, the TSVD was free to put the
    /// compensation of the zero-mean constraint into them: a spurious late pulse).
    fn rows(&self) -> Vec<(usize, usize)> {
        let (_, hi) = self.coefficient_range();
        let mut rows = Vec::new();
        for (i, &r) in self.radii.iter().enumerate() {
            for l in 0..self.samples {
                let retarded = (self.first_sample + l as i64) as f64 - r / SPEED_OF_SOUND / self.dt;
                if retarded <= hi as f64 {
                    rows.push((i, l));
                }
            }
        }
        rows
    }

    /// seed 001 eq. 25, `A[(i, l), (k, j)] = psi((l - j) dt - R_i / c; dt) / R_i^k`, with the
    /// constraint `sum_j q_1^j = 0` eliminated: the unknown `q_1^0` is replaced by `-sum_{j>0}
    /// q_1^j`, so the columns of `q_1^j` (j > 0) become `A[., (1, j)] - A[., (1, 0)]` and the
    /// column of `q_1^0` is dropped.
    ///
    /// The constraint is physics the radial basis does not know: at zero frequency the field
    /// round a rigid body is the incompressible flow, a harmonic function that decays as `1/R^2`
    /// (a dipole) or faster, never as `1/R` (a source: a rigid body keeps its volume). So `q_1`
    /// has no mean (`integral psi(.; dt) = dt` for every `j`). Without it the static `1/R^4`
    /// (octupole) part of, e.g., a cube's field at `R_1..R_M` is fitted partly by `q_1`, which
    /// then dominates the far field at low frequency: a cube's band energy below 20 kHz at
    /// 0.1 m on a face axis changed by 10 dB between grid resolutions.
    ///
    /// The columns of term k are scaled by `R_1^k` (the unknowns are `q_k^j / R_1^k`, all of
    /// the size of the pressure at `R_1`), so the singular values measure how well the data
    /// separate the terms rather than the unit of `R`: with three terms the raw columns differ
    /// by `R_1^2`, about 10^-5 for a grain, a spread the TSVD's relative threshold would confuse
    /// with ill-conditioning.
    ///
    /// With `first_moment` (`fit_with_first_moments`), a second constraint on `q_1` is
    /// eliminated the same way: `sum_j j q_1^j = T` per direction, so `q_1^1 = T - sum_{j>1} j
    /// q_1^j` and `q_1^0 = -q_1^1 - sum_{j>1} q_1^j`; the columns of `q_1^j` (j > 1) become `A[.,
    /// (1, j)] - j A[., (1, 1)] + (j - 1) A[., (1, 0)]`, both first columns are dropped, and `T
    /// (A[., (1, 1)] - A[., (1, 0)])` moves to the right-hand side (returned, per unit `T`).
    fn matrix(&self, first_moment: bool) -> (Mat<f64>, Vec<f64>) {
        let (lo, hi) = self.coefficient_range();
        let nj = (hi - lo + 1) as usize;
        let rows = self.rows();
        let r_ref = self.reference_radius();
        let mut full = Mat::<f64>::zeros(rows.len(), self.terms * nj);
        for (row, &(i, l)) in rows.iter().enumerate() {
            let r = self.radii[i];
            let t = (self.first_sample + l as i64) as f64 * self.dt - r / SPEED_OF_SOUND;
            let centre = (t / self.dt).floor() as i64;
            for j in (centre - 2).max(lo)..=(centre + 2).min(hi) {
                let w = psi(t - j as f64 * self.dt, self.dt);
                for k in 0..self.terms {
                    full[(row, k * nj + (j - lo) as usize)] = w * (r_ref / r).powi(k as i32 + 1);
                }
            }
        }
        let dropped = if first_moment { 2 } else { 1 };
        let mut a = Mat::<f64>::zeros(rows.len(), self.terms * nj - dropped);
        let mut particular = vec![0.0; rows.len()];
        for row in 0..rows.len() {
            for c in 0..self.terms * nj - dropped {
                let col = c + dropped; // column of the full system
                a[(row, c)] = if col >= nj {
                    full[(row, col)]
                } else if first_moment {
                    let j = col as f64;
                    full[(row, col)] - j * full[(row, 1)] + (j - 1.0) * full[(row, 0)]
                } else {
                    full[(row, col)] - full[(row, 0)]
                };
            }
            particular[row] = full[(row, 1)] - full[(row, 0)];
        }
        (a, particular)
    }

    /// The radius the columns of eq. 25 are scaled by (`matrix`): the innermost, m.
    fn reference_radius(&self) -> f64 {
        self.radii.iter().cloned().fold(f64::INFINITY, f64::min)
    }

    /// Fits `pressure[direction][radius][sample]` (Pa) by TSVD least squares (eq. 25), with
    /// `q_1` of zero mean.
    pub fn fit(&self, pressure: &[Vec<Vec<f64>>]) -> Result<RadialFit, FitError> {
        self.fit_constrained(pressure, None)
    }

    /// As `fit`, and with the first moment of `q_1` given per direction: `first_moments[d] =
    /// int tau q_1(d, tau) dtau` (Pa m s^2 per unit pulse; with eq. 22, `dt^2 sum_j (first + j)
    /// q_1^j`).
    ///
    /// Physics again: outside the bounding sphere the field is a sum of outgoing multipoles,
    /// the l-th `sum_{n=0..l} c_n f_l^(n)(t - R/c) / R^(l+1-n)` with `f_l` the pressure's l-th
    /// moment, a pulse (the flow is steady after the acceleration). So `q_1 = sum_l c_l
    /// f_l^(l)`, whose first moment `int tau f_l^(l)` vanishes for l >= 2 and is `-int f_1` for
    /// the dipole: the far field's `a'` term at low frequency is the static dipole and nothing
    /// else, `int tau q_1 = -rho0 (D . u) h / c` with `D` the static l = 1 moment measured on
    /// the sphere rule (`fdtd::dipole_coefficients`; for a rotation, the spin's own l = 1
    /// moment, zero for a centrally symmetric grain). Without it a spinning grain's static
    /// near field of higher order (its l = 4 part decays as `1/R^5`, beyond the three terms)
    /// leaks into `q_1` as a first moment with the pattern of an l = 2 field: a far field in
    /// `a'` that no multipole radiates, as large as a spin's true far field for contacts of
    /// 150 µs. (The mean of `q_2` is likewise the dipole's alone; fixing it too, with two terms
    /// for the translations, left the static l = 3 field of the disc's flat faces nowhere to go
    /// and moved its translations' series by 15 % for a 150 µs contact: not done.)
    pub fn fit_with_first_moments(
        &self,
        pressure: &[Vec<Vec<f64>>],
        first_moments: &[f64],
    ) -> Result<RadialFit, FitError> {
        if first_moments.len() != pressure.len() {
            return Err(FitError::Shape);
        }
        self.fit_constrained(pressure, Some(first_moments))
    }

    fn fit_constrained(
        &self,
        pressure: &[Vec<Vec<f64>>],
        first_moments: Option<&[f64]>,
    ) -> Result<RadialFit, FitError> {
        let (lo, hi) = self.coefficient_range();
        let nj = (hi - lo + 1) as usize;
        let rows = self.rows();
        let r_ref = self.reference_radius();
        // sum_j j q_1^j per direction, in the scaled unknowns (q_1 / R_1): with sum_j q_1^j = 0,
        // int tau q_1 = dt^2 sum_j (lo + j) q_1^j = dt^2 sum_j j q_1^j
        let targets: Option<Vec<f64>> =
            first_moments.map(|m| m.iter().map(|x| x / (self.dt * self.dt) / r_ref).collect());
        let (a, particular) = self.matrix(targets.is_some());
        let dropped = if targets.is_some() { 2 } else { 1 };
        let svd = a.thin_svd().map_err(|_| FitError::Svd)?;
        let (u, s, v) = (svd.U(), svd.S().column_vector(), svd.V());
        let smax = (0..s.nrows()).map(|i| s[i]).fold(0.0, f64::max);
        let kept: Vec<usize> = (0..s.nrows()).filter(|&i| s[i] > self.truncation * smax).collect();
        // right-hand sides, one column per direction
        let mut b = Mat::<f64>::zeros(rows.len(), pressure.len());
        for (d, series) in pressure.iter().enumerate() {
            if series.len() != self.radii.len() || series.iter().any(|x| x.len() != self.samples) {
                return Err(FitError::Shape);
            }
            let shift = targets.as_ref().map_or(0.0, |t| t[d]);
            for (row, &(i, l)) in rows.iter().enumerate() {
                b[(row, d)] = series[i][l] - shift * particular[row];
            }
        }
        // x = V S^+ U^T b over the kept singular values
        let ut_b = u.transpose() * &b;
        let mut scaled = Mat::<f64>::zeros(s.nrows(), pressure.len());
        for &i in &kept {
            for d in 0..pressure.len() {
                scaled[(i, d)] = ut_b[(i, d)] / s[i];
            }
        }
        let x = v * &scaled;
        // back to all coefficients: unknown c is q_k^j with k nj + j = c + dropped, the
        // dropped ones from the constraints; and unscaled: q_k^j = R_1^k x
        let coefficient = |d: usize, k: usize, j: usize| {
            let unknown = |k: usize, j: usize| x[(k * nj + j - dropped, d)];
            let scaled = if k > 0 || j >= dropped {
                unknown(k, j)
            } else if let Some(t) = &targets {
                // q_1^1 = T - sum_{j>1} j q_1^j, q_1^0 = -q_1^1 - sum_{j>1} q_1^j
                let q11 = t[d] - (2..nj).map(|j| j as f64 * unknown(0, j)).sum::<f64>();
                if j == 1 {
                    q11
                } else {
                    -q11 - (2..nj).map(|j| unknown(0, j)).sum::<f64>()
                }
            } else {
                -(1..nj).map(|j| unknown(0, j)).sum::<f64>()
            };
            r_ref.powi(k as i32 + 1) * scaled
        };
        let q = (0..pressure.len())
            .map(|d| {
                (0..self.terms)
                    .map(|k| (0..nj).map(|j| coefficient(d, k, j)).collect())
                    .collect()
            })
            .collect();
        Ok(RadialFit {
            terms: self.terms,
            dt: self.dt,
            first: lo,
            q,
            rank: kept.len(),
            columns: self.terms * nj - dropped,
        })
    }
}

impl RadialFit {
    /// seed 001 eq. 20 and 22: pressure (Pa) in direction `direction` at distance `r` (m) and
    /// time `t` (s).
    pub fn eval(&self, direction: usize, r: f64, t: f64) -> f64 {
        let tau = t - r / SPEED_OF_SOUND;
        let centre = (tau / self.dt).floor() as i64;
        let mut p = 0.0;
        for (k, qk) in self.q[direction].iter().enumerate() {
            let mut sum = 0.0;
            for j in centre - 2..=centre + 2 {
                let idx = j - self.first;
                if idx >= 0 && (idx as usize) < qk.len() {
                    sum += qk[idx as usize] * psi(tau - j as f64 * self.dt, self.dt);
                }
            }
            p += sum / r.powi(k as i32 + 1);
        }
        p
    }
}

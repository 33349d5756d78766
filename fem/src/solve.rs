//! Assembly of K and M and the generalized eigenproblem `K phi = w^2 M phi`.
//!
//! Thesis (seed 000) eq. 3.4 `K d + C d' + M d'' = f`; with Rayleigh damping (eq. 3.6) the
//! system decouples through the eigenvectors of `K phi = lambda M phi` (eq. 3.8–3.10), the
//! modes whose frequencies `sqrt(lambda) / 2 pi` and mass-normalised shapes this module
//! computes. The thesis obtains them by a Cholesky factorisation of M and a dense
//! eigensolver; that is far too slow for tens of thousands of unknowns, so here:
//!
//! - shift-invert: the eigenvalues `theta = 1 / (lambda - sigma)` of
//!   `A = (K - sigma M)^-1 M` (M-self-adjoint) are largest for the lowest modes; a sparse
//!   Cholesky factorisation of `K - sigma M` (faer, AMD ordering) applies A;
//! - rigid-body modes (3 translations, 3 rotations, lambda = 0) are projected out
//!   analytically, so only elastic modes come back;
//! - block Lanczos: a block Krylov basis of A, M-orthonormalised with full
//!   reorthogonalisation (so the degenerate cos/sin mode pairs of a cup both converge),
//!   Rayleigh–Ritz on the projected matrix, stopped when every wanted Ritz pair's residual
//!   `|A x - theta x|_M / theta` is below a tolerance.

use crate::element::{elasticity, stiffness, unit_mass, Material};
use crate::mesh::Mesh;
use faer::linalg::solvers::Solve;
use faer::sparse::{SparseColMat, Triplet};
use faer::{Mat, MatMut, Side};

#[derive(Debug, thiserror::Error)]
pub enum FemError {
    #[error("the mesh is empty")]
    EmptyMesh,
    #[error("sparse matrix construction failed: {0}")]
    Sparse(String),
    #[error("K - sigma M is not positive definite (bad mesh or material?)")]
    NotPositiveDefinite,
    #[error("dense eigensolver failed")]
    Dense,
    #[error("the eigensolver did not converge: {converged} of {wanted} modes after {basis} vectors")]
    NoConvergence {
        converged: usize,
        wanted: usize,
        basis: usize,
    },
}

/// Compressed sparse rows (symmetric matrices are stored whole).
#[derive(Debug, Clone)]
pub struct Csr {
    pub n: usize,
    pub row_ptr: Vec<usize>,
    pub col: Vec<usize>,
    pub val: Vec<f64>,
}

impl Csr {
    fn from_triplets(n: usize, mut t: Vec<(usize, usize, f64)>) -> Csr {
        t.sort_unstable_by_key(|&(r, c, _)| (r, c));
        let mut row_ptr = vec![0usize; n + 1];
        let mut col = Vec::new();
        let mut val: Vec<f64> = Vec::new();
        let mut last = (usize::MAX, usize::MAX);
        for (r, c, v) in t {
            if (r, c) == last {
                *val.last_mut().expect("merged entry") += v;
            } else {
                col.push(c);
                val.push(v);
                row_ptr[r + 1] += 1;
                last = (r, c);
            }
        }
        for r in 0..n {
            row_ptr[r + 1] += row_ptr[r];
        }
        Csr { n, row_ptr, col, val }
    }

    pub fn mul(&self, x: &[f64], y: &mut [f64]) {
        for r in 0..self.n {
            let mut s = 0.0;
            for p in self.row_ptr[r]..self.row_ptr[r + 1] {
                s += self.val[p] * x[self.col[p]];
            }
            y[r] = s;
        }
    }
}

/// Global stiffness and mass matrices, dof `3 * node + axis` (thesis eq. 3.3).
pub struct System {
    pub k: Csr,
    pub m: Csr,
}

impl System {
    pub fn assemble(mesh: &Mesh, material: &Material) -> System {
        let n = 3 * mesh.nodes.len();
        let d = elasticity(material);
        let mass = unit_mass();
        let mut kt = Vec::with_capacity(mesh.tets.len() * 900);
        let mut mt = Vec::with_capacity(mesh.tets.len() * 300);
        for t in &mesh.tets {
            let x = [t[0], t[1], t[2], t[3]].map(|v| mesh.nodes[v]);
            let ke = stiffness(x, &d);
            let vol = crate::mesh::tet_volume(x).abs();
            for a in 0..10 {
                for b in 0..10 {
                    let mab = material.density * vol * mass[a][b];
                    for i in 0..3 {
                        mt.push((3 * t[a] + i, 3 * t[b] + i, mab));
                        for j in 0..3 {
                            kt.push((3 * t[a] + i, 3 * t[b] + j, ke[3 * a + i][3 * b + j]));
                        }
                    }
                }
            }
        }
        System {
            k: Csr::from_triplets(n, kt),
            m: Csr::from_triplets(n, mt),
        }
    }
}

/// Elastic modes, lowest first: frequencies and mass-normalised shapes (`phi^T M phi = 1`,
/// units 1/sqrt(kg)), each `3 * nodes` long.
#[derive(Debug, Clone)]
pub struct Modes {
    pub freqs_hz: Vec<f64>,
    pub shapes: Vec<Vec<f64>>,
}

/// Options of the eigensolver.
#[derive(Debug, Clone, Copy)]
pub struct EigenOptions {
    /// Block size (start vectors); at least the largest multiplicity expected.
    pub block: usize,
    /// Relative residual `|A x - theta x|_M / theta` accepted.
    pub tolerance: f64,
    /// Largest Krylov basis tried.
    pub max_basis: usize,
    /// Shift sigma = -(2 pi shift_hz)^2.
    pub shift_hz: f64,
}

impl Default for EigenOptions {
    fn default() -> Self {
        EigenOptions {
            block: 6,
            tolerance: 1e-7,
            max_basis: 600,
            shift_hz: 50.0,
        }
    }
}

fn dotp(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// The `count` lowest elastic modes of the free body (rigid-body modes removed).
pub fn lowest_modes(mesh: &Mesh, sys: &System, count: usize, opt: EigenOptions) -> Result<Modes, FemError> {
    let n = sys.k.n;
    if n == 0 || count == 0 {
        return Err(FemError::EmptyMesh);
    }
    let sigma = -(2.0 * std::f64::consts::PI * opt.shift_hz).powi(2);
    // K - sigma M, lower triangle, for the sparse Cholesky factorisation
    let mut trip = Vec::with_capacity(sys.k.val.len() / 2 + n);
    for r in 0..n {
        let (mut pk, mut pm) = (sys.k.row_ptr[r], sys.m.row_ptr[r]);
        let (ek, em) = (sys.k.row_ptr[r + 1], sys.m.row_ptr[r + 1]);
        // both rows are sorted by column; M's pattern is a subset of K's
        while pk < ek {
            let c = sys.k.col[pk];
            let mut v = sys.k.val[pk];
            while pm < em && sys.m.col[pm] < c {
                pm += 1;
            }
            if pm < em && sys.m.col[pm] == c {
                v -= sigma * sys.m.val[pm];
            }
            if r >= c {
                trip.push(Triplet::new(r, c, v));
            }
            pk += 1;
        }
    }
    let a = SparseColMat::<usize, f64>::try_new_from_triplets(n, n, &trip)
        .map_err(|e| FemError::Sparse(format!("{e:?}")))?;
    drop(trip);
    let llt = a.sp_cholesky(Side::Lower).map_err(|_| FemError::NotPositiveDefinite)?;
    let apply = |x: &[f64], out: &mut Vec<f64>| {
        sys.m.mul(x, out);
        llt.solve_in_place(MatMut::from_column_major_slice_mut(out.as_mut_slice(), n, 1));
    };

    // rigid-body modes, M-orthonormalised
    let mut rigid: Vec<Vec<f64>> = Vec::new();
    let mut rigid_m: Vec<Vec<f64>> = Vec::new();
    for r in 0..6 {
        let mut v = vec![0.0; n];
        for (i, p) in mesh.nodes.iter().enumerate() {
            let u = match r {
                0 => [1.0, 0.0, 0.0],
                1 => [0.0, 1.0, 0.0],
                2 => [0.0, 0.0, 1.0],
                3 => [0.0, -p[2], p[1]],
                4 => [p[2], 0.0, -p[0]],
                _ => [-p[1], p[0], 0.0],
            };
            v[3 * i..3 * i + 3].copy_from_slice(&u);
        }
        let mut mv = vec![0.0; n];
        for _ in 0..2 {
            sys.m.mul(&v, &mut mv);
            for (q, _) in rigid.iter().zip(&rigid_m) {
                let c = dotp(q, &mv);
                axpy(-c, q, &mut v);
            }
        }
        sys.m.mul(&v, &mut mv);
        let norm = dotp(&v, &mv).sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        mv.iter_mut().for_each(|x| *x /= norm);
        rigid.push(v);
        rigid_m.push(mv);
    }

    let mut q: Vec<Vec<f64>> = Vec::new();
    let mut mq: Vec<Vec<f64>> = Vec::new();
    // coefficients: column j holds MQ_i . W_j for every i (zero beyond the basis at the time)
    let mut coef: Vec<Vec<f64>> = Vec::new();
    let mut scratch = vec![0.0; n];
    // Orthonormalises v against the rigid modes and the basis; returns the coefficients
    // against the basis and pushes v if it is new.
    let mut add = |mut v: Vec<f64>, q: &mut Vec<Vec<f64>>, mq: &mut Vec<Vec<f64>>| -> Vec<f64> {
        let mut c = vec![0.0; q.len()];
        sys.m.mul(&v, &mut scratch);
        let norm0 = dotp(&v, &scratch).sqrt();
        for _ in 0..2 {
            for rm in rigid_m.iter().zip(&rigid) {
                let a = dotp(rm.0, &v);
                axpy(-a, rm.1, &mut v);
            }
            for (i, (qi, mqi)) in q.iter().zip(mq.iter()).enumerate() {
                let a = dotp(mqi, &v);
                c[i] += a;
                axpy(-a, qi, &mut v);
            }
        }
        sys.m.mul(&v, &mut scratch);
        let norm = dotp(&v, &scratch).sqrt();
        if norm > 1e-10 * norm0 && norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
            let mv: Vec<f64> = scratch.iter().map(|x| x / norm).collect();
            q.push(v);
            mq.push(mv);
            c.push(norm);
        }
        c
    };
    // deterministic start block
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..opt.block {
        let v: Vec<f64> = (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            })
            .collect();
        add(v, &mut q, &mut mq);
    }
    let wanted = count.min(n.saturating_sub(6));
    let max_basis = opt.max_basis.min(n - 6);
    let mut next_check = wanted + 2 * opt.block;
    let mut out = vec![0.0; n];
    let mut k = 0;
    loop {
        if k < q.len() && k < max_basis {
            apply(&q[k], &mut out);
            let c = add(out.clone(), &mut q, &mut mq);
            coef.push(c);
            k += 1;
            if k < next_check && k < q.len() {
                continue;
            }
        }
        next_check = k + 20.max(k / 5);
        // Rayleigh–Ritz on span(Q[..k])
        let h = Mat::<f64>::from_fn(k, k, |i, j| 0.5 * (get(&coef, i, j) + get(&coef, j, i)));
        let evd = h.self_adjoint_eigen(Side::Lower).map_err(|_| FemError::Dense)?;
        let theta: Vec<f64> = (0..k).map(|i| evd.S()[i]).collect();
        let u = evd.U();
        let mut order: Vec<usize> = (0..k).collect();
        order.sort_by(|&a, &b| theta[b].total_cmp(&theta[a]));
        let take = wanted.min(k);
        let mut converged = 0;
        for &idx in order.iter().take(take) {
            // residual lives in the basis vectors beyond k
            let mut r2 = 0.0;
            for i in k..q.len() {
                let s: f64 = (0..k).map(|j| get(&coef, i, j) * u[(j, idx)]).sum();
                r2 += s * s;
            }
            if r2.sqrt() <= opt.tolerance * theta[idx].abs() {
                converged += 1;
            } else {
                break;
            }
        }
        let exhausted = k >= q.len() || k >= max_basis;
        if converged >= wanted {
            let mut modes = Modes {
                freqs_hz: Vec::with_capacity(wanted),
                shapes: Vec::with_capacity(wanted),
            };
            for &idx in order.iter().take(wanted) {
                let lambda = sigma + 1.0 / theta[idx];
                modes
                    .freqs_hz
                    .push(lambda.max(0.0).sqrt() / (2.0 * std::f64::consts::PI));
                let mut x = vec![0.0; n];
                for j in 0..k {
                    axpy(u[(j, idx)], &q[j], &mut x);
                }
                modes.shapes.push(x);
            }
            return Ok(modes);
        }
        if exhausted {
            return Err(FemError::NoConvergence {
                converged,
                wanted,
                basis: k,
            });
        }
    }
}

fn get(coef: &[Vec<f64>], i: usize, j: usize) -> f64 {
    coef[j].get(i).copied().unwrap_or(0.0)
}

//! Element matrices of the 10-node (quadratic) tetrahedron for isotropic linear elasticity.
//!
//! Thesis (seed 000) ch. 3 (after O'Brien et al.): the stiffness matrix K and mass matrix M
//! of eq. 3.3–3.4 are assembled from per-element matrices,
//! `K_e = \int B^T D B dV` (strain–displacement matrix B, isotropic elasticity D) and the
//! consistent mass `M_e = rho \int N^T N dV`. The thesis uses linear tetrahedra; quadratic
//! ones are used here because they represent pure bending exactly, so thin cup walls one
//! element thick do not lock.
//!
//! Shape functions in barycentric coordinates L: corners `N_a = L_a (2 L_a - 1)`, edge
//! (a, b) `N = 4 L_a L_b`. With straight edges the map is affine, gradients of N are
//! linear, `B^T D B` is quadratic and the 4-point Gauss rule integrates K exactly; M (degree
//! 4) is integrated exactly with `\int L^p dV = 6 V p1! p2! p3! p4! / (|p| + 3)!`.

use crate::mesh::{tet_volume, EDGES};

/// Isotropic elastic solid in SI units.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Material {
    /// Young's modulus, Pa.
    pub youngs_pa: f64,
    pub poisson: f64,
    /// Density, kg/m^3.
    pub density: f64,
}

/// Gradients of the four barycentric coordinates (constant over the element) and volume.
pub fn barycentric_gradients(x: [[f64; 3]; 4]) -> ([[f64; 3]; 4], f64) {
    // J = [x1 - x0, x2 - x0, x3 - x0] (columns); the rows of J^-1 are grad L1..L3.
    let c = |a: usize, d: usize| x[a + 1][d] - x[0][d];
    let j = [
        [c(0, 0), c(1, 0), c(2, 0)],
        [c(0, 1), c(1, 1), c(2, 1)],
        [c(0, 2), c(1, 2), c(2, 2)],
    ];
    let det = j[0][0] * (j[1][1] * j[2][2] - j[1][2] * j[2][1]) - j[0][1] * (j[1][0] * j[2][2] - j[1][2] * j[2][0])
        + j[0][2] * (j[1][0] * j[2][1] - j[1][1] * j[2][0]);
    let inv = |r: usize, s: usize| {
        // (J^-1)[r][s] = cofactor(s, r) / det
        let (a0, a1) = ((s + 1) % 3, (s + 2) % 3);
        let (b0, b1) = ((r + 1) % 3, (r + 2) % 3);
        (j[a0][b0] * j[a1][b1] - j[a0][b1] * j[a1][b0]) / det
    };
    let mut g = [[0.0; 3]; 4];
    for r in 0..3 {
        for s in 0..3 {
            g[r + 1][s] = inv(r, s);
        }
    }
    for s in 0..3 {
        g[0][s] = -(g[1][s] + g[2][s] + g[3][s]);
    }
    (g, tet_volume(x).abs())
}

/// Gradients of the ten shape functions at barycentric point `l`.
fn shape_gradients(gl: &[[f64; 3]; 4], l: [f64; 4]) -> [[f64; 3]; 10] {
    let mut g = [[0.0; 3]; 10];
    for a in 0..4 {
        for d in 0..3 {
            g[a][d] = (4.0 * l[a] - 1.0) * gl[a][d];
        }
    }
    for (e, &(a, b)) in EDGES.iter().enumerate() {
        for d in 0..3 {
            g[4 + e][d] = 4.0 * (l[a] * gl[b][d] + l[b] * gl[a][d]);
        }
    }
    g
}

/// Isotropic elasticity matrix (Voigt order xx, yy, zz, yz, xz, xy; engineering shear).
pub fn elasticity(m: &Material) -> [[f64; 6]; 6] {
    let (e, nu) = (m.youngs_pa, m.poisson);
    let lambda = e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
    let mu = e / (2.0 * (1.0 + nu));
    let mut d = [[0.0; 6]; 6];
    for a in 0..3 {
        for b in 0..3 {
            d[a][b] = lambda + if a == b { 2.0 * mu } else { 0.0 };
        }
        d[a + 3][a + 3] = mu;
    }
    d
}

/// Element stiffness matrix (30 x 30, dof `3 * node + axis`), thesis eq. 3.3.
pub fn stiffness(x: [[f64; 3]; 4], d: &[[f64; 6]; 6]) -> Box<[[f64; 30]; 30]> {
    let (gl, vol) = barycentric_gradients(x);
    let (a, b) = (0.585_410_196_624_968_5, 0.138_196_601_125_010_5);
    let points = [[a, b, b, b], [b, a, b, b], [b, b, a, b], [b, b, b, a]];
    let mut k = Box::new([[0.0; 30]; 30]);
    for l in points {
        let g = shape_gradients(&gl, l);
        // B: 6 x 30
        let mut bm = [[0.0; 30]; 6];
        for (n, gn) in g.iter().enumerate() {
            let c = 3 * n;
            bm[0][c] = gn[0];
            bm[1][c + 1] = gn[1];
            bm[2][c + 2] = gn[2];
            bm[3][c + 1] = gn[2];
            bm[3][c + 2] = gn[1];
            bm[4][c] = gn[2];
            bm[4][c + 2] = gn[0];
            bm[5][c] = gn[1];
            bm[5][c + 1] = gn[0];
        }
        let mut db = [[0.0; 30]; 6];
        for r in 0..6 {
            for c in 0..30 {
                db[r][c] = (0..6).map(|s| d[r][s] * bm[s][c]).sum();
            }
        }
        let w = vol / 4.0;
        for r in 0..30 {
            for c in 0..30 {
                let mut s = 0.0;
                for q in 0..6 {
                    s += bm[q][r] * db[q][c];
                }
                k[r][c] += w * s;
            }
        }
    }
    k
}

/// `\int N_a N_b dV` for a unit-volume tetrahedron (10 x 10), computed exactly.
pub fn unit_mass() -> [[f64; 10]; 10] {
    // each shape function as a sum of (coefficient, exponents of L0..L3)
    let mut poly: Vec<Vec<(f64, [u32; 4])>> = Vec::new();
    for a in 0..4 {
        let mut p2 = [0; 4];
        p2[a] = 2;
        let mut p1 = [0; 4];
        p1[a] = 1;
        poly.push(vec![(2.0, p2), (-1.0, p1)]);
    }
    for &(a, b) in &EDGES {
        let mut p = [0; 4];
        p[a] = 1;
        p[b] = 1;
        poly.push(vec![(4.0, p)]);
    }
    let fact = |n: u32| (1..=n).map(f64::from).product::<f64>();
    let mut m = [[0.0; 10]; 10];
    for a in 0..10 {
        for b in 0..10 {
            let mut s = 0.0;
            for (ca, pa) in &poly[a] {
                for (cb, pb) in &poly[b] {
                    let p: [u32; 4] = [0, 1, 2, 3].map(|i| pa[i] + pb[i]);
                    let num: f64 = p.iter().map(|&e| fact(e)).product();
                    s += ca * cb * 6.0 * num / fact(p.iter().sum::<u32>() + 3);
                }
            }
            m[a][b] = s;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mass_sums_to_volume_and_rigid_motion_is_free() {
        let m = unit_mass();
        let total: f64 = m.iter().flatten().sum();
        assert!((total - 1.0).abs() < 1e-12, "{total}");
        let x = [[0.0, 0.0, 0.0], [1.0, 0.1, 0.0], [0.2, 0.9, 0.1], [0.1, 0.3, 1.2]];
        let mat = Material {
            youngs_pa: 1e9,
            poisson: 0.3,
            density: 1000.0,
        };
        let k = stiffness(x, &elasticity(&mat));
        // all 10 node positions, for a rotation about z: u = (-y, x, 0)
        let mut pos = [[0.0; 3]; 10];
        pos[..4].copy_from_slice(&x);
        for (e, &(a, b)) in EDGES.iter().enumerate() {
            pos[4 + e] = [0, 1, 2].map(|d| 0.5 * (x[a][d] + x[b][d]));
        }
        let mut u = [0.0; 30];
        for n in 0..10 {
            u[3 * n] = -pos[n][1];
            u[3 * n + 1] = pos[n][0];
        }
        let ku: f64 = (0..30)
            .map(|r| (0..30).map(|c| k[r][c] * u[c]).sum::<f64>().abs())
            .sum();
        assert!(ku < 1e-3 * 1e9, "rotation strains the element: {ku}");
    }
}

//! Quadratic (10-node) tetrahedral meshes from structured hexahedral grids.
//!
//! Every hexahedron of an `(ni, nj, nk)` grid is cut into the six Kuhn (Freudenthal)
//! tetrahedra that share its main diagonal; that triangulation is conforming across
//! neighbouring cells. Grid points may be merged through a key function (periodic seams of
//! a solid of revolution, its axis): tetrahedra that collapse (two equal corners, or no
//! volume) are dropped. Edge nodes are put at the midpoints of straight edges, so every
//! element's geometric map is affine (subparametric tetrahedra).

use std::collections::HashMap;

/// Local edges of a 10-node tetrahedron: node `4 + e` sits on the edge `EDGES[e]`.
pub const EDGES: [(usize, usize); 6] = [(0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3)];

#[derive(Debug, Clone, Default)]
pub struct Mesh {
    pub nodes: Vec<[f64; 3]>,
    /// Corner nodes 0..4, then the edge nodes in the order of [`EDGES`].
    pub tets: Vec<[usize; 10]>,
}

/// Signed volume of a tetrahedron.
pub fn tet_volume(p: [[f64; 3]; 4]) -> f64 {
    let a = sub(p[1], p[0]);
    let b = sub(p[2], p[0]);
    let c = sub(p[3], p[0]);
    dot(a, cross(b, c)) / 6.0
}

pub(crate) fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub(crate) fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub(crate) fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

impl Mesh {
    /// Meshes the grid of points `point(i, j, k)`, `i <= ni`, `j <= nj`, `k <= nk`. Points
    /// with the same `key` are one node. Returns the mesh and the node id of every grid
    /// point (index `(i * (nj + 1) + j) * (nk + 1) + k`).
    pub fn from_grid(
        (ni, nj, nk): (usize, usize, usize),
        point: impl Fn(usize, usize, usize) -> [f64; 3],
        key: impl Fn(usize, usize, usize) -> (usize, usize, usize),
    ) -> (Mesh, Vec<usize>) {
        let mut mesh = Mesh::default();
        let mut ids: HashMap<(usize, usize, usize), usize> = HashMap::new();
        let mut grid = Vec::with_capacity((ni + 1) * (nj + 1) * (nk + 1));
        for i in 0..=ni {
            for j in 0..=nj {
                for k in 0..=nk {
                    let id = *ids.entry(key(i, j, k)).or_insert_with(|| {
                        mesh.nodes.push(point(i, j, k));
                        mesh.nodes.len() - 1
                    });
                    grid.push(id);
                }
            }
        }
        let at = |i: usize, j: usize, k: usize| grid[(i * (nj + 1) + j) * (nk + 1) + k];
        let mut edges: HashMap<(usize, usize), usize> = HashMap::new();
        // Kuhn simplices: walk from corner (0,0,0) to (1,1,1) one axis at a time.
        const PERMS: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        for i in 0..ni {
            for j in 0..nj {
                for k in 0..nk {
                    let mut size = 0.0f64;
                    for d in 0..3 {
                        let mut o = [i, j, k];
                        o[d] += 1;
                        let e = sub(mesh.nodes[at(o[0], o[1], o[2])], mesh.nodes[at(i, j, k)]);
                        size = size.max(dot(e, e).sqrt());
                    }
                    for perm in PERMS {
                        let mut c = [i, j, k];
                        let mut v = [at(i, j, k); 4];
                        for (s, &axis) in perm.iter().enumerate() {
                            c[axis] += 1;
                            v[s + 1] = at(c[0], c[1], c[2]);
                        }
                        if (0..4).any(|a| (a + 1..4).any(|b| v[a] == v[b])) {
                            continue;
                        }
                        let vol = tet_volume(v.map(|n| mesh.nodes[n]));
                        if vol.abs() < 1e-9 * size.powi(3) {
                            continue;
                        }
                        let mut t = [0usize; 10];
                        t[..4].copy_from_slice(&v);
                        for (e, &(a, b)) in EDGES.iter().enumerate() {
                            let key = (v[a].min(v[b]), v[a].max(v[b]));
                            t[4 + e] = *edges.entry(key).or_insert_with(|| {
                                let (p, q) = (mesh.nodes[v[a]], mesh.nodes[v[b]]);
                                mesh.nodes
                                    .push([0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1]), 0.5 * (p[2] + q[2])]);
                                mesh.nodes.len() - 1
                            });
                        }
                        mesh.tets.push(t);
                    }
                }
            }
        }
        (mesh, grid)
    }

    /// A box `[0, lx] x [0, ly] x [0, lz]` cut into `n = (nx, ny, nz)` cells.
    pub fn block([lx, ly, lz]: [f64; 3], n: (usize, usize, usize)) -> Mesh {
        let (nx, ny, nz) = n;
        Mesh::from_grid(
            n,
            |i, j, k| {
                [
                    lx * i as f64 / nx as f64,
                    ly * j as f64 / ny as f64,
                    lz * k as f64 / nz as f64,
                ]
            },
            |i, j, k| (i, j, k),
        )
        .0
    }

    /// Solid of revolution about z of the meridian grid `profile[i][j] = (r, z)`
    /// (`i` along the wall, `j` through its thickness), with `segments` cells around.
    /// Points with r = 0 lie on the axis and are shared by all azimuths.
    pub fn revolve(profile: &[Vec<[f64; 2]>], segments: usize) -> (Mesh, Vec<usize>) {
        let ni = profile.len() - 1;
        let nj = profile[0].len() - 1;
        Mesh::from_grid(
            (ni, nj, segments),
            |i, j, k| {
                let [r, z] = profile[i][j];
                let th = 2.0 * std::f64::consts::PI * k as f64 / segments as f64;
                [r * th.cos(), r * th.sin(), z]
            },
            |i, j, k| {
                if profile[i][j][0] <= 0.0 {
                    (i, j, 0)
                } else {
                    (i, j, k % segments)
                }
            },
        )
    }

    pub fn volume(&self) -> f64 {
        self.tets
            .iter()
            .map(|t| tet_volume([t[0], t[1], t[2], t[3]].map(|n| self.nodes[n])).abs())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_and_ring_volumes() {
        let m = Mesh::block([0.2, 0.01, 0.02], (5, 2, 3));
        assert!((m.volume() / (0.2 * 0.01 * 0.02) - 1.0).abs() < 1e-12);
        assert_eq!(m.tets.len(), 5 * 2 * 3 * 6);
        // a full disc (axis merged): polygon area n/2 sin(2 pi / n) R^2 times thickness
        let n = 24;
        let profile: Vec<Vec<[f64; 2]>> = (0..=4)
            .map(|i| vec![[0.01 * i as f64, 0.0], [0.01 * i as f64, 0.005]])
            .collect();
        let (disc, _) = Mesh::revolve(&profile, n);
        let poly = n as f64 / 2.0 * (2.0 * std::f64::consts::PI / n as f64).sin() * 0.04f64.powi(2) * 0.005;
        assert!((disc.volume() / poly - 1.0).abs() < 1e-9, "{} {}", disc.volume(), poly);
    }
}

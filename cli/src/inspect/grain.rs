//! `granary inspect grain --material M`: a grain as the engine renders it — its shape, size,
//! volume, mass, inertia tensor and the low-frequency far-field dipole coefficient of each
//! body axis, D_i in m³ (far field p ≈ ρ0 · D_i · cos θ · (da_i/dt)(t − r/c) / (c · r)).
//! A sphere's are closed forms: D = a³/2 (seed 002, eq. 16: p = ρ0 a³ cos θ (da/dt) / (2 c r)
//! in the far field), and a rotating sphere radiates nothing (its surface moves tangentially).
//! Other shapes (`engine::shape`) come from the precomputed assets (`assets/grains/`, seed 001
//! §4) through the engine's shape table, scaled to the grain's size and density: the dipole
//! the wave solver measured, and what a spin radiates — a dipole for a shape without a centre
//! of symmetry (the bean, the stone), otherwise only the quadrupole.

use granary_engine::base::materials::{AIR_DENSITY, SPEED_OF_SOUND};
use granary_engine::control::choices::Shape;
use granary_engine::control::params::ParamValues;
use granary_engine::derived::shape::quadratic;
use serde::Serialize;
use std::io::Write;

#[derive(clap::Args, Debug)]
pub struct GrainArgs {
    /// The grain material (an id of `grain_material`).
    #[arg(long)]
    pub material: String,
    /// The `grain_size` parameter: the material's grain size times this.
    #[arg(long, default_value_t = 1.0)]
    pub grain_size: f64,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GrainReport {
    pub material: String,
    pub shape: &'static str,
    /// What the shape is (body axes).
    pub geometry: &'static str,
    /// Diameter of the sphere of the same volume, m.
    pub diameter_m: f64,
    pub volume_m3: f64,
    pub density_kg_m3: f64,
    pub mass_kg: f64,
    /// Inertia tensor about the centre, body axes, kg m².
    pub inertia_kg_m2: [[f64; 3]; 3],
    /// Far-field dipole coefficient of each body axis's translation, m³.
    pub dipole_translation_m3: [f64; 3],
    /// The far-field dipole of a spin about each body axis, m⁴ (p ≈ ρ0 |D| cos θ' (dα/dt)
    /// / (c r) per rad/s², θ' from the dipole's own axis; zero for a centrally symmetric
    /// shape).
    pub dipole_rotation_m4: [f64; 3],
    /// The second-order far field of a spin about each axis, m⁵: the largest of `c² Q(r̂)/ρ0`
    /// over directions (`engine::shape`; p = ρ0 D (d²α/dt²) / (c² r) there).
    pub quadrupole_rotation_m5: [f64; 3],
}

/// The report of a sphere of `radius_m` and `density`.
pub fn sphere(material: &str, radius_m: f64, density: f64) -> GrainReport {
    let volume = 4.0 / 3.0 * std::f64::consts::PI * radius_m.powi(3);
    let mass = density * volume;
    // a solid sphere: I = 2/5 m a² about every axis through its centre
    let i = 0.4 * mass * radius_m * radius_m;
    let d = 0.5 * radius_m.powi(3);
    GrainReport {
        material: material.to_string(),
        shape: "sphere",
        geometry: Shape::Sphere.describe(),
        diameter_m: 2.0 * radius_m,
        volume_m3: volume,
        density_kg_m3: density,
        mass_kg: mass,
        inertia_kg_m2: [[i, 0.0, 0.0], [0.0, i, 0.0], [0.0, 0.0, i]],
        dipole_translation_m3: [d; 3],
        dipole_rotation_m4: [0.0; 3],
        quadrupole_rotation_m5: [0.0; 3],
    }
}

/// The report of a grain of `shape` (not a sphere) of equivalent-volume diameter
/// `diameter_m` and `density`, from the engine's shape table.
pub fn shaped(material: &str, shape: Shape, diameter_m: f64, density: f64) -> GrainReport {
    let t = shape.data();
    let d = diameter_m;
    let (d3, d4, d5) = (d.powi(3), d.powi(4), d.powi(5));
    let volume = t.volume_per_d3 * d3;
    let norm = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    // the largest |Q(r̂)| over directions (a Fibonacci sphere of 2000 points)
    let largest = |q: [f64; 9]| {
        let n = 2000;
        (0..n)
            .map(|i| {
                let z = 1.0 - (2.0 * i as f64 + 1.0) / n as f64;
                let rho = (1.0 - z * z).sqrt();
                let phi = i as f64 * 2.399_963_229_728_653;
                let b = quadratic([rho * phi.cos(), rho * phi.sin(), z].map(|x| x as f32));
                q.iter().zip(b).map(|(a, b)| a * b as f64).sum::<f64>().abs()
            })
            .fold(0.0f64, f64::max)
    };
    let c = SPEED_OF_SOUND as f64;
    let rho0 = AIR_DENSITY as f64;
    GrainReport {
        material: material.to_string(),
        shape: shape.id(),
        geometry: shape.describe(),
        diameter_m: d,
        volume_m3: volume,
        density_kg_m3: density,
        mass_kg: density * volume,
        inertia_kg_m2: t.inertia_per_d5.map(|r| r.map(|x| x * d5 * density)),
        dipole_translation_m3: [0, 1, 2].map(|i| t.dipole_per_d3[i][i] * d3),
        dipole_rotation_m4: t.far_r.map(|r| norm(r) * d4 * c / rho0),
        quadrupole_rotation_m5: t.quad_r.map(|q| largest(q) * d5 * c * c / rho0),
    }
}

pub fn report(args: &GrainArgs) -> Result<GrainReport, String> {
    let mut v = ParamValues::default();
    v.set_text("grain_material", &args.material)
        .map_err(|e| format!("--material: {e}"))?;
    v.set_text("grain_size", &args.grain_size.to_string())
        .map_err(|e| format!("--grain-size: {e}"))?;
    let s = v.to_settings();
    let (radius, density) = (s.grain_radius_m() as f64, s.grain_density() as f64);
    Ok(match Shape::of(s.grain_material) {
        Shape::Sphere => sphere(&args.material, radius, density),
        shape => shaped(&args.material, shape, 2.0 * radius, density),
    })
}

pub fn run(args: &GrainArgs, out: &mut dyn Write) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let r = report(args)?;
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?).map_err(io)?;
        return Ok(());
    }
    writeln!(out, "{}: a rigid {} ({})", r.material, r.shape, r.geometry).map_err(io)?;
    let rows = [
        ("equivalent-volume diameter", r.diameter_m, "m"),
        ("volume", r.volume_m3, "m^3"),
        ("density", r.density_kg_m3, "kg/m^3"),
        ("mass", r.mass_kg, "kg"),
    ];
    for (what, value, unit) in rows {
        writeln!(out, "{what:<40}{value:.4e} {unit}").map_err(io)?;
    }
    for (axis, row) in ["x", "y", "z"].iter().zip(r.inertia_kg_m2) {
        let what = format!("inertia tensor, row {axis}");
        writeln!(out, "{what:<40}{:.4e} {:.4e} {:.4e} kg m^2", row[0], row[1], row[2]).map_err(io)?;
    }
    let how = if r.shape == "sphere" {
        "a^3/2: seed 002 eq. 16"
    } else {
        "from the wave solver, assets/grains"
    };
    for (i, axis) in ["x", "y", "z"].iter().enumerate() {
        let what = format!("dipole coefficient D_{axis}");
        writeln!(
            out,
            "{what:<40}{:.4e} m^3 (translation, {how})",
            r.dipole_translation_m3[i]
        )
        .map_err(io)?;
    }
    for (i, axis) in ["x", "y", "z"].iter().enumerate() {
        let what = format!("spin about {axis}");
        writeln!(
            out,
            "{what:<40}dipole {:.3e} m^4, quadrupole {:.3e} m^5",
            r.dipole_rotation_m4[i], r.quadrupole_rotation_m5[i]
        )
        .map_err(io)?;
    }
    writeln!(out, "far field: p = rho0 D_i cos(theta) (da_i/dt)(t - r/c) / (c r)").map_err(io)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sphere_by_hand() {
        // a 2 mm glass bead of 2500 kg/m^3: V = 4/3 pi (1e-3)^3 = 4.18879e-9 m^3
        let r = sphere("glass", 1e-3, 2500.0);
        assert!((r.volume_m3 / 4.188_790_2e-9 - 1.0).abs() < 1e-7);
        assert!((r.mass_kg / 1.047_197_6e-5 - 1.0).abs() < 1e-7);
        assert!((r.inertia_kg_m2[2][2] / (0.4 * 1.047_197_6e-5 * 1e-6) - 1.0).abs() < 1e-7);
        assert_eq!(r.inertia_kg_m2[0][1], 0.0);
        assert_eq!(r.dipole_translation_m3, [5e-10; 3]);
        assert_eq!(r.dipole_rotation_m4, [0.0; 3]);
    }

    #[test]
    fn shaped_grains_carry_their_assets_dipoles() {
        let args = |m: &str| GrainArgs {
            material: m.into(),
            grain_size: 1.0,
            json: false,
        };
        // rice: a prolate spheroid, long axis x, pushed broadside it radiates more (Lamb's
        // added mass, docs/grains.md: D 9.95e-10 m^3 along x, 1.73e-9 across)
        let rice = report(&args("rice")).unwrap();
        assert_eq!(rice.shape, "rice");
        assert!((rice.dipole_translation_m3[0] / 9.947e-10 - 1.0).abs() < 1e-3);
        assert!((rice.dipole_translation_m3[1] / 1.7306e-9 - 1.0).abs() < 1e-3);
        // equal volume: the 2.8 mm sphere's mass; inertia smallest about the long axis
        let v = std::f64::consts::PI / 6.0 * 2.8e-3f64.powi(3);
        assert!((rice.volume_m3 / v - 1.0).abs() < 1e-3);
        assert!(rice.inertia_kg_m2[0][0] < 0.2 * rice.inertia_kg_m2[1][1]);
        // centrally symmetric: its spins push no dipole, but spun across its length it
        // radiates a quadrupole; spun about its length, nothing
        assert!(rice.dipole_rotation_m4.iter().all(|&x| x < 1e-9 * 1.7e-9 * 2.8e-3));
        assert!(rice.quadrupole_rotation_m5[1] > 1e6 * rice.quadrupole_rotation_m5[0]);
        // the bean has no centre of symmetry: a spin pushes a dipole
        let bean = report(&args("coffee_beans")).unwrap();
        assert!(bean.dipole_rotation_m4[0] > 1e-3 * bean.dipole_translation_m3[0] * 7e-3);
        // glass beads stay exact spheres
        let glass = report(&args("glass_beads_1mm")).unwrap();
        assert_eq!(glass.shape, "sphere");
        let a = glass.diameter_m / 2.0;
        assert!((glass.dipole_translation_m3[2] / (0.5 * a.powi(3)) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_engine_grain_and_bad_input() {
        let r = report(&GrainArgs {
            material: "rice".into(),
            grain_size: 2.0,
            json: false,
        })
        .unwrap();
        let one = report(&GrainArgs {
            material: "rice".into(),
            grain_size: 1.0,
            json: false,
        })
        .unwrap();
        assert!((r.diameter_m / one.diameter_m - 2.0).abs() < 1e-6);
        assert!((r.dipole_translation_m3[0] / one.dipole_translation_m3[0] - 8.0).abs() < 1e-5);
        let e = report(&GrainArgs {
            material: "gold".into(),
            grain_size: 1.0,
            json: false,
        })
        .unwrap_err();
        assert!(e.starts_with("--material"), "{e}");
        let e = report(&GrainArgs {
            material: "rice".into(),
            grain_size: -1.0,
            json: false,
        })
        .unwrap_err();
        assert!(e.starts_with("--grain-size"), "{e}");
    }
}

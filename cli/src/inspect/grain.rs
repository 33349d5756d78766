//! `granary inspect grain --material M`: a grain as the engine renders it — its shape, size,
//! volume, mass, inertia tensor and the low-frequency far-field dipole coefficient of each
//! body axis, D_i in m³ (far field p ≈ ρ0 · D_i · cos θ · (da_i/dt)(t − r/c) / (c · r)).
//! Every grain is a rigid sphere today; the dipole coefficient of a translating sphere is
//! D = a³/2 (seed 002, eq. 16: p = ρ0 a³ cos θ (da/dt) / (2 c r) in the far field) and a
//! rotating sphere radiates nothing (its surface moves tangentially).

use granary_engine::params::ParamValues;
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
    /// Diameter, m.
    pub diameter_m: f64,
    pub volume_m3: f64,
    pub density_kg_m3: f64,
    pub mass_kg: f64,
    /// Inertia tensor about the centre, body axes, kg m².
    pub inertia_kg_m2: [[f64; 3]; 3],
    /// Far-field dipole coefficient of each body axis's translation, m³.
    pub dipole_translation_m3: [f64; 3],
    /// ... and of each rotation, m³ (a sphere's: 0).
    pub dipole_rotation_m3: [f64; 3],
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
        diameter_m: 2.0 * radius_m,
        volume_m3: volume,
        density_kg_m3: density,
        mass_kg: mass,
        inertia_kg_m2: [[i, 0.0, 0.0], [0.0, i, 0.0], [0.0, 0.0, i]],
        dipole_translation_m3: [d; 3],
        dipole_rotation_m3: [0.0; 3],
    }
}

pub fn report(args: &GrainArgs) -> Result<GrainReport, String> {
    let mut v = ParamValues::default();
    v.set_text("grain_material", &args.material)
        .map_err(|e| format!("--material: {e}"))?;
    v.set_text("grain_size", &args.grain_size.to_string())
        .map_err(|e| format!("--grain-size: {e}"))?;
    let s = v.to_settings();
    Ok(sphere(
        &args.material,
        s.grain_radius_m() as f64,
        s.grain_density() as f64,
    ))
}

pub fn run(args: &GrainArgs, out: &mut dyn Write) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let r = report(args)?;
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?).map_err(io)?;
        return Ok(());
    }
    writeln!(out, "{}: a rigid {} (every grain is one today)", r.material, r.shape).map_err(io)?;
    let rows = [
        ("diameter", r.diameter_m, "m"),
        ("volume", r.volume_m3, "m^3"),
        ("density", r.density_kg_m3, "kg/m^3"),
        ("mass", r.mass_kg, "kg"),
        ("inertia about each axis (2/5 m a^2)", r.inertia_kg_m2[0][0], "kg m^2"),
    ];
    for (what, value, unit) in rows {
        writeln!(out, "{what:<40}{value:.4e} {unit}").map_err(io)?;
    }
    for (axis, (t, rot)) in ["x", "y", "z"]
        .iter()
        .zip(r.dipole_translation_m3.iter().zip(r.dipole_rotation_m3))
    {
        let what = format!("dipole coefficient D_{axis}");
        writeln!(
            out,
            "{what:<40}{t:.4e} m^3 (translation, a^3/2: seed 002 eq. 16), {rot:.1} (rotation)"
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
        assert_eq!(r.dipole_rotation_m3, [0.0; 3]);
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

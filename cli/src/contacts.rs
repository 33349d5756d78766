//! Contact files for `granary render --collisions FILE`: a CSV list of logged contacts
//! (a rigid-body simulation's, an animation's) that Granary renders through its collision
//! physics. The format is documented in `docs/contacts.md`; an example ships in
//! `examples/contacts/`.
//!
//! One contact a row, a header naming the columns (any order; `#` starts a comment line):
//! `time_s, x_m, y_m, z_m, nx, ny, nz, speed_m_s, body_a, material_a, body_b, material_b`.
//! One body is a grain; the other a grain, the cup or the surface. The file sets the
//! render's materials: one grain material (the engine renders one), one cup material and one
//! surface material at most.

use granary_engine::control::params::{ParamValues, CUP_IDS, GRAIN_IDS, SURFACE_IDS};
use granary_engine::statistics::logged::{Body, Contact, COLUMNS};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Deserialize)]
struct Row {
    time_s: f64,
    x_m: f64,
    y_m: f64,
    z_m: f64,
    nx: f64,
    ny: f64,
    nz: f64,
    speed_m_s: f64,
    body_a: String,
    material_a: String,
    body_b: String,
    material_b: String,
}

/// A contact file's contents.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactFile {
    pub contacts: Vec<Contact>,
    /// The grain material's id, and the cup's and surface's if any contact touches them.
    pub grain: String,
    pub cup: Option<String>,
    pub surface: Option<String>,
}

/// Largest contact file read, bytes (a million contacts take about 100 MB).
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// A file's content as 16 hex digits (FNV-1a, 64 bits): enough to tell that a contact file
/// changed since a take was rendered from it, not a cryptographic check.
pub fn digest(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

impl ContactFile {
    /// Reads and checks `path` (errors name the file and the line).
    pub fn read(path: &Path) -> Result<ContactFile, String> {
        ContactFile::read_with_digest(path).map(|(f, _)| f)
    }

    /// Reads and checks `path`, a regular file of at most [`MAX_FILE_BYTES`], and its
    /// content's digest ([`digest`]): what a take keeps to know the file again.
    pub fn read_with_digest(path: &Path) -> Result<(ContactFile, String), String> {
        let name = path.display();
        let meta = std::fs::metadata(path).map_err(|e| format!("{name}: {}", crate::output::io_message(&e)))?;
        if !meta.is_file() {
            return Err(format!("{name}: not a regular file"));
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(format!(
                "{name}: {} bytes, more than a contact file's {MAX_FILE_BYTES}",
                meta.len()
            ));
        }
        let text = std::fs::read(path).map_err(|e| format!("{name}: {}", crate::output::io_message(&e)))?;
        let file = ContactFile::parse(&text).map_err(|e| format!("{name}: {e}"))?;
        Ok((file, digest(&text)))
    }

    /// Parses a contact file's bytes; an error names the line.
    pub fn parse(text: &[u8]) -> Result<ContactFile, String> {
        let mut reader = csv::ReaderBuilder::new()
            .comment(Some(b'#'))
            .trim(csv::Trim::All)
            .from_reader(text);
        let headers = reader.headers().map_err(|e| format!("the header: {e}"))?.clone();
        for column in COLUMNS {
            if !headers.iter().any(|h| h == column) {
                return Err(format!(
                    "the header has no column `{column}` (the columns: {})",
                    COLUMNS.join(",")
                ));
            }
        }
        let mut file = ContactFile {
            contacts: Vec::new(),
            grain: String::new(),
            cup: None,
            surface: None,
        };
        for record in reader.records() {
            let record = record.map_err(|e| match e.position() {
                Some(p) => format!("line {}: {e}", p.line()),
                None => e.to_string(),
            })?;
            let line = record.position().map_or(0, |p| p.line());
            let row: Row = record
                .deserialize(Some(&headers))
                .map_err(|e| format!("line {line}: {}", deserialize_message(&e, &headers, &record)))?;
            file.add(&row).map_err(|e| format!("line {line}: {e}"))?;
        }
        if file.contacts.is_empty() {
            return Err("no contacts (a header and no rows)".into());
        }
        Ok(file)
    }

    fn add(&mut self, row: &Row) -> Result<(), String> {
        let body = |name: &str| {
            Body::parse(name).ok_or_else(|| format!("body `{name}`: one of {}", Body::ALL.map(Body::name).join(", ")))
        };
        let (a, b) = (body(&row.body_a)?, body(&row.body_b)?);
        Contact::check_values(
            row.time_s,
            [row.x_m, row.y_m, row.z_m],
            [row.nx, row.ny, row.nz],
            row.speed_m_s,
        )?;
        // a unit vector in f64 first: components that an f32 sum of squares would overflow
        let len = (row.nx * row.nx + row.ny * row.ny + row.nz * row.nz).sqrt();
        let mut normal = [row.nx, row.ny, row.nz].map(|x| (x / len) as f32);
        // the grain first; the normal is the direction the grain is pushed
        let (other, grain_material, other_material) = match (a, b) {
            (Body::Grain, other) => (other, &row.material_a, &row.material_b),
            (other, Body::Grain) => {
                normal = normal.map(|x| -x);
                (other, &row.material_b, &row.material_a)
            }
            _ => return Err(format!("{} on {}: one body must be a grain", row.body_a, row.body_b)),
        };
        let grain = known("grain", grain_material, &GRAIN_IDS)?;
        match other {
            Body::Grain => {
                let o = known("grain", other_material, &GRAIN_IDS)?;
                if o != grain {
                    return Err(format!(
                        "grains of {grain} and {o}: the grains of one file are of one material"
                    ));
                }
            }
            Body::Cup => same(&mut self.cup, "cup", known("cup", other_material, &CUP_IDS)?)?,
            Body::Surface => same(
                &mut self.surface,
                "surface",
                known("surface", other_material, &SURFACE_IDS)?,
            )?,
        }
        if self.grain.is_empty() {
            self.grain = grain.to_string();
        } else if self.grain != grain {
            return Err(format!(
                "grain material {grain}, but earlier rows have {}: the grains of one file are of one material",
                self.grain
            ));
        }
        let contact = Contact {
            time_s: row.time_s,
            position_m: [row.x_m, row.y_m, row.z_m].map(|x| x as f32),
            normal,
            speed_m_s: row.speed_m_s as f32,
            other,
        };
        self.contacts.push(contact);
        Ok(())
    }

    /// `values` with the file's materials.
    pub fn apply(&self, values: &mut ParamValues) -> Result<(), String> {
        let mut set = |id: &str, v: &str| values.set_text(id, v).map_err(|e| format!("{id}: {e}"));
        set("grain_material", &self.grain)?;
        if let Some(c) = &self.cup {
            set("cup_material", c)?;
        }
        if let Some(s) = &self.surface {
            set("surface_material", s)?;
        }
        Ok(())
    }

    /// The file's materials, as the render's summary names them: "glass_beads_2mm grains,
    /// ceramic cup, concrete surface".
    pub fn materials(&self) -> String {
        let mut m = vec![format!("{} grains", self.grain)];
        m.extend(self.cup.iter().map(|c| format!("{c} cup")));
        m.extend(self.surface.iter().map(|s| format!("{s} surface")));
        m.join(", ")
    }

    /// Time of the last contact, s.
    pub fn last_s(&self) -> f64 {
        self.contacts.iter().map(|c| c.time_s).fold(0.0, f64::max)
    }
}

fn known<'a>(what: &str, name: &str, ids: &[&'a str]) -> Result<&'a str, String> {
    let lower = name.to_ascii_lowercase();
    ids.iter()
        .find(|&&id| id == lower)
        .copied()
        .ok_or_else(|| format!("{what} material `{name}`: one of {}", ids.join(", ")))
}

fn same(slot: &mut Option<String>, what: &str, id: &str) -> Result<(), String> {
    match slot {
        Some(s) if s != id => Err(format!(
            "{what} material {id}, but earlier rows have {s}: one {what} a file"
        )),
        Some(_) => Ok(()),
        None => {
            *slot = Some(id.to_string());
            Ok(())
        }
    }
}

/// A CSV deserialisation error without its position (the caller names the line), with the
/// column and the text found there.
fn deserialize_message(e: &csv::Error, headers: &csv::StringRecord, record: &csv::StringRecord) -> String {
    match e.kind() {
        csv::ErrorKind::Deserialize { err, .. } => match err.field().map(|i| i as usize) {
            Some(i) => format!(
                "column `{}` (column {}): `{}`: {}",
                headers.get(i).unwrap_or("?"),
                i + 1,
                record.get(i).unwrap_or(""),
                err.kind()
            ),
            None => err.kind().to_string(),
        },
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "time_s,x_m,y_m,z_m,nx,ny,nz,speed_m_s,body_a,material_a,body_b,material_b\n";

    #[test]
    fn a_good_file() {
        let text = format!(
            "# two contacts\n{HEADER}0.1,0,0,0,0,0,1,1.2,grain,glass_beads_2mm,cup,ceramic\n\
             0.2,0,0,0.01,0,0,1,0.5,cup,ceramic,grain,glass_beads_2mm\n"
        );
        let f = ContactFile::parse(text.as_bytes()).unwrap();
        assert_eq!(f.contacts.len(), 2);
        assert_eq!(f.grain, "glass_beads_2mm");
        assert_eq!(f.cup.as_deref(), Some("ceramic"));
        // the cup first: the normal turned towards the grain
        assert_eq!(f.contacts[1].normal, [0.0, 0.0, -1.0]);
        assert_eq!(f.last_s(), 0.2);
    }

    #[test]
    fn errors_name_the_line() {
        let row = "0.1,0,0,0,0,0,1,1.2,grain,glass_beads_2mm,cup,ceramic\n";
        for (bad, says) in [
            ("0.1,0,0,0,0,0,1,fast,grain,glass_beads_2mm,cup,ceramic\n", "line 3"),
            ("0.1,0,0,0,0,0,1,1.2,grain,glass_beads_2mm,cup\n", "line 3"),
            ("0.1,0,0,0,0,0,1,1.2,cup,ceramic,cup,ceramic\n", "line 3: cup on cup"),
            (
                "0.1,0,0,0,0,0,1,1.2,grain,gold,cup,ceramic\n",
                "line 3: grain material `gold`",
            ),
            (
                "0.1,0,0,0,0,0,1,1.2,grain,sugar,cup,ceramic\n",
                "line 3: grain material sugar",
            ),
            (
                "0.1,0,0,0,0,0,1,1.2,grain,glass_beads_2mm,cup,steel\n",
                "line 3: cup material steel",
            ),
            (
                "0.1,0,0,0,0,0,0,1.2,grain,glass_beads_2mm,cup,ceramic\n",
                "line 3: normal (0, 0, 0)",
            ),
            ("-1,0,0,0,0,0,1,1.2,grain,glass_beads_2mm,cup,ceramic\n", "line 3: time"),
            (
                "0.1,0,0,0,0,0,1,0,grain,glass_beads_2mm,cup,ceramic\n",
                "line 3: speed 0 m/s",
            ),
            // what was written, not what an f32 makes of it, and the bounds with their reason
            (
                "0.1,0,0,0,0,0,1,1e-300,grain,glass_beads_2mm,cup,ceramic\n",
                "line 3: speed 1e-300 m/s: must be within 1e-6..=100 m/s",
            ),
            (
                "0.1,0,0,0,0,0,1,1e30,grain,glass_beads_2mm,cup,ceramic\n",
                "line 3: speed 1e30 m/s: must be within 1e-6..=100 m/s",
            ),
            (
                "0.1,0,0,0,0,0,1,inf,grain,glass_beads_2mm,cup,ceramic\n",
                "line 3: speed inf m/s: must be within",
            ),
            (
                "0.1,1e30,0,0,0,0,1,1.2,grain,glass_beads_2mm,cup,ceramic\n",
                "line 3: x = 1e30 m: a contact must be within ±10 m",
            ),
            (
                "0.1,0,0,0,0,0,1,fast,grain,glass_beads_2mm,cup,ceramic\n",
                "line 3: column `speed_m_s` (column 8): `fast`:",
            ),
        ] {
            let text = format!("{HEADER}{row}{bad}");
            let e = ContactFile::parse(text.as_bytes()).unwrap_err();
            assert!(e.starts_with(says), "{bad}: {e}");
        }
        let e = ContactFile::parse(b"time_s,x_m\n0,0\n").unwrap_err();
        assert!(e.contains("no column `y_m`"), "{e}");
        let e = ContactFile::parse(HEADER.as_bytes()).unwrap_err();
        assert!(e.contains("no contacts"), "{e}");
    }
}

//! What a sound library reads of a take: its description in words, its iXML (the whole take,
//! so that `granary render --from TAKE.wav` renders it again), its originator reference and
//! date, and, with `--name-style ucs`, its name by the Universal Category System.
//!
//! UCS (universalcategorysystem.com, v8.2.1, January 2024): a file is named
//! `CatID_FXName_CreatorID_SourceID(_UserData).wav`; the CatID is copied from the UCS list,
//! `_` only separates the blocks and `-` after a CatID or in an FXName has a meaning of its
//! own (a user or vendor category), so neither appears in the other blocks; FXName is a
//! short title, best under 25 characters; CreatorID names who made the sound and SourceID
//! the project or library (`NONE` if there is none) (Tim Nielsen, "UCS File Naming
//! Convention"). UCS files a sound by what sounds, not by the gesture, so a grain keeps its
//! category whether poured, stirred, shaken or tilted ([`UCS_CATEGORIES`]); the gesture and
//! the vessel go into the FXName.

use crate::bwf::{self, Head};
use crate::vary::Sidecar;
use granary_engine::control::choices::CupShape;
use granary_engine::control::params::{self, ParamValues, GESTURE_IDS, GRAIN_IDS, POUR_TARGET_IDS};
use serde::{Deserialize, Serialize};

/// `bext` Originator: Granary and its version.
pub const ORIGINATOR: &str = concat!("Granary ", env!("CARGO_PKG_VERSION"));

/// The iXML element that holds the take (the sidecar's JSON, XML-escaped).
pub const TAKE_ELEMENT: &str = "GRANARY_TAKE";

/// For each grain material: its name in an FXName (sizes left to the description) and its
/// UCS CatID when poured, stirred, shaken and tilted (in the order of `GESTURE_IDS`), from the
/// UCS v8.2.1 list and its explanations: food grains are FOOD & DRINK / INGREDIENTS ("nuts,
/// seeds, grains"); sand DIRT & SAND / MOVEMENT ("pouring, flowing of dirt or sand"); glass
/// beads GLASS / MOVEMENT (rattling, rolling, shaking); steel shot METAL / MOVEMENT ("drag,
/// roll, rattle, shake"); plastic discs PLASTIC / MOVEMENT (its terms include stir and ABS);
/// gravel ROCKS / MOVEMENT (its terms include gravel, pebbles, shake, rattle). UCS has no row
/// for pouring dry food (FOODPour is for liquids), so a food grain stays FOODIngr whatever the
/// gesture.
pub const UCS_CATEGORIES: [(&str, &str, [&str; 4]); 12] = [
    ("sugar", "Sugar", ["FOODIngr"; 4]),
    ("salt", "Salt", ["FOODIngr"; 4]),
    ("fine_sand", "Sand", ["DIRTMvmt"; 4]),
    ("rice", "Rice", ["FOODIngr"; 4]),
    ("lentils", "Lentils", ["FOODIngr"; 4]),
    ("coffee_beans", "Coffee Beans", ["FOODIngr"; 4]),
    ("glass_beads_0_5mm", "Fine Glass Beads", ["GLASMvmt"; 4]),
    ("glass_beads_1mm", "Glass Beads", ["GLASMvmt"; 4]),
    ("glass_beads_2mm", "Coarse Glass Beads", ["GLASMvmt"; 4]),
    ("steel_shot_1mm", "Steel Shot", ["METLMvmt"; 4]),
    ("plastic_discs_4mm", "Plastic Discs", ["PLASMvmt"; 4]),
    ("gravel", "Gravel", ["ROCKMvmt"; 4]),
];

/// Longest FXName UCS recommends, characters.
pub const UCS_FXNAME_LEN: usize = 25;

/// The CreatorID and SourceID of UCS names (`--ucs-creator`, `--ucs-source`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ucs {
    pub creator: String,
    pub source: String,
}

impl Ucs {
    /// Checks the ids: letters, digits and spaces, not empty (no `_`, which separates UCS's
    /// blocks, no `/`, and no `.`, which would read as the start of the extension).
    pub fn new(creator: &str, source: &str) -> Result<Ucs, String> {
        for (flag, id) in [("--ucs-creator", creator), ("--ucs-source", source)] {
            let ok = |c: char| c.is_ascii_alphanumeric() || c == ' ';
            if id.trim().is_empty() || !id.chars().all(ok) {
                return Err(format!(
                    "{flag} {id:?}: a UCS id is letters, digits and spaces (`_` separates a UCS name's blocks)"
                ));
            }
        }
        Ok(Ucs {
            creator: creator.trim().into(),
            source: source.trim().into(),
        })
    }

    /// The file name of a take of `values`: `CatID_FXName_CreatorID_SourceID.wav`, the FXName
    /// numbered when `take` is given (`(k, width)`: ` 001`).
    pub fn file_name(&self, values: &ParamValues, take: Option<(usize, usize)>) -> String {
        let grain = GRAIN_IDS[values.choice("grain_material")];
        let gesture = values.choice("gesture");
        let (words, cat) = UCS_CATEGORIES
            .iter()
            .find(|(g, _, _)| *g == grain)
            .map_or(("Grains", "FOODIngr"), |(_, w, c)| (*w, c[gesture.min(3)]));
        let verb = params::choice_name("gesture", gesture);
        let number = take.map_or(String::new(), |(k, width)| format!(" {k:0width$}"));
        let (material, vessel) = vessel(values);
        // the longest of these that fits UCS's 25 characters (the last whatever its length)
        let tries = [
            format!("{words} {verb} {material} {vessel}"),
            format!("{words} {verb} {vessel}"),
            format!("{words} {verb}"),
        ];
        let fx = tries
            .iter()
            .find(|t| t.len() + number.len() <= UCS_FXNAME_LEN)
            .unwrap_or(&tries[2]);
        let fx = title_case(&(fx.clone() + &number)).replace(['_', '-'], " ");
        format!("{cat}_{fx}_{}_{}.wav", self.creator, self.source)
    }
}

/// The vessel or surface poured into or onto, as words: ("Ceramic", "Mug"), ("Granite",
/// "Surface").
fn vessel(values: &ParamValues) -> (String, String) {
    if POUR_TARGET_IDS[values.choice("pour_target")] == "surface" {
        let m = params::choice_name("surface_material", values.choice("surface_material"));
        return (m.to_string(), "Surface".into());
    }
    let material = values.choice("cup_material");
    let shape = match params::cup_shape_choice(values.choice("cup_shape")) {
        Some(s) => s,
        None => CupShape::usual_for(granary_engine::base::materials::CupMaterial::ALL[material]),
    };
    (
        params::choice_name("cup_material", material).to_string(),
        shape.name().to_string(),
    )
}

fn title_case(text: &str) -> String {
    text.split(' ')
        .map(|w| {
            let mut c = w.chars();
            c.next().map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A number as people write it: at most `decimals` decimals, no trailing zeros.
fn num(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The take in words, as a library shows it: "Sugar poured into a ceramic mug, 20 g/s from
/// 15 cm, aim 0.3".
pub fn description(take: &Sidecar) -> String {
    let v = &take.params;
    let o = &take.render;
    let grain = params::choice_name("grain_material", v.choice("grain_material"));
    let (material, vessel) = vessel(v);
    let (material, vessel) = (material.to_lowercase(), vessel.to_lowercase());
    let onto = POUR_TARGET_IDS[v.choice("pour_target")] == "surface";
    let gesture = GESTURE_IDS[v.choice("gesture")];
    let mut text = if let Some(source) = &o.collisions {
        let file = &source.file;
        let name = std::path::Path::new(file)
            .file_name()
            .map_or(file.clone(), |f| f.to_string_lossy().into_owned());
        format!("{grain} contacts logged in {name}, with a {material} {vessel}")
    } else {
        // the curve's largest value, or the held parameter
        let peak = o.pour.as_deref().map(|text| {
            text.split(',')
                .filter_map(|p| p.split_once(':')?.1.trim().parse::<f64>().ok())
                .fold(0.0, f64::max)
        });
        let amount = |held: f64| match peak {
            Some(p) => format!("up to {}", num(p, 2)),
            None => num(held, 2),
        };
        let place = if onto {
            format!("onto {material}")
        } else {
            format!("into a {material} {vessel}")
        };
        let inside = if onto {
            format!("on {material}")
        } else {
            format!("in a {material} {vessel}")
        };
        match gesture {
            "pour" => format!(
                "{grain} poured {place}, {} g/s from {} cm, aim {}",
                amount(v.float("pour_rate") as f64),
                num(v.float("fall_height") as f64, 1),
                num(v.float("aim") as f64, 2)
            ),
            "shake" => format!(
                "{grain} shaken {inside}, {} % at {} Hz",
                amount(v.float("gesture_amount") as f64),
                num(v.float("shake_rate") as f64, 2)
            ),
            "stir" => format!(
                "{grain} stirred {inside}, {} %",
                amount(v.float("gesture_amount") as f64)
            ),
            _ => format!(
                "{grain} tilted {inside}, {} %",
                amount(v.float("gesture_amount") as f64)
            ),
        }
    };
    if !o.notes.is_empty() {
        let n = o.notes.len();
        text += &format!(", {n} MIDI note{}", if n == 1 { "" } else { "s" });
    }
    if let Some(l) = o.loop_s {
        text += &format!(", a seamless loop of {} s", num(l, 3));
    }
    text
}

/// `text` with `&`, `<`, `>` and `"` as XML entities.
pub fn xml_escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            c => s.push(c),
        }
    }
    s
}

fn xml_unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// When a file was made: UTC date `yyyy-mm-dd` and time `hh:mm:ss`, and the seconds since
/// 1970 (for the originator reference).
#[derive(Debug, Clone, PartialEq)]
pub struct Made {
    pub date: String,
    pub time: String,
    pub unix_s: i64,
}

impl Made {
    pub fn now() -> Made {
        let t = time::OffsetDateTime::now_utc();
        Made {
            date: format!("{:04}-{:02}-{:02}", t.year(), u8::from(t.month()), t.day()),
            time: format!("{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second()),
            unix_s: t.unix_timestamp(),
        }
    }
}

/// The head of one of a take's files (`stem`: `None` for the mix): its description (with
/// the stem's name), originator, a reference unique to the file, date and time, coding
/// history and iXML.
pub fn head(take: &Sidecar, stem: Option<&str>, made: &Made) -> Head {
    let mut description = description(take);
    if let Some(s) = stem {
        description += &format!(" ({s} stem)");
    }
    // Granary, when, the process, the seed, the take and the file: unique per file made (31
    // characters of the field's 32)
    let which = stem.map_or(0, |s| {
        crate::render::STEM_NAMES
            .iter()
            .position(|n| *n == s)
            .map_or(9, |i| i + 1)
    });
    let reference = format!(
        "GRN{:010}{:06}{:06}{:05}{which}",
        made.unix_s.rem_euclid(10_000_000_000),
        std::process::id() % 1_000_000,
        take.seed.rem_euclid(1_000_000),
        take.take % 100_000
    );
    let rate = take.render.sample_rate;
    let coding_history = format!("A=PCM,F={rate},W=32,M=stereo,T={ORIGINATOR} render; IEEE float\r\n");
    Head {
        ixml: ixml(take, stem, &description, &reference),
        description,
        originator: ORIGINATOR.into(),
        originator_reference: reference,
        date: made.date.clone(),
        time: made.time.clone(),
        coding_history,
    }
}

/// The iXML document of one of a take's files (iXML 2.10, ixml.info): PROJECT (Granary),
/// SCENE (the preset), TAKE (the take's number), NOTE (the description), FILE_UID (the
/// originator reference), the two tracks' names, USER (the stem and seed in words), and
/// [`TAKE_ELEMENT`] with the whole take as JSON (Granary's own element: iXML readers pass over
/// elements they do not know).
pub fn ixml(take: &Sidecar, stem: Option<&str>, description: &str, reference: &str) -> String {
    let e = xml_escape;
    let which = stem.unwrap_or("mix");
    let track = |i: usize, side: &str| {
        format!(
            "    <TRACK><CHANNEL_INDEX>{i}</CHANNEL_INDEX><INTERLEAVE_INDEX>{i}</INTERLEAVE_INDEX><NAME>{} {side}</NAME></TRACK>\n",
            e(which)
        )
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<BWFXML>\n  <IXML_VERSION>2.10</IXML_VERSION>\n  \
         <PROJECT>Granary</PROJECT>\n  <SCENE>{}</SCENE>\n  <TAKE>{}</TAKE>\n  <NOTE>{}</NOTE>\n  \
         <FILE_UID>{}</FILE_UID>\n  <TRACK_LIST>\n    <TRACK_COUNT>2</TRACK_COUNT>\n{}{}  </TRACK_LIST>\n  \
         <USER>stem={}; seed={}; take {} of {}</USER>\n  <{TAKE_ELEMENT}>{}</{TAKE_ELEMENT}>\n</BWFXML>\n",
        e(&take.preset),
        take.take,
        e(description),
        e(reference),
        track(1, "L"),
        track(2, "R"),
        e(which),
        take.seed,
        take.take,
        take.takes,
        e(take.to_json().trim_end())
    )
}

/// The take's JSON in a WAV file's iXML chunk (read with [`bwf::read_chunks`]).
pub fn take_json(chunks: &[([u8; 4], Vec<u8>)]) -> Result<String, String> {
    let xml = bwf::find(chunks, b"iXML").ok_or("no iXML chunk: not a take Granary wrote")?;
    let xml = String::from_utf8_lossy(xml);
    let open = format!("<{TAKE_ELEMENT}>");
    let close = format!("</{TAKE_ELEMENT}>");
    let start = xml
        .find(&open)
        .ok_or(format!("its iXML has no {TAKE_ELEMENT}: not a take Granary wrote"))?
        + open.len();
    let end = xml[start..]
        .find(&close)
        .ok_or(format!("its iXML's {TAKE_ELEMENT} is not closed"))?
        + start;
    Ok(xml_unescape(&xml[start..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grain_has_a_ucs_category_and_words() {
        for g in GRAIN_IDS {
            assert!(UCS_CATEGORIES.iter().any(|(id, _, _)| *id == g), "{g}");
        }
        assert_eq!(GESTURE_IDS, ["pour", "stir", "shake", "tilt"]);
    }

    #[test]
    fn ucs_names_have_four_blocks() {
        let u = Ucs::new("JD", "NONE").unwrap();
        let mut v = ParamValues::default();
        v.set_text("grain_material", "sugar").unwrap();
        v.set_text("cup_material", "ceramic").unwrap();
        assert_eq!(
            u.file_name(&v, Some((7, 2))),
            "FOODIngr_Sugar Pour Ceramic Mug 07_JD_NONE.wav"
        );
        // over 25 characters: the vessel without its material
        assert_eq!(u.file_name(&v, Some((7, 3))), "FOODIngr_Sugar Pour Mug 007_JD_NONE.wav");
        v.set_text("grain_material", "glass_beads_1mm").unwrap();
        v.set_text("gesture", "shake").unwrap();
        v.set_text("cup_material", "aluminium").unwrap();
        let name = u.file_name(&v, None);
        assert_eq!(name.split('_').count(), 4, "{name}");
        assert_eq!(name, "GLASMvmt_Glass Beads Shake_JD_NONE.wav");
        let fx = name.split('_').nth(1).unwrap();
        assert!(fx.len() <= UCS_FXNAME_LEN, "{fx}");
        assert!(Ucs::new("J_D", "NONE").unwrap_err().contains("--ucs-creator"));
        assert!(Ucs::new("JD", "").unwrap_err().contains("--ucs-source"));
    }

    #[test]
    fn xml_text_round_trips() {
        let t = "a < b && \"c\" > d";
        assert_eq!(xml_unescape(&xml_escape(t)), t);
    }
}

//! The preset browser's state: factory presets and the user's folder, search by name and
//! tag, previous/next, *Save as…* (the JSON format of `granary_engine::control::preset`), and a clear
//! message for every file that cannot be read. No egui here: `mod.rs` draws it.
//!
//! The user folder is `<data dir>/granary/presets` (the `dirs` crate): on Linux the XDG data
//! dir, `~/.local/share/granary/presets`; on macOS `~/Library/Application Support/...`; on
//! Windows `%APPDATA%\...`.

use granary_engine::control::params::{ParamValues, Plain};
use granary_engine::control::preset;
use granary_engine::control::preset::Preset;
use std::path::{Path, PathBuf};

/// Where a preset came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    Factory,
    User(PathBuf),
}

/// One preset in the list.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub preset: Preset,
    pub source: Source,
}

/// A file in the user folder that could not be read, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Unreadable {
    pub file: String,
    pub error: String,
}

/// A message for the status line.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    None,
    Info(String),
    Error(String),
}

/// The browser: every preset, the search, the current one.
#[derive(Debug, Clone)]
pub struct PresetBrowser {
    entries: Vec<Entry>,
    unreadable: Vec<Unreadable>,
    user_dir: Option<PathBuf>,
    /// Search text: every word must match the name or one of the tags.
    pub query: String,
    current: Option<usize>,
    /// A *Save as…* that would replace this file waits for a second click.
    confirm_replace: Option<PathBuf>,
    pub status: Status,
}

/// Environment variable that replaces the user's preset folder (`cargo xtask screenshot`
/// points it at an empty folder, so the picture shows the factory state only).
pub const PRESET_DIR_ENV: &str = "GRANARY_PRESET_DIR";

/// The user's preset folder: `$GRANARY_PRESET_DIR` if set, else the platform's (`None` if
/// the platform has no data dir).
pub fn user_dir() -> Option<PathBuf> {
    match std::env::var_os(PRESET_DIR_ENV) {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::data_dir().map(|d| d.join("granary").join("presets")),
    }
}

/// Whether two sets of values are the same settings (floats to within rounding).
pub fn same_values(a: &ParamValues, b: &ParamValues) -> bool {
    granary_engine::control::params::SPECS
        .iter()
        .all(|s| match (plain(a, s.id), plain(b, s.id)) {
            (Some(x), Some(y)) => (x - y).abs() <= 1e-4 * (1.0 + y.abs()),
            _ => true,
        })
}

impl PresetBrowser {
    /// Factory presets plus the files in `user_dir` (which need not exist yet).
    pub fn new(user_dir: Option<PathBuf>) -> Self {
        let mut b = PresetBrowser {
            entries: Vec::new(),
            unreadable: Vec::new(),
            user_dir,
            query: String::new(),
            current: None,
            confirm_replace: None,
            status: Status::None,
        };
        b.rescan();
        b
    }

    /// Reads the factory list and the user folder again.
    pub fn rescan(&mut self) {
        let current_name = self.current().map(|e| e.preset.name.clone());
        self.entries = preset::factory()
            .into_iter()
            .map(|(_, preset)| Entry {
                preset,
                source: Source::Factory,
            })
            .collect();
        self.unreadable.clear();
        if let Some(dir) = &self.user_dir {
            let (mut user, bad) = scan_user_dir(dir);
            user.sort_by_key(|e| e.preset.name.to_lowercase());
            self.entries.extend(user);
            self.unreadable = bad;
        }
        self.current = current_name.and_then(|n| self.entries.iter().position(|e| e.preset.name == n));
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn unreadable(&self) -> &[Unreadable] {
        &self.unreadable
    }

    pub fn user_dir(&self) -> Option<&Path> {
        self.user_dir.as_deref()
    }

    pub fn current(&self) -> Option<&Entry> {
        self.current.and_then(|i| self.entries.get(i))
    }

    pub fn current_index(&self) -> Option<usize> {
        self.current
    }

    /// Indices of the entries the search shows, in list order.
    pub fn filtered(&self) -> Vec<usize> {
        (0..self.entries.len())
            .filter(|&i| matches(&self.entries[i].preset, &self.query))
            .collect()
    }

    /// With nothing selected, selects the first preset whose values are `values` (the
    /// default preset when the plugin starts), without a message. Whether one is selected.
    pub fn select_matching(&mut self, values: &ParamValues) -> bool {
        if self.current.is_none() {
            self.current = self.entries.iter().position(|e| same_values(&e.preset.values, values));
        }
        self.current.is_some()
    }

    /// Selects entry `index`; returns its preset to apply.
    pub fn select(&mut self, index: usize) -> Option<&Preset> {
        let entry = self.entries.get(index)?;
        self.current = Some(index);
        self.confirm_replace = None;
        self.status = Status::Info(format!("Loaded \u{201c}{}\u{201d}", entry.preset.name));
        Some(&self.entries[index].preset)
    }

    /// The next (`step` = 1) or previous (-1) preset among those the search shows, wrapping
    /// around; from no selection, the first (or last). Returns the preset to apply.
    pub fn step(&mut self, step: i32) -> Option<&Preset> {
        let shown = self.filtered();
        if shown.is_empty() {
            self.status = Status::Error("No preset matches the search".into());
            return None;
        }
        let pos = self.current.and_then(|c| shown.iter().position(|&i| i == c));
        let len = shown.len() as i64;
        let next = match pos {
            Some(p) => (p as i64 + step as i64).rem_euclid(len),
            None if step >= 0 => 0,
            None => len - 1,
        };
        self.select(shown[next as usize])
    }

    /// *Save as…*: writes `values` as a preset named `name` (tags split at commas) into the
    /// user folder, as `<slug of name>.json`. Replacing an existing file takes a second call
    /// with the same name. On success the new preset is in the list and selected.
    pub fn save_as(&mut self, name: &str, tags: &str, values: &ParamValues) -> Result<PathBuf, String> {
        let result = self.try_save_as(name, tags, values);
        self.status = match &result {
            Ok(path) => Status::Info(format!("Saved {}", path.display())),
            Err(e) => Status::Error(e.clone()),
        };
        result
    }

    fn try_save_as(&mut self, name: &str, tags: &str, values: &ParamValues) -> Result<PathBuf, String> {
        let name = name.trim();
        let slug = preset::slug(name);
        if slug.is_empty() {
            return Err("Give the preset a name (letters or digits) first".into());
        }
        let dir = self
            .user_dir
            .clone()
            .ok_or("This system has no user data folder to save presets in")?;
        std::fs::create_dir_all(&dir).map_err(|e| format!("Cannot create {}: {e}", dir.display()))?;
        let path = dir.join(format!("{slug}.json"));
        if path.exists() && self.confirm_replace.as_ref() != Some(&path) {
            self.confirm_replace = Some(path.clone());
            return Err(format!(
                "{} exists: click Save again to replace it",
                path.file_name().unwrap_or_default().to_string_lossy()
            ));
        }
        self.confirm_replace = None;
        let preset = Preset {
            name: name.to_string(),
            description: String::new(),
            tags: split_tags(tags),
            values: values.clone(),
        };
        preset.save(&path).map_err(|e| e.to_string())?;
        self.rescan();
        self.current = self.entries.iter().position(|e| e.source == Source::User(path.clone()));
        Ok(path)
    }
}

/// Tags typed as `grains, bright ,  soft` -> ["grains", "bright", "soft"].
pub fn split_tags(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether a preset matches a search: every word of `query` (case-insensitive) is part of
/// the name or of one of the tags. An empty query matches everything.
pub fn matches(p: &Preset, query: &str) -> bool {
    let name = p.name.to_lowercase();
    let tags: Vec<String> = p.tags.iter().map(|t| t.to_lowercase()).collect();
    query
        .split_whitespace()
        .map(str::to_lowercase)
        .all(|w| name.contains(&w) || tags.iter().any(|t| t.contains(&w)))
}

/// Every `*.json` in `dir`: the presets that load, and the files that do not with the reason.
/// A missing folder is an empty one.
pub fn scan_user_dir(dir: &Path) -> (Vec<Entry>, Vec<Unreadable>) {
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    let Ok(read) = std::fs::read_dir(dir) else {
        return (ok, bad);
    };
    let mut paths: Vec<PathBuf> = read
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("json")))
        .collect();
    paths.sort();
    for path in paths {
        match Preset::load(&path) {
            Ok(preset) => ok.push(Entry {
                preset,
                source: Source::User(path),
            }),
            Err(e) => bad.push(Unreadable {
                file: path
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                error: match e {
                    // the path is already in `file`; keep only the reason
                    preset::PresetError::Io { source, .. } => source.to_string(),
                    other => other.to_string(),
                },
            }),
        }
    }
    (ok, bad)
}

/// The plain value of `id` in `values` as the plugin parameter holds it (floats and ints as
/// numbers, enums as their index, bools as 0/1).
pub fn plain(values: &ParamValues, id: &str) -> Option<f32> {
    values.get(id).map(Plain::as_f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("granary-browser-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn lists_factory_and_user_presets_and_names_unreadable_files() {
        let dir = temp_dir("list");
        let mut mine = preset::factory().remove(0).1;
        mine.name = "My dusty jar".into();
        mine.tags = vec!["mine".into(), "dusty".into()];
        mine.save(&dir.join("my_dusty_jar.json")).unwrap();
        std::fs::write(dir.join("broken.json"), "{ not json").unwrap();
        std::fs::write(
            dir.join("future.json"),
            mine.to_json()
                .replace(&format!("\"version\": {}", preset::VERSION), "\"version\": 7"),
        )
        .unwrap();
        std::fs::write(dir.join("notes.txt"), "not a preset, not listed").unwrap();
        let b = PresetBrowser::new(Some(dir.clone()));
        let factory = preset::FACTORY_FILES.len();
        assert_eq!(b.entries().len(), factory + 1);
        assert!(b.entries()[..factory].iter().all(|e| e.source == Source::Factory));
        assert_eq!(b.entries()[factory].preset, mine);
        let bad: Vec<(&str, &str)> = b
            .unreadable()
            .iter()
            .map(|u| (u.file.as_str(), u.error.as_str()))
            .collect();
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert_eq!(bad[0].0, "broken.json");
        assert!(bad[0].1.contains("not valid JSON"), "{bad:?}");
        assert_eq!(bad[1].0, "future.json");
        assert!(bad[1].1.contains("version 7"), "{bad:?}");
        // a folder that does not exist yet is simply empty
        let none = PresetBrowser::new(Some(dir.join("nope")));
        assert_eq!(none.entries().len(), factory);
        assert!(none.unreadable().is_empty());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn search_by_name_and_tag() {
        let b = PresetBrowser::new(None);
        let names = |q: &str| -> Vec<String> {
            let mut b = b.clone();
            b.query = q.into();
            b.filtered()
                .into_iter()
                .map(|i| b.entries()[i].preset.name.clone())
                .collect()
        };
        assert_eq!(names("").len(), preset::FACTORY_FILES.len());
        let sugar = names("SUGAR");
        assert!(
            sugar.len() >= 2 && sugar.iter().all(|n| n.to_lowercase().contains("sugar")),
            "{sugar:?}"
        );
        assert!(names("zzzz").is_empty());
        // a tag that is in no name finds presets by their tags
        let all = preset::factory();
        let tag = all
            .iter()
            .flat_map(|(_, p)| p.tags.iter())
            .find(|t| {
                all.iter()
                    .all(|(_, p)| !p.name.to_lowercase().contains(&t.to_lowercase()))
            })
            .expect("some tag is not part of any name")
            .clone();
        let by_tag = names(&tag);
        let expected = all.iter().filter(|(_, p)| p.tags.contains(&tag)).count();
        assert_eq!(by_tag.len(), expected, "{tag}: {by_tag:?}");
        // several words: all must match
        let p = &all[0].1;
        let first_word = p.name.split_whitespace().next().unwrap();
        assert!(matches(p, &format!("{first_word} {}", p.tags[0])));
        assert!(!matches(p, &format!("{first_word} zzzz")));
    }

    #[test]
    fn previous_and_next_wrap_within_the_search() {
        let mut b = PresetBrowser::new(None);
        let n = b.entries().len();
        let first = b.entries()[0].preset.name.clone();
        let last = b.entries()[n - 1].preset.name.clone();
        assert_eq!(b.step(1).unwrap().name, first);
        assert_eq!(b.step(-1).unwrap().name, last);
        assert_eq!(b.current_index(), Some(n - 1));
        assert_eq!(b.step(1).unwrap().name, first);
        b.query = "sugar".into();
        let shown = b.filtered();
        assert!(shown.len() >= 2);
        b.select(shown[0]);
        b.step(1);
        assert_eq!(b.current_index(), Some(shown[1]));
        b.step(-1);
        b.step(-1);
        assert_eq!(b.current_index(), Some(*shown.last().unwrap()));
        b.query = "zzzz".into();
        assert!(b.step(1).is_none());
        assert!(matches!(b.status, Status::Error(_)));
    }

    #[test]
    fn save_as_writes_the_preset_format_and_asks_before_replacing() {
        let dir = temp_dir("save");
        let mut b = PresetBrowser::new(Some(dir.join("sub")));
        let mut values = ParamValues::default();
        values.set_text("pour_rate", "77").unwrap();
        values.set_text("grain_material", "rice").unwrap();
        let path = b.save_as("  Rice, slowly ", "rice, slow,, ", &values).unwrap();
        assert_eq!(path, dir.join("sub").join("rice_slowly.json"));
        let back = Preset::load(&path).unwrap();
        assert_eq!(back.name, "Rice, slowly");
        assert_eq!(back.tags, ["rice", "slow"]);
        assert_eq!(back.values, values);
        assert_eq!(b.current().unwrap().preset, back);
        // same name again: refused once, then replaced
        values.set_text("pour_rate", "5").unwrap();
        let err = b.save_as("Rice, slowly", "", &values).unwrap_err();
        assert!(err.contains("Save again"), "{err}");
        assert_eq!(Preset::load(&path).unwrap().values.float("pour_rate"), 77.0);
        b.save_as("Rice, slowly", "", &values).unwrap();
        assert_eq!(Preset::load(&path).unwrap().values.float("pour_rate"), 5.0);
        assert!(b.save_as(" !! ", "", &values).unwrap_err().contains("name"));
        assert!(PresetBrowser::new(None)
            .save_as("x", "", &values)
            .unwrap_err()
            .contains("no user data folder"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn preset_values_map_to_plugin_values() {
        let mut v = ParamValues::default();
        v.set_text("grain_material", "rice").unwrap();
        v.set_text("auto_fill", "false").unwrap();
        v.set_text("seed", "12").unwrap();
        v.set_text("fall_height", "40").unwrap();
        assert_eq!(plain(&v, "grain_material"), Some(3.0));
        assert_eq!(plain(&v, "auto_fill"), Some(0.0));
        assert_eq!(plain(&v, "seed"), Some(12.0));
        assert_eq!(plain(&v, "fall_height"), Some(40.0));
        assert_eq!(plain(&v, "nope"), None);
    }

    #[test]
    fn the_user_folder_is_the_platform_data_dir() {
        if let Some(d) = user_dir() {
            assert!(d.ends_with("granary/presets"), "{}", d.display());
            #[cfg(target_os = "linux")]
            {
                let expected = match std::env::var_os("XDG_DATA_HOME").filter(|x| !x.is_empty()) {
                    Some(x) => PathBuf::from(x),
                    None => PathBuf::from(std::env::var_os("HOME").unwrap()).join(".local/share"),
                };
                assert_eq!(d, expected.join("granary/presets"));
            }
        }
    }
}

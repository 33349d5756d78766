//! The engine's stages run one way (docs/architecture.md, "Stages"): a module may import
//! from its own stage and from earlier ones, never from a later one (nor from the wiring
//! above them all: `lib.rs`'s items), and no two modules
//! import each other, directly or round a circle. The compiler allows both, so this test
//! reads every `crate::` path in `engine/src` (outside `#[cfg(test)]` modules, which may
//! drive a whole engine) and fails on the first that runs against the flow.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The stages in the order the signal flows; `lib.rs` and `render.rs` wire them and come
/// after all of them.
const STAGES: [&str; 9] = [
    "base",
    "control",
    "derived",
    "statistics",
    "pour",
    "generator",
    "impact",
    "resonators",
    "mix",
];
/// Files at the top of `src/`: the wiring (the engine, the event loop, offline renders),
/// and this check.
const TOP: [&str; 4] = ["lib.rs", "feed.rs", "render.rs", "stages.rs"];

/// Rank of a top-level name of `src/` (a stage folder or a top file), if it is one.
fn rank(first: &str) -> Option<usize> {
    STAGES
        .iter()
        .position(|s| *s == first)
        .or_else(|| TOP.contains(&first).then_some(STAGES.len()))
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without its test module (by this crate's layout, from
/// `#[cfg(test)]` followed by `mod` to the end of the file).
fn without_tests(text: &str) -> &str {
    let mut at = 0;
    while let Some(i) = text[at..].find("#[cfg(test)]") {
        let rest = text[at + i + "#[cfg(test)]".len()..].trim_start();
        if rest.starts_with("mod ") {
            return &text[..at + i];
        }
        at += i + 1;
    }
    text
}

/// Every path named after `crate::` (a `use crate::{a::b, c::{d, e}}` tree expanded), with
/// its line.
fn crate_paths(code: &str) -> Vec<(usize, String)> {
    fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
        let tree = tree.trim();
        let Some(open) = tree.find('{') else {
            out.push(format!("{prefix}{}", tree.split(" as ").next().unwrap().trim()));
            return;
        };
        let head = format!("{prefix}{}", &tree[..open]);
        let inner = &tree[open + 1..tree.rfind('}').unwrap()];
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&head, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        if !inner[start..].trim().is_empty() {
            expand(&head, &inner[start..], out);
        }
    }
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = code[at..].find("crate::") {
        let start = at + i + "crate::".len();
        let line = code[..start].matches('\n').count() + 1;
        let rest = &code[start..];
        let name = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        let end = if rest[name..].starts_with('{') {
            // A use tree: up to its closing brace.
            let mut depth = 0;
            rest[name..]
                .char_indices()
                .find(|&(_, c)| {
                    depth += (c == '{') as i32 - (c == '}') as i32;
                    depth == 0
                })
                .map_or(rest.len(), |(j, _)| name + j + 1)
        } else {
            name
        };
        let mut paths = Vec::new();
        expand("", &rest[..end], &mut paths);
        found.extend(paths.into_iter().map(|p| (line, p.trim_end_matches(':').to_string())));
        at = start + end;
    }
    found
}

/// The file (relative to `src/`) that a `crate::` path names, longest module first.
fn module_file(path: &str, files: &BTreeMap<String, String>) -> Option<String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len()).rev().find_map(|n| {
        let stem = parts[..n].join("/");
        [format!("{stem}.rs"), format!("{stem}/mod.rs")]
            .into_iter()
            .find(|f| files.contains_key(f))
    })
}

#[test]
fn no_module_imports_a_later_stage_or_round_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    sources(&src, &mut paths);
    let files: BTreeMap<String, String> = paths
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
            (rel, std::fs::read_to_string(p).unwrap())
        })
        .collect();
    assert!(
        files.contains_key("lib.rs") && files.len() > 30,
        "read {} files of {}",
        files.len(),
        src.display()
    );

    let mut problems = Vec::new();
    let mut edges: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (file, text) in &files {
        let first = file.split('/').next().unwrap();
        let Some(own) = rank(first) else {
            problems.push(format!(
                "{file}: in no stage (add its folder to STAGES, in the flow's order)"
            ));
            continue;
        };
        for (line, path) in crate_paths(without_tests(text)) {
            let target = path.split("::").next().unwrap();
            // `fft` is the granary-fft crate (beneath every stage); any other name that is
            // no stage is an item of lib.rs, the wiring above them all
            let to = match target {
                "fft" => 0,
                _ => rank(target).unwrap_or(STAGES.len()),
            };
            if to > own {
                let target = STAGES.get(to).copied().unwrap_or("lib.rs");
                problems.push(format!(
                    "{file}:{line}: `crate::{path}` imports from a later stage ({first} is before {target})"
                ));
            }
            if let Some(to) = module_file(&path, &files) {
                if to != *file {
                    edges.entry(file.clone()).or_default().push(to);
                }
            }
        }
    }

    // Circles: a depth-first search over the files' imports.
    fn visit(
        file: &str,
        edges: &BTreeMap<String, Vec<String>>,
        stack: &mut Vec<String>,
        done: &mut Vec<String>,
        problems: &mut Vec<String>,
    ) {
        if done.iter().any(|d| d == file) {
            return;
        }
        if let Some(i) = stack.iter().position(|s| s == file) {
            let circle = format!("import circle: {} -> {file}", stack[i..].join(" -> "));
            if !problems.contains(&circle) {
                problems.push(circle);
            }
            return;
        }
        stack.push(file.to_string());
        for to in edges.get(file).into_iter().flatten() {
            visit(to, edges, stack, done, problems);
        }
        stack.pop();
        done.push(file.to_string());
    }
    let mut done = Vec::new();
    for file in files.keys() {
        visit(file, &edges, &mut Vec::new(), &mut done, &mut problems);
    }
    assert!(
        problems.is_empty(),
        "the stages' direction is broken:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_checks_reader_sees_use_trees_and_inline_paths() {
    let code = "use crate::base::{fastmath, window::{Cell, WINDOW as W}};\nlet x = crate::mix::limiter::Limiter::new();\n#[cfg(test)]\nmod tests { use crate::render::x; }";
    let paths: Vec<String> = crate_paths(without_tests(code)).into_iter().map(|(_, p)| p).collect();
    assert_eq!(
        paths,
        [
            "base::fastmath",
            "base::window::Cell",
            "base::window::WINDOW",
            "mix::limiter::Limiter::new"
        ]
    );
}

//! The house rules of the crates above the core, checked on their sources (the core's own are
//! `core/tests/module_layers.rs`): in `profiler`, `viewer` and `app`, the modules under one parent
//! depend on each other without a cycle (a child may use its parent and the parent its children,
//! as a `mod.rs` holding the state its rooms extend does, but two siblings never use each other
//! both ways, directly or around a ring); and the board firmware's C files include only the rooms
//! below them (`image` ← `integer`, `portable_*` ← `portable` ← `main`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path inside a crate (`["gui", "panels"]`); the crate root is empty.
type ModPath = Vec<String>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every module of the library crate under `src` (its `lib.rs` tree), with its source text.
fn modules(src: &Path) -> BTreeMap<ModPath, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("reads src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = path.strip_prefix(src).expect("inside src");
            let mut parts: ModPath = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let Some(last) = parts.pop() else { continue };
            let stem = last.trim_end_matches(".rs");
            if parts.is_empty() && stem == "main" {
                continue; // the binary: a crate of its own over the library
            }
            if stem != "mod" && stem != "lib" {
                parts.push(stem.to_string());
            }
            let text = std::fs::read_to_string(&path).expect("reads source");
            out.insert(parts, text);
        }
    }
    out
}

/// The paths a source names (`crate::a::b`, `super::c`, `self::d`, `child::e`), `use` groups
/// expanded one level, comments dropped.
fn named_paths(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let chars: Vec<char> = code.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let starts_word = chars[i].is_ascii_alphabetic() || chars[i] == '_';
            let after_word = i > 0 && (chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '_');
            let after_path = i >= 2 && chars[i - 1] == ':' && chars[i - 2] == ':';
            if !starts_word || after_word || after_path {
                i += 1;
                continue;
            }
            let mut segments = Vec::new();
            let mut j = i;
            loop {
                let start = j;
                while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                    j += 1;
                }
                segments.push(chars[start..j].iter().collect::<String>());
                let more = j + 2 < chars.len() && chars[j] == ':' && chars[j + 1] == ':';
                if !more {
                    break;
                }
                j += 2;
                if chars[j] == '{' {
                    // a use group: each item's leading path
                    let close = chars[j..]
                        .iter()
                        .position(|&c| c == '}')
                        .map_or(chars.len(), |p| j + p);
                    let inner: String = chars[j + 1..close].iter().collect();
                    for item in inner.split(',') {
                        let mut full = segments.clone();
                        full.extend(
                            item.trim()
                                .split("::")
                                .map(|s| s.trim().to_string())
                                .take_while(|s| {
                                    !s.is_empty()
                                        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                                }),
                        );
                        out.push(full);
                    }
                    segments.clear();
                    j = close;
                    break;
                }
                if !(chars[j].is_ascii_alphabetic() || chars[j] == '_') {
                    break;
                }
            }
            if segments.len() >= 2 {
                out.push(segments);
            }
            i = j.max(i + 1);
        }
    }
    out
}

/// The module a path names from module `from`, when it names one of this crate.
fn resolve(from: &ModPath, path: &[String], known: &BTreeMap<ModPath, String>) -> Option<ModPath> {
    let mut base: ModPath;
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            base = Vec::new();
            rest = &path[1..];
        }
        Some("self") => {
            base = from.clone();
            rest = &path[1..];
        }
        Some("super") => {
            base = from.clone();
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        Some(first) => {
            let mut child = from.clone();
            child.push(first.to_string());
            if !known.contains_key(&child) {
                return None; // an external crate, a type, a local item
            }
            base = from.clone();
        }
        None => return None,
    }
    // the longest prefix that is a module
    let mut best = None;
    let mut at = base.clone();
    if known.contains_key(&at) {
        best = Some(at.clone());
    }
    for segment in rest {
        at.push(segment.clone());
        if known.contains_key(&at) {
            best = Some(at.clone());
        } else {
            break;
        }
    }
    best
}

/// Edges between siblings: for a use of module `b` from module `a`, the children of their
/// deepest common ancestor on each side (none when one contains the other).
fn sibling_edges(known: &BTreeMap<ModPath, String>) -> BTreeSet<(ModPath, ModPath)> {
    let mut edges = BTreeSet::new();
    for (from, text) in known {
        for path in named_paths(text) {
            let Some(to) = resolve(from, &path, known) else {
                continue;
            };
            let common = from.iter().zip(&to).take_while(|(x, y)| x == y).count();
            if common == from.len() || common == to.len() {
                continue; // an ancestor and its descendant
            }
            edges.insert((from[..=common].to_vec(), to[..=common].to_vec()));
        }
    }
    edges
}

/// A cycle in the graph, as the modules around it.
fn find_cycle(edges: &BTreeSet<(ModPath, ModPath)>) -> Option<Vec<String>> {
    let mut next: BTreeMap<&ModPath, Vec<&ModPath>> = BTreeMap::new();
    for (a, b) in edges {
        next.entry(a).or_default().push(b);
    }
    fn visit<'a>(
        m: &'a ModPath,
        next: &BTreeMap<&'a ModPath, Vec<&'a ModPath>>,
        colour: &mut BTreeMap<&'a ModPath, u8>,
        path: &mut Vec<&'a ModPath>,
    ) -> Option<Vec<String>> {
        match colour.get(m).copied().unwrap_or(0) {
            1 => {
                let start = path.iter().position(|p| *p == m).unwrap_or(0);
                let mut ring: Vec<String> = path[start..].iter().map(|p| p.join("::")).collect();
                ring.push(m.join("::"));
                return Some(ring);
            }
            2 => return None,
            _ => {}
        }
        colour.insert(m, 1);
        path.push(m);
        for n in next.get(m).into_iter().flatten() {
            if let Some(c) = visit(n, next, colour, path) {
                return Some(c);
            }
        }
        path.pop();
        colour.insert(m, 2);
        None
    }
    let mut colour = BTreeMap::new();
    for m in next.keys().copied().collect::<Vec<_>>() {
        if let Some(c) = visit(m, &next, &mut colour, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

#[test]
fn sibling_modules_of_every_crate_above_the_core_form_no_cycle() {
    for krate in ["profiler", "viewer", "app"] {
        let known = modules(&workspace().join(krate).join("src"));
        assert!(known.len() > 3, "sanity: {krate} has modules");
        let edges = sibling_edges(&known);
        assert!(
            !edges.is_empty(),
            "sanity: {krate}'s modules use each other"
        );
        if let Some(ring) = find_cycle(&edges) {
            panic!("{krate}: import cycle {}", ring.join(" → "));
        }
    }
}

#[test]
fn the_checker_sees_a_cycle_between_siblings_and_lets_a_parent_and_child_be() {
    let mut known = BTreeMap::new();
    let m = |s: &str| {
        s.split("::")
            .filter(|p| !p.is_empty())
            .map(String::from)
            .collect::<ModPath>()
    };
    known.insert(m(""), "mod gui;".to_string());
    known.insert(m("gui"), "use panels::draw; pub struct App;".to_string());
    known.insert(
        m("gui::panels"),
        "use super::App; use super::busy::Busy;".to_string(),
    );
    known.insert(m("gui::busy"), "pub struct Busy;".to_string());
    assert_eq!(find_cycle(&sibling_edges(&known)), None);
    known.insert(m("gui::busy"), "use crate::gui::{panels, App};".to_string());
    let ring = find_cycle(&sibling_edges(&known)).expect("a cycle");
    assert!(
        ring.contains(&"gui::busy".to_string()) && ring.contains(&"gui::panels".to_string()),
        "{ring:?}"
    );
}

/// The firmware's rooms, lowest first; a file includes only headers of its own rank or below.
const FIRMWARE_RANKS: &[(&str, usize)] = &[
    ("etscope_trace", 0),
    ("opcodes", 0),
    ("image", 1),
    ("kernels", 1),
    ("startup", 1),
    ("integer", 2),
    ("portable", 2),
    ("main", 3),
];

fn firmware_rank(stem: &str) -> Option<usize> {
    let room = if stem.starts_with("portable_") {
        "portable"
    } else {
        stem
    };
    FIRMWARE_RANKS
        .iter()
        .find(|(r, _)| *r == room)
        .map(|(_, k)| *k)
}

#[test]
fn firmware_files_include_only_the_rooms_below_them() {
    let dir = workspace().join("board").join("firmware");
    let mut upward = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("board/firmware") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        let Some(stem) = name.strip_suffix(".c").or_else(|| name.strip_suffix(".h")) else {
            continue;
        };
        let rank = firmware_rank(stem).unwrap_or_else(|| {
            panic!("board/firmware/{name} has no rank: add it to FIRMWARE_RANKS")
        });
        seen += 1;
        let text = std::fs::read_to_string(&path).expect("source");
        for line in text.lines() {
            let Some(included) = line.trim().strip_prefix("#include \"") else {
                continue;
            };
            let file = included
                .trim_end_matches('"')
                .rsplit('/')
                .next()
                .unwrap_or("");
            let inc_stem = file.trim_end_matches(".h");
            let inc_rank = firmware_rank(inc_stem)
                .unwrap_or_else(|| panic!("{name} includes {file}, which has no rank"));
            let own_header =
                inc_stem == stem || (stem.starts_with("portable_") && inc_stem == "portable");
            if inc_rank > rank || (inc_rank == rank && !own_header && inc_rank > 0) {
                upward.push(format!(
                    "{name} (rank {rank}) includes {file} (rank {inc_rank})"
                ));
            }
        }
    }
    assert!(seen >= 8, "sanity: the firmware's files were read");
    assert!(
        upward.is_empty(),
        "firmware includes against the layers: {upward:#?}"
    );
}

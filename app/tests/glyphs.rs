//! Every character the window writes exists in the fonts it draws with: a glyph missing from
//! egui's bundled fonts draws as an empty box (▲▼⟷✕ did). Scans the string literals of the
//! viewer and the window's code and asks egui's own font set for each non-ASCII character.

use std::collections::BTreeSet;
use std::path::Path;

use eframe::egui;
use skrifa::MetadataProvider as _;

/// Non-ASCII characters inside the double-quoted literals of `source` (comment lines skipped).
fn literal_characters(source: &str, into: &mut BTreeSet<char>) {
    for line in source.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let mut inside = false;
        let mut escaped = false;
        for c in code.chars() {
            match c {
                _ if escaped => escaped = false,
                '\\' if inside => escaped = true,
                '"' => inside = !inside,
                c if inside && !c.is_ascii() => {
                    into.insert(c);
                }
                _ => {}
            }
        }
    }
}

fn scan(dir: &Path, into: &mut BTreeSet<char>) {
    let entries = std::fs::read_dir(dir).expect("source folder");
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            scan(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            literal_characters(&std::fs::read_to_string(&path).expect("source"), into);
        }
    }
}

#[test]
fn every_character_the_window_writes_exists_in_its_fonts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut used = BTreeSet::new();
    scan(&root.join("../viewer/src"), &mut used);
    scan(&root.join("src/gui"), &mut used);
    assert!(
        used.contains(&'µ'),
        "the scan finds the characters in use: {used:?}"
    );
    // egui's bundled fonts, family by family, in its fallback order
    let definitions = egui::FontDefinitions::default();
    let mut missing = Vec::new();
    for family in [egui::FontFamily::Proportional, egui::FontFamily::Monospace] {
        let faces: Vec<skrifa::FontRef> = definitions.families[&family]
            .iter()
            .map(|name| {
                let data = &definitions.font_data[name];
                skrifa::FontRef::from_index(&data.font, data.index).expect("a bundled font")
            })
            .collect();
        for &c in &used {
            if !faces.iter().any(|f| f.charmap().map(c).is_some()) {
                missing.push((c, format!("{family:?}")));
            }
        }
    }
    assert!(missing.is_empty(), "drawn as boxes: {missing:?}");
}

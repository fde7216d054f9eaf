//! Every character the window writes exists in the fonts it draws with: a glyph missing from
//! egui's bundled fonts draws as an empty box (▲▼⟷✕ did). Scans the string and character
//! literals of the viewer, the window's code and the crates whose text it shows (core, the
//! loader, the profiler), and asks egui's own font set for each non-ASCII character.

use std::collections::BTreeSet;
use std::path::Path;

use eframe::egui;
use skrifa::MetadataProvider as _;

/// Non-ASCII characters inside the string and character literals of `source` (comment lines
/// skipped), `\\u{…}` escapes decoded.
fn literal_characters(source: &str, into: &mut BTreeSet<char>) {
    for line in source.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let chars: Vec<char> = code.chars().collect();
        let mut inside = false;
        let mut k = 0;
        while k < chars.len() {
            let c = chars[k];
            match c {
                '\\' if inside => {
                    // `\\u{2715}` is the character it names; any other escape is ASCII
                    if chars.get(k + 1) == Some(&'u') && chars.get(k + 2) == Some(&'{') {
                        let hex: String =
                            chars[k + 3..].iter().take_while(|&&h| h != '}').collect();
                        if let Some(ch) =
                            u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32)
                        {
                            if !ch.is_ascii() {
                                into.insert(ch);
                            }
                        }
                        k += 3 + hex.len();
                    } else {
                        k += 1;
                    }
                }
                '"' => inside = !inside,
                // a character literal: 'x' (a lifetime has no closing quote two chars on)
                '\'' if !inside && chars.get(k + 2) == Some(&'\'') => {
                    // `.replace('→', ">")` names a character so as not to draw it
                    let before: String = chars[..k].iter().collect();
                    let replaced = before.ends_with("replace(");
                    if let Some(&ch) = chars.get(k + 1).filter(|_| !replaced) {
                        if !ch.is_ascii() {
                            into.insert(ch);
                        }
                    }
                    k += 2;
                }
                c if inside && !c.is_ascii() => {
                    into.insert(c);
                }
                _ => {}
            }
            k += 1;
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
    // what the window shows of the other crates: the core's messages and notes, the loader's
    // and the profiler's
    scan(&root.join("src/load"), &mut used);
    scan(&root.join("../core/src"), &mut used);
    scan(&root.join("../profiler/src"), &mut used);
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

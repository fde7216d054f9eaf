//! Operators are named once, in the registry (`core/src/ops/`): every operator-name literal
//! elsewhere in the workspace's non-test code (`"aten::…"`, `"cortex_m::…"`, …) must be one the
//! registry resolves, so a typo in a pass's pattern or a kernel's match is a failing test, not
//! a rule that silently never fires.

use std::path::{Path, PathBuf};

const NAMESPACES: [&str; 5] = [
    "aten::",
    "cortex_m::",
    "quantized_decomposed::",
    "dim_order_ops::",
    "executorch_prim::",
];

/// The workspace's Rust sources outside the registry and the generated schema code.
fn sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut dirs: Vec<PathBuf> = ["core/src", "profiler/src", "viewer/src", "app/src"]
        .iter()
        .map(|d| root.join(d))
        .collect();
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let text = p.to_string_lossy().replace('\\', "/");
            if text.ends_with("core/src/ops") || text.contains("/generated") {
                continue;
            }
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Every `"namespace::name[.overload]"` literal of `text` before its `#[cfg(test)]` module, with
/// its line.
fn literals(text: &str) -> Vec<(usize, String)> {
    let code = text.split("\n#[cfg(test)]").next().unwrap_or(text);
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find('"') {
            let after = &rest[at + 1..];
            let Some(end) = after.find('"') else { break };
            let lit = &after[..end];
            if NAMESPACES.iter().any(|ns| lit.starts_with(ns))
                && lit
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == '.')
                && !NAMESPACES.contains(&lit)
            {
                out.push((n + 1, lit.to_string()));
            }
            rest = &after[end + 1..];
        }
    }
    out
}

#[test]
fn every_operator_name_outside_the_registry_resolves_in_it() {
    let mut unresolved = Vec::new();
    let mut checked = 0;
    for file in sources() {
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (line, lit) in literals(&text) {
            checked += 1;
            let known = etscope_core::ops::lookup_qualified(&lit).is_some()
                || etscope_core::ops::lookup(&lit, "").is_some();
            if !known {
                unresolved.push(format!("{}:{line}: {lit}", file.display()));
            }
        }
    }
    assert!(
        checked >= 100,
        "{checked} operator-name literals found: the scanner is broken"
    );
    assert!(
        unresolved.is_empty(),
        "{} of {checked} operator names the registry does not know:\n{}",
        unresolved.len(),
        unresolved.join("\n")
    );
}

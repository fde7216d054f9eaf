//! The semantics audit is complete by construction: every table field and enum value of the
//! generated schema code (`core/src/formats/generated/*_generated.rs`, made by `flatc` from
//! ExecuTorch's schemas) has exactly one row in `docs/compatibility.md` ("Every field of the
//! schemas"), saying it is implemented (naming a test that exists), without effect on a run
//! (saying why), or refused (quoting a message the source gives). A field a new ExecuTorch adds
//! fails here until someone decides what etscope does with it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `(schema, "Table.field")` for every table field and `(schema, "Enum.VALUE")` for every enum
/// or union value of one generated file.
fn schema_items(schema: &str, source: &str) -> Vec<(String, String)> {
    let mut items = Vec::new();
    // the type whose `impl` block we are in, and whether it is a table (`impl<'a> T<'a>`)
    let mut current: Option<(String, bool)> = None;
    for line in source.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("impl<'a> ") {
            if let Some(name) = rest.strip_suffix("<'a> {") {
                current = Some((name.to_string(), true));
                continue;
            }
        }
        if let Some(rest) = t.strip_prefix("impl ") {
            if let Some(name) = rest.strip_suffix(" {") {
                if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    current = Some((name.to_string(), false));
                    continue;
                }
            }
        }
        let Some((ty, table)) = &current else {
            continue;
        };
        let Some(rest) = t.strip_prefix("pub const ") else {
            continue;
        };
        let Some((name, kind)) = rest.split_once(':') else {
            continue;
        };
        if *table {
            if let Some(field) = name.strip_prefix("VT_") {
                items.push((schema.to_string(), format!("{ty}.{}", field.to_lowercase())));
            }
        } else if kind.trim_start().starts_with("Self = Self(") {
            items.push((schema.to_string(), format!("{ty}.{name}")));
        }
    }
    items
}

/// Every item of every generated schema.
fn generated_items() -> Vec<(String, String)> {
    let dir = root().join("core/src/formats/generated");
    let mut items = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("generated code") {
        let path = entry.expect("entry").path();
        let Some(file) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(schema) = file.strip_suffix("_generated.rs") else {
            continue;
        };
        let source = std::fs::read_to_string(&path).expect("readable");
        items.extend(schema_items(schema, &source));
    }
    items
}

/// One row of the audit: status and evidence by `(schema, field)`.
fn audit_rows() -> BTreeMap<(String, String), (String, String)> {
    let doc = std::fs::read_to_string(root().join("docs/compatibility.md")).expect("the doc");
    let start = doc
        .find("## Every field of the schemas")
        .expect("the audit section");
    let section = &doc[start..];
    let end = section[3..].find("\n## ").map_or(section.len(), |e| e + 3);
    let mut rows = BTreeMap::new();
    for line in section[..end].lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | schema | field | status | evidence |
        if cells.len() < 6 || cells[1] == "schema" || cells[1].starts_with("---") {
            continue;
        }
        let field = cells[2].trim_matches('`').to_string();
        let key = (cells[1].to_string(), field);
        let value = (cells[3].to_string(), cells[4..cells.len() - 1].join("|"));
        assert!(
            rows.insert(key.clone(), value).is_none(),
            "{key:?} is listed twice"
        );
    }
    rows
}

/// Every Rust source of the workspace's crates, concatenated (where tests and messages live).
fn all_sources(dirs: &[&str]) -> String {
    fn walk(dir: &Path, out: &mut String) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == "generated") {
                    continue;
                }
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
                out.push('\n');
            }
        }
    }
    let mut out = String::new();
    for d in dirs {
        walk(&root().join(d), &mut out);
    }
    out
}

/// The `backticked` words of an evidence cell that look like test names.
fn test_names(evidence: &str) -> Vec<&str> {
    evidence
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                && w.contains('_')
        })
        .collect()
}

#[test]
fn every_schema_field_is_listed_with_what_etscope_does_with_it() {
    let items = generated_items();
    assert!(items.len() > 250, "sanity: {} items walked", items.len());
    for must in [
        ("program", "Tensor.storage_offset"),
        ("program", "ExtraTensorInfo.device_type"),
        ("program", "InstructionArguments.FreeCall"),
        ("etdump", "ProfileEvent.start_time"),
        ("flat_tensor", "TensorLayout.dim_order"),
        ("bundled_program", "ValueUnion.Double"),
    ] {
        assert!(
            items.iter().any(|(s, f)| s == must.0 && f == must.1),
            "sanity: {must:?} walked"
        );
    }
    let rows = audit_rows();
    let mut missing = Vec::new();
    let mut used = BTreeSet::new();
    for (schema, field) in &items {
        let exact = (schema.clone(), field.clone());
        let wildcard = field
            .strip_prefix("ScalarType.")
            .map(|_| (schema.clone(), "ScalarType.*".to_string()));
        let key = if rows.contains_key(&exact) {
            exact
        } else if let Some(w) = wildcard.filter(|w| rows.contains_key(w) && schema != "program") {
            w
        } else {
            missing.push(format!("{schema} {field}"));
            continue;
        };
        used.insert(key);
    }
    assert!(
        missing.is_empty(),
        "schema items docs/compatibility.md does not list: {missing:#?}"
    );
    let stale: Vec<_> = rows.keys().filter(|k| !used.contains(*k)).collect();
    assert!(stale.is_empty(), "rows naming no schema item: {stale:#?}");
}

#[test]
fn every_audit_row_has_evidence_that_exists() {
    let tests = all_sources(&["core", "app", "viewer", "profiler"]);
    let messages = all_sources(&["core/src"]);
    let mut bad = Vec::new();
    for ((schema, field), (status, evidence)) in audit_rows() {
        let what = format!("{schema} {field}");
        match status.as_str() {
            "implemented" => {
                let names = test_names(&evidence);
                if names.is_empty() {
                    bad.push(format!("{what}: implemented, but names no test"));
                }
                for n in names {
                    if !tests.contains(&format!("fn {n}(")) {
                        bad.push(format!("{what}: no test `{n}`"));
                    }
                }
            }
            "refused" => {
                let quoted: Vec<&str> = evidence.split('"').skip(1).step_by(2).collect();
                match quoted.first() {
                    Some(msg) if messages.contains(msg) => {}
                    Some(msg) => bad.push(format!("{what}: message {msg:?} is not in core/src")),
                    None => bad.push(format!("{what}: refused, but quotes no message")),
                }
            }
            "no effect" if evidence.trim().len() >= 10 => {}
            "no effect" => bad.push(format!("{what}: no effect, but says not why")),
            "as program" if field == "ScalarType.*" && schema != "program" => {}
            other => bad.push(format!("{what}: status {other:?}")),
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn the_walk_finds_fields_and_values_in_generated_code() {
    let source = "    impl<'a> Tensor<'a> {\n        pub const VT_SIZES: ::flatbuffers::VOffsetT = 8;\n    }\n    impl DeviceType {\n        pub const CPU: Self = Self(0);\n        pub const ENUM_MIN: i8 = 0;\n    }\n";
    assert_eq!(
        schema_items("program", source),
        [
            ("program".to_string(), "Tensor.sizes".to_string()),
            ("program".to_string(), "DeviceType.CPU".to_string())
        ]
    );
}

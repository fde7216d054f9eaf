//! Operators are named once, in the registry (`core/src/ops/table.rs`). Code elsewhere that must
//! still spell one (a lowering pattern, a kernel's match) names an operator the registry has:
//! every `"namespace::name"` or `"namespace::name.overload"` literal of an operator namespace in
//! the sources of every crate, outside `core/src/ops/`, must resolve there — so a typo or an
//! operator renamed in the table fails here instead of silently matching nothing. Test modules
//! inside the sources are checked too; generated code is not.

mod common;

use std::path::Path;

/// The namespaces whose names are operators.
const OPERATOR_NAMESPACES: &[&str] = &[
    "aten",
    "cortex_m",
    "quantized_decomposed",
    "dim_order_ops",
    "executorch_prim",
    "channels_last",
    "etscope",
];

/// Every string literal of the form `ns::name[.overload]` with an operator namespace, with its
/// line number.
fn operator_literals(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(open) = rest.find('"') {
            let after = &rest[open + 1..];
            let Some(close) = after.find('"') else { break };
            let literal = &after[..close];
            rest = &after[close + 1..];
            let Some((ns, name)) = literal.split_once("::") else {
                continue;
            };
            if !OPERATOR_NAMESPACES.contains(&ns) {
                continue;
            }
            let plain =
                |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            let (op, overload) = name.split_once('.').unwrap_or((name, ""));
            if plain(op) && (overload.is_empty() || plain(overload)) {
                out.push((n + 1, literal.to_string()));
            }
        }
    }
    out
}

fn resolves(literal: &str) -> bool {
    let (name, overload) = match literal.rsplit_once('.') {
        Some((n, o)) => (n, o),
        None => (literal, ""),
    };
    etscope_core::ops::lookup(name, overload).is_some()
}

#[test]
fn every_operator_literal_outside_the_registry_resolves_in_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let files = common::rust_sources(&["core/src", "profiler/src", "viewer/src", "app/src"]);
    let registry = root.join("core/src/ops");
    let mut seen = 0;
    let mut unresolved = Vec::new();
    for file in files {
        let generated = file.components().any(|c| c.as_os_str() == "generated");
        if file.starts_with(&registry) || generated {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("source");
        for (line, literal) in operator_literals(&text) {
            seen += 1;
            if !resolves(&literal) {
                let shown = file
                    .strip_prefix(&root)
                    .unwrap_or(&file)
                    .display()
                    .to_string();
                unresolved.push(format!("{shown}:{line}: {literal}"));
            }
        }
    }
    assert!(
        seen > 100,
        "sanity: the sources name operators ({seen} literals)"
    );
    assert!(
        unresolved.is_empty(),
        "operator names the registry does not have (a typo, or an operator to add to core/src/ops/table.rs): {unresolved:#?}"
    );
}

#[test]
fn the_scanner_finds_names_and_the_check_rejects_a_typo() {
    let text =
        r#"if op == "aten::convolution.out" || op == "cortex_m::quantized_add" { "not::an_op" }"#;
    let found: Vec<String> = operator_literals(text)
        .into_iter()
        .map(|(_, l)| l)
        .collect();
    assert_eq!(found, ["aten::convolution.out", "cortex_m::quantized_add"]);
    assert!(resolves("aten::convolution.out"));
    assert!(
        !resolves("aten::convolutoin.out"),
        "a typo does not resolve"
    );
    assert!(!resolves("aten::convolution.no_such_overload"));
}

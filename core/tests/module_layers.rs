//! The core's house rules, checked on its sources: every top-level module sits in a layer, a
//! module only uses modules of its own layer or below (formats → kernels → ops → IR → passes →
//! runtime → analyses), and the module graph has no cycle. A new module must be given a layer
//! here, which is where a newcomer learns where it goes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Layer of each top-level module of `core/src`, lowest first.
const LAYERS: &[(&str, usize)] = &[
    ("dtype", 0),
    ("error", 0),
    ("cortex_m", 0),
    ("part", 1),
    ("tensor", 1),
    // readers of ExecuTorch's files
    ("formats", 2),
    // the spine
    ("kernels", 3),
    ("ops", 4),
    ("ir", 5),
    ("passes", 6),
    ("runtime", 7),
    ("plan", 7),
    // beside it
    ("analysis", 8),
    ("board_image", 8),
    ("lower", 8),
];

/// Top-level module → the top-level modules its code names through `crate::`.
fn uses() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
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
            let rel = path.strip_prefix(&src).expect("inside src");
            let first = rel
                .components()
                .next()
                .and_then(|c| c.as_os_str().to_str())
                .expect("a name")
                .trim_end_matches(".rs")
                .to_string();
            if first == "lib" {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("reads source");
            let used = out.entry(first.clone()).or_default();
            // comment lines out, then the whole file as one text: a grouped import spans lines
            let code: String = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            let ident = |rest: &str| -> String {
                rest.chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_' || c.is_ascii_digit())
                    .collect()
            };
            for (at, _) in code.match_indices("crate::") {
                let rest = &code[at + "crate::".len()..];
                let mut names = Vec::new();
                match rest.strip_prefix('{') {
                    // `crate::{runtime::X, ops}`: every first path segment of the group
                    Some(group) => {
                        let mut depth = 0usize;
                        let mut start = true;
                        for (k, c) in group.char_indices() {
                            match c {
                                '{' => depth += 1,
                                '}' if depth == 0 => break,
                                '}' => depth -= 1,
                                ',' if depth == 0 => start = true,
                                c if start && !c.is_whitespace() => {
                                    names.push(ident(&group[k..]));
                                    start = false;
                                }
                                _ => {}
                            }
                        }
                    }
                    None => names.push(ident(rest)),
                }
                for name in names {
                    if !name.is_empty() && name != first && name != "self" {
                        used.insert(name);
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_module_uses_only_its_layer_and_below() {
    let layer: BTreeMap<&str, usize> = LAYERS.iter().copied().collect();
    let uses = uses();
    assert!(
        uses.contains_key("runtime") && uses.contains_key("ops"),
        "sanity: {uses:?}"
    );
    let mut upward = Vec::new();
    for (module, used) in &uses {
        let Some(&l) = layer.get(module.as_str()) else {
            panic!("core/src/{module} has no layer: add it to LAYERS in core/tests/module_layers.rs (and to ARCHITECTURE.md's code map)");
        };
        for u in used {
            let Some(&lu) = layer.get(u.as_str()) else {
                continue; // a re-exported item (`crate::ScalarType`), not a module
            };
            if lu > l {
                upward.push(format!("{module} (layer {l}) uses {u} (layer {lu})"));
            }
        }
    }
    assert!(upward.is_empty(), "upward arrows: {upward:#?}");
}

#[test]
fn the_module_graph_has_no_cycle() {
    let uses = uses();
    // depth-first search with colours; a grey node reached again closes a cycle
    fn visit(
        m: &str,
        uses: &BTreeMap<String, BTreeSet<String>>,
        colour: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match colour.get(m).copied().unwrap_or(0) {
            1 => {
                let start = path.iter().position(|p| p == m).unwrap_or(0);
                let mut cycle = path[start..].to_vec();
                cycle.push(m.to_string());
                return Some(cycle);
            }
            2 => return None,
            _ => {}
        }
        colour.insert(m.to_string(), 1);
        path.push(m.to_string());
        for next in uses.get(m).into_iter().flatten() {
            if uses.contains_key(next) {
                if let Some(c) = visit(next, uses, colour, path) {
                    return Some(c);
                }
            }
        }
        path.pop();
        colour.insert(m.to_string(), 2);
        None
    }
    let mut colour = BTreeMap::new();
    for m in uses.keys() {
        let mut path = Vec::new();
        if let Some(cycle) = visit(m, &uses, &mut colour, &mut path) {
            panic!("import cycle: {}", cycle.join(" → "));
        }
    }
}

/// The sources under `core/src/<dir>` (recursively), with their paths.
fn sources(dir: &str) -> Vec<(std::path::PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().and_then(|x| x.to_str()) == Some("rs") {
                let text = std::fs::read_to_string(&p).expect("source");
                out.push((p, text));
            }
        }
    }
    out
}

/// Code lines (comments dropped).
fn code(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|l| !l.trim_start().starts_with("//"))
}

/// One set of host kernels: only the registry's table binds them; nothing else in the core
/// names a kernel module, so no second dispatch can grow. Every `crate::kernels::` path outside
/// `kernels/` and `ops/table.rs` (grouped imports included) must name the kernels' shared
/// machinery, never an operator's kernel (`portable`, `quantized`, `simd`, `transpose_i8`,
/// `cmsis::{conv, depthwise, gemm, pool, ops, arith, …}`).
#[test]
fn only_the_registry_binds_kernels() {
    // the kernels' layer as others may use it: values and errors, the device and its core,
    // the call context, layouts and maths shared with the lowering, the C library's
    // functions, and the CMSIS-NN path's buffer rules and device notes
    const SHARED: &[&str] = &[
        "element_count",
        "layout",
        "value",
        "math",
        "libm",
        "CmsisNn",
        "Device",
        "RuntimeError",
        "Target",
        "Work",
        "DEFAULT_WORK_BUDGET",
        "MAX_EXECUTED_INSTRUCTIONS",
        "MAX_TENSOR_ELEMENTS",
        "Ctx",
        "Derived",
        "KernelFn",
        "StoredForms",
        "cmsis::core_buffers",
        "cmsis::notes",
    ];
    let mut found = Vec::new();
    let mut paths = 0;
    for (path, text) in sources("") {
        let p = path.to_string_lossy().replace('\\', "/");
        if p.contains("/src/kernels/") || p.ends_with("/src/ops/table.rs") {
            continue;
        }
        let code: String = code(&text)
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        for (at, _) in code.match_indices("kernels::") {
            let rest = &code[at + "kernels::".len()..];
            // `kernels::{a, b::{c, d}}` names a, b::c and b::d; `kernels::a::b` names a::b
            let named: Vec<String> = match rest.strip_prefix('{') {
                Some(group) => use_group(group),
                None => vec![rest
                    .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .next()
                    .unwrap_or("")
                    .to_string()],
            };
            for n in named {
                paths += 1;
                let shared = SHARED
                    .iter()
                    .any(|s| n == *s || n.starts_with(&format!("{s}::")));
                if !shared {
                    found.push(format!("{p}: kernels::{n}"));
                }
            }
        }
    }
    assert!(paths > 20, "sanity: kernels:: paths read ({paths})");
    assert!(
        found.is_empty(),
        "kernel modules named outside the registry: {found:#?}"
    );
}

/// The IR is the only thing the runtime executes: no runtime source reads a program's
/// instruction list (a `.pte` reaches the runtime as its IR graph).
#[test]
fn the_runtime_executes_only_the_ir() {
    let runtime = sources("runtime");
    assert!(runtime.len() >= 3, "sanity: runtime sources read");
    for (path, text) in runtime {
        for line in code(&text) {
            assert!(
                !line.contains("Instruction") && !line.contains("main_instructions"),
                "{} reads a program's instructions: {}",
                path.display(),
                line.trim()
            );
        }
    }
}

/// The lowering and the graph passes read and write every argument past the input by the name
/// the operator's schema gives it (`edit::pos`, `edit::pos_in`, `OpDef::arg`), never by a bare
/// position: `tensor_arg(node, 1)`, `pair(node, 3, …)`, `set_arg(g, n, 1, …)`, `args[3]` and
/// `args.get(2)` are refused. Position 0, the input every schema starts with, may be read as
/// such.
#[test]
fn the_lowering_and_the_passes_read_arguments_by_schema_name() {
    // each reader and which of its arguments is the position
    const READERS: [(&str, usize); 11] = [
        ("int_arg(", 1),
        ("float_arg(", 1),
        ("ints_arg(", 1),
        ("bool_arg(", 1),
        ("tensor_arg(", 1),
        ("arg(", 1),
        ("pair(", 1),
        ("int_at(", 2),
        ("bool_at(", 2),
        ("set_arg(", 2),
        // a pass's own reader of a node's int arguments, `int(k)`
        ("int(", 0),
    ];
    let bare_position = |a: &str| {
        let a = a.trim();
        !a.is_empty() && a.chars().all(|c| c.is_ascii_digit()) && a != "0"
    };
    let mut offenders = Vec::new();
    let mut scanned = 0;
    for (p, text) in sources("lower").into_iter().chain(sources("passes")) {
        scanned += 1;
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (k, line) in code.lines().enumerate() {
            let line = without_strings(line);
            if line.trim_start().starts_with("//") || line.contains("fn ") {
                continue;
            }
            let mut bare = false;
            for (reader, position) in READERS {
                let mut rest = line.as_str();
                while let Some(at) = rest.find(reader) {
                    // a reader's own name, not the end of another's (`tensor_arg(` holds `arg(`)
                    let whole = at == 0
                        || !rest[..at]
                            .chars()
                            .last()
                            .is_some_and(|c| c.is_alphanumeric() || c == '_');
                    rest = &rest[at + reader.len()..];
                    let call: String = rest.chars().take_while(|&c| c != ')').collect();
                    bare |= whole && call.split(',').nth(position).is_some_and(bare_position);
                }
            }
            for index in ["args[", "args.get(", "args.get_mut("] {
                let mut rest = line.as_str();
                while let Some(at) = rest.find(index) {
                    rest = &rest[at + index.len()..];
                    let inside: String =
                        rest.chars().take_while(|&c| c != ']' && c != ')').collect();
                    bare |= bare_position(&inside);
                }
            }
            if bare {
                offenders.push(format!("{}:{}: {}", p.display(), k + 1, line.trim()));
            }
        }
    }
    assert!(
        scanned > 30,
        "sanity: the lowering's and the passes' sources were read ({scanned})"
    );
    assert!(
        offenders.is_empty(),
        "arguments read by position: {offenders:#?}"
    );
}

/// The raw plan (`ExecutionPlan`, `EValue`, `Instruction`, chains, the operator table, a
/// program's `plans`) is named only by the readers and writers of programs: `formats` (which
/// also gives everyone else plain facts: `Program::instruction_calls`, `plan_summary`,
/// `method_names`, …), the IR's reader `ir/from_pte.rs`, the runtime's preparation
/// (`runtime/`), the lowering's emitter (`lower/emit/`), the board image (`board_image/`), the
/// runtime allocation model (`plan/budget.rs`), the placed program's writer
/// (`analysis/place/program.rs`) and the fault injector, which writes broken copies of a
/// program (`analysis/fault.rs`). The window, the CLI, the profiler and the viewer name none of
/// it, and neither do the cost model, the identity checks, the device notes, the kernels' device
/// rules or the core detection: they read the IR (`ir::call::CallView`) and `Program`'s plain
/// facts.
#[test]
fn only_the_readers_and_writers_of_programs_name_the_raw_plan() {
    const READERS_AND_WRITERS: &[&str] = &[
        "core/src/formats/",
        "core/src/ir/from_pte.rs",
        "core/src/runtime/",
        "core/src/lower/emit/",
        "core/src/board_image/",
        "core/src/plan/budget.rs",
        "core/src/analysis/place/program.rs",
        // the fault injector writes broken copies of a program
        "core/src/analysis/fault.rs",
    ];
    let raw = [
        "ExecutionPlan",
        "EValue",
        "Instruction::",
        "pte::Tensor",
        "pte::Operator",
        "pte::Chain",
        "pte::Delegate",
        ".chains",
        ".main_instructions()",
        ".plans",
        ".non_const_buffer_sizes",
        ".default_plan()",
    ];
    // raw types named in a grouped import (`pte::{Program, Tensor}`)
    let raw_in_group = [
        "ExecutionPlan",
        "EValue",
        "Instruction",
        "Tensor",
        "Operator",
        "Chain",
        "Delegate",
        "Frame",
    ];
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut naming: BTreeMap<String, String> = BTreeMap::new();
    let mut scanned = 0;
    for krate in ["core", "app", "viewer", "profiler"] {
        let mut stack = vec![workspace.join(krate).join("src")];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("source folder") {
                let p = e.expect("entry").path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                if p.extension().and_then(|x| x.to_str()) != Some("rs") {
                    continue;
                }
                scanned += 1;
                let rel = p
                    .strip_prefix(&workspace)
                    .expect("inside the workspace")
                    .to_string_lossy()
                    .replace('\\', "/");
                let text = std::fs::read_to_string(&p).expect("source");
                // a file's own unit tests may read the raw plan to check what it made
                let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
                let joined: String = code(text)
                    .map(|l| l.split("//").next().unwrap_or(""))
                    .collect::<Vec<_>>()
                    .join(" ");
                for (at, _) in joined.match_indices("pte::{") {
                    let group = joined[at + "pte::{".len()..]
                        .split('}')
                        .next()
                        .unwrap_or("");
                    if let Some(t) = group.split(',').map(str::trim).find(|item| {
                        raw_in_group
                            .iter()
                            .any(|r| item.split_whitespace().next() == Some(r))
                    }) {
                        naming
                            .entry(rel.clone())
                            .or_insert_with(|| format!("pte::{{… {t} …}}"));
                    }
                }
                for line in code(text) {
                    let line = without_strings(line);
                    let line = line.split("//").next().unwrap_or("");
                    let named = raw.iter().any(|r| match r.strip_prefix('.') {
                        // a field or method: `.plans` but not `.plans_of`
                        Some(field) => line.match_indices(r).any(|(at, _)| {
                            !line[at + 1 + field.len()..]
                                .starts_with(|c: char| c.is_alphanumeric() || c == '_')
                        }),
                        None => line.match_indices(r).any(|(at, _)| {
                            !line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                        }),
                    });
                    if named {
                        naming
                            .entry(rel.clone())
                            .or_insert_with(|| line.trim().to_string());
                    }
                }
            }
        }
    }
    assert!(
        scanned > 200,
        "sanity: the workspace's sources read ({scanned})"
    );
    let outside: Vec<String> = naming
        .iter()
        .filter(|(f, _)| !READERS_AND_WRITERS.iter().any(|a| f.starts_with(a)))
        .map(|(f, line)| format!("{f}: {line}"))
        .collect();
    assert!(
        outside.is_empty(),
        "these read the raw plan; ask `Program` (formats/pte/outline.rs) or the IR instead: {outside:#?}"
    );
}

/// The paths a `use` group names, from just after its `{` (nested groups expanded, `a as b`
/// naming a).
fn use_group(group: &str) -> Vec<String> {
    // the group's text up to its own closing brace
    let mut depth = 1;
    let mut end = group.len();
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = i;
                    break;
                }
            }
            _ => {}
        }
    }
    let body = &group[..end];
    // split at top-level commas
    let (mut items, mut start, mut level) = (Vec::new(), 0, 0);
    for (i, c) in body.char_indices() {
        match c {
            '{' => level += 1,
            '}' => level -= 1,
            ',' if level == 0 => {
                items.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&body[start..]);
    let mut out = Vec::new();
    for item in items.iter().map(|i| i.trim()).filter(|i| !i.is_empty()) {
        match item.split_once("::{") {
            Some((prefix, inner)) => out.extend(
                use_group(inner)
                    .into_iter()
                    .map(|n| format!("{prefix}::{n}")),
            ),
            None => out.extend(item.split_whitespace().next().map(str::to_string)),
        }
    }
    out
}

/// `line` with the contents of its string literals blanked (a message may name a type).
fn without_strings(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let (mut inside, mut escaped) = (false, false);
    for c in line.chars() {
        if inside {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                inside = false;
                out.push(c);
            }
            continue;
        }
        if c == '"' {
            inside = true;
        }
        out.push(c);
    }
    out
}

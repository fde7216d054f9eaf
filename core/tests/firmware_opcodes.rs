//! The firmware's operator codes come from the registry: `board/firmware/opcodes.h` is what
//! `board_image::opcodes_header` writes (set `ETSCOPE_WRITE_OPCODES=1` to rewrite it), each code
//! has one symbol and each symbol one code, and every kernel the registry puts on the board is
//! dispatched by the firmware (a `case OP_<symbol>` in its sources).

use std::collections::BTreeMap;
use std::path::PathBuf;

use etscope_core::board_image::{board_kernels, opcodes_header};

fn firmware_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../board/firmware")
}

#[test]
fn the_committed_opcodes_header_is_the_registrys() {
    let path = firmware_dir().join("opcodes.h");
    let want = opcodes_header();
    if std::env::var_os("ETSCOPE_WRITE_OPCODES").is_some() {
        std::fs::write(&path, &want).expect("write opcodes.h");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is stale: the operator registry declares other board kernels; regenerate it with \
         ETSCOPE_WRITE_OPCODES=1 cargo test -p etscope-core --test firmware_opcodes",
        path.display()
    );
}

#[test]
fn each_board_code_has_one_symbol_and_each_symbol_one_code() {
    let mut symbols: BTreeMap<&str, u32> = BTreeMap::new();
    for def in etscope_core::ops::all() {
        let Some(k) = def.board else { continue };
        assert!(
            k.code > 0,
            "{}: code 0 means no kernel in an image",
            def.name
        );
        assert!(
            !k.symbol.is_empty()
                && k.symbol
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'),
            "{}: symbol {:?} is not a C identifier tail",
            def.name,
            k.symbol
        );
        if let Some(&code) = symbols.get(k.symbol) {
            assert_eq!(
                code, k.code,
                "OP_{} names codes {code} and {}",
                k.symbol, k.code
            );
        }
        symbols.insert(k.symbol, k.code);
    }
    for (code, (kernel, names)) in board_kernels() {
        for name in names {
            let def = etscope_core::ops::all()
                .iter()
                .find(|d| d.name == name && d.board.is_some_and(|k| k.code == code))
                .expect("listed from the registry");
            assert_eq!(
                def.board,
                Some(kernel),
                "code {code} is declared twice differently"
            );
        }
    }
}

#[test]
fn every_board_kernel_is_dispatched_by_the_firmware() {
    let mut sources = String::new();
    for entry in std::fs::read_dir(firmware_dir()).expect("board/firmware") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "c") {
            sources.push_str(&std::fs::read_to_string(&path).expect("read"));
        }
    }
    let missing: Vec<String> = board_kernels()
        .values()
        .map(|(k, _)| format!("OP_{}", k.symbol))
        .filter(|sym| !sources.contains(&format!("case {sym}:")))
        .collect();
    assert!(
        missing.is_empty(),
        "the registry puts these kernels on the board, but no firmware source dispatches them: {missing:?}"
    );
}

#[test]
fn the_firmware_declares_no_operator_codes_of_its_own() {
    for entry in std::fs::read_dir(firmware_dir()).expect("board/firmware") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "opcodes.h" || !(name.ends_with(".c") || name.ends_with(".h")) {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        for (n, line) in text.lines().enumerate() {
            let t = line.trim_start();
            let declares_code = t.starts_with("OP_") && t.contains('=');
            let old_portable_name = t.contains(" P_");
            assert!(
                !declares_code && !old_portable_name,
                "{name}:{}: an operator code declared outside opcodes.h: {line}",
                n + 1
            );
        }
    }
}

/// The firmware reads an integer kernel's arguments by name (`ARG_<kernel>_<argument>` in the
/// header); where one C function serves a kernel and its `_nhwc` form by one kernel's names,
/// both forms place every argument alike. And the integer kernels' C reads no argument by a
/// bare number for the calls it names by schema (conv, depthwise, transpose conv, pools, add,
/// mul).
#[test]
fn the_firmware_reads_integer_kernels_arguments_by_their_schema_names() {
    let header = opcodes_header();
    let position = |symbol: &str, arg: &str| -> Option<usize> {
        let key = format!("  ARG_{symbol}_{arg} = ");
        let line = header.lines().find(|l| l.starts_with(&key))?;
        line[key.len()..].trim_end_matches(',').parse().ok()
    };
    assert_eq!(
        position("LINEAR", "KERNEL_SUM"),
        Some(3),
        "sanity: {header}"
    );
    for base in [
        "CONV",
        "DEPTHWISE",
        "TRANSPOSE_CONV",
        "AVG_POOL",
        "MAX_POOL",
    ] {
        let names: Vec<String> = header
            .lines()
            .filter_map(|l| l.trim().strip_prefix(&format!("ARG_{base}_")))
            .filter(|rest| !rest.starts_with("NHWC_"))
            .filter_map(|rest| rest.split(' ').next().map(str::to_string))
            .collect();
        assert!(!names.is_empty(), "{base}: no arguments in the header");
        for arg in names {
            assert_eq!(
                position(base, &arg),
                position(&format!("{base}_NHWC"), &arg),
                "{base} and {base}_NHWC place {arg} differently"
            );
        }
    }
    let c = std::fs::read_to_string(firmware_dir().join("integer.c")).expect("integer.c");
    for f in ["run_conv", "run_transpose_conv", "run_pool", "run_add_mul"] {
        let start = c
            .find(&format!("static int {f}("))
            .unwrap_or_else(|| panic!("{f} in integer.c"));
        let body = &c[start..];
        let body = &body[..body.find("\n}\n").unwrap_or(body.len())];
        for bare in (0..16).map(|k| format!("val(a, n, {k})")) {
            assert!(
                !body.contains(&bare),
                "{f} reads {bare}: by position, not by name"
            );
        }
    }
}

//! `board/firmware/opcodes.h`, written from the operator registry: one `OP_<symbol> = code`
//! per firmware kernel, with the operators that call it. The firmware names operators only
//! through this header; `core/tests/firmware_opcodes.rs` fails when the committed header is not
//! what this writes (and rewrites it with `ETSCOPE_WRITE_OPCODES=1`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::ops::{BoardFamily, BoardKernel};

/// Every firmware kernel by code, with the operators (qualified names) that call it.
pub fn board_kernels() -> BTreeMap<u32, (BoardKernel, Vec<&'static str>)> {
    let mut kernels: BTreeMap<u32, (BoardKernel, Vec<&'static str>)> = BTreeMap::new();
    for def in crate::ops::all() {
        if let Some(k) = def.board {
            kernels
                .entry(k.code)
                .or_insert((k, Vec::new()))
                .1
                .push(def.name);
        }
    }
    kernels
}

/// The text of `board/firmware/opcodes.h`.
pub fn opcodes_header() -> String {
    let mut out = String::from(
        "/* GENERATED from etscope's operator registry (core/src/ops/table.rs) by\n \
         * core/src/board_image/opcodes.rs: do not edit. Regenerate with\n \
         * ETSCOPE_WRITE_OPCODES=1 cargo test -p etscope-core --test firmware_opcodes\n \
         *\n \
         * The code a board image stores for each firmware kernel, and the operators calling it.\n \
         * Integer kernels run in integer.c, portable kernels through portable.c. */\n\
         #ifndef ETSCOPE_OPCODES_H\n#define ETSCOPE_OPCODES_H\n\nenum {\n",
    );
    for (code, (kernel, names)) in board_kernels() {
        let family = match kernel.family {
            BoardFamily::Integer => "integer",
            BoardFamily::Portable => "portable",
        };
        let _ = writeln!(
            out,
            "  OP_{} = {code}, /* {family}: {} */",
            kernel.symbol,
            names.join(", ")
        );
    }
    out.push_str(
        "};\n\n/* 1 when integer.c runs `op`, 0 when portable.c dispatches it. */\n\
         static inline int op_is_integer(unsigned op) {\n  switch (op) {\n",
    );
    for (kernel, _) in board_kernels().values() {
        if kernel.family == BoardFamily::Integer {
            let _ = writeln!(out, "    case OP_{}:", kernel.symbol);
        }
    }
    out.push_str("      return 1;\n    default:\n      return 0;\n  }\n}\n\n");
    out.push_str(&argument_indices());
    out.push_str("#endif\n");
    out
}

/// `ARG_<kernel>_<argument> = k` for every argument of every integer kernel's operator schema:
/// the firmware reads a call's arguments by these names, never by counting. Operators that
/// share a kernel share their arguments' positions (a difference is a registry bug, and
/// panics the generator's test).
fn argument_indices() -> String {
    let mut out = String::from(
        "/* The position of each argument in a call of each integer kernel's operators, from the\n * \
         registry's schemas. */\nenum {\n",
    );
    for (kernel, names) in board_kernels().values() {
        if kernel.family != BoardFamily::Integer {
            continue;
        }
        let schemas: Vec<_> = names
            .iter()
            .filter_map(|n| crate::ops::lookup(n, "").map(crate::ops::def))
            .filter_map(|d| d.parsed_schema())
            .collect();
        let Some(first) = schemas.first() else {
            continue;
        };
        for (k, a) in first.args.iter().enumerate() {
            for other in &schemas[1..] {
                assert_eq!(
                    other.args.iter().position(|b| b.name == a.name),
                    Some(k),
                    "{}: the operators of one kernel place `{}` differently",
                    kernel.symbol,
                    a.name
                );
            }
            let _ = writeln!(
                out,
                "  ARG_{}_{} = {k},",
                kernel.symbol,
                a.name.to_ascii_uppercase()
            );
        }
    }
    out.push_str("};\n\n");
    out
}

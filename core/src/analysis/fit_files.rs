//! What `fit -o DIR` writes for a firmware: a C header with the pool sizes under the names
//! ExecuTorch's Arm bare-metal runner reads (`examples/arm/executor_runner/arm_executor_runner.cpp`,
//! read at pytorch/executorch cff6f4dd, after 1.5.1), and a GNU linker-script fragment with the
//! part's regions and the runner's pool sections placed where the part's link puts them.
//!
//! The runner takes every planned arena but memory id 3 from its method-allocator pool (each
//! `allocate(size, 16)`), then `Method::load`'s allocations, then the list of input `EValue`s
//! (`prepare_input_tensors`); memory id 3 comes from the `.fast_memory` pool; the temp
//! allocator is the `.bss.tensor_arena` pool. A build with ETDump adds its debug buffer to the
//! method-allocator pool, which the header says.

use crate::part::linker_name;
use std::fmt::Write;

use super::fit::Fit;
use crate::part::Part;

/// The size of an `EValue` on a 32-bit Arm core (an 8-byte payload and a 4-byte tag, 8-aligned).
const EVALUE_ARM32: u64 = 16;

/// The runner's pools for a program with `arenas` (memory ids 1, 2, …), `method_allocator` and
/// `temp_allocator` bytes of `Method::load`, and `inputs` inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunnerPools {
    pub method_allocator_pool: u64,
    pub temp_allocator_pool: u64,
    pub planned_fast_memory: u64,
}

fn round16(n: u64) -> u64 {
    n.div_ceil(16).saturating_mul(16)
}

/// The pool sizes the runner needs.
pub fn runner_pools(
    arenas: &[u64],
    method_allocator: u64,
    temp_allocator: u64,
    inputs: u64,
) -> RunnerPools {
    let slow: u64 = arenas
        .iter()
        .enumerate()
        .filter(|(i, _)| *i + 1 != 3)
        .map(|(_, &b)| round16(b))
        .fold(0u64, u64::saturating_add);
    RunnerPools {
        method_allocator_pool: slow
            .saturating_add(method_allocator)
            .saturating_add(round16(inputs.saturating_mul(EVALUE_ARM32))),
        temp_allocator_pool: temp_allocator,
        planned_fast_memory: arenas.get(2).copied().unwrap_or(0),
    }
}

/// The header: the runner's three pool sizes, and each part of them as etscope computed it.
/// `command` is the command that wrote it (`etscope fit NAME --part P [--place …] -o`).
pub fn header(command: &str, part: &Part, fit: &Fit, pools: RunnerPools) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "/* Written by `{command}` (DIR: this file's folder): pool sizes for\n * ExecuTorch's Arm bare-metal runner (examples/arm/executor_runner), on the {} ({} @ {} MHz).\n * The method-allocator pool holds the planned arenas (16-aligned; memory id 3, when a program\n * has one, goes to the fast-memory pool instead), the method allocator Method::load takes\n * (ExecuTorch 1.5.1's runtime, modelled byte for byte) and the inputs' EValue list; add\n * ET_DEBUG_BUFFER_SIZE to it for a build with ETDump. */",
        part.name,
        part.core.name(),
        part.mhz
    );
    let _ = writeln!(s, "#ifndef ETSCOPE_POOLS_H\n#define ETSCOPE_POOLS_H\n");
    for p in &fit.pools {
        let _ = writeln!(
            s,
            "#define ETSCOPE_{} {}u /* in {} */",
            linker_name(&p.name),
            p.bytes,
            p.region
        );
    }
    let _ = writeln!(
        s,
        "\n#define ET_ARM_BAREMETAL_METHOD_ALLOCATOR_POOL_SIZE {}u",
        pools.method_allocator_pool
    );
    let _ = writeln!(
        s,
        "#define ET_ARM_BAREMETAL_SCRATCH_TEMP_ALLOCATOR_POOL_SIZE {}u",
        pools.temp_allocator_pool
    );
    if pools.planned_fast_memory > 0 {
        let _ = writeln!(
            s,
            "#define ET_ARM_BAREMETAL_PLANNED_FAST_MEMORY_SIZE {}u",
            pools.planned_fast_memory
        );
    }
    let _ = writeln!(s, "\n#endif /* ETSCOPE_POOLS_H */");
    s
}

/// The region each of the runner's pool sections goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sections {
    /// `.bss.method_allocator_sec`: the planned arenas but memory id 3, and `Method::load`'s.
    pub method_allocator: String,
    /// `.bss.tensor_arena`: the temp allocator.
    pub temp_allocator: String,
    /// `.fast_memory`: memory id 3.
    pub fast_memory: String,
}

impl Sections {
    /// Where the part's default link puts them: all with the arenas.
    pub fn default_link(part: &Part) -> Sections {
        Sections {
            method_allocator: part.link.arenas.clone(),
            temp_allocator: part.link.arenas.clone(),
            fast_memory: part.link.arenas.clone(),
        }
    }

    /// Where `placement` puts them (a pool it does not hold stays with the link's arenas).
    pub fn placed(part: &Part, placement: &super::place::Placement) -> Sections {
        let at = |block: &str| {
            placement
                .blocks
                .iter()
                .find(|b| b.name == block)
                .map_or_else(|| part.link.arenas.clone(), |b| b.region.clone())
        };
        Sections {
            method_allocator: at("method allocator pool"),
            temp_allocator: at("temp allocator"),
            fast_memory: at("fast memory (memory id 3)"),
        }
    }
}

/// The linker fragment: the part's regions, and the runner's sections placed in `sections`,
/// the program where the part's link puts constants, and a placed program's `.ptd` and
/// weight copies ([`placed_weights_sections`]).
pub fn linker_fragment(
    command: &str,
    part: &Part,
    pools: RunnerPools,
    sections: &Sections,
    placed: Option<&super::place::PlacedProgram>,
) -> String {
    let mut s = format!(
        "/* Written by `{command}` (DIR: this file's folder): the memory regions\n * of the {} (docs/parts.md) and where ExecuTorch's Arm bare-metal runner's pools go. INCLUDE it in a linker script that\n * places .text and the rest, before any rule that gathers *(.bss.*): its pool and weight sections\n * have .bss names (no bytes in the image). */\nMEMORY\n{{\n",
        part.name
    );
    for r in &part.regions {
        // flash and MRAM are read and executed, not written at run time
        let access = match r.kind {
            crate::part::RegionKind::Flash | crate::part::RegionKind::Mram => "rx",
            _ => "rwx",
        };
        let _ = writeln!(
            s,
            "  {} ({access}) : ORIGIN = {:#010x}, LENGTH = {:#x} /* {}: {} */",
            linker_name(&r.name),
            r.base,
            r.size,
            r.name,
            r.kind.name()
        );
    }
    s.push_str("}\n\nSECTIONS\n{\n");
    let rom = linker_name(&part.link.constants);
    let _ = writeln!(
        s,
        "  .bss.method_allocator_sec (NOLOAD) : ALIGN(16) {{ *(.bss.method_allocator_sec) }} > {}",
        linker_name(&sections.method_allocator)
    );
    // the runner's name for its temp-allocator pool, not the planned arena
    let _ = writeln!(
        s,
        "  .bss.tensor_arena (NOLOAD) : ALIGN(16) {{ *(.bss.tensor_arena) }} > {} /* the temp allocator */",
        linker_name(&sections.temp_allocator)
    );
    if pools.planned_fast_memory > 0 {
        let _ = writeln!(
            s,
            "  .fast_memory (NOLOAD) : ALIGN(16) {{ *(.fast_memory) }} > {}",
            linker_name(&sections.fast_memory)
        );
    }
    let _ = writeln!(
        s,
        "  network_model_sec : ALIGN(16) {{ KEEP(*(network_model_sec)) }} > {rom}"
    );
    if let Some(p) = placed {
        s.push_str(&placed_weights_sections(part, p));
    }
    s.push_str("}\n");
    s
}

/// The section a region's copy of the placed weights goes to (`.bss.etscope_weights_DTCM`: a
/// `.bss` name, so the compiler emits no bytes for it).
pub fn weights_section(region: &str) -> String {
    format!(".bss.etscope_weights_{}", linker_name(region))
}

/// The linker fragment's lines for a placed program's weights: the `.ptd` in the link's
/// constants region, and each region's copy of its range (no load image: the firmware fills it).
pub fn placed_weights_sections(part: &Part, placed: &super::place::PlacedProgram) -> String {
    let mut s = format!(
        "  etscope_ptd_sec : ALIGN(16) {{ KEEP(*(etscope_ptd_sec)) }} > {} /* the .ptd */\n",
        linker_name(&part.link.constants)
    );
    for r in &placed.regions {
        let _ = writeln!(
            s,
            "  {0} (NOLOAD) : ALIGN(16) {{ *({0}) }} > {1} /* {2} bytes of weights */",
            weights_section(&r.region),
            linker_name(&r.region),
            r.copy_bytes()
        );
    }
    s
}

/// A C++ source that wires a placed program's weights for ExecuTorch's runtime: the `.ptd`
/// as a 16-aligned array in flash (as ExecuTorch's `pte_to_header.py` embeds the program), a
/// buffer per region in the section the linker fragment puts there, a `DataLoader` that serves
/// the `.ptd`'s reads from those copies, and `etscope_load_placed_weights()`, which copies each
/// region's range once and returns the `FlatTensorDataMap` to pass to `load_method`.
pub fn placed_weights_source(
    program_name: &str,
    part: &Part,
    placed: &super::place::PlacedProgram,
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "/* Written by `etscope fit {program_name} --part {} --place … -o`: the weights the placement\n * moved into RAM, read by ExecuTorch's runtime as external constants (the .ptd beside the\n * program, embedded below). Declare and call it where the program is loaded:\n *\n *   executorch::runtime::Result<executorch::extension::FlatTensorDataMap>\n *   etscope_load_placed_weights();\n *\n *   auto weights = etscope_load_placed_weights();   // once, before load_method\n *   if (!weights.ok()) {{ ... }}\n *   auto method = program->load_method(\"forward\", &memory_manager, event_tracer,\n *                                      &weights.get());\n *\n * Keep `weights` alive as long as the method. Link with the linker fragment beside this file\n * (its etscope_ptd_sec and .bss.etscope_weights_* sections) and ExecuTorch's\n * extension_flat_tensor library. */",
        part.name
    );
    s.push_str(
        "#include <cstdint>\n#include <cstring>\n#include <new>\n\n#include <executorch/extension/flat_tensor/flat_tensor_data_map.h>\n#include <executorch/runtime/core/data_loader.h>\n\n",
    );
    let _ = writeln!(
        s,
        "__attribute__((section(\"etscope_ptd_sec\"), aligned(16))) const unsigned char etscope_ptd[{}] = {{",
        placed.ptd.len()
    );
    for chunk in placed.ptd.chunks(16) {
        let line: Vec<String> = chunk.iter().map(|b| format!("0x{b:02x}")).collect();
        let _ = writeln!(s, "    {},", line.join(", "));
    }
    s.push_str("};\n\nnamespace {\n\n");
    for r in &placed.regions {
        let _ = writeln!(
            s,
            "__attribute__((section(\"{}\"), aligned(16))) unsigned char weights_{}[{}]; /* in {} */",
            weights_section(&r.region),
            linker_name(&r.region),
            r.copy_bytes(),
            r.region
        );
    }
    s.push_str(
        "\n/* Each region's range of the .ptd, and its copy. */\nstruct Copied {\n    size_t begin;\n    size_t end;\n    unsigned char* copy;\n};\n\nconst Copied copies[] = {\n",
    );
    for r in &placed.regions {
        let _ = writeln!(
            s,
            "    {{{}u, {}u, weights_{}}}, /* {} */",
            r.range.start,
            r.range.end,
            linker_name(&r.region),
            r.keys.join(", ")
        );
    }
    s.push_str(
        "};\n\nusing executorch::runtime::Error;\nusing executorch::runtime::FreeableBuffer;\nusing executorch::runtime::Result;\n\n/* Reads inside a copied range come from its copy; the header and FlatBuffer from flash. */\nclass PlacedPtdLoader final : public executorch::runtime::DataLoader {\n public:\n    Result<FreeableBuffer> load(size_t offset, size_t size, const SegmentInfo&) const override {\n        if (offset > sizeof(etscope_ptd) || size > sizeof(etscope_ptd) - offset) {\n            return Error::InvalidArgument;\n        }\n        for (const Copied& c : copies) {\n            if (offset >= c.begin && offset + size <= c.end) {\n                return FreeableBuffer(c.copy + (offset - c.begin), size, nullptr);\n            }\n        }\n        return FreeableBuffer(etscope_ptd + offset, size, nullptr);\n    }\n    Result<size_t> size() const override {\n        return sizeof(etscope_ptd);\n    }\n};\n\n/* Constructed in place, never destroyed: no static destructor to register. */\nalignas(PlacedPtdLoader) unsigned char loader_storage[sizeof(PlacedPtdLoader)];\nPlacedPtdLoader* loader = nullptr;\n\n} // namespace\n\nResult<executorch::extension::FlatTensorDataMap> etscope_load_placed_weights() {\n    for (const Copied& c : copies) {\n        std::memcpy(c.copy, etscope_ptd + c.begin, c.end - c.begin);\n    }\n    if (loader == nullptr) {\n        loader = new (loader_storage) PlacedPtdLoader();\n    }\n    return executorch::extension::FlatTensorDataMap::load(loader);\n}\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_method_allocator_pool_holds_the_slow_arenas_load_and_the_inputs() {
        let p = runner_pools(&[1000, 0, 512], 300, 40, 2);
        // arena 1 rounded to 16 (1008), arena 3 in fast memory; 2 inputs × 16 B
        assert_eq!(p.method_allocator_pool, 1008 + 300 + 32);
        assert_eq!(p.temp_allocator_pool, 40);
        assert_eq!(p.planned_fast_memory, 512);
        assert_eq!(linker_name("Flash bank 1"), "FLASH_BANK_1");
        assert_eq!(
            linker_name("planned arena (memory id 1)"),
            "PLANNED_ARENA_MEMORY_ID_1"
        );
        assert_eq!(linker_name("0 wait"), "R_0_WAIT");
    }
}

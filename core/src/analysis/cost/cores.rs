//! What the cost model knows of each Cortex-M core ([`Core`], modelled once in
//! `crate::cortex_m`): the cycles of each instruction class from its Technical Reference Manual
//! (docs/cost-model.md gives the rows and their sources).

pub use crate::cortex_m::Core;

/// Cycles of one instruction of each class the loop mixes count (`Mix`), issue and result
/// latency folded as the loops see them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    pub alu: f64,
    pub load: f64,
    pub store: f64,
    pub multiply: f64,
    /// A taken branch (loop back-edge): 1 + the pipeline refill.
    pub branch: f64,
    /// A Helium vector load or store (128 bits), where the core has Helium.
    pub vector_load_store: f64,
    /// A Helium vector data-processing instruction.
    pub vector_op: f64,
    /// A single-precision float add or multiply (FPU, or the soft-float library call).
    pub float_op: f64,
    /// A single-precision fused multiply-add with its operand loads (FPU or soft float).
    pub float_mac: f64,
    /// A single-precision divide.
    pub float_div: f64,
    /// `expf`/`tanhf`-class library calls.
    pub float_transcendental: f64,
}

/// The cores the cost model has timings of, in [`Core::ALL`]'s order (the pickers' lists).
pub fn priced_cores() -> Vec<Core> {
    Core::ALL
        .into_iter()
        .filter(|c| c.timing().is_some())
        .collect()
}

/// The cost model's name for `name`, any spelling [`Core::parse`] reads, or a message naming
/// it and why: a core the model has no timings of (the M23), or no core at all.
pub fn priced_core(name: &str) -> Result<Core, String> {
    let priced = || {
        priced_cores()
            .into_iter()
            .map(Core::key)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(core) = Core::parse(name) else {
        return Err(format!("unknown core {name:?}: one of {}", priced()));
    };
    match core.timing() {
        Some(_) => Ok(core),
        None => Err(format!(
            "the cost model has no timings of the {}: one of {}",
            core.name(),
            priced()
        )),
    }
}

impl Core {
    /// Cycles per instruction class (docs/cost-model.md, "Core timings").
    /// The M0 is priced as the M0+ and the M35P as the M33 (one pipeline each); the M23 the
    /// model has no timings of (`None`).
    pub fn timing(self) -> Option<Timing> {
        // soft float (libgcc's __aeabi_fadd/__aeabi_fmul on Thumb-2 / Thumb-1)
        let soft = |scale: f64| Timing {
            alu: 1.0,
            load: 2.0,
            store: if scale > 1.0 { 2.0 } else { 1.0 },
            multiply: 1.0,
            branch: if scale > 1.0 { 2.0 } else { 3.0 },
            vector_load_store: 0.0,
            vector_op: 0.0,
            float_op: 45.0 * scale,
            float_mac: 95.0 * scale,
            float_div: 120.0 * scale,
            float_transcendental: 900.0 * scale,
        };
        Some(match self {
            Core::M0 | Core::M0Plus => soft(1.6),
            Core::M3 => soft(1.0),
            // M4: LDR 2, STR 1 (buffered), ALU and MAC (SMLAD, SMULL) 1, taken branch 1 + P
            // with a refill P of 2; FPU VADD/VMUL 1, VFMA 3, VDIV 14
            Core::M4 => Timing {
                alu: 1.0,
                load: 2.0,
                store: 1.0,
                multiply: 1.0,
                branch: 3.0,
                vector_load_store: 0.0,
                vector_op: 0.0,
                float_op: 1.0,
                float_mac: 5.0,
                float_div: 14.0,
                float_transcendental: 60.0,
            },
            // M33 (and the M35P): as the M4 with back-to-back loads pipelined and a shorter refill
            Core::M33 | Core::M35P => Timing {
                alu: 1.0,
                load: 1.5,
                store: 1.0,
                multiply: 1.0,
                branch: 2.0,
                vector_load_store: 0.0,
                vector_op: 0.0,
                float_op: 1.0,
                float_mac: 4.0,
                float_div: 14.0,
                float_transcendental: 55.0,
            },
            // M7: dual issue (two ALU ops, or ALU + load, a cycle), a branch predictor
            Core::M7 => Timing {
                alu: 0.6,
                load: 1.0,
                store: 0.6,
                multiply: 0.75,
                branch: 1.0,
                vector_load_store: 0.0,
                vector_op: 0.0,
                float_op: 0.6,
                float_mac: 2.0,
                float_div: 14.0,
                float_transcendental: 35.0,
            },
            // M55: single issue; Helium dual-beat: a 128-bit instruction takes 2 cycles, and a
            // load overlaps the arithmetic beside it (1 cycle each when interleaved)
            Core::M55 => Timing {
                alu: 1.0,
                load: 1.5,
                store: 1.0,
                multiply: 1.0,
                branch: 2.0,
                vector_load_store: 1.0,
                vector_op: 1.5,
                float_op: 1.0,
                float_mac: 3.0,
                float_div: 14.0,
                float_transcendental: 50.0,
            },
            // M85: dual-issue scalar pipeline with a branch predictor; Helium dual-beat with
            // the overlap of loads and arithmetic complete
            Core::M85 => Timing {
                alu: 0.6,
                load: 1.0,
                store: 0.6,
                multiply: 0.75,
                branch: 1.0,
                vector_load_store: 1.0,
                vector_op: 1.0,
                float_op: 0.6,
                float_mac: 2.0,
                float_div: 10.0,
                float_transcendental: 30.0,
            },
            Core::M23 => return None,
        })
    }
}

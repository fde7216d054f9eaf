//! The Cortex-M cores the cost model prices: which CMSIS-NN path each takes (Helium, DSP or
//! plain C), whether it has a single-precision FPU, and the cycles of each instruction class
//! from its Technical Reference Manual (docs/cost-model.md gives the rows and their sources).

use crate::kernels::Target;

/// A Cortex-M core a program may be costed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Core {
    M0Plus,
    M3,
    M4,
    M7,
    M33,
    M55,
    M85,
}

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

impl Core {
    pub const ALL: [Core; 7] = [
        Core::M0Plus,
        Core::M3,
        Core::M4,
        Core::M7,
        Core::M33,
        Core::M55,
        Core::M85,
    ];

    /// The core named on a command line, any spelling [`crate::core_name::core_key`] reads
    /// (`m4`, `cortex-m4`, `m0plus`, `M0+`); the M0 is priced as the M0+ and the M35P as the
    /// M33 (one pipeline each). `None` for a core the model has no timings of (the M23).
    pub fn parse(name: &str) -> Option<Core> {
        Some(match crate::core_name::core_key(name)? {
            "m0" | "m0plus" => Core::M0Plus,
            "m3" => Core::M3,
            "m4" => Core::M4,
            "m7" => Core::M7,
            "m33" | "m35p" => Core::M33,
            "m55" => Core::M55,
            "m85" => Core::M85,
            _ => return None,
        })
    }

    /// [`Core::parse`], or a message naming `name` and why: a core the model has no timings
    /// of, or no core at all.
    pub fn parse_or_list(name: &str) -> Result<Core, String> {
        Core::parse(name).ok_or_else(|| match crate::core_name::core_key(name) {
            Some(key) => format!(
                "the cost model has no timings of the Cortex-{}: one of {}",
                key.to_ascii_uppercase(),
                Core::ALL.map(Core::key).join(", ")
            ),
            None => format!(
                "unknown core {name:?}: one of {}",
                Core::ALL.map(Core::key).join(", ")
            ),
        })
    }

    /// The short name (`m4`), as `--core` takes it.
    pub fn key(self) -> &'static str {
        match self {
            Core::M0Plus => "m0plus",
            Core::M3 => "m3",
            Core::M4 => "m4",
            Core::M7 => "m7",
            Core::M33 => "m33",
            Core::M55 => "m55",
            Core::M85 => "m85",
        }
    }

    /// As a person reads it (`Cortex-M4`).
    pub fn name(self) -> &'static str {
        match self {
            Core::M0Plus => "Cortex-M0+",
            Core::M3 => "Cortex-M3",
            Core::M4 => "Cortex-M4",
            Core::M7 => "Cortex-M7",
            Core::M33 => "Cortex-M33",
            Core::M55 => "Cortex-M55",
            Core::M85 => "Cortex-M85",
        }
    }

    /// A clock parts with this core commonly run at, in MHz (the default when none is given).
    pub fn typical_mhz(self) -> f64 {
        match self {
            Core::M0Plus => 64.0,
            Core::M3 => 72.0,
            Core::M4 => 120.0,
            Core::M7 => 280.0,
            Core::M33 => 128.0,
            Core::M55 => 400.0,
            Core::M85 => 480.0,
        }
    }

    /// The CMSIS-NN path (and the device arithmetic) this core runs.
    pub fn target(self) -> Target {
        match self {
            Core::M55 | Core::M85 => Target::CortexM55,
            Core::M4 | Core::M7 | Core::M33 => Target::CortexMScalar,
            Core::M0Plus | Core::M3 => Target::CortexMBase,
        }
    }

    /// Whether the core has a single-precision FPU (the usual parts: M4F, M7, M33, M55, M85).
    pub fn has_fpu(self) -> bool {
        !matches!(self, Core::M0Plus | Core::M3)
    }

    /// Cycles per instruction class (docs/cost-model.md, "Core timings").
    pub fn timing(self) -> Timing {
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
        match self {
            Core::M0Plus => soft(1.6),
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
            // M33: as the M4 with back-to-back loads pipelined and a shorter refill
            Core::M33 => Timing {
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
        }
    }
}

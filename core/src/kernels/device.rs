//! The device the `cortex_m::` kernels model: which core (its CMSIS-NN path: Helium, DSP or
//! plain C) and which CMSIS-NN version. How a program says which core it was lowered for is read
//! from its calls above the kernels (`crate::ir::target`).

/// The core whose arithmetic the Cortex-M kernels reproduce. They differ in `quantize`: scalar
/// cores compute `nearbyint(x · (1/scale))`; Helium/MVE cores (M55) compute, for every full
/// block of 16 elements, a fused multiply-add with a rounding constant and narrow through
/// int16 without saturation (the tail uses the scalar path). Which CMSIS-NN path runs (MVE,
/// DSP, plain C) also decides which buffers a call needs (`core_buffers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    /// Cortex-M55/M85 (Helium/MVE). Default: the reference programs target it.
    #[default]
    CortexM55,
    /// Cores with the DSP extension and no Helium: Cortex-M4, M7, M33, M35P.
    CortexMDsp,
    /// Cores with neither: Cortex-M0, M0+, M3, M23 (CMSIS-NN's plain C path).
    CortexMBase,
}

/// What the kernels know of a core: the device arithmetic of its CMSIS-NN path.
impl crate::cortex_m::Core {
    /// The device arithmetic the host kernels model for this core (its CMSIS-NN path).
    pub fn kernel_target(self) -> Target {
        match self.isa() {
            crate::cortex_m::Isa::Mve => Target::CortexM55,
            crate::cortex_m::Isa::Dsp => Target::CortexMDsp,
            crate::cortex_m::Isa::Plain => Target::CortexMBase,
        }
    }

    /// The core a CMSIS-NN path stands for where nothing names the core (a program says only
    /// its path): the M55 for Helium, the M4 for DSP, the M0+ for plain C. Whoever shows a
    /// figure of it says the core was assumed.
    pub fn standing_for(target: Target) -> crate::cortex_m::Core {
        match target {
            Target::CortexM55 => crate::cortex_m::Core::M55,
            Target::CortexMDsp => crate::cortex_m::Core::M4,
            Target::CortexMBase => crate::cortex_m::Core::M0Plus,
        }
    }
}

impl Target {
    /// The core named on a command line (`m55`, `cortex-m4`, ...), `None` when unknown.
    pub fn parse(name: &str) -> Option<Target> {
        if let Some(core) = crate::cortex_m::Core::parse(name) {
            return Some(core.kernel_target());
        }
        // the paths by name
        match name.trim().to_ascii_lowercase().as_str() {
            "mve" | "helium" => Some(Target::CortexM55),
            "dsp" | "scalar" => Some(Target::CortexMDsp),
            "base" | "plain" => Some(Target::CortexMBase),
            _ => None,
        }
    }

    /// The cores this stands for, as a person reads them.
    pub fn name(self) -> &'static str {
        match self {
            Target::CortexM55 => "Cortex-M55/M85 (Helium)",
            Target::CortexMDsp => "Cortex-M4/M7/M33/M35P (DSP)",
            Target::CortexMBase => "Cortex-M0/M0+/M3/M23 (plain C)",
        }
    }

    /// Whether CMSIS-NN runs its Helium (MVE) path on this core.
    pub fn has_helium(self) -> bool {
        self == Target::CortexM55
    }
}

/// The CMSIS-NN version whose kernels the device runs, where behaviour changed between versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CmsisNn {
    /// dbf45dbf, pinned by ExecuTorch 1.5.1: `arm_transpose_conv_s8` computes wrong rows when
    /// `padding % stride != 0` and leaves the last output row unwritten.
    #[default]
    Dbf45dbf,
    /// 4a8f5b5d or later: transpose convolution fixed.
    Fixed4a8f5b5d,
}

impl CmsisNn {
    /// The version named on a command line (a commit prefix), `None` when unknown.
    pub fn parse(name: &str) -> Option<CmsisNn> {
        match name {
            n if n.len() >= 4 && "dbf45dbf".starts_with(n) => Some(CmsisNn::Dbf45dbf),
            n if n.len() >= 4 && "4a8f5b5d".starts_with(n) => Some(CmsisNn::Fixed4a8f5b5d),
            "pinned" | "executorch-1.5.1" => Some(CmsisNn::Dbf45dbf),
            "fixed" | "latest" => Some(CmsisNn::Fixed4a8f5b5d),
            _ => None,
        }
    }
}

/// What the device kernels model: the core, the CMSIS-NN version and the C library.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Device {
    pub target: Target,
    pub cmsis_nn: CmsisNn,
    /// Whose C library the float kernels' `expf`, `tanhf`, ... are (the device's newlib unless
    /// a check against ExecuTorch's x86 runtime asks for the host's).
    pub libm: super::libm::Libm,
}

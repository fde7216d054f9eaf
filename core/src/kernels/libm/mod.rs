//! The C library's math functions (`expf`, `tanhf`, `powf`, …) that the portable kernels call,
//! as the machine being modelled computes them. ExecuTorch's portable kernels call `std::exp`
//! and friends in the tensor's own precision (single precision for float32), so their last bits
//! are the C library's: on a Cortex-M built with the Arm GNU toolchain that is newlib
//! ([`Libm::Newlib`], the default: the device), on x86 Linux glibc ([`Libm::Glibc`]: what
//! ExecuTorch's x86 runtime computes, for checks against it). They differ in the last bit on up
//! to a few percent of inputs (`erff`, `asinf`, `tanf`, …).
//!
//! A function newlib computes that the host does not model is refused ([`Unmodelled`]), never
//! replaced by the host's: the answer would be believed and differ from the device's.

pub mod host;
pub mod newlib;

use thiserror::Error;

/// Whose C library the float kernels' math functions are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Libm {
    /// newlib 3.3.0 as the Arm GNU toolchain links it for a Cortex-M with an FPU: the device.
    #[default]
    Newlib,
    /// The host's C library (glibc on Linux): what ExecuTorch's x86 runtime computes here.
    Glibc,
}

impl Libm {
    /// The names a command line gives.
    pub const NAMES: [&'static str; 2] = ["newlib", "glibc"];

    /// The flavour named on a command line.
    pub fn parse(name: &str) -> Option<Libm> {
        match name {
            "newlib" => Some(Libm::Newlib),
            "glibc" | "host" => Some(Libm::Glibc),
            _ => None,
        }
    }

    /// Its command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Libm::Newlib => "newlib",
            Libm::Glibc => "glibc",
        }
    }

    /// The single-precision `function`, or why it cannot be had.
    pub fn f32_fn(self, function: Function) -> Result<fn(f32) -> f32, Unmodelled> {
        use Function::*;
        match self {
            Libm::Glibc => Ok(host::f32_fn(function)),
            Libm::Newlib => match function {
                Exp => Ok(newlib::expf),
                Exp2 => Ok(newlib::exp2f),
                Expm1 => Ok(newlib::expm1f),
                Log => Ok(newlib::logf),
                Log2 => Ok(newlib::log2f),
                Log10 => Ok(newlib::log10f),
                Tanh => Ok(newlib::tanhf),
                Sqrt => Ok(newlib::sqrtf),
                Erf => Ok(newlib::erff),
                Atan => Ok(newlib::atanf),
                Asin => Ok(newlib::asinf),
                Acos => Ok(newlib::acosf),
                Sinh => Ok(newlib::sinhf),
                Cosh => Ok(newlib::coshf),
                Asinh => Ok(newlib::asinhf),
                Acosh => Ok(newlib::acoshf),
                Atanh => Ok(newlib::atanhf),
                Log1p => Ok(newlib::log1pf),
                Sin => Ok(newlib::sinf),
                Cos => Ok(newlib::cosf),
                Tan => Ok(newlib::tanf),
            },
        }
    }

    /// `function(x)` in single precision.
    pub fn f32(self, function: Function, x: f32) -> Result<f32, Unmodelled> {
        self.f32_fn(function).map(|f| f(x))
    }

    /// The single-precision two-argument `function`.
    pub fn f32_binary_fn(self, function: Binary) -> Result<fn(f32, f32) -> f32, Unmodelled> {
        match (self, function) {
            (Libm::Glibc, _) => Ok(host::f32_binary_fn(function)),
            (Libm::Newlib, Binary::Pow) => Ok(newlib::powf),
            (Libm::Newlib, Binary::Fmod) => Ok(newlib::fmodf),
            (Libm::Newlib, Binary::Atan2) => Ok(newlib::atan2f),
        }
    }

    /// `function(x, y)` in single precision.
    pub fn f32_binary(self, function: Binary, x: f32, y: f32) -> Result<f32, Unmodelled> {
        self.f32_binary_fn(function).map(|f| f(x, y))
    }

    /// The double-precision `function` (a float64 tensor, or a kernel that widens).
    pub fn f64_fn(self, function: Function) -> Result<fn(f64) -> f64, Unmodelled> {
        match (self, function) {
            (Libm::Glibc, _) => Ok(host::f64_fn(function)),
            (Libm::Newlib, Function::Sqrt) => Ok(newlib::sqrt),
            (Libm::Newlib, Function::Erf) => Ok(newlib::erf),
            (Libm::Newlib, _) => Err(Unmodelled::new(function.c_name_f64(), self)),
        }
    }

    /// `function(x)` in double precision.
    pub fn f64(self, function: Function, x: f64) -> Result<f64, Unmodelled> {
        self.f64_fn(function).map(|f| f(x))
    }

    /// The double-precision two-argument `function`.
    pub fn f64_binary_fn(self, function: Binary) -> Result<fn(f64, f64) -> f64, Unmodelled> {
        match self {
            Libm::Glibc => Ok(host::f64_binary_fn(function)),
            Libm::Newlib => Err(Unmodelled::new(function.c_name_f64(), self)),
        }
    }
}

/// A one-argument function of `<math.h>`. The order is the libm probe's numbering
/// (`board/libm_probe/probe.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Function {
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Exp,
    Exp2,
    Expm1,
    Log,
    Log2,
    Log10,
    Log1p,
    Sqrt,
    Erf,
}

impl Function {
    /// Every function, in the probe's order.
    pub const ALL: [Function; 21] = {
        use Function::*;
        [
            Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh, Asinh, Acosh, Atanh, Exp, Exp2,
            Expm1, Log, Log2, Log10, Log1p, Sqrt, Erf,
        ]
    };

    /// The C name of the double-precision function.
    pub fn c_name_f64(self) -> &'static str {
        use Function::*;
        match self {
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Asinh => "asinh",
            Acosh => "acosh",
            Atanh => "atanh",
            Exp => "exp",
            Exp2 => "exp2",
            Expm1 => "expm1",
            Log => "log",
            Log2 => "log2",
            Log10 => "log10",
            Log1p => "log1p",
            Sqrt => "sqrt",
            Erf => "erf",
        }
    }

    /// The C name of the single-precision function (`sinf`, …).
    pub fn c_name_f32(self) -> &'static str {
        use Function::*;
        match self {
            Sin => "sinf",
            Cos => "cosf",
            Tan => "tanf",
            Asin => "asinf",
            Acos => "acosf",
            Atan => "atanf",
            Sinh => "sinhf",
            Cosh => "coshf",
            Tanh => "tanhf",
            Asinh => "asinhf",
            Acosh => "acoshf",
            Atanh => "atanhf",
            Exp => "expf",
            Exp2 => "exp2f",
            Expm1 => "expm1f",
            Log => "logf",
            Log2 => "log2f",
            Log10 => "log10f",
            Log1p => "log1pf",
            Sqrt => "sqrtf",
            Erf => "erff",
        }
    }
}

/// A two-argument function of `<math.h>` (the probe numbers them after [`Function::ALL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Binary {
    Pow,
    Atan2,
    Fmod,
}

impl Binary {
    /// Every function, in the probe's order.
    pub const ALL: [Binary; 3] = [Binary::Pow, Binary::Atan2, Binary::Fmod];

    /// The C name of the double-precision function.
    pub fn c_name_f64(self) -> &'static str {
        match self {
            Binary::Pow => "pow",
            Binary::Atan2 => "atan2",
            Binary::Fmod => "fmod",
        }
    }

    /// The C name of the single-precision function (`powf`, …).
    pub fn c_name_f32(self) -> &'static str {
        match self {
            Binary::Pow => "powf",
            Binary::Atan2 => "atan2f",
            Binary::Fmod => "fmodf",
        }
    }
}

/// A C library function the host does not compute as the modelled library does.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{library}'s `{function}` is not modelled on the host (its last bits would be the host's, not the device's); run with `--libm glibc` for ExecuTorch's x86 arithmetic")]
pub struct Unmodelled {
    pub function: &'static str,
    pub library: &'static str,
}

impl Unmodelled {
    fn new(function: &'static str, libm: Libm) -> Unmodelled {
        Unmodelled {
            function,
            library: libm.name(),
        }
    }
}

/// What [`check_probe_records`] found.
#[derive(Debug, Default)]
pub struct ProbeReport {
    /// Records of modelled functions recomputed.
    pub checked: usize,
    /// `(function, inputs, board bits, host bits)` of every record that differs.
    pub differences: Vec<(&'static str, [u64; 2], u64, u64)>,
    /// Functions in the records that the host refuses.
    pub unmodelled: Vec<&'static str>,
}

/// A malformed probe file.
#[derive(Debug, Error)]
#[error("libm probe records: {0}")]
pub struct ProbeError(String);

/// Recomputes every record of the libm probe (`board/libm_probe/probe.c`: u32 function, u32 0,
/// u64 input, u64 input, u64 result, little-endian) with [`Libm::Newlib`].
pub fn check_probe_records(bytes: &[u8]) -> Result<ProbeReport, ProbeError> {
    const RECORD: usize = 32;
    if !bytes.len().is_multiple_of(RECORD) {
        return Err(ProbeError(format!(
            "{} bytes is not a whole number of {RECORD}-byte records",
            bytes.len()
        )));
    }
    let mut report = ProbeReport::default();
    let word = |r: &[u8], at: usize| -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&r[at..at + 8]);
        u64::from_le_bytes(b)
    };
    for r in bytes.chunks_exact(RECORD) {
        let id = u32::from_le_bytes([r[0], r[1], r[2], r[3]]) as usize;
        let (a, b, board) = (word(r, 8), word(r, 16), word(r, 24));
        let unary = Function::ALL.len();
        let (name, host) = if id < unary {
            let f = Function::ALL[id];
            (
                f.c_name_f32(),
                Libm::Newlib
                    .f32(f, f32::from_bits(a as u32))
                    .map(|y| u64::from(y.to_bits())),
            )
        } else if id < unary + Binary::ALL.len() {
            let f = Binary::ALL[id - unary];
            let name = f.c_name_f32();
            let y = Libm::Newlib.f32_binary(f, f32::from_bits(a as u32), f32::from_bits(b as u32));
            (name, y.map(|y| u64::from(y.to_bits())))
        } else if id == unary + Binary::ALL.len() {
            (
                "erf",
                Libm::Newlib
                    .f64(Function::Erf, f64::from_bits(a))
                    .map(f64::to_bits),
            )
        } else {
            return Err(ProbeError(format!(
                "function number {id} is not the probe's"
            )));
        };
        match host {
            Ok(host) => {
                report.checked += 1;
                if host != board {
                    report.differences.push((name, [a, b], board, host));
                }
            }
            Err(_) => {
                if !report.unmodelled.contains(&name) {
                    report.unmodelled.push(name);
                }
            }
        }
    }
    Ok(report)
}

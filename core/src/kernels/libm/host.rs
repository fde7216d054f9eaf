//! The host's own C library (glibc on Linux): what ExecuTorch's x86 runtime computes on the same
//! machine, since it calls the same functions. Rust's `f32` methods call the C library for all
//! but `asinh`, `acosh`, `atanh` and `erf`, which are declared here.

use super::Function;

// SAFETY: these are the C99 `<math.h>` functions of the platform's C library, pure functions of
// their argument with the C ABI the declarations give; every platform Rust's std supports has them.
extern "C" {
    fn asinhf(x: f32) -> f32;
    fn acoshf(x: f32) -> f32;
    fn atanhf(x: f32) -> f32;
    fn erff(x: f32) -> f32;
    fn asinh(x: f64) -> f64;
    fn acosh(x: f64) -> f64;
    fn atanh(x: f64) -> f64;
    fn erf(x: f64) -> f64;
}

/// `function(x)` in single precision, as the C library computes it.
pub fn f32(function: Function, x: f32) -> f32 {
    use Function::*;
    match function {
        Sin => x.sin(),
        Cos => x.cos(),
        Tan => x.tan(),
        Asin => x.asin(),
        Acos => x.acos(),
        Atan => x.atan(),
        Sinh => x.sinh(),
        Cosh => x.cosh(),
        Tanh => x.tanh(),
        // SAFETY: see the declarations.
        Asinh => unsafe { asinhf(x) },
        // SAFETY: see the declarations.
        Acosh => unsafe { acoshf(x) },
        // SAFETY: see the declarations.
        Atanh => unsafe { atanhf(x) },
        Exp => x.exp(),
        Exp2 => x.exp2(),
        Expm1 => x.exp_m1(),
        Log => x.ln(),
        Log2 => x.log2(),
        Log10 => x.log10(),
        Log1p => x.ln_1p(),
        Sqrt => x.sqrt(),
        // SAFETY: see the declarations.
        Erf => unsafe { erff(x) },
    }
}

/// `function(x, y)` in single precision, as the C library computes it.
pub fn f32_binary(function: super::Binary, x: f32, y: f32) -> f32 {
    match function {
        super::Binary::Pow => x.powf(y),
        super::Binary::Atan2 => x.atan2(y),
        super::Binary::Fmod => x % y,
    }
}

/// `function(x)` in double precision, as the C library computes it.
pub fn f64(function: Function, x: f64) -> f64 {
    use Function::*;
    match function {
        Sin => x.sin(),
        Cos => x.cos(),
        Tan => x.tan(),
        Asin => x.asin(),
        Acos => x.acos(),
        Atan => x.atan(),
        Sinh => x.sinh(),
        Cosh => x.cosh(),
        Tanh => x.tanh(),
        // SAFETY: see the declarations.
        Asinh => unsafe { asinh(x) },
        // SAFETY: see the declarations.
        Acosh => unsafe { acosh(x) },
        // SAFETY: see the declarations.
        Atanh => unsafe { atanh(x) },
        Exp => x.exp(),
        Exp2 => x.exp2(),
        Expm1 => x.exp_m1(),
        Log => x.ln(),
        Log2 => x.log2(),
        Log10 => x.log10(),
        Log1p => x.ln_1p(),
        Sqrt => x.sqrt(),
        // SAFETY: see the declarations.
        Erf => unsafe { erf(x) },
    }
}

/// `function(x, y)` in double precision, as the C library computes it.
pub fn f64_binary(function: super::Binary, x: f64, y: f64) -> f64 {
    match function {
        super::Binary::Pow => x.powf(y),
        super::Binary::Atan2 => x.atan2(y),
        super::Binary::Fmod => x % y,
    }
}

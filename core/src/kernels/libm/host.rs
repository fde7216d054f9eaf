//! The host's own C library (glibc on Linux): what ExecuTorch's x86 runtime computes on the same
//! machine, since it calls the same functions. Rust's `f32` methods call the C library for all
//! but `asinh`, `acosh`, `atanh` and `erf`, which are declared here.

use super::{Binary, Function};

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

fn asinhf_(x: f32) -> f32 {
    // SAFETY: see the declarations.
    unsafe { asinhf(x) }
}
fn acoshf_(x: f32) -> f32 {
    // SAFETY: see the declarations.
    unsafe { acoshf(x) }
}
fn atanhf_(x: f32) -> f32 {
    // SAFETY: see the declarations.
    unsafe { atanhf(x) }
}
fn erff_(x: f32) -> f32 {
    // SAFETY: see the declarations.
    unsafe { erff(x) }
}
fn asinh_(x: f64) -> f64 {
    // SAFETY: see the declarations.
    unsafe { asinh(x) }
}
fn acosh_(x: f64) -> f64 {
    // SAFETY: see the declarations.
    unsafe { acosh(x) }
}
fn atanh_(x: f64) -> f64 {
    // SAFETY: see the declarations.
    unsafe { atanh(x) }
}
fn erf_(x: f64) -> f64 {
    // SAFETY: see the declarations.
    unsafe { erf(x) }
}

/// The single-precision `function` of the C library.
pub fn f32_fn(function: Function) -> fn(f32) -> f32 {
    use Function::*;
    match function {
        Sin => f32::sin,
        Cos => f32::cos,
        Tan => f32::tan,
        Asin => f32::asin,
        Acos => f32::acos,
        Atan => f32::atan,
        Sinh => f32::sinh,
        Cosh => f32::cosh,
        Tanh => f32::tanh,
        Asinh => asinhf_,
        Acosh => acoshf_,
        Atanh => atanhf_,
        Exp => f32::exp,
        Exp2 => f32::exp2,
        Expm1 => f32::exp_m1,
        Log => f32::ln,
        Log2 => f32::log2,
        Log10 => f32::log10,
        Log1p => f32::ln_1p,
        Sqrt => f32::sqrt,
        Erf => erff_,
    }
}

/// The double-precision `function` of the C library.
pub fn f64_fn(function: Function) -> fn(f64) -> f64 {
    use Function::*;
    match function {
        Sin => f64::sin,
        Cos => f64::cos,
        Tan => f64::tan,
        Asin => f64::asin,
        Acos => f64::acos,
        Atan => f64::atan,
        Sinh => f64::sinh,
        Cosh => f64::cosh,
        Tanh => f64::tanh,
        Asinh => asinh_,
        Acosh => acosh_,
        Atanh => atanh_,
        Exp => f64::exp,
        Exp2 => f64::exp2,
        Expm1 => f64::exp_m1,
        Log => f64::ln,
        Log2 => f64::log2,
        Log10 => f64::log10,
        Log1p => f64::ln_1p,
        Sqrt => f64::sqrt,
        Erf => erf_,
    }
}

fn fmodf(x: f32, y: f32) -> f32 {
    x % y
}
fn fmod(x: f64, y: f64) -> f64 {
    x % y
}

/// The single-precision two-argument `function` of the C library.
pub fn f32_binary_fn(function: Binary) -> fn(f32, f32) -> f32 {
    match function {
        Binary::Pow => f32::powf,
        Binary::Atan2 => f32::atan2,
        Binary::Fmod => fmodf,
    }
}

/// The double-precision two-argument `function` of the C library.
pub fn f64_binary_fn(function: Binary) -> fn(f64, f64) -> f64 {
    match function {
        Binary::Pow => f64::powf,
        Binary::Atan2 => f64::atan2,
        Binary::Fmod => fmod,
    }
}

//! The single-precision functions of newlib 3.3.0 (the Arm GNU toolchain's C library, Debian's
//! `libnewlib-arm-none-eabi`) that the portable kernels reach, computed on the host bit for bit
//! as a Cortex-M with a floating-point unit computes them: the same algorithms and tables, the
//! same operations in the same precision, and a fused multiply-add (`mul_add`) exactly where the
//! toolchain's compiler fused one (`-ffp-contract=fast`, the default newlib is built with).
//!
//! Checked against the functions themselves run on the emulated board (`board/libm_probe`,
//! `core/tests/libm.rs`). A function not here is not modelled: [`super::Libm::f32`] refuses it.

// the constants are newlib's source literals as written: the compiler rounds them as GCC does
#![allow(clippy::excessive_precision)]

mod erf;
mod exp;
mod exp64;
mod expm1;
mod hyperbolic;
mod inverse_trig;
mod log;
mod pow;
mod sincos;
mod tables;
mod tan;

pub use erf::{erf, erff};
pub use exp::{exp2f, expf};
pub use expm1::{expm1f, tanhf};
pub use hyperbolic::{acoshf, asinhf, atanhf, coshf, sinhf};
pub use inverse_trig::{acosf, asinf, atan2f, atanf};
pub use log::{log10f, log1pf, log2f, logf};
pub use pow::powf;
pub use sincos::{cosf, sinf};
pub use tan::tanf;

/// The NaN an Arm FPU writes for an invalid operation on numbers (`0/0`, `√−1`): positive,
/// quiet, no payload. (An x86 FPU writes the negative one.)
pub const ARM_DEFAULT_NAN: f32 = f32::from_bits(0x7fc0_0000);

/// `__math_oflowf`: ±∞.
fn overflow(negative: bool) -> f32 {
    if negative {
        f32::NEG_INFINITY
    } else {
        f32::INFINITY
    }
}

/// `__math_uflowf`: ±0.
fn underflow(negative: bool) -> f32 {
    if negative {
        -0.0
    } else {
        0.0
    }
}

/// `__math_may_uflowf`: `0x1.4p-75²` rounded, the smallest subnormal, with the sign.
fn may_underflow(negative: bool) -> f32 {
    let y = f32::from_bits(0x1a20_0000);
    (if negative { -y } else { y }) * y
}

/// `__math_divzerof`: ±∞ for a pole.
fn divide_by_zero(negative: bool) -> f32 {
    overflow(negative)
}

/// `__math_invalidf`: `(x − x)/(x − x)`, a NaN input quietened, else the Arm default NaN.
fn invalid(x: f32) -> f32 {
    if x.is_nan() {
        x + x
    } else {
        ARM_DEFAULT_NAN
    }
}

/// `sqrtf`: correctly rounded on every IEEE 754 unit; only the NaN of a negative input is the
/// Arm one.
pub fn sqrtf(x: f32) -> f32 {
    if x < 0.0 {
        // opaque: an optimized build otherwise folds the branch into the host's `sqrtss`,
        // whose NaN for a negative input has the sign bit set (x86's default NaN)
        std::hint::black_box(ARM_DEFAULT_NAN)
    } else {
        x.sqrt()
    }
}

/// `sqrt` in double precision: correctly rounded, the Arm NaN for a negative input.
pub fn sqrt(x: f64) -> f64 {
    if x < 0.0 {
        // opaque, as in `sqrtf`
        std::hint::black_box(f64::from(ARM_DEFAULT_NAN))
    } else {
        x.sqrt()
    }
}

/// `fmodf`: exact (the remainder is representable, every library returns it); the Arm NaN for
/// an infinite dividend or a zero divisor.
pub fn fmodf(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        x + y
    } else if x.is_infinite() || y == 0.0 {
        ARM_DEFAULT_NAN
    } else {
        x % y
    }
}

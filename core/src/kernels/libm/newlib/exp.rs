//! newlib's `expf` and `exp2f` (Arm's optimized routines, `libm/common/sf_exp.c`, `sf_exp2.c`)
//! and the `exp2` step `powf` shares, as the Arm GNU toolchain compiles them for a Cortex-M with
//! a double-precision FPU: every product whose only uses are additions is fused (`vfma.f64`),
//! which is what `mul_add` does here.

use super::tables::{
    EXP2F_INVLN2_SCALED, EXP2F_POLY, EXP2F_POLY_SCALED, EXP2F_SHIFT, EXP2F_SHIFT_SCALED, EXP2F_TAB,
};
use super::{may_underflow, overflow, underflow};

const TABLE_BITS: u32 = 5;
const N: u64 = 1 << TABLE_BITS;

fn d(bits: u64) -> f64 {
    f64::from_bits(bits)
}

fn top12(x: f32) -> u32 {
    x.to_bits() >> 20
}

/// `2^(k/N) · (C0 r³ + C1 r² + C2 r + 1)`: the table entry with `ki`'s exponent, then the
/// polynomial, as `sf_exp.c` and `sf_exp2.c` end.
fn scale(ki: u64, r: f64, poly: &[u64; 3], sign_bias: u64) -> f64 {
    let mut t = EXP2F_TAB[(ki % N) as usize];
    t = t.wrapping_add(ki.wrapping_add(sign_bias) << (52 - TABLE_BITS));
    let s = f64::from_bits(t);
    let z = d(poly[0]).mul_add(r, d(poly[1]));
    let r2 = r * r;
    let y = d(poly[2]).mul_add(r, 1.0);
    let y = z.mul_add(r2, y);
    y * s
}

/// `expf(x)`.
pub fn expf(x: f32) -> f32 {
    let xd = f64::from(x);
    let abstop = top12(x) & 0x7ff;
    if abstop >= top12(88.0) {
        if x == f32::NEG_INFINITY {
            return 0.0;
        }
        if abstop >= top12(f32::INFINITY) {
            return x + x;
        }
        if x > f32::from_bits(0x42b1_7217) {
            return overflow(false);
        }
        if x < f32::from_bits(0xc2cf_f1b4) {
            return underflow(false);
        }
        if x < f32::from_bits(0xc2ce_8ecf) {
            return may_underflow(false);
        }
    }
    // z = InvLn2N·x is used only by two additions, so the compiler fuses it into both
    let kd = d(EXP2F_INVLN2_SCALED).mul_add(xd, d(EXP2F_SHIFT));
    let ki = kd.to_bits();
    let kd = kd - d(EXP2F_SHIFT);
    let r = d(EXP2F_INVLN2_SCALED).mul_add(xd, -kd);
    scale(ki, r, &EXP2F_POLY_SCALED, 0) as f32
}

/// `exp2f(x)`.
pub fn exp2f(x: f32) -> f32 {
    let xd = f64::from(x);
    let abstop = top12(x) & 0x7ff;
    if abstop >= top12(128.0) {
        if x == f32::NEG_INFINITY {
            return 0.0;
        }
        if abstop >= top12(f32::INFINITY) {
            return x + x;
        }
        if x > 0.0 {
            return overflow(false);
        }
        if x <= -150.0 {
            return underflow(false);
        }
        if x < -149.0 {
            return may_underflow(false);
        }
    }
    exp2_inline(xd, 0) as f32
}

/// The exp2 step of `exp2f` and `powf` (`exp2_inline` in `sf_pow.c`), `sign_bias` setting the
/// result's sign bit through the exponent.
pub fn exp2_inline(xd: f64, sign_bias: u64) -> f64 {
    let kd = xd + d(EXP2F_SHIFT_SCALED);
    let ki = kd.to_bits();
    let kd = kd - d(EXP2F_SHIFT_SCALED);
    let r = xd - kd;
    scale(ki, r, &EXP2F_POLY, sign_bias)
}

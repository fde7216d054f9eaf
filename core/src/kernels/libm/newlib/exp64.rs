//! newlib's double-precision `exp` (Arm's optimized routines, `libm/common/exp.c`), for the
//! double-precision `erf` that ExecuTorch's exact gelu calls; products fused into additions as
//! the Arm GNU toolchain compiles it (`vfma.f64`).

use super::tables::{EXP_INVLN2N, EXP_NEGLN2HIN, EXP_NEGLN2LON, EXP_POLY, EXP_SHIFT, EXP_TAB};

const TABLE_BITS: u32 = 7;
const N: u64 = 1 << TABLE_BITS;

fn d(bits: u64) -> f64 {
    f64::from_bits(bits)
}

fn top12(x: f64) -> u32 {
    (x.to_bits() >> 52) as u32
}

/// `scale · (1 + tmp)` where `scale`'s exponent over- or underflowed (`specialcase`).
fn special_case(tmp: f64, sbits: u64, ki: u64) -> f64 {
    if ki & 0x8000_0000 == 0 {
        let scale = d(sbits.wrapping_sub(1009u64 << 52));
        return f64::from_bits(0x7f00_0000_0000_0000) * scale.mul_add(tmp, scale);
    }
    let scale = d(sbits.wrapping_add(1022u64 << 52));
    let mut y = scale.mul_add(tmp, scale);
    if y < 1.0 {
        let lo = scale.mul_add(tmp, scale - y);
        let hi = 1.0 + y;
        let lo = 1.0 - hi + y + lo;
        y = (hi + lo) - 1.0;
        if y == 0.0 {
            y = 0.0;
        }
    }
    f64::from_bits(0x0010_0000_0000_0000) * y
}

/// `exp(x)`.
pub fn exp(x: f64) -> f64 {
    let mut abstop = top12(x) & 0x7ff;
    let tiny = top12(f64::from_bits(0x3c90_0000_0000_0000)); // 0x1p-54
    if abstop.wrapping_sub(tiny) >= top12(512.0) - tiny {
        if abstop.wrapping_sub(tiny) >= 0x8000_0000 {
            return 1.0 + x;
        }
        if abstop >= top12(1024.0) {
            if x == f64::NEG_INFINITY {
                return 0.0;
            }
            if abstop >= top12(f64::INFINITY) {
                return 1.0 + x;
            }
            return if x.is_sign_negative() {
                0.0
            } else {
                f64::INFINITY
            };
        }
        abstop = 0;
    }
    let kd = d(EXP_INVLN2N).mul_add(x, d(EXP_SHIFT));
    let ki = kd.to_bits();
    let kd = kd - d(EXP_SHIFT);
    let r = kd.mul_add(d(EXP_NEGLN2LON), kd.mul_add(d(EXP_NEGLN2HIN), x));
    let idx = (2 * (ki % N)) as usize;
    let top = ki << (52 - TABLE_BITS);
    let tail = d(EXP_TAB[idx]);
    let sbits = EXP_TAB[idx + 1].wrapping_add(top);
    let c = |k: usize| d(EXP_POLY[k]);
    let r2 = r * r;
    let p23 = r.mul_add(c(1), c(0));
    let p45 = r.mul_add(c(3), c(2));
    let tmp = r2.mul_add(p23, tail + r);
    let tmp = (r2 * r2).mul_add(p45, tmp);
    if abstop == 0 {
        return special_case(tmp, sbits, ki);
    }
    let scale = d(sbits);
    scale.mul_add(tmp, scale)
}

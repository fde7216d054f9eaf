//! newlib's `powf` (Arm's optimized routines, `libm/common/sf_pow.c`): `2^(y·log2 x)` with a
//! table-driven `log2` in double precision and the `exp2` step `expf` shares, products fused into
//! additions as the Arm GNU toolchain compiles it.

use super::exp::exp2_inline;
use super::tables::{POWF_LOG2_POLY, POWF_LOG2_TAB};
use super::{invalid, may_underflow, overflow, underflow};

const OFF: u32 = 0x3f33_0000;
const TABLE_BITS: u32 = 4;
/// The result's sign bit, added to the exponent of `exp2_inline`'s table entry.
const SIGN_BIAS: u64 = 1 << (5 + 11);

fn d(bits: u64) -> f64 {
    f64::from_bits(bits)
}

/// `log2(x)` for the bits of a positive `x` (a subnormal already normalised to a negative
/// biased exponent).
fn log2_inline(ix: u32) -> f64 {
    let tmp = ix.wrapping_sub(OFF);
    let i = ((tmp >> (23 - TABLE_BITS)) % (1 << TABLE_BITS)) as usize;
    let top = tmp & 0xff80_0000;
    let iz = ix.wrapping_sub(top);
    let k = (top as i32) >> 23;
    let (invc, logc) = (d(POWF_LOG2_TAB[2 * i]), d(POWF_LOG2_TAB[2 * i + 1]));
    let z = f64::from(f32::from_bits(iz));
    let a = |j: usize| d(POWF_LOG2_POLY[j]);
    let r = z.mul_add(invc, -1.0);
    let y0 = logc + f64::from(k);
    let r2 = r * r;
    let y = a(0).mul_add(r, a(1));
    let p = a(2).mul_add(r, a(3));
    let r4 = r2 * r2;
    let q = a(4).mul_add(r, y0);
    let q = p.mul_add(r2, q);
    y.mul_add(r4, q)
}

/// 0 when `iy` (a non-zero finite float's bits) is not an integer, 1 when odd, 2 when even.
fn checkint(iy: u32) -> u32 {
    let e = (iy >> 23) & 0xff;
    if e < 0x7f {
        return 0;
    }
    if e > 0x7f + 23 {
        return 2;
    }
    if iy & ((1 << (0x7f + 23 - e)) - 1) != 0 {
        return 0;
    }
    if iy & (1 << (0x7f + 23 - e)) != 0 {
        return 1;
    }
    2
}

fn zero_inf_nan(ix: u32) -> bool {
    ix.wrapping_mul(2).wrapping_sub(1) >= 2 * 0x7f80_0000 - 1
}

fn is_signaling(x: f32) -> bool {
    let ix = x.to_bits();
    (ix & 0x7fc0_0000) == 0x7f80_0000 && (ix & 0x003f_ffff) != 0
}

/// `powf(x, y)`.
pub fn powf(x: f32, y: f32) -> f32 {
    let mut sign_bias = 0u64;
    let mut ix = x.to_bits();
    let iy = y.to_bits();
    if ix.wrapping_sub(0x0080_0000) >= 0x7f80_0000 - 0x0080_0000 || zero_inf_nan(iy) {
        if zero_inf_nan(iy) {
            if iy.wrapping_mul(2) == 0 {
                return if is_signaling(x) { x + y } else { 1.0 };
            }
            if ix == 0x3f80_0000 {
                return if is_signaling(y) { x + y } else { 1.0 };
            }
            if ix.wrapping_mul(2) > 2 * 0x7f80_0000 || iy.wrapping_mul(2) > 2 * 0x7f80_0000 {
                return x + y;
            }
            if ix.wrapping_mul(2) == 2 * 0x3f80_0000 {
                return 1.0;
            }
            if (ix.wrapping_mul(2) < 2 * 0x3f80_0000) == (iy & 0x8000_0000 == 0) {
                return 0.0;
            }
            return y * y;
        }
        if zero_inf_nan(ix) {
            let mut x2 = x * x;
            if ix & 0x8000_0000 != 0 && checkint(iy) == 1 {
                x2 = -x2;
                sign_bias = 1;
            }
            if ix.wrapping_mul(2) == 0 && iy & 0x8000_0000 != 0 {
                return super::divide_by_zero(sign_bias != 0);
            }
            return if iy & 0x8000_0000 != 0 { 1.0 / x2 } else { x2 };
        }
        if ix & 0x8000_0000 != 0 {
            match checkint(iy) {
                0 => return invalid(x),
                1 => sign_bias = SIGN_BIAS,
                _ => {}
            }
            ix &= 0x7fff_ffff;
        }
        if ix < 0x0080_0000 {
            ix = (x * f32::from_bits(0x4b00_0000)).to_bits();
            ix &= 0x7fff_ffff;
            ix = ix.wrapping_sub(23 << 23);
        }
    }
    let logx = log2_inline(ix);
    let ylogx = f64::from(y) * logx;
    let negative = sign_bias != 0;
    if (ylogx.to_bits() >> 47 & 0xffff) >= 126.0f64.to_bits() >> 47 {
        if ylogx > f64::from_bits(0x405f_ffff_ffd1_d571) {
            return overflow(negative);
        }
        if ylogx <= -150.0 {
            return underflow(negative);
        }
        if ylogx < -149.0 {
            return may_underflow(negative);
        }
    }
    exp2_inline(ylogx, sign_bias) as f32
}

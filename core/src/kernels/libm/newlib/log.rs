//! newlib's `logf` and `log2f` (Arm's optimized routines, `libm/common/sf_log.c`, `sf_log2.c`),
//! `log10f` (fdlibm's `ef_log10.c` over `logf`, with `wf_log10.c`'s answers for x ≤ 0)
//! and `log1pf` (fdlibm's `sf_log1p.c`), with the products the Arm GNU toolchain fuses into
//! additions fused here too.

use super::tables::{LOG2F_POLY, LOG2F_TAB, LOGF_LN2, LOGF_POLY, LOGF_TAB};
use super::{divide_by_zero, invalid, ARM_DEFAULT_NAN};

const OFF: u32 = 0x3f33_0000;
const TABLE_BITS: u32 = 4;

fn d(bits: u64) -> f64 {
    f64::from_bits(bits)
}

/// The reduction both share: `x = 2^k z` with `z` in `[OFF, 2·OFF]`, the table entry `i`.
/// `Err` is the answer for zero, infinity, NaN and negative inputs.
fn reduce(x: f32) -> Result<(i32, usize, f64), f32> {
    let mut ix = x.to_bits();
    if ix.wrapping_sub(0x0080_0000) >= 0x7f80_0000 - 0x0080_0000 {
        if ix.wrapping_mul(2) == 0 {
            return Err(divide_by_zero(true));
        }
        if ix == 0x7f80_0000 {
            return Err(x);
        }
        if ix & 0x8000_0000 != 0 || ix.wrapping_mul(2) >= 0xff00_0000 {
            return Err(invalid(x));
        }
        ix = (x * f32::from_bits(0x4b00_0000)).to_bits();
        ix = ix.wrapping_sub(23 << 23);
    }
    let tmp = ix.wrapping_sub(OFF);
    let i = ((tmp >> (23 - TABLE_BITS)) % (1 << TABLE_BITS)) as usize;
    let k = (tmp as i32) >> 23;
    let iz = ix.wrapping_sub(tmp & (0x1ff << 23));
    Ok((k, i, f64::from(f32::from_bits(iz))))
}

/// `logf(x)`.
pub fn logf(x: f32) -> f32 {
    if x.to_bits() == 0x3f80_0000 {
        return 0.0;
    }
    let (k, i, z) = match reduce(x) {
        Ok(reduced) => reduced,
        Err(answer) => return answer,
    };
    let (invc, logc) = (d(LOGF_TAB[2 * i]), d(LOGF_TAB[2 * i + 1]));
    let r = z.mul_add(invc, -1.0);
    let y0 = f64::from(k).mul_add(d(LOGF_LN2), logc);
    let r2 = r * r;
    let y = d(LOGF_POLY[1]).mul_add(r, d(LOGF_POLY[2]));
    let y = d(LOGF_POLY[0]).mul_add(r2, y);
    y.mul_add(r2, y0 + r) as f32
}

/// `log2f(x)`.
pub fn log2f(x: f32) -> f32 {
    if x.to_bits() == 0x3f80_0000 {
        return 0.0;
    }
    let (k, i, z) = match reduce(x) {
        Ok(reduced) => reduced,
        Err(answer) => return answer,
    };
    let (invc, logc) = (d(LOG2F_TAB[2 * i]), d(LOG2F_TAB[2 * i + 1]));
    let r = z.mul_add(invc, -1.0);
    let y0 = logc + f64::from(k);
    let r2 = r * r;
    let y = d(LOG2F_POLY[1]).mul_add(r, d(LOG2F_POLY[2]));
    let y = d(LOG2F_POLY[0]).mul_add(r2, y);
    let p = d(LOG2F_POLY[3]).mul_add(r, y0);
    y.mul_add(r2, p) as f32
}

/// `log10f(x)`: `k·log10(2) + log10(m)` with `log10(m) = logf(m)/ln 10`, fdlibm's split of
/// `log10(2)` in two.
pub fn log10f(x: f32) -> f32 {
    const TWO25: f32 = 33_554_432.0;
    const IVLN10: f32 = f32::from_bits(0x3ede_5bd9);
    const LOG10_2HI: f32 = f32::from_bits(0x3e9a_2080);
    const LOG10_2LO: f32 = f32::from_bits(0x3554_27db);
    let mut hx = x.to_bits() as i32;
    if x.is_nan() {
        return x + x;
    }
    // wf_log10.c answers these itself
    if x == 0.0 {
        return f32::NEG_INFINITY;
    }
    if x < 0.0 {
        return ARM_DEFAULT_NAN;
    }
    if x.is_infinite() {
        return x + x;
    }
    let mut k = 0i32;
    let mut x = x;
    if hx < 0x0080_0000 {
        k -= 25;
        x *= TWO25;
        hx = x.to_bits() as i32;
    }
    k += (hx >> 23) - 127;
    let i = ((k as u32) & 0x8000_0000) >> 31;
    let hx = (hx & 0x007f_ffff) | ((0x7f - i as i32) << 23);
    let y = (k + i as i32) as f32;
    let m = f32::from_bits(hx as u32);
    let z = y.mul_add(LOG10_2LO, IVLN10 * logf(m));
    y.mul_add(LOG10_2HI, z)
}

/// `log1pf(x)` (fdlibm's `sf_log1p.c`): `log(1 + x)` with the rounding of `1 + x` corrected.
pub fn log1pf(x: f32) -> f32 {
    const LN2_HI: f32 = 6.9313812256e-01;
    const LN2_LO: f32 = 9.0580006145e-06;
    const TWO25: f32 = 3.355443200e+07;
    const LP: [f32; 7] = [
        6.6666668653e-01,
        4.0000000596e-01,
        2.8571429849e-01,
        2.2222198546e-01,
        1.8183572590e-01,
        1.5313838422e-01,
        1.4798198640e-01,
    ];
    let hx = x.to_bits() as i32;
    let ax = hx & 0x7fff_ffff;
    let mut k = 1i32;
    let (mut f, mut hu, mut c) = (0.0f32, 0i32, 0.0f32);
    if (hx as u32 & 0x7fff_ffff) >= 0x7f80_0000 {
        return x + x;
    }
    if hx < 0x3ed4_13d7 {
        if ax >= 0x3f80_0000 {
            return if x == -1.0 {
                divide_by_zero(true)
            } else {
                invalid(x)
            };
        }
        if ax < 0x3100_0000 {
            if TWO25 + x > 0.0 && ax < 0x2480_0000 {
                return x;
            }
            return (-(x * x)).mul_add(0.5, x);
        }
        if hx > 0 || hx <= 0xbe95_f61fu32 as i32 {
            k = 0;
            f = x;
            hu = 1;
        }
    }
    if k != 0 {
        let mut u;
        if hx < 0x5a00_0000 {
            u = 1.0 + x;
            hu = u.to_bits() as i32;
            k = (hu >> 23) - 127;
            c = if k > 0 { 1.0 - (u - x) } else { x - (u - 1.0) };
            c /= u;
        } else {
            u = x;
            hu = u.to_bits() as i32;
            k = (hu >> 23) - 127;
            c = 0.0;
        }
        hu &= 0x007f_ffff;
        if hu < 0x0035_04f7 {
            u = f32::from_bits((hu | 0x3f80_0000) as u32);
        } else {
            k += 1;
            u = f32::from_bits((hu | 0x3f00_0000) as u32);
            hu = (0x0080_0000 - hu) >> 2;
        }
        f = u - 1.0;
    }
    let hfsq = 0.5 * f * f;
    let kf = k as f32;
    if hu == 0 {
        if f == 0.0 {
            if k == 0 {
                return 0.0;
            }
            c = kf.mul_add(LN2_LO, c);
            return kf.mul_add(LN2_HI, c);
        }
        let r = hfsq * (-0.666_666_666_666_666_66f32).mul_add(f, 1.0);
        if k == 0 {
            return f - r;
        }
        return kf.mul_add(LN2_HI, -((r - kf.mul_add(LN2_LO, c)) - f));
    }
    let s = f / (2.0 + f);
    let z = s * s;
    let p = z.mul_add(
        z.mul_add(
            z.mul_add(
                z.mul_add(z.mul_add(z.mul_add(LP[6], LP[5]), LP[4]), LP[3]),
                LP[2],
            ),
            LP[1],
        ),
        LP[0],
    );
    let r = z * p;
    if k == 0 {
        return f - (-s).mul_add(hfsq + r, hfsq);
    }
    kf.mul_add(
        LN2_HI,
        -((hfsq - s.mul_add(hfsq + r, kf.mul_add(LN2_LO, c))) - f),
    )
}

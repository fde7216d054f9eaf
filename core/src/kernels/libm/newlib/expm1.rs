//! newlib's `expm1f` (`libm/common/sf_expm1.c`, fdlibm's) and `tanhf` over it
//! (`libm/math/sf_tanh.c`), single precision throughout, with the products the Arm GNU toolchain
//! fuses into additions fused here too.

use super::overflow;

const LN2_HI: f32 = f32::from_bits(0x3f31_7180);
const LN2_LO: f32 = f32::from_bits(0x3717_f7d1);
const INVLN2: f32 = f32::from_bits(0x3fb8_aa3b);
const Q: [f32; 5] = [
    f32::from_bits(0xbd08_8889),
    f32::from_bits(0x3ad0_0d01),
    f32::from_bits(0xb8a6_70cd),
    f32::from_bits(0x3686_7e54),
    f32::from_bits(0xb457_edbb),
];
const HUGE: f32 = 1.0e30;
const TINY: f32 = 1.0e-30;
/// `FLT_UWORD_LOG_MAX`: the bits of the largest `x` whose `exp(x)` is finite.
const LOG_MAX_BITS: u32 = 0x42b1_7217;

/// `expm1f(x)`.
pub fn expm1f(x: f32) -> f32 {
    let bits = x.to_bits();
    let negative = bits & 0x8000_0000 != 0;
    let hx = bits & 0x7fff_ffff;
    let mut x = x;
    if hx >= 0x4195_b844 {
        if hx > 0x7f80_0000 {
            return x + x;
        }
        if hx == 0x7f80_0000 {
            return if negative { -1.0 } else { x };
        }
        if !negative && hx > LOG_MAX_BITS {
            return overflow(false);
        }
        if negative && x + TINY < 0.0 {
            return TINY - 1.0;
        }
    }
    let k: i32;
    let mut c = 0.0f32;
    if hx > 0x3eb1_7218 {
        let (hi, lo);
        if hx < 0x3f85_1592 {
            if negative {
                hi = x + LN2_HI;
                lo = -LN2_LO;
                k = -1;
            } else {
                hi = x - LN2_HI;
                lo = LN2_LO;
                k = 1;
            }
        } else {
            // the product and the ±0.5 sit in different blocks: not fused
            let half = if negative { -0.5 } else { 0.5 };
            k = (INVLN2 * x + half) as i32;
            let t = k as f32;
            hi = (-t).mul_add(LN2_HI, x);
            lo = t * LN2_LO;
        }
        x = hi - lo;
        c = (hi - x) - lo;
    } else if hx < 0x3300_0000 {
        let t = HUGE + x;
        return x - (t - (HUGE + x));
    } else {
        k = 0;
    }
    let hfx = 0.5 * x;
    let hxs = x * hfx;
    let r1 = hxs.mul_add(
        hxs.mul_add(
            hxs.mul_add(hxs.mul_add(hxs.mul_add(Q[4], Q[3]), Q[2]), Q[1]),
            Q[0],
        ),
        1.0,
    );
    let t = (-r1).mul_add(hfx, 3.0);
    let e = hxs * ((r1 - t) / (-x).mul_add(t, 6.0));
    if k == 0 {
        return x - x.mul_add(e, -hxs);
    }
    let e = x.mul_add(e - c, -c) - hxs;
    if k == -1 {
        return 0.5f32.mul_add(x - e, -0.5);
    }
    if k == 1 {
        return if x < -0.25 {
            -2.0 * (e - (x + 0.5))
        } else {
            1.0 + 2.0 * (x - e)
        };
    }
    if k <= -2 || k > 56 {
        let y = 1.0 - (e - x);
        return f32::from_bits(y.to_bits().wrapping_add((k << 23) as u32)) - 1.0;
    }
    if k < 23 {
        let t = f32::from_bits(0x3f80_0000 - (0x0100_0000 >> k));
        let y = t - (e - x);
        f32::from_bits(y.to_bits().wrapping_add((k << 23) as u32))
    } else {
        let t = f32::from_bits(((0x7f - k) << 23) as u32);
        let y = x - (e + t) + 1.0;
        f32::from_bits(y.to_bits().wrapping_add((k << 23) as u32))
    }
}

/// `tanhf(x)`: `1 − 2/(e^{2|x|} + 1)` from `expm1f`, ±1 beyond 22.
pub fn tanhf(x: f32) -> f32 {
    let jx = x.to_bits();
    let ix = jx & 0x7fff_ffff;
    let positive = jx & 0x8000_0000 == 0;
    if ix >= 0x7f80_0000 {
        return if positive {
            1.0 / x + 1.0
        } else {
            1.0 / x - 1.0
        };
    }
    let z = if ix < 0x41b0_0000 {
        if ix < 0x2400_0000 {
            return x * (1.0 + x);
        }
        if ix >= 0x3f80_0000 {
            let t = expm1f(2.0 * x.abs());
            1.0 - 2.0 / (t + 2.0)
        } else {
            let t = expm1f(-2.0 * x.abs());
            -t / (t + 2.0)
        }
    } else {
        1.0 - TINY
    };
    if positive {
        z
    } else {
        -z
    }
}

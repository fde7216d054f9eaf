//! newlib's `sinhf`, `coshf`, `asinhf`, `acoshf`, `atanhf` (fdlibm's `ef_sinh.c`, `ef_cosh.c`,
//! `sf_asinh.c`, `ef_acosh.c`, `ef_atanh.c`, single precision, over `expf`, `expm1f`, `logf`,
//! `log1pf`), the products the Arm GNU toolchain fuses into additions fused here too.

use super::exp::expf;
use super::expm1::expm1f;
use super::invalid;
use super::log::{log1pf, logf};

/// The bits of the largest `x` whose `exp(x)` is finite, and of `ln(2·FLT_MAX)`.
const LOG_MAX: u32 = 0x42b1_7217;
const LOG_2MAX: u32 = 0x42b2_d4fc;
const LN2: f32 = 6.9314718246e-01;

/// `sinhf(x)`.
pub fn sinhf(x: f32) -> f32 {
    const SHUGE: f32 = 1.0e37;
    let jx = x.to_bits() as i32;
    let ix = (jx & 0x7fff_ffff) as u32;
    if ix >= 0x7f80_0000 {
        return x + x;
    }
    let h: f32 = if jx < 0 { -0.5 } else { 0.5 };
    if ix < 0x41b0_0000 {
        if ix < 0x3180_0000 && SHUGE + x > 1.0 {
            return x;
        }
        let t = expm1f(x.abs());
        if ix < 0x3f80_0000 {
            return h * 2.0f32.mul_add(t, -(t * t / (t + 1.0)));
        }
        return h * (t + t / (t + 1.0));
    }
    half_exp(x, ix, h).unwrap_or(x * SHUGE)
}

/// `h·exp(|x|)` for |x| from 22 to ln(2·FLT_MAX) (past `LOG_MAX` as `(h·e^{|x|/2})·e^{|x|/2}`),
/// the large-argument branches of `sinhf` and `coshf`; `None` beyond (overflow).
fn half_exp(x: f32, ix: u32, h: f32) -> Option<f32> {
    if ix <= LOG_MAX {
        return Some(h * expf(x.abs()));
    }
    if ix <= LOG_2MAX {
        let w = expf(0.5 * x.abs());
        let t = h * w;
        return Some(t * w);
    }
    None
}

/// `coshf(x)`.
pub fn coshf(x: f32) -> f32 {
    const HUGE: f32 = 1.0e30;
    let ix = x.to_bits() & 0x7fff_ffff;
    if ix >= 0x7f80_0000 {
        return x * x;
    }
    if ix < 0x3eb1_7218 {
        let t = expm1f(x.abs());
        let w = 1.0 + t;
        if ix < 0x2400_0000 {
            return w;
        }
        return 1.0 + (t * t) / (w + w);
    }
    if ix < 0x41b0_0000 {
        let t = expf(x.abs());
        return 0.5f32.mul_add(t, 0.5 / t);
    }
    half_exp(x, ix, 0.5).unwrap_or(HUGE * HUGE)
}

/// `asinhf(x)`.
pub fn asinhf(x: f32) -> f32 {
    const HUGE: f32 = 1.0e30;
    let hx = x.to_bits() as i32;
    let ix = (hx & 0x7fff_ffff) as u32;
    if ix >= 0x7f80_0000 {
        return x + x;
    }
    if ix < 0x3180_0000 && HUGE + x > 1.0 {
        return x;
    }
    let w = if ix > 0x4d80_0000 {
        logf(x.abs()) + LN2
    } else if ix > 0x4000_0000 {
        let t = x.abs();
        logf(2.0f32.mul_add(t, 1.0 / (x.mul_add(x, 1.0).sqrt() + t)))
    } else {
        let t = x * x;
        log1pf(x.abs() + t / (1.0 + (1.0 + t).sqrt()))
    };
    if hx > 0 {
        w
    } else {
        -w
    }
}

/// `acoshf(x)`.
pub fn acoshf(x: f32) -> f32 {
    let hx = x.to_bits() as i32;
    if hx < 0x3f80_0000 {
        return invalid(x);
    }
    if hx >= 0x4d80_0000 {
        if hx >= 0x7f80_0000 {
            return x + x;
        }
        return logf(x) + LN2;
    }
    if hx == 0x3f80_0000 {
        return 0.0;
    }
    if hx > 0x4000_0000 {
        return logf(2.0f32.mul_add(x, -(1.0 / (x + x.mul_add(x, -1.0).sqrt()))));
    }
    let t = x - 1.0;
    log1pf(t + 2.0f32.mul_add(t, t * t).sqrt())
}

/// `atanhf(x)`.
pub fn atanhf(x: f32) -> f32 {
    const HUGE: f32 = 1.0e30;
    let hx = x.to_bits() as i32;
    let ix = hx & 0x7fff_ffff;
    if ix > 0x3f80_0000 {
        return invalid(x);
    }
    if ix == 0x3f80_0000 {
        return x / 0.0;
    }
    if ix < 0x3180_0000 && HUGE + x > 0.0 {
        return x;
    }
    let x = f32::from_bits(ix as u32);
    let t = if ix < 0x3f00_0000 {
        let t = x + x;
        0.5 * log1pf(t + t * x / (1.0 - x))
    } else {
        0.5 * log1pf((x + x) / (1.0 - x))
    };
    if hx >= 0 {
        t
    } else {
        -t
    }
}

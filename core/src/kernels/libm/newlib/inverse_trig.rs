//! newlib's `atanf`, `atan2f`, `asinf`, `acosf` (fdlibm's `sf_atan.c`, `ef_atan2.c`,
//! `ef_asin.c`, `ef_acos.c`, single precision), with the products the Arm GNU toolchain fuses
//! into additions in the same block fused here too. Constants are the sources' decimal literals
//! (a few of their hex comments are off by one unit). Expressions of constants are folded by
//! the compiler, each step rounded, and are not fused.

use super::invalid;

const ATANHI: [f32; 4] = [
    4.6364760399e-01,
    7.8539812565e-01,
    9.8279368877e-01,
    1.5707962513e+00,
];
const ATANLO: [f32; 4] = [
    5.0121582440e-09,
    3.7748947079e-08,
    3.4473217170e-08,
    7.5497894159e-08,
];
const AT: [f32; 11] = [
    3.3333334327e-01,
    -2.0000000298e-01,
    1.4285714924e-01,
    -1.1111110449e-01,
    9.0908870101e-02,
    -7.6918758452e-02,
    6.6610731184e-02,
    -5.8335702866e-02,
    4.9768779427e-02,
    -3.6531571299e-02,
    1.6285819933e-02,
];
const HUGE: f32 = 1.0e30;
const TINY: f32 = 1.0e-30;

/// `atanf(x)`.
pub fn atanf(x: f32) -> f32 {
    let hx = x.to_bits() as i32;
    let ix = hx & 0x7fff_ffff;
    if ix >= 0x5080_0000 {
        if ix > 0x7f80_0000 {
            return x + x;
        }
        return if hx > 0 {
            ATANHI[3] + ATANLO[3]
        } else {
            -ATANHI[3] - ATANLO[3]
        };
    }
    let mut x = x;
    let id: i32;
    if ix < 0x3ee0_0000 {
        if ix < 0x3100_0000 && HUGE + x > 1.0 {
            return x;
        }
        id = -1;
    } else {
        x = x.abs();
        if ix < 0x3f98_0000 {
            if ix < 0x3f30_0000 {
                id = 0;
                x = 2.0f32.mul_add(x, -1.0) / (2.0 + x);
            } else {
                id = 1;
                x = (x - 1.0) / (x + 1.0);
            }
        } else if ix < 0x401c_0000 {
            id = 2;
            x = (x - 1.5) / 1.5f32.mul_add(x, 1.0);
        } else {
            id = 3;
            x = -1.0 / x;
        }
    }
    let z = x * x;
    let w = z * z;
    let s1 = z * w.mul_add(
        w.mul_add(
            w.mul_add(w.mul_add(w.mul_add(AT[10], AT[8]), AT[6]), AT[4]),
            AT[2],
        ),
        AT[0],
    );
    let s2 = w * w.mul_add(
        w.mul_add(w.mul_add(w.mul_add(AT[9], AT[7]), AT[5]), AT[3]),
        AT[1],
    );
    if id < 0 {
        return (-x).mul_add(s1 + s2, x);
    }
    let id = id as usize;
    let z = ATANHI[id] - (x.mul_add(s1 + s2, -ATANLO[id]) - x);
    if hx < 0 {
        -z
    } else {
        z
    }
}

/// `atan2f(y, x)`.
pub fn atan2f(y: f32, x: f32) -> f32 {
    const PI_O_4: f32 = 7.8539818525e-01;
    const PI_O_2: f32 = 1.5707963705e+00;
    const PI: f32 = 3.1415927410e+00;
    const PI_LO: f32 = -8.7422776573e-08;
    let hx = x.to_bits() as i32;
    let ix = hx & 0x7fff_ffff;
    let hy = y.to_bits() as i32;
    let iy = hy & 0x7fff_ffff;
    if ix > 0x7f80_0000 || iy > 0x7f80_0000 {
        return x + y;
    }
    if hx == 0x3f80_0000 {
        return atanf(y);
    }
    let m = ((hy >> 31) & 1) | ((hx >> 30) & 2);
    if iy == 0 {
        return match m {
            0 | 1 => y,
            2 => PI + TINY,
            _ => -PI - TINY,
        };
    }
    if ix == 0 {
        return if hy < 0 {
            -PI_O_2 - TINY
        } else {
            PI_O_2 + TINY
        };
    }
    if ix == 0x7f80_0000 {
        return if iy == 0x7f80_0000 {
            match m {
                0 => PI_O_4 + TINY,
                1 => -PI_O_4 - TINY,
                2 => 3.0 * PI_O_4 + TINY,
                _ => -3.0 * PI_O_4 - TINY,
            }
        } else {
            match m {
                0 => 0.0,
                1 => -0.0,
                2 => PI + TINY,
                _ => -PI - TINY,
            }
        };
    }
    if iy == 0x7f80_0000 {
        return if hy < 0 {
            -PI_O_2 - TINY
        } else {
            PI_O_2 + TINY
        };
    }
    let k = (iy - ix) >> 23;
    let z = if k > 60 {
        PI_O_2 + 0.5 * PI_LO
    } else if hx < 0 && k < -60 {
        0.0
    } else {
        atanf((y / x).abs())
    };
    match m {
        0 => z,
        1 => f32::from_bits(z.to_bits() ^ 0x8000_0000),
        2 => PI - (z - PI_LO),
        _ => (z - PI_LO) - PI,
    }
}

const PS: [f32; 6] = [
    1.6666667163e-01,
    -3.2556581497e-01,
    2.0121252537e-01,
    -4.0055535734e-02,
    7.9153501429e-04,
    3.4793309169e-05,
];
const QS: [f32; 4] = [
    -2.4033949375e+00,
    2.0209457874e+00,
    -6.8828397989e-01,
    7.7038154006e-02,
];

/// `t·(pS0 + t·(… + t·pS5))`, the inner steps fused, the outer product not (it feeds a division).
fn p_of(t: f32) -> f32 {
    t * t.mul_add(
        t.mul_add(
            t.mul_add(t.mul_add(t.mul_add(PS[5], PS[4]), PS[3]), PS[2]),
            PS[1],
        ),
        PS[0],
    )
}

/// `1 + t·(qS1 + t·(… + t·qS4))`.
fn q_of(t: f32) -> f32 {
    t.mul_add(
        t.mul_add(t.mul_add(t.mul_add(QS[3], QS[2]), QS[1]), QS[0]),
        1.0,
    )
}

/// `asinf(x)`.
pub fn asinf(x: f32) -> f32 {
    const PIO2_HI: f32 = 1.570_796_370_506_286_621_093_75;
    const PIO2_LO: f32 = -4.37113900018624283e-8;
    const PIO4_HI: f32 = 0.785_398_185_253_143_310_546_875;
    let hx = x.to_bits() as i32;
    let ix = hx & 0x7fff_ffff;
    if ix == 0x3f80_0000 {
        return x.mul_add(PIO2_HI, x * PIO2_LO);
    }
    if ix > 0x3f80_0000 {
        return invalid(x);
    }
    if ix < 0x3f00_0000 {
        if ix < 0x3200_0000 {
            if HUGE + x > 1.0 {
                return x;
            }
        } else {
            let t = x * x;
            let w = p_of(t) / q_of(t);
            return x.mul_add(w, x);
        }
    }
    let w = 1.0 - x.abs();
    let t = w * 0.5;
    let p = p_of(t);
    let q = q_of(t);
    let s = t.sqrt();
    let t = if ix >= 0x3f79_999a {
        let w = p / q;
        PIO2_HI - 2.0f32.mul_add(s.mul_add(w, s), -PIO2_LO)
    } else {
        let w = f32::from_bits(s.to_bits() & 0xffff_f000);
        let c = (-w).mul_add(w, t) / (s + w);
        let r = p / q;
        let p = (2.0 * s).mul_add(r, -(2.0f32.mul_add(-c, PIO2_LO)));
        let q = (-2.0f32).mul_add(w, PIO4_HI);
        PIO4_HI - (p - q)
    };
    if hx > 0 {
        t
    } else {
        -t
    }
}

/// `acosf(x)`.
pub fn acosf(x: f32) -> f32 {
    const PI: f32 = 3.1415925026e+00;
    const PIO2_HI: f32 = 1.5707962513e+00;
    const PIO2_LO: f32 = 7.5497894159e-08;
    let hx = x.to_bits() as i32;
    let ix = hx & 0x7fff_ffff;
    if ix == 0x3f80_0000 {
        return if hx > 0 { 0.0 } else { PI + 2.0 * PIO2_LO };
    }
    if ix > 0x3f80_0000 {
        return invalid(x);
    }
    if ix < 0x3f00_0000 {
        if ix <= 0x2300_0000 {
            return PIO2_HI + PIO2_LO;
        }
        let z = x * x;
        let r = p_of(z) / q_of(z);
        return PIO2_HI - (x - (-x).mul_add(r, PIO2_LO));
    }
    if hx < 0 {
        let z = (1.0 + x) * 0.5;
        let p = p_of(z);
        let q = q_of(z);
        let s = z.sqrt();
        let r = p / q;
        let w = r.mul_add(s, -PIO2_LO);
        return (-2.0f32).mul_add(s + w, PI);
    }
    let z = (1.0 - x) * 0.5;
    let s = z.sqrt();
    let df = f32::from_bits(s.to_bits() & 0xffff_f000);
    let c = (-df).mul_add(df, z) / (s + df);
    let r = p_of(z) / q_of(z);
    let w = r.mul_add(s, c);
    2.0 * (df + w)
}

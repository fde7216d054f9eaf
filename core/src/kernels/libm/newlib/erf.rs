//! newlib's `erff` and `erf` (`libm/math/sf_erf.c`, `s_erf.c`, fdlibm's): rational
//! approximations on [0, 0.84375), [0.84375, 1.25) and `1 − exp(−x²−0.5625 + R/S)/x` beyond,
//! evaluated by Horner's rule with every step fused as the Arm GNU toolchain compiles it.

use super::exp::expf;
use super::exp64::exp;

const ERX: f32 = f32::from_bits(0x3f58_560b);
const EFX: f32 = f32::from_bits(0x3e03_75d4);
const EFX8: f32 = f32::from_bits(0x3f83_75d4);
const TINY: f32 = 1.0e-30;

const PP: [u32; 5] = [
    0x3e03_75d4,
    0xbea6_6beb,
    0xbce9_528f,
    0xbbbd_1489,
    0xb7c7_56b1,
];
const QQ: [u32; 5] = [
    0x3ecb_bbce,
    0x3d85_2a63,
    0x3ba6_8116,
    0x390a_ee49,
    0xb684_e21a,
];
const PA: [u32; 7] = [
    0xbb1a_cdc6,
    0x3ed4_6805,
    0xbebe_9208,
    0x3ea2_fe54,
    0xbde3_1cc2,
    0x3d11_51b3,
    0xbb0d_f9c0,
];
const QA: [u32; 6] = [
    0x3dd9_f331,
    0x3f0a_5785,
    0x3d93_1ae7,
    0x3e01_3307,
    0x3c5f_6e13,
    0x3c44_5aa3,
];
const RA: [u32; 8] = [
    0xbc21_a093,
    0xbf31_a0b7,
    0xc128_f022,
    0xc279_8057,
    0xc322_658c,
    0xc338_9ae7,
    0xc2a2_932b,
    0xc11d_077e,
];
const SA: [u32; 8] = [
    0x419d_35ce,
    0x4309_a863,
    0x43d9_486f,
    0x4421_58c9,
    0x43d6_810b,
    0x42d9_451f,
    0x40d2_3f7c,
    0xbd77_7f97,
];
const RB: [u32; 7] = [
    0xbc21_a092,
    0xbf4c_9dd4,
    0xc18e_104b,
    0xc320_a2ea,
    0xc41f_6441,
    0xc480_230b,
    0xc3f1_c275,
];
const SB: [u32; 7] = [
    0x41f2_b459,
    0x43a2_e571,
    0x44c0_1759,
    0x4547_fdbb,
    0x451f_90ce,
    0x43ed_43a7,
    0xc1b3_8712,
];

/// `c[0] + s·(c[1] + s·(… + s·c[n−1]))`, each step one fused multiply-add.
fn horner(s: f32, c: &[u32]) -> f32 {
    c.iter()
        .rev()
        .map(|&b| f32::from_bits(b))
        .reduce(|acc, b| s.mul_add(acc, b))
        .unwrap_or(0.0)
}

/// `1 + s·(c[0] + s·(… + s·c[n−1]))`.
fn one_plus(s: f32, c: &[u32]) -> f32 {
    s.mul_add(horner(s, c), 1.0)
}

/// `erff(x)`.
pub fn erff(x: f32) -> f32 {
    let hx = x.to_bits() as i32;
    let ix = hx & 0x7fff_ffff;
    if ix >= 0x7f80_0000 {
        let i = ((hx as u32) >> 31) << 1;
        return (1 - i as i32) as f32 + 1.0 / x;
    }
    if ix < 0x3f58_0000 {
        if ix < 0x3180_0000 {
            if ix < 0x0400_0000 {
                return 0.125 * 8.0f32.mul_add(x, EFX8 * x);
            }
            return EFX.mul_add(x, x);
        }
        let z = x * x;
        let r = horner(z, &PP);
        let s = one_plus(z, &QQ);
        let y = r / s;
        return x.mul_add(y, x);
    }
    if ix < 0x3fa0_0000 {
        let s = x.abs() - 1.0;
        let p = horner(s, &PA);
        let q = one_plus(s, &QA);
        return if hx >= 0 { ERX + p / q } else { -ERX - p / q };
    }
    if ix >= 0x40c0_0000 {
        return if hx >= 0 { 1.0 - TINY } else { TINY - 1.0 };
    }
    let x = x.abs();
    let s = 1.0 / (x * x);
    let (r, big_s) = if ix < 0x4036_db6e {
        (horner(s, &RA), one_plus(s, &SA))
    } else {
        (horner(s, &RB), one_plus(s, &SB))
    };
    let z = f32::from_bits(x.to_bits() & 0xffff_f000);
    let e = expf((-z).mul_add(z, -0.5625)) * expf((z - x).mul_add(z + x, r / big_s));
    if hx >= 0 {
        1.0 - e / x
    } else {
        e / x - 1.0
    }
}

mod double {
    //! The double-precision coefficients (`s_erf.c`).
    pub const ERX: u64 = 0x3feb_0ac1_6000_0000;
    pub const EFX: u64 = 0x3fc0_6eba_8214_db69;
    pub const EFX8: u64 = 0x3ff0_6eba_8214_db69;
    pub const PP: [u64; 5] = [
        0x3fc06eba8214db68,
        0xbfd4cd7d691cb913,
        0xbf9d2a51dbd7194f,
        0xbf77a291236668e4,
        0xbef8ead6120016ac,
    ];
    pub const QQ: [u64; 5] = [
        0x3fd97779cddadc09,
        0x3fb0a54c5536ceba,
        0x3f74d022c4d36b0f,
        0x3f215dc9221c1a10,
        0xbed09c4342a26120,
    ];
    pub const PA: [u64; 7] = [
        0xbf6359b8bef77538,
        0x3fda8d00ad92b34d,
        0xbfd7d240fbb8c3f1,
        0x3fd45fca805120e4,
        0xbfbc63983d3e28ec,
        0x3fa22a36599795eb,
        0xbf61bf380a96073f,
    ];
    pub const QA: [u64; 6] = [
        0x3fbb3e6618eee323,
        0x3fe14af092eb6f33,
        0x3fb2635cd99fe9a7,
        0x3fc02660e763351f,
        0x3f8bedc26b51dd1c,
        0x3f888b545735151d,
    ];
    pub const RA: [u64; 8] = [
        0xbf843412600d6435,
        0xbfe63416e4ba7360,
        0xc0251e0441b0e726,
        0xc04f300ae4cba38d,
        0xc0644cb184282266,
        0xc067135cebccabb2,
        0xc054526557e4d2f2,
        0xc023a0efc69ac25c,
    ];
    pub const SA: [u64; 8] = [
        0x4033a6b9bd707687,
        0x4061350c526ae721,
        0x407b290dd58a1a71,
        0x40842b1921ec2868,
        0x407ad02157700314,
        0x405b28a3ee48ae2c,
        0x401a47ef8e484a93,
        0xbfaeeff2ee749a62,
    ];
    pub const RB: [u64; 7] = [
        0xbf84341239e86f4a,
        0xbfe993ba70c285de,
        0xc031c209555f995a,
        0xc064145d43c5ed98,
        0xc083ec881375f228,
        0xc09004616a2e5992,
        0xc07e384e9bdc383f,
    ];
    pub const SB: [u64; 7] = [
        0x403e568b261d5190,
        0x40745cae221b9f0a,
        0x409802eb189d5118,
        0x40a8ffb7688c246a,
        0x40a3f219cedf3be6,
        0x407da874e79fe763,
        0xc03670e242712d62,
    ];
}

fn horner64(s: f64, c: &[u64]) -> f64 {
    c.iter()
        .rev()
        .map(|&b| f64::from_bits(b))
        .reduce(|acc, b| s.mul_add(acc, b))
        .unwrap_or(0.0)
}

fn one_plus64(s: f64, c: &[u64]) -> f64 {
    s.mul_add(horner64(s, c), 1.0)
}

/// `erf(x)` in double precision (ExecuTorch's exact gelu calls it on a widened float).
pub fn erf(x: f64) -> f64 {
    use double::*;
    let d = f64::from_bits;
    let hx = (x.to_bits() >> 32) as i32;
    let ix = hx & 0x7fff_ffff;
    if ix >= 0x7ff0_0000 {
        let i = ((hx as u32) >> 31) << 1;
        return f64::from(1 - i as i32) + 1.0 / x;
    }
    if ix < 0x3feb_0000 {
        if ix < 0x3e30_0000 {
            if ix < 0x0080_0000 {
                return 0.125 * 8.0f64.mul_add(x, d(EFX8) * x);
            }
            return d(EFX).mul_add(x, x);
        }
        let z = x * x;
        let r = horner64(z, &PP);
        let s = one_plus64(z, &QQ);
        return x.mul_add(r / s, x);
    }
    if ix < 0x3ff4_0000 {
        let s = x.abs() - 1.0;
        let p = horner64(s, &PA);
        let q = one_plus64(s, &QA);
        return if hx >= 0 {
            d(ERX) + p / q
        } else {
            -d(ERX) - p / q
        };
    }
    if ix >= 0x4018_0000 {
        return if hx >= 0 { 1.0 - 1e-300 } else { 1e-300 - 1.0 };
    }
    let x = x.abs();
    let s = 1.0 / (x * x);
    let (r, big_s) = if ix < 0x4006_db6e {
        (horner64(s, &RA), one_plus64(s, &SA))
    } else {
        (horner64(s, &RB), one_plus64(s, &SB))
    };
    let z = f64::from_bits(x.to_bits() & 0xffff_ffff_0000_0000);
    let e = exp((-z).mul_add(z, -0.5625)) * exp((z - x).mul_add(z + x, r / big_s));
    if hx >= 0 {
        1.0 - e / x
    } else {
        e / x - 1.0
    }
}

//! newlib's `erff` (`libm/math/sf_erf.c`, fdlibm's): rational approximations on
//! [0, 0.84375), [0.84375, 1.25) and `1 − exp(−x²−0.5625 + R/S)/x` beyond, evaluated by Horner's
//! rule with every step fused as the Arm GNU toolchain compiles it.

use super::exp::expf;

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

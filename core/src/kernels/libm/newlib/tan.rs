//! newlib's `tanf` (fdlibm's `sf_tan.c`, `kf_tan.c`, `ef_rem_pio2.c`, `kf_rem_pio2.c`, single
//! precision): the argument reduced by π/2 (Cody–Waite in three steps below 2^7·π/2, Payne–Hanek
//! over 2/π in 8-bit chunks beyond), then the tangent kernel; the products the Arm GNU toolchain
//! fuses into additions fused here too (the reduction's chunk products are exact either way).

use super::invalid;

const TWO_OVER_PI: [u8; 198] = [
    0xA2, 0xF9, 0x83, 0x6E, 0x4E, 0x44, 0x15, 0x29, 0xFC, 0x27, 0x57, 0xD1, 0xF5, 0x34, 0xDD, 0xC0,
    0xDB, 0x62, 0x95, 0x99, 0x3C, 0x43, 0x90, 0x41, 0xFE, 0x51, 0x63, 0xAB, 0xDE, 0xBB, 0xC5, 0x61,
    0xB7, 0x24, 0x6E, 0x3A, 0x42, 0x4D, 0xD2, 0xE0, 0x06, 0x49, 0x2E, 0xEA, 0x09, 0xD1, 0x92, 0x1C,
    0xFE, 0x1D, 0xEB, 0x1C, 0xB1, 0x29, 0xA7, 0x3E, 0xE8, 0x82, 0x35, 0xF5, 0x2E, 0xBB, 0x44, 0x84,
    0xE9, 0x9C, 0x70, 0x26, 0xB4, 0x5F, 0x7E, 0x41, 0x39, 0x91, 0xD6, 0x39, 0x83, 0x53, 0x39, 0xF4,
    0x9C, 0x84, 0x5F, 0x8B, 0xBD, 0xF9, 0x28, 0x3B, 0x1F, 0xF8, 0x97, 0xFF, 0xDE, 0x05, 0x98, 0x0F,
    0xEF, 0x2F, 0x11, 0x8B, 0x5A, 0x0A, 0x6D, 0x1F, 0x6D, 0x36, 0x7E, 0xCF, 0x27, 0xCB, 0x09, 0xB7,
    0x4F, 0x46, 0x3F, 0x66, 0x9E, 0x5F, 0xEA, 0x2D, 0x75, 0x27, 0xBA, 0xC7, 0xEB, 0xE5, 0xF1, 0x7B,
    0x3D, 0x07, 0x39, 0xF7, 0x8A, 0x52, 0x92, 0xEA, 0x6B, 0xFB, 0x5F, 0xB1, 0x1F, 0x8D, 0x5D, 0x08,
    0x56, 0x03, 0x30, 0x46, 0xFC, 0x7B, 0x6B, 0xAB, 0xF0, 0xCF, 0xBC, 0x20, 0x9A, 0xF4, 0x36, 0x1D,
    0xA9, 0xE3, 0x91, 0x61, 0x5E, 0xE6, 0x1B, 0x08, 0x65, 0x99, 0x85, 0x5F, 0x14, 0xA0, 0x68, 0x40,
    0x8D, 0xFF, 0xD8, 0x80, 0x4D, 0x73, 0x27, 0x31, 0x06, 0x06, 0x15, 0x56, 0xCA, 0x73, 0xA8, 0xC9,
    0x60, 0xE2, 0x7B, 0xC0, 0x8C, 0x6B,
];

const NPIO2_HW: [u32; 32] = [
    0x3fc90f00, 0x40490f00, 0x4096cb00, 0x40c90f00, 0x40fb5300, 0x4116cb00, 0x412fed00, 0x41490f00,
    0x41623100, 0x417b5300, 0x418a3a00, 0x4196cb00, 0x41a35c00, 0x41afed00, 0x41bc7e00, 0x41c90f00,
    0x41d5a000, 0x41e23100, 0x41eec200, 0x41fb5300, 0x4203f200, 0x420a3a00, 0x42108300, 0x4216cb00,
    0x421d1400, 0x42235c00, 0x4229a500, 0x422fed00, 0x42363600, 0x423c7e00, 0x4242c700, 0x42490f00,
];

/// π/2 in 8-bit chunks (`PIo2`).
const PIO2_CHUNKS: [f32; 11] = [
    1.5703125000e+00,
    4.5776367188e-04,
    2.5987625122e-05,
    7.5437128544e-08,
    6.0026650317e-11,
    7.3896444519e-13,
    5.3845816694e-15,
    5.6378512969e-18,
    8.3009228831e-20,
    3.2756352257e-22,
    6.3331015649e-25,
];
const TWO8: f32 = 2.560_000_000_0e+02;
const TWON8: f32 = 3.906_250_000_0e-03;

/// `x · 2^n`, correctly rounded (`scalbnf`): the product is exact in double.
fn scalbnf(x: f32, n: i32) -> f32 {
    (f64::from(x) * 2f64.powi(n)) as f32
}

/// `__kernel_rem_pio2f` for `prec` 1 (two floats): `x` (its 8-bit chunks, scaled by `2^-e0`)
/// reduced by π/2, the quadrant's low three bits.
fn kernel_rem_pio2f(x: &[f32], e0: i32) -> (i32, [f32; 2]) {
    const JK: usize = 7;
    let jp = JK;
    let nx = x.len();
    let jx = nx - 1;
    let jv = ((e0 - 3) / 8).max(0);
    let mut q0 = e0 - 8 * (jv + 1);
    let (mut f, mut q, mut fq) = ([0f32; 20], [0f32; 20], [0f32; 20]);
    let mut iq = [0i32; 20];
    let chunk = |j: i32| {
        if j < 0 {
            0.0
        } else {
            f32::from(TWO_OVER_PI.get(j as usize).copied().unwrap_or(0))
        }
    };
    let m = jx + JK;
    for (i, slot) in f.iter_mut().enumerate().take(m + 1) {
        *slot = chunk(jv - jx as i32 + i as i32);
    }
    for i in 0..=JK {
        let mut fw = 0f32;
        for j in 0..=jx {
            fw = x[j].mul_add(f[jx + i - j], fw);
        }
        q[i] = fw;
    }
    let mut jz = JK;
    loop {
        let mut z = q[jz];
        let mut i = 0;
        let mut j = jz;
        while j > 0 {
            let fw = ((TWON8 * z) as i32) as f32;
            iq[i] = (-TWO8).mul_add(fw, z) as i32;
            z = q[j - 1] + fw;
            i += 1;
            j -= 1;
        }
        z = scalbnf(z, q0);
        z = (-8.0f32).mul_add((z * 0.125).floor(), z);
        let mut n = z as i32;
        z -= n as f32;
        let mut ih = 0;
        if q0 > 0 {
            let i = iq[jz - 1] >> (8 - q0);
            n += i;
            iq[jz - 1] -= i << (8 - q0);
            ih = iq[jz - 1] >> (7 - q0);
        } else if q0 == 0 {
            ih = iq[jz - 1] >> 8;
        } else if z >= 0.5 {
            ih = 2;
        }
        if ih > 0 {
            n += 1;
            let mut carry = 0;
            for v in iq.iter_mut().take(jz) {
                let j = *v;
                if carry == 0 {
                    if j != 0 {
                        carry = 1;
                        *v = 0x100 - j;
                    }
                } else {
                    *v = 0xff - j;
                }
            }
            if q0 == 1 {
                iq[jz - 1] &= 0x7f;
            } else if q0 == 2 {
                iq[jz - 1] &= 0x3f;
            }
            if ih == 2 {
                z = 1.0 - z;
                if carry != 0 {
                    z -= scalbnf(1.0, q0);
                }
            }
        }
        if z == 0.0 {
            let mut j = 0;
            for v in iq.iter().take(jz).skip(JK) {
                j |= *v;
            }
            if j == 0 {
                let mut k = 1;
                while iq[JK - k] == 0 {
                    k += 1;
                }
                for i in jz + 1..=jz + k {
                    f[jx + i] = chunk(jv + i as i32);
                    let mut fw = 0f32;
                    for j in 0..=jx {
                        fw = x[j].mul_add(f[jx + i - j], fw);
                    }
                    q[i] = fw;
                }
                jz += k;
                continue;
            }
        }
        if z == 0.0 {
            jz -= 1;
            q0 -= 8;
            while iq[jz] == 0 {
                jz -= 1;
                q0 -= 8;
            }
        } else {
            z = scalbnf(z, -q0);
            if z >= TWO8 {
                let fw = ((TWON8 * z) as i32) as f32;
                iq[jz] = (-TWO8).mul_add(fw, z) as i32;
                jz += 1;
                q0 += 8;
                iq[jz] = fw as i32;
            } else {
                iq[jz] = z as i32;
            }
        }
        let mut fw = scalbnf(1.0, q0);
        for i in (0..=jz).rev() {
            q[i] = fw * iq[i] as f32;
            fw *= TWON8;
        }
        for i in (0..=jz).rev() {
            let mut fw = 0f32;
            let mut k = 0;
            while k <= jp && k <= jz - i {
                fw = PIO2_CHUNKS[k].mul_add(q[i + k], fw);
                k += 1;
            }
            fq[jz - i] = fw;
        }
        let mut fw = 0f32;
        for v in fq.iter().take(jz + 1).rev() {
            fw += *v;
        }
        let y0 = if ih == 0 { fw } else { -fw };
        let mut fw = fq[0] - fw;
        for v in fq.iter().take(jz + 1).skip(1) {
            fw += *v;
        }
        let y1 = if ih == 0 { fw } else { -fw };
        return (n & 7, [y0, y1]);
    }
}

/// `__ieee754_rem_pio2f`: `x − n·π/2` as a head and a tail, and `n`.
fn rem_pio2f(x: f32) -> (i32, [f32; 2]) {
    const INVPIO2: f32 = 6.3661980629e-01;
    const PIO2_1: f32 = 1.5707855225e+00;
    const PIO2_1T: f32 = 1.0804334124e-05;
    const PIO2_2: f32 = 1.0804273188e-05;
    const PIO2_2T: f32 = 6.0770999344e-11;
    const PIO2_3: f32 = 6.0770943833e-11;
    const PIO2_3T: f32 = 6.1232342629e-17;
    let hx = x.to_bits() as i32;
    let ix = hx & 0x7fff_ffff;
    if ix <= 0x3f49_0fd8 {
        return (0, [x, 0.0]);
    }
    if ix < 0x4016_cbe4 {
        let near = (ix as u32 & 0xffff_fff0) == 0x3fc9_0fd0;
        return if hx > 0 {
            let z = x - PIO2_1;
            if !near {
                let y0 = z - PIO2_1T;
                (1, [y0, (z - y0) - PIO2_1T])
            } else {
                let z = z - PIO2_2;
                let y0 = z - PIO2_2T;
                (1, [y0, (z - y0) - PIO2_2T])
            }
        } else {
            let z = x + PIO2_1;
            if !near {
                let y0 = z + PIO2_1T;
                (-1, [y0, (z - y0) + PIO2_1T])
            } else {
                let z = z + PIO2_2;
                let y0 = z + PIO2_2T;
                (-1, [y0, (z - y0) + PIO2_2T])
            }
        };
    }
    if ix <= 0x4349_0f80 {
        let t = x.abs();
        let n = t.mul_add(INVPIO2, 0.5) as i32;
        let fn_ = n as f32;
        let mut r = (-fn_).mul_add(PIO2_1, t);
        let mut w = fn_ * PIO2_1T;
        let y0;
        if n < 32 && (ix as u32 & 0xffff_ff00) != NPIO2_HW[(n - 1) as usize] {
            y0 = r - w;
        } else {
            let j = ix >> 23;
            let mut y = r - w;
            let i = j - ((y.to_bits() >> 23) & 0xff) as i32;
            // one more Cody-Waite step with the next part of π/2: w = fn·hi is used by two
            // subtractions, so the compiler fused it into both
            let step = |t: f32, hi: f32, lo: f32| {
                let r = (-fn_).mul_add(hi, t);
                let w = fn_.mul_add(lo, -((-fn_).mul_add(hi, t - r)));
                (r, w, r - w)
            };
            if i > 8 {
                (r, w, y) = step(r, PIO2_2, PIO2_2T);
                let i = j - ((y.to_bits() >> 23) & 0xff) as i32;
                if i > 25 {
                    (r, w, y) = step(r, PIO2_3, PIO2_3T);
                }
            }
            y0 = y;
        }
        let y1 = (r - y0) - w;
        return if hx < 0 {
            (-n, [-y0, -y1])
        } else {
            (n, [y0, y1])
        };
    }
    if ix >= 0x7f80_0000 {
        let nan = invalid(x);
        return (0, [nan, nan]);
    }
    let e0 = (ix >> 23) - 134;
    let mut z = f32::from_bits((ix - (e0 << 23)) as u32);
    let mut tx = [0f32; 3];
    for t in tx.iter_mut().take(2) {
        *t = (z as i32) as f32;
        z = (z - *t) * TWO8;
    }
    tx[2] = z;
    let mut nx = 3;
    while nx > 1 && tx[nx - 1] == 0.0 {
        nx -= 1;
    }
    let (n, y) = kernel_rem_pio2f(&tx[..nx], e0);
    if hx < 0 {
        (-n, [-y[0], -y[1]])
    } else {
        (n, y)
    }
}

const T: [f32; 13] = [
    3.3333334327e-01,
    1.3333334029e-01,
    5.3968254477e-02,
    2.1869488060e-02,
    8.8632395491e-03,
    3.5920790397e-03,
    1.4562094584e-03,
    5.8804126456e-04,
    2.4646313977e-04,
    7.8179444245e-05,
    7.1407252108e-05,
    -1.8558637748e-05,
    2.5907305826e-05,
];

/// `__kernel_tanf(x, y, iy)`: tan(x + y) for |x + y| ≤ π/4 (`iy` 1), or −1/tan (`iy` −1).
fn kernel_tanf(x: f32, y: f32, iy: i32) -> f32 {
    const PIO4: f32 = 7.8539812565e-01;
    const PIO4LO: f32 = 3.7748947079e-08;
    let hx = x.to_bits() as i32;
    let ix = hx & 0x7fff_ffff;
    let (mut x, mut y) = (x, y);
    if ix < 0x3180_0000 && (x as i32) == 0 {
        if (ix | (iy + 1)) == 0 {
            return 1.0 / x.abs();
        }
        return if iy == 1 { x } else { -1.0 / x };
    }
    if ix >= 0x3f2c_a140 {
        if hx < 0 {
            x = -x;
            y = -y;
        }
        let z = PIO4 - x;
        let w = PIO4LO - y;
        x = z + w;
        y = 0.0;
    }
    let z = x * x;
    let w = z * z;
    let r = w.mul_add(
        w.mul_add(
            w.mul_add(w.mul_add(w.mul_add(T[11], T[9]), T[7]), T[5]),
            T[3],
        ),
        T[1],
    );
    let pv = w.mul_add(
        w.mul_add(
            w.mul_add(w.mul_add(w.mul_add(T[12], T[10]), T[8]), T[6]),
            T[4],
        ),
        T[2],
    );
    let s = z * x;
    // v = z·pv is used only by r + v: fused
    let r_plus_v = z.mul_add(pv, r);
    let r = z.mul_add(s.mul_add(r_plus_v, y), y);
    let r = T[0].mul_add(s, r);
    let w = x + r;
    if ix >= 0x3f2c_a140 {
        let v = iy as f32;
        let sign = (1 - ((hx >> 30) & 2)) as f32;
        return sign * (-2.0f32).mul_add(x - (w * w / (w + v) - r), v);
    }
    if iy == 1 {
        return w;
    }
    let z = f32::from_bits(w.to_bits() & 0xffff_f000);
    let v = r - (z - x);
    let a = -1.0 / w;
    let t = f32::from_bits(a.to_bits() & 0xffff_f000);
    let s = t.mul_add(z, 1.0);
    a.mul_add(t.mul_add(v, s), t)
}

/// `tanf(x)`.
pub fn tanf(x: f32) -> f32 {
    let ix = x.to_bits() & 0x7fff_ffff;
    if ix <= 0x3f49_0fda {
        return kernel_tanf(x, 0.0, 1);
    }
    if ix >= 0x7f80_0000 {
        return invalid(x);
    }
    let (n, y) = rem_pio2f(x);
    kernel_tanf(y[0], y[1], 1 - ((n & 1) << 1))
}

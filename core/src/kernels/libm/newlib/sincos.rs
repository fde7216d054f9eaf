//! newlib's `sinf` and `cosf` (Arm's optimized routines, `libm/common/sinf.c`, `cosf.c`,
//! `sincosf.h`): a reduction by π/2 in double (Payne–Hanek with the 4/π bits beyond 120), then
//! one of two polynomials, products fused into additions as the Arm GNU toolchain compiles them.

use super::invalid;
use super::tables::{INV_PIO4, SINCOSF_TABLE};

/// One of the two `sincos_t` tables (the second for quadrants 2 and 3).
struct Table {
    sign: [f64; 4],
    hpi_inv: f64,
    hpi: f64,
    c: [f64; 5],
    s: [f64; 3],
}

fn table(which: usize) -> Table {
    let w = |k: usize| f64::from_bits(SINCOSF_TABLE[which * 14 + k]);
    Table {
        sign: [w(0), w(1), w(2), w(3)],
        hpi_inv: w(4),
        hpi: w(5),
        c: [w(6), w(7), w(8), w(9), w(10)],
        s: [w(11), w(12), w(13)],
    }
}

fn abstop12(x: f32) -> u32 {
    (x.to_bits() >> 20) & 0x7ff
}

/// `sinf_poly`: the sine polynomial for an even quadrant, the cosine one for an odd.
fn poly(x: f64, x2: f64, p: &Table, n: i32) -> f32 {
    if n & 1 == 0 {
        let x3 = x * x2;
        let s1 = x2.mul_add(p.s[2], p.s[1]);
        let x7 = x3 * x2;
        let s = x3.mul_add(p.s[0], x);
        s1.mul_add(x7, s) as f32
    } else {
        let x4 = x2 * x2;
        let c2 = x2.mul_add(p.c[4], p.c[3]);
        let c1 = x2.mul_add(p.c[1], p.c[0]);
        let x6 = x4 * x2;
        let c = x4.mul_add(p.c[2], c1);
        c2.mul_add(x6, c) as f32
    }
}

/// `x − n·π/2` for |x| < 120, `n` the nearest quadrant (`reduce_fast`).
fn reduce_fast(x: f64, p: &Table) -> (f64, i32) {
    let r = x * p.hpi_inv;
    let n = ((r as i32).wrapping_add(0x80_0000)) >> 24;
    (f64::from(n).mul_add(-p.hpi, x), n)
}

/// Payne–Hanek reduction of a large |x| with 4/π to 192 bits (`reduce_large`).
fn reduce_large(xi: u32) -> (f64, i32) {
    let at = ((xi >> 26) & 15) as usize;
    let shift = (xi >> 23) & 7;
    let xi = ((xi & 0x00ff_ffff) | 0x0080_0000) << shift;
    let res0 = u64::from(xi.wrapping_mul(INV_PIO4[at]));
    let res1 = u64::from(xi) * u64::from(INV_PIO4[at + 4]);
    let res2 = u64::from(xi) * u64::from(INV_PIO4[at + 8]);
    let res0 = (res2 >> 32) | (res0 << 32);
    let res0 = res0.wrapping_add(res1);
    let n = (res0.wrapping_add(1 << 61)) >> 62;
    let res0 = res0.wrapping_sub(n << 62);
    let x = res0 as i64 as f64;
    (x * f64::from_bits(0x3c1921fb54442d18), n as i32)
}

/// `sinf(y)` (`n_shift` 0) or `cosf(y)` (1): they differ only in the quadrant the polynomial is
/// picked for and in the smallest inputs.
fn sin_or_cos(y: f32, n_shift: i32) -> f32 {
    let x = f64::from(y);
    let p0 = table(0);
    if abstop12(y) < abstop12(f32::from_bits(0x3f49_0fdb)) {
        let x2 = x * x;
        if abstop12(y) < abstop12(f32::from_bits(0x3980_0000)) {
            return if n_shift == 0 { y } else { 1.0 };
        }
        return poly(x, x2, &p0, n_shift);
    }
    let (x, n, quadrant) = if abstop12(y) < abstop12(120.0) {
        let (x, n) = reduce_fast(x, &p0);
        (x, n, n)
    } else if abstop12(y) < abstop12(f32::INFINITY) {
        let xi = y.to_bits();
        let sign = (xi >> 31) as i32;
        let (x, n) = reduce_large(xi);
        (x, n, n + sign)
    } else {
        return invalid(y);
    };
    let s = p0.sign[(quadrant & 3) as usize];
    let p = if quadrant & 2 != 0 { table(1) } else { p0 };
    poly(x * s, x * x, &p, n ^ n_shift)
}

/// `sinf(y)`.
pub fn sinf(y: f32) -> f32 {
    sin_or_cos(y, 0)
}

/// `cosf(y)`.
pub fn cosf(y: f32) -> f32 {
    sin_or_cos(y, 1)
}

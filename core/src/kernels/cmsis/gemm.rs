//! Blocked integer GEMM behind the int8 convolution, depthwise convolution and fully connected
//! kernels, bit-exact with CMSIS-NN's loops.
//!
//! Why it may reorder: CMSIS-NN accumulates in wrapping 32-bit registers, and wrapping
//! addition is associative and commutative (it is addition modulo 2^32), so a sum computed in
//! blocks, in lanes, or in any order equals the device's. What it must keep: every product
//! exact modulo 2^32 and the requantization per output as the device does it
//! ([`Requant::apply`]). The offsets are folded into 16-bit operands (`x + input_offset`,
//! `w + filter_offset`), which is exact while |offset| ≤ [`MAX_FOLDED_OFFSET`]; a program
//! with a larger offset runs the reference loops in [`super::conv`].
//!
//! The inner loops are plain Rust that LLVM vectorizes; on x86-64 they are compiled a second
//! time with AVX2 and chosen at run time (`is_x86_feature_detected!`), so one binary runs on
//! any x86-64 and uses wide integer multiplies where the machine has them.

use super::conv::{Requant, Window};

/// The largest |offset| folded into a 16-bit operand: `i8 + offset` stays inside `i16`.
pub const MAX_FOLDED_OFFSET: i32 = i16::MAX as i32 - 128;

/// Whether `offset` folds into 16-bit operands exactly.
pub fn offset_folds(offset: i32) -> bool {
    (-MAX_FOLDED_OFFSET..=MAX_FOLDED_OFFSET).contains(&offset)
}

/// `arm_nn_requantize` plus the output offset and clamp, without branches so a row of
/// channels vectorizes; equal to [`Requant::apply`] for every input (tested).
#[inline(always)]
fn requantize_lane(acc: i32, multiplier: i32, shift: i32, rq: &Requant) -> i8 {
    let left = shift.max(0);
    let right = 0i32.saturating_sub(shift).clamp(0, 31);
    let v = acc.wrapping_mul(1i32.wrapping_shl(left as u32));
    let high = ((i64::from(v) * i64::from(multiplier) + (1i64 << 30)) >> 31) as i32;
    let mask = ((1i64 << right) - 1) as i32;
    let remainder = high & mask;
    let result = high >> right;
    let threshold = (mask >> 1) + i32::from(result < 0);
    let rounded = result + i32::from(remainder > threshold);
    rounded
        .wrapping_add(rq.output_offset)
        .clamp(rq.act_min, rq.act_max) as i8
}

/// A requantization's per-channel terms, computed once per call: the left shift as a
/// multiplier (`1 << max(shift, 0)`, wrapping as the device's), the right shift and its mask.
pub struct Lanes<'a> {
    rq: &'a Requant,
    left: Vec<i32>,
    right: Vec<i32>,
    mask: Vec<i32>,
}

impl<'a> Lanes<'a> {
    pub fn new(rq: &'a Requant) -> Self {
        let right: Vec<i32> = rq
            .shifts
            .iter()
            .map(|&s| 0i32.saturating_sub(s).clamp(0, 31))
            .collect();
        Lanes {
            rq,
            left: rq
                .shifts
                .iter()
                .map(|&s| 1i32.wrapping_shl(s.max(0) as u32))
                .collect(),
            mask: right.iter().map(|&r| ((1i64 << r) - 1) as i32).collect(),
            right,
        }
    }
}

/// One pixel's channels requantized: `out[ch] = rq.apply(acc[ch], ch)`. `WIDE` selects the
/// AVX2 build ([`requantize_row_avx2`]); only the AVX2 entry points pass `true`.
#[inline(always)]
fn requantize_row<const WIDE: bool>(acc: &[i32], lanes: &Lanes<'_>, out: &mut [i8]) {
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        // SAFETY: as in `dots`: `WIDE` is true only on a CPU found to have AVX2
        return unsafe { requantize_row_avx2(acc, lanes, out) };
    }
    let rq = lanes.rq;
    for (ch, (o, &a)) in out.iter_mut().zip(acc).enumerate() {
        *o = requantize_lane(a, rq.multipliers[ch], rq.shifts[ch], rq);
    }
}

/// [`requantize_lane`] eight channels at a time: the 64-bit doubling high multiply on even
/// and odd lanes (`vpmuldq`), the rounding shift with per-lane shifts (`vpsravd`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn requantize_row_avx2(acc: &[i32], lanes: &Lanes<'_>, out: &mut [i8]) {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_add_epi64, _mm256_and_si256, _mm256_blend_epi32,
        _mm256_castsi256_si128, _mm256_cmpgt_epi32, _mm256_extracti128_si256, _mm256_loadu_si256,
        _mm256_max_epi32, _mm256_min_epi32, _mm256_mul_epi32, _mm256_mullo_epi32,
        _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_slli_epi64, _mm256_srai_epi32,
        _mm256_srav_epi32, _mm256_srli_epi64, _mm256_sub_epi32, _mm_packs_epi16, _mm_packs_epi32,
        _mm_storel_epi64,
    };
    let rq = lanes.rq;
    let n = acc.len().min(out.len());
    assert!([&rq.multipliers, &lanes.left, &lanes.right, &lanes.mask]
        .iter()
        .all(|v| v.len() >= n));
    let load = |v: &[i32], at: usize| -> __m256i {
        // SAFETY: every caller passes at + 8 ≤ n ≤ v.len() (asserted above), unaligned
        unsafe { _mm256_loadu_si256(v.as_ptr().add(at).cast()) }
    };
    let (offset, lo, hi) = (
        _mm256_set1_epi32(rq.output_offset),
        _mm256_set1_epi32(rq.act_min),
        _mm256_set1_epi32(rq.act_max),
    );
    let nudge = _mm256_set1_epi64x(1 << 30);
    let full = n - n % 8;
    for at in (0..full).step_by(8) {
        let v = _mm256_mullo_epi32(load(acc, at), load(&lanes.left, at));
        let m = load(&rq.multipliers, at);
        // even lanes in the low halves of the 64-bit products, odd lanes shifted down first
        let even = _mm256_srli_epi64::<31>(_mm256_add_epi64(_mm256_mul_epi32(v, m), nudge));
        let odd = _mm256_add_epi64(
            _mm256_mul_epi32(_mm256_srli_epi64::<32>(v), _mm256_srli_epi64::<32>(m)),
            nudge,
        );
        let odd = _mm256_slli_epi64::<1>(odd);
        // bits 31..62 of each product: even from the low dword, odd from the high dword
        let high = _mm256_blend_epi32::<0b1010_1010>(even, odd);
        let mask = load(&lanes.mask, at);
        let remainder = _mm256_and_si256(high, mask);
        let result = _mm256_srav_epi32(high, load(&lanes.right, at));
        let threshold = _mm256_sub_epi32(
            _mm256_srai_epi32::<1>(mask),
            _mm256_srai_epi32::<31>(result),
        );
        let rounded = _mm256_sub_epi32(result, _mm256_cmpgt_epi32(remainder, threshold));
        let clamped = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(rounded, offset), lo), hi);
        // the clamped lanes fit in i8 (act_min/act_max do): narrowed in registers, the two
        // 128-bit halves packed to 16 then 8 bits without saturating anything
        let halves = _mm_packs_epi32(
            _mm256_castsi256_si128(clamped),
            _mm256_extracti128_si256::<1>(clamped),
        );
        let bytes = _mm_packs_epi16(halves, halves);
        // SAFETY: `out[at..at + 8]` is in bounds (at + 8 ≤ full ≤ n ≤ out.len()); an unaligned
        // 8-byte store
        unsafe { _mm_storel_epi64(out.as_mut_ptr().add(at).cast(), bytes) };
    }
    for ch in full..n {
        out[ch] = requantize_lane(acc[ch], rq.multipliers[ch], rq.shifts[ch], rq);
    }
}

/// Operands per step of one accumulator block: 16 × i16, one AVX2 register.
const STEP: usize = 16;

/// Output pixels (or weight rows) sharing one pass over the other operand.
const BLOCK: usize = 4;

/// `k` rounded up to whole steps: operands are zero-padded to it (a zero adds nothing).
fn padded(k: usize) -> usize {
    k.div_ceil(STEP) * STEP
}

/// `v + offset` as 16-bit operands in rows of `k`, each zero-padded to [`padded`]`(k)`.
fn widen_rows(v: &[i8], k: usize, offset: i32) -> Vec<i16> {
    let (kp, off) = (padded(k), offset as i16);
    let mut out = vec![0i16; v.len() / k.max(1) * kp];
    for (dst, src) in out.chunks_exact_mut(kp).zip(v.chunks_exact(k.max(1))) {
        for (d, &a) in dst.iter_mut().zip(src) {
            *d = i16::from(a) + off;
        }
    }
    out
}

/// The dot products of `P` operands laid end to end in `many` (each `kp` long, a multiple of
/// [`STEP`]) with `one`, wrapping: `[Σ many[p·kp + i] · one[i]]`. `WIDE` selects the AVX2
/// build ([`dots_avx2`]); only the AVX2 entry points pass `true`.
#[inline(always)]
fn dots<const P: usize, const WIDE: bool>(many: &[i16], kp: usize, one: &[i16]) -> [i32; P] {
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        // SAFETY: `WIDE` is true only inside the `#[target_feature(enable = "avx2")]` entry
        // points, which run only once the CPU was found to have AVX2
        return unsafe { dots_avx2::<P>(many, kp, one) };
    }
    let mut acc = [[0i32; STEP]; P];
    for (j, o) in one[..kp].chunks_exact(STEP).enumerate() {
        for (p, a) in acc.iter_mut().enumerate() {
            let m = &many[p * kp + j * STEP..][..STEP];
            for l in 0..STEP {
                a[l] = a[l].wrapping_add(i32::from(m[l]) * i32::from(o[l]));
            }
        }
    }
    acc.map(|a| a.iter().fold(0i32, |s, &v| s.wrapping_add(v)))
}

/// [`dots`] with `vpmaddwd`: 16 products summed in pairs into 8 lanes per instruction (the
/// one pair that can overflow, (−2^15)² twice, wraps as the device's register does).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dots_avx2<const P: usize>(many: &[i16], kp: usize, one: &[i16]) -> [i32; P] {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_loadu_si256, _mm256_madd_epi16, _mm256_setzero_si256,
        _mm256_storeu_si256,
    };
    assert!(kp.is_multiple_of(STEP) && one.len() >= kp && many.len() >= P * kp);
    let mut acc: [__m256i; P] = [_mm256_setzero_si256(); P];
    for j in (0..kp).step_by(STEP) {
        // SAFETY: j + STEP ≤ kp ≤ one.len() (asserted), an unaligned 32-byte load
        let o = unsafe { _mm256_loadu_si256(one.as_ptr().add(j).cast()) };
        for (p, a) in acc.iter_mut().enumerate() {
            // SAFETY: p·kp + j + STEP ≤ P·kp ≤ many.len() (asserted)
            let m = unsafe { _mm256_loadu_si256(many.as_ptr().add(p * kp + j).cast()) };
            *a = _mm256_add_epi32(*a, _mm256_madd_epi16(m, o));
        }
    }
    acc.map(|a| {
        let mut lanes = [0i32; 8];
        // SAFETY: `lanes` is 32 bytes, an unaligned store
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), a) };
        lanes.iter().fold(0i32, |s, &v| s.wrapping_add(v))
    })
}

/// A grouped-free convolution as a GEMM: input NHWC `[n, h, w, c]`, weight `[oc, kh, kw, c]`.
pub struct ConvGemm<'a> {
    pub x: &'a [i8],
    pub in_dims: [usize; 4],
    pub wt: &'a [i8],
    pub kernel: (usize, usize),
    pub bias: Option<&'a [i32]>,
    pub win: Window,
    pub input_offset: i32,
    pub rq: &'a Requant,
    pub out_dims: [usize; 4],
}

/// Calls `$body(args)` through an AVX2 build of it when the CPU has AVX2.
macro_rules! dispatch {
    ($plain:ident, $avx2:ident, $body:ident, $args:ty, $ret:ty) => {
        fn $plain(a: $args) -> $ret {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: `$avx2` only needs AVX2, which the CPU was just found to have
                return unsafe { $avx2(a) };
            }
            $body::<false>(a)
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        fn $avx2(a: $args) -> $ret {
            $body::<true>(a)
        }
    };
}

dispatch!(conv_dispatch, conv_avx2, conv_body, &ConvGemm<'_>, Vec<i8>);
dispatch!(
    depthwise_dispatch,
    depthwise_avx2,
    depthwise_body,
    &Depthwise<'_>,
    Vec<i8>
);
dispatch!(fc_dispatch, fc_avx2, fc_body, &FullyConnected<'_>, Vec<i32>);

/// `arm_convolve_s8` for one group (`c` input channels per filter) as im2col × filter rows;
/// `None` when the input offset does not fold (the caller runs the reference loops).
pub fn conv(g: &ConvGemm<'_>) -> Option<Vec<i8>> {
    offset_folds(g.input_offset).then(|| conv_dispatch(g))
}

#[inline(always)]
fn conv_body<const WIDE: bool>(g: &ConvGemm<'_>) -> Vec<i8> {
    let [n, h, w, c] = g.in_dims;
    let [_, oh, ow, oc] = g.out_dims;
    let (kh, kw) = g.kernel;
    let k = kh * kw * c;
    let kp = padded(k);
    let wt = widen_rows(g.wt, k, 0);
    let off = g.input_offset as i16;
    let (sh, sw) = g.win.stride;
    let (ph, pw) = g.win.padding;
    let (dh, dw) = g.win.dilation;
    let pixels = n * oh * ow;
    let mut out = vec![0i8; pixels * oc];
    let mut cols = vec![0i16; BLOCK * kp];
    let mut acc = vec![0i32; BLOCK * oc];
    let lanes = Lanes::new(g.rq);
    for first in (0..pixels).step_by(BLOCK) {
        let count = BLOCK.min(pixels - first);
        for (p, col) in cols.chunks_exact_mut(kp).enumerate() {
            if p >= count {
                col.fill(0);
                continue;
            }
            let pix = first + p;
            let (b, y, xo) = (pix / (oh * ow), pix / ow % oh, pix % ow);
            for ky in 0..kh {
                let iy = (y * sh + ky * dh) as isize - ph as isize;
                for kx in 0..kw {
                    let ix = (xo * sw + kx * dw) as isize - pw as isize;
                    let dst = &mut col[(ky * kw + kx) * c..][..c];
                    if iy < 0 || iy >= h as isize || ix < 0 || ix >= w as isize {
                        // a padded tap adds nothing, as CMSIS-NN skips (or zero-pads) it
                        dst.fill(0);
                    } else {
                        let base = ((b * h + iy as usize) * w + ix as usize) * c;
                        for (d, &v) in dst.iter_mut().zip(&g.x[base..base + c]) {
                            *d = i16::from(v) + off;
                        }
                    }
                }
            }
        }
        for ch in 0..oc {
            let d = dots::<BLOCK, WIDE>(&cols, kp, &wt[ch * kp..][..kp]);
            let bias = g.bias.map_or(0, |b| b[ch]);
            for (p, &v) in d.iter().enumerate() {
                acc[p * oc + ch] = v.wrapping_add(bias);
            }
        }
        for p in 0..count {
            let dst = &mut out[(first + p) * oc..][..oc];
            requantize_row::<WIDE>(&acc[p * oc..][..oc], &lanes, dst);
        }
    }
    out
}

/// A depthwise convolution: input NHWC `[n, h, w, c]`, weight `[1, kh, kw, c·m]`.
pub struct Depthwise<'a> {
    pub x: &'a [i8],
    pub in_dims: [usize; 4],
    pub wt: &'a [i8],
    pub kernel: (usize, usize),
    pub depth_multiplier: usize,
    pub bias: Option<&'a [i32]>,
    pub win: Window,
    pub input_offset: i32,
    pub rq: &'a Requant,
    pub out_dims: [usize; 4],
}

/// `arm_depthwise_conv_s8` with the channels as the vector lanes (NHWC keeps one pixel's
/// channels contiguous in the input, the weight and the output).
pub fn depthwise(d: &Depthwise<'_>) -> Vec<i8> {
    depthwise_dispatch(d)
}

#[inline(always)]
fn depthwise_body<const WIDE: bool>(d: &Depthwise<'_>) -> Vec<i8> {
    let [n, h, w, c] = d.in_dims;
    let [_, oh, ow, oc] = d.out_dims;
    let (kh, kw) = d.kernel;
    let m = d.depth_multiplier.max(1);
    let (sh, sw) = d.win.stride;
    let (ph, pw) = d.win.padding;
    let (dh, dw) = d.win.dilation;
    let wt: Vec<i32> = d.wt.iter().map(|&v| i32::from(v)).collect();
    let mut out = vec![0i8; n * oh * ow * oc];
    let mut acc = vec![0i32; oc];
    let mut xs = vec![0i32; oc];
    let lanes = Lanes::new(d.rq);
    for b in 0..n {
        for y in 0..oh {
            for xo in 0..ow {
                match d.bias {
                    Some(bias) => acc.copy_from_slice(&bias[..oc]),
                    None => acc.fill(0),
                }
                for ky in 0..kh {
                    let iy = (y * sh + ky * dh) as isize - ph as isize;
                    if iy < 0 || iy >= h as isize {
                        continue;
                    }
                    for kx in 0..kw {
                        let ix = (xo * sw + kx * dw) as isize - pw as isize;
                        if ix < 0 || ix >= w as isize {
                            continue;
                        }
                        let base = ((b * h + iy as usize) * w + ix as usize) * c;
                        let px = &d.x[base..base + c];
                        let wrow = &wt[(ky * kw + kx) * oc..][..oc];
                        if m == 1 {
                            for ((a, &xv), &wv) in acc.iter_mut().zip(px).zip(wrow) {
                                let xv = i32::from(xv).wrapping_add(d.input_offset);
                                *a = a.wrapping_add(xv.wrapping_mul(wv));
                            }
                        } else {
                            // output channel ch reads input channel ch / m
                            for (lanes, &xv) in xs.chunks_exact_mut(m).zip(px) {
                                lanes.fill(i32::from(xv).wrapping_add(d.input_offset));
                            }
                            for ((a, &xv), &wv) in acc.iter_mut().zip(&xs).zip(wrow) {
                                *a = a.wrapping_add(xv.wrapping_mul(wv));
                            }
                        }
                    }
                }
                let dst = &mut out[((b * oh + y) * ow + xo) * oc..][..oc];
                requantize_row::<WIDE>(&acc, &lanes, dst);
            }
        }
    }
    out
}

/// A fully connected layer's accumulators: `rows` inputs of `ins` against `outs` weight rows,
/// `Σ (x + input_offset)(w + filter_offset)` per (row, out), before bias and requantization.
pub struct FullyConnected<'a> {
    pub x: &'a [i8],
    pub w: &'a [i8],
    pub rows: usize,
    pub ins: usize,
    pub outs: usize,
    pub input_offset: i32,
    pub filter_offset: i32,
}

/// The accumulators of a fully connected layer, row-major `[rows, outs]`; `None` when an
/// offset does not fold (the caller runs the reference loop).
pub fn fully_connected(f: &FullyConnected<'_>) -> Option<Vec<i32>> {
    (offset_folds(f.input_offset) && offset_folds(f.filter_offset)).then(|| fc_dispatch(f))
}

#[inline(always)]
fn fc_body<const WIDE: bool>(f: &FullyConnected<'_>) -> Vec<i32> {
    let (k, outs) = (f.ins, f.outs);
    let kp = padded(k);
    let w = widen_rows(f.w, k, f.filter_offset);
    let x = widen_rows(f.x, k, f.input_offset);
    let mut acc = vec![0i32; f.rows * outs];
    for (r, xr) in x.chunks_exact(kp).enumerate() {
        let row = &mut acc[r * outs..][..outs];
        let mut o = 0;
        while o + BLOCK <= outs {
            let d = dots::<BLOCK, WIDE>(&w[o * kp..(o + BLOCK) * kp], kp, xr);
            row[o..o + BLOCK].copy_from_slice(&d);
            o += BLOCK;
        }
        for (o, v) in row.iter_mut().enumerate().skip(o) {
            *v = dots::<1, WIDE>(&w[o * kp..(o + 1) * kp], kp, xr)[0];
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::super::conv::{conv_s8, conv_s8_loops, fully_connected_loops, Requant, Window};
    use super::*;

    /// A small deterministic generator (the tests need no crate for it).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u32 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) as u32
        }
        fn below(&mut self, n: usize) -> usize {
            self.next() as usize % n
        }
        fn i8s(&mut self, n: usize) -> Vec<i8> {
            (0..n).map(|_| self.next() as i8).collect()
        }
        fn offset(&mut self) -> i32 {
            match self.below(4) {
                0 => MAX_FOLDED_OFFSET,
                1 => -MAX_FOLDED_OFFSET,
                _ => self.below(256) as i32 - 128,
            }
        }
    }

    fn requant(r: &mut Lcg, oc: usize) -> Requant {
        Requant {
            multipliers: (0..oc).map(|_| (r.next() >> 1) as i32 | 1 << 30).collect(),
            shifts: (0..oc).map(|_| r.below(20) as i32 - 14).collect(),
            output_offset: r.below(256) as i32 - 128,
            act_min: -128,
            act_max: 127,
        }
    }

    fn window(r: &mut Lcg) -> Window {
        Window {
            stride: (1 + r.below(3), 1 + r.below(3)),
            padding: (r.below(3), r.below(3)),
            dilation: (1 + r.below(2), 1 + r.below(2)),
        }
    }

    /// Output size of one spatial dim, or `None` when the window does not fit.
    fn out_size(i: usize, k: usize, s: usize, p: usize, d: usize) -> Option<usize> {
        let span = d * (k - 1) + 1;
        (i + 2 * p >= span).then(|| (i + 2 * p - span) / s + 1)
    }

    #[test]
    fn the_branch_free_requantization_equals_cmsis_nn_s_on_edge_and_random_values() {
        let mut r = Lcg(5);
        let edges = [
            i32::MIN,
            i32::MIN + 1,
            -1,
            0,
            1,
            i32::MAX,
            1 << 30,
            -(1 << 30),
        ];
        let shifts = [i32::MIN, -40, -31, -32, -1, 0, 1, 31, 32, 40, i32::MAX];
        let rq = requant(&mut r, 1);
        for _ in 0..20_000 {
            let acc = if r.below(4) == 0 {
                edges[r.below(8)]
            } else {
                r.next() as i32
            };
            let m = if r.below(4) == 0 {
                edges[r.below(8)]
            } else {
                r.next() as i32
            };
            let s = if r.below(3) == 0 {
                shifts[r.below(11)]
            } else {
                r.below(40) as i32 - 20
            };
            let rq = Requant {
                multipliers: vec![m],
                shifts: vec![s],
                ..Requant {
                    multipliers: vec![],
                    shifts: vec![],
                    ..rq
                }
            };
            assert_eq!(
                requantize_lane(acc, m, s, &rq),
                rq.apply(acc, 0),
                "{acc} {m} {s}"
            );
        }
        // whole rows, through both builds (8 lanes and a scalar tail)
        for _ in 0..2_000 {
            let n = 1 + r.below(20);
            let pick = |r: &mut Lcg, e: &[i32], k: usize| {
                if r.below(4) == 0 {
                    e[r.below(e.len())]
                } else {
                    r.next() as i32 >> r.below(k)
                }
            };
            let acc: Vec<i32> = (0..n).map(|_| pick(&mut r, &edges, 31)).collect();
            let rq = Requant {
                multipliers: (0..n).map(|_| pick(&mut r, &edges, 2)).collect(),
                shifts: (0..n)
                    .map(|_| {
                        if r.below(3) == 0 {
                            shifts[r.below(11)]
                        } else {
                            r.below(40) as i32 - 20
                        }
                    })
                    .collect(),
                output_offset: r.below(256) as i32 - 128,
                act_min: -128 + r.below(20) as i32,
                act_max: 127 - r.below(20) as i32,
            };
            let want: Vec<i8> = acc
                .iter()
                .enumerate()
                .map(|(ch, &a)| rq.apply(a, ch))
                .collect();
            let mut got = vec![0i8; n];
            let lanes = Lanes::new(&rq);
            requantize_row::<false>(&acc, &lanes, &mut got);
            assert_eq!(got, want);
            if wide() {
                requantize_row::<true>(&acc, &lanes, &mut got);
                assert_eq!(got, want, "AVX2: acc {acc:?}, shifts {:?}", rq.shifts);
            }
        }
    }

    /// Whether this machine runs the AVX2 builds (the tests compare both where it does).
    fn wide() -> bool {
        #[cfg(target_arch = "x86_64")]
        return std::arch::is_x86_feature_detected!("avx2");
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    #[test]
    fn the_blocked_convolution_equals_cmsis_nn_s_loops_on_random_shapes() {
        let mut r = Lcg(7);
        let mut ran = 0;
        while ran < 300 {
            let (n, h, w, c) = (
                1 + r.below(2),
                1 + r.below(9),
                1 + r.below(9),
                1 + r.below(40),
            );
            let (kh, kw, oc) = (1 + r.below(4), 1 + r.below(4), 1 + r.below(20));
            let win = window(&mut r);
            let (Some(oh), Some(ow)) = (
                out_size(h, kh, win.stride.0, win.padding.0, win.dilation.0),
                out_size(w, kw, win.stride.1, win.padding.1, win.dilation.1),
            ) else {
                continue;
            };
            let x = r.i8s(n * h * w * c);
            let wt = r.i8s(oc * kh * kw * c);
            let bias: Vec<i32> = (0..oc).map(|_| r.next() as i32 >> 12).collect();
            let bias = (r.below(2) == 0).then_some(bias.as_slice());
            let rq = requant(&mut r, oc);
            let off = r.offset();
            let args = ([n, h, w, c], [oc, kh, kw, c], [n, oh, ow, oc]);
            let fast = conv_s8(&x, args.0, &wt, args.1, bias, None, win, off, &rq, args.2);
            let slow = conv_s8_loops(&x, args.0, &wt, args.1, bias, None, win, off, &rq, args.2);
            assert_eq!(fast, slow, "shape {args:?}, offset {off}");
            let g = ConvGemm {
                x: &x,
                in_dims: args.0,
                wt: &wt,
                kernel: (kh, kw),
                bias,
                win,
                input_offset: off,
                rq: &rq,
                out_dims: args.2,
            };
            assert_eq!(conv_body::<false>(&g), slow, "plain build: {args:?}");
            ran += 1;
        }
    }

    #[test]
    fn the_vectorized_depthwise_equals_cmsis_nn_s_loops_on_random_shapes() {
        let mut r = Lcg(11);
        let mut ran = 0;
        while ran < 300 {
            let (n, h, w, c) = (
                1 + r.below(2),
                1 + r.below(9),
                1 + r.below(9),
                1 + r.below(40),
            );
            let (kh, kw, m) = (1 + r.below(4), 1 + r.below(4), 1 + r.below(3));
            let oc = c * m;
            let win = window(&mut r);
            let (Some(oh), Some(ow)) = (
                out_size(h, kh, win.stride.0, win.padding.0, win.dilation.0),
                out_size(w, kw, win.stride.1, win.padding.1, win.dilation.1),
            ) else {
                continue;
            };
            let x = r.i8s(n * h * w * c);
            let wt = r.i8s(kh * kw * oc);
            let bias: Vec<i32> = (0..oc).map(|_| r.next() as i32 >> 12).collect();
            let bias = (r.below(2) == 0).then_some(bias.as_slice());
            let rq = requant(&mut r, oc);
            // depthwise keeps the offset in 32 bits: any value is exact
            let off = r.next() as i32;
            let args = ([n, h, w, c], [1, kh, kw, oc], [n, oh, ow, oc]);
            let fast = conv_s8(
                &x,
                args.0,
                &wt,
                args.1,
                bias,
                Some(m),
                win,
                off,
                &rq,
                args.2,
            );
            let slow = conv_s8_loops(
                &x,
                args.0,
                &wt,
                args.1,
                bias,
                Some(m),
                win,
                off,
                &rq,
                args.2,
            );
            assert_eq!(fast, slow, "shape {args:?}, multiplier {m}, offset {off}");
            let d = Depthwise {
                x: &x,
                in_dims: args.0,
                wt: &wt,
                kernel: (kh, kw),
                depth_multiplier: m,
                bias,
                win,
                input_offset: off,
                rq: &rq,
                out_dims: args.2,
            };
            assert_eq!(depthwise_body::<false>(&d), slow, "plain build: {args:?}");
            ran += 1;
        }
    }

    #[test]
    fn the_blocked_fully_connected_equals_cmsis_nn_s_loop_and_refuses_what_does_not_fold() {
        let mut r = Lcg(13);
        for _ in 0..300 {
            let (rows, ins, outs) = (1 + r.below(3), 1 + r.below(70), 1 + r.below(30));
            let (x, w) = (r.i8s(rows * ins), r.i8s(outs * ins));
            let fc = FullyConnected {
                x: &x,
                w: &w,
                rows,
                ins,
                outs,
                input_offset: r.offset(),
                filter_offset: r.offset(),
            };
            assert_eq!(fully_connected(&fc), Some(fully_connected_loops(&fc)));
            assert_eq!(fc_body::<false>(&fc), fully_connected_loops(&fc));
        }
        let (x, w) = ([1i8; 4], [1i8; 4]);
        let wide = FullyConnected {
            x: &x,
            w: &w,
            rows: 1,
            ins: 4,
            outs: 1,
            input_offset: MAX_FOLDED_OFFSET + 1,
            filter_offset: 0,
        };
        assert_eq!(fully_connected(&wide), None);
    }

    #[test]
    fn a_convolution_whose_offset_does_not_fold_runs_the_loops_with_the_same_result() {
        let mut r = Lcg(17);
        let (x, wt) = (r.i8s(5 * 5 * 3), r.i8s(4 * 3 * 3 * 3));
        let rq = requant(&mut r, 4);
        let win = Window {
            stride: (1, 1),
            padding: (1, 1),
            dilation: (1, 1),
        };
        let g = ConvGemm {
            x: &x,
            in_dims: [1, 5, 5, 3],
            wt: &wt,
            kernel: (3, 3),
            bias: None,
            win,
            input_offset: i32::MAX,
            rq: &rq,
            out_dims: [1, 5, 5, 4],
        };
        assert_eq!(conv(&g), None);
        let dims = ([1, 5, 5, 3], [4, 3, 3, 3], [1, 5, 5, 4]);
        assert_eq!(
            conv_s8(
                &x,
                dims.0,
                &wt,
                dims.1,
                None,
                None,
                win,
                i32::MAX,
                &rq,
                dims.2
            ),
            conv_s8_loops(
                &x,
                dims.0,
                &wt,
                dims.1,
                None,
                None,
                win,
                i32::MAX,
                &rq,
                dims.2
            )
        );
    }
}

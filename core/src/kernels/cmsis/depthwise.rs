//! `arm_depthwise_conv_s8` with the channels as the vector lanes: NHWC keeps one pixel's
//! channels contiguous in the input, the weight and the output, so each filter tap is one
//! multiply-add per eight channels, the eight accumulators kept in a register across the taps.
//! The device multiplies `(x + input_offset) · w` in 32-bit registers and so does this loop
//! (any offset is exact); the sum wraps as the device's.

use super::conv_params::{Requant, Window};
use super::requant_row::{requantize_rows, Lanes};
use crate::kernels::simd::dispatch;

/// A depthwise convolution: input NHWC `[n, h, w, c]`, weight `[1, kh, kw, c·m]`.
pub struct Depthwise<'a> {
    pub x: &'a [i8],
    pub in_dims: [usize; 4],
    pub wt: &'a WidenedFilter,
    pub kernel: (usize, usize),
    pub depth_multiplier: usize,
    pub bias: Option<&'a [i32]>,
    pub win: Window,
    pub input_offset: i32,
    pub rq: &'a Requant,
    pub out_dims: [usize; 4],
}

/// Channels per vector step: eight 32-bit accumulators, one AVX2 register.
const LANES: usize = 8;

/// A depthwise filter `[1, kh, kw, c·m]` widened to 32 bits once (the device multiplies in
/// 32-bit registers), kept per constant by the runtime.
pub struct WidenedFilter(pub Vec<i32>);

impl WidenedFilter {
    pub fn new(wt: &[i8]) -> WidenedFilter {
        WidenedFilter(wt.iter().map(|&v| i32::from(v)).collect())
    }
}

/// The valid taps of one output pixel: each one's input pixel start (relative to a base the
/// caller gives) and filter row start, and how far the taps reach (largest start plus the
/// channels), so that one comparison bounds every read.
#[derive(Default)]
struct Taps {
    list: Vec<(usize, usize)>,
    reach_x: usize,
    reach_w: usize,
}

impl Taps {
    fn clear(&mut self) {
        self.list.clear();
        (self.reach_x, self.reach_w) = (0, 0);
    }

    fn push(&mut self, xi: usize, wi: usize, channels: (usize, usize)) {
        self.list.push((xi, wi));
        self.reach_x = self.reach_x.max(xi + channels.0);
        self.reach_w = self.reach_w.max(wi + channels.1);
    }
}

/// One output pixel's accumulators with a channel multiplier of 1: `acc[ch] =
/// Σ_taps (x[base + tap.x + ch] + input_offset) · w[tap.w + ch]`, wrapping (the bias is added
/// when requantizing). Eight channels stay in registers across the taps. `WIDE` selects the
/// AVX2 build ([`pixel_avx2`]).
#[inline(always)]
fn pixel<const WIDE: bool>(
    x: &[i8],
    base: usize,
    w: &[i32],
    taps: &Taps,
    input_offset: i32,
    acc: &mut [i32],
) {
    assert!(base + taps.reach_x <= x.len() && taps.reach_w <= w.len());
    let x = &x[base..];
    let oc = acc.len();
    assert!(taps.list.is_empty() || (taps.reach_x >= oc && taps.reach_w >= oc));
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        // SAFETY: `WIDE` is true only on a CPU found to have AVX2; every tap's range is inside
        // its reach, asserted inside `x` and `w`
        return unsafe { pixel_avx2(x, w, &taps.list, input_offset, acc) };
    }
    for (ch, a) in acc.iter_mut().enumerate() {
        *a = 0;
        for &(xi, wi) in &taps.list {
            let xv = i32::from(x[xi + ch]).wrapping_add(input_offset);
            *a = a.wrapping_add(xv.wrapping_mul(w[wi + ch]));
        }
    }
}

/// [`pixel`] eight channels at a time: sign-extend, add the offset, `vpmulld`, add.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn pixel_avx2(x: &[i8], w: &[i32], taps: &[(usize, usize)], input_offset: i32, acc: &mut [i32]) {
    use std::arch::x86_64::{
        _mm256_add_epi32, _mm256_cvtepi8_epi32, _mm256_loadu_si256, _mm256_mullo_epi32,
        _mm256_set1_epi32, _mm256_setzero_si256, _mm256_storeu_si256, _mm_loadl_epi64,
    };
    let oc = acc.len();
    let full = oc - oc % LANES;
    let off = _mm256_set1_epi32(input_offset);
    for cb in (0..full).step_by(LANES) {
        let mut a = _mm256_setzero_si256();
        for &(xi, wi) in taps {
            // SAFETY: xi + cb + 8 ≤ xi + oc ≤ x.len() and wi + cb + 8 ≤ w.len() (the caller
            // asserted the taps' ranges): an unaligned 8-byte and an unaligned 32-byte load
            let (xv, wv) = unsafe {
                (
                    _mm256_cvtepi8_epi32(_mm_loadl_epi64(x.as_ptr().add(xi + cb).cast())),
                    _mm256_loadu_si256(w.as_ptr().add(wi + cb).cast()),
                )
            };
            a = _mm256_add_epi32(a, _mm256_mullo_epi32(_mm256_add_epi32(xv, off), wv));
        }
        // SAFETY: cb + 8 ≤ oc = acc.len(); an unaligned 32-byte store
        unsafe { _mm256_storeu_si256(acc.as_mut_ptr().add(cb).cast(), a) };
    }
    for (ch, a) in acc.iter_mut().enumerate().skip(full) {
        *a = 0;
        for &(xi, wi) in taps {
            let xv = i32::from(x[xi + ch]).wrapping_add(input_offset);
            *a = a.wrapping_add(xv.wrapping_mul(w[wi + ch]));
        }
    }
}

dispatch!(
    /// `arm_depthwise_conv_s8` with the channels as the vector lanes (NHWC keeps one pixel's
    /// channels contiguous in the input, the weight and the output).
    pub depthwise,
    depthwise_avx2,
    depthwise_body,
    (d: &Depthwise<'_>),
    Vec<i8>
);

#[inline(always)]
fn depthwise_body<const WIDE: bool>(d: &Depthwise<'_>) -> Vec<i8> {
    let [n, h, w, c] = d.in_dims;
    let [_, oh, ow, oc] = d.out_dims;
    let (kh, kw) = d.kernel;
    let m = d.depth_multiplier.max(1);
    let (sh, sw) = d.win.stride;
    let (ph, pw) = d.win.padding;
    let (dh, dw) = d.win.dilation;
    let wt = &d.wt.0;
    let mut out = vec![0i8; n * oh * ow * oc];
    // one output row's accumulators, requantized together
    let mut acc = vec![0i32; ow * oc];
    // one input pixel's channels spread to the output channels reading them (multiplier > 1)
    let mut xs = vec![0i32; oc];
    // the taps of a pixel whose window lies inside the input, relative to its top-left input
    let mut interior = Taps::default();
    for ky in 0..kh {
        for kx in 0..kw {
            interior.push((ky * dh * w + kx * dw) * c, (ky * kw + kx) * oc, (c, oc));
        }
    }
    let (span_h, span_w) = (kh.saturating_sub(1) * dh, kw.saturating_sub(1) * dw);
    let mut edge = Taps::default();
    let lanes = Lanes::new(d.rq, d.bias);
    for b in 0..n {
        for y in 0..oh {
            let iy0 = (y * sh) as isize - ph as isize;
            for xo in 0..ow {
                let ix0 = (xo * sw) as isize - pw as isize;
                let inside =
                    iy0 >= 0 && ix0 >= 0 && iy0 as usize + span_h < h && ix0 as usize + span_w < w;
                let (base, taps) = if inside {
                    (((b * h + iy0 as usize) * w + ix0 as usize) * c, &interior)
                } else {
                    edge.clear();
                    for ky in 0..kh {
                        let iy = iy0 + (ky * dh) as isize;
                        if iy < 0 || iy >= h as isize {
                            continue;
                        }
                        for kx in 0..kw {
                            let ix = ix0 + (kx * dw) as isize;
                            if ix >= 0 && ix < w as isize {
                                let at = ((b * h + iy as usize) * w + ix as usize) * c;
                                edge.push(at, (ky * kw + kx) * oc, (c, oc));
                            }
                        }
                    }
                    (0, &edge)
                };
                let acc = &mut acc[xo * oc..][..oc];
                if m == 1 {
                    pixel::<WIDE>(d.x, base, wt, taps, d.input_offset, acc);
                } else {
                    acc.fill(0);
                    for &(xi, wi) in &taps.list {
                        // output channel ch reads input channel ch / m
                        let px = &d.x[base + xi..][..c];
                        for (group, &v) in xs.chunks_exact_mut(m).zip(px) {
                            group.fill(i32::from(v).wrapping_add(d.input_offset));
                        }
                        for ((a, &xv), &wv) in acc.iter_mut().zip(&xs).zip(&wt[wi..wi + oc]) {
                            *a = a.wrapping_add(xv.wrapping_mul(wv));
                        }
                    }
                }
            }
            let dst = &mut out[(b * oh + y) * ow * oc..][..ow * oc];
            requantize_rows::<WIDE>(&acc, oc, &lanes, dst);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::conv::{conv_s8, conv_s8_loops, FilterForm};
    use super::super::test_support::{nhwc, out_hw, requant, window, Lcg};
    use super::*;

    #[test]
    fn the_vectorized_depthwise_equals_cmsis_nn_s_loops_on_random_shapes() {
        let mut r = Lcg(11);
        let mut ran = 0;
        while ran < 300 {
            let [n, h, w, c] = nhwc(&mut r);
            let (kh, kw, m) = (1 + r.below(4), 1 + r.below(4), 1 + r.below(3));
            let oc = c * m;
            let win = window(&mut r);
            let Some((oh, ow)) = out_hw(h, w, (kh, kw), &win) else {
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
            let form = FilterForm::of(&wt, args.1, c, Some(m));
            let fast = conv_s8(
                &x,
                args.0,
                &wt,
                args.1,
                &form,
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
            let widened = WidenedFilter::new(&wt);
            let d = Depthwise {
                x: &x,
                in_dims: args.0,
                wt: &widened,
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
}

//! The arithmetic of ExecuTorch's portable float convolution: every output element starts at
//! zero, adds `w · x` over input channel, kernel row and kernel column in that order, and adds
//! its bias last, one rounding per multiply and per add (no fused multiply-add), as the portable
//! kernel's `conv2d_impl` does.
//!
//! The loop runs a plane at a time: for each (output channel, input channel, ky, kx) one weight
//! scales a strided window of the input plane into the output plane. Each output element keeps
//! its own order of additions, so the plane's elements can be computed side by side in vector
//! lanes; an AVX2 build of the same loop makes the lanes eight wide where the CPU has AVX2, with
//! the same result.

use crate::kernels::simd::dispatch;

/// A 2-D convolution's sizes: input `[n, c, h, w]`, weight `[oc, c / groups, kh, kw]`, output
/// `[n, oc, oh, ow]`; stride, padding and dilation as (h, w).
pub struct Geometry {
    pub input: [usize; 4],
    pub weight: [usize; 4],
    pub out: [usize; 2],
    pub groups: usize,
    pub stride: (usize, usize),
    pub padding: (usize, usize),
    pub dilation: (usize, usize),
}

dispatch!(
    /// Computes the convolution into `out` (`[n, oc, oh, ow]`, zeroed); false when a window
    /// reaches outside the input (the padding and dilation do not fit it).
    pub accumulate,
    accumulate_avx2,
    accumulate_body,
    (g: &Geometry, x: &[f32], wt: &[f32], bias: Option<&[f32]>, out: &mut [f32]),
    bool
);

/// The output positions `o` whose input coordinate `o·stride + k·dil − pad` lies in
/// `[0, in_len)`, as a range `lo..hi` of `0..o_len`.
fn valid(
    o_len: usize,
    stride: usize,
    k: usize,
    dil: usize,
    pad: usize,
    in_len: usize,
) -> (usize, usize) {
    let lo = (pad.saturating_sub(k * dil)).div_ceil(stride);
    let hi = ((in_len + pad).saturating_sub(k * dil))
        .div_ceil(stride)
        .min(o_len);
    (lo, hi.max(lo))
}

#[inline(always)]
fn accumulate_body<const WIDE: bool>(
    g: &Geometry,
    x: &[f32],
    wt: &[f32],
    bias: Option<&[f32]>,
    out: &mut [f32],
) -> bool {
    let [n, c, h, w] = g.input;
    let [oc, icg, kh, kw] = g.weight;
    let [oh, ow] = g.out;
    let ((sh, sw), (ph, pw), (dh, dw)) = (g.stride, g.padding, g.dilation);
    let ocg = oc / g.groups.max(1);
    for b_ in 0..n {
        for o in 0..oc {
            let grp = o / ocg.max(1);
            let plane = &mut out[(b_ * oc + o) * oh * ow..(b_ * oc + o + 1) * oh * ow];
            for ic in 0..icg {
                let cin = grp * icg + ic;
                let src = &x[(b_ * c + cin) * h * w..(b_ * c + cin + 1) * h * w];
                for ky in 0..kh {
                    let (y0, y1) = valid(oh, sh, ky, dh, ph, h);
                    for kx in 0..kw {
                        let wv = wt[((o * icg + ic) * kh + ky) * kw + kx];
                        let (x0, x1) = valid(ow, sw, kx, dw, pw, w);
                        for y in y0..y1 {
                            let iy = y * sh + ky * dh - ph;
                            let row = &src[iy * w..(iy + 1) * w];
                            let orow = &mut plane[y * ow..(y + 1) * ow];
                            if sw == 1 {
                                // x0 was chosen so that x0 + kx·dw ≥ pw
                                let start = x0 + kx * dw - pw;
                                let Some(window) = row.get(start..start + (x1 - x0)) else {
                                    return false;
                                };
                                for (ov, iv) in orow[x0..x1].iter_mut().zip(window) {
                                    *ov += wv * iv;
                                }
                            } else {
                                for (xo, ov) in orow.iter_mut().enumerate().take(x1).skip(x0) {
                                    let Some(iv) = row.get(xo * sw + kx * dw - pw) else {
                                        return false;
                                    };
                                    *ov += wv * iv;
                                }
                            }
                        }
                    }
                }
            }
            if let Some(b) = bias {
                plane.iter_mut().for_each(|v| *v += b[o]);
            }
        }
    }
    true
}

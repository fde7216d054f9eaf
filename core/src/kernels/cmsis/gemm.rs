//! The integer GEMM behind the int8 convolution and fully connected kernels, bit-exact with
//! CMSIS-NN's loops.
//!
//! Why it may reorder: CMSIS-NN accumulates in wrapping 32-bit registers, and wrapping
//! addition is associative and commutative (it is addition modulo 2^32), so a sum computed in
//! blocks, in lanes, or in any order equals the device's. What it must keep: every product
//! exact modulo 2^32 and the requantization per output as the device does it
//! ([`Requant::apply`]). The offsets are folded into 16-bit operands (`x + input_offset`,
//! `w + filter_offset`), which is exact while |offset| ≤ [`MAX_FOLDED_OFFSET`]; a program
//! with a larger offset runs the reference loops in [`super::conv`].
//!
//! The shape of the product: output channels are the vector lanes. The filter is packed once
//! ([`PackedRows`], kept per constant by the runtime) so that one 16-lane vector holds two
//! reduction steps of eight output channels; a pair of input operands broadcast to every lane
//! and one `vpmaddwd` make eight accumulators' next two terms. A block of pixels shares each
//! loaded filter vector, and no accumulator is ever summed across lanes.

use super::conv_params::{Requant, Window};
use super::requant_row::{requantize_rows, Lanes};
use crate::kernels::simd::dispatch;

/// The largest |offset| folded into a 16-bit operand: `i8 + offset` stays inside `i16`.
pub const MAX_FOLDED_OFFSET: i32 = i16::MAX as i32 - 128;

/// Whether `offset` folds into 16-bit operands exactly.
pub fn offset_folds(offset: i32) -> bool {
    (-MAX_FOLDED_OFFSET..=MAX_FOLDED_OFFSET).contains(&offset)
}

/// Accumulators per vector: 32-bit lanes of a 256-bit register.
const LANES: usize = 8;

/// Output channels per packed block: two vectors of accumulators.
const BLOCK_CHANNELS: usize = 2 * LANES;

/// Pixels (or input rows) sharing one pass over the packed filter.
const BLOCK_PIXELS: usize = 4;

/// Filter rows `[rows, k]` as the GEMM reads them: `w + offset` in 16 bits, the rows padded to
/// whole blocks of `BLOCK_CHANNELS` and `k` to an even count with zeros (a zero adds
/// nothing), laid out `[row block][k pair][channel in block][2]`.
pub struct PackedRows {
    rows: usize,
    k: usize,
    offset: i32,
    pairs: usize,
    data: Vec<i16>,
}

impl PackedRows {
    /// Packs `w` (`rows × k`, row-major) with `offset` added (which must fold).
    pub fn new(w: &[i8], rows: usize, k: usize, offset: i32) -> PackedRows {
        let pairs = k.div_ceil(2);
        let blocks = rows.div_ceil(BLOCK_CHANNELS);
        let mut data = vec![0i16; blocks * pairs * BLOCK_CHANNELS * 2];
        let off = offset as i16;
        for (row, src) in w.chunks_exact(k.max(1)).take(rows).enumerate() {
            let (block, lane) = (row / BLOCK_CHANNELS, row % BLOCK_CHANNELS);
            let dst = &mut data[block * pairs * BLOCK_CHANNELS * 2..][..pairs * BLOCK_CHANNELS * 2];
            for (i, &v) in src.iter().enumerate() {
                dst[((i / 2) * BLOCK_CHANNELS + lane) * 2 + i % 2] = i16::from(v) + off;
            }
        }
        PackedRows {
            rows,
            k,
            offset,
            pairs,
            data,
        }
    }

    /// Whether these are `rows × k` filter rows packed with `offset`.
    pub fn fits(&self, rows: usize, k: usize, offset: i32) -> bool {
        (self.rows, self.k, self.offset) == (rows, k, offset)
    }

    /// The rows rounded up to whole blocks: the stride of one pixel's accumulators.
    fn padded_rows(&self) -> usize {
        self.rows.div_ceil(BLOCK_CHANNELS) * BLOCK_CHANNELS
    }

    /// The length of one operand row (`k` rounded up to even).
    fn row_len(&self) -> usize {
        2 * self.pairs
    }
}

/// The accumulators of `P` operand rows (`cols`, each [`PackedRows::row_len`] long) against
/// every packed filter row: `acc[p · padded_rows + row] = Σ cols[p][i] · w[row][i]`, wrapping.
/// `WIDE` selects the AVX2 build ([`block_avx2`]); only code compiled with AVX2, on a CPU found
/// to have it, passes `true`.
#[inline(always)]
fn block<const P: usize, const WIDE: bool>(cols: &[i16], w: &PackedRows, acc: &mut [i32]) {
    let (kp, stride) = (w.row_len(), w.padded_rows());
    assert!(cols.len() >= P * kp && acc.len() >= P * stride);
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        // SAFETY: `WIDE` is true only on a CPU found to have AVX2; the lengths are asserted
        return unsafe { block_avx2::<P>(cols, w, acc) };
    }
    let per_block = w.pairs * BLOCK_CHANNELS * 2;
    for b in 0..stride / BLOCK_CHANNELS {
        let packed = &w.data[b * per_block..][..per_block];
        let mut sums = [[0i32; BLOCK_CHANNELS]; P];
        for (i, wv) in packed.chunks_exact(BLOCK_CHANNELS * 2).enumerate() {
            for (p, s) in sums.iter_mut().enumerate() {
                let (x0, x1) = (
                    i32::from(cols[p * kp + 2 * i]),
                    i32::from(cols[p * kp + 2 * i + 1]),
                );
                for (l, s) in s.iter_mut().enumerate() {
                    // the pair's sum wraps where `vpmaddwd`'s does: (−2^15)² twice
                    let pair =
                        (x0 * i32::from(wv[2 * l])).wrapping_add(x1 * i32::from(wv[2 * l + 1]));
                    *s = s.wrapping_add(pair);
                }
            }
        }
        for (p, s) in sums.iter().enumerate() {
            acc[p * stride + b * BLOCK_CHANNELS..][..BLOCK_CHANNELS].copy_from_slice(s);
        }
    }
}

/// [`block`] with `vpmaddwd`: per pair of reduction steps, two filter vectors (sixteen output
/// channels) loaded once and multiplied by each pixel's broadcast operand pair.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn block_avx2<const P: usize>(cols: &[i16], w: &PackedRows, acc: &mut [i32]) {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_loadu_si256, _mm256_madd_epi16, _mm256_set1_epi32,
        _mm256_setzero_si256, _mm256_storeu_si256,
    };
    let (kp, stride, pairs) = (w.row_len(), w.padded_rows(), w.pairs);
    assert!(cols.len() >= P * kp && acc.len() >= P * stride);
    assert!(w.data.len() >= stride / BLOCK_CHANNELS * pairs * BLOCK_CHANNELS * 2);
    let per_block = pairs * BLOCK_CHANNELS * 2;
    for b in 0..stride / BLOCK_CHANNELS {
        let packed = w.data[b * per_block..].as_ptr();
        let mut lo: [__m256i; P] = [_mm256_setzero_si256(); P];
        let mut hi: [__m256i; P] = [_mm256_setzero_si256(); P];
        for i in 0..pairs {
            // SAFETY: (b · pairs + i + 1) · 32 ≤ data.len() (asserted): two unaligned 32-byte loads
            let (w0, w1) = unsafe {
                let at = packed.add(i * BLOCK_CHANNELS * 2);
                (
                    _mm256_loadu_si256(at.cast()),
                    _mm256_loadu_si256(at.add(BLOCK_CHANNELS).cast()),
                )
            };
            for p in 0..P {
                // SAFETY: p · kp + 2i + 1 < P · kp ≤ cols.len() (asserted): the two i16 operands
                // read as one unaligned little-endian i32 (x86-64 is little-endian)
                let pair = unsafe {
                    cols.as_ptr()
                        .add(p * kp + 2 * i)
                        .cast::<i32>()
                        .read_unaligned()
                };
                let x = _mm256_set1_epi32(pair);
                lo[p] = _mm256_add_epi32(lo[p], _mm256_madd_epi16(w0, x));
                hi[p] = _mm256_add_epi32(hi[p], _mm256_madd_epi16(w1, x));
            }
        }
        for p in 0..P {
            let at = p * stride + b * BLOCK_CHANNELS;
            // SAFETY: at + 16 ≤ P · stride ≤ acc.len() (asserted): two unaligned 32-byte stores
            unsafe {
                _mm256_storeu_si256(acc.as_mut_ptr().add(at).cast(), lo[p]);
                _mm256_storeu_si256(acc.as_mut_ptr().add(at + LANES).cast(), hi[p]);
            }
        }
    }
}

/// The accumulators of every row of `cols` (`rows` of them) against `w`: blocks of
/// [`BLOCK_PIXELS`] rows, then one row at a time.
#[inline(always)]
fn rows_times<const WIDE: bool>(cols: &[i16], rows: usize, w: &PackedRows, acc: &mut [i32]) {
    let (kp, stride) = (w.row_len(), w.padded_rows());
    let full = rows - rows % BLOCK_PIXELS;
    for r in (0..full).step_by(BLOCK_PIXELS) {
        block::<BLOCK_PIXELS, WIDE>(&cols[r * kp..], w, &mut acc[r * stride..]);
    }
    for r in full..rows {
        block::<1, WIDE>(&cols[r * kp..], w, &mut acc[r * stride..]);
    }
}

/// An ungrouped convolution as a GEMM: input NHWC `[n, h, w, c]`, the filter `[oc, kh, kw, c]`
/// packed with offset 0 ([`PackedRows`] of `oc` rows of `kh·kw·c`).
pub struct ConvGemm<'a> {
    pub x: &'a [i8],
    pub in_dims: [usize; 4],
    pub packed: &'a PackedRows,
    pub kernel: (usize, usize),
    pub bias: Option<&'a [i32]>,
    pub win: Window,
    pub input_offset: i32,
    pub rq: &'a Requant,
    pub out_dims: [usize; 4],
}

dispatch!(conv_dispatch, conv_avx2, conv_body, (g: &ConvGemm<'_>), Vec<i8>);
dispatch!(
    fc_dispatch,
    fc_avx2,
    fc_body,
    (f: &FullyConnected<'_>, packed: &PackedRows),
    Vec<i32>
);

/// `arm_convolve_s8` for one group (`c` input channels per filter) as im2col × filter rows;
/// `None` when the input offset does not fold or the packed filter is not this call's (the
/// caller runs the reference loops).
pub fn conv(g: &ConvGemm<'_>) -> Option<Vec<i8>> {
    let k = g.kernel.0 * g.kernel.1 * g.in_dims[3];
    (offset_folds(g.input_offset) && g.packed.fits(g.out_dims[3], k, 0)).then(|| conv_dispatch(g))
}

/// Pixels whose accumulators are computed before they are requantized together: enough to
/// amortize each call, few enough that the block stays in the first-level cache.
const PIXEL_CHUNK: usize = 64;

#[inline(always)]
fn conv_body<const WIDE: bool>(g: &ConvGemm<'_>) -> Vec<i8> {
    let [n, h, w, c] = g.in_dims;
    let [_, oh, ow, oc] = g.out_dims;
    let (kh, kw) = g.kernel;
    let (kp, stride) = (g.packed.row_len(), g.packed.padded_rows());
    let (sh, sw) = g.win.stride;
    let (ph, pw) = g.win.padding;
    let (dh, dw) = g.win.dilation;
    let pixels = n * oh * ow;
    let mut out = vec![0i8; pixels * oc];
    // every input element widened with its offset once, however many windows read it
    let off = g.input_offset as i16;
    let xw: Vec<i16> = g.x.iter().map(|&v| i16::from(v) + off).collect();
    // a 1×1 window over every pixel in order whose rows need no padding: the input is the
    // operand matrix as it is
    let pointwise = (kh, kw, sh, sw, ph, pw) == (1, 1, 1, 1, 0, 0) && kp == c && (oh, ow) == (h, w);
    let mut cols = vec![0i16; if pointwise { 0 } else { PIXEL_CHUNK * kp }];
    let mut acc = vec![0i32; PIXEL_CHUNK * stride];
    let lanes = Lanes::new(g.rq, g.bias);
    for first in (0..pixels).step_by(PIXEL_CHUNK) {
        let count = PIXEL_CHUNK.min(pixels - first);
        let operands: &[i16] = if pointwise {
            &xw[first * kp..(first + count) * kp]
        } else {
            for (p, col) in cols.chunks_exact_mut(kp).take(count).enumerate() {
                let pix = first + p;
                let (b, y, xo) = (pix / (oh * ow), pix / ow % oh, pix % ow);
                let ix0 = (xo * sw) as isize - pw as isize;
                // the taps of one filter row read adjacent input pixels when undilated
                let whole_rows = dw == 1 && ix0 >= 0 && ix0 as usize + kw <= w;
                for ky in 0..kh {
                    let iy = (y * sh + ky * dh) as isize - ph as isize;
                    if whole_rows && iy >= 0 && iy < h as isize {
                        let base = ((b * h + iy as usize) * w + ix0 as usize) * c;
                        col[ky * kw * c..][..kw * c].copy_from_slice(&xw[base..base + kw * c]);
                        continue;
                    }
                    for kx in 0..kw {
                        let ix = (xo * sw + kx * dw) as isize - pw as isize;
                        let dst = &mut col[(ky * kw + kx) * c..][..c];
                        if iy < 0 || iy >= h as isize || ix < 0 || ix >= w as isize {
                            // a padded tap adds nothing, as CMSIS-NN skips (or zero-pads) it
                            dst.fill(0);
                        } else {
                            let base = ((b * h + iy as usize) * w + ix as usize) * c;
                            dst.copy_from_slice(&xw[base..base + c]);
                        }
                    }
                }
            }
            &cols
        };
        rows_times::<WIDE>(operands, count, g.packed, &mut acc);
        requantize_rows::<WIDE>(
            &acc,
            stride,
            &lanes,
            &mut out[first * oc..(first + count) * oc],
        );
    }
    out
}

/// A fully connected layer's accumulators: `rows` inputs of `ins` against `outs` filter rows
/// (`w`, `[outs, ins]`), `Σ (x + input_offset)(w + filter_offset)` per (row, out), before bias
/// and requantization.
pub struct FullyConnected<'a> {
    pub x: &'a [i8],
    pub w: &'a [i8],
    pub rows: usize,
    pub ins: usize,
    pub outs: usize,
    pub input_offset: i32,
    pub filter_offset: i32,
}

/// The accumulators of a fully connected layer, row-major `[rows, outs]`, from its filter
/// `packed` with the filter offset; `None` when an offset does not fold or `packed` is not this
/// call's filter (the caller runs the reference loop).
pub fn fully_connected(f: &FullyConnected<'_>, packed: &PackedRows) -> Option<Vec<i32>> {
    (offset_folds(f.input_offset)
        && offset_folds(f.filter_offset)
        && packed.fits(f.outs, f.ins, f.filter_offset))
    .then(|| fc_dispatch(f, packed))
}

#[inline(always)]
fn fc_body<const WIDE: bool>(f: &FullyConnected<'_>, packed: &PackedRows) -> Vec<i32> {
    let (k, outs) = (f.ins, f.outs);
    let (kp, stride) = (packed.row_len(), packed.padded_rows());
    let off = f.input_offset as i16;
    let mut cols = vec![0i16; f.rows * kp];
    for (dst, src) in cols.chunks_exact_mut(kp).zip(f.x.chunks_exact(k.max(1))) {
        for (d, &v) in dst.iter_mut().zip(src) {
            *d = i16::from(v) + off;
        }
    }
    let mut acc = vec![0i32; f.rows * stride];
    rows_times::<WIDE>(&cols, f.rows, packed, &mut acc);
    if stride == outs {
        return acc;
    }
    acc.chunks_exact(stride.max(1))
        .flat_map(|row| &row[..outs])
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::conv::{conv_s8, conv_s8_loops, fully_connected_loops, FilterForm};
    use super::super::test_support::{nhwc, out_hw, requant, window, Lcg};
    use super::*;
    use crate::kernels::simd::has_avx2;

    #[test]
    fn the_packed_gemm_equals_the_plain_sums_in_both_builds_for_every_block_and_tail() {
        let mut r = Lcg(3);
        for _ in 0..400 {
            // k = 0 too: an empty reduction is zero
            let (rows, k, outs) = (1 + r.below(9), r.below(70), 1 + r.below(40));
            let offset = r.offset();
            let (x, w) = (r.i8s(rows * k), r.i8s(outs * k));
            let packed = PackedRows::new(&w, outs, k, offset);
            let kp = packed.row_len();
            let mut cols = vec![0i16; rows * kp];
            for (dst, src) in cols
                .chunks_exact_mut(kp.max(1))
                .zip(x.chunks_exact(k.max(1)))
            {
                for (d, &v) in dst.iter_mut().zip(src) {
                    *d = i16::from(v);
                }
            }
            let stride = packed.padded_rows();
            let want: Vec<i32> = (0..rows * stride)
                .map(|i| {
                    let (row, o) = (i / stride, i % stride);
                    if o >= outs {
                        return 0;
                    }
                    (0..k).fold(0i32, |s, j| {
                        let wv = i32::from(w[o * k + j]) + offset;
                        s.wrapping_add(i32::from(x[row * k + j]).wrapping_mul(wv))
                    })
                })
                .collect();
            let mut got = vec![7i32; rows * stride];
            rows_times::<false>(&cols, rows, &packed, &mut got);
            assert_eq!(got, want, "plain build: rows {rows}, k {k}, outs {outs}");
            if has_avx2() {
                got.fill(7);
                rows_times::<true>(&cols, rows, &packed, &mut got);
                assert_eq!(got, want, "AVX2 build: rows {rows}, k {k}, outs {outs}");
            }
        }
    }

    #[test]
    fn the_pair_that_overflows_wraps_as_the_device_s_register() {
        // (−2^15)·(−2^15) twice is 2^31: one past i32::MAX, which the device's sum wraps
        let w = [i8::MIN, i8::MIN];
        let offset = -(MAX_FOLDED_OFFSET);
        let packed = PackedRows::new(&w, 1, 2, offset);
        let lowest = i16::from(i8::MIN) + offset as i16;
        let cols = [lowest, lowest];
        let want = (i32::from(lowest) * i32::from(lowest))
            .wrapping_add(i32::from(lowest) * i32::from(lowest));
        let mut got = vec![0i32; packed.padded_rows()];
        rows_times::<false>(&cols, 1, &packed, &mut got);
        assert_eq!(got[0], want);
        if has_avx2() {
            rows_times::<true>(&cols, 1, &packed, &mut got);
            assert_eq!(got[0], want);
        }
    }

    #[test]
    fn the_blocked_convolution_equals_cmsis_nn_s_loops_on_random_shapes() {
        let mut r = Lcg(7);
        let mut ran = 0;
        while ran < 300 {
            let [n, h, w, c] = nhwc(&mut r);
            let (mut kh, mut kw, oc) = (1 + r.below(4), 1 + r.below(4), 1 + r.below(40));
            let mut win = window(&mut r);
            if ran % 3 == 0 {
                // a pointwise convolution (the operands are the input as it is when c is even)
                (kh, kw) = (1, 1);
                win.stride = (1, 1);
                win.padding = (0, 0);
            }
            let Some((oh, ow)) = out_hw(h, w, (kh, kw), &win) else {
                continue;
            };
            let x = r.i8s(n * h * w * c);
            let wt = r.i8s(oc * kh * kw * c);
            let bias: Vec<i32> = (0..oc).map(|_| r.next() as i32 >> 12).collect();
            let bias = (r.below(2) == 0).then_some(bias.as_slice());
            let rq = requant(&mut r, oc);
            let off = r.offset();
            let args = ([n, h, w, c], [oc, kh, kw, c], [n, oh, ow, oc]);
            let form = FilterForm::of(&wt, args.1, c, None);
            let call = |form: &FilterForm| {
                conv_s8(
                    &x, args.0, &wt, args.1, form, bias, None, win, off, &rq, args.2,
                )
            };
            let slow = conv_s8_loops(&x, args.0, &wt, args.1, bias, None, win, off, &rq, args.2);
            assert_eq!(call(&form), slow, "shape {args:?}, offset {off}");
            // a kept form of another filter is not used: the call packs its own or loops
            let other = FilterForm::of(&wt[..wt.len() - 1], [oc, kh, kw, c - 1], c, None);
            assert_eq!(call(&other), slow, "mismatched form: {args:?}");
            let FilterForm::Packed(packed) = &form else {
                panic!("an ungrouped convolution packs its filter")
            };
            let g = ConvGemm {
                x: &x,
                in_dims: args.0,
                packed,
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
    fn the_blocked_fully_connected_equals_cmsis_nn_s_loop_and_refuses_what_does_not_fold() {
        let mut r = Lcg(13);
        for _ in 0..300 {
            let (rows, ins, outs) = (1 + r.below(9), 1 + r.below(70), 1 + r.below(30));
            let (x, w) = (r.i8s(rows * ins), r.i8s(outs * ins));
            let filter_offset = r.offset();
            let packed = PackedRows::new(&w, outs, ins, filter_offset);
            let fc = FullyConnected {
                x: &x,
                w: &w,
                rows,
                ins,
                outs,
                input_offset: r.offset(),
                filter_offset,
            };
            let want = fully_connected_loops(&fc);
            assert_eq!(fully_connected(&fc, &packed), Some(want.clone()));
            assert_eq!(fc_body::<false>(&fc, &packed), want);
            // packed with another offset: refused, the caller loops
            let stale = PackedRows::new(&w, outs, ins, filter_offset / 2 + 1);
            if filter_offset / 2 + 1 != filter_offset {
                assert_eq!(fully_connected(&fc, &stale), None);
            }
        }
        let (x, w) = ([1i8; 4], [1i8; 4]);
        let packed = PackedRows::new(&w, 1, 4, 0);
        let wide = FullyConnected {
            x: &x,
            w: &w,
            rows: 1,
            ins: 4,
            outs: 1,
            input_offset: MAX_FOLDED_OFFSET + 1,
            filter_offset: 0,
        };
        assert_eq!(fully_connected(&wide, &packed), None);
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
        let dims = ([1, 5, 5, 3], [4, 3, 3, 3], [1, 5, 5, 4]);
        let form = FilterForm::of(&wt, dims.1, 3, None);
        let FilterForm::Packed(packed) = &form else {
            panic!("an ungrouped convolution packs its filter")
        };
        let g = ConvGemm {
            x: &x,
            in_dims: dims.0,
            packed,
            kernel: (3, 3),
            bias: None,
            win,
            input_offset: i32::MAX,
            rq: &rq,
            out_dims: dims.2,
        };
        assert_eq!(conv(&g), None);
        let (fast, slow) = (
            conv_s8(
                &x,
                dims.0,
                &wt,
                dims.1,
                &form,
                None,
                None,
                win,
                i32::MAX,
                &rq,
                dims.2,
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
                dims.2,
            ),
        );
        assert_eq!(fast, slow);
    }
}

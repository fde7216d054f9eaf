//! One pixel's accumulators requantized to int8: `arm_nn_requantize` plus the output offset
//! and clamp, per output channel, as every CMSIS-NN convolution-like kernel finishes. Written
//! without branches so a row of channels vectorizes, and by hand for AVX2 (eight channels per
//! step); both equal [`Requant::apply`] for every input (tested on edge values).

use super::conv_params::Requant;

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

/// A requantization's per-channel terms, computed once per call: the bias, the left shift as
/// a multiplier (`1 << max(shift, 0)`, wrapping as the device's), the right shift, its mask
/// and half the mask (the rounding threshold of a non-negative result).
pub struct Lanes<'a> {
    rq: &'a Requant,
    bias: Vec<i32>,
    left: Vec<i32>,
    right: Vec<i32>,
    mask: Vec<i32>,
    half: Vec<i32>,
    /// Whether any channel shifts left (else the left multiply is skipped: it multiplies by 1).
    any_left: bool,
}

impl<'a> Lanes<'a> {
    /// The terms of `rq` with `bias` (one per channel, or none) added to each accumulator.
    pub fn new(rq: &'a Requant, bias: Option<&[i32]>) -> Self {
        let channels = rq.multipliers.len().min(rq.shifts.len());
        let right: Vec<i32> = rq.shifts[..channels]
            .iter()
            .map(|&s| 0i32.saturating_sub(s).clamp(0, 31))
            .collect();
        let mask: Vec<i32> = right.iter().map(|&r| ((1i64 << r) - 1) as i32).collect();
        let mut b = vec![0i32; channels];
        if let Some(bias) = bias {
            for (d, &v) in b.iter_mut().zip(bias) {
                *d = v;
            }
        }
        Lanes {
            rq,
            bias: b,
            left: rq.shifts[..channels]
                .iter()
                .map(|&s| 1i32.wrapping_shl(s.max(0) as u32))
                .collect(),
            half: mask.iter().map(|&m| m >> 1).collect(),
            any_left: rq.shifts[..channels].iter().any(|&s| s > 0),
            mask,
            right,
        }
    }

    /// The channels these terms cover.
    pub fn channels(&self) -> usize {
        self.bias.len()
    }
}

/// Pixels' channels requantized: for each pixel `p`, `out[p·oc + ch] =
/// rq.apply(acc[p·stride + ch] + bias[ch], ch)`, `oc` the channels of `lanes`, as many pixels
/// as `out` holds whole rows of (and `acc` holds). `WIDE` selects the AVX2 build
/// (`requantize_rows_avx2`); only code compiled with AVX2 enabled, on a CPU found to have it,
/// passes `true`.
#[inline(always)]
pub fn requantize_rows<const WIDE: bool>(
    acc: &[i32],
    stride: usize,
    lanes: &Lanes<'_>,
    out: &mut [i8],
) {
    let oc = lanes.channels();
    if oc == 0 {
        return;
    }
    assert!(
        stride >= oc,
        "a pixel's accumulators are {stride} apart, fewer than {oc}"
    );
    let in_acc = acc
        .len()
        .checked_sub(oc)
        .map_or(0, |rest| rest / stride + 1);
    let rows = (out.len() / oc).min(in_acc);
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        // SAFETY: `WIDE` is true only on a CPU found to have AVX2; the rows' ranges are asserted
        return unsafe { requantize_rows_avx2(acc, stride, rows, lanes, out) };
    }
    let rq = lanes.rq;
    for p in 0..rows {
        let (a, o) = (&acc[p * stride..][..oc], &mut out[p * oc..][..oc]);
        for (ch, (o, &a)) in o.iter_mut().zip(a).enumerate() {
            let a = a.wrapping_add(lanes.bias[ch]);
            *o = requantize_lane(a, rq.multipliers[ch], rq.shifts[ch], rq);
        }
    }
}

/// [`requantize_lane`] eight channels at a time: the 64-bit doubling high multiply on even
/// and odd lanes (`vpmuldq`), the rounding shift with per-lane shifts (`vpsravd`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn requantize_rows_avx2(
    acc: &[i32],
    stride: usize,
    rows: usize,
    lanes: &Lanes<'_>,
    out: &mut [i8],
) {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_add_epi64, _mm256_and_si256, _mm256_blend_epi32,
        _mm256_castsi256_si128, _mm256_cmpgt_epi32, _mm256_extracti128_si256, _mm256_loadu_si256,
        _mm256_max_epi32, _mm256_min_epi32, _mm256_mul_epi32, _mm256_mullo_epi32,
        _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_slli_epi64, _mm256_srai_epi32,
        _mm256_srav_epi32, _mm256_srli_epi64, _mm256_sub_epi32, _mm_packs_epi16, _mm_packs_epi32,
        _mm_storel_epi64,
    };
    let rq = lanes.rq;
    let oc = lanes.channels();
    assert!(
        [
            &rq.multipliers,
            &lanes.left,
            &lanes.right,
            &lanes.mask,
            &lanes.half
        ]
        .iter()
        .all(|v| v.len() >= oc)
            && out.len() >= rows * oc
            && (rows == 0 || (rows - 1) * stride + oc <= acc.len())
    );
    let load = |v: &[i32], at: usize| -> __m256i {
        // SAFETY: every caller passes a range `at..at + 8` inside `v` (asserted above)
        unsafe { _mm256_loadu_si256(v.as_ptr().add(at).cast()) }
    };
    let (offset, lo, hi) = (
        _mm256_set1_epi32(rq.output_offset),
        _mm256_set1_epi32(rq.act_min),
        _mm256_set1_epi32(rq.act_max),
    );
    let nudge = _mm256_set1_epi64x(1 << 30);
    let full = oc - oc % 8;
    for p in 0..rows {
        let (row, dst) = (p * stride, p * oc);
        for at in (0..full).step_by(8) {
            let a = _mm256_add_epi32(load(acc, row + at), load(&lanes.bias, at));
            let v = if lanes.any_left {
                _mm256_mullo_epi32(a, load(&lanes.left, at))
            } else {
                a
            };
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
            let remainder = _mm256_and_si256(high, load(&lanes.mask, at));
            let result = _mm256_srav_epi32(high, load(&lanes.right, at));
            let threshold =
                _mm256_sub_epi32(load(&lanes.half, at), _mm256_srai_epi32::<31>(result));
            let rounded = _mm256_sub_epi32(result, _mm256_cmpgt_epi32(remainder, threshold));
            let clamped =
                _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(rounded, offset), lo), hi);
            // the clamped lanes fit in i8 (act_min/act_max do): narrowed in registers, the two
            // 128-bit halves packed to 16 then 8 bits without saturating anything
            let halves = _mm_packs_epi32(
                _mm256_castsi256_si128(clamped),
                _mm256_extracti128_si256::<1>(clamped),
            );
            let bytes = _mm_packs_epi16(halves, halves);
            // SAFETY: `out[dst + at..dst + at + 8]` is in bounds (at + 8 ≤ oc, the rows asserted);
            // an unaligned 8-byte store
            unsafe { _mm_storel_epi64(out.as_mut_ptr().add(dst + at).cast(), bytes) };
        }
        for ch in full..oc {
            let a = acc[row + ch].wrapping_add(lanes.bias[ch]);
            out[dst + ch] = requantize_lane(a, rq.multipliers[ch], rq.shifts[ch], rq);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{requant, Lcg};
    use super::*;
    use crate::kernels::simd::has_avx2;

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
        // whole rows, through both builds (8 lanes and a scalar tail), with a bias and the
        // pixels' accumulators `stride` apart
        for _ in 0..2_000 {
            let (n, rows) = (1 + r.below(20), 1 + r.below(3));
            let stride = n + r.below(3);
            let pick = |r: &mut Lcg, e: &[i32], k: usize| {
                if r.below(4) == 0 {
                    e[r.below(e.len())]
                } else {
                    r.next() as i32 >> r.below(k)
                }
            };
            let acc: Vec<i32> = (0..rows * stride)
                .map(|_| pick(&mut r, &edges, 31))
                .collect();
            let bias: Vec<i32> = (0..n).map(|_| pick(&mut r, &edges, 31)).collect();
            let bias = (r.below(2) == 0).then_some(bias);
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
            let want: Vec<i8> = (0..rows * n)
                .map(|i| {
                    let (p, ch) = (i / n, i % n);
                    let b = bias.as_ref().map_or(0, |b| b[ch]);
                    rq.apply(acc[p * stride + ch].wrapping_add(b), ch)
                })
                .collect();
            let mut got = vec![0i8; rows * n];
            let lanes = Lanes::new(&rq, bias.as_deref());
            requantize_rows::<false>(&acc, stride, &lanes, &mut got);
            assert_eq!(got, want);
            if has_avx2() {
                got.fill(0);
                requantize_rows::<true>(&acc, stride, &lanes, &mut got);
                assert_eq!(got, want, "AVX2: acc {acc:?}, shifts {:?}", rq.shifts);
            }
        }
    }
}

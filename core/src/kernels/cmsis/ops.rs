//! `cortex_m::*` elementwise and data-movement kernels as ExecuTorch's Cortex-M backend runs them
//! on the device: quantize/dequantize (int8 and int16, Helium or scalar), add/mul (CMSIS-NN, with
//! the backend's channel broadcast), div, the lookup-table activation, minimum/maximum
//! (broadcasting), softmax, transpose and pad. Every kernel reads and writes tensors in the
//! order the program stores them ([`Ctx::stored`]), as the device does, so a program whose
//! layout the kernel misreads computes here what it computes on the board.

use super::arith::{requantize, softmax_row_s8};
use crate::kernels::ctx::{f32b, i8b, Ctx};
use crate::kernels::layout::{self, broadcast_index, broadcast_shape, dims4, is_channels_last};
use crate::kernels::portable::check_perm;
use crate::kernels::quantized::quantize_value;
use crate::kernels::simd::dispatch;
use crate::kernels::value::Buf;
use crate::kernels::RuntimeError;

/// The out argument of an out-variant kernel call (the one before the returned value).
pub(crate) fn out_of(ctx: &Ctx<'_>, args: &[usize]) -> Result<usize, RuntimeError> {
    args.len()
        .checked_sub(2)
        .map(|i| args[i])
        .ok_or_else(|| ctx.bad("no out argument"))
}

/// An int argument narrowed to the 32 bits the device kernels take.
pub(crate) fn int32(ctx: &Ctx<'_>, args: &[usize], k: usize) -> Result<i32, RuntimeError> {
    let v = ctx.int(args, k)?;
    i32::try_from(v).map_err(|_| ctx.bad(format!("argument {k} = {v} does not fit in 32 bits")))
}

/// `quantize_per_tensor.out(input, scale, zero_point, quant_min, quant_max, dtype, out)` to
/// int8 or int16 as the backend's C++ kernel computes it on the target core: Helium cores run
/// full blocks (16 elements for int8, 8 for int16) through [`quantize_block_mve`] /
/// [`quantize_block_mve_s16`], the rest (and every element on scalar cores) through
/// `nearbyint(x · (1/scale))`.
pub fn quantize(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.stored(args, 0)?;
    let inv = 1.0f32 / ctx.double(args, 1)? as f32;
    let zp = int32(ctx, args, 2)?;
    let (qmin, qmax) = ctx.range(int32(ctx, args, 3)?, int32(ctx, args, 4)?)?;
    let x = f32b(ctx, &input.buf)?;
    let o = out_of(ctx, args)?;
    let mve = ctx.device.target.has_helium();
    let out = match ctx.out_like(o)? {
        Buf::I8(_) => {
            let blocks = if mve { x.len() / 16 * 16 } else { 0 };
            let mut q = quantize_blocks_mve(&x[..blocks], inv, zp, qmin, qmax);
            q.extend(quantize_values(&x[blocks..], inv, zp, qmin, qmax));
            Buf::I8(q)
        }
        Buf::I16(_) => {
            let blocks = if mve { x.len() / 8 * 8 } else { 0 };
            let mut q: Vec<i16> = x[..blocks]
                .iter()
                .map(|&v| quantize_block_mve_s16(v, inv, zp, qmin, qmax))
                .collect();
            q.extend(
                x[blocks..]
                    .iter()
                    .map(|&v| quantize_value(v, inv, zp, qmin, qmax) as i16),
            );
            Buf::I16(q)
        }
        _ => return Err(ctx.bad("quantize to int8 or int16 only")),
    };
    ctx.write_stored(o, out)
}

const MAGIC: f32 = 12_582_912.0; // 1.5 · 2^23

/// The int32 the Helium quantize loop derives from one element: `x·inv + 1.5·2^23` as one fused
/// multiply-add (rounds to nearest, ties to even, in the float's low mantissa bits), the float's
/// bits minus the constant's plus the zero point.
#[inline(always)]
fn mve_round(x: f32, inv: f32, zp: i32) -> i32 {
    let rounded = x.mul_add(inv, MAGIC);
    (rounded.to_bits() as i32).wrapping_sub((MAGIC.to_bits() as i32).wrapping_sub(zp))
}

/// One element of the Helium/MVE int8 quantize loop: `mve_round`, narrowed to int16 *without*
/// saturation, clamped to `[qmin, qmax]`, narrowed to int8. Out-of-range inputs therefore wrap
/// where the scalar kernel saturates.
#[inline(always)]
pub fn quantize_block_mve(x: f32, inv: f32, zp: i32, qmin: i32, qmax: i32) -> i8 {
    let q16 = mve_round(x, inv, zp) as i16; // vmovnb: keeps the low half
    i32::from(q16).clamp(qmin, qmax) as i8
}

dispatch!(
    /// [`quantize_block_mve`] over a slice, through a build with the CPU's fused multiply-add
    /// where it has one (one instruction instead of a library call; the same exact result).
    quantize_blocks_mve,
    quantize_blocks_mve_fma,
    quantize_blocks_mve_body,
    (x: &[f32], inv: f32, zp: i32, qmin: i32, qmax: i32),
    Vec<i8>,
    "fma"
);

#[inline(always)]
fn quantize_blocks_mve_body<const WIDE: bool>(
    x: &[f32],
    inv: f32,
    zp: i32,
    qmin: i32,
    qmax: i32,
) -> Vec<i8> {
    // a plain loop, not an iterator's `collect`: that would be compiled outside this function,
    // without its target features
    let mut out = vec![0i8; x.len()];
    for (o, &v) in out.iter_mut().zip(x) {
        *o = quantize_block_mve(v, inv, zp, qmin, qmax);
    }
    out
}

dispatch!(
    /// [`quantize_value`] over a slice to int8, through a build with SSE4.1 where the CPU has it
    /// (its rounding instruction rounds ties to even in one step; a library call otherwise: the
    /// same exact result).
    quantize_values,
    quantize_values_sse41,
    quantize_values_body,
    (x: &[f32], inv: f32, zp: i32, qmin: i32, qmax: i32),
    Vec<i8>,
    "sse4.1"
);

#[inline(always)]
fn quantize_values_body<const WIDE: bool>(
    x: &[f32],
    inv: f32,
    zp: i32,
    qmin: i32,
    qmax: i32,
) -> Vec<i8> {
    // a plain loop, as in `quantize_blocks_mve_body`
    let mut out = vec![0i8; x.len()];
    for (o, &v) in out.iter_mut().zip(x) {
        *o = quantize_value(v, inv, zp, qmin, qmax) as i8;
    }
    out
}

/// One element of the Helium/MVE int16 quantize loop: `mve_round` clamped in 32 bits.
pub fn quantize_block_mve_s16(x: f32, inv: f32, zp: i32, qmin: i32, qmax: i32) -> i16 {
    mve_round(x, inv, zp).clamp(qmin, qmax) as i16
}

/// `dequantize_per_tensor.out(input, scale, zero_point, quant_min, quant_max, dtype, out)`
/// from int8 or int16: `(q − zero_point) · scale` in float.
pub fn dequantize(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.stored(args, 0)?;
    let scale = ctx.double(args, 1)? as f32;
    let zp = int32(ctx, args, 2)?;
    let f = |q: i32| q.wrapping_sub(zp) as f32 * scale;
    let out: Vec<f32> = match &input.buf {
        Buf::I8(v) => v.iter().map(|&q| f(i32::from(q))).collect(),
        Buf::I16(v) => v.iter().map(|&q| f(i32::from(q))).collect(),
        _ => return Err(ctx.bad("dequantize from int8 or int16 only")),
    };
    let o = out_of(ctx, args)?;
    ctx.write_stored(o, Buf::F32(out))
}

/// ExecuTorch's `is_channel_broadcast`: two 4-D tensors with the same channel count, one of
/// which holds nothing but its channels.
fn is_channel_broadcast(a: &[usize], b: &[usize]) -> bool {
    a.len() == 4
        && b.len() == 4
        && a[1] == b[1]
        && (a.iter().product::<usize>() == a[1] || b.iter().product::<usize>() == b[1])
}

/// Runs `f(big, small)` over the operands as the backend's add/mul do: the same sizes
/// elementwise, or (channel broadcast) the larger channels-last tensor in runs of its channel
/// count against the channel vector. Returns the output in storage order; `swapped` tells `f`
/// that the operands were exchanged (their parameters go with them).
fn broadcast_pairs(
    ctx: &mut Ctx<'_>,
    args: &[usize],
    ka: usize,
    kb: usize,
    f: impl Fn(i8, i8, bool) -> i8,
) -> Result<Vec<i8>, RuntimeError> {
    let (a, b) = (ctx.stored(args, ka)?, ctx.stored(args, kb)?);
    let (av, bv) = (i8b(ctx, &a.buf)?, i8b(ctx, &b.buf)?);
    if a.shape == b.shape {
        return Ok(av.iter().zip(bv).map(|(&x, &y)| f(x, y, false)).collect());
    }
    if !is_channel_broadcast(&a.shape, &b.shape) {
        return Err(ctx.bad(format!(
            "sizes {:?} and {:?} differ and are no channel broadcast (the backend refuses them)",
            a.shape, b.shape
        )));
    }
    let swapped = av.len() < bv.len();
    let (big, small, big_t) = if swapped { (bv, av, &b) } else { (av, bv, &a) };
    if !is_channels_last(&big_t.shape, &big_t.dim_order) {
        return Err(
            ctx.bad("channel broadcast needs a channels-last tensor (the backend refuses it)")
        );
    }
    let c = a.shape[1].max(1);
    Ok(big
        .chunks(c)
        .flat_map(|run| run.iter().zip(small).map(|(&x, &y)| f(x, y, swapped)))
        .collect())
}

/// `quantized_add.out(a, a_zp, a_mult, a_shift, b, b_zp, b_mult, b_shift, out_zp, out_mult,
/// out_shift, act_min, act_max, out)`: `arm_elementwise_add_s8` (inputs shifted left by 20),
/// with the backend's channel broadcast.
pub fn add(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let p = |k| int32(ctx, args, k);
    let (azp, am, ash, bzp, bm, bsh) = (p(1)?, p(2)?, p(3)?, p(5)?, p(6)?, p(7)?);
    let (ozp, om, osh) = (p(8)?, p(9)?, p(10)?);
    let (lo, hi) = if args.len() >= 15 {
        ctx.range(p(11)?, p(12)?)?
    } else {
        (-128, 127)
    };
    let scaled = |x: i8, zp: i32, m: i32, sh: i32| {
        requantize(i32::from(x).wrapping_sub(zp).wrapping_shl(20), m, sh)
    };
    let out = broadcast_pairs(ctx, args, 0, 4, |x, y, swapped| {
        let (x, y) = if swapped { (y, x) } else { (x, y) };
        let sum = scaled(x, azp, am, ash).wrapping_add(scaled(y, bzp, bm, bsh));
        requantize(sum, om, osh).wrapping_add(ozp).clamp(lo, hi) as i8
    })?;
    let o = out_of(ctx, args)?;
    ctx.write_stored(o, Buf::I8(out))
}

/// `quantized_mul.out(a, a_zp, b, b_zp, out_zp, out_mult, out_shift, out)`:
/// `arm_elementwise_mul_s8`, with the backend's channel broadcast.
pub fn mul(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let p = |k| int32(ctx, args, k);
    let (azp, bzp, ozp, om, osh) = (p(1)?, p(3)?, p(4)?, p(5)?, p(6)?);
    let out = broadcast_pairs(ctx, args, 0, 2, |x, y, swapped| {
        let (x, y) = if swapped { (y, x) } else { (x, y) };
        let prod = i32::from(x)
            .wrapping_sub(azp)
            .wrapping_mul(i32::from(y).wrapping_sub(bzp));
        requantize(prod, om, osh).wrapping_add(ozp).clamp(-128, 127) as i8
    })?;
    let o = out_of(ctx, args)?;
    ctx.write_stored(o, Buf::I8(out))
}

/// `quantized_div.out(a, a_zp, b, b_zp, out_zp, effective_scale, out)` for int8 and int16: the
/// backend's float quotient `round((a−a_zp)/(b−b_zp) · scale) + out_zp` (0 where the divisor is
/// at its zero point), saturated to the type.
pub fn div(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let (a, b) = (ctx.stored(args, 0)?, ctx.stored(args, 2)?);
    if a.shape != b.shape {
        return Err(ctx.bad(format!(
            "sizes {:?} and {:?} differ (the backend divides same-size tensors only)",
            a.shape, b.shape
        )));
    }
    let (azp, bzp, ozp) = (
        int32(ctx, args, 1)?,
        int32(ctx, args, 3)?,
        int32(ctx, args, 4)?,
    );
    let scale = ctx.double(args, 5)? as f32;
    let quotient = |x: i32, y: i32, lo: f32, hi: f32| {
        let (num, den) = (x.wrapping_sub(azp), y.wrapping_sub(bzp));
        let q = if den != 0 {
            num as f32 / den as f32
        } else {
            0.0
        };
        ((q * scale).round() + ozp as f32).clamp(lo, hi)
    };
    let out = match (&a.buf, &b.buf) {
        (Buf::I8(x), Buf::I8(y)) => Buf::I8(
            x.iter()
                .zip(y)
                .map(|(&p, &q)| quotient(p.into(), q.into(), -128.0, 127.0) as i8)
                .collect(),
        ),
        (Buf::I16(x), Buf::I16(y)) => Buf::I16(
            x.iter()
                .zip(y)
                .map(|(&p, &q)| quotient(p.into(), q.into(), -32768.0, 32767.0) as i16)
                .collect(),
        ),
        _ => return Err(ctx.bad("division of int8 or int16 tensors of one type only")),
    };
    let o = out_of(ctx, args)?;
    ctx.write_stored(o, out)
}

/// `quantized_activation.out(input, lut[256], out)`: `lut[input + 128]` (sigmoid, tanh, silu,
/// gelu, ... tabulated ahead of time).
pub fn activation(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.stored(args, 0)?;
    let lut = ctx.stored(args, 1)?;
    let lut = i8b(ctx, &lut.buf)?;
    if lut.len() != 256 {
        return Err(ctx.bad(format!(
            "the lookup table has {} entries, not 256",
            lut.len()
        )));
    }
    let out: Vec<i8> = i8b(ctx, &input.buf)?
        .iter()
        .map(|&x| lut[usize::from((x as u8).wrapping_add(128))])
        .collect();
    let o = out_of(ctx, args)?;
    ctx.write_stored(o, Buf::I8(out))
}

/// `minimum.out(a, b, out)` / `maximum.out(a, b, out)`: `arm_minimum_s8` / `arm_maximum_s8`
/// with broadcasting over the sizes right-aligned to 4-D.
pub fn min_max(ctx: &mut Ctx<'_>, args: &[usize], max: bool) -> Result<(), RuntimeError> {
    let (a, b) = (ctx.stored(args, 0)?, ctx.stored(args, 1)?);
    let (ad, bd) = match (dims4(&a.shape), dims4(&b.shape)) {
        (Some(x), Some(y)) => (x, y),
        _ => return Err(ctx.bad("tensors of more than 4 dims")),
    };
    let od = broadcast_shape(&ad, &bd)
        .ok_or_else(|| ctx.bad(format!("{:?} and {:?} do not broadcast", a.shape, b.shape)))?;
    ctx.out_len(&od)?;
    let (av, bv) = (i8b(ctx, &a.buf)?, i8b(ctx, &b.buf)?);
    let out: Vec<i8> = broadcast_index(&ad, &od)
        .into_iter()
        .zip(broadcast_index(&bd, &od))
        .map(|(i, j)| {
            let (x, y) = (av[i], bv[j]);
            if max {
                x.max(y)
            } else {
                x.min(y)
            }
        })
        .collect();
    let o = out_of(ctx, args)?;
    ctx.write_stored(o, Buf::I8(out))
}

/// `softmax.out(input, dim, input_zero_point, output_zero_point, input_multiplier,
/// input_left_shift, diff_min, out)`: `arm_softmax_s8` over rows of the last *logical* dim's
/// size taken from memory. For a channels-last 4-D tensor that normalises over the wrong
/// elements, as ExecuTorch 1.5.1's kernel does on the board.
pub fn softmax(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.stored(args, 0)?;
    let rank = input.shape.len() as i64;
    let dim = ctx.int(args, 1)?;
    if dim != rank - 1 && dim != -1 {
        return Err(ctx.bad(format!(
            "softmax over dim {dim} of a rank-{rank} tensor: the kernel works on the last dimension"
        )));
    }
    let (mult, shift, diff_min) = (
        int32(ctx, args, 4)?,
        int32(ctx, args, 5)?,
        int32(ctx, args, 6)?,
    );
    let row = *input.shape.last().ok_or_else(|| ctx.bad("scalar input"))?;
    let x = i8b(ctx, &input.buf)?;
    let mut out = vec![0i8; x.len()];
    if row > 0 {
        for (xi, oi) in x.chunks(row).zip(out.chunks_mut(row)) {
            softmax_row_s8(xi, mult, shift, diff_min, oi);
        }
    }
    let o = out_of(ctx, args)?;
    ctx.write_stored(o, Buf::I8(out))
}

/// `transpose.out(input, perm, out)`: `arm_transpose_s8` over memory with the logical sizes.
pub fn transpose(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.stored(args, 0)?;
    if input.shape.is_empty() || input.shape.len() > 4 {
        return Err(ctx.bad(format!("transpose of a rank-{} tensor", input.shape.len())));
    }
    let perm = check_perm(ctx, &ctx.ints(args, 1)?, input.shape.len())?;
    ctx.charge(&[input.buf.len(), input.shape.len()])?;
    let data = layout::permute(i8b(ctx, &input.buf)?, &input.shape, &perm);
    let o = out_of(ctx, args)?;
    ctx.write_stored(o, Buf::I8(data))
}

/// `pad.out(input, pre_pad[4], post_pad[4], pad_value, out)`: `arm_pad_s8` over memory. The pads
/// are in storage order (the AOT pass permutes them); the sizes are the logical ones, permuted
/// to NHWC when the tensor counts as channels-last, right-aligned to 4-D.
pub fn pad(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.stored(args, 0)?;
    let (pre, post) = (ctx.ints(args, 1)?, ctx.ints(args, 2)?);
    let value = ctx.int(args, 3)? as i8;
    let rank = input.shape.len();
    if rank == 0 || rank > 4 || pre.len() != 4 || post.len() != 4 {
        return Err(ctx.bad(format!("pads {pre:?}/{post:?} for a rank-{rank} tensor")));
    }
    let pads: Vec<usize> = pre
        .iter()
        .chain(&post)
        .map(|&p| usize::try_from(p).map_err(|_| ctx.bad(format!("negative pad {p}"))))
        .collect::<Result<_, _>>()?;
    let mut dims = [1usize; 4];
    let nhwc = is_channels_last(&input.shape, &input.dim_order);
    let offset = 4 - rank;
    for i in 0..rank {
        dims[offset + i] = if nhwc {
            input.shape[[0, 2, 3, 1][offset + i]]
        } else {
            input.shape[i]
        };
    }
    let out_dims: Vec<usize> = (0..4)
        .map(|d| dims[d].saturating_add(pads[d]).saturating_add(pads[4 + d]))
        .collect();
    let x = i8b(ctx, &input.buf)?;
    let mut out = vec![value; ctx.out_len(&out_dims)?];
    let mut idx = [0usize; 4];
    for &v in x {
        let at = (0..4).fold(0usize, |acc, d| acc * out_dims[d] + idx[d] + pads[d]);
        out[at] = v;
        for d in (0..4).rev() {
            idx[d] += 1;
            if idx[d] < dims[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    let o = out_of(ctx, args)?;
    ctx.write_stored(o, Buf::I8(out))
}

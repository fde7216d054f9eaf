//! `cortex_m::*` kernels as ExecuTorch's Cortex-M backend runs them on the device: CMSIS-NN
//! convolution, depthwise convolution, fully connected, average/max pooling, softmax and
//! elementwise add/mul in integer arithmetic ([`super::cmsis`]); quantize/dequantize as the
//! backend's C++ kernels; transpose and pad as data movement. Tensors are NHWC as stored.

use super::cmsis::{average_round_away, requantize, softmax_row_s8};
use super::kernel::{f32s, i32s, i8s, Ctx};
use super::portable::{check_perm, permute};
use super::quantized::quantize_value;
use super::value::Buf;
use super::RuntimeError;

fn out_of(ctx: &Ctx<'_>, args: &[usize]) -> Result<usize, RuntimeError> {
    args.len()
        .checked_sub(2)
        .map(|i| args[i])
        .ok_or_else(|| ctx.bad("no out argument"))
}

fn nhwc(ctx: &Ctx<'_>, shape: &[usize], what: &str) -> Result<[usize; 4], RuntimeError> {
    match shape {
        [a, b, c, d] => Ok([*a, *b, *c, *d]),
        _ => Err(ctx.bad(format!("{what} must be 4-D NHWC, is {shape:?}"))),
    }
}

/// One multiply-accumulate step of the CMSIS-NN int8 kernels, `acc + (x + x_off)·(w + w_off)`,
/// in the wrapping 32-bit arithmetic of the device's registers.
#[inline]
fn mac(acc: i32, x: i8, x_off: i32, w: i8, w_off: i32) -> i32 {
    let (x, w) = (
        i32::from(x).wrapping_add(x_off),
        i32::from(w).wrapping_add(w_off),
    );
    acc.wrapping_add(x.wrapping_mul(w))
}

fn pair(v: &[i64], i: usize) -> usize {
    v.get(i).or(v.first()).copied().unwrap_or(1).max(0) as usize
}

/// `quantize_per_tensor.out(input, scale, zero_point, quant_min, quant_max, dtype, out)` as
/// the backend's C++ kernel computes it on the target core (see [`quantize_block_mve`]).
pub fn quantize(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let inv = 1.0f32 / ctx.double(args, 1)? as f32;
    let zp = ctx.int(args, 2)? as i32;
    let (qmin, qmax) = ctx.range(ctx.int(args, 3)? as i32, ctx.int(args, 4)? as i32)?;
    let x = f32s(ctx, input)?;
    let mve = ctx.target == super::Target::CortexM55;
    let blocks = if mve { x.len() / 16 * 16 } else { 0 };
    let mut q: Vec<i8> = x[..blocks]
        .iter()
        .map(|&v| quantize_block_mve(v, inv, zp, qmin, qmax))
        .collect();
    q.extend(
        x[blocks..]
            .iter()
            .map(|&v| quantize_value(v, inv, zp, qmin, qmax) as i8),
    );
    let shape = input.shape.clone();
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, Buf::I8(q))
}

/// One element of the Helium/MVE quantize loop: `x·inv + 1.5·2^23` as one fused multiply-add
/// (rounds to nearest, ties to even, in the float's low mantissa bits), the integer read from
/// the float's bits minus the constant's plus the zero point, narrowed to int16 *without*
/// saturation, clamped to `[qmin, qmax]`, narrowed to int8. Out-of-range inputs therefore wrap
/// where the scalar kernel saturates.
pub fn quantize_block_mve(x: f32, inv: f32, zp: i32, qmin: i32, qmax: i32) -> i8 {
    const ROUNDING: f32 = 12_582_912.0; // 1.5 · 2^23
    let rounded = x.mul_add(inv, ROUNDING);
    let q32 = (rounded.to_bits() as i32).wrapping_sub((ROUNDING.to_bits() as i32).wrapping_sub(zp));
    let q16 = q32 as i16; // vmovnb: keeps the low half
    i32::from(q16).clamp(qmin, qmax) as i8
}

/// `dequantize_per_tensor.out(input, scale, zero_point, quant_min, quant_max, dtype, out)`:
/// `(q − zero_point) · scale` in float.
pub fn dequantize(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let scale = ctx.double(args, 1)? as f32;
    let zp = ctx.int(args, 2)? as i32;
    let out: Vec<f32> = i8s(ctx, input)?
        .iter()
        .map(|&q| i32::from(q).wrapping_sub(zp) as f32 * scale)
        .collect();
    let shape = input.shape.clone();
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, Buf::F32(out))
}

/// `transpose.out(input, perm, out)`.
pub fn transpose(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let perm = check_perm(ctx, &ctx.ints(args, 1)?, input.shape.len())?;
    let (data, shape) = permute(i8s(ctx, input)?, &input.shape, &perm);
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, Buf::I8(data))
}

/// `pad.out(input, pre_pad[4], post_pad[4], pad_value, out)`: constant padding of the stored
/// dims (leading dims of a lower-rank tensor count as size 1).
pub fn pad(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let (pre, post) = (ctx.ints(args, 1)?, ctx.ints(args, 2)?);
    let value = ctx.int(args, 3)? as i8;
    let rank = input.shape.len();
    if rank > 4 || pre.len() != 4 || post.len() != 4 || pre.iter().chain(&post).any(|&p| p < 0) {
        return Err(ctx.bad(format!("pads {pre:?}/{post:?} for a rank-{rank} tensor")));
    }
    let mut dims = vec![1usize; 4 - rank];
    dims.extend(&input.shape);
    let out_dims: Vec<usize> = (0..4)
        .map(|d| {
            dims[d]
                .saturating_add(pre[d] as usize)
                .saturating_add(post[d] as usize)
        })
        .collect();
    let x = i8s(ctx, input)?;
    let mut out = vec![value; ctx.out_len(&out_dims)?];
    let mut idx = [0usize; 4];
    for &v in x {
        let o = ((((idx[0] + pre[0] as usize) * out_dims[1] + idx[1] + pre[1] as usize)
            * out_dims[2]
            + idx[2]
            + pre[2] as usize)
            * out_dims[3])
            + idx[3]
            + pre[3] as usize;
        out[o] = v;
        for d in (0..4).rev() {
            idx[d] += 1;
            if idx[d] < dims[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    let shape = out_dims[4 - rank..].to_vec();
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, Buf::I8(out))
}

/// `quantized_conv2d_nhwc.out(input, weight[OHWI], bias?, stride, padding, dilation,
/// input_offset, output_offset, multipliers, shifts, act_min, act_max, scratch, out)` and
/// `quantized_depthwise_conv2d_nhwc.out(input, weight[1,H,W,C·m], bias?, stride, padding,
/// dilation, depth_multiplier, input_offset, output_offset, multipliers, shifts, act_min,
/// act_max, scratch, out)`: `arm_convolve_s8` / `arm_depthwise_conv_s8`.
pub fn conv2d_nhwc(ctx: &mut Ctx<'_>, args: &[usize], depthwise: bool) -> Result<(), RuntimeError> {
    let k0 = usize::from(depthwise); // depthwise has depth_multiplier before the offsets
    let input = ctx.tensor(args, 0)?;
    let weight = ctx.tensor(args, 1)?;
    let bias = ctx.opt_tensor(args, 2)?.map(|b| i32s(ctx, b)).transpose()?;
    let (stride, padding, dilation) = (ctx.ints(args, 3)?, ctx.ints(args, 4)?, ctx.ints(args, 5)?);
    let depth_mult = if depthwise {
        ctx.int(args, 6)?.max(1) as usize
    } else {
        1
    };
    let in_off = ctx.int(args, 6 + k0)? as i32;
    let out_off = ctx.int(args, 7 + k0)? as i32;
    let mults = i32s(ctx, ctx.tensor(args, 8 + k0)?)?;
    let shifts = i32s(ctx, ctx.tensor(args, 9 + k0)?)?;
    let (act_min, act_max) = ctx.range(
        ctx.int(args, 10 + k0)? as i32,
        ctx.int(args, 11 + k0)? as i32,
    )?;
    let [n, h, w, c] = nhwc(ctx, &input.shape, "input")?;
    let [wo, kh, kw, wi] = nhwc(ctx, &weight.shape, "weight")?;
    let o = out_of(ctx, args)?;
    let out_shape = ctx.out_shape(o)?;
    let [_, oh, ow, oc] = nhwc(ctx, &out_shape, "out")?;
    let (sh, sw, ph, pw, dh, dw) = (
        pair(&stride, 0),
        pair(&stride, 1),
        pair(&padding, 0),
        pair(&padding, 1),
        pair(&dilation, 0),
        pair(&dilation, 1),
    );
    let groups = if depthwise { c } else { c / wi.max(1) };
    let fits = if depthwise {
        wo == 1 && wi == c * depth_mult && oc == wi
    } else {
        wi * groups == c && wo == oc && oc % groups.max(1) == 0
    };
    if !fits
        || mults.len() != oc
        || shifts.len() != oc
        || bias.as_ref().is_some_and(|b| b.len() != oc)
    {
        return Err(ctx.bad(format!(
            "input {:?}, weight {:?}, out {:?} and per-channel params do not fit",
            input.shape, weight.shape, out_shape
        )));
    }
    let x = i8s(ctx, input)?;
    let wt = i8s(ctx, weight)?;
    let mut out = vec![0i8; ctx.out_len(&[n, oh, ow, oc])?];
    let ocg = oc / groups.max(1);
    for b in 0..n {
        for y in 0..oh {
            for xo in 0..ow {
                for ch in 0..oc {
                    let mut acc: i32 = bias.as_ref().map_or(0, |bv| bv[ch]);
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
                            if depthwise {
                                let ic = ch / depth_mult;
                                acc =
                                    mac(acc, x[base + ic], in_off, wt[(ky * kw + kx) * oc + ch], 0);
                            } else {
                                let g = ch / ocg;
                                let wbase = ((ch * kh + ky) * kw + kx) * wi;
                                for ic in 0..wi {
                                    acc =
                                        mac(acc, x[base + g * wi + ic], in_off, wt[wbase + ic], 0);
                                }
                            }
                        }
                    }
                    let v = requantize(acc, mults[ch], shifts[ch]).wrapping_add(out_off);
                    out[((b * oh + y) * ow + xo) * oc + ch] = v.clamp(act_min, act_max) as i8;
                }
            }
        }
    }
    ctx.write(o, out_shape, Buf::I8(out))
}

/// `quantized_linear.out(input, weights[out,in], bias?, kernel_sum?, input_offset,
/// filter_offset, output_offset, multipliers, shifts, act_max, act_min, out)`:
/// `arm_fully_connected_s8`. With `kernel_sum` (the MVE path) the accumulator is
/// `Σ x·w + filter_offset·Σ x + kernel_sum`; without it, `Σ (x+input_offset)(w+filter_offset) + bias`.
pub fn linear(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let weight = ctx.tensor(args, 1)?;
    let bias = ctx.opt_tensor(args, 2)?.map(|t| i32s(ctx, t)).transpose()?;
    let kernel_sum = ctx.opt_tensor(args, 3)?.map(|t| i32s(ctx, t)).transpose()?;
    let in_off = ctx.int(args, 4)? as i32;
    let f_off = ctx.int(args, 5)? as i32;
    let out_off = ctx.int(args, 6)? as i32;
    let mults = ctx.ints(args, 7)?;
    let shifts = ctx.ints(args, 8)?;
    let (act_max, act_min) = (ctx.int(args, 9)? as i32, ctx.int(args, 10)? as i32);
    let (act_min, act_max) = ctx.range(act_min, act_max)?;
    let [outs, ins] = match weight.shape.as_slice() {
        [a, b] => [*a, *b],
        s => return Err(ctx.bad(format!("weights must be 2-D, are {s:?}"))),
    };
    let x = i8s(ctx, input)?;
    if ins == 0
        || x.len() % ins != 0
        || mults.is_empty()
        || mults.len() != shifts.len()
        || (mults.len() != 1 && mults.len() != outs)
    {
        return Err(ctx.bad(format!(
            "input {:?} does not fit weights {:?}",
            input.shape, weight.shape
        )));
    }
    let w = i8s(ctx, weight)?;
    let rows = x.len() / ins;
    let mut out = vec![0i8; ctx.out_len(&[rows, outs])?];
    for r in 0..rows {
        let xr = &x[r * ins..(r + 1) * ins];
        let xsum: i32 = xr.iter().fold(0i32, |s, &v| s.wrapping_add(i32::from(v)));
        for o in 0..outs {
            let wr = &w[o * ins..(o + 1) * ins];
            let acc = match &kernel_sum {
                Some(ks) => {
                    let dot: i32 = xr.iter().zip(wr).fold(0i32, |s, (&a, &b)| {
                        s.wrapping_add(i32::from(a) * i32::from(b))
                    });
                    dot.wrapping_add(f_off.wrapping_mul(xsum))
                        .wrapping_add(ks.get(o).copied().unwrap_or(0))
                }
                None => {
                    let dot: i32 = xr
                        .iter()
                        .zip(wr)
                        .fold(0i32, |s, (&a, &b)| mac(s, a, in_off, b, f_off));
                    dot.wrapping_add(bias.as_ref().and_then(|b| b.get(o)).copied().unwrap_or(0))
                }
            };
            let k = if mults.len() == 1 { 0 } else { o };
            let v = requantize(acc, mults[k] as i32, shifts[k] as i32).wrapping_add(out_off);
            out[r * outs + o] = v.clamp(act_min, act_max) as i8;
        }
    }
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    ctx.write(o, shape, Buf::I8(out))
}

fn pool_geometry(
    ctx: &Ctx<'_>,
    args: &[usize],
) -> Result<(usize, usize, usize, usize, usize, usize), RuntimeError> {
    let (k, s, p) = (ctx.ints(args, 1)?, ctx.ints(args, 2)?, ctx.ints(args, 3)?);
    Ok((
        pair(&k, 0),
        pair(&k, 1),
        pair(&s, 0).max(1),
        pair(&s, 1).max(1),
        p.first().map_or(0, |&v| v.max(0) as usize),
        p.get(1).or(p.first()).map_or(0, |&v| v.max(0) as usize),
    ))
}

/// Applies `f(window values) -> output` over NHWC pooling windows clipped to the input.
fn pool(ctx: &mut Ctx<'_>, args: &[usize], f: impl Fn(&[i32]) -> i32) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let (kh, kw, sh, sw, ph, pw) = pool_geometry(ctx, args)?;
    let [n, h, w, c] = nhwc(ctx, &input.shape, "input")?;
    let o = out_of(ctx, args)?;
    let out_shape = ctx.out_shape(o)?;
    let [_, oh, ow, oc] = nhwc(ctx, &out_shape, "out")?;
    if oc != c {
        return Err(ctx.bad("pooling changes no channel count"));
    }
    let x = i8s(ctx, input)?;
    let mut out = vec![0i8; ctx.out_len(&[n, oh, ow, c])?];
    let mut window = Vec::with_capacity(kh * kw);
    for b in 0..n {
        for y in 0..oh {
            for xo in 0..ow {
                let y0 = (y * sh) as isize - ph as isize;
                let x0 = (xo * sw) as isize - pw as isize;
                for ch in 0..c {
                    window.clear();
                    for iy in y0.max(0)..(y0 + kh as isize).min(h as isize) {
                        for ix in x0.max(0)..(x0 + kw as isize).min(w as isize) {
                            window.push(i32::from(
                                x[((b * h + iy as usize) * w + ix as usize) * c + ch],
                            ));
                        }
                    }
                    out[((b * oh + y) * ow + xo) * c + ch] = f(&window).clamp(-128, 127) as i8;
                }
            }
        }
    }
    ctx.write(o, out_shape, Buf::I8(out))
}

/// `quantized_avg_pool2d_nhwc.out(input, kernel, stride, padding, ceil_mode, zero_point,
/// multiplier, shift, scratch, out)`: `arm_avgpool_s8` — the integer average of the valid
/// window, ties away from zero; the multiplier and shift are not used by the device kernel.
pub fn avg_pool2d_nhwc(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    pool(ctx, args, |win| {
        average_round_away(win.iter().sum(), win.len() as i32)
    })
}

/// `quantized_max_pool2d_nhwc.out(input, kernel, stride, padding, ...)`: `arm_max_pool_s8`.
pub fn max_pool2d_nhwc(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    pool(ctx, args, |win| win.iter().copied().max().unwrap_or(-128))
}

/// `softmax.out(input, dim, input_zero_point, output_zero_point, input_multiplier,
/// input_left_shift, diff_min, out)`: `arm_softmax_s8` over the last dimension.
pub fn softmax(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let rank = input.shape.len() as i64;
    let dim = ctx.int(args, 1)?;
    if dim != rank - 1 && dim != -1 {
        return Err(ctx.bad(format!(
            "softmax over dim {dim} of a rank-{rank} tensor: CMSIS-NN works on the last dimension"
        )));
    }
    let mult = ctx.int(args, 4)? as i32;
    let shift = ctx.int(args, 5)? as i32;
    let diff_min = ctx.int(args, 6)? as i32;
    let row = *input.shape.last().ok_or_else(|| ctx.bad("scalar input"))?;
    let x = i8s(ctx, input)?;
    let mut out = vec![0i8; x.len()];
    if row > 0 {
        for (xi, oi) in x.chunks(row).zip(out.chunks_mut(row)) {
            softmax_row_s8(xi, mult, shift, diff_min, oi);
        }
    }
    let shape = input.shape.clone();
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, Buf::I8(out))
}

/// `quantized_add.out(a, a_zp, a_mult, a_shift, b, b_zp, b_mult, b_shift, out_zp, out_mult,
/// out_shift, act_min, act_max, out)`: `arm_elementwise_add_s8` (inputs shifted left by 20).
pub fn add(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let (a, b) = (ctx.tensor(args, 0)?, ctx.tensor(args, 4)?);
    if a.shape != b.shape {
        return Err(ctx.bad(format!(
            "broadcasting {:?} with {:?} is not implemented",
            a.shape, b.shape
        )));
    }
    let p = |k| ctx.int(args, k).map(|v| v as i32);
    let (azp, am, ash, bzp, bm, bsh, ozp, om, osh) = (
        p(1)?,
        p(2)?,
        p(3)?,
        p(5)?,
        p(6)?,
        p(7)?,
        p(8)?,
        p(9)?,
        p(10)?,
    );
    let (lo, hi) = if args.len() >= 15 {
        ctx.range(p(11)?, p(12)?)?
    } else {
        (-128, 127)
    };
    let out: Vec<i8> = i8s(ctx, a)?
        .iter()
        .zip(i8s(ctx, b)?)
        .map(|(&x, &y)| {
            let xa = requantize(i32::from(x).wrapping_sub(azp).wrapping_shl(20), am, ash);
            let ya = requantize(i32::from(y).wrapping_sub(bzp).wrapping_shl(20), bm, bsh);
            requantize(xa.wrapping_add(ya), om, osh)
                .wrapping_add(ozp)
                .clamp(lo, hi) as i8
        })
        .collect();
    let shape = a.shape.clone();
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, Buf::I8(out))
}

/// `quantized_mul.out(a, a_zp, b, b_zp, out_zp, out_mult, out_shift, out)`: `arm_elementwise_mul_s8`.
pub fn mul(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let (a, b) = (ctx.tensor(args, 0)?, ctx.tensor(args, 2)?);
    if a.shape != b.shape {
        return Err(ctx.bad(format!(
            "broadcasting {:?} with {:?} is not implemented",
            a.shape, b.shape
        )));
    }
    let (azp, bzp, ozp, om, osh) = (
        ctx.int(args, 1)? as i32,
        ctx.int(args, 3)? as i32,
        ctx.int(args, 4)? as i32,
        ctx.int(args, 5)? as i32,
        ctx.int(args, 6)? as i32,
    );
    let out: Vec<i8> = i8s(ctx, a)?
        .iter()
        .zip(i8s(ctx, b)?)
        .map(|(&x, &y)| {
            let prod = i32::from(x)
                .wrapping_sub(azp)
                .wrapping_mul(i32::from(y).wrapping_sub(bzp));
            requantize(prod, om, osh).wrapping_add(ozp).clamp(-128, 127) as i8
        })
        .collect();
    let shape = a.shape.clone();
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, Buf::I8(out))
}

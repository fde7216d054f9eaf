//! `quantized_decomposed::*` Q/DQ kernels as ExecuTorch's portable library computes them:
//! quantize is `zero_point + nearbyint(x · (1/scale))` in float, clamped; dequantize is
//! `(q − zero_point) · scale`.

use super::ctx::{f32s, Ctx};
use super::value::{Buf, HostTensor};
use super::RuntimeError;

fn out_of(ctx: &Ctx<'_>, args: &[usize]) -> Result<usize, RuntimeError> {
    args.len()
        .checked_sub(2)
        .map(|i| args[i])
        .ok_or_else(|| ctx.bad("no out argument"))
}

/// `nearbyint` (round half to even) of `x · inv_scale` in float, plus the zero point, clamped.
#[inline]
pub fn quantize_value(x: f32, inv_scale: f32, zero_point: i32, qmin: i32, qmax: i32) -> i32 {
    let q = (inv_scale * x).round_ties_even();
    let q = if q.is_nan() {
        0
    } else {
        q.clamp(i32::MIN as f32, i32::MAX as f32) as i32
    };
    zero_point.saturating_add(q).clamp(qmin, qmax)
}

fn integer_values(ctx: &Ctx<'_>, t: &HostTensor) -> Result<Vec<i32>, RuntimeError> {
    Ok(match &t.buf {
        Buf::I8(v) => v.iter().map(|&x| i32::from(x)).collect(),
        Buf::U8(v) => v.iter().map(|&x| i32::from(x)).collect(),
        Buf::I16(v) => v.iter().map(|&x| i32::from(x)).collect(),
        Buf::I32(v) => v.clone(),
        _ => {
            return Err(ctx.bad(format!(
                "expected an integer tensor, got {}",
                t.dtype.short_name()
            )))
        }
    })
}

fn narrow(dtype: crate::ScalarType, q: Vec<i32>) -> Buf {
    use crate::ScalarType::*;
    match dtype {
        Byte | QUInt8 => Buf::U8(q.into_iter().map(|x| x as u8).collect()),
        Short => Buf::I16(q.into_iter().map(|x| x as i16).collect()),
        Int | QInt32 => Buf::I32(q),
        _ => Buf::I8(q.into_iter().map(|x| x as i8).collect()),
    }
}

/// `quantize_per_tensor.out(input, scale, zero_point, quant_min, quant_max, dtype, out)`.
pub fn quantize_per_tensor(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let scale = ctx.double(args, 1)?;
    let zp = ctx.int(args, 2)? as i32;
    let (qmin, qmax) = ctx.range(ctx.int(args, 3)? as i32, ctx.int(args, 4)? as i32)?;
    let inv = 1.0f32 / scale as f32;
    let q: Vec<i32> = f32s(ctx, input)?
        .iter()
        .map(|&x| quantize_value(x, inv, zp, qmin, qmax))
        .collect();
    let shape = input.shape.clone();
    let o = out_of(ctx, args)?;
    let dtype = match ctx.values.get(o) {
        Some(super::value::RValue::Tensor(t)) => t.dtype,
        _ => crate::ScalarType::Char,
    };
    ctx.write(o, shape, narrow(dtype, q))
}

/// `dequantize_per_tensor.out(input, scale, zero_point, quant_min, quant_max, dtype, [out_dtype], out)`.
pub fn dequantize_per_tensor(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let scale = ctx.double(args, 1)?;
    let zp = ctx.int(args, 2)? as i32;
    let out: Vec<f32> = integer_values(ctx, input)?
        .iter()
        .map(|&q| ((f64::from(q) - f64::from(zp)) * scale) as f32)
        .collect();
    let shape = input.shape.clone();
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, Buf::F32(out))
}

/// `dequantize_per_channel.out(input, scales, zero_points?, axis, quant_min, quant_max, dtype, [out_dtype], out)`.
pub fn dequantize_per_channel(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let scales: Vec<f64> = match &ctx.tensor(args, 1)?.buf {
        Buf::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        Buf::F64(v) => v.clone(),
        _ => return Err(ctx.bad("scales must be floating point")),
    };
    let zps: Vec<i32> = match ctx.opt_tensor(args, 2)? {
        Some(t) => match &t.buf {
            Buf::I64(v) => v.iter().map(|&x| x as i32).collect(),
            Buf::I32(v) => v.clone(),
            _ => return Err(ctx.bad("zero points must be integers")),
        },
        None => vec![0; scales.len()],
    };
    let rank = input.shape.len() as i64;
    let axis = ctx.int(args, 3)?;
    let axis = if axis < 0 { axis + rank } else { axis };
    if axis < 0 || axis >= rank {
        return Err(ctx.bad(format!("axis {axis} out of range")));
    }
    let axis = axis as usize;
    let channels = input.shape[axis];
    let inner: usize = input.shape[axis + 1..].iter().product();
    if scales.len() != channels || zps.len() != channels {
        return Err(ctx.bad(format!("{} scales for {channels} channels", scales.len())));
    }
    let q = integer_values(ctx, input)?;
    let out: Vec<f32> = q
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let c = (i / inner.max(1)) % channels;
            ((f64::from(v) - f64::from(zps[c])) * scales[c]) as f32
        })
        .collect();
    let shape = input.shape.clone();
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, Buf::F32(out))
}

//! ExecuTorch's portable tensor kernels that real programs keep besides the arithmetic of
//! `portable.rs`, for any element type the runtime holds (float, int8, int32, ...): broadcasting
//! elementwise arithmetic, comparisons, `where`, `clamp`, and data movement (`cat`,
//! `slice_copy`, `select_copy`, `split_copy`, `split_with_sizes_copy`, `full`).

use crate::kernels::cmsis::ops::out_of;
use crate::kernels::ctx::Ctx;
use crate::kernels::layout::{broadcast_index, broadcast_shape};
use crate::kernels::value::{Buf, HostTensor, RValue};
use crate::kernels::RuntimeError;
use std::sync::Arc;

/// Two operands broadcast to one shape, as f64.
pub(crate) type Broadcast = (Vec<usize>, Vec<f64>, Vec<f64>);

/// The broadcast operands of a binary op as f64, with the output shape.
pub(crate) fn broadcast_operands(
    ctx: &Ctx<'_>,
    a: &HostTensor,
    b: &HostTensor,
    out: usize,
) -> Result<Broadcast, RuntimeError> {
    let shape = broadcast_shape(&a.shape, &b.shape)
        .ok_or_else(|| ctx.bad(format!("{:?} and {:?} do not broadcast", a.shape, b.shape)))?;
    let n = ctx.out_len(&shape)?;
    // refused before the operands are expanded: a hostile program's inputs can broadcast to far
    // more than the out tensor it declares
    let declared: usize = ctx.out_shape(out)?.iter().product();
    if n != declared {
        return Err(ctx.bad(format!(
            "{:?} and {:?} broadcast to {n} elements, the out tensor holds {declared}",
            a.shape, b.shape
        )));
    }
    let (av, bv) = (a.buf.to_f64(), b.buf.to_f64());
    let x = broadcast_index(&a.shape, &shape)
        .into_iter()
        .map(|i| av[i])
        .collect();
    let y = broadcast_index(&b.shape, &shape)
        .into_iter()
        .map(|i| bv[i])
        .collect();
    Ok((shape, x, y))
}

/// The second operand: a tensor, or a scalar (`*.Scalar_out`) as a 0-d tensor.
pub(crate) fn operand(
    ctx: &Ctx<'_>,
    args: &[usize],
    k: usize,
) -> Result<Arc<HostTensor>, RuntimeError> {
    match ctx.values.get(ctx.arg(args, k)?) {
        Some(RValue::Tensor(t)) => Ok(Arc::clone(t)),
        _ => Ok(Arc::new(HostTensor {
            dtype: crate::ScalarType::Double,
            shape: Vec::new(),
            buf: Buf::F64(vec![ctx.double(args, k)?]),
        })),
    }
}

/// Broadcasting `aten::<op>.out(a, b, [alpha], out)` for every numeric type, computed in f64
/// and stored in the out tensor's type (`alpha` scales `b`).
pub fn binary(
    ctx: &mut Ctx<'_>,
    args: &[usize],
    f: impl Fn(f64, f64) -> f64,
    has_alpha: bool,
) -> Result<(), RuntimeError> {
    let (a, b) = (ctx.shared(args, 0)?, operand(ctx, args, 1)?);
    let alpha = if has_alpha && args.len() >= 5 {
        ctx.double(args, 2)?
    } else {
        1.0
    };
    let o = out_of(ctx, args)?;
    let (shape, x, y) = broadcast_operands(ctx, &a, &b, o)?;
    let out = ctx.out_like(o)?;
    let buf = match (&out, &a.buf, &b.buf) {
        // float32 arithmetic stays float32, as the portable kernels compute it (f64 of two f32
        // operands rounds back to the correctly rounded f32 result); alpha is cast to float
        // first and `alpha · b` rounded in float, as `val_alpha * val_b`
        (Buf::F32(_), Buf::F32(_), _) | (Buf::F32(_), _, Buf::F32(_)) => {
            let alpha = alpha as f32;
            Buf::F32(
                x.iter()
                    .zip(&y)
                    .map(|(&p, &q)| f(f64::from(p as f32), f64::from(alpha * q as f32)) as f32)
                    .collect(),
            )
        }
        _ => {
            let values: Vec<f64> = x.iter().zip(&y).map(|(&p, &q)| f(p, alpha * q)).collect();
            Buf::from_f64_like(&out, &values)
        }
    };
    ctx.write(o, shape, buf)
}

/// `aten::{eq,ne,lt,le,gt,ge}.{Scalar,Tensor}_out(a, b, out)`: a bool tensor.
pub fn compare(
    ctx: &mut Ctx<'_>,
    args: &[usize],
    f: impl Fn(f64, f64) -> bool,
) -> Result<(), RuntimeError> {
    let (a, b) = (ctx.shared(args, 0)?, operand(ctx, args, 1)?);
    let o = out_of(ctx, args)?;
    let (shape, x, y) = broadcast_operands(ctx, &a, &b, o)?;
    let values: Vec<f64> = x
        .iter()
        .zip(&y)
        .map(|(&p, &q)| f64::from(u8::from(f(p, q))))
        .collect();
    let like = ctx.out_like(o)?;
    ctx.write(o, shape, Buf::from_f64_like(&like, &values))
}

/// `aten::where.self_out(condition, a, b, out)`.
pub fn where_(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let cond = ctx.shared(args, 0)?;
    let (a, b) = (ctx.shared(args, 1)?, ctx.shared(args, 2)?);
    let shape = broadcast_shape(&a.shape, &b.shape)
        .and_then(|s| broadcast_shape(&cond.shape, &s))
        .ok_or_else(|| ctx.bad("condition and operands do not broadcast"))?;
    ctx.out_len(&shape)?;
    let (cv, av, bv) = (cond.buf.to_f64(), a.buf.to_f64(), b.buf.to_f64());
    let (ci, ai, bi) = (
        broadcast_index(&cond.shape, &shape),
        broadcast_index(&a.shape, &shape),
        broadcast_index(&b.shape, &shape),
    );
    let values: Vec<f64> = (0..ci.len())
        .map(|k| {
            if cv[ci[k]] != 0.0 {
                av[ai[k]]
            } else {
                bv[bi[k]]
            }
        })
        .collect();
    let o = out_of(ctx, args)?;
    let like = ctx.out_like(o)?;
    ctx.write(o, shape, Buf::from_f64_like(&like, &values))
}

/// ExecuTorch's `max_override`: a NaN operand wins (the first), else `std::max` (the first of
/// equals).
pub fn max_override(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        a
    } else if b.is_nan() || a < b {
        b
    } else {
        a
    }
}

/// ExecuTorch's `min_override`: a NaN operand wins (the first), else `std::min`.
pub fn min_override(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        a
    } else if b.is_nan() || b < a {
        b
    } else {
        a
    }
}

/// `aten::clamp.out(input, min?, max?, out)` for any numeric type (int8 codes included: the
/// Cortex-M flow leaves a standalone ReLU as a clamp on the quantized tensor):
/// ExecuTorch's `min_override(max_override(x, min), max)`, so a NaN element stays NaN.
pub fn clamp(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let (lo, hi) = (ctx.opt_double(args, 1)?, ctx.opt_double(args, 2)?);
    if let (Some(l), Some(h)) = (lo, hi) {
        ctx.range(l, h)?;
    }
    let values: Vec<f64> = input
        .buf
        .to_f64()
        .into_iter()
        .map(|x| {
            let x = lo.map_or(x, |l| max_override(x, l));
            hi.map_or(x, |h| min_override(x, h))
        })
        .collect();
    let buf = Buf::from_f64_like(&input.buf, &values);
    let shape = input.shape.clone();
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, buf)
}

/// Indices of the elements of a tensor of `shape` whose index along `dim` is one of `picks`
/// (in that order), in row-major order.
fn slice_indices(shape: &[usize], dim: usize, picks: &[usize]) -> Vec<usize> {
    let outer: usize = shape[..dim].iter().product();
    let inner: usize = shape[dim + 1..].iter().product();
    let mut idx = Vec::with_capacity(outer * picks.len() * inner);
    for o in 0..outer {
        for &p in picks {
            let base = (o * shape[dim] + p) * inner;
            idx.extend(base..base + inner);
        }
    }
    idx
}

/// `aten::slice_copy.Tensor_out(input, dim, start?, end?, step, out)`.
pub fn slice_copy(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let dim = ctx.dim(ctx.int(args, 1)?, input.shape.len())?;
    let size = *input
        .shape
        .get(dim)
        .ok_or_else(|| ctx.bad("slice of a scalar"))? as i64;
    let clampi = |v: i64| (if v < 0 { v + size } else { v }).clamp(0, size);
    let start = ctx.opt_double(args, 2)?.map_or(0, |v| clampi(v as i64));
    let end = ctx.opt_double(args, 3)?.map_or(size, |v| clampi(v as i64));
    let step = ctx.int(args, 4)?;
    if step <= 0 {
        return Err(ctx.bad(format!("slice step {step}")));
    }
    let picks: Vec<usize> = (start..end.max(start))
        .step_by(step as usize)
        .map(|v| v as usize)
        .collect();
    let mut shape = input.shape.clone();
    shape[dim] = picks.len();
    let buf = input.buf.gather(&slice_indices(&input.shape, dim, &picks));
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, buf)
}

/// `aten::select_copy.int_out(input, dim, index, out)`.
pub fn select_copy(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.tensor(args, 0)?;
    let dim = ctx.dim(ctx.int(args, 1)?, input.shape.len())?;
    let size = *input
        .shape
        .get(dim)
        .ok_or_else(|| ctx.bad("select from a scalar"))? as i64;
    let i = ctx.int(args, 2)?;
    let i = if i < 0 { i + size } else { i };
    if !(0..size).contains(&i) {
        return Err(ctx.bad(format!("index {i} out of range for size {size}")));
    }
    let mut shape = input.shape.clone();
    let buf = input.buf.gather(&slice_indices(&shape, dim, &[i as usize]));
    shape.remove(dim);
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, buf)
}

fn split_into(
    ctx: &mut Ctx<'_>,
    args: &[usize],
    dim: usize,
    sizes: &[usize],
) -> Result<(), RuntimeError> {
    let input = ctx.shared(args, 0)?;
    let outs = ctx.tensor_list(args, args.len().saturating_sub(2))?;
    if outs.len() != sizes.len() || sizes.iter().sum::<usize>() != input.shape[dim] {
        return Err(ctx.bad(format!(
            "split {sizes:?} of dim {dim} of {:?} into {} outputs",
            input.shape,
            outs.len()
        )));
    }
    let mut at = 0usize;
    for (&o, &n) in outs.iter().zip(sizes) {
        let picks: Vec<usize> = (at..at + n).collect();
        let mut shape = input.shape.clone();
        shape[dim] = n;
        let buf = input.buf.gather(&slice_indices(&input.shape, dim, &picks));
        ctx.write(o, shape, buf)?;
        at += n;
    }
    Ok(())
}

/// `aten::split_with_sizes_copy.out(input, split_sizes, dim, out[])`.
pub fn split_with_sizes_copy(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let rank = ctx.tensor(args, 0)?.shape.len();
    let dim = ctx.dim(ctx.int(args, 2)?, rank)?;
    let sizes: Vec<usize> = ctx
        .ints(args, 1)?
        .iter()
        .map(|&s| s.max(0) as usize)
        .collect();
    split_into(ctx, args, dim, &sizes)
}

/// `aten::unbind_copy.int_out(self, dim, out[])`: each entry of `dim` as a tensor of its own.
pub fn unbind_copy(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let input = ctx.shared(args, 0)?;
    let dim = ctx.dim(ctx.int(args, 1)?, input.shape.len())?;
    let outs = ctx.tensor_list(args, args.len().saturating_sub(2))?;
    if outs.len() != input.shape[dim] {
        return Err(ctx.bad(format!(
            "{} outputs for dim {dim} of {:?}",
            outs.len(),
            input.shape
        )));
    }
    let mut shape = input.shape.clone();
    shape.remove(dim);
    for (k, &o) in outs.iter().enumerate() {
        let buf = input.buf.gather(&slice_indices(&input.shape, dim, &[k]));
        ctx.write(o, shape.clone(), buf)?;
    }
    Ok(())
}

/// `aten::split_copy.Tensor_out(input, split_size, dim, out[])`.
pub fn split_copy(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let shape = ctx.tensor(args, 0)?.shape.clone();
    let dim = ctx.dim(ctx.int(args, 2)?, shape.len())?;
    let each = ctx.int(args, 1)?.max(1) as usize;
    let total = shape.get(dim).copied().unwrap_or(0);
    let sizes: Vec<usize> = (0..total)
        .step_by(each)
        .map(|s| each.min(total - s))
        .collect();
    split_into(ctx, args, dim, &sizes)
}

/// `aten::cat.out(tensors[], dim, out)`.
pub fn cat(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let list = ctx.tensor_list(args, 0)?;
    let parts: Vec<Arc<HostTensor>> = list
        .iter()
        .map(|&v| match ctx.values.get(v) {
            Some(RValue::Tensor(t)) => Ok(Arc::clone(t)),
            _ => Err(ctx.bad(format!("list entry {v} is not a tensor"))),
        })
        .collect::<Result<_, _>>()?;
    // empty 1-D tensors take no part (legacy `torch.cat` behaviour the kernel keeps)
    let parts: Vec<Arc<HostTensor>> = parts
        .into_iter()
        .filter(|t| !(t.shape.len() == 1 && t.shape[0] == 0))
        .collect();
    let Some(first) = parts.first() else {
        let o = out_of(ctx, args)?;
        let shape = ctx.out_shape(o)?;
        let like = ctx.out_like(o)?;
        return ctx.write(o, shape, Buf::from_f64_like(&like, &[]));
    };
    let rank = first.shape.len();
    let dim = ctx.dim(ctx.int(args, 1)?, rank)?;
    let mut shape = first.shape.clone();
    shape[dim] = 0;
    for t in &parts {
        let same = t.shape.len() == rank
            && t.shape
                .iter()
                .enumerate()
                .all(|(d, &s)| d == dim || s == first.shape[d]);
        if !same {
            return Err(ctx.bad(format!(
                "cannot concatenate {:?} with {:?}",
                first.shape, t.shape
            )));
        }
        shape[dim] += t.shape[dim];
    }
    let outer: usize = shape[..dim].iter().product();
    let mut pieces = Vec::with_capacity(outer * parts.len());
    for o in 0..outer {
        for t in &parts {
            let chunk: usize = t.shape[dim..].iter().product();
            let idx: Vec<usize> = (o * chunk..(o + 1) * chunk).collect();
            pieces.push(t.buf.gather(&idx));
        }
    }
    let refs: Vec<&Buf> = pieces.iter().collect();
    let buf = Buf::concat(&refs).ok_or_else(|| ctx.bad("tensors of different types"))?;
    let o = out_of(ctx, args)?;
    ctx.write(o, shape, buf)
}

/// `aten::full.out(size, fill_value, out)` and `aten::full_like.out(input, fill_value, ..., out)`.
pub fn full(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let value = ctx.double(args, 1)?;
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    let n = ctx.out_len(&shape)?;
    let like = ctx.out_like(o)?;
    ctx.write(o, shape, Buf::from_f64_like(&like, &vec![value; n]))
}

/// `aten::arange.start_out(start, end, step, out)` and `aten::arange.out(end, out)`: element
/// `i` is `start + i·step`, computed in double and cast to the out tensor's type, as
/// ExecuTorch's portable kernel does; the out tensor holds `ceil((end − start) / step)`.
pub fn arange(ctx: &mut Ctx<'_>, args: &[usize]) -> Result<(), RuntimeError> {
    let (start, end, step) = if args.len() >= 5 {
        (
            ctx.double(args, 0)?,
            ctx.double(args, 1)?,
            ctx.double(args, 2)?,
        )
    } else {
        (0.0, ctx.double(args, 0)?, 1.0)
    };
    if !(start.is_finite() && end.is_finite() && step.is_finite()) || step == 0.0 {
        return Err(ctx.bad(format!(
            "arange({start}, {end}, {step}) has no finite length"
        )));
    }
    let len = ((end - start) / step).ceil().max(0.0);
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    let n = ctx.out_len(&shape)?;
    if len != n as f64 {
        return Err(ctx.bad(format!(
            "arange({start}, {end}, {step}) has {len} elements, the out tensor {n}"
        )));
    }
    ctx.charge(&[n])?;
    let values: Vec<f64> = (0..n).map(|i| start + i as f64 * step).collect();
    let like = ctx.out_like(o)?;
    ctx.write(o, shape, Buf::from_f64_like(&like, &values))
}

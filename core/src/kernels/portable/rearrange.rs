//! Portable kernels that only move elements: each out element's source computed from its
//! index, then gathered (pixel shuffles, reflection and replication padding, narrowing,
//! unfolding, strided views), the ones that overwrite part of a copy (select scatter, masked
//! fill), `empty`, and the ones whose out size is known only at run time (`nonzero`,
//! `masked_select`, `repeat_interleave`), which resize their out tensor within its plan.

use super::out_of;
use super::shape::gather_by;
use crate::kernels::ctx::Ctx;
use crate::kernels::layout::{
    broadcast_index, broadcasts_to, for_each_index, row_major_strides as strides,
};
use crate::kernels::value::{Buf, HostTensor, RValue};
use crate::kernels::RuntimeError;

type R = Result<(), RuntimeError>;

/// Writes `out` (of `shape`) with the element of `src` that `source_of` names for each out
/// index (a multi-index into `src`).
fn gather_into(
    ctx: &mut Ctx<'_>,
    src: &HostTensor,
    out: usize,
    shape: Vec<usize>,
    source_of: impl Fn(&[usize], &mut [usize]),
) -> R {
    let n = ctx.out_len(&shape)?;
    ctx.charge(&[n])?;
    let st = strides(&src.shape);
    let mut from = vec![0usize; src.shape.len()];
    let sources = gather_by(&shape, |i| {
        source_of(i, &mut from);
        let at: usize = from.iter().zip(&st).map(|(i, s)| i * s).sum();
        (at < src.buf.len()).then_some(at)
    })
    .ok_or_else(|| ctx.bad("an index points outside the input"))?;
    let buf = src.buf.gather(&sources);
    ctx.write(out, shape, buf)
}

/// The mask (argument 1), broadcast to `shape`: per element, whether it is set.
fn mask_over(ctx: &Ctx<'_>, args: &[usize], shape: &[usize]) -> Result<Vec<bool>, RuntimeError> {
    let mask = ctx.shared(args, 1)?;
    if !broadcasts_to(&mask.shape, shape) {
        return Err(ctx.bad(format!(
            "mask {:?} does not broadcast to {shape:?}",
            mask.shape
        )));
    }
    ctx.charge(&[shape.iter().product()])?;
    let m = mask.buf.to_f64();
    Ok(broadcast_index(&mask.shape, shape)
        .into_iter()
        .map(|k| m.get(k).is_some_and(|&b| b != 0.0))
        .collect())
}

/// `[…, C, H, W]` as its three last dims, checked.
fn chw(ctx: &Ctx<'_>, shape: &[usize]) -> Result<(usize, usize, usize, usize), RuntimeError> {
    let r = shape.len();
    if r < 3 {
        return Err(ctx.bad(format!("{shape:?} has fewer than 3 dims")));
    }
    Ok((r, shape[r - 3], shape[r - 2], shape[r - 1]))
}

/// `aten::pixel_shuffle.out(self, upscale_factor, out)`: `[…, C·r², H, W]` → `[…, C, H·r, W·r]`.
pub fn pixel_shuffle(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let r = usize::try_from(ctx.int(args, 1)?).ok().filter(|&r| r > 0);
    let r = r.ok_or_else(|| ctx.bad("upscale factor must be positive"))?;
    let (rank, c, h, w) = chw(ctx, &input.shape)?;
    if c % (r * r) != 0 {
        return Err(ctx.bad(format!("{c} channels do not divide by {r}²")));
    }
    let mut shape = input.shape.clone();
    shape[rank - 3] = c / (r * r);
    shape[rank - 2] = h * r;
    shape[rank - 1] = w * r;
    let o = out_of(ctx, args)?;
    gather_into(ctx, &input, o, shape, |i, from| {
        from[..rank - 3].copy_from_slice(&i[..rank - 3]);
        let (oc, oh, ow) = (i[rank - 3], i[rank - 2], i[rank - 1]);
        from[rank - 3] = oc * r * r + (oh % r) * r + ow % r;
        from[rank - 2] = oh / r;
        from[rank - 1] = ow / r;
    })
}

/// `aten::pixel_unshuffle.out(self, downscale_factor, out)`: `[…, C, H·r, W·r]` →
/// `[…, C·r², H, W]`.
pub fn pixel_unshuffle(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let r = usize::try_from(ctx.int(args, 1)?).ok().filter(|&r| r > 0);
    let r = r.ok_or_else(|| ctx.bad("downscale factor must be positive"))?;
    let (rank, c, h, w) = chw(ctx, &input.shape)?;
    if h % r != 0 || w % r != 0 {
        return Err(ctx.bad(format!("{h}×{w} does not divide by {r}")));
    }
    let mut shape = input.shape.clone();
    shape[rank - 3] = c * r * r;
    shape[rank - 2] = h / r;
    shape[rank - 1] = w / r;
    let o = out_of(ctx, args)?;
    gather_into(ctx, &input, o, shape, |i, from| {
        from[..rank - 3].copy_from_slice(&i[..rank - 3]);
        let (oc, oh, ow) = (i[rank - 3], i[rank - 2], i[rank - 1]);
        let (sub, i_, j) = (oc / (r * r), (oc % (r * r)) / r, oc % r);
        from[rank - 3] = sub;
        from[rank - 2] = oh * r + i_;
        from[rank - 1] = ow * r + j;
    })
}

/// How a padded position finds its source.
#[derive(Clone, Copy)]
enum PadMode {
    /// Mirror without repeating the edge (`reflection_pad`).
    Reflect,
    /// Repeat the edge (`replication_pad`).
    Replicate,
}

/// Pads the last `k` dims by `padding` (PyTorch order: last dim first, before then after).
fn pad(ctx: &mut Ctx<'_>, args: &[usize], k: usize, mode: PadMode) -> R {
    let input = ctx.shared(args, 0)?;
    let padding = ctx.ints(args, 1)?;
    let rank = input.shape.len();
    if padding.len() != 2 * k || rank < k {
        return Err(ctx.bad(format!(
            "padding {padding:?} for the last {k} dims of {:?}",
            input.shape
        )));
    }
    // (before, size) per padded dim, outermost first
    let mut dims = Vec::with_capacity(k);
    let mut shape = input.shape.clone();
    for j in 0..k {
        let d = rank - 1 - j;
        let (before, after) = (padding[2 * j], padding[2 * j + 1]);
        let n = input.shape[d] as i64;
        let reflect_ok = matches!(mode, PadMode::Replicate) || (before < n && after < n);
        if before < 0 || after < 0 || n == 0 || !reflect_ok {
            return Err(ctx.bad(format!("padding {before}, {after} of a dim of {n}")));
        }
        shape[d] = (n + before + after) as usize;
        dims.push((d, before, n));
    }
    let o = out_of(ctx, args)?;
    gather_into(ctx, &input, o, shape, |i, from| {
        from.copy_from_slice(&i[..from.len()]);
        for &(d, before, n) in &dims {
            let p = i[d] as i64 - before;
            let s = match mode {
                PadMode::Reflect if p < 0 => -p,
                PadMode::Reflect if p >= n => 2 * (n - 1) - p,
                PadMode::Replicate => p.clamp(0, n - 1),
                PadMode::Reflect => p,
            };
            from[d] = s.clamp(0, n - 1) as usize;
        }
    })
}

/// `aten::reflection_pad1d.out(self, padding, out)`.
pub fn reflection_pad1d(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    pad(ctx, args, 1, PadMode::Reflect)
}

/// `aten::reflection_pad2d.out(self, padding, out)`.
pub fn reflection_pad2d(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    pad(ctx, args, 2, PadMode::Reflect)
}

/// `aten::reflection_pad3d.out(self, padding, out)`.
pub fn reflection_pad3d(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    pad(ctx, args, 3, PadMode::Reflect)
}

/// `aten::replication_pad1d.out(self, padding, out)`.
pub fn replication_pad1d(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    pad(ctx, args, 1, PadMode::Replicate)
}

/// `aten::replication_pad2d.out(self, padding, out)`.
pub fn replication_pad2d(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    pad(ctx, args, 2, PadMode::Replicate)
}

/// `aten::replication_pad3d.out(self, padding, out)`.
pub fn replication_pad3d(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    pad(ctx, args, 3, PadMode::Replicate)
}

/// `aten::narrow_copy.out(self, dim, start, length, out)`: `length` entries of `dim` from
/// `start` (negative counts from the end).
pub fn narrow_copy(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let d = ctx.dim(ctx.int(args, 1)?, input.shape.len())?;
    let n = input.shape[d] as i64;
    let start = ctx.int(args, 2)?;
    let start = if start < 0 { start + n } else { start };
    let length = ctx.int(args, 3)?;
    if start < 0 || length < 0 || start + length > n {
        return Err(ctx.bad(format!("narrow {start}+{length} of a dim of {n}")));
    }
    let mut shape = input.shape.clone();
    shape[d] = length as usize;
    let o = out_of(ctx, args)?;
    gather_into(ctx, &input, o, shape, |i, from| {
        from.copy_from_slice(i);
        from[d] += start as usize;
    })
}

/// `aten::unfold_copy.out(self, dimension, size, step, out)`: every window of `size` along
/// `dimension`, `step` apart, as a new last dim.
pub fn unfold_copy(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let rank = input.shape.len();
    let d = ctx.dim(ctx.int(args, 1)?, rank.max(1))?;
    let n = input.shape.get(d).copied().unwrap_or(1);
    let size = usize::try_from(ctx.int(args, 2)?).map_err(|_| ctx.bad("negative size"))?;
    let step = usize::try_from(ctx.int(args, 3)?).ok().filter(|&s| s > 0);
    let step = step.ok_or_else(|| ctx.bad("step must be positive"))?;
    if size > n {
        return Err(ctx.bad(format!("a window of {size} in a dim of {n}")));
    }
    let mut shape = input.shape.clone();
    if rank > 0 {
        shape[d] = (n - size) / step + 1;
    }
    shape.push(size);
    let o = out_of(ctx, args)?;
    gather_into(ctx, &input, o, shape, |i, from| {
        from.copy_from_slice(&i[..rank]);
        if rank > 0 {
            from[d] = i[d] * step + i[rank];
        }
    })
}

/// `aten::select_scatter.out(self, src, dim, index, out)`: `self` with entry `index` of `dim`
/// replaced by `src`.
pub fn select_scatter(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let src = ctx.shared(args, 1)?;
    let rank = input.shape.len();
    let d = ctx.dim(ctx.int(args, 2)?, rank)?;
    let n = input.shape[d] as i64;
    let index = ctx.int(args, 3)?;
    let index = if index < 0 { index + n } else { index };
    let mut expected = input.shape.clone();
    expected.remove(d);
    if index < 0 || index >= n || src.shape != expected {
        return Err(ctx.bad(format!(
            "src {:?} at index {index} of dim {d} of {:?}",
            src.shape, input.shape
        )));
    }
    let o = out_of(ctx, args)?;
    ctx.charge(&[input.buf.len()])?;
    let (st, sst) = (strides(&input.shape), strides(&src.shape));
    let mut out = input.buf.to_f64();
    let values = src.buf.to_f64();
    for_each_index(&src.shape, |idx| {
        // src's index with `index` put back at `d`
        let at: usize = (0..st.len())
            .map(|dd| match dd.cmp(&d) {
                std::cmp::Ordering::Less => idx[dd],
                std::cmp::Ordering::Equal => index as usize,
                std::cmp::Ordering::Greater => idx[dd - 1],
            } * st[dd])
            .sum();
        let from: usize = idx.iter().zip(&sst).map(|(a, b)| a * b).sum();
        if let (Some(t), Some(&v)) = (out.get_mut(at), values.get(from)) {
            *t = v;
        }
    });
    ctx.write_values(o, &out)
}

/// `aten::masked_fill.Scalar_out(self, mask, value, out)`: `self` with `value` wherever the
/// mask, broadcast to its shape, is true.
pub fn masked_fill(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let value = ctx.double(args, 2)?;
    let mask = mask_over(ctx, args, &input.shape)?;
    let mut out = input.buf.to_f64();
    for (x, _) in out.iter_mut().zip(&mask).filter(|(_, &m)| m) {
        *x = value;
    }
    let o = out_of(ctx, args)?;
    ctx.write_values(o, &out)
}

/// `aten::masked_scatter.out(self, mask, source, out)`: `self` with the elements of `source`,
/// in order, wherever the mask (broadcast to `self`) is true.
pub fn masked_scatter(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let source = ctx.shared(args, 2)?;
    let mask = mask_over(ctx, args, &input.shape)?;
    let src = source.buf.to_f64();
    let mut out = input.buf.to_f64();
    let mut next = src.iter();
    for (x, _) in out.iter_mut().zip(&mask).filter(|(_, &m)| m) {
        *x = *next
            .next()
            .ok_or_else(|| ctx.bad("the source has fewer elements than the mask selects"))?;
    }
    let o = out_of(ctx, args)?;
    let like = ctx.out_like(o)?;
    ctx.write(o, input.shape.clone(), Buf::from_f64_like(&like, &out))
}

/// `aten::as_strided_copy.out(self, size, stride, storage_offset?, out)`: element `i` of the
/// out tensor is `self`'s storage at `storage_offset + Σ i_k · stride_k`.
pub fn as_strided_copy(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let size = ctx.ints(args, 1)?;
    let stride = ctx.ints(args, 2)?;
    let offset = match ctx.values.get(ctx.arg(args, 3)?) {
        Some(RValue::None) => 0,
        _ => ctx.int(args, 3)?,
    };
    if size.len() != stride.len() || size.iter().chain(&stride).any(|&v| v < 0) || offset < 0 {
        return Err(ctx.bad(format!("size {size:?}, stride {stride:?}, offset {offset}")));
    }
    let shape: Vec<usize> = size.iter().map(|&v| v as usize).collect();
    let stride: Vec<usize> = stride.iter().map(|&v| v as usize).collect();
    let n = ctx.out_len(&shape)?;
    ctx.charge(&[n])?;
    let sources = gather_by(&shape, |index| {
        let at = offset as usize + index.iter().zip(&stride).map(|(i, s)| i * s).sum::<usize>();
        (at < input.buf.len()).then_some(at)
    })
    .ok_or_else(|| {
        ctx.bad(format!(
            "a stride reaches past the input's {} elements",
            input.buf.len()
        ))
    })?;
    let o = out_of(ctx, args)?;
    let buf = input.buf.gather(&sources);
    ctx.write(o, shape, buf)
}

/// `aten::empty.out(size, memory_format?, out)` and `dim_order_ops::_empty_dim_order.out(size,
/// dim_order?, out)`: the out tensor as it is (its contents are unspecified; the host's are
/// zeros).
pub fn empty(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let o = out_of(ctx, args)?;
    let shape = ctx.out_shape(o)?;
    let n = ctx.out_len(&shape)?;
    ctx.write_values(o, &vec![0.0; n])
}

/// `aten::nonzero.out(self, out)`: the multi-index of every non-zero element, in order, as an
/// int64 `[count, rank]` tensor (its size known only at run time).
pub fn nonzero(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    ctx.charge(&[input.buf.len()])?;
    let x = input.buf.to_f64();
    let rank = input.shape.len();
    let mut out = Vec::new();
    let mut k = 0;
    for_each_index(&input.shape, |index| {
        if x.get(k).is_some_and(|&v| v != 0.0) {
            out.extend(index.iter().map(|&i| i as f64));
        }
        k += 1;
    });
    let count = out.len() / rank.max(1);
    let o = out_of(ctx, args)?;
    // the portable kernel writes the indices row after row into the out tensor's memory, whatever
    // its dim order; PyTorch gives `nonzero` a column-major out tensor, so an exported program
    // reads that memory transposed, and so does etscope
    let order = ctx.dim_order(o, 2);
    let buf = Buf::F64(out);
    let buf = if rank > 0 && order.len() == 2 && order[0] == 1 {
        crate::kernels::layout::permute_buf(&buf, &[rank, count], &[1, 0])
    } else {
        buf
    };
    ctx.write_resized(o, vec![count, rank], buf)
}

/// `aten::masked_select.out(self, mask, out)`: the elements of `self` where `mask` is true,
/// both broadcast to one shape, as a 1-D tensor (its size known only at run time).
pub fn masked_select(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let input = ctx.shared(args, 0)?;
    let mask = ctx.shared(args, 1)?;
    let shape =
        crate::kernels::layout::broadcast_shape(&input.shape, &mask.shape).ok_or_else(|| {
            ctx.bad(format!(
                "{:?} and mask {:?} do not broadcast",
                input.shape, mask.shape
            ))
        })?;
    let n: usize = shape.iter().product();
    ctx.charge(&[n])?;
    let xi = broadcast_index(&input.shape, &shape);
    let mi = broadcast_index(&mask.shape, &shape);
    let m = mask.buf.to_f64();
    let sources: Vec<usize> = xi
        .iter()
        .zip(&mi)
        .filter(|(_, &k)| m.get(k).is_some_and(|&b| b != 0.0))
        .map(|(&i, _)| i)
        .collect();
    let buf = input.buf.gather(&sources);
    let o = out_of(ctx, args)?;
    ctx.write_resized(o, vec![sources.len()], buf)
}

/// `aten::repeat_interleave.Tensor_out(repeats, output_size?, out)`: index `i` repeated
/// `repeats[i]` times, as a 1-D int64 tensor (its size known only at run time).
pub fn repeat_interleave(ctx: &mut Ctx<'_>, args: &[usize]) -> R {
    let repeats = ctx.shared(args, 0)?;
    let r = repeats.buf.to_f64();
    let total: f64 = r.iter().map(|&v| v.max(0.0)).sum();
    if r.iter().any(|&v| v < 0.0) {
        return Err(ctx.bad("negative repeats"));
    }
    ctx.charge(&[total as usize])?;
    let mut out = Vec::with_capacity(total as usize);
    for (i, &k) in r.iter().enumerate() {
        out.extend(std::iter::repeat_n(i as f64, k as usize));
    }
    let o = out_of(ctx, args)?;
    let n = out.len();
    ctx.write_resized(o, vec![n], Buf::F64(out))
}

//! Memory layout of runtime tensors: the runtime keeps tensors in logical (row-major) order,
//! while a device kernel reads and writes the bytes as the program stores them (`dim_order`).
//! These helpers move between the two, so a `cortex_m::` kernel can be written exactly as the
//! device runs it: over memory, with the logical sizes the op passes to CMSIS-NN.

use super::transpose_i8;
use super::value::Buf;

/// Whether `dim_order` is the identity (row-major storage).
pub fn is_contiguous(dim_order: &[usize]) -> bool {
    dim_order.iter().enumerate().all(|(i, &d)| i == d)
}

/// ExecuTorch's `is_channels_last_tensor` (Cortex-M backend): a 4-D tensor whose `dim_order` is
/// `[0, 2, 3, 1]`, or whose layout is ambiguous (one channel, or 1×1 spatial), counts as
/// channels-last.
pub fn is_channels_last(shape: &[usize], dim_order: &[usize]) -> bool {
    if shape.len() != 4 {
        return false;
    }
    shape[1] == 1 || (shape[2] == 1 && shape[3] == 1) || dim_order == [0, 2, 3, 1]
}

/// The sizes of the dims in memory order.
pub fn memory_dims(shape: &[usize], dim_order: &[usize]) -> Vec<usize> {
    dim_order.iter().map(|&d| shape[d]).collect()
}

/// Reorders `data` of `shape` by `perm` (output dim `i` = input dim `perm[i]`).
pub fn permute<T: Copy>(data: &[T], shape: &[usize], perm: &[usize]) -> Vec<T> {
    let rank = shape.len();
    let n: usize = shape.iter().product();
    if rank == 0 || n == 0 {
        return data[..n.min(data.len())].to_vec();
    }
    if let Some((batches, rows, cols)) = batched_transpose(shape, perm) {
        return transpose_batched(data, batches, rows, cols);
    }
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let mut in_strides = vec![1usize; rank];
    for d in (0..rank - 1).rev() {
        in_strides[d] = in_strides[d + 1] * shape[d + 1];
    }
    let strides: Vec<usize> = perm.iter().map(|&p| in_strides[p]).collect();
    // the innermost output dim is one strided run; the odometer walks the outer dims
    let (inner, step) = (out_shape[rank - 1], strides[rank - 1]);
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; rank - 1];
    let mut at = 0usize;
    for _ in 0..n / inner {
        out.extend((0..inner).map(|i| data[at + i * step]));
        for d in (0..rank - 1).rev() {
            idx[d] += 1;
            at += strides[d];
            if idx[d] < out_shape[d] {
                break;
            }
            at -= strides[d] * idx[d];
            idx[d] = 0;
        }
    }
    out
}

/// To and from channels-last, the default flow's every activation: the permutation of
/// `shape` as `batches` row-major `[rows, cols]` matrices each transposed.
fn batched_transpose(shape: &[usize], perm: &[usize]) -> Option<(usize, usize, usize)> {
    match (shape, perm) {
        ([n, c, h, w], [0, 2, 3, 1]) => Some((*n, *c, h * w)),
        ([n, h, w, c], [0, 3, 1, 2]) => Some((*n, h * w, *c)),
        _ => None,
    }
}

/// `batches` row-major `[rows, cols]` matrices, each transposed to `[cols, rows]`: blocks of
/// rows that stay in cache, each output row written as one contiguous run from a strided
/// walk of the block (no index is checked per element).
fn transpose_batched<T: Copy>(data: &[T], batches: usize, rows: usize, cols: usize) -> Vec<T> {
    const BLOCK_ROWS: usize = 64;
    let size = rows * cols;
    let mut out = data[..batches * size].to_vec();
    if size == 0 {
        return out;
    }
    for (src, dst) in data.chunks_exact(size).zip(out.chunks_exact_mut(size)) {
        for r0 in (0..rows).step_by(BLOCK_ROWS) {
            let r1 = (r0 + BLOCK_ROWS).min(rows);
            let block = &src[r0 * cols..r1 * cols];
            for c in 0..cols {
                let run = &mut dst[c * rows + r0..c * rows + r1];
                for (d, &v) in run.iter_mut().zip(block[c..].iter().step_by(cols)) {
                    *d = v;
                }
            }
        }
    }
    out
}

/// The inverse of a permutation.
pub fn inverse(perm: &[usize]) -> Vec<usize> {
    let mut inv = vec![0usize; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    inv
}

macro_rules! each_buf {
    ($buf:expr, $v:ident => $e:expr) => {
        match $buf {
            Buf::F32($v) => Buf::F32($e),
            Buf::F64($v) => Buf::F64($e),
            Buf::I8($v) => Buf::I8($e),
            Buf::U8($v) => Buf::U8($e),
            Buf::I16($v) => Buf::I16($e),
            Buf::I32($v) => Buf::I32($e),
            Buf::I64($v) => Buf::I64($e),
            Buf::Bool($v) => Buf::Bool($e),
        }
    };
}

/// `buf` of `shape` reordered by `perm` (output dim `i` = input dim `perm[i]`), any element type.
pub fn permute_buf(buf: &Buf, shape: &[usize], perm: &[usize]) -> Buf {
    if let Buf::I8(v) = buf {
        return Buf::I8(permute_i8(v, shape, perm));
    }
    each_buf!(buf, v => permute(v, shape, perm))
}

/// [`permute`] of bytes, to and from channels-last by the blocked byte transpose.
fn permute_i8(data: &[i8], shape: &[usize], perm: &[usize]) -> Vec<i8> {
    match batched_transpose(shape, perm) {
        Some((batches, rows, cols)) => transpose_i8::transpose_batched(data, batches, rows, cols),
        None => permute(data, shape, perm),
    }
}

/// Logical (row-major) elements → the order `dim_order` stores them in. `shape` and
/// `dim_order` must agree in rank and the element count must match (callers check).
pub fn to_memory(buf: &Buf, shape: &[usize], dim_order: &[usize]) -> Buf {
    if is_contiguous(dim_order) {
        return buf.clone();
    }
    permute_buf(buf, shape, dim_order)
}

/// Stored elements (in `dim_order`) → logical row-major order.
pub fn from_memory(buf: &Buf, shape: &[usize], dim_order: &[usize]) -> Buf {
    if is_contiguous(dim_order) {
        return buf.clone();
    }
    permute_buf(buf, &memory_dims(shape, dim_order), &inverse(dim_order))
}

/// Sizes right-aligned to rank 4 (leading 1s), as the Cortex-M ops pass them to CMSIS-NN.
pub fn dims4(shape: &[usize]) -> Option<[usize; 4]> {
    if shape.len() > 4 {
        return None;
    }
    let mut d = [1usize; 4];
    d[4 - shape.len()..].copy_from_slice(shape);
    Some(d)
}

/// Row-major strides (in elements) of `shape`.
pub fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

/// Calls `f` with every multi-index of `shape`, in row-major order.
pub fn for_each_index(shape: &[usize], mut f: impl FnMut(&[usize])) {
    let n: usize = shape.iter().product();
    let mut index = vec![0usize; shape.len()];
    for _ in 0..n {
        f(&index);
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

/// Whether a tensor of shape `from` broadcasts to `to` as it is (right-aligned, its size-1 dims
/// repeated, leading dims added), without `to` growing.
pub fn broadcasts_to(from: &[usize], to: &[usize]) -> bool {
    from.len() <= to.len()
        && from
            .iter()
            .rev()
            .zip(to.iter().rev())
            .all(|(&a, &b)| a == b || a == 1)
}

/// Numpy-style broadcast of two shapes of any rank, or `None` when they do not broadcast.
pub fn broadcast_shape(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    let dim = |s: &[usize], i: usize| (i + s.len()).checked_sub(rank).map_or(1, |j| s[j]);
    (0..rank)
        .map(|i| match (dim(a, i), dim(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// For each element of a tensor of `out` shape, the flat index of the element of a tensor of
/// `shape` (right-aligned, broadcast along its size-1 dims) that it reads.
pub fn broadcast_index(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let rank = out.len();
    let lead = rank - shape.len().min(rank);
    let mut strides = vec![0usize; rank];
    let mut acc = 1usize;
    for i in (lead..rank).rev() {
        let d = shape[i - lead];
        strides[i] = if d == 1 { 0 } else { acc };
        acc *= d;
    }
    let n: usize = out.iter().product();
    let mut idx = Vec::with_capacity(n);
    let mut pos = vec![0usize; rank];
    let mut at = 0usize;
    for _ in 0..n {
        idx.push(at);
        for d in (0..rank).rev() {
            pos[d] += 1;
            at += strides[d];
            if pos[d] < out[d] {
                break;
            }
            at -= strides[d] * pos[d];
            pos[d] = 0;
        }
    }
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_round_trip_through_channels_last() {
        // NCHW [1, 2, 2, 3] stored channels-last
        let logical: Vec<i8> = (0..12).collect();
        let order = [0, 2, 3, 1];
        let mem = to_memory(&Buf::I8(logical.clone()), &[1, 2, 2, 3], &order);
        // memory is NHWC: (h, w, c) with c fastest; element (c=1, h=0, w=0) is logical 6
        let Buf::I8(m) = &mem else { panic!() };
        assert_eq!(&m[..4], &[0, 6, 1, 7]);
        assert_eq!(from_memory(&mem, &[1, 2, 2, 3], &order), Buf::I8(logical));
    }

    #[test]
    fn permute_equals_its_definition_for_every_permutation_of_rank_four() {
        // the second shape crosses the transpose's tiles
        for shape in [[2, 3, 1, 4], [2, 37, 5, 9], [1, 5, 40, 33]] {
            let n: usize = shape.iter().product();
            let data: Vec<u16> = (0..n as u16).collect();
            let at = |i: [usize; 4]| ((i[0] * shape[1] + i[1]) * shape[2] + i[2]) * shape[3] + i[3];
            for perm in [
                [0, 1, 2, 3],
                [0, 2, 3, 1],
                [0, 3, 1, 2],
                [3, 2, 1, 0],
                [1, 3, 0, 2],
            ] {
                let got = permute(&data, &shape, &perm);
                let os: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
                let mut want = Vec::new();
                for a in 0..os[0] {
                    for b in 0..os[1] {
                        for c in 0..os[2] {
                            for d in 0..os[3] {
                                let mut i = [0; 4];
                                for (k, v) in [a, b, c, d].into_iter().enumerate() {
                                    i[perm[k]] = v;
                                }
                                want.push(data[at(i)]);
                            }
                        }
                    }
                }
                assert_eq!(got, want, "shape {shape:?}, perm {perm:?}");
            }
        }
        assert_eq!(permute(&[5u8], &[], &[]), vec![5]);
        assert_eq!(permute::<u8>(&[], &[2, 0], &[1, 0]), Vec::<u8>::new());
    }

    #[test]
    fn any_rank_broadcast_follows_numpy() {
        assert_eq!(broadcast_shape(&[2, 1, 3], &[4, 1]), Some(vec![2, 4, 3]));
        assert_eq!(broadcast_shape(&[], &[3]), Some(vec![3]));
        assert_eq!(broadcast_shape(&[2, 3], &[3, 2]), None);
        assert_eq!(broadcast_index(&[3], &[2, 3]), vec![0, 1, 2, 0, 1, 2]);
        assert_eq!(broadcast_index(&[2, 1], &[2, 3]), vec![0, 0, 0, 1, 1, 1]);
        assert_eq!(broadcast_index(&[], &[2]), vec![0, 0]);
        assert_eq!(
            broadcast_shape(&[1, 2, 3, 1], &[4, 1, 1, 3]),
            Some(vec![4, 2, 3, 3])
        );
        assert_eq!(broadcast_shape(&[1, 2, 3, 1], &[1, 3, 3, 1]), None);
    }

    #[test]
    fn ambiguous_layouts_count_as_channels_last() {
        assert!(is_channels_last(&[1, 1, 49, 10], &[0, 2, 1, 3]));
        assert!(is_channels_last(&[1, 8, 1, 1], &[0, 1, 2, 3]));
        assert!(!is_channels_last(&[1, 8, 2, 2], &[0, 1, 2, 3]));
        assert!(is_channels_last(&[1, 8, 2, 2], &[0, 2, 3, 1]));
    }
}

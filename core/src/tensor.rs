//! Host tensors: a dtype, a logical shape and contiguous little-endian bytes, with conversion to
//! `f64` and the summary statistics tables show.

use serde::Serialize;

use crate::dtype::ScalarType;
use crate::error::{Error, Result};

/// Largest tensor (in bytes) a program may describe; anything bigger is refused as hostile.
pub const MAX_TENSOR_BYTES: u64 = 1 << 32;

/// Number of elements and bytes of a tensor with `sizes`, refusing hostile sizes before any allocation.
pub fn checked_tensor_size(
    sizes: impl IntoIterator<Item = i64>,
    dtype: ScalarType,
    what: &str,
) -> Result<(u64, u64)> {
    let mut numel: u128 = 1;
    for s in sizes {
        if s < 0 {
            return Err(Error::invalid(what, format!("negative dimension {s}")));
        }
        numel = numel.saturating_mul(s as u128);
    }
    let elem = dtype.element_size().unwrap_or(1) as u128;
    let nbytes = numel.saturating_mul(elem);
    if nbytes > u128::from(MAX_TENSOR_BYTES) {
        return Err(Error::TooLarge {
            what: what.to_string(),
            claimed: nbytes,
            limit: MAX_TENSOR_BYTES,
        });
    }
    Ok((numel as u64, nbytes as u64))
}

/// A dense, row-major tensor held on the host.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorData {
    pub dtype: ScalarType,
    pub shape: Vec<usize>,
    /// Row-major (logical order) little-endian element bytes.
    pub bytes: Vec<u8>,
}

/// Summary statistics over the elements of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TensorStats {
    pub numel: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub std: f64,
    /// Count of NaN or infinite elements.
    pub non_finite: usize,
}

impl TensorData {
    /// A tensor from parts, checking that the byte count matches shape × element size.
    pub fn new(dtype: ScalarType, shape: Vec<usize>, bytes: Vec<u8>) -> Result<Self> {
        let elem = dtype.element_size().ok_or_else(|| {
            Error::invalid(
                "tensor",
                format!("unsupported element type {}", dtype.name()),
            )
        })?;
        let numel = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        match numel.and_then(|n| n.checked_mul(elem)) {
            Some(n) if n == bytes.len() => Ok(TensorData {
                dtype,
                shape,
                bytes,
            }),
            _ => Err(Error::invalid(
                "tensor",
                format!(
                    "shape {shape:?} of {} needs a different byte count than {}",
                    dtype.name(),
                    bytes.len()
                ),
            )),
        }
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Every element converted to `f64` (integers exactly, bool as 0/1).
    pub fn to_f64(&self) -> Result<Vec<f64>> {
        use ScalarType::*;
        let b = &self.bytes;
        macro_rules! conv {
            ($t:ty, $n:expr) => {
                b.chunks_exact($n)
                    .map(|c| <$t>::from_le_bytes(c.try_into().unwrap_or([0; $n])) as f64)
                    .collect()
            };
        }
        Ok(match self.dtype {
            Byte | QUInt8 | Bool => b.iter().map(|&x| f64::from(x)).collect(),
            Char | QInt8 => b.iter().map(|&x| f64::from(x as i8)).collect(),
            Short => conv!(i16, 2),
            UInt16 => conv!(u16, 2),
            Int | QInt32 => conv!(i32, 4),
            UInt32 => conv!(u32, 4),
            Long => conv!(i64, 8),
            UInt64 => conv!(u64, 8),
            Float => conv!(f32, 4),
            Double => conv!(f64, 8),
            Half => b
                .chunks_exact(2)
                .map(|c| f16_to_f64(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
            BFloat16 => b
                .chunks_exact(2)
                .map(|c| {
                    f64::from(f32::from_bits(
                        u32::from(u16::from_le_bytes([c[0], c[1]])) << 16,
                    ))
                })
                .collect(),
            other => {
                return Err(Error::invalid(
                    "tensor",
                    format!("cannot convert {} elements to numbers", other.name()),
                ))
            }
        })
    }

    /// min/max/mean/std over all elements (NaN/inf counted apart and left out).
    pub fn stats(&self) -> Result<TensorStats> {
        let values = self.to_f64()?;
        Ok(stats_of(&values))
    }
}

/// Summary statistics of a slice of values.
pub fn stats_of(values: &[f64]) -> TensorStats {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let n = finite.len();
    let (mut min, mut max, mut sum) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
    for &v in &finite {
        min = min.min(v);
        max = max.max(v);
        sum += v;
    }
    let mean = if n > 0 { sum / n as f64 } else { 0.0 };
    let var = if n > 0 {
        finite.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64
    } else {
        0.0
    };
    TensorStats {
        numel: values.len(),
        min: if n > 0 { min } else { 0.0 },
        max: if n > 0 { max } else { 0.0 },
        mean,
        std: var.sqrt(),
        non_finite: values.len() - n,
    }
}

fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f64::from(h & 0x3ff);
    match exp {
        0 => sign * frac * 2f64.powi(-24),
        31 => {
            if frac == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            }
        }
        e => sign * (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

/// Reorders a tensor stored in `dim_order` memory order into logical row-major order.
///
/// `sizes` are the logical sizes; `bytes` hold the elements in the physical order that
/// `dim_order` describes (e.g. `[0,2,3,1]` = NHWC storage of an NCHW tensor).
pub fn undo_dim_order(
    sizes: &[usize],
    dim_order: &[u8],
    elem: usize,
    bytes: &[u8],
) -> Result<Vec<u8>> {
    let rank = sizes.len();
    if dim_order.is_empty() || dim_order.iter().enumerate().all(|(i, &d)| d as usize == i) {
        return Ok(bytes.to_vec());
    }
    let mut seen = vec![false; rank];
    let is_permutation = dim_order.len() == rank
        && dim_order
            .iter()
            .all(|&d| (d as usize) < rank && !std::mem::replace(&mut seen[d as usize], true));
    if !is_permutation {
        return Err(Error::invalid(
            "dim_order",
            format!("{dim_order:?} does not fit {rank} dims"),
        ));
    }
    let numel: usize = sizes.iter().product();
    if bytes.len() != numel * elem {
        return Err(Error::invalid(
            "tensor bytes",
            format!("{} bytes for {numel} elements of {elem} bytes", bytes.len()),
        ));
    }
    // physical strides (in elements) of each logical dim
    let mut strides = vec![0usize; rank];
    let mut acc = 1usize;
    for &d in dim_order.iter().rev() {
        strides[d as usize] = acc;
        acc *= sizes[d as usize];
    }
    let mut out = vec![0u8; bytes.len()];
    let mut idx = vec![0usize; rank];
    for logical in 0..numel {
        let phys: usize = idx.iter().zip(&strides).map(|(i, s)| i * s).sum();
        out[logical * elem..(logical + 1) * elem]
            .copy_from_slice(&bytes[phys * elem..(phys + 1) * elem]);
        for d in (0..rank).rev() {
            idx[d] += 1;
            if idx[d] < sizes[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_last_bytes_come_back_in_logical_order() {
        // logical NCHW [1,2,1,2]: c0 = [0,1], c1 = [2,3]; NHWC storage interleaves channels.
        let nhwc = [0u8, 2, 1, 3];
        let out = undo_dim_order(&[1, 2, 1, 2], &[0, 2, 3, 1], 1, &nhwc).unwrap();
        assert_eq!(out, vec![0, 1, 2, 3]);
    }

    #[test]
    fn stats_skip_non_finite() {
        let s = stats_of(&[1.0, 3.0, f64::NAN]);
        assert_eq!((s.min, s.max, s.mean, s.non_finite), (1.0, 3.0, 2.0, 1));
    }

    #[test]
    fn wrong_byte_count_is_refused() {
        assert!(TensorData::new(ScalarType::Float, vec![2, 2], vec![0; 15]).is_err());
    }
}

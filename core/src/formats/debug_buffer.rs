//! The ETDump debug buffer: resolves a debug event's [`TensorRef`] (dtype, sizes, strides, byte
//! offset) to the tensor's bytes, gathered into logical row-major order.

use crate::error::{Error, Result};
use crate::formats::etdump::{DebugValue, ETDump, Event, TensorRef};
use crate::formats::pte::slice_of;
use crate::tensor::TensorData;

/// One captured intermediate output: where it came from and its tensor.
#[derive(Debug, Clone)]
pub struct CapturedTensor {
    /// Index of the run in `ETDump::runs`.
    pub run: usize,
    pub chain_index: u64,
    pub instruction_id: i32,
    /// Position within a tensor list (0 for a single tensor).
    pub list_index: usize,
    pub is_program_output: bool,
    pub delegate_debug_id_int: i32,
    pub delegate_debug_id_str: Option<String>,
    pub tensor: TensorData,
}

/// The largest tensor a debug event may describe (its sizes come from the file).
pub const MAX_DEBUG_TENSOR_BYTES: u64 = 256 << 20;
/// The most bytes all of one ETDump's captured tensors may expand to.
pub const MAX_CAPTURED_BYTES: u64 = 1 << 30;

/// Resolves one tensor reference against the debug buffer.
pub fn resolve(buffer: &[u8], t: &TensorRef) -> Result<TensorData> {
    let elem = t.scalar_type.element_size().ok_or_else(|| {
        Error::invalid(
            "debug tensor",
            format!("unsupported element type {}", t.scalar_type.name()),
        )
    })?;
    let shape: Vec<usize> = t
        .sizes
        .iter()
        .map(|&s| usize::try_from(s).unwrap_or(0))
        .collect();
    let too_large = |claimed: u128| Error::TooLarge {
        what: format!("debug tensor of sizes {:?}", t.sizes),
        claimed,
        limit: MAX_DEBUG_TENSOR_BYTES,
    };
    // element count and bytes, checked: sizes come from the file
    let numel_wide: u128 = shape
        .iter()
        .fold(1u128, |acc, &d| acc.saturating_mul(d as u128));
    let bytes_wide = numel_wide.saturating_mul(elem as u128);
    if bytes_wide > u128::from(MAX_DEBUG_TENSOR_BYTES) {
        return Err(too_large(bytes_wide));
    }
    let numel = numel_wide as usize;
    if numel == 0 || t.offset < 0 {
        return TensorData::new(
            t.scalar_type,
            if numel == 0 { shape } else { vec![0] },
            Vec::new(),
        );
    }
    let strides: Vec<i64> = if t.strides.len() == t.sizes.len() {
        t.strides.clone()
    } else {
        contiguous_strides(&t.sizes)
    };
    if strides.iter().any(|&s| s < 0) {
        return Err(Error::invalid(
            "debug tensor",
            format!("negative stride in {strides:?}"),
        ));
    }
    // the last element's index + 1, in u128 so no stride can wrap it
    let extent_elems: u128 = shape.iter().zip(&strides).fold(1u128, |acc, (&s, &st)| {
        acc.saturating_add((s as u128 - 1).saturating_mul(st as u128))
    });
    let extent_wide = extent_elems.saturating_mul(elem as u128);
    if extent_wide > buffer.len() as u128 {
        return Err(Error::Truncated {
            what: format!(
                "debug buffer tensor at offset {} (sizes {:?}, strides {strides:?})",
                t.offset, t.sizes
            ),
            needed: u64::try_from(extent_wide.saturating_add(t.offset as u128)).unwrap_or(u64::MAX),
            available: buffer.len() as u64,
        });
    }
    let extent = extent_wide as u64;
    let src = slice_of(
        buffer,
        t.offset as u64,
        extent,
        &format!("debug buffer tensor at offset {}", t.offset),
    )?;
    if strides == contiguous_strides(&t.sizes) {
        return TensorData::new(t.scalar_type, shape, src.to_vec());
    }
    let mut out = Vec::with_capacity(numel * elem);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..numel {
        let at: usize = idx
            .iter()
            .zip(&strides)
            .map(|(&i, &s)| i * s as usize)
            .sum::<usize>()
            * elem;
        out.extend_from_slice(&src[at..at + elem]);
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    TensorData::new(t.scalar_type, shape, out)
}

/// Row-major strides (in elements) for `sizes`.
pub fn contiguous_strides(sizes: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; sizes.len()];
    for d in (0..sizes.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * sizes[d + 1].max(1);
    }
    strides
}

/// Every tensor captured in `etdump`'s debug events, resolved against `buffer`, in event order.
pub fn captured_tensors(etdump: &ETDump, buffer: &[u8]) -> Result<Vec<CapturedTensor>> {
    let mut out = Vec::new();
    let mut total: u64 = 0;
    for (ri, run) in etdump.runs.iter().enumerate() {
        for ev in &run.events {
            let Event::Debug(d) = ev else { continue };
            let refs: Vec<&TensorRef> = match &d.value {
                DebugValue::Tensor(t) => vec![t],
                DebugValue::TensorList(ts) => ts.iter().collect(),
                _ => continue,
            };
            for (li, t) in refs.into_iter().enumerate() {
                let tensor = resolve(buffer, t).map_err(|e| match e {
                    Error::Truncated {
                        what,
                        needed,
                        available,
                    } => Error::Truncated {
                        what: format!("{what} (instruction {} of run {ri})", d.instruction_id),
                        needed,
                        available,
                    },
                    other => other,
                })?;
                total = total.saturating_add(tensor.bytes.len() as u64);
                if total > MAX_CAPTURED_BYTES {
                    return Err(Error::TooLarge {
                        what: "the captured tensors of the ETDump, together".into(),
                        claimed: u128::from(total),
                        limit: MAX_CAPTURED_BYTES,
                    });
                }
                out.push(CapturedTensor {
                    run: ri,
                    chain_index: d.chain_index,
                    instruction_id: d.instruction_id,
                    list_index: li,
                    is_program_output: d.is_program_output,
                    delegate_debug_id_int: d.delegate_debug_id_int,
                    delegate_debug_id_str: d.delegate_debug_id_str.clone(),
                    tensor,
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::ScalarType;

    #[test]
    fn strided_tensor_is_gathered_in_logical_order() {
        // 2x2 int8 stored transposed: logical [[0,1],[2,3]] with strides [1,2]
        let buf = [0u8, 2, 1, 3];
        let t = TensorRef {
            scalar_type: ScalarType::Char,
            sizes: vec![2, 2],
            strides: vec![1, 2],
            offset: 0,
        };
        assert_eq!(resolve(&buf, &t).unwrap().bytes, vec![0, 1, 2, 3]);
    }

    #[test]
    fn sizes_whose_product_overflows_128_bits_are_refused() {
        // found by fuzzing: the element count itself overflowed
        let t = TensorRef {
            scalar_type: ScalarType::Float,
            sizes: vec![i64::MAX; 6],
            strides: vec![i64::MAX; 6],
            offset: 0,
        };
        assert!(matches!(
            resolve(&[0u8; 64], &t),
            Err(Error::TooLarge { .. })
        ));
        let t = TensorRef {
            sizes: vec![1 << 20, 1 << 20],
            strides: vec![0, 0],
            ..t
        };
        assert!(matches!(
            resolve(&[0u8; 64], &t),
            Err(Error::TooLarge { .. })
        ));
    }

    #[test]
    fn offset_past_the_buffer_is_truncated() {
        let t = TensorRef {
            scalar_type: ScalarType::Float,
            sizes: vec![4],
            strides: vec![1],
            offset: 8,
        };
        assert!(matches!(
            resolve(&[0u8; 16], &t),
            Err(Error::Truncated { .. })
        ));
    }
}

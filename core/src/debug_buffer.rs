//! The ETDump debug buffer: resolves a debug event's [`TensorRef`] (dtype, sizes, strides, byte
//! offset) to the tensor's bytes, gathered into logical row-major order.

use crate::error::{Error, Result};
use crate::etdump::{DebugValue, ETDump, Event, TensorRef};
use crate::pte::slice_of;
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
    let numel: usize = shape.iter().product();
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
    let extent_elems: u64 = 1 + t
        .sizes
        .iter()
        .zip(&strides)
        .map(|(&s, &st)| (s as u64 - 1) * st as u64)
        .sum::<u64>();
    let extent = extent_elems
        .checked_mul(elem as u64)
        .ok_or_else(|| Error::TooLarge {
            what: "debug tensor extent".into(),
            claimed: u128::from(extent_elems) * elem as u128,
            limit: u64::MAX,
        })?;
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

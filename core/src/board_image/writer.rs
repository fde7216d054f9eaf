//! The image's byte buffer: aligned appends within the board's size, little-endian fields, and
//! tensor bytes rearranged into their storage order.

use super::{BoardImageError, MAX_BOARD_BYTES};

/// The image being written: the header first, each section appended after it.
pub(super) struct Writer {
    pub(super) buf: Vec<u8>,
}

impl Writer {
    /// A buffer holding `header` zero bytes.
    pub(super) fn with_header(header: usize) -> Writer {
        Writer {
            buf: vec![0u8; header],
        }
    }
    pub(super) fn align(&mut self, to: usize) {
        while !self.buf.len().is_multiple_of(to) {
            self.buf.push(0);
        }
    }
    /// Appends `data` at the next multiple of `align`; its offset.
    pub(super) fn append(&mut self, data: &[u8], align: usize) -> Result<u32, BoardImageError> {
        self.align(align);
        let at = self.buf.len();
        self.buf.extend_from_slice(data);
        if self.buf.len() > MAX_BOARD_BYTES {
            return Err(BoardImageError::TooLarge(self.buf.len()));
        }
        Ok(at as u32)
    }
    pub(super) fn put_u32(&mut self, at: usize, v: u32) {
        self.buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
}

pub(super) fn le_u32s(items: impl IntoIterator<Item = u32>) -> Vec<u8> {
    items.into_iter().flat_map(u32::to_le_bytes).collect()
}

/// Bytes of `data` (row-major over `shape`) rearranged into the memory order `dim_order`.
pub(super) fn to_storage_order(
    data: &[u8],
    elem: usize,
    shape: &[usize],
    dim_order: &[usize],
) -> Vec<u8> {
    let rank = shape.len();
    if dim_order.iter().enumerate().all(|(i, &d)| i == d) || elem == 0 {
        return data.to_vec();
    }
    let mut logical_strides = vec![1usize; rank];
    for d in (0..rank.saturating_sub(1)).rev() {
        logical_strides[d] = logical_strides[d + 1] * shape[d + 1];
    }
    let mem_shape: Vec<usize> = dim_order.iter().map(|&d| shape[d]).collect();
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n * elem);
    let mut idx = vec![0usize; rank];
    for _ in 0..n {
        let src: usize = (0..rank)
            .map(|m| idx[m] * logical_strides[dim_order[m]])
            .sum();
        out.extend_from_slice(&data[src * elem..(src + 1) * elem]);
        for m in (0..rank).rev() {
            idx[m] += 1;
            if idx[m] < mem_shape[m] {
                break;
            }
            idx[m] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_order_moves_channels_last() {
        // [1, 2, 1, 2] logical NCHW → NHWC memory
        let data = [0u8, 1, 2, 3];
        let out = to_storage_order(&data, 1, &[1, 2, 1, 2], &[0, 2, 3, 1]);
        assert_eq!(out, vec![0, 2, 1, 3]);
    }
}

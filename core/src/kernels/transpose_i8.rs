//! Byte matrices transposed sixteen rows by eight columns at a time: the reorder between an
//! int8 activation's logical (NCHW) order and the channels-last order the default flow stores
//! it in, which every channels-last kernel's output goes through. On x86-64 each 16 × 8 block
//! is four rounds of SSE2 byte, word, dword and qword unpacks (SSE2 is part of x86-64); the
//! edges, and every other machine, take the element loop. Both move bytes only, so the result
//! is the same (tested against the element loop).

/// `batches` row-major `[rows, cols]` byte matrices, each transposed to `[cols, rows]`.
pub fn transpose_batched(data: &[i8], batches: usize, rows: usize, cols: usize) -> Vec<i8> {
    let size = rows * cols;
    let mut out = vec![0i8; batches * size];
    if size == 0 {
        return out;
    }
    for (src, dst) in data.chunks_exact(size).zip(out.chunks_exact_mut(size)) {
        transpose(src, dst, rows, cols);
    }
    out
}

/// One matrix: `dst[c · rows + r] = src[r · cols + c]`.
fn transpose(src: &[i8], dst: &mut [i8], rows: usize, cols: usize) {
    let (rows16, cols8) = blocked(rows, cols);
    #[cfg(target_arch = "x86_64")]
    for r0 in (0..rows16).step_by(16) {
        for c0 in (0..cols8).step_by(8) {
            // SAFETY: SSE2 is part of every x86-64 CPU
            unsafe { block_16x8(src, dst, rows, cols, r0, c0) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    element_loop(src, dst, rows, cols, (0, rows16), (0, cols8));
    // the edges: the rows below the last whole block, every column; the columns right of
    // the last whole block, the blocked rows
    element_loop(src, dst, rows, cols, (rows16, rows), (0, cols));
    element_loop(src, dst, rows, cols, (0, rows16), (cols8, cols));
}

/// The rows and columns covered by whole 16 × 8 blocks.
fn blocked(rows: usize, cols: usize) -> (usize, usize) {
    (rows - rows % 16, cols - cols % 8)
}

/// The transpose of rows `r.0..r.1` and columns `c.0..c.1`, one element at a time.
fn element_loop(
    src: &[i8],
    dst: &mut [i8],
    rows: usize,
    cols: usize,
    r: (usize, usize),
    c: (usize, usize),
) {
    if r.0 >= r.1 {
        return;
    }
    // each output row a contiguous run from a strided walk (no index checked per element)
    for col in c.0..c.1 {
        let run = &mut dst[col * rows + r.0..col * rows + r.1];
        for (d, &v) in run
            .iter_mut()
            .zip(src[r.0 * cols + col..].iter().step_by(cols))
        {
            *d = v;
        }
    }
}

/// Rows `r0..r0 + 16`, columns `c0..c0 + 8` transposed in registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn block_16x8(src: &[i8], dst: &mut [i8], rows: usize, cols: usize, r0: usize, c0: usize) {
    use std::arch::x86_64::{
        _mm_loadl_epi64, _mm_setzero_si128, _mm_storeu_si128, _mm_unpackhi_epi16,
        _mm_unpackhi_epi32, _mm_unpackhi_epi64, _mm_unpacklo_epi16, _mm_unpacklo_epi32,
        _mm_unpacklo_epi64, _mm_unpacklo_epi8,
    };
    assert!(
        r0 + 16 <= rows && c0 + 8 <= cols && src.len() >= rows * cols && dst.len() >= rows * cols
    );
    let zero = _mm_setzero_si128();
    // row i's eight bytes
    let mut a = [zero; 16];
    for (i, a) in a.iter_mut().enumerate() {
        // SAFETY: (r0 + i) · cols + c0 + 8 ≤ rows · cols ≤ src.len() (asserted): an unaligned
        // 8-byte load
        *a = unsafe { _mm_loadl_epi64(src.as_ptr().add((r0 + i) * cols + c0).cast()) };
    }
    // rows 2k, 2k+1 interleaved: 16-bit lane j holds column j of both
    let mut b = [zero; 8];
    for (k, b) in b.iter_mut().enumerate() {
        *b = _mm_unpacklo_epi8(a[2 * k], a[2 * k + 1]);
    }
    // rows 4k..4k+4: 32-bit lane j holds column j (lo: columns 0..4, hi: columns 4..8)
    let (mut lo, mut hi) = ([zero; 4], [zero; 4]);
    for k in 0..4 {
        lo[k] = _mm_unpacklo_epi16(b[2 * k], b[2 * k + 1]);
        hi[k] = _mm_unpackhi_epi16(b[2 * k], b[2 * k + 1]);
    }
    for (half, quads) in [lo, hi].iter().enumerate() {
        // rows 0..8 and 8..16: 64-bit lane j holds column j of the pair
        let top = [
            _mm_unpacklo_epi32(quads[0], quads[1]),
            _mm_unpackhi_epi32(quads[0], quads[1]),
        ];
        let bottom = [
            _mm_unpacklo_epi32(quads[2], quads[3]),
            _mm_unpackhi_epi32(quads[2], quads[3]),
        ];
        for pair in 0..2 {
            let columns = [
                _mm_unpacklo_epi64(top[pair], bottom[pair]),
                _mm_unpackhi_epi64(top[pair], bottom[pair]),
            ];
            for (j, column) in columns.into_iter().enumerate() {
                let col = c0 + half * 4 + pair * 2 + j;
                // SAFETY: col · rows + r0 + 16 ≤ cols · rows ≤ dst.len() (asserted): an
                // unaligned 16-byte store
                unsafe { _mm_storeu_si128(dst.as_mut_ptr().add(col * rows + r0).cast(), column) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_edges_equal_the_element_loop_on_every_small_shape() {
        let mut seed = 1u32;
        for rows in [0, 1, 7, 15, 16, 17, 31, 32, 33, 48, 100] {
            for cols in [0, 1, 3, 7, 8, 9, 16, 24, 27, 64] {
                let batches = 1 + (rows + cols) % 3;
                let src: Vec<i8> = (0..batches * rows * cols)
                    .map(|_| {
                        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                        (seed >> 16) as i8
                    })
                    .collect();
                let mut want = vec![0i8; src.len()];
                if rows * cols > 0 {
                    for (s, d) in src
                        .chunks_exact(rows * cols)
                        .zip(want.chunks_exact_mut(rows * cols))
                    {
                        element_loop(s, d, rows, cols, (0, rows), (0, cols));
                    }
                }
                assert_eq!(
                    transpose_batched(&src, batches, rows, cols),
                    want,
                    "{batches} × [{rows}, {cols}]"
                );
            }
        }
    }
}

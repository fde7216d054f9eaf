//! ExecuTorch's external tensor data file (`.ptd`, FlatTensor): weights a program keeps outside
//! itself (`ExecutorchBackendConfig(external_constants=True)`), named by the fully qualified
//! name the program's tensors carry.
//!
//! Layout (ExecuTorch 1.5.1, `extension/flat_tensor`): bytes 0..4 the FlatBuffer root offset,
//! 4..8 the identifier `FT01`, then a header at offset 8: magic `FH01`, header length (u32, ≥ 40),
//! FlatBuffer offset and size, segment base offset and segment data size (u64 each, little
//! endian). The FlatBuffer (`schemas/flat_tensor.fbs`) lists segments (offset, size relative to
//! the segment base) and named entries pointing at them.

use std::ops::Range;

use crate::error::{Error, Result};
use crate::formats::flatbuf::{
    check_identifier, root_accepting_unaligned_empty_vectors, verifier_options,
};
use crate::formats::generated::flat_tensor::flat_tensor_flatbuffer as fb;
use crate::ScalarType;

const KIND: &str = "external tensor data (.ptd)";

/// Layout of a named tensor, when the file records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorLayout {
    pub scalar_type: ScalarType,
    pub sizes: Vec<i32>,
    pub dim_order: Vec<u8>,
}

/// One named blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedBlob {
    pub key: String,
    pub segment_index: usize,
    /// Byte range in the file.
    pub range: Range<usize>,
    pub layout: Option<TensorLayout>,
}

/// A parsed `.ptd` file.
#[derive(Debug, Clone)]
pub struct FlatTensorFile {
    pub version: u32,
    pub segment_count: usize,
    pub entries: Vec<NamedBlob>,
    bytes: Vec<u8>,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

fn end_of(start: u64, size: u64, what: &str, len: usize) -> Result<usize> {
    let end = start
        .checked_add(size)
        .ok_or_else(|| Error::invalid(what, "offset + size overflows"))?;
    if end > len as u64 {
        return Err(Error::Truncated {
            what: what.to_string(),
            needed: end,
            available: len as u64,
        });
    }
    Ok(end as usize)
}

impl FlatTensorFile {
    /// Parses and checks a `.ptd`: header, FlatBuffer (verified), every segment inside the file.
    pub fn parse(bytes: Vec<u8>) -> Result<FlatTensorFile> {
        check_identifier(&bytes, 4, "FT01", KIND)?;
        if bytes.len() < 48 {
            return Err(Error::Truncated {
                what: "FlatTensor header".into(),
                needed: 48,
                available: bytes.len() as u64,
            });
        }
        if &bytes[8..12] != b"FH01" {
            return Err(Error::invalid(
                "FlatTensor header",
                format!(
                    "magic {:?}, expected \"FH01\"",
                    String::from_utf8_lossy(&bytes[8..12])
                ),
            ));
        }
        let header_len = u32_at(&bytes, 12);
        if header_len < 40 {
            return Err(Error::invalid(
                "FlatTensor header",
                format!("length {header_len} < 40"),
            ));
        }
        let (fb_offset, fb_size) = (u64_at(&bytes, 16), u64_at(&bytes, 24));
        let (seg_base, seg_size) = (u64_at(&bytes, 32), u64_at(&bytes, 40));
        let fb_end = end_of(fb_offset, fb_size, "FlatTensor flatbuffer", bytes.len())?;
        end_of(seg_base, seg_size, "FlatTensor segment data", bytes.len())?;
        let opts = verifier_options(fb_end);
        let mut realigned = None;
        let root = root_accepting_unaligned_empty_vectors(
            &bytes[..fb_end],
            &mut realigned,
            |b| fb::root_as_flat_tensor_with_opts(&opts, b),
            |b| fb::root_as_flat_tensor_with_opts(&opts, b).map(|_| ()),
        )
        .map_err(|e| Error::Corrupt {
            kind: KIND,
            detail: e.to_string(),
        })?;
        let mut segments = Vec::new();
        for (i, s) in root.segments().into_iter().flatten().enumerate() {
            let start = seg_base
                .checked_add(s.offset())
                .ok_or_else(|| Error::invalid(format!("segment {i}"), "offset overflows"))?;
            let end = end_of(start, s.size(), &format!("segment {i}"), bytes.len())?;
            segments.push(start as usize..end);
        }
        let mut entries = Vec::new();
        for n in root.named_data().into_iter().flatten() {
            let key = n.key().unwrap_or_default().to_string();
            let segment_index = n.segment_index() as usize;
            let range = segments.get(segment_index).cloned().ok_or_else(|| {
                Error::out_of_range(
                    format!("named_data[{key}].segment_index"),
                    segment_index as i64,
                    segments.len(),
                )
            })?;
            let layout = n.tensor_layout().map(|l| TensorLayout {
                scalar_type: ScalarType::from_code(l.scalar_type().0),
                sizes: l.sizes().map(|v| v.iter().collect()).unwrap_or_default(),
                dim_order: l
                    .dim_order()
                    .map(|v| v.bytes().to_vec())
                    .unwrap_or_default(),
            });
            entries.push(NamedBlob {
                key,
                segment_index,
                range,
                layout,
            });
        }
        Ok(FlatTensorFile {
            version: root.version(),
            segment_count: segments.len(),
            entries,
            bytes,
        })
    }

    /// The bytes stored under `key`.
    pub fn get(&self, key: &str) -> Option<&[u8]> {
        self.entries
            .iter()
            .find(|e| e.key == key)
            .map(|e| &self.bytes[e.range.clone()])
    }

    /// The size of the whole file.
    pub fn file_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Total bytes of tensor data, each segment once (several keys may share one).
    pub fn data_bytes(&self) -> usize {
        let mut segments: Vec<(usize, usize)> = self
            .entries
            .iter()
            .map(|e| (e.segment_index, e.range.len()))
            .collect();
        segments.sort_unstable();
        segments.dedup_by_key(|s| s.0);
        segments.iter().map(|s| s.1).sum()
    }
}

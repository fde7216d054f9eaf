//! Writes a `.ptd` (FlatTensor) as ExecuTorch 1.5.1's `FlatTensorSerializer` does, readable by
//! [`super::flat_tensor::FlatTensorFile::parse`] and by ExecuTorch's `FlatTensorDataMap`.
//!
//! Layout (`extension/flat_tensor/serialize/serialize.py`): the FlatBuffer's root offset and
//! `FT01` identifier, then the 40-byte `FH01` header padded to 48 (FlatBuffer alignment 16:
//! the FlatBuffer's offset field says 48, its size excludes the header), the rest of the
//! FlatBuffer, zero padding to the segment base (alignment 128), then each segment at an offset
//! aligned to `alignment` from the base (ExecuTorch's `FlatTensorConfig.segment_alignment`, 128
//! by default). Segment `i` holds `segments[i]`; every named entry points at one segment
//! (several entries may share one).

use flatbuffers::FlatBufferBuilder;

use super::flat_tensor::TensorLayout;
use crate::error::{Error, Result};
use crate::formats::generated::flat_tensor::executorch_flatbuffer::ScalarType as FbScalarType;
use crate::formats::generated::flat_tensor::flat_tensor_flatbuffer as fb;

const WHAT: &str = "external tensor data (.ptd) to write";
/// ExecuTorch's `FlatTensorConfig.segment_alignment` by default.
pub const SEGMENT_ALIGNMENT: u64 = 128;
/// `FlatTensorHeader.EXPECTED_LENGTH` and its padding to `_FLATBUFFER_ALIGNMENT` (16).
const HEADER_LENGTH: u32 = 40;
const PADDED_HEADER: usize = 48;

/// One named entry of a `.ptd` to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedEntry {
    pub key: String,
    /// Index into the segments written.
    pub segment: usize,
    pub layout: Option<TensorLayout>,
}

/// Where each segment starts in the written file (absolute byte offsets), beside the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFlatTensor {
    pub bytes: Vec<u8>,
    /// Segment `i` occupies `segment_ranges[i]` of `bytes`.
    pub segment_ranges: Vec<std::ops::Range<usize>>,
}

fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to).saturating_mul(to)
}

/// The `.ptd` bytes holding `segments`, each at an offset aligned to `alignment` (a power of
/// two), under `entries`' keys. A key twice, an entry pointing past the segments or an
/// alignment that is no power of two is refused.
pub fn write_flat_tensor(
    segments: &[&[u8]],
    entries: &[NamedEntry],
    alignment: u64,
) -> Result<WrittenFlatTensor> {
    if !alignment.is_power_of_two() {
        return Err(Error::invalid(
            WHAT,
            format!("segment alignment {alignment} is no power of two"),
        ));
    }
    for (i, e) in entries.iter().enumerate() {
        if e.segment >= segments.len() {
            return Err(Error::invalid(
                WHAT,
                format!(
                    "entry {:?} points at segment {} of {}",
                    e.key,
                    e.segment,
                    segments.len()
                ),
            ));
        }
        if entries[..i].iter().any(|o| o.key == e.key) {
            return Err(Error::invalid(WHAT, format!("key {:?} twice", e.key)));
        }
    }
    // segment offsets relative to the base, each aligned to 128 as ExecuTorch lays them out
    let mut offsets = Vec::with_capacity(segments.len());
    let mut end = 0u64;
    for s in segments {
        let at = if offsets.is_empty() {
            0
        } else {
            round_up(end, alignment)
        };
        offsets.push(at);
        end = at.saturating_add(s.len() as u64);
    }
    let data_size = end;
    let mut b = FlatBufferBuilder::with_capacity(1024);
    let segs: Vec<_> = segments
        .iter()
        .zip(&offsets)
        .map(|(s, &offset)| {
            fb::DataSegment::create(
                &mut b,
                &fb::DataSegmentArgs {
                    offset,
                    size: s.len() as u64,
                },
            )
        })
        .collect();
    let segs = b.create_vector(&segs);
    let mut named = Vec::with_capacity(entries.len());
    for e in entries {
        let key = b.create_string(&e.key);
        let layout = e.layout.as_ref().map(|l| {
            let sizes = b.create_vector(&l.sizes);
            let dim_order = b.create_vector(&l.dim_order);
            fb::TensorLayout::create(
                &mut b,
                &fb::TensorLayoutArgs {
                    scalar_type: FbScalarType(l.scalar_type.code()),
                    sizes: Some(sizes),
                    dim_order: Some(dim_order),
                },
            )
        });
        named.push(fb::NamedData::create(
            &mut b,
            &fb::NamedDataArgs {
                key: Some(key),
                segment_index: u32::try_from(e.segment)
                    .map_err(|_| Error::invalid(WHAT, "more than 2^32 segments"))?,
                tensor_layout: layout,
            },
        ));
    }
    let named = b.create_vector(&named);
    let root = fb::FlatTensor::create(
        &mut b,
        &fb::FlatTensorArgs {
            version: 0,
            segments: Some(segs),
            named_data: Some(named),
        },
    );
    b.finish(root, Some("FT01"));
    let flat = b.finished_data();
    if flat.len() < 8 {
        return Err(Error::invalid(
            WHAT,
            "the FlatBuffer is shorter than 8 bytes",
        ));
    }
    let root_offset = u32::from_le_bytes([flat[0], flat[1], flat[2], flat[3]]);
    let base = round_up((flat.len() + PADDED_HEADER) as u64, SEGMENT_ALIGNMENT);
    let total = base
        .checked_add(data_size)
        .and_then(|t| usize::try_from(t).ok())
        .ok_or_else(|| Error::invalid(WHAT, "the data is larger than this machine addresses"))?;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(root_offset + PADDED_HEADER as u32).to_le_bytes());
    out.extend_from_slice(&flat[4..8]);
    out.extend_from_slice(b"FH01");
    out.extend_from_slice(&HEADER_LENGTH.to_le_bytes());
    out.extend_from_slice(&(PADDED_HEADER as u64).to_le_bytes());
    out.extend_from_slice(&(flat.len() as u64).to_le_bytes());
    out.extend_from_slice(&base.to_le_bytes());
    out.extend_from_slice(&data_size.to_le_bytes());
    out.resize(8 + PADDED_HEADER, 0);
    out.extend_from_slice(&flat[8..]);
    out.resize(base as usize, 0);
    let mut ranges = Vec::with_capacity(segments.len());
    for (s, &at) in segments.iter().zip(&offsets) {
        let start = (base + at) as usize;
        out.resize(start, 0);
        out.extend_from_slice(s);
        ranges.push(start..start + s.len());
    }
    Ok(WrittenFlatTensor {
        bytes: out,
        segment_ranges: ranges,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::flat_tensor::FlatTensorFile;
    use crate::ScalarType;

    /// What the reader reads back equals what was written: keys, layouts, bytes, alignment.
    #[test]
    fn a_written_ptd_reads_back_as_written() {
        let a = [1u8, 2, 3, 4, 5];
        let b: Vec<u8> = (0..300).map(|i| i as u8).collect();
        let layout = TensorLayout {
            scalar_type: ScalarType::Char,
            sizes: vec![1, 5],
            dim_order: vec![0, 1],
        };
        let entries = vec![
            NamedEntry {
                key: "a".into(),
                segment: 0,
                layout: Some(layout.clone()),
            },
            NamedEntry {
                key: "b".into(),
                segment: 1,
                layout: None,
            },
            NamedEntry {
                key: "a_again".into(),
                segment: 0,
                layout: None,
            },
        ];
        let w = write_flat_tensor(&[&a, &b], &entries, SEGMENT_ALIGNMENT).expect("writes");
        let f = FlatTensorFile::parse(w.bytes.clone()).expect("reads back");
        assert_eq!(f.get("a"), Some(&a[..]));
        assert_eq!(f.get("a_again"), Some(&a[..]));
        assert_eq!(f.get("b"), Some(&b[..]));
        assert_eq!(f.entries[0].layout.as_ref(), Some(&layout));
        assert_eq!(f.segment_count, 2);
        for r in &w.segment_ranges {
            assert_eq!(r.start % SEGMENT_ALIGNMENT as usize, 0);
        }
        assert_eq!(&w.bytes[w.segment_ranges[1].clone()], &b[..]);
        assert!(write_flat_tensor(&[&a], &entries, SEGMENT_ALIGNMENT).is_err());
        let packed = write_flat_tensor(&[&a, &b], &entries, 16).expect("writes");
        assert_eq!(
            packed.segment_ranges[1].start - packed.segment_ranges[0].start,
            16
        );
        assert!(write_flat_tensor(&[&a], &entries[..1], 24).is_err());
    }
}

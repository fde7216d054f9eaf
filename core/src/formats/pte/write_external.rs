//! A `.pte` whose chosen constants are read from external data (a `.ptd`) instead of its
//! constant segment: ExecuTorch's external constants, which its runtime resolves through the
//! `NamedDataMap` a firmware passes to `load_method` (`Method::parse_external_constants`).
//!
//! Everything else stays byte for byte as it was. Each moved tensor gets a new `Tensor` table,
//! appended after the program's FlatBuffer, equal to the old one plus an `ExtraTensorInfo`
//! saying `EXTERNAL` under its key; the `EValue` that held the tensor points at it. The tensor
//! keeps its `data_buffer_idx`: ExecuTorch's runtime reads an external tensor by its key only
//! (`getTensorDataPtr` looks at the location first), and ExecuTorch's own emitter stores an
//! index into its external buffers there. Constants no tensor reads from the segment any more
//! leave it: the segment is written again without them (the others keep their alignment and
//! their `data_buffer_idx`, their offsets rewritten in place), and the segments behind it move
//! up, laid out at ExecuTorch's default segment alignment (128; a program exported with a larger
//! `segment_alignment` comes back 128-aligned, which ExecuTorch's runtime does not check).

use std::collections::{BTreeMap, BTreeSet};

use flatbuffers::FlatBufferBuilder;

use super::patch::{self, alignment_of, field_at};
use crate::error::{Error, Result};
use crate::formats::generated::program::executorch_flatbuffer as fb;

const WHAT: &str = "program (.pte) with external constants to write";
/// ExecuTorch's default `segment_alignment` (`ExecutorchBackendConfig`).
const SEGMENT_ALIGNMENT: u64 = 128;

/// One constant tensor to read from external data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalTensor {
    /// The tensor's value index in the plan.
    pub value: usize,
    /// Its key (fully qualified name) in the `.ptd`.
    pub key: String,
}

fn invalid(detail: impl Into<String>) -> Error {
    Error::invalid(WHAT, detail)
}

fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to).saturating_mul(to)
}

/// `bytes` with plan `plan_index`'s tensors `moves` read from external data under their keys.
/// A value that is not a constant of the constant segment (planned, already external, inline
/// in the FlatBuffer) is refused, naming it.
pub fn with_external_constants(
    bytes: &[u8],
    plan_index: usize,
    moves: &[ExternalTensor],
) -> Result<Vec<u8>> {
    let opened = patch::open(WHAT, bytes)?;
    let header = opened
        .header
        .ok_or_else(|| invalid("the program has no extended header, so no constant segment"))?;
    let root = opened.root(WHAT)?;
    let constant_segment = root
        .constant_segment()
        .filter(|c| c.offsets().is_some_and(|o| o.len() > 1))
        .ok_or_else(|| {
            invalid("the program keeps no constants in a constant segment (only those can move)")
        })?;
    let plans = root
        .execution_plan()
        .ok_or_else(|| invalid("the program has no plans"))?;
    let plan = (plan_index < plans.len())
        .then(|| plans.get(plan_index))
        .ok_or_else(|| invalid(format!("the program has no plan {plan_index}")))?;
    let values = plan
        .values()
        .ok_or_else(|| invalid("the plan has no values"))?;

    // the new tensor tables, built apart and appended whole (their offsets are relative)
    let mut b = FlatBufferBuilder::with_capacity(1024);
    let mut new_tables = Vec::with_capacity(moves.len());
    let mut moved: BTreeSet<usize> = BTreeSet::new();
    for m in moves {
        if !moved.insert(m.value) {
            return Err(invalid(format!("value {} is moved twice", m.value)));
        }
        let value = (m.value < values.len())
            .then(|| values.get(m.value))
            .ok_or_else(|| invalid(format!("value {} is outside the plan", m.value)))?;
        let t = value
            .val_as_tensor()
            .ok_or_else(|| invalid(format!("value {} is not a tensor", m.value)))?;
        if t.allocation_info().is_some() || t.data_buffer_idx() == 0 {
            return Err(invalid(format!(
                "value {} is not a constant (it is planned or has no data)",
                m.value
            )));
        }
        if t.extra_tensor_info()
            .is_some_and(|e| e.location() == fb::TensorDataLocation::EXTERNAL)
        {
            return Err(invalid(format!("value {} is external already", m.value)));
        }
        let val_at = field_at(&value._tab, fb::EValue::VT_VAL)
            .ok_or_else(|| invalid(format!("value {} has no table", m.value)))?;
        let sizes = t.sizes().map(|v| v.iter().collect::<Vec<i32>>());
        let dim_order = t.dim_order().map(|v| v.bytes().to_vec());
        let sizes = sizes.map(|s| b.create_vector(&s));
        let dim_order = dim_order.map(|d| b.create_vector(&d));
        let key = b.create_string(&m.key);
        let extra = fb::ExtraTensorInfo::create(
            &mut b,
            &fb::ExtraTensorInfoArgs {
                mutable_data_segments_idx: 0,
                fully_qualified_name: Some(key),
                location: fb::TensorDataLocation::EXTERNAL,
                ..Default::default()
            },
        );
        let table = fb::Tensor::create(
            &mut b,
            &fb::TensorArgs {
                scalar_type: t.scalar_type(),
                storage_offset: t.storage_offset(),
                sizes,
                dim_order,
                requires_grad: t.requires_grad(),
                data_buffer_idx: t.data_buffer_idx(),
                allocation_info: None,
                layout: t.layout(),
                shape_dynamism: t.shape_dynamism(),
                extra_tensor_info: Some(extra),
            },
        );
        new_tables.push((val_at, table));
    }

    // the constants some tensor still reads from the segment, in any plan
    let mut still_read: BTreeSet<u32> = BTreeSet::new();
    for (p, plan) in plans.iter().enumerate() {
        for (v, value) in plan.values().into_iter().flatten().enumerate() {
            let Some(t) = value.val_as_tensor() else {
                continue;
            };
            let external = t
                .extra_tensor_info()
                .is_some_and(|e| e.location() == fb::TensorDataLocation::EXTERNAL)
                || (p == plan_index && moved.contains(&v));
            if !external && t.allocation_info().is_none() && t.data_buffer_idx() > 0 {
                still_read.insert(t.data_buffer_idx());
            }
        }
    }

    // the segments again, the constant segment without what no tensor reads from it
    let seg_table = root
        .segments()
        .ok_or_else(|| invalid("the program has no segments"))?;
    let constant_index = constant_segment.segment_index() as usize;
    let old_base = header.segment_base_offset;
    // each segment's offset and size, and where its table keeps them
    let segs: Vec<(u64, u64, Option<usize>, Option<usize>)> = seg_table
        .iter()
        .map(|s| {
            (
                s.offset(),
                s.size(),
                field_at(&s._tab, fb::DataSegment::VT_OFFSET),
                field_at(&s._tab, fb::DataSegment::VT_SIZE),
            )
        })
        .collect();
    if constant_index >= segs.len() {
        return Err(invalid(format!(
            "the constant segment is segment {constant_index} of {}",
            segs.len()
        )));
    }
    let segment_of = |i: usize| -> Result<&[u8]> {
        let (offset, size, _, _) = *segs
            .get(i)
            .ok_or_else(|| invalid(format!("no segment {i}")))?;
        let start = old_base
            .checked_add(offset)
            .ok_or_else(|| invalid(format!("segment {i} overflows")))?;
        let end = start
            .checked_add(size)
            .ok_or_else(|| invalid(format!("segment {i} overflows")))?;
        bytes
            .get(start as usize..end as usize)
            .ok_or_else(|| invalid(format!("segment {i} lies outside the file")))
    };
    let offsets_vec = field_at(&constant_segment._tab, fb::SubsegmentOffsets::VT_OFFSETS)
        .ok_or_else(|| invalid("the constant segment has no offsets"))?;
    let old_offsets: Vec<u64> = constant_segment
        .offsets()
        .map(|o| o.iter().collect())
        .unwrap_or_default();
    let root_table = b.create_vector(&new_tables.iter().map(|(_, t)| *t).collect::<Vec<_>>());
    b.finish_minimal(root_table);
    let appended = b.finished_data();
    let mut out: Vec<u8> = opened.flatbuffer.clone();
    out.resize(round_up(out.len() as u64, 16) as usize, 0);
    let base_of_appended = out.len();
    out.extend_from_slice(appended);
    for (val_at, table) in &new_tables {
        let at = base_of_appended + appended.len() - table.value() as usize;
        let rel = at
            .checked_sub(*val_at)
            .and_then(|r| u32::try_from(r).ok())
            .ok_or_else(|| invalid("the program is too large to point past its end"))?;
        patch::put(WHAT, &mut out, *val_at, &rel.to_le_bytes())?;
    }

    let offsets_at = offsets_vec + patch::read_u32(WHAT, &out, offsets_vec)? as usize + 4;
    let old_constants = segment_of(constant_index)?;
    // each constant's extent: from its offset to the next larger one (padding included)
    let mut starts: Vec<u64> = old_offsets.clone();
    starts.push(old_constants.len() as u64);
    starts.sort_unstable();
    starts.dedup();
    let extent = |off: u64| -> u64 {
        starts
            .iter()
            .copied()
            .find(|&s| s > off)
            .unwrap_or(off)
            .saturating_sub(off)
    };
    // the alignment every constant had (ExecuTorch's constant_tensor_alignment, 16 by default)
    let constant_align = old_offsets
        .iter()
        .filter(|&&o| o > 0)
        .map(|&o| alignment_of(o))
        .min()
        .unwrap_or(16);
    let mut new_constants: Vec<u8> = Vec::with_capacity(old_constants.len());
    let mut placed: BTreeMap<u64, u64> = BTreeMap::new(); // old offset → new offset
    for (k, &off) in old_offsets.iter().enumerate().skip(1) {
        let keep = still_read.contains(&(k as u32));
        let new_off = if !keep {
            0
        } else if let Some(&n) = placed.get(&off) {
            n
        } else {
            let n = round_up(new_constants.len() as u64, constant_align);
            let len = extent(off);
            let data = off
                .checked_add(len)
                .and_then(|end| old_constants.get(off as usize..end as usize))
                .ok_or_else(|| invalid(format!("constant {k} lies outside its segment")))?;
            new_constants.resize(n as usize, 0);
            new_constants.extend_from_slice(data);
            placed.insert(off, n);
            n
        };
        patch::put(WHAT, &mut out, offsets_at + 8 * k, &new_off.to_le_bytes())?;
    }
    // segments in their old order of offset, aligned to ExecuTorch's default segment alignment
    // (128), or less where the file shows less (a single segment's base can be aligned to more
    // by chance, so more is not inferred)
    let segment_align = segs
        .iter()
        .map(|s| s.0)
        .filter(|&o| o > 0)
        .chain([old_base])
        .map(alignment_of)
        .min()
        .unwrap_or(SEGMENT_ALIGNMENT)
        .min(SEGMENT_ALIGNMENT);
    let mut order: Vec<usize> = (0..segs.len()).collect();
    order.sort_by_key(|&i| segs[i].0);
    let mut area: Vec<u8> = Vec::new();
    for &i in &order {
        let (old_offset, old_size, offset_field, size_field) = segs[i];
        let data = if i == constant_index {
            &new_constants[..]
        } else {
            segment_of(i)?
        };
        let at = if area.is_empty() {
            0
        } else {
            round_up(area.len() as u64, segment_align)
        };
        area.resize(at as usize, 0);
        area.extend_from_slice(data);
        for (field, old, new) in [
            (offset_field, old_offset, at),
            (size_field, old_size, data.len() as u64),
        ] {
            match field {
                Some(f) => patch::put(WHAT, &mut out, f, &new.to_le_bytes())?,
                None if new == old => {}
                None => {
                    return Err(invalid(format!(
                        "segment {i} leaves out a field that now needs a value"
                    )))
                }
            }
        }
    }
    let program_size = out.len() as u64;
    let base = round_up(program_size, segment_align);
    out.resize(base as usize, 0);
    out.extend_from_slice(&area);
    patch::put(WHAT, &mut out, 16, &program_size.to_le_bytes())?;
    patch::put(WHAT, &mut out, 24, &base.to_le_bytes())?;
    // a 24-byte header (before ExecuTorch 1.0) has no segment data size
    if header.header_length >= 32 {
        patch::put(WHAT, &mut out, 32, &(area.len() as u64).to_le_bytes())?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::pte::{EValue, Program};

    fn fixture() -> Vec<u8> {
        std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/fixtures/tiny_conv_relu_linear/model_int8_cortex_m55.pte"),
        )
        .expect("fixture")
    }

    /// A moved constant reads as external under its key and keeps its index; the others keep
    /// their data; a planned tensor, a value twice or a value outside the plan is refused.
    #[test]
    fn moved_constants_become_external_and_the_rest_keep_their_data() {
        let bytes = fixture();
        let original = Program::parse(bytes.clone()).expect("reads");
        let plan = &original.plans[0];
        let constants: Vec<usize> = plan
            .values
            .iter()
            .enumerate()
            .filter(|(_, v)| matches!(v, EValue::Tensor(t) if t.is_constant()))
            .map(|(i, _)| i)
            .collect();
        let planned = plan
            .values
            .iter()
            .position(|v| matches!(v, EValue::Tensor(t) if t.allocation.is_some()))
            .expect("a planned tensor");
        let moved = constants[0];
        let written = with_external_constants(
            &bytes,
            0,
            &[ExternalTensor {
                value: moved,
                key: "k".into(),
            }],
        )
        .expect("writes");
        let placed = Program::parse(written).expect("reads back");
        for &v in &constants {
            let (EValue::Tensor(a), EValue::Tensor(b)) =
                (&plan.values[v], &placed.plans[0].values[v])
            else {
                panic!("value {v} is no tensor");
            };
            assert_eq!(a.data_buffer_idx, b.data_buffer_idx);
            assert_eq!(a.sizes, b.sizes);
            if v == moved {
                assert_eq!(b.external_key(), Some("k"));
            } else {
                assert_eq!(b.external_key(), None);
                assert_eq!(
                    original.constant_bytes(a).expect("a"),
                    placed.constant_bytes(b).expect("b"),
                    "value {v}"
                );
            }
        }
        let one = |value: usize| ExternalTensor {
            value,
            key: "k".into(),
        };
        assert!(with_external_constants(&bytes, 0, &[one(planned)]).is_err());
        assert!(with_external_constants(&bytes, 0, &[one(moved), one(moved)]).is_err());
        assert!(with_external_constants(&bytes, 0, &[one(plan.values.len())]).is_err());
    }
}

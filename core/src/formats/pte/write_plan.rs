//! A `.pte` with its memory plan replaced: new offsets for planned tensors and new arena sizes,
//! everything else byte for byte as it was.
//!
//! A FlatBuffer table may leave out a field that holds its default (an offset of 0), so the
//! offsets cannot always be written over in place. Instead every re-placed tensor gets a new
//! `AllocationDetails` table with all three fields, appended after the program's FlatBuffer
//! (one shared vtable), and the tensor's `allocation_info` reference is pointed at it. Arena
//! sizes (`non_const_buffer_sizes`) are written over in place. When the file has an extended
//! header, the segments move behind the grown FlatBuffer (keeping their alignment) and the
//! header's `program_size` and `segment_base_offset` say so.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::formats::generated::program::executorch_flatbuffer as fb;

use super::patch::{self, alignment_of, field_at};

const WHAT: &str = "program (.pte) to re-plan";

/// One tensor's new place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewPlacement {
    /// The tensor's value index in the plan.
    pub value: usize,
    pub memory_id: u32,
    pub offset: u64,
}

fn invalid(detail: impl Into<String>) -> Error {
    Error::invalid(WHAT, detail)
}

fn read_u32(b: &[u8], at: usize) -> Result<u32> {
    patch::read_u32(WHAT, b, at)
}

fn put(b: &mut [u8], at: usize, bytes: &[u8]) -> Result<()> {
    patch::put(WHAT, b, at, bytes)
}

/// `bytes` with plan `plan_index`'s tensors at `placements`, its arenas (`memory_id` → bytes)
/// resized and, with `chain_order` (new position → original instruction), the instructions of
/// its first chain in that order.
pub fn with_plan(
    bytes: &[u8],
    plan_index: usize,
    placements: &[NewPlacement],
    arena_sizes: &BTreeMap<u32, u64>,
    chain_order: Option<&[usize]>,
) -> Result<Vec<u8>> {
    let opened = patch::open(WHAT, bytes)?;
    let (header, fb_len) = (opened.header, opened.len_in_file);
    let root = opened.root(WHAT)?;
    let plan = root
        .execution_plan()
        .and_then(|p| (plan_index < p.len()).then(|| p.get(plan_index)))
        .ok_or_else(|| invalid(format!("the program has no plan {plan_index}")))?;
    let values = plan
        .values()
        .ok_or_else(|| invalid("the plan has no values"))?;
    // what to change, located before the bytes are copied
    let mut refs: Vec<(usize, NewPlacement)> = Vec::with_capacity(placements.len());
    for p in placements {
        let tensor = (p.value < values.len())
            .then(|| values.get(p.value))
            .and_then(|v| v.val_as_tensor())
            .ok_or_else(|| invalid(format!("value {} is not a tensor", p.value)))?;
        let at = field_at(&tensor._tab, fb::Tensor::VT_ALLOCATION_INFO).ok_or_else(|| {
            invalid(format!(
                "value {} is not a planned tensor (it has no allocation)",
                p.value
            ))
        })?;
        refs.push((at, *p));
    }
    let sizes_at = field_at(&plan._tab, fb::ExecutionPlan::VT_NON_CONST_BUFFER_SIZES);
    let instructions_at = match chain_order {
        Some(_) => Some(
            plan.chains()
                .filter(|c| !c.is_empty())
                .and_then(|c| field_at(&c.get(0)._tab, fb::Chain::VT_INSTRUCTIONS))
                .ok_or_else(|| invalid("the plan has no chain of instructions to reorder"))?,
        ),
        None => None,
    };
    let mut out: Vec<u8> = opened.flatbuffer.clone();
    if let (Some(order), Some(at)) = (chain_order, instructions_at) {
        let vec = at + read_u32(&out, at)? as usize;
        let len = read_u32(&out, vec)? as usize;
        let mut seen = vec![false; len];
        if order.len() != len
            || order
                .iter()
                .any(|&k| k >= len || std::mem::replace(&mut seen[k], true))
        {
            return Err(invalid(format!(
                "the new order is not a permutation of the chain's {len} instructions"
            )));
        }
        let targets: Vec<usize> = (0..len)
            .map(|i| Ok(vec + 4 + 4 * i + read_u32(&out, vec + 4 + 4 * i)? as usize))
            .collect::<Result<_>>()?;
        for (i, &k) in order.iter().enumerate() {
            let slot = vec + 4 + 4 * i;
            let rel = targets[k]
                .checked_sub(slot)
                .and_then(|r| u32::try_from(r).ok())
                .ok_or_else(|| invalid("an instruction lies before the chain's list of them"))?;
            put(&mut out, slot, &rel.to_le_bytes())?;
        }
    }
    if let Some(at) = sizes_at {
        let vec = at + read_u32(&out, at)? as usize;
        let len = read_u32(&out, vec)? as usize;
        for (&memory_id, &size) in arena_sizes {
            let i = memory_id as usize;
            if i >= len {
                return Err(invalid(format!(
                    "arena {memory_id} is not declared (the plan has {len} buffer sizes)"
                )));
            }
            let size = i64::try_from(size).map_err(|_| invalid("arena size beyond i64"))?;
            put(&mut out, vec + 4 + 8 * i, &size.to_le_bytes())?;
        }
    } else if !arena_sizes.is_empty() {
        return Err(invalid("the plan declares no arena sizes"));
    }
    // one vtable for every new AllocationDetails: 3 fields at 4, 8, 12 of a 16-byte table
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
    let vtable = out.len();
    for h in [10u16, 16, 4, 8, 12, 0] {
        out.extend_from_slice(&h.to_le_bytes());
    }
    for (at, p) in refs {
        let table = out.len();
        let soffset = i32::try_from(table - vtable).map_err(|_| invalid("program too large"))?;
        out.extend_from_slice(&soffset.to_le_bytes());
        out.extend_from_slice(&p.memory_id.to_le_bytes());
        out.extend_from_slice(&(p.offset as u32).to_le_bytes());
        out.extend_from_slice(&((p.offset >> 32) as u32).to_le_bytes());
        let rel = u32::try_from(table - at).map_err(|_| invalid("program too large"))?;
        put(&mut out, at, &rel.to_le_bytes())?;
    }
    let Some(h) = header else {
        return Ok(out);
    };
    // segments behind the grown FlatBuffer, as aligned as they were
    let program_size = out.len() as u64;
    let old_base = h.segment_base_offset;
    let seg_end = if h.segment_data_size > 0 {
        old_base.saturating_add(h.segment_data_size)
    } else {
        bytes.len() as u64
    };
    let segments: &[u8] = if old_base < fb_len as u64 {
        &[] // no segments: the base points into (or at the start of) the program
    } else {
        bytes
            .get(old_base as usize..seg_end as usize)
            .ok_or_else(|| invalid("segment data outside the file"))?
    };
    let base = if segments.is_empty() {
        program_size
    } else {
        program_size.div_ceil(alignment_of(old_base)) * alignment_of(old_base)
    };
    out.resize(base as usize, 0);
    out.extend_from_slice(segments);
    put(&mut out, 16, &program_size.to_le_bytes())?;
    put(&mut out, 24, &base.to_le_bytes())?;
    Ok(out)
}

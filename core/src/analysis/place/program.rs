//! The placed program for ExecuTorch's own runtime: the weights a placement moves into RAM
//! leave the program for a `.ptd` (ExecuTorch's external constants), laid out one region after
//! another, so a firmware copies each region's range of the `.ptd` into that region once and
//! serves the runtime's reads from the copies (`fit_files::placed_weights_source`).
//!
//! The program keeps its instructions and memory plan: the runner's pools are already one
//! memory id each (memory id 3 from the fast-memory pool, the others from the
//! method-allocator pool), so placing a pool moves no tensor between arenas. Each constant
//! keeps its `data_buffer_idx`, so the placed program's blocks are the original's.

use std::collections::BTreeMap;
use std::ops::Range;

use super::{PlaceError, Placement};
use crate::formats::flat_tensor::TensorLayout;
use crate::formats::flat_tensor_write::{write_flat_tensor, NamedEntry};
use crate::formats::pte::write_external::{with_external_constants, ExternalTensor};
use crate::formats::pte::{EValue, Program};

/// The program with its placed weights in a `.ptd`.
#[derive(Debug, Clone)]
pub struct PlacedProgram {
    pub pte: Vec<u8>,
    pub ptd: Vec<u8>,
    /// Each RAM region's weights: one contiguous range of the `.ptd`, in the order written.
    pub regions: Vec<PtdRegion>,
}

/// The part of the `.ptd` a firmware copies into one region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtdRegion {
    pub region: String,
    /// Byte range in the `.ptd` (from its first segment's start to its last one's end).
    pub range: Range<usize>,
    /// The keys of the tensors in it.
    pub keys: Vec<String>,
}

impl PtdRegion {
    /// The bytes its copy takes in the region: the range rounded up to the copies' alignment,
    /// which is each of its constants 16-aligned, the bytes the placement counts there.
    pub fn copy_bytes(&self) -> u64 {
        (self.range.len() as u64)
            .div_ceil(super::COPY_ALIGNMENT)
            .saturating_mul(super::COPY_ALIGNMENT)
    }
}

/// The fit of plan `plan_index` of `program` placed as `placement` says: its pools where the
/// placement puts them ([`crate::analysis::fit::with_placement`]) and, when weights move into
/// RAM, the flash of the placed program `fit -o` writes (its `.pte` and its `.ptd`). A program
/// that reads a `.ptd` already keeps its flash (its weights are in that `.ptd`); one etscope
/// cannot write placed (constants inside its FlatBuffer) keeps its flash, and the fit says why.
pub fn placed_fit(
    part: &crate::part::Part,
    base: &crate::analysis::fit::Fit,
    placement: &Placement,
    program: &Program,
    plan_index: usize,
) -> crate::analysis::fit::Fit {
    let mut placed = crate::analysis::fit::with_placement(part, base, placement);
    if !program.external_keys().is_empty() {
        return placed;
    }
    match placed_program(program, plan_index, placement) {
        Ok(Some(p)) => crate::analysis::fit::with_program_bytes(
            part,
            &placed,
            (p.pte.len() as u64).saturating_add(p.ptd.len() as u64),
        ),
        Ok(None) => placed,
        Err(e) => {
            placed.not_modelled.push(format!(
                "the flash of a placed program: {e}; the program's own bytes are counted"
            ));
            placed
        }
    }
}

/// The key of constant `data_buffer_idx` in the written `.ptd` (a tensor of another layout
/// reading the same data gets `…_v<value>` beside it).
pub fn key_of(data_buffer_idx: u32) -> String {
    format!("etscope.constant_{data_buffer_idx}")
}

/// The placed program of plan `plan_index` of `program` under `placement`, or `None` when the
/// placement moves no weights (the program then runs as it is). A program that reads external
/// data already is refused: ExecuTorch's runtime takes one `.ptd` per method.
pub fn placed_program(
    program: &Program,
    plan_index: usize,
    placement: &Placement,
) -> Result<Option<PlacedProgram>, PlaceError> {
    let fail = PlaceError::Program;
    let mut by_region: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    let mut region_order: Vec<&str> = Vec::new();
    for b in placement.moved().filter(|b| b.is_weights()) {
        if !region_order.contains(&b.region.as_str()) {
            region_order.push(&b.region);
        }
        by_region
            .entry(&b.region)
            .or_default()
            .extend(b.constants.iter().copied());
    }
    if region_order.is_empty() {
        return Ok(None);
    }
    if !program.external_keys().is_empty() {
        return Err(fail(
            "the program reads external data (a .ptd) already; etscope writes a placed program only from one that keeps every constant in itself".into(),
        ));
    }
    let plan = program
        .plans
        .get(plan_index)
        .ok_or_else(|| fail(format!("no plan {plan_index}")))?;
    let mut segments: Vec<&[u8]> = Vec::new();
    let mut entries: Vec<NamedEntry> = Vec::new();
    let mut moves: Vec<ExternalTensor> = Vec::new();
    let mut region_segments: Vec<(String, Range<usize>, Vec<String>)> = Vec::new();
    // each constant's readers (value, tensor), in value order
    let mut readers_of: BTreeMap<u32, Vec<(usize, &crate::formats::pte::Tensor)>> = BTreeMap::new();
    for (v, value) in plan.values.iter().enumerate() {
        if let EValue::Tensor(t) = value {
            if t.is_constant() {
                readers_of.entry(t.constant_id()).or_default().push((v, t));
            }
        }
    }
    for region in &region_order {
        let first = segments.len();
        let mut keys = Vec::new();
        for &idx in by_region.get(region).into_iter().flatten() {
            let readers = readers_of.remove(&idx).unwrap_or_default();
            // the segment holds the largest read of the constant
            let Some(&(_, widest)) = readers.iter().max_by_key(|(_, t)| t.nbytes) else {
                continue;
            };
            let data = program
                .constant_bytes(widest)
                .map_err(|e| fail(format!("constant {idx}: {e}")))?;
            let segment = segments.len();
            segments.push(data);
            let mut layouts: Vec<(TensorLayout, String)> = Vec::new();
            for (v, t) in readers {
                let layout = TensorLayout {
                    scalar_type: t.scalar_type,
                    sizes: t.sizes.clone(),
                    dim_order: t.dim_order.clone(),
                };
                let key = match layouts.iter().find(|(l, _)| *l == layout) {
                    Some((_, k)) => k.clone(),
                    None => {
                        let k = if layouts.is_empty() {
                            key_of(idx)
                        } else {
                            format!("{}_v{v}", key_of(idx))
                        };
                        entries.push(NamedEntry {
                            key: k.clone(),
                            segment,
                            layout: Some(layout.clone()),
                        });
                        keys.push(k.clone());
                        layouts.push((layout, k.clone()));
                        k
                    }
                };
                moves.push(ExternalTensor { value: v, key });
            }
        }
        region_segments.push((region.to_string(), first..segments.len(), keys));
    }
    let written = write_flat_tensor(&segments, &entries, super::COPY_ALIGNMENT)
        .map_err(|e| fail(e.to_string()))?;
    let pte = with_external_constants(program.bytes(), plan_index, &moves)
        .map_err(|e| fail(e.to_string()))?;
    let regions = region_segments
        .into_iter()
        .filter(|(_, segs, _)| !segs.is_empty())
        .map(|(region, segs, keys)| PtdRegion {
            region,
            range: written.segment_ranges[segs.start].start
                ..written.segment_ranges[segs.end - 1].end,
            keys,
        })
        .collect();
    Ok(Some(PlacedProgram {
        pte,
        ptd: written.bytes,
        regions,
    }))
}

//! The value table: one 32-byte record per program value (its kind, scalar type, rank, memory and
//! offsets), written before the data each record points at. A dynamic-shape program's view
//! (`executorch_prim::et_view`) has no storage of its own and takes its input's place.

use super::writer::{le_u32s, Writer};
use super::{BoardImageError, VALUE_BYTES};
use crate::formats::pte::{EValue, ExecutionPlan, Instruction, Program};

/// Value kinds in the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ValueKind {
    None = 0,
    Int = 1,
    Double = 2,
    Bool = 3,
    IntList = 4,
    Tensor = 5,
    /// A kind no supported kernel reads (bool lists); present so indices line up.
    Other = 6,
    /// Value indices (u32 each; `u32::MAX` for an absent optional tensor).
    TensorList = 7,
    /// f64 items (`upsample_*.vec`'s scale factors).
    DoubleList = 8,
    /// UTF-8 bytes (`gelu`'s `approximate`).
    String = 9,
}

/// Writes the records of every value of `plan` and the data they point at; the table's offset.
pub(super) fn write(
    w: &mut Writer,
    program: &Program,
    plan: &ExecutionPlan,
) -> Result<usize, BoardImageError> {
    // a view of a dynamic-shape program (`et_view`) has no storage of its own: it reads its
    // input's, so its record takes the input's place
    let mut view_of: std::collections::BTreeMap<usize, usize> = Default::default();
    for ins in plan.main_instructions() {
        if let Instruction::KernelCall { op_index, args } = ins {
            let is_view = plan
                .operators
                .get(*op_index)
                .is_some_and(|o| o.name == "executorch_prim::et_view");
            if let (true, Some(&input), Some(&out)) = (is_view, args.first(), args.get(2)) {
                view_of.insert(out, input);
            }
        }
    }
    // values: the table first (fixed size), then the data each record points at
    let values_at = w.append(&vec![0u8; plan.values.len() * VALUE_BYTES], 8)? as usize;
    let mut records = vec![[0u8; VALUE_BYTES]; plan.values.len()];
    for (vi, v) in plan.values.iter().enumerate() {
        let rec = &mut records[vi];
        let verr = |detail: String| BoardImageError::Value { value: vi, detail };
        match v {
            EValue::Unset | EValue::Null => rec[0] = ValueKind::None as u8,
            EValue::Int(i) => {
                rec[0] = ValueKind::Int as u8;
                rec[8..16].copy_from_slice(&i.to_le_bytes());
            }
            EValue::Bool(b) => {
                rec[0] = ValueKind::Bool as u8;
                rec[8..16].copy_from_slice(&i64::from(*b).to_le_bytes());
            }
            EValue::Double(d) => {
                rec[0] = ValueKind::Double as u8;
                rec[8..16].copy_from_slice(&d.to_le_bytes());
            }
            EValue::IntList(items) => {
                let resolved: Vec<u8> = items
                    .iter()
                    .map(|&i| match plan.values.get(i as usize) {
                        Some(EValue::Int(x)) => Ok(*x),
                        _ => Err(verr(format!("int list item {i} is not an int value"))),
                    })
                    .collect::<Result<Vec<i64>, _>>()?
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect();
                let at = w.append(&resolved, 8)?;
                rec[0] = ValueKind::IntList as u8;
                rec[4..8].copy_from_slice(&(items.len() as u32).to_le_bytes());
                rec[12..16].copy_from_slice(&at.to_le_bytes());
            }
            EValue::Tensor(t) => {
                let rank = t.sizes.len();
                if rank > 8 {
                    return Err(verr(format!("rank {rank} (the firmware takes ≤ 8)")));
                }
                let nbytes =
                    u32::try_from(t.nbytes).map_err(|_| verr(format!("{} bytes", t.nbytes)))?;
                let sizes = t
                    .sizes
                    .iter()
                    .flat_map(|s| s.to_le_bytes())
                    .collect::<Vec<_>>();
                let order: Vec<u32> = if t.dim_order.is_empty() {
                    (0..rank as u32).collect()
                } else {
                    t.dim_order.iter().map(|&d| u32::from(d)).collect()
                };
                let sizes_at = w.append(&sizes, 4)?;
                let order_at = w.append(&le_u32s(order), 4)?;
                rec[0] = ValueKind::Tensor as u8;
                rec[1] = t.scalar_type.code() as u8;
                rec[2] = rank as u8;
                rec[8..12].copy_from_slice(&nbytes.to_le_bytes());
                rec[12..16].copy_from_slice(&sizes_at.to_le_bytes());
                rec[16..20].copy_from_slice(&order_at.to_le_bytes());
                rec[20..24].copy_from_slice(&(t.numel as u32).to_le_bytes());
                if t.is_constant() {
                    let data = program
                        .constant_bytes(t)
                        .map_err(|e| verr(format!("constant data: {e}")))?;
                    let at = w.append(data, 16)?;
                    rec[3] = 0;
                    rec[4..8].copy_from_slice(&at.to_le_bytes());
                } else if let Some(a) = &t.allocation {
                    let arena = u8::try_from(a.memory_id)
                        .ok()
                        .filter(|&m| m != 0 && m != 255)
                        .ok_or_else(|| verr(format!("memory id {}", a.memory_id)))?;
                    let offset = u32::try_from(a.offset)
                        .map_err(|_| verr(format!("arena offset {}", a.offset)))?;
                    let size = plan
                        .non_const_buffer_sizes
                        .get(usize::from(arena))
                        .copied()
                        .unwrap_or(0);
                    if u64::from(offset) + u64::from(nbytes) > size.max(0) as u64 {
                        return Err(verr(format!(
                            "{nbytes} bytes at offset {offset} overrun arena {arena} of {size} bytes"
                        )));
                    }
                    rec[3] = arena;
                    rec[4..8].copy_from_slice(&offset.to_le_bytes());
                } else if t.nbytes == 0 {
                    rec[3] = 255;
                } else if view_of.contains_key(&vi) {
                    // placed below, once its input's record is written
                } else {
                    return Err(verr(
                        "a tensor with data but no planned memory (dynamic or unplanned)".into(),
                    ));
                }
            }
            EValue::TensorList(items) | EValue::OptionalTensorList(items) => {
                let indices = items.iter().map(|&i| {
                    u32::try_from(i)
                        .ok()
                        .filter(|&i| (i as usize) < plan.values.len())
                        .unwrap_or(u32::MAX)
                });
                let at = w.append(&le_u32s(indices), 4)?;
                rec[0] = ValueKind::TensorList as u8;
                rec[4..8].copy_from_slice(&(items.len() as u32).to_le_bytes());
                rec[12..16].copy_from_slice(&at.to_le_bytes());
            }
            EValue::DoubleList(items) => {
                let bytes: Vec<u8> = items.iter().flat_map(|d| d.to_le_bytes()).collect();
                let at = w.append(&bytes, 8)?;
                rec[0] = ValueKind::DoubleList as u8;
                rec[4..8].copy_from_slice(&(items.len() as u32).to_le_bytes());
                rec[12..16].copy_from_slice(&at.to_le_bytes());
            }
            EValue::String(text) => {
                let at = w.append(text.as_bytes(), 4)?;
                rec[0] = ValueKind::String as u8;
                rec[4..8].copy_from_slice(&(text.len() as u32).to_le_bytes());
                rec[12..16].copy_from_slice(&at.to_le_bytes());
            }
            EValue::BoolList(_) => rec[0] = ValueKind::Other as u8,
        }
    }
    for (&view, &input) in &view_of {
        let (Some(from), true) = (records.get(input).copied(), view < records.len()) else {
            continue;
        };
        let nbytes = u32::from_le_bytes([
            records[view][8],
            records[view][9],
            records[view][10],
            records[view][11],
        ]);
        let input_bytes = u32::from_le_bytes([from[8], from[9], from[10], from[11]]);
        if from[0] != ValueKind::Tensor as u8 || nbytes > input_bytes {
            return Err(BoardImageError::Value {
                value: view,
                detail: format!("a view of value {input}, which holds fewer bytes"),
            });
        }
        records[view][3..8].copy_from_slice(&from[3..8]);
    }
    for (vi, rec) in records.iter().enumerate() {
        let at = values_at + vi * VALUE_BYTES;
        w.buf[at..at + VALUE_BYTES].copy_from_slice(rec);
    }
    Ok(values_at)
}

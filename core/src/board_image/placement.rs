//! A placement's addresses on the emulated board (`board run --place`): where each region's
//! blocks start, for the image to carry (its header fields 76 and 84) and the firmware to use.

use std::collections::BTreeMap;

use super::BoardPlacement;
use crate::analysis::place::{PlaceError, Placement};
use crate::formats::pte::{EValue, Program};
use crate::part::Part;

/// The addresses a placement on the emulated board's part gives the board image: each region
/// holds its blocks from its base, 16-aligned, in block order; a block where the part's link
/// puts it keeps the firmware's own place (arenas after the image, constants read in place).
/// Pools the board's firmware has no counterpart of (the temp allocator, a delegate's scratch)
/// take no address. A region the firmware keeps for itself (`reserved`: name and what it
/// holds) or a region too small for what is placed in it is refused, naming it.
pub fn board_addresses(
    part: &Part,
    placement: &Placement,
    program: &Program,
    plan_index: usize,
    reserved: &[(&str, &str)],
) -> Result<BoardPlacement, PlaceError> {
    let fail = |detail: String| PlaceError::Board(format!("on the emulated board: {detail}"));
    let plan = program
        .plans
        .get(plan_index)
        .ok_or_else(|| fail(format!("the program has no plan {plan_index}")))?;
    let arenas = &plan.non_const_buffer_sizes;
    let mut out = BoardPlacement {
        arena_at: vec![0; arenas.len()],
        constant_at: Vec::new(),
    };
    let mut cursor: BTreeMap<&str, u64> = BTreeMap::new();
    let widths = plan.constant_widths();
    for b in placement.moved() {
        let (ids, constants) = (b.memory_ids(), &b.constants);
        if ids.is_empty() && constants.is_empty() {
            continue;
        }
        if let Some((_, what)) = reserved.iter().find(|(r, _)| *r == b.region) {
            return Err(fail(format!(
                "{:?} is placed in {}, which the board's firmware keeps for {what}",
                b.name, b.region
            )));
        }
        let region = part
            .region(&b.region)
            .ok_or_else(|| fail(format!("no region {}", b.region)))?;
        let at = cursor.entry(region.name.as_str()).or_insert(region.base);
        let mut take = |bytes: u64| -> Result<u32, PlaceError> {
            let here = *at;
            let end = here
                .checked_add(bytes.div_ceil(16).saturating_mul(16))
                .filter(|&e| e <= region.base.saturating_add(region.size))
                .ok_or_else(|| {
                    fail(format!(
                        "{} ({} B) holds less than what is placed in it",
                        region.name, region.size
                    ))
                })?;
            *at = end;
            u32::try_from(here).map_err(|_| fail(format!("{} is above 4 GiB", region.name)))
        };
        for &id in ids {
            let size = arenas
                .get(id as usize)
                .map_or(0, |&s| u64::try_from(s).unwrap_or(0));
            if size > 0 {
                out.arena_at[id as usize] = take(size)?;
            }
        }
        // every value reading one of the block's constants reads the one copy, as wide as the
        // widest of them
        let mut copied: BTreeMap<u32, u32> = BTreeMap::new();
        for (v, value) in plan.values.iter().enumerate() {
            let EValue::Tensor(t) = value else {
                continue;
            };
            if !t.is_constant() || !constants.contains(&t.constant_id()) {
                continue;
            }
            let address = match copied.get(&t.constant_id()) {
                Some(&a) => a,
                None => {
                    let a = take(widths.get(&t.constant_id()).copied().unwrap_or(t.nbytes))?;
                    copied.insert(t.constant_id(), a);
                    a
                }
            };
            out.constant_at.push((v, address));
        }
    }
    Ok(out)
}

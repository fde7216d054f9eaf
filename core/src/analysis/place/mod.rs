//! Where each block of a program's memory goes on a part, and what that does to the estimate:
//! the runner's pools (the method-allocator pool that holds the planned arenas 1 and 2, the
//! fast-memory arena of memory id 3, the temp allocator, a delegate's scratch) and each call's
//! weights, each in a region of the part.
//!
//! [`advise`] chooses under the regions' sizes: first it moves blocks out of a region the
//! default link overfills, then it moves the blocks that save the most cycles per byte to the
//! region that saves the most and still has room. It is a greedy search; [`Placement::bound_cycles`]
//! is a floor no placement in the same search space goes under (every pool at its cheapest
//! region, and the weights as a fractional knapsack over all the RAM the pools leave), so the
//! gap between the two says how far from optimal the choice can be. [`apply`] prices a placement
//! the user wrote ([`parse`]).
//!
//! - [`file`] — a placement as a file (`--place FILE`, `placement.toml`)
//! - [`program`] — the placed program for ExecuTorch's runtime: the moved weights in a `.ptd`
//!
//! What may go where: pools to DTCM or SRAM (or the link's own arena region); weights to DTCM
//! or SRAM, or where the link reads them. ITCM is left to code and external memory to what the link
//! puts there. The code, the program's load image, the kernel registry and the stack stay where
//! the link puts them.

mod file;
mod program;

pub use file::{parse, to_toml, Choice};
pub use program::{key_of, placed_fit, placed_program, PlacedProgram, PtdRegion};

use std::collections::BTreeMap;

use serde::Serialize;
use thiserror::Error;

use super::cost::{CostEstimate, RegionCost};
use super::fit::{Fit, RegionUse};
use crate::part::{Part, RegionKind};

/// The alignment of each constant copied into RAM: in the placed program's `.ptd` and in the
/// board's copies (ExecuTorch aligns constants to 16 bytes).
pub const COPY_ALIGNMENT: u64 = 16;

/// One block a placement moves.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    /// Its name in a placement file.
    pub name: String,
    pub bytes: u64,
    /// Where the part's default link puts it.
    pub default_region: String,
    /// Where the placement puts it.
    pub region: String,
    /// The estimate's cycles of its memory terms where the placement puts it.
    pub memory_cycles: f64,
    /// The same where the default link puts it.
    pub default_memory_cycles: f64,
    /// A call's weights: the constants of its tensors ([`crate::formats::pte::Tensor::constant_id`]).
    #[serde(skip)]
    pub constants: Vec<u32>,
    #[serde(skip)]
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// Holds these memory ids.
    Arenas(Vec<u32>),
    /// Not priced (no call's traffic is modelled in it).
    Pool,
    /// The constants first read by this instruction.
    Weights(usize),
}

/// A placement of a program's blocks on a part, priced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Placement {
    pub blocks: Vec<Block>,
    pub regions: Vec<RegionUse>,
    pub fits: bool,
    /// The estimate with the default link, and with this placement.
    pub before_cycles: f64,
    pub after_cycles: f64,
    /// No placement in the search space goes under this (equal to `after_cycles` when the
    /// choice is optimal).
    pub bound_cycles: f64,
    /// The estimate under this placement, per call.
    #[serde(skip)]
    pub estimate: CostEstimate,
}

impl Block {
    /// Whether the block is a call's weights (else a pool).
    pub fn is_weights(&self) -> bool {
        matches!(self.kind, Kind::Weights(_))
    }

    /// The memory ids of the planned arenas the block holds (empty for other blocks).
    pub fn memory_ids(&self) -> &[u32] {
        match &self.kind {
            Kind::Arenas(ids) => ids,
            _ => &[],
        }
    }
}

impl Placement {
    /// The blocks that are not where the default link puts them.
    pub fn moved(&self) -> impl Iterator<Item = &Block> {
        self.blocks.iter().filter(|b| b.region != b.default_region)
    }
}

/// The block a pool of [`Fit::pools`] moves with: the planned arenas but memory id 3 and the
/// method allocator are the runner's one method-allocator pool; a call's weights copied to RAM
/// are their own block; any other pool is a block of its own name.
pub fn block_of_pool(pool: &str) -> &str {
    match pool {
        "planned arena (memory id 3)" => "fast memory (memory id 3)",
        n if n.starts_with("planned arena")
            || n == "method allocator"
            || n == super::fit::RUNNER_PADDING =>
        {
            "method allocator pool"
        }
        n => n,
    }
}

/// Why a placement cannot be made or read.
#[derive(Debug, Error, PartialEq)]
pub enum PlaceError {
    #[error("{origin}: not a placement file: {detail}")]
    Toml { origin: String, detail: String },
    #[error("{0}")]
    Board(String),
    #[error("the placed program: {0}")]
    Program(String),
    #[error("{origin}: entry {entry}: {detail}")]
    Entry {
        origin: String,
        entry: usize,
        detail: String,
    },
}

/// The estimate's rows' traffic priced per block, and what sits where by default.
struct Model<'a> {
    part: &'a Part,
    est: &'a CostEstimate,
    blocks: Vec<Block>,
    /// Instruction → the weights block its constants belong to.
    weights_of: BTreeMap<usize, usize>,
    /// Per block, the rows of the estimate (indices, in order) whose memory traffic it carries:
    /// a block is priced over these alone, not over every row (a 15,000-call program has
    /// thousands of blocks).
    rows_of: Vec<Vec<usize>>,
    /// Bytes each region holds that no placement moves.
    fixed: Vec<u64>,
}

impl<'a> Model<'a> {
    fn new(part: &'a Part, fit: &Fit, est: &'a CostEstimate) -> Model<'a> {
        let ram = part.link.arenas.clone();
        let mut blocks = Vec::new();
        let block =
            |blocks: &mut Vec<Block>, name: String, bytes: u64, region: &str, kind: Kind| {
                if bytes > 0 {
                    blocks.push(Block {
                        name,
                        bytes,
                        default_region: region.to_string(),
                        region: region.to_string(),
                        memory_cycles: 0.0,
                        default_memory_cycles: 0.0,
                        constants: Vec::new(),
                        kind,
                    });
                }
            };
        // the Arm runner's pools, as fit counts them: memory ids 1 and 2 (and any beyond 3),
        // the method allocator and the runner's padding are its method-allocator pool, id 3
        // its fast-memory pool; the kernel registry is the runtime's .bss and stays
        let pool_bytes = |block: &str| {
            fit.pools
                .iter()
                .filter(|p| block_of_pool(&p.name) == block)
                .fold(0u64, |a, p| a.saturating_add(p.bytes))
        };
        let slow_ids: Vec<u32> = (1..=fit.arenas.len())
            .filter(|&id| id != 3)
            .filter_map(|id| u32::try_from(id).ok())
            .collect();
        for (name, kind) in [
            ("method allocator pool", Kind::Arenas(slow_ids)),
            ("fast memory (memory id 3)", Kind::Arenas(vec![3])),
            ("temp allocator", Kind::Pool),
            ("delegate scratch", Kind::Pool),
        ] {
            block(&mut blocks, name.into(), pool_bytes(name), &ram, kind);
        }
        // each call's constants not read by an earlier call
        let mut owner: BTreeMap<u32, usize> = BTreeMap::new();
        let mut weights_of = BTreeMap::new();
        for row in &est.rows {
            let Some(t) = &row.traffic else { continue };
            // each constant once, at its widest read, 16-aligned as its copy is laid out
            let mut unowned: BTreeMap<u32, u64> = BTreeMap::new();
            for &(idx, b) in t
                .constants
                .iter()
                .filter(|(idx, _)| !owner.contains_key(idx))
            {
                let slot = unowned.entry(idx).or_default();
                *slot = (*slot).max(b);
            }
            let fresh: u64 = unowned
                .values()
                .map(|b| b.div_ceil(COPY_ALIGNMENT).saturating_mul(COPY_ALIGNMENT))
                .fold(0u64, u64::saturating_add);
            if fresh > 0 {
                let b = blocks.len();
                block(
                    &mut blocks,
                    format!(
                        "weights of #{} ({})",
                        row.instruction_id,
                        row.op
                            .trim_start_matches("cortex_m::")
                            .split('.')
                            .next()
                            .unwrap_or_default()
                    ),
                    fresh,
                    &part.link.constants,
                    Kind::Weights(row.instruction_id),
                );
                for &(idx, _) in &t.constants {
                    if let std::collections::btree_map::Entry::Vacant(e) = owner.entry(idx) {
                        e.insert(b);
                        if let Some(block) = blocks.get_mut(b) {
                            block.constants.push(idx);
                        }
                    }
                }
            }
            // a call's weights are priced where its largest constant sits
            if let Some(&(idx, _)) = t.constants.iter().max_by_key(|c| c.1) {
                if let Some(&b) = owner.get(&idx) {
                    weights_of.insert(row.instruction_id, b);
                }
            }
        }
        // what stays where the default link puts it: each region's use in the fit less the pools
        // that are blocks (the code and its load image, the program's load image, which keeps
        // every weight wherever a copy runs from, the kernel registry with the static data)
        let movable = [
            "method allocator pool",
            "fast memory (memory id 3)",
            "temp allocator",
            "delegate scratch",
        ];
        let fixed = part
            .regions
            .iter()
            .map(|r| {
                let used = fit
                    .regions
                    .iter()
                    .find(|u| u.name == r.name)
                    .map_or(0, |u| u.used);
                let blocks_here = fit
                    .pools
                    .iter()
                    .filter(|p| p.region == r.name && movable.contains(&block_of_pool(&p.name)))
                    .fold(0u64, |a, p| a.saturating_add(p.bytes));
                used.saturating_sub(blocks_here)
            })
            .collect();
        let mut rows_of: Vec<Vec<usize>> = vec![Vec::new(); blocks.len()];
        let arena_blocks: Vec<(usize, &Vec<u32>)> = blocks
            .iter()
            .enumerate()
            .filter_map(|(b, block)| match &block.kind {
                Kind::Arenas(ids) => Some((b, ids)),
                _ => None,
            })
            .collect();
        for (r, row) in est.rows.iter().enumerate() {
            let Some(t) = &row.traffic else { continue };
            if let Some(&b) = weights_of.get(&row.instruction_id) {
                if let Some(rows) = rows_of.get_mut(b) {
                    rows.push(r);
                }
            }
            for &(b, ids) in &arena_blocks {
                if t.arena_bytes.iter().any(|(id, _)| ids.contains(id)) {
                    rows_of[b].push(r);
                }
            }
        }
        Model {
            part,
            est,
            blocks,
            weights_of,
            rows_of,
            fixed,
        }
    }

    fn region_index(&self, name: &str) -> Option<usize> {
        self.part.regions.iter().position(|r| r.name == name)
    }

    /// Every block's region where the part's default link puts it.
    fn defaults(&self) -> Vec<usize> {
        self.blocks
            .iter()
            .map(|b| self.region_index(&b.default_region).unwrap_or(0))
            .collect()
    }

    /// The block a placement file's entry names: its whole name, or its name up to the
    /// operator (`weights of #12` for `weights of #12 (quantized_conv2d)`).
    fn block_named(&self, name: &str) -> Option<usize> {
        self.blocks
            .iter()
            .position(|b| b.name == name || b.name.split(" (").next() == Some(name))
    }

    /// The regions block `b` may go to.
    fn allowed(&self, b: &Block) -> Vec<usize> {
        self.part
            .regions
            .iter()
            .enumerate()
            .filter(|(_, r)| {
                r.name == b.default_region || matches!(r.kind, RegionKind::Dtcm | RegionKind::Sram)
            })
            .map(|(i, _)| i)
            .collect()
    }

    fn cost(&self, region: usize) -> RegionCost {
        self.part.regions.get(region).map_or(RegionCost::FREE, |r| {
            RegionCost::of_region(self.part.core, r)
        })
    }

    /// The estimate with block `i` at `regions[i]` (region indices).
    fn priced(&self, regions: &[usize]) -> CostEstimate {
        let at = |b: usize| regions.get(b).map_or(RegionCost::FREE, |&r| self.cost(r));
        let default_weights = self
            .region_index(&self.part.link.constants)
            .map_or(RegionCost::FREE, |r| self.cost(r));
        let arena_block = |id: u32| {
            self.blocks
                .iter()
                .position(|b| matches!(&b.kind, Kind::Arenas(ids) if ids.contains(&id)))
        };
        self.est.placed(
            |ins| {
                self.weights_of
                    .get(&ins)
                    .map_or(default_weights, |&b| at(b))
            },
            |id| arena_block(id).map_or(RegionCost::FREE, at),
        )
    }

    /// The memory cycles block `b` costs in `region`, the other blocks anywhere.
    fn block_cycles(&self, b: usize, region: usize) -> f64 {
        let cost = self.cost(region);
        let dcache = self.est.options.memory.dcache_bytes;
        let block = &self.blocks[b];
        let rows = self.rows_of.get(b).map_or(&[][..], Vec::as_slice);
        rows.iter()
            .filter_map(|&r| self.est.rows.get(r))
            .filter_map(|row| row.traffic.as_ref())
            .map(|t| match &block.kind {
                // `rows_of` holds a weights block's calls only: those priced where it sits
                Kind::Weights(_) => cost.cycles(t.weight_bytes_fetched(dcache)),
                Kind::Arenas(ids) => t
                    .arena_bytes
                    .iter()
                    .filter(|(id, _)| ids.contains(id))
                    .map(|&(_, bytes)| cost.cycles(bytes as f64))
                    .sum(),
                Kind::Pool => 0.0,
            })
            .fold(0.0, |sum, cycles| sum + cycles)
    }

    fn assemble(&self, regions: &[usize]) -> Placement {
        let defaults = self.defaults();
        let before = self.priced(&defaults).total_cycles();
        let estimate = self.priced(regions);
        let used = self.used(regions);
        let blocks: Vec<Block> = self
            .blocks
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let r = regions.get(i).copied().unwrap_or(0);
                let home = defaults.get(i).copied().unwrap_or(0);
                Block {
                    region: self
                        .part
                        .regions
                        .get(r)
                        .map_or(String::new(), |x| x.name.clone()),
                    memory_cycles: self.block_cycles(i, r),
                    default_memory_cycles: self.block_cycles(i, home),
                    ..b.clone()
                }
            })
            .collect();
        let regions: Vec<RegionUse> = self
            .part
            .regions
            .iter()
            .zip(used)
            .map(|(r, used)| RegionUse {
                name: r.name.clone(),
                used,
                size: r.size,
            })
            .collect();
        Placement {
            fits: regions.iter().all(|r| r.used <= r.size),
            regions,
            before_cycles: before,
            after_cycles: estimate.total_cycles(),
            bound_cycles: before - self.most_saved(),
            estimate,
            blocks,
        }
    }

    fn used(&self, regions: &[usize]) -> Vec<u64> {
        let mut used = self.fixed.clone();
        for (b, &r) in self.blocks.iter().zip(regions) {
            // a weights block in its default region is the load image, already counted
            let counted =
                matches!(b.kind, Kind::Weights(_)) && self.part.regions[r].name == b.default_region;
            if !counted {
                if let Some(u) = used.get_mut(r) {
                    *u = u.saturating_add(b.bytes);
                }
            }
        }
        used
    }

    /// The most any placement in the search space saves: every pool at its cheapest region,
    /// and the weights' savings per byte filled, fractionally, into the RAM the pools leave.
    fn most_saved(&self) -> f64 {
        let mut saved = 0.0;
        let mut items: Vec<(f64, u64)> = Vec::new();
        let mut pools = 0u64;
        for (i, b) in self.blocks.iter().enumerate() {
            let Some(home) = self.region_index(&b.default_region) else {
                continue;
            };
            let at_home = self.block_cycles(i, home);
            let best = self
                .allowed(b)
                .into_iter()
                .map(|r| self.block_cycles(i, r))
                .fold(at_home, f64::min);
            match b.kind {
                Kind::Weights(_) => items.push((at_home - best, b.bytes)),
                _ => {
                    saved += at_home - best;
                    pools = pools.saturating_add(b.bytes);
                }
            }
        }
        let ram: u64 = self
            .part
            .regions
            .iter()
            .zip(&self.fixed)
            .filter(|(r, _)| {
                matches!(r.kind, RegionKind::Dtcm | RegionKind::Sram)
                    || r.name == self.part.link.arenas
            })
            .map(|(r, f)| r.size.saturating_sub(*f))
            .fold(0u64, u64::saturating_add);
        let mut room = ram.saturating_sub(pools) as f64;
        items.sort_by(|a, b| (b.0 / b.1 as f64).total_cmp(&(a.0 / a.1 as f64)));
        for (s, bytes) in items {
            if room <= 0.0 || s <= 0.0 {
                break;
            }
            let part = (room / bytes as f64).min(1.0);
            saved += s * part;
            room -= bytes as f64;
        }
        saved
    }
}

/// The advisor's placement of plan `est`'s program (whose fit on `part` is `fit`).
pub fn advise(part: &Part, fit: &Fit, est: &CostEstimate) -> Placement {
    let m = Model::new(part, fit, est);
    let mut regions = m.defaults();
    let size = |r: usize| part.regions.get(r).map_or(0, |x| x.size);
    // a region the default link overfills: move its largest blocks where there is room
    for over in 0..part.regions.len() {
        let mut mine: Vec<usize> = (0..m.blocks.len())
            .filter(|&b| regions[b] == over && !matches!(m.blocks[b].kind, Kind::Weights(_)))
            .collect();
        mine.sort_by_key(|&b| std::cmp::Reverse(m.blocks[b].bytes));
        for b in mine {
            let used = m.used(&regions);
            if used[over] <= size(over) {
                break;
            }
            let to = m
                .allowed(&m.blocks[b])
                .into_iter()
                .filter(|&r| r != over && used[r].saturating_add(m.blocks[b].bytes) <= size(r))
                .min_by(|&x, &y| m.block_cycles(b, x).total_cmp(&m.block_cycles(b, y)));
            if let Some(to) = to {
                regions[b] = to;
            }
        }
    }
    // then the blocks that save the most per byte, each to the region that saves the most
    let mut order: Vec<(f64, usize)> = (0..m.blocks.len())
        .map(|b| {
            let here = m.block_cycles(b, regions[b]);
            let best = m
                .allowed(&m.blocks[b])
                .into_iter()
                .map(|r| m.block_cycles(b, r))
                .fold(here, f64::min);
            ((here - best) / m.blocks[b].bytes.max(1) as f64, b)
        })
        .filter(|(d, _)| *d > 0.0)
        .collect();
    order.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (_, b) in order {
        let here = regions[b];
        let used = m.used(&regions);
        let bytes = m.blocks[b].bytes;
        let to = m
            .allowed(&m.blocks[b])
            .into_iter()
            .filter(|&r| r != here && used[r].saturating_add(bytes) <= size(r))
            .min_by(|&x, &y| m.block_cycles(b, x).total_cmp(&m.block_cycles(b, y)));
        if let Some(to) = to.filter(|&to| m.block_cycles(b, to) < m.block_cycles(b, here)) {
            regions[b] = to;
        }
    }
    m.assemble(&regions)
}

/// The default link's placement, priced (what `fit` reports without `--place`).
pub fn default(part: &Part, fit: &Fit, est: &CostEstimate) -> Placement {
    let m = Model::new(part, fit, est);
    let regions = m.defaults();
    m.assemble(&regions)
}

/// What a placement's figures rest on, in a sentence: which regions' wait states are known
/// (the rest are charged none), and whether any move lowers the estimate.
pub fn note(part: &Part, p: &Placement) -> String {
    let known: Vec<String> = part
        .regions
        .iter()
        .filter_map(|r| Some(format!("{} ({})", r.name, r.wait_states?)))
        .collect();
    let tcm: Vec<&str> = part
        .regions
        .iter()
        .filter(|r| {
            r.wait_states.is_none() && matches!(r.kind, RegionKind::Dtcm | RegionKind::Itcm)
        })
        .map(|r| r.name.as_str())
        .collect();
    let unknown: Vec<&str> = part
        .regions
        .iter()
        .filter(|r| {
            r.wait_states.is_none() && !matches!(r.kind, RegionKind::Dtcm | RegionKind::Itcm)
        })
        .map(|r| r.name.as_str())
        .collect();
    let mut s = format!(
        "an estimate: each call's weight reads and activation bytes charged the wait states of the region they sit in; wait states a source states: {}",
        if known.is_empty() { "none".to_string() } else { known.join(", ") }
    );
    if !tcm.is_empty() {
        s.push_str(&format!(
            "; taken as zero-wait (tightly coupled memory, no source states it for this part): {}",
            tcm.join(", ")
        ));
    }
    if !unknown.is_empty() {
        s.push_str(&format!(
            "; not known, so charged none: {} (a part file can give them, docs/parts.md)",
            unknown.join(", ")
        ));
    }
    if p.bound_cycles >= p.before_cycles - 0.5 {
        s.push_str("; no move lowers the estimate");
    } else if p.after_cycles >= p.before_cycles {
        s.push_str(
            "; this placement does not lower the estimate, though moves can (`--place auto`)",
        );
    }
    s
}

/// `choices` applied over the default link (a block not named stays there), priced; an entry
/// naming no block of the program, no region of the part or a region the block may not go to
/// is refused, naming it (`origin` names the file).
pub fn apply(
    part: &Part,
    fit: &Fit,
    est: &CostEstimate,
    choices: &[Choice],
    origin: &str,
) -> Result<Placement, PlaceError> {
    let m = Model::new(part, fit, est);
    let mut regions = m.defaults();
    for (k, c) in choices.iter().enumerate() {
        let fail = |detail: String| PlaceError::Entry {
            origin: origin.to_string(),
            entry: k + 1,
            detail,
        };
        let b = m.block_named(&c.block).ok_or_else(|| {
            fail(format!(
                "block {:?} is not a block of this program: {}",
                c.block,
                m.blocks
                    .iter()
                    .map(|b| format!("{:?}", b.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        let r = m.region_index(&c.region).ok_or_else(|| {
            fail(format!(
                "region {:?} is not a region of {}: {}",
                c.region,
                part.name,
                part.regions
                    .iter()
                    .map(|r| r.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        if !m.allowed(&m.blocks[b]).contains(&r) {
            return Err(fail(format!(
                "{:?} may not go to {} ({}): pools and weights go to DTCM or SRAM regions (or stay where the link puts them); ITCM is left to code and external memory to what the link puts there",
                m.blocks[b].name,
                c.region,
                part.regions[r].kind.name()
            )));
        }
        // a size written beside the block is the size of the block: a program that changed
        // since the file was written is refused, not placed on stale sizes
        if let Some(bytes) = c.bytes.filter(|&n| n != m.blocks[b].bytes) {
            return Err(fail(format!(
                "{:?} says {bytes} bytes; the block is {} bytes in this program (was the file written for another program?)",
                m.blocks[b].name, m.blocks[b].bytes
            )));
        }
        if let Some(first) = choices[..k]
            .iter()
            .position(|o| m.block_named(&o.block) == Some(b))
        {
            return Err(fail(format!(
                "{:?} is placed a second time (entry {} placed it first)",
                m.blocks[b].name,
                first + 1
            )));
        }
        regions[b] = r;
    }
    Ok(m.assemble(&regions))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placement_file_with_an_unknown_key_is_refused_naming_the_file() {
        let e = parse("[[place]]\nblok = \"x\"\nregion = \"DTCM\"\n", "p.toml").unwrap_err();
        assert!(
            matches!(e, PlaceError::Toml { ref origin, .. } if origin == "p.toml"),
            "{e}"
        );
        let ok = parse(
            "[[place]]\nblock = \"temp allocator\"\nregion = \"DTCM\"\n",
            "p.toml",
        )
        .expect("reads");
        assert_eq!(ok[0].region, "DTCM");
    }
}

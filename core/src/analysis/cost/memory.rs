//! What a call's memory traffic costs where its data sits: the wait states of the region its
//! weights are read from and of the region each planned arena it reads or writes sits in.
//!
//! The compute terms count instructions as if every access took the core's load or store
//! timing (zero-wait memory: tightly coupled memory, or SRAM at the core's clock). A region
//! behind wait states adds `wait_states` cycles on every `line_bytes` bytes moved:
//!
//! - **weights**: the bytes the kernel's loops read, each re-read counted (CMSIS-NN reads a
//!   convolution's weights once per block of output pixels), as [`Traffic::weight_reads`]. With
//!   a data cache holding the call's weights (half the cache, the rest left to activations),
//!   only the first read of each line misses: [`Traffic::weight_bytes`] are charged instead.
//! - **activations**: every planned tensor the call reads or writes, once
//!   ([`Traffic::arena_bytes`], per memory id). Re-reads of an input (a convolution's im2col)
//!   are not counted: a first-order term, said in docs/cost-model.md.
//!
//! - **code**: where the code region has wait states, the instructions the call fetches
//!   ([`Traffic::code_term`]):
//!   - with an instruction cache the part states: a CMSIS-NN call's operator code (its linked
//!     bytes, `part::code`: an upper bound, as not every path of a kernel runs; never more than
//!     the instructions it executes) when the cache — an LRU of whole operators' code over the
//!     repeated inference (`cost::CodeFetch`) — no longer holds it, else nothing; portable
//!     kernels are not sized and not charged;
//!   - with none: every instruction the call executes (4 bytes each on Thumb-2, 2 on Thumb-1,
//!     no prefetch buffer credited: an upper bound);
//!   - with the cache not known: nothing, and the notes say so.
//!
//! Bus contention and DMA are not modelled.

use serde::Serialize;

use super::Term;
use crate::cortex_m::{Core, Isa};
use crate::ir::call::CallView;
use crate::ir::Storage;
use crate::part::{Part, Region, RegionKind};

/// Name of the term of the weights' region.
pub const WEIGHT_TERM: &str = "wait states on weight reads";
/// Name of the term of the arenas' region.
pub const ARENA_TERM: &str = "wait states on activation reads and writes";
/// Name of the term of the code's region.
pub const CODE_TERM: &str = "wait states on code fetch";

/// What one access of a region costs beyond the compute terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RegionCost {
    /// Extra cycles on every `line_bytes` bytes.
    pub wait_states: u32,
    /// Bytes one access moves (a flash line, the bus's width).
    pub line_bytes: u32,
}

impl RegionCost {
    /// Zero-wait memory.
    pub const FREE: RegionCost = RegionCost {
        wait_states: 0,
        line_bytes: 16,
    };

    /// What an access of `region` costs on `part`: its sourced wait states (none where its
    /// source states none) on every line; a line is the region's `line_bytes`, or 16 bytes
    /// of flash, MRAM and external memory, or the core's data bus width for RAM (64 bits on the
    /// M7, M55 and M85, 32 bits elsewhere).
    pub fn of_region(core: Core, region: &Region) -> RegionCost {
        let bus = if core == Core::M7 || core.isa() == Isa::Mve {
            8
        } else {
            4
        };
        let line = match region.kind {
            RegionKind::Flash | RegionKind::Mram | RegionKind::External => 16,
            RegionKind::Itcm | RegionKind::Dtcm | RegionKind::Sram => bus,
        };
        RegionCost {
            wait_states: region.wait_states.unwrap_or(0),
            line_bytes: region.line_bytes.unwrap_or(line),
        }
    }

    /// Cycles of moving `bytes` bytes.
    pub fn cycles(self, bytes: f64) -> f64 {
        if self.wait_states == 0 || self.line_bytes == 0 {
            return 0.0;
        }
        (bytes / f64::from(self.line_bytes)).ceil() * f64::from(self.wait_states)
    }
}

/// Where the data of every call sits, as costs: one region for the weights, one for the
/// arenas, and the core's data cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MemoryCosts {
    pub weights: RegionCost,
    pub arenas: RegionCost,
    /// Bytes of data cache the core runs with (0: none, or off).
    pub dcache_bytes: u32,
    /// Where the code is fetched from.
    pub code: RegionCost,
    /// Bytes of instruction cache (or flash cache) the core runs with: `Some(0)` none or off,
    /// `None` not known (code fetch is then not charged).
    pub icache_bytes: Option<u32>,
}

impl MemoryCosts {
    /// The costs of `part`'s default link: the weights read in place from its constants
    /// region, the arenas in its arenas region, the data cache its source states.
    pub fn of_part(part: &Part) -> MemoryCosts {
        let cost = |name: &str| {
            part.region(name)
                .map_or(RegionCost::FREE, |r| RegionCost::of_region(part.core, r))
        };
        MemoryCosts {
            weights: cost(&part.link.constants),
            arenas: cost(&part.link.arenas),
            dcache_bytes: part.cache.as_ref().map_or(0, |c| c.data),
            code: cost(&part.link.code),
            icache_bytes: part.cache.as_ref().and_then(|c| c.instruction),
        }
    }
}

/// A call's memory traffic, independent of where its data sits.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Traffic {
    /// Bytes of weights the kernel's loops read, re-reads counted.
    pub weight_reads: f64,
    /// Bytes of the call's constant tensors (weights, bias, requantization data): the group
    /// that moves when the call's weights are placed elsewhere.
    pub weight_bytes: u64,
    /// Bytes of planned tensors the call reads or writes, per memory id.
    pub arena_bytes: Vec<(u32, u64)>,
    /// The call's constant tensors: each one's constant (`Tensor::constant_id`) and its bytes
    /// (what a placement moves).
    #[serde(skip)]
    pub constants: Vec<(u32, u64)>,
    /// Bytes of code the call fetches through the instruction cache: its operator's kernel and
    /// the CMSIS-NN functions it calls, as linked (`part::code`), when the cache no longer
    /// holds them; 0 when it does; `None` when the code a call runs cannot be sized: a portable
    /// kernel (its linked code holds every dtype's instantiation, far more than a call runs),
    /// or an operator not measured.
    pub code_bytes: Option<u64>,
    /// Instructions the call executes.
    pub instructions: f64,
}

impl Traffic {
    /// The constant and planned tensors among a call's arguments (tensor lists flattened).
    pub fn of_call(call: &CallView<'_>, weight_reads: f64) -> Traffic {
        let mut t = Traffic {
            weight_reads,
            ..Traffic::default()
        };
        for tensor in call.tensors() {
            let nbytes = tensor.nbytes.unwrap_or(0);
            match (tensor.storage, tensor.constant_id, &tensor.placement) {
                (Storage::Constant, id, _) => {
                    t.weight_bytes = t.weight_bytes.saturating_add(nbytes);
                    if let Some(id) = id {
                        t.constants.push((id, nbytes));
                    }
                }
                (_, _, Some(a)) => {
                    match t.arena_bytes.iter_mut().find(|(id, _)| *id == a.memory_id) {
                        Some((_, b)) => *b = b.saturating_add(nbytes),
                        None => t.arena_bytes.push((a.memory_id, nbytes)),
                    }
                }
                _ => {}
            }
        }
        t
    }

    /// The weight bytes that reach the weights' region: every read, or with a data cache that
    /// holds them, each line once.
    pub fn weight_bytes_fetched(&self, dcache_bytes: u32) -> f64 {
        let held = dcache_bytes > 0 && self.weight_bytes <= u64::from(dcache_bytes / 2);
        if held {
            (self.weight_bytes as f64).min(self.weight_reads)
        } else {
            self.weight_reads
        }
    }

    /// The memory terms of this traffic: the weights read from `weights`, and each arena's
    /// bytes at the cost `arena(memory_id)` gives.
    pub fn terms(
        &self,
        weights: RegionCost,
        arena: impl Fn(u32) -> RegionCost,
        dcache_bytes: u32,
    ) -> Vec<Term> {
        let mut out = Vec::new();
        let w = weights.cycles(self.weight_bytes_fetched(dcache_bytes));
        if w > 0.0 {
            out.push(Term {
                name: WEIGHT_TERM,
                cycles: w,
                instructions: 0.0,
            });
        }
        let a: f64 = self
            .arena_bytes
            .iter()
            .map(|&(id, bytes)| arena(id).cycles(bytes as f64))
            .sum();
        if a > 0.0 {
            out.push(Term {
                name: ARENA_TERM,
                cycles: a,
                instructions: 0.0,
            });
        }
        out
    }

    /// What fetching the call's code costs from `code` with an instruction cache of
    /// `icache_bytes` (`None`: not known; `Some(0)`: none): the code it fetches through the
    /// cache ([`Traffic::code_bytes`]) but never more than the instructions it executes,
    /// `instruction_bytes` each; with no cache, every instruction it executes. A call whose
    /// code is not sized (`code_bytes` `None`: a portable kernel, an operator not measured) is
    /// not charged through a cache.
    pub fn code_term(
        &self,
        code: RegionCost,
        icache_bytes: Option<u32>,
        instruction_bytes: f64,
    ) -> Option<Term> {
        // a call fetches at most every instruction it executes, once each
        let executed = self.instructions * instruction_bytes;
        let bytes = match (icache_bytes?, self.code_bytes) {
            (0, _) => executed,
            (_, None) => return None,
            (_, Some(code)) => (code as f64).min(executed),
        };
        let cycles = code.cycles(bytes);
        (cycles > 0.0).then_some(Term {
            name: CODE_TERM,
            cycles,
            instructions: 0.0,
        })
    }
}

/// Whether a term is one of the memory terms (a re-placement replaces them).
pub fn is_memory_term(t: &Term) -> bool {
    t.name == WEIGHT_TERM || t.name == ARENA_TERM
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_states_cost_per_line_and_a_cache_that_holds_the_weights_charges_each_line_once() {
        let t = Traffic {
            weight_reads: 16_000.0,
            weight_bytes: 1_000,
            arena_bytes: vec![(1, 400), (2, 80)],
            constants: vec![(1, 1_000)],
            ..Traffic::default()
        };
        let flash = RegionCost {
            wait_states: 3,
            line_bytes: 16,
        };
        let sram = RegionCost {
            wait_states: 1,
            line_bytes: 8,
        };
        let terms = t.terms(flash, |id| if id == 1 { sram } else { RegionCost::FREE }, 0);
        assert_eq!(terms[0].cycles, 1000.0 * 3.0);
        assert_eq!(terms[1].cycles, 50.0);
        // a 4 KiB data cache holds the 1,000 bytes: each line read once
        let cached = t.terms(flash, |_| RegionCost::FREE, 4096);
        assert_eq!(cached.len(), 1);
        assert_eq!(cached[0].cycles, (1000.0f64 / 16.0).ceil() * 3.0);
        // a cache too small for them changes nothing
        assert_eq!(t.terms(flash, |_| RegionCost::FREE, 1024)[0].cycles, 3000.0);
        assert!(t
            .terms(RegionCost::FREE, |_| RegionCost::FREE, 0)
            .is_empty());
    }

    #[test]
    fn code_is_fetched_once_on_a_miss_and_every_instruction_without_a_cache() {
        let t = Traffic {
            code_bytes: Some(8_000),
            instructions: 100_000.0,
            ..Traffic::default()
        };
        let flash = RegionCost {
            wait_states: 5,
            line_bytes: 16,
        };
        let cycles = |t: &Traffic, icache| t.code_term(flash, icache, 4.0).map(|term| term.cycles);
        // not known: not charged
        assert_eq!(cycles(&t, None), None);
        // a cache that no longer holds the call's code: fetched once
        assert_eq!(cycles(&t, Some(1_024)), Some(500.0 * 5.0));
        // one that still holds it: nothing
        let hit = Traffic {
            code_bytes: Some(0),
            ..t.clone()
        };
        assert_eq!(cycles(&hit, Some(1_024)), None);
        // never more than the instructions it executes: a short call of a large kernel
        let short = Traffic {
            instructions: 100.0,
            ..t.clone()
        };
        assert_eq!(cycles(&short, Some(1_024)), Some(25.0 * 5.0));
        // code that cannot be sized: not charged through a cache; with none, every instruction
        let not_sized = Traffic {
            code_bytes: None,
            ..t.clone()
        };
        assert_eq!(cycles(&not_sized, Some(1_024)), None);
        assert_eq!(cycles(&not_sized, Some(0)), cycles(&t, Some(0)));
        // no cache: every instruction, four bytes each
        assert_eq!(cycles(&t, Some(0)), Some(25_000.0 * 5.0));
        // zero-wait code memory costs nothing either way
        assert_eq!(t.code_term(RegionCost::FREE, Some(0), 4.0), None);
    }
}

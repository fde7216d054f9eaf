//! What the memory terms charge on a part, said in words: the wait states of the region the
//! weights are read from, of the arenas' region, the data cache, and the code fetch — and what
//! is not charged because no source states it.

use super::{CostOptions, MemoryCosts};
use crate::part::{Part, RegionKind};

/// What the estimate charges for where the weights, the arenas and the code sit, in a sentence
/// (the CLI, its JSON and the Memory tab say it).
pub fn note(part: &Part, options: &CostOptions) -> String {
    let note = weights_note(part, options);
    if options.mhz == part.mhz {
        return note;
    }
    format!(
        "{note} (wait states as the part's source states them at its {} MHz; at {} MHz they may differ: `cost --flash-wait-states N`, or `wait_states` in a part file of your own, sets them)",
        part.mhz, options.mhz
    )
}

fn weights_note(part: &Part, options: &CostOptions) -> String {
    let m = &options.memory;
    let weights = match part.constants_region() {
        Some(r) => match r.wait_states {
            Some(w) if w == m.weights.wait_states => format!(
                "weights read in place from {} ({}): {w} wait states on every {}-byte line",
                r.name,
                r.kind.name(),
                m.weights.line_bytes
            ),
            Some(w) => format!(
                "weights read in place from {} ({}, {w} wait states by its source; {} charged as asked)",
                r.name,
                r.kind.name(),
                m.weights.wait_states
            ),
            None if m.weights.wait_states > 0 => format!(
                "weights read in place from {} ({}): {} wait states charged as asked",
                r.name,
                r.kind.name(),
                m.weights.wait_states
            ),
            // tightly coupled memory is zero-wait, as Arm describes it (docs/cost-model.md)
            None if matches!(r.kind, RegionKind::Dtcm | RegionKind::Itcm) => format!(
                "weights read in place from {} ({}): zero wait states",
                r.name,
                r.kind.name()
            ),
            None => format!(
                "weights read in place from {} ({}): its wait states at this clock are not known (docs/parts.md), so none are charged",
                r.name,
                r.kind.name()
            ),
        },
        None => "the part's link names no constants region".to_string(),
    };
    let arenas = match part.region(&part.link.arenas) {
        Some(r) => match r.wait_states {
            Some(w) => format!(
                "arenas in {} ({}): {w} wait states on every {}-byte access",
                r.name,
                r.kind.name(),
                m.arenas.line_bytes
            ),
            None if matches!(r.kind, RegionKind::Dtcm | RegionKind::Itcm) => {
                format!("arenas in {} ({}): zero wait states", r.name, r.kind.name())
            }
            None => format!(
                "arenas in {} ({}): its wait states are not known, so none are charged",
                r.name,
                r.kind.name()
            ),
        },
        None => String::new(),
    };
    let cache = match &part.cache {
        Some(c) if c.data > 0 => format!(
            "; a {}-byte data cache holds a call's weights when they fit in half of it",
            c.data
        ),
        _ => String::new(),
    };
    format!("{weights}; {arenas}{cache}{}", code_note(part, m))
}

/// What the estimate charges for fetching code, in a clause (empty for code in fast memory).
fn code_note(part: &Part, m: &MemoryCosts) -> String {
    let Some(r) = part.region(&part.link.code) else {
        return String::new();
    };
    let ws = m.code.wait_states;
    match (ws, m.icache_bytes) {
        (0, _) if r.wait_states.is_none()
            && matches!(r.kind, RegionKind::Flash | RegionKind::Mram | RegionKind::External) =>
        {
            format!(
                "; code fetched from {} ({}): its wait states are not known, so code fetch is not charged",
                r.name,
                r.kind.name()
            )
        }
        (0, _) => String::new(),
        (_, None) => format!(
            "; code fetched from {} ({ws} wait states): the core's instruction cache is not known (docs/parts.md), so code fetch is not charged",
            r.name
        ),
        (_, Some(0)) => format!(
            "; code fetched from {} ({ws} wait states) with no instruction cache: every instruction's fetch charged, no prefetch credited (an upper bound)",
            r.name
        ),
        (_, Some(bytes)) => format!(
            "; code fetched from {} ({ws} wait states) through a {bytes}-byte instruction cache: a CMSIS-NN call fetches its operator's code when the cache (an LRU of whole operators' code) no longer holds it, an upper bound; a portable kernel's fetch is not charged (its code is not sized)",
            r.name
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::part::find;

    fn note_of(part: &Part, mhz: f64) -> String {
        let options = CostOptions {
            core: part.core,
            mhz,
            memory: MemoryCosts::of_part(part),
        };
        note(part, &options)
    }

    #[test]
    fn the_note_says_what_code_fetch_is_charged_and_what_is_not_known() {
        let l4 = find("nucleo-l4r5zi").expect("a part");
        let n = note_of(&l4, l4.mhz);
        assert!(n.contains("5 wait states on every 16-byte line"), "{n}");
        assert!(n.contains("through a 1024-byte instruction cache"), "{n}");
        assert!(n.contains("256-byte data cache"), "{n}");
        // a cache not known: not charged, and said
        let ra8 = find("ek-ra8d1").expect("a part");
        let n = note_of(&ra8, ra8.mhz);
        assert!(n.contains("instruction cache is not known"), "{n}");
        // no cache at all: every instruction
        let mut none = l4.clone();
        if let Some(c) = none.cache.as_mut() {
            c.instruction = Some(0);
        }
        assert!(note_of(&none, none.mhz).contains("with no instruction cache"));
        // code in tightly coupled memory: no clause
        let alif = find("alif-e8-hp").expect("a part");
        assert!(!note_of(&alif, alif.mhz).contains("code fetched"));
        // another clock than the part's: the wait states may differ, said
        assert!(note_of(&l4, 80.0).contains("at 80 MHz they may differ"));
    }
}

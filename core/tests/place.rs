//! The placement advisor against every placement there is: on real programs and parts whose
//! fast memory is too small for everything, the advisor's choice fits, is never worse than the
//! default link, and lies between its own floor and the best placement an exhaustive search
//! finds; a placement priced through `CostEstimate::placed` equals the estimate asked directly
//! for the same regions; the placed fit's pools and regions add up.

mod common;

use etscope_core::analysis::cost::{estimate, CostOptions, MemoryCosts, RegionCost};
use etscope_core::analysis::fit::{self, Fit};
use etscope_core::analysis::place::{self, Choice, Placement};
use etscope_core::formats::pte::Program;
use etscope_core::part::{self, Part};

/// A Cortex-M55 part at 100 MHz: flash behind `flash_ws` wait states holding code and weights,
/// SRAM behind 1 wait state holding the arenas, and `dtcm` bytes of zero-wait DTCM.
fn part_of(flash_ws: u32, dtcm: u64) -> Part {
    let text = format!(
        r#"
[[part]]
name = "test-part"
core = "cortex-m55"
mhz = 100
[part.link]
code = "flash"
constants = "flash"
arenas = "sram"
stack = "sram"
[[part.region]]
name = "flash"
kind = "flash"
base = "0x0"
size = 4194304
wait_states = {flash_ws}
[[part.region]]
name = "sram"
kind = "sram"
base = "0x20000000"
size = 1048576
wait_states = 1
[[part.region]]
name = "dtcm"
kind = "dtcm"
base = "0x30000000"
size = {dtcm}
"#
    );
    part::parse(&text, "test-part.toml")
        .expect("a part")
        .remove(0)
}

fn program(rel: &str) -> Program {
    Program::parse(common::read(&common::fixtures().join(rel))).expect("a program")
}

fn fit_and_estimate(p: &Program, part: &Part) -> (Fit, etscope_core::analysis::cost::CostEstimate) {
    let options = CostOptions {
        core: part.core,
        mhz: part.mhz,
        memory: MemoryCosts::of_part(part),
    };
    let est = estimate(p, 0, options).expect("an estimate");
    let (code, _) = fit::code_sizes(p, 0, part.core);
    let f = fit::fit(p, 0, part, code).expect("a fit");
    (f, est)
}

/// Every placement of `blocks` over the regions each may go to, the best that fits.
fn best_by_search(
    part: &Part,
    f: &Fit,
    est: &etscope_core::analysis::cost::CostEstimate,
    base: &Placement,
) -> f64 {
    let names: Vec<&str> = base.blocks.iter().map(|b| b.name.as_str()).collect();
    let options: Vec<Vec<&str>> = base
        .blocks
        .iter()
        .map(|b| {
            let mut o = vec![b.default_region.as_str(), "dtcm"];
            if b.default_region != "sram" {
                o.push("sram");
            }
            o
        })
        .collect();
    let total: usize = options.iter().map(Vec::len).product();
    assert!(total <= 200_000, "{total} placements: too many to search");
    let mut best = f64::INFINITY;
    for mut k in 0..total {
        let choices: Vec<Choice> = names
            .iter()
            .zip(&options)
            .map(|(n, o)| {
                let region = o[k % o.len()];
                k /= o.len();
                Choice {
                    block: n.to_string(),
                    region: region.to_string(),
                    bytes: None,
                }
            })
            .collect();
        let p = place::apply(part, f, est, &choices, "search").expect("a placement");
        if p.fits {
            best = best.min(p.after_cycles);
        }
    }
    best
}

#[test]
fn the_advisor_fits_and_lies_between_its_floor_and_the_best_placement_there_is() {
    for rel in [
        "tiny_conv_relu_linear/model_int8_cortex_m55_default.pte",
        "digits/cnn_int8_cortex_m55_default.pte",
        "digits/cnn_int8_cortex_m55_explicit.pte",
    ] {
        let p = program(rel);
        let probe = part_of(3, 1 << 20);
        let (f, est) = fit_and_estimate(&p, &probe);
        let everything: u64 = place::default(&probe, &f, &est)
            .blocks
            .iter()
            .map(|b| b.bytes)
            .sum();
        // DTCM from a sliver to room for everything: the choice changes with the room
        for dtcm in [64, everything / 4, everything / 2, everything + 64] {
            for flash_ws in [1, 5] {
                let part = part_of(flash_ws, dtcm.max(16));
                let (f, est) = fit_and_estimate(&p, &part);
                let advised = place::advise(&part, &f, &est);
                let default = place::default(&part, &f, &est);
                let best = best_by_search(&part, &f, &est, &default);
                let at = format!("{rel}, DTCM {dtcm} B, flash {flash_ws} wait states");
                assert!(advised.fits, "{at}");
                assert!(advised.after_cycles <= default.after_cycles + 1e-6, "{at}");
                assert!(
                    advised.bound_cycles <= best + 1e-6,
                    "{at}: floor {} over the best placement {best}",
                    advised.bound_cycles
                );
                assert!(advised.after_cycles >= best - 1e-6, "{at}");
                assert_eq!(advised.before_cycles, default.after_cycles, "{at}");
                if dtcm > everything {
                    // room for everything: every block that costs cycles where the link puts
                    // it is in zero-wait memory (the temp allocator, unpriced, stays), and the
                    // floor is met
                    assert!(
                        advised
                            .blocks
                            .iter()
                            .filter(|b| b.default_memory_cycles > 0.0)
                            .all(|b| b.region == "dtcm" && b.memory_cycles == 0.0),
                        "{at}"
                    );
                    assert!((advised.after_cycles - best).abs() < 1e-6, "{at}");
                    assert!(
                        (advised.after_cycles - advised.bound_cycles).abs() < 1e-6,
                        "{at}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_placement_priced_after_the_estimate_equals_the_estimate_asked_for_those_regions() {
    let p = program("digits/cnn_int8_cortex_m55_default.pte");
    let part = part_of(4, 1 << 20);
    let (f, est) = fit_and_estimate(&p, &part);
    // every block in DTCM through a placement file's choices …
    let all: Vec<Choice> = place::default(&part, &f, &est)
        .blocks
        .iter()
        .map(|b| Choice {
            block: b.name.clone(),
            region: "dtcm".into(),
            bytes: None,
        })
        .collect();
    let placed = place::apply(&part, &f, &est, &all, "all-dtcm").expect("a placement");
    // … equals the estimate asked with zero-wait weights and arenas
    let direct = estimate(&p, 0, CostOptions::compute_only(part.core, part.mhz)).expect("estimate");
    assert!((placed.after_cycles - direct.total_cycles()).abs() < 1e-6);
    // and the default link equals the estimate with the part's own costs
    let sram = RegionCost {
        wait_states: 1,
        line_bytes: 8,
    };
    let link = estimate(
        &p,
        0,
        CostOptions {
            core: part.core,
            mhz: part.mhz,
            memory: MemoryCosts {
                weights: RegionCost {
                    wait_states: 4,
                    line_bytes: 16,
                },
                arenas: sram,
                dcache_bytes: 0,
                ..MemoryCosts::default()
            },
        },
    )
    .expect("estimate");
    assert!((placed.before_cycles - link.total_cycles()).abs() < 1e-6);
    assert!(link.total_cycles() > direct.total_cycles());
}

#[test]
fn the_placed_fit_counts_each_pool_and_copied_weight_in_its_region() {
    let p = program("digits/cnn_int8_cortex_m55_default.pte");
    let part = part_of(4, 1 << 20);
    let (f, est) = fit_and_estimate(&p, &part);
    let advised = place::advise(&part, &f, &est);
    let placed = fit::with_placement(&part, &f, &advised);
    assert_eq!(
        placed.ram_total,
        placed.pools.iter().map(|p| p.bytes).sum::<u64>()
    );
    let moved_weights: u64 = advised
        .moved()
        .filter(|b| b.is_weights())
        .map(|b| b.bytes)
        .sum();
    assert!(moved_weights > 0);
    assert_eq!(placed.ram_total, f.ram_total + moved_weights);
    for r in &placed.regions {
        let pools: u64 = placed
            .pools
            .iter()
            .filter(|p| p.region == r.name)
            .map(|p| p.bytes)
            .sum();
        let fixed = if r.name == "flash" {
            placed.flash_total
        } else {
            0
        };
        assert_eq!(r.used, pools + fixed, "{}", r.name);
        // the placement's own count of each region agrees
        let own = advised
            .regions
            .iter()
            .find(|u| u.name == r.name)
            .expect("the region");
        assert_eq!(own.used, r.used, "{}", r.name);
    }
}

#[test]
fn a_placement_file_naming_what_the_program_lacks_is_refused_naming_the_entry() {
    let p = program("digits/cnn_int8_cortex_m55_default.pte");
    let part = part_of(4, 1 << 20);
    let (f, est) = fit_and_estimate(&p, &part);
    let choices = place::parse(
        "[[place]]\nblock = \"temp allocator\"\nregion = \"dtcm\"\n[[place]]\nblock = \"weights of #99\"\nregion = \"dtcm\"\n",
        "mine.toml",
    )
    .expect("reads");
    let e = place::apply(&part, &f, &est, &choices, "mine.toml").unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("mine.toml: entry 2") && text.contains("weights of #99"),
        "{text}"
    );
    let to_flash = [Choice {
        block: "temp allocator".into(),
        region: "flash".into(),
        bytes: None,
    }];
    let e = place::apply(&part, &f, &est, &to_flash, "mine.toml").unwrap_err();
    assert!(e.to_string().contains("may not go to flash"), "{e}");
    // one block placed twice: refused, naming both entries
    let twice = place::parse(
        "[[place]]\nblock = \"temp allocator\"\nregion = \"dtcm\"\n[[place]]\nblock = \"temp allocator\"\nregion = \"sram\"\n",
        "mine.toml",
    )
    .expect("reads");
    let e = place::apply(&part, &f, &est, &twice, "mine.toml").unwrap_err();
    assert!(
        e.to_string().contains("entry 2") && e.to_string().contains("entry 1 placed it first"),
        "{e}"
    );
    // a size that is not the block's: the file was written for another program
    let stale = [Choice {
        block: "temp allocator".into(),
        region: "dtcm".into(),
        bytes: Some(1),
    }];
    let e = place::apply(&part, &f, &est, &stale, "mine.toml").unwrap_err();
    assert!(
        e.to_string().contains("says 1 bytes") && e.to_string().contains("entry 1"),
        "{e}"
    );
    // what the advisor writes reads back to the same placement
    let advised = place::advise(&part, &f, &est);
    let text = place::to_toml(&advised, "cnn.pte", &part);
    let again = place::apply(
        &part,
        &f,
        &est,
        &place::parse(&text, "placement.toml").expect("reads"),
        "placement.toml",
    )
    .expect("applies");
    assert_eq!(again.after_cycles, advised.after_cycles);
    assert_eq!(
        again.blocks.iter().map(|b| &b.region).collect::<Vec<_>>(),
        advised.blocks.iter().map(|b| &b.region).collect::<Vec<_>>()
    );
}

/// Where the link keeps static data and the stack in DTCM, the kernel registry (the runtime's
/// .bss) sits there before any block moves in: the advisor fills DTCM only up to what is left,
/// so a program that fits with the default link still fits as placed.
#[test]
fn the_advisor_leaves_room_for_the_static_data_the_link_keeps_in_fast_memory() {
    let p = program("digits/cnn_int8_cortex_m55_default.pte");
    let base = part_of(4, 1 << 20);
    let (f0, _) = fit_and_estimate(&p, &base);
    let registry = f0
        .pools
        .iter()
        .find(|pool| pool.name == "kernel registry")
        .map(|pool| pool.bytes)
        .expect("the registry");
    // DTCM holds the registry and a little more
    let mut part = part_of(4, registry + 4096);
    part.link.stack = "dtcm".into();
    let (f, est) = fit_and_estimate(&p, &part);
    assert!(f.fits, "the default link fits");
    let advised = place::advise(&part, &f, &est);
    assert!(advised.moved().count() > 0, "something moves to DTCM");
    let placed = place::placed_fit(&part, &f, &advised, &p, 0);
    assert!(placed.fits, "{:?}", placed.regions);
}

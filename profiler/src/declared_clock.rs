//! The clock a capture's target declared, carried inside the ETDump etscope saves it as, so the
//! `.etdp` keeps its time unit when it travels without its raw stream (`.etsw`).
//!
//! ETDump has no field for a time unit: ExecuTorch's Inspector is told one by its caller. A
//! saved capture whose target declared its tick clock stores nanoseconds; etscope says so with
//! one more entry in each run's `allocators` list, after any the target named:
//! `etscope.clock: ns from 32000000 Hz ticks, core cortex-m55 (emulated)`. No allocation event
//! refers to it (an event names its allocator by index, and this one comes last), and readers
//! that do not know it see an allocator nobody used.

use etscope_core::formats::etdump::{ETDump, RunData};

use crate::wire::TargetInfo;

const PREFIX: &str = "etscope.clock: ns from ";
const HZ: &str = " Hz ticks, core ";

/// The entry that declares `target`'s clock (and its core).
pub fn declaration(target: &TargetInfo) -> String {
    format!("{PREFIX}{}{HZ}{}", target.tick_hz, target.core)
}

/// Appends `target`'s declaration to `run`'s allocators (once).
pub fn declare(run: &mut RunData, target: &TargetInfo) {
    let entry = declaration(target);
    if !run.allocators.contains(&entry) {
        run.allocators.push(entry);
    }
}

/// The target a saved capture declares (its clock in Hz and its core; no program id, run count
/// or method), `None` when no run carries a declaration or the declarations disagree.
pub fn declared_in(dump: &ETDump) -> Option<TargetInfo> {
    let mut found: Option<(u32, &str)> = None;
    for run in &dump.runs {
        for entry in &run.allocators {
            let Some(parsed) = parse(entry) else {
                continue;
            };
            match found {
                Some(f) if f != parsed => return None,
                _ => found = Some(parsed),
            }
        }
    }
    let (tick_hz, core) = found?;
    Some(TargetInfo {
        tick_hz,
        program_id: 0,
        runs: 0,
        core: core.to_string(),
        method: String::new(),
    })
}

fn parse(entry: &str) -> Option<(u32, &str)> {
    let rest = entry.strip_prefix(PREFIX)?;
    let (hz, core) = rest.split_once(HZ)?;
    let hz: u32 = hz.parse().ok()?;
    (hz > 0).then_some((hz, core))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(hz: u32, core: &str) -> TargetInfo {
        TargetInfo {
            tick_hz: hz,
            program_id: 7,
            runs: 3,
            core: core.into(),
            method: "forward".into(),
        }
    }

    fn run(allocators: &[String]) -> RunData {
        RunData {
            name: "Execute".into(),
            bundled_input_index: -1,
            allocators: allocators.to_vec(),
            events: Vec::new(),
        }
    }

    #[test]
    fn a_declaration_reads_back_as_the_clock_and_core_it_declares() {
        let t = target(32_000_000, "cortex-m55 (emulated)");
        let mut r = run(&["method allocator".to_string()]);
        declare(&mut r, &t);
        declare(&mut r, &t);
        assert_eq!(
            r.allocators.len(),
            2,
            "declared once, after the target's own"
        );
        let dump = ETDump {
            version: 0,
            runs: vec![r.clone(), r],
        };
        let back = declared_in(&dump).expect("declared");
        assert_eq!(
            (back.tick_hz, back.core.as_str()),
            (32_000_000, "cortex-m55 (emulated)")
        );
    }

    #[test]
    fn no_declaration_or_two_that_disagree_declare_nothing() {
        let plain = ETDump {
            version: 0,
            runs: vec![
                run(&[]),
                run(&["etscope.clock: ns from 0 Hz ticks, core x".into()]),
            ],
        };
        assert!(declared_in(&plain).is_none());
        let a = declaration(&target(1_000, "m4"));
        let b = declaration(&target(2_000, "m4"));
        let mixed = ETDump {
            version: 0,
            runs: vec![run(&[a]), run(&[b])],
        };
        assert!(declared_in(&mixed).is_none());
    }
}

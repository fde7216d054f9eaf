//! `etscope parts [--json]`: the built-in parts (`core/src/part/parts.toml`, sources in
//! docs/parts.md). How `--part` finds one is `crate::part_spec`.

use anyhow::Result;
use etscope_core::part::{self, Part};
use serde_json::json;

use crate::table::Table;

/// A part as `parts --json`, `cost --json` and `fit --json` write it (docs/cli-json.md).
pub fn to_json(p: &Part) -> serde_json::Value {
    json!({
        "name": p.name,
        "core": p.core.key(),
        "mhz": p.mhz,
        "mhz_note": p.mhz_note,
        "probe_rs_chip": p.probe_rs_chip,
        "regions": p.regions.iter().map(|r| json!({
            "name": r.name,
            "kind": r.kind.name(),
            "base": r.base,
            "size": r.size,
            "wait_states": r.wait_states,
            "line_bytes": r.line_bytes,
            "source": r.source,
        })).collect::<Vec<_>>(),
        "link": {
            "code": p.link.code,
            "constants": p.link.constants,
            "arenas": p.link.arenas,
            "stack": p.link.stack,
            "source": p.link.source,
        },
        "cache": p.cache.as_ref().map(|c| json!({
            "data": c.data,
            "instruction": c.instruction,
            "source": c.source,
        })),
    })
}

pub fn run(as_json: bool) -> Result<()> {
    let parts = part::builtin();
    if as_json {
        return super::print_json(&parts.iter().map(to_json).collect::<Vec<_>>());
    }
    let mut t = Table::new(&[
        "part",
        "core",
        ">MHz",
        "regions",
        "constants in",
        "arenas in",
    ]);
    for p in &parts {
        let kib = |b: u64| {
            if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
                format!("{} MiB", b >> 20)
            } else {
                format!("{} KiB", b >> 10)
            }
        };
        t.row(vec![
            p.name.clone(),
            p.core.name().to_string(),
            format!("{}{}", p.mhz, if p.mhz_note.is_some() { "*" } else { "" }),
            p.regions
                .iter()
                .map(|r| format!("{} {}", r.name, kib(r.size)))
                .collect::<Vec<_>>()
                .join(", "),
            p.link.constants.clone(),
            p.link.arenas.clone(),
        ]);
    }
    print!("{}", t.render());
    println!("* a simulator's clock, assumed (it has no wall clock). Sources: docs/parts.md; --json has every region with its base, wait states and source.");
    Ok(())
}

/// `etscope parts`'s arguments.
#[derive(Debug, clap::Args)]
pub struct PartsArgs {
    #[arg(long)]
    pub json: bool,
}

/// Runs `etscope parts` with its arguments.
pub fn main(args: PartsArgs) -> Result<()> {
    let PartsArgs { json } = args;
    run(json)
}

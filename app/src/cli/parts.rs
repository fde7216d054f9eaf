//! `etscope parts [--json]`: the built-in parts (`core/src/part/parts.toml`, sources in
//! docs/parts.md), and how every command that takes `--part` finds one: a built-in part's name,
//! or a TOML file of the same form (`mine.toml`, `mine.toml#name` when it holds several), whose
//! part may name a probe-rs chip (`probe_rs_chip`) instead of listing its regions.

use std::path::Path;

use anyhow::{anyhow, Result};
use etscope_core::part::{self, Part};
use serde_json::json;

use crate::table::Table;

/// The part `spec` names: a built-in part, or a part file.
pub fn resolve(spec: &str) -> Result<Part> {
    if let Some(p) = part::find(spec) {
        return Ok(p);
    }
    let (file, name) = match spec.rsplit_once('#') {
        Some((f, n)) => (f, Some(n)),
        None => (spec, None),
    };
    let path = Path::new(file);
    if path.extension().and_then(|e| e.to_str()) != Some("toml") {
        let names: Vec<String> = part::builtin().into_iter().map(|p| p.name).collect();
        return Err(anyhow!(
            "--part {spec}: no such part: one of {}, or a part file (NAME.toml; `etscope parts` shows the form)",
            names.join(", ")
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| anyhow!("{file}: {e}"))?;
    // a part that names a probe-rs chip and lists no regions takes the chip's memory map
    let parts = part::parse_with(&text, file, &etscope_profiler::chip::memory_map)?;
    match name {
        Some(n) => parts
            .into_iter()
            .find(|p| p.name == n)
            .ok_or_else(|| anyhow!("{file}: no part named {n:?}")),
        None if parts.len() == 1 => Ok(parts
            .into_iter()
            .next()
            .ok_or_else(|| anyhow!("{file}: no part"))?),
        None => Err(anyhow!(
            "{file}: {} parts; name one: {file}#{}",
            parts.len(),
            parts[0].name
        )),
    }
}

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

//! How every command and the window find the part `--part` names: a built-in part's name, or a
//! TOML file of the same form (`mine.toml`, `mine.toml#name` when it holds several), whose part
//! may name a probe-rs chip (`probe_rs_chip`) instead of listing its regions.

use std::path::Path;

use anyhow::{anyhow, Result};
use etscope_core::part::{self, Part};

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

//! A chip's memory map from probe-rs's target database (the chips `record --probe --chip` names):
//! each RAM and non-volatile region with its base and size, for a part file that names a chip
//! instead of listing its regions (`core::part::parse_with`).

use etscope_core::part::{ChipRegion, RegionKind};

/// The RAM and non-volatile regions of probe-rs chip `name` (aliases left out), or why not.
pub fn memory_map(name: &str) -> Result<Vec<ChipRegion>, String> {
    let registry = probe_rs::config::Registry::from_builtin_families();
    let target = registry
        .get_target_by_name(name)
        .map_err(|e| format!("probe-rs has no chip {name:?}: {e}"))?;
    let mut out = Vec::new();
    for (k, region) in target.memory_map.iter().enumerate() {
        let (kind, range, region_name, alias, boot) = match region {
            probe_rs::config::MemoryRegion::Ram(r) => (
                RegionKind::Sram,
                r.range.clone(),
                r.name.clone(),
                r.is_alias,
                false,
            ),
            probe_rs::config::MemoryRegion::Nvm(r) => (
                RegionKind::Flash,
                r.range.clone(),
                r.name.clone(),
                r.is_alias,
                r.is_boot_memory(),
            ),
            probe_rs::config::MemoryRegion::Generic(_) => continue,
        };
        if alias || range.end <= range.start {
            continue;
        }
        let name = region_name.unwrap_or_else(|| format!("region {k}"));
        // probe-rs lists tightly coupled memory as RAM; its name says which
        let upper = name.to_ascii_uppercase();
        let kind = if kind == RegionKind::Sram && upper.contains("DTCM") {
            RegionKind::Dtcm
        } else if kind == RegionKind::Sram && upper.contains("ITCM") {
            RegionKind::Itcm
        } else {
            kind
        };
        out.push(ChipRegion {
            name,
            kind,
            base: range.start,
            size: range.end - range.start,
            boot,
        });
    }
    if out.is_empty() {
        return Err(format!("probe-rs lists no RAM or flash of chip {name:?}"));
    }
    Ok(out)
}

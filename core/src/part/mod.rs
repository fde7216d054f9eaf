//! A part: a Cortex-M core ([`Core`]) at a clock with its memory regions, and where a default
//! link puts code, constants, the planned arenas and the stack. The built-in parts are
//! `parts.toml` beside this file (every region names its source, expanded in `docs/parts.md`);
//! a part of the user's own is a TOML text of the same form, read by the same [`parse`] and
//! refused with an error naming the part, the region and the field.

pub mod code;

use serde::Deserialize;
use thiserror::Error;

use crate::cortex_m::Core;

/// What kind of memory a region is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionKind {
    Itcm,
    Dtcm,
    Sram,
    Flash,
    Mram,
    External,
}

impl RegionKind {
    /// Every kind as a part file spells it.
    pub const NAMES: [&'static str; 6] = ["itcm", "dtcm", "sram", "flash", "mram", "external"];

    pub fn parse(s: &str) -> Option<RegionKind> {
        Some(match s.to_ascii_lowercase().as_str() {
            "itcm" => RegionKind::Itcm,
            "dtcm" => RegionKind::Dtcm,
            "sram" => RegionKind::Sram,
            "flash" => RegionKind::Flash,
            "mram" => RegionKind::Mram,
            "external" => RegionKind::External,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            RegionKind::Itcm => "itcm",
            RegionKind::Dtcm => "dtcm",
            RegionKind::Sram => "sram",
            RegionKind::Flash => "flash",
            RegionKind::Mram => "mram",
            RegionKind::External => "external",
        }
    }
}

/// One memory region of a part.
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    pub name: String,
    pub kind: RegionKind,
    pub base: u64,
    pub size: u64,
    /// Wait states on a read at the part's clock, where a source states them (`None`: not
    /// known, and not charged).
    pub wait_states: Option<u32>,
    /// Bytes one access moves, where the part file says (`None`: a flash line of 16 bytes for
    /// flash, MRAM and external memory; the core's data bus for RAM).
    pub line_bytes: Option<u32>,
    /// Where the facts come from.
    pub source: String,
}

/// Where a default link puts each kind of thing: region names of the part.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub code: String,
    pub constants: String,
    pub arenas: String,
    pub stack: String,
    pub source: String,
}

/// A part.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub name: String,
    pub core: Core,
    pub mhz: f64,
    /// Why the clock is what it is, where it is not the part's own (a simulator's).
    pub mhz_note: Option<String>,
    /// The chip's name in probe-rs's target database, where it has the chip.
    pub probe_rs_chip: Option<String>,
    pub regions: Vec<Region>,
    pub link: Link,
    /// The caches the core runs with, where a source states them.
    pub cache: Option<Cache>,
}

/// The core's caches as the part's startup code leaves them.
#[derive(Debug, Clone, PartialEq)]
pub struct Cache {
    /// Bytes of data cache (0: none, left off, or not known: no credit either way).
    pub data: u32,
    /// Bytes of instruction cache, or of a flash cache instruction fetch goes through:
    /// `Some(0)` none (every instruction fetched from the code's region), `None` not known
    /// (code fetch is not charged).
    pub instruction: Option<u32>,
    pub source: String,
}

impl Part {
    /// The region named `name`.
    pub fn region(&self, name: &str) -> Option<&Region> {
        self.regions.iter().find(|r| r.name == name)
    }

    /// The region the constants (the program's weights, read in place) sit in.
    pub fn constants_region(&self) -> Option<&Region> {
        self.region(&self.link.constants)
    }
}

/// A region of a chip's memory map, as a target database lists it (the app reads probe-rs's for
/// a part file that names `probe_rs_chip` and lists no regions).
#[derive(Debug, Clone, PartialEq)]
pub struct ChipRegion {
    pub name: String,
    /// RAM is `Sram`, non-volatile memory `Flash`.
    pub kind: RegionKind,
    pub base: u64,
    pub size: u64,
    /// Where the chip boots from: a default link's code and constants.
    pub boot: bool,
}

/// Why a part file is refused.
#[derive(Debug, Error, PartialEq)]
pub enum PartError {
    #[error("{origin}: not TOML: {detail}")]
    Toml { origin: String, detail: String },
    #[error("{origin}: not a part file (docs/parts.md): {detail}")]
    Schema { origin: String, detail: String },
    #[error("{origin}: part {part:?}: {field}: {detail}")]
    Field {
        origin: String,
        part: String,
        field: String,
        detail: String,
    },
    #[error("{origin}: no [[part]] table")]
    Empty { origin: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileToml {
    #[serde(default)]
    part: Vec<PartToml>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PartToml {
    name: String,
    core: String,
    mhz: f64,
    mhz_note: Option<String>,
    probe_rs_chip: Option<String>,
    link: Option<LinkToml>,
    cache: Option<CacheToml>,
    #[serde(default)]
    region: Vec<RegionToml>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CacheToml {
    #[serde(default)]
    data: u32,
    #[serde(default)]
    instruction: Option<u32>,
    #[serde(default)]
    source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkToml {
    code: String,
    constants: String,
    arenas: String,
    stack: String,
    #[serde(default)]
    source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RegionToml {
    name: String,
    kind: String,
    base: toml::Value,
    size: u64,
    wait_states: Option<u32>,
    line_bytes: Option<u32>,
    #[serde(default)]
    source: String,
}

/// The parts of a part file's `text` (`origin` names it in errors), each checked: a core
/// etscope knows, a positive clock, regions with a kind, a hexadecimal base and a size that
/// stay within the 32-bit address space, distinct region names, and a link that names regions
/// of the part.
pub fn parse(text: &str, origin: &str) -> Result<Vec<Part>, PartError> {
    parse_with(text, origin, &|chip| {
        Err(format!(
            "no regions listed, and the regions of chip {chip:?} are read from probe-rs by the app"
        ))
    })
}

/// [`parse`], where a part that names `probe_rs_chip` and lists no regions takes the chip's
/// memory map from `chip_regions` (the app's: probe-rs's target database), and without a
/// `[part.link]` a default link: code and constants in the boot flash (else the first), the
/// arenas and the stack in the largest RAM.
pub fn parse_with(
    text: &str,
    origin: &str,
    chip_regions: &dyn Fn(&str) -> Result<Vec<ChipRegion>, String>,
) -> Result<Vec<Part>, PartError> {
    let file: FileToml = toml::from_str(text).map_err(|e| {
        let origin = origin.to_string();
        if toml::from_str::<toml::Table>(text).is_err() {
            return PartError::Toml {
                origin,
                detail: e.to_string().trim().replace('\n', " "),
            };
        }
        // well-formed TOML that is not a part: say what is wrong and on which line's table
        let at = e.span().map_or(String::new(), |span| {
            let line = text.get(..span.start).unwrap_or(text).matches('\n').count() + 1;
            let shown = text.lines().nth(line - 1).unwrap_or("").trim();
            format!(" (line {line}: `{shown}`)")
        });
        PartError::Schema {
            origin,
            detail: format!("{}{at}", e.message().trim()),
        }
    })?;
    if file.part.is_empty() {
        return Err(PartError::Empty {
            origin: origin.to_string(),
        });
    }
    file.part
        .into_iter()
        .map(|p| checked(from_chip(p, origin, chip_regions)?, origin))
        .collect()
}

/// `regions` with flash banks that follow one another merged into one region, named by their
/// names joined with `+`: a linker script's FLASH spans them, and a program may cross a bank's
/// end (probe-rs lists each bank of a dual-bank chip apart).
fn contiguous_flash_as_one(mut regions: Vec<ChipRegion>) -> Vec<ChipRegion> {
    regions.sort_by_key(|r| r.base);
    let mut out: Vec<ChipRegion> = Vec::with_capacity(regions.len());
    for r in regions {
        match out.last_mut() {
            Some(prev)
                if prev.kind == RegionKind::Flash
                    && r.kind == RegionKind::Flash
                    && prev.base.checked_add(prev.size) == Some(r.base) =>
            {
                prev.name = format!("{}+{}", prev.name, r.name);
                prev.size = prev.size.saturating_add(r.size);
                prev.boot |= r.boot;
            }
            _ => out.push(r),
        }
    }
    out
}

/// `p` with the regions and default link of its probe-rs chip, when it lists none.
fn from_chip(
    mut p: PartToml,
    origin: &str,
    chip_regions: &dyn Fn(&str) -> Result<Vec<ChipRegion>, String>,
) -> Result<PartToml, PartError> {
    let Some(chip) = p.probe_rs_chip.clone().filter(|_| p.region.is_empty()) else {
        return Ok(p);
    };
    let fail = |detail: String| PartError::Field {
        origin: origin.to_string(),
        part: p.name.clone(),
        field: "probe_rs_chip".into(),
        detail,
    };
    let regions = contiguous_flash_as_one(chip_regions(&chip).map_err(fail)?);
    let source = format!("probe-rs target database, chip {chip}");
    p.region = regions
        .iter()
        .map(|r| RegionToml {
            name: r.name.clone(),
            kind: r.kind.name().to_string(),
            base: toml::Value::String(format!("{:#x}", r.base)),
            size: r.size,
            wait_states: None,
            line_bytes: None,
            source: source.clone(),
        })
        .collect();
    if p.link.is_none() {
        let flash = regions
            .iter()
            .find(|r| r.kind == RegionKind::Flash && r.boot)
            .or_else(|| regions.iter().find(|r| r.kind == RegionKind::Flash));
        let ram = regions
            .iter()
            .filter(|r| r.kind == RegionKind::Sram)
            .max_by_key(|r| r.size);
        let (Some(flash), Some(ram)) = (flash, ram) else {
            return Err(fail(format!(
                "chip {chip} has no flash or no RAM in probe-rs's map; give [part.link] and the regions"
            )));
        };
        p.link = Some(LinkToml {
            code: flash.name.clone(),
            constants: flash.name.clone(),
            arenas: ram.name.clone(),
            stack: ram.name.clone(),
            source: format!(
                "a default link over probe-rs's map of {chip}: code and constants in the boot flash, arenas and stack in the largest RAM"
            ),
        });
    }
    Ok(p)
}

fn checked(p: PartToml, origin: &str) -> Result<Part, PartError> {
    let fail = |field: &str, detail: String| PartError::Field {
        origin: origin.to_string(),
        part: p.name.clone(),
        field: field.to_string(),
        detail,
    };
    let core = Core::parse_or_list(&p.core).map_err(|e| fail("core", e))?;
    if !(1.0..=2000.0).contains(&p.mhz) {
        return Err(fail(
            "mhz",
            format!(
                "{} is not a Cortex-M clock in MHz (between 1 and 2000)",
                p.mhz
            ),
        ));
    }
    let mut regions: Vec<Region> = Vec::with_capacity(p.region.len());
    for r in &p.region {
        let field = |f: &str| format!("region {:?}: {f}", r.name);
        let kind = RegionKind::parse(&r.kind).ok_or_else(|| {
            fail(
                &field("kind"),
                format!("{:?}: one of {}", r.kind, RegionKind::NAMES.join(", ")),
            )
        })?;
        let base = address(&r.base).ok_or_else(|| {
            fail(
                &field("base"),
                format!(
                    "{} is not an address: an integer, or a string in hexadecimal with 0x (\"0x20000000\") or in decimal",
                    r.base
                ),
            )
        })?;
        if r.size == 0 {
            return Err(fail(&field("size"), "0 bytes".into()));
        }
        let end = base.checked_add(r.size).filter(|&e| e <= 1 << 32);
        if end.is_none() {
            return Err(fail(
                &field("size"),
                format!(
                    "{} bytes from {:#x} pass the end of the 32-bit address space",
                    r.size, base
                ),
            ));
        }
        if r.line_bytes == Some(0) {
            return Err(fail(&field("line_bytes"), "0 bytes".into()));
        }
        if regions.iter().any(|o| o.name == r.name) {
            return Err(fail(&field("name"), "a second region of that name".into()));
        }
        if let Some(o) = regions
            .iter()
            .find(|o| linker_name(&o.name) == linker_name(&r.name))
        {
            return Err(fail(
                &field("name"),
                format!(
                    "written {} in a linker script, as region {:?} is: `fit -o` would declare it twice",
                    linker_name(&r.name),
                    o.name
                ),
            ));
        }
        regions.push(Region {
            name: r.name.clone(),
            kind,
            base,
            size: r.size,
            wait_states: r.wait_states,
            line_bytes: r.line_bytes,
            source: r.source.clone(),
        });
    }
    // two regions over one address range would count one byte twice
    for (i, a) in regions.iter().enumerate() {
        if let Some(b) = regions[..i].iter().find(|b| {
            a.base < b.base.saturating_add(b.size) && b.base < a.base.saturating_add(a.size)
        }) {
            return Err(fail(
                &format!("region {:?}: base", a.name),
                format!(
                    "{:#x}..{:#x} overlaps region {:?} ({:#x}..{:#x})",
                    a.base,
                    a.base.saturating_add(a.size),
                    b.name,
                    b.base,
                    b.base.saturating_add(b.size)
                ),
            ));
        }
    }
    let Some(l) = &p.link else {
        return Err(fail(
            "link",
            "no [part.link] (where code, constants, arenas and the stack go)".into(),
        ));
    };
    // RAM pools in flash would not run: the arenas and the stack go to memory that is written
    for (what, name) in [("arenas", &l.arenas), ("stack", &l.stack)] {
        if let Some(r) = regions
            .iter()
            .find(|r| &r.name == name)
            .filter(|r| matches!(r.kind, RegionKind::Flash | RegionKind::Mram))
        {
            return Err(fail(
                &format!("link.{what}"),
                format!(
                    "{name:?} is {} ({}): the {what} are written at run time, so they go to RAM",
                    r.kind.name(),
                    r.name
                ),
            ));
        }
    }
    for (what, name) in [
        ("code", &l.code),
        ("constants", &l.constants),
        ("arenas", &l.arenas),
        ("stack", &l.stack),
    ] {
        if !regions.iter().any(|r| &r.name == name) {
            let names: Vec<&str> = regions.iter().map(|r| r.name.as_str()).collect();
            return Err(fail(
                &format!("link.{what}"),
                format!("{name:?} is not a region of the part: {names:?}"),
            ));
        }
    }
    Ok(Part {
        name: p.name.clone(),
        core,
        mhz: p.mhz,
        mhz_note: p.mhz_note.clone(),
        probe_rs_chip: p.probe_rs_chip.clone(),
        regions,
        link: Link {
            code: l.code.clone(),
            constants: l.constants.clone(),
            arenas: l.arenas.clone(),
            stack: l.stack.clone(),
            source: l.source.clone(),
        },
        cache: p.cache.as_ref().map(|c| Cache {
            data: c.data,
            instruction: c.instruction,
            source: c.source.clone(),
        }),
    })
}

/// A region's base as a part file writes it: an integer, or a string in hexadecimal with `0x`
/// or in decimal.
fn address(v: &toml::Value) -> Option<u64> {
    match v {
        toml::Value::Integer(i) => u64::try_from(*i).ok(),
        toml::Value::String(s) => {
            let s = s.trim().replace('_', "");
            match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16).ok(),
                None => s.parse().ok(),
            }
        }
        _ => None,
    }
}

/// The built-in parts (`parts.toml`).
pub fn builtin() -> Vec<Part> {
    // checked by the test below: a built-in part that does not read is a build's bug
    parse(include_str!("parts.toml"), "built-in parts").unwrap_or_default()
}

/// The built-in part named `name` (case-insensitive).
pub fn find(name: &str) -> Option<Part> {
    builtin()
        .into_iter()
        .find(|p| p.name.eq_ignore_ascii_case(name.trim()))
}

/// A region name as a linker-script identifier (`Flash bank 1` → `FLASH_BANK_1`).
pub fn linker_name(region: &str) -> String {
    let mut out: String = region
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    let out = out.trim_matches('_').to_string();
    if out.starts_with(|c: char| c.is_ascii_digit()) || out.is_empty() {
        format!("R_{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_part_reads_and_links_to_its_own_regions() {
        let parts = parse(include_str!("parts.toml"), "built-in parts").expect("reads");
        let names: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
        for want in [
            "alif-e8-hp",
            "ek-ra8d1",
            "ek-ra6m4",
            "nucleo-l4r5zi",
            "nrf5340-dk",
            "numaker-m467hj",
            "nucleo-h7a3zi",
            "nucleo-g0b1re",
            "pico2",
            "corstone-300",
            "corstone-320",
            "mps3-an547",
        ] {
            assert!(names.contains(&want), "{want} missing: {names:?}");
        }
        for p in &parts {
            assert!(p.regions.iter().all(|r| !r.source.is_empty()), "{}", p.name);
            assert!(p.constants_region().is_some());
        }
        assert_eq!(find("NUCLEO-L4R5ZI").map(|p| p.core), Some(Core::M4));
    }

    #[test]
    fn a_bad_part_file_is_refused_naming_the_part_and_the_field() {
        let good = r#"
[[part]]
name = "mine"
core = "m33"
mhz = 100
[part.link]
code = "flash"
constants = "flash"
arenas = "ram"
stack = "ram"
[[part.region]]
name = "flash"
kind = "flash"
base = "0x0"
size = 1024
wait_states = 2
[[part.region]]
name = "ram"
kind = "sram"
base = "0x20000000"
size = 512
"#;
        let parts = parse(good, "mine.toml").expect("reads");
        assert_eq!(parts[0].core, Core::M33);
        // a region over another's addresses
        let e =
            parse(&good.replace("\"0x20000000\"", "\"0x200\""), "mine.toml").expect_err("overlap");
        assert!(e.to_string().contains("overlaps region \"flash\""), "{e}");
        // a base in decimal, as an integer, or in hexadecimal with 0x: the same address
        for base in [
            "\"536870912\"",
            "536870912",
            "0x20000000",
            "\"0x2000_0000\"",
        ] {
            let text = good.replace("\"0x20000000\"", base);
            let p = parse(&text, "mine.toml").unwrap_or_else(|e| panic!("{base}: {e}"));
            assert_eq!(
                p[0].region("ram").map(|r| r.base),
                Some(0x2000_0000),
                "{base}"
            );
        }
        assert_eq!(
            parts[0].constants_region().and_then(|r| r.wait_states),
            Some(2)
        );
        for (bad, field) in [
            (good.replace("\"m33\"", "\"m99\""), "core"),
            (good.replace("mhz = 100", "mhz = 0"), "mhz"),
            (good.replace("mhz = 100", "mhz = 5000"), "mhz"),
            (
                good.replace("kind = \"sram\"", "kind = \"dram\""),
                "region \"ram\": kind",
            ),
            (good.replace("0x20000000", "0xZZ"), "region \"ram\": base"),
            (
                good.replace("size = 512", "size = 0"),
                "region \"ram\": size",
            ),
            (
                good.replace("base = \"0x20000000\"", "base = \"0xFFFFFF00\""),
                "region \"ram\": size",
            ),
            (
                good.replace("arenas = \"ram\"", "arenas = \"dtcm\""),
                "link.arenas",
            ),
            (
                good.replace("arenas = \"ram\"", "arenas = \"flash\""),
                "link.arenas",
            ),
        ] {
            let err = parse(&bad, "mine.toml").expect_err(field).to_string();
            assert!(
                err.starts_with("mine.toml: part \"mine\": ") && err.contains(field),
                "{field}: {err}"
            );
        }
        // two regions one linker name: the fragment `fit -o` writes would declare it twice
        let twin = format!(
            "{good}[[part.region]]\nname = \"RAM\"\nkind = \"sram\"\nbase = \"0x30000000\"\nsize = 64\n"
        );
        let err = parse(&twin, "mine.toml").expect_err("twin").to_string();
        assert!(err.contains("region \"RAM\": name: written RAM"), "{err}");
        // TOML that is not a part file names what is wrong and the line's table
        let err = parse(&good.replace("size = 512\n", ""), "mine.toml").expect_err("no size");
        assert_eq!(
            err.to_string(),
            "mine.toml: not a part file (docs/parts.md): missing field `size` (line 17: `[[part.region]]`)"
        );
        let err = parse("[[part]]\nname = 1", "x.toml").expect_err("not a part");
        assert!(
            err.to_string().starts_with("x.toml: not a part file"),
            "{err}"
        );
        let err = parse("[[part]]\nname = ", "x.toml").expect_err("not TOML");
        assert!(err.to_string().starts_with("x.toml: not TOML"), "{err}");
        assert!(parse("", "empty.toml").is_err());
    }
}

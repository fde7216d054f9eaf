//! A placement as a file: `[[place]]` entries of a block and a region, as `fit --place FILE`
//! reads it and `fit --place … -o` and File ▸ Export write it.

use std::fmt::Write;

use serde::Deserialize;

use super::{PlaceError, Placement};
use crate::part::Part;

/// One line of a placement file: a block and the region it goes to.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Choice {
    pub block: String,
    pub region: String,
    /// The block's bytes as written; when given, it must be the block's size in the program.
    #[serde(default)]
    pub bytes: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlacementFile {
    #[serde(default)]
    place: Vec<Choice>,
}

/// The choices of a placement file's `text` (`origin` names it in errors).
pub fn parse(text: &str, origin: &str) -> Result<Vec<Choice>, PlaceError> {
    let file: PlacementFile = toml::from_str(text).map_err(|e| PlaceError::Toml {
        origin: origin.to_string(),
        detail: e.to_string().trim().replace('\n', " "),
    })?;
    Ok(file.place)
}

/// A placement as a file `--place FILE` reads back: every block not where the default link
/// puts it.
pub fn to_toml(p: &Placement, program: &str, part: &Part) -> String {
    let mut s = format!(
        "# etscope placement of {program} on {}: the blocks not where the part's default link puts them.\n# Read back with `etscope fit {program} --part {} --place FILE` (--part the part file, for a part of your own).\n# Estimate: {:.0} cycles with the default link, {:.0} with this placement.\n",
        part.name, part.name, p.before_cycles, p.after_cycles
    );
    for b in p.moved() {
        let _ = write!(
            s,
            "\n[[place]]\nblock = {:?}\nregion = {:?}\nbytes = {}\n",
            b.name, b.region, b.bytes
        );
    }
    s
}

//! `etscope open FILE… [--json] [--no-siblings]`: what the window makes of a set of files,
//! without a window — each program with the files attached to it (found beside it by name
//! unless `--no-siblings`), its stages, and one line per file no program takes and why. The
//! same loader as the window's (`crate::load::batch`), so a file behaves the same either way.

use std::path::PathBuf;

use anyhow::{bail, Result};

use crate::load::batch::{self, Opened};

pub fn run(files: &[PathBuf], siblings: bool, as_json: bool) -> Result<()> {
    let (paths, found) = batch::with_siblings(files, siblings);
    let (documents, errors) = batch::load(&paths, None, &|_| {});
    let opened = Opened::of(&documents, &errors);
    if as_json {
        super::print_json(&opened)?;
    } else {
        for d in &opened.documents {
            println!("{}", d.title);
            for f in d.files.iter().skip(1) {
                let beside = found.iter().any(|p| batch::display_name(p) == *f);
                println!("  + {f}{}", if beside { "  (found beside it)" } else { "" });
            }
            println!("  stages: {}", d.stages.join(", "));
            if d.profile {
                println!("  profile: yes");
            }
            if d.captured_tensors > 0 {
                println!("  captured tensors: {}", d.captured_tensors);
            }
        }
        for e in &opened.errors {
            println!("error: {e}");
        }
    }
    if opened.documents.is_empty() {
        bail!("none of the files opened");
    }
    Ok(())
}

/// `etscope open`'s arguments.
#[derive(Debug, clap::Args)]
pub struct OpenArgs {
    #[arg(required = true)]
    pub files: Vec<std::path::PathBuf>,
    /// Open only the files given.
    #[arg(long)]
    pub no_siblings: bool,
    #[arg(long)]
    pub json: bool,
}

/// Runs `etscope open` with its arguments.
pub fn main(args: OpenArgs) -> Result<()> {
    let OpenArgs {
        files,
        no_siblings,
        json,
    } = args;
    run(&files, !no_siblings, json)
}

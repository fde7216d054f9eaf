//! What a firmware needs of a program on a part, written into a folder: `fit -o DIR` and the
//! window's File ▸ Export for the firmware write the same files. `etscope_pools.h` (the Arm
//! runner's pool sizes) and `etscope_regions.ld` (the part's regions and where the pools go);
//! with a placement, `placement.toml` and `placed_cost.csv`; when the placement moves weights
//! into RAM, the placed program for ExecuTorch's runtime (`NAME.pte`, `NAME.ptd`) and
//! `etscope_placed_weights.cpp`, which loads them.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use etscope_core::analysis::cost::CostEstimate;
use etscope_core::analysis::fit::Fit;
use etscope_core::analysis::fit_files;
use etscope_core::analysis::place;
use etscope_core::part::Part;

/// Writes into `dir` (made if missing) what a firmware needs of plan `index` of `program` (read
/// from `path`) on `part` with its fit `f`, and of a placement priced against the estimate
/// `before` it; the paths written.
pub fn write(
    dir: &Path,
    path: &Path,
    program: &etscope_core::formats::pte::Program,
    index: usize,
    part: &Part,
    f: &Fit,
    placed: Option<(&place::Placement, &CostEstimate)>,
) -> Result<Written> {
    let inputs = program
        .input_count(index)
        .ok_or_else(|| anyhow!("{}: no plan {index}", path.display()))?;
    let pools = fit_files::runner_pools(
        &f.arenas,
        f.budget.method_allocator,
        f.budget.temp_allocator,
        inputs as u64,
    );
    std::fs::create_dir_all(dir).map_err(|e| anyhow!("{}: {e}", dir.display()))?;
    // the placed program is a .pte (a BundledProgram's program is written without its tests)
    let name = path.file_name().map_or_else(String::new, |n| {
        Path::new(n)
            .with_extension("pte")
            .to_string_lossy()
            .to_string()
    });
    let sections = match placed {
        Some((p, _)) => fit_files::Sections::placed(part, p),
        None => fit_files::Sections::default_link(part),
    };
    let placed_program = match placed {
        Some((p, _)) => place::placed_program(program, index, p)
            .map_err(|e| anyhow!("{}: {e}", path.display()))?,
        None => None,
    };
    // the command that writes these files again, the placement as the file written beside
    // them (the same bytes from the window's export: no paths of this machine)
    let command = format!(
        "etscope fit {name} --part {}{} -o DIR",
        part.name,
        if placed.is_some() {
            " --place DIR/placement.toml"
        } else {
            ""
        }
    );
    let mut files = vec![
        (
            "etscope_pools.h".to_string(),
            fit_files::header(&command, part, f, pools),
        ),
        (
            "etscope_regions.ld".to_string(),
            fit_files::linker_fragment(&command, part, pools, &sections, placed_program.as_ref()),
        ),
    ];
    if let Some((p, before)) = placed {
        files.push(("placement.toml".into(), place::to_toml(p, &name, part)));
        files.push((
            "placed_cost.csv".into(),
            placed_cost_csv(before, &p.estimate),
        ));
    }
    let mut binaries: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    if let Some(pp) = &placed_program {
        let pte = dir.join(&name);
        if crate::siblings::same_file(&pte, path) {
            return Err(anyhow!(
                "{}: -o {} is the program's own folder; the placed program would overwrite it",
                path.display(),
                dir.display()
            ));
        }
        files.push((
            "etscope_placed_weights.cpp".into(),
            fit_files::placed_weights_source(&name, part, pp),
        ));
        binaries.push((crate::siblings::ptd_of(&pte), pp.ptd.clone()));
        binaries.push((pte, pp.pte.clone()));
    }
    let removed = if placed_program.is_none() {
        remove_earlier_placed_program(dir, &name, path)
    } else {
        Vec::new()
    };
    let mut written = Vec::new();
    for (file, text) in files {
        let p = dir.join(file);
        std::fs::write(&p, text).map_err(|e| anyhow!("{}: cannot write: {e}", p.display()))?;
        written.push(p.display().to_string());
    }
    for (p, bytes) in binaries {
        std::fs::write(&p, bytes).map_err(|e| anyhow!("{}: cannot write: {e}", p.display()))?;
        written.push(p.display().to_string());
    }
    Ok(Written { written, removed })
}

/// What [`write`] wrote, and the files of an earlier placed program it removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    pub written: Vec<String>,
    /// An earlier `-o` into the folder wrote a placed program this placement does not make
    /// (its loader would link against sections the new fragment no longer has).
    pub removed: Vec<String>,
}

/// Removes what an earlier `-o` wrote of a placed program `name` into `dir`: the loader etscope
/// wrote (its first line says so) and the program with its `.ptd` when that program reads only
/// the constants etscope moves. Never the program being fitted (`input`) or its `.ptd`: nothing
/// is removed when the placed program would be it. The paths removed.
fn remove_earlier_placed_program(dir: &Path, name: &str, input: &Path) -> Vec<String> {
    let mut removed = Vec::new();
    let loader = dir.join("etscope_placed_weights.cpp");
    let ours =
        std::fs::read_to_string(&loader).is_ok_and(|t| t.starts_with("/* Written by `etscope fit"));
    if !ours {
        return removed;
    }
    let pte = dir.join(name);
    let ptd = crate::siblings::ptd_of(&pte);
    let same = crate::siblings::same_file;
    if same(&pte, input) || crate::siblings::ptd_beside(input).is_some_and(|p| same(&ptd, &p)) {
        return removed;
    }
    let placed_by_etscope = std::fs::read(&pte)
        .ok()
        .and_then(|b| etscope_core::formats::pte::Program::parse(b).ok())
        .is_some_and(|p| {
            let keys = p.external_keys();
            !keys.is_empty() && keys.iter().all(|k| k.starts_with("etscope.constant_"))
        });
    let mut paths = vec![loader];
    if placed_by_etscope {
        paths.push(pte);
        paths.push(ptd);
    }
    for p in paths {
        if std::fs::remove_file(&p).is_ok() {
            removed.push(p.display().to_string());
        }
    }
    removed
}

/// Each call's estimated cycles with the default link and placed.
fn placed_cost_csv(before: &CostEstimate, after: &CostEstimate) -> String {
    let mut s = String::from("instruction_id,op,cycles_default_link,cycles_placed\n");
    for (b, a) in before.rows.iter().zip(&after.rows) {
        let c = |x: Option<f64>| x.map_or(String::new(), |c| format!("{c:.0}"));
        s.push_str(&format!(
            "{},{},{},{}\n",
            b.instruction_id,
            b.op,
            c(b.cycles),
            c(a.cycles)
        ));
    }
    s
}

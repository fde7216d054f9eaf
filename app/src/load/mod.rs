//! Reads files from disk and hands their bytes to `core`'s readers, naming the file in every error.

pub mod batch;
pub mod dataset;

use std::path::Path;

use anyhow::{bail, Context, Result};
use etscope_core::formats::bundled::BundledProgram;
use etscope_core::formats::etdump::ETDump;
use etscope_core::formats::etrecord::ETRecord;
use etscope_core::formats::kind::FileKind;
use etscope_core::formats::pte::Program;

/// Reads a whole file, with the path in the error.
pub fn bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))
}

/// The kind a file name promises, from its extension.
fn kind_from_extension(path: &Path) -> Option<FileKind> {
    match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "pte" => Some(FileKind::Pte),
        "bpte" => Some(FileKind::Bpte),
        "etdp" | "etdump" => Some(FileKind::Etdump),
        "etrecord" => Some(FileKind::Etrecord),
        "npy" => Some(FileKind::Npy),
        "ptd" => Some(FileKind::Ptd),
        _ => None,
    }
}

/// Detects a file's kind from its bytes; a known extension that disagrees with the content is
/// an error (a renamed or mixed-up file), an unknown extension defers to the content.
pub fn kind_of(path: &Path, data: &[u8]) -> Result<FileKind> {
    let detected = match FileKind::detect(data) {
        Some(k) => k,
        None if data.is_empty() => bail!("{}: empty file", path.display()),
        None => bail!(
            "{}: not an ExecuTorch artifact (no ET12/BP08/ED00 identifier, zip or npy magic in the first {} bytes)",
            path.display(),
            data.len().min(12)
        ),
    };
    match kind_from_extension(path) {
        Some(named) if named != detected => {
            bail!(
                "{}: named as a {} file but holds a {} file",
                path.display(),
                named.name(),
                detected.name()
            )
        }
        _ => Ok(detected),
    }
}

fn expect_kind(path: &Path, data: &[u8], want: FileKind) -> Result<()> {
    let got = kind_of(path, data)?;
    if got != want {
        // "an .etrecord", "a .pte": the article as the name is read
        let article = |n: &str| {
            if n.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            }
        };
        bail!(
            "{}: expected {} {} file, found {} {} file",
            path.display(),
            article(want.name()),
            want.name(),
            article(got.name()),
            got.name()
        );
    }
    Ok(())
}

/// Loads a `.pte` (or the program inside a `.bpte`).
pub fn program(path: &Path) -> Result<Program> {
    let data = bytes(path)?;
    match kind_of(path, &data)? {
        FileKind::Bpte => Ok(BundledProgram::parse(&data)
            .with_context(|| path.display().to_string())?
            .program),
        FileKind::Pte => {
            let mut program = Program::parse(data).with_context(|| path.display().to_string())?;
            let ptd = crate::siblings::ptd_beside(path);
            if let Some(ptd) = ptd.filter(|_| !program.external_keys().is_empty()) {
                // a neighbour found by name: a warning when it cannot be used, never a refusal
                // of the program (its graph, plan and memory need no weights; a run that does
                // names the missing tensor)
                if let Err(e) = attach_external(&mut program, &ptd) {
                    warn_skipped(&ptd, &e);
                    program.note_refused_external_data(format!(
                        "{} is beside it but was refused ({e:#})",
                        ptd.display()
                    ));
                }
            }
            Ok(program)
        }
        other => bail!(
            "{}: expected a pte file, found a {} file",
            path.display(),
            other.name()
        ),
    }
}

/// Says on stderr that a file found beside another by its name is skipped, and why.
pub fn warn_skipped(path: &Path, error: &anyhow::Error) {
    eprintln!(
        "warning: {}: skipped ({:#}); found beside the file given by its name",
        path.display(),
        error
    );
}

/// Loads an ETDump.
pub fn etdump(path: &Path) -> Result<ETDump> {
    let data = bytes(path)?;
    expect_kind(path, &data, FileKind::Etdump)?;
    ETDump::parse(&data).with_context(|| path.display().to_string())
}

/// Loads an ETRecord.
pub fn etrecord(path: &Path) -> Result<ETRecord> {
    let data = bytes(path)?;
    expect_kind(path, &data, FileKind::Etrecord)?;
    ETRecord::parse(&data).with_context(|| path.display().to_string())
}

/// Attaches the `.ptd` at `path` (the tensors `program` keeps outside itself).
pub fn attach_external(program: &mut Program, path: &Path) -> Result<()> {
    let data = bytes(path)?;
    expect_kind(path, &data, FileKind::Ptd)?;
    let file = etscope_core::formats::flat_tensor::FlatTensorFile::parse(data)
        .with_context(|| path.display().to_string())?;
    program
        .attach_external_data(std::sync::Arc::new(file))
        .with_context(|| path.display().to_string())
}

/// The target a capture saved by etscope was recorded from, with a clock: its raw stream beside
/// it names the core and the tick rate (such a capture stores nanoseconds of that clock), and so
/// does the ETDump itself, `dump` (read from `etdump`), when it travels alone
/// ([`etscope_profiler::declared_clock`]).
pub fn capture_target(etdump: &Path, dump: &ETDump) -> Option<etscope_profiler::wire::TargetInfo> {
    use etscope_profiler::session::{capture_paths, declared_target};
    std::fs::read(capture_paths(etdump).2)
        .ok()
        .and_then(|raw| declared_target(&raw))
        .or_else(|| etscope_profiler::declared_clock::declared_in(dump))
        .filter(|t| t.tick_hz > 0)
}

/// The ticks per µs to show `etdump`'s times at: `given`, or 1000 (nanoseconds) when the
/// capture declares its clock; a `given` rate that contradicts the declaration is refused, since
/// it would scale the stored nanoseconds as if they were ticks.
pub fn capture_rate(
    etdump: &Path,
    given: Option<f64>,
    target: Option<&etscope_profiler::wire::TargetInfo>,
) -> anyhow::Result<Option<f64>> {
    if let Some(rate) = given.filter(|r| !(r.is_finite() && *r > 0.0)) {
        anyhow::bail!(
            "{}: a tick rate of {rate} per microsecond is not a positive number",
            etdump.display()
        );
    }
    match (given, target) {
        (Some(rate), Some(t)) if rate != 1000.0 => anyhow::bail!(
            "{}: the capture declares its times in nanoseconds (from its target's {} Hz clock, {}); \
             --ticks-per-us {rate} would read them as ticks — leave it out (or give 1000)",
            etdump.display(),
            t.tick_hz,
            t.core
        ),
        (Some(rate), _) => Ok(Some(rate)),
        (None, Some(_)) => Ok(Some(1000.0)),
        (None, None) => Ok(None),
    }
}

/// The machine and clock a capture comes from, as its declared target (if any) says: an
/// emulator when the core name says so, the part it names otherwise, undeclared without one.
pub fn capture_origin(
    target: Option<&etscope_profiler::wire::TargetInfo>,
) -> etscope_core::analysis::profile_compare::Origin {
    use etscope_core::analysis::cost::measured::CaptureMachine;
    etscope_core::analysis::profile_compare::Origin {
        machine: CaptureMachine::declared(
            target.map(|t| t.core.as_str()),
            target.is_some_and(|t| etscope_profiler::session::is_emulated(&t.core)),
        ),
        clock_hz: target.map(|t| t.tick_hz).filter(|&hz| hz > 0),
    }
}

/// Refuses an ETDump that was not recorded running plan `plan_index` of `program` (read from
/// `pte`).
pub fn ensure_etdump_fits(
    program: &Program,
    plan_index: usize,
    dump: &etscope_core::formats::etdump::ETDump,
    etdump: &Path,
    pte: &Path,
) -> Result<()> {
    etscope_core::analysis::identity::check_etdump(program, plan_index, dump)
        .with_context(|| format!("{}: does not belong to {}", etdump.display(), pte.display()))
}

/// Refuses an ETRecord that was not made for plan `plan_index` of `program` (read from `pte`).
pub fn ensure_etrecord_fits(
    program: &Program,
    plan_index: usize,
    rec: &etscope_core::formats::etrecord::ETRecord,
    etrecord: &Path,
    pte: &Path,
) -> Result<()> {
    etscope_core::analysis::identity::check_etrecord(program, plan_index, rec).with_context(|| {
        format!(
            "{}: does not belong to {}",
            etrecord.display(),
            pte.display()
        )
    })
}

//! Reads files from disk and hands their bytes to `core`'s readers, naming the file in every error.

use std::path::Path;

use anyhow::{bail, Context, Result};
use etscope_core::bundled::BundledProgram;
use etscope_core::etdump::ETDump;
use etscope_core::etrecord::ETRecord;
use etscope_core::kind::FileKind;
use etscope_core::pte::Program;
use etscope_core::tensor::TensorData;

/// Reads a whole file, with the path in the error.
pub fn bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))
}

/// Detects a file's kind from its bytes.
pub fn kind_of(path: &Path, data: &[u8]) -> Result<FileKind> {
    match FileKind::detect(data) {
        Some(k) => Ok(k),
        None if data.is_empty() => bail!("{}: empty file", path.display()),
        None => bail!(
            "{}: not an ExecuTorch artifact (no ET12/BP08/ED00 identifier, zip or npy magic in the first {} bytes)",
            path.display(),
            data.len().min(12)
        ),
    }
}

fn expect_kind(path: &Path, data: &[u8], want: FileKind) -> Result<()> {
    let got = kind_of(path, data)?;
    if got != want {
        bail!("{}: expected a {} file, found a {} file", path.display(), want.name(), got.name());
    }
    Ok(())
}

/// Loads a `.pte` (or the program inside a `.bpte`).
pub fn program(path: &Path) -> Result<Program> {
    let data = bytes(path)?;
    if data.len() >= 8 && &data[4..8] == b"BP08" {
        return Ok(BundledProgram::parse(&data).with_context(|| path.display().to_string())?.program);
    }
    if let Some(k) = FileKind::detect(&data).filter(|&k| k != FileKind::Pte) {
        bail!("{}: expected a pte file, found a {} file", path.display(), k.name());
    }
    Program::parse(data).with_context(|| path.display().to_string())
}

/// Loads an ETDump.
pub fn etdump(path: &Path) -> Result<ETDump> {
    let data = bytes(path)?;
    if let Some(k) = FileKind::detect(&data).filter(|&k| k != FileKind::Etdump) {
        bail!("{}: expected an etdump file, found a {} file", path.display(), k.name());
    }
    ETDump::parse(&data).with_context(|| path.display().to_string())
}

/// Loads an ETRecord.
pub fn etrecord(path: &Path) -> Result<ETRecord> {
    let data = bytes(path)?;
    expect_kind(path, &data, FileKind::Etrecord)?;
    ETRecord::parse(&data).with_context(|| path.display().to_string())
}

/// Loads a `.npy` array.
pub fn npy(path: &Path) -> Result<TensorData> {
    let data = bytes(path)?;
    etscope_core::npy::read_npy(&data).with_context(|| path.display().to_string())
}

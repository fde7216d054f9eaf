//! FlatBuffer helpers shared by the readers: identifier checks and verifier limits.

use flatbuffers::VerifierOptions;

use crate::error::{Error, Result};

/// Verifier limits sized for the largest real programs (tens of thousands of values).
pub(crate) fn verifier_options(len: usize) -> VerifierOptions {
    VerifierOptions {
        max_depth: 64,
        max_tables: 64_000_000,
        max_apparent_size: len.saturating_mul(2).max(1 << 20),
        ignore_missing_null_terminator: false,
    }
}

/// Checks the 4-byte FlatBuffer identifier at `at` and the minimum length.
pub(crate) fn check_identifier(
    bytes: &[u8],
    at: usize,
    expected: &str,
    kind: &'static str,
) -> Result<()> {
    let end = at + 4;
    if bytes.len() < end {
        return Err(Error::Truncated {
            what: format!("{kind} header"),
            needed: end as u64,
            available: bytes.len() as u64,
        });
    }
    let found = &bytes[at..end];
    if found != expected.as_bytes() {
        return Err(Error::WrongIdentifier {
            kind,
            expected: expected.to_string(),
            found: String::from_utf8_lossy(found).into_owned(),
        });
    }
    Ok(())
}

/// Runs only the FlatBuffers verifier over a `.pte` (no conversion): the floor any safe reader
/// pays, used as the baseline of the read benchmark.
pub fn verify_program(bytes: &[u8]) -> Result<()> {
    check_identifier(bytes, 4, "ET12", "program (.pte)")?;
    crate::generated::program::executorch_flatbuffer::root_as_program_with_opts(
        &verifier_options(bytes.len()),
        bytes,
    )
    .map(|_| ())
    .map_err(|e| Error::Corrupt {
        kind: "program (.pte)",
        detail: e.to_string(),
    })
}

/// Runs only the FlatBuffers verifier over a size-prefixed ETDump (benchmark baseline).
pub fn verify_etdump(bytes: &[u8]) -> Result<()> {
    check_identifier(bytes, 8, "ED00", "ETDump (.etdp)")?;
    crate::generated::etdump::etdump::size_prefixed_root_as_etdump_with_opts(
        &verifier_options(bytes.len()),
        bytes,
    )
    .map(|_| ())
    .map_err(|e| Error::Corrupt {
        kind: "ETDump (.etdp)",
        detail: e.to_string(),
    })
}

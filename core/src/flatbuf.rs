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
pub(crate) fn check_identifier(bytes: &[u8], at: usize, expected: &str, kind: &'static str) -> Result<()> {
    let end = at + 4;
    if bytes.len() < end {
        return Err(Error::Truncated { what: format!("{kind} header"), needed: end as u64, available: bytes.len() as u64 });
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

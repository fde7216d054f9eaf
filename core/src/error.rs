//! The one error type of `core`: every reader and derivation says what is wrong with its input.
//!
//! Messages name the structure and the fact that failed ("truncated: ...", "wrong file identifier ...");
//! the caller that knows the file path prefixes it.

use thiserror::Error;

/// What went wrong while reading or deriving from an ExecuTorch artifact.
#[derive(Debug, Error)]
pub enum Error {
    /// The input ends before a structure it declares.
    #[error("truncated: {what} needs {needed} bytes, file has {available}")]
    Truncated {
        what: String,
        needed: u64,
        available: u64,
    },
    /// The FlatBuffer file identifier (or magic) is not the one this reader expects.
    #[error(
        "wrong file identifier: expected {expected:?}, found {found:?} (is this a {kind} file?)"
    )]
    WrongIdentifier {
        kind: &'static str,
        expected: String,
        found: String,
    },
    /// The FlatBuffer verifier rejected the buffer.
    #[error("corrupt {kind} flatbuffer: {detail}")]
    Corrupt { kind: &'static str, detail: String },
    /// An index stored in the file points past the table it indexes.
    #[error("out-of-range index: {what} = {index}, but only {len} exist")]
    OutOfRange {
        what: String,
        index: i64,
        len: usize,
    },
    /// A size or count is larger than anything a real artifact holds; refused before allocating.
    #[error("hostile size: {what} claims {claimed} bytes (limit {limit})")]
    TooLarge {
        what: String,
        claimed: u128,
        limit: u64,
    },
    /// A format version this reader does not understand.
    #[error("unsupported {what} version {version}")]
    UnsupportedVersion { what: &'static str, version: String },
    /// Structurally valid but semantically wrong content.
    #[error("invalid {what}: {detail}")]
    Invalid { what: String, detail: String },
    /// An ETRecord zip entry or archive problem.
    #[error("zip: {0}")]
    Zip(String),
    /// A JSON document inside an artifact did not parse or lacks a field.
    #[error("json in {entry}: {detail}")]
    Json { entry: String, detail: String },
    /// A `.npy` array problem.
    #[error("npy: {0}")]
    Npy(String),
}

/// Result alias used throughout `core`.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn invalid(what: impl Into<String>, detail: impl Into<String>) -> Self {
        Error::Invalid {
            what: what.into(),
            detail: detail.into(),
        }
    }

    pub(crate) fn out_of_range(what: impl Into<String>, index: i64, len: usize) -> Self {
        Error::OutOfRange {
            what: what.into(),
            index,
            len,
        }
    }
}

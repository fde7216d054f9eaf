//! FlatBuffer helpers shared by the readers: identifier checks, verifier limits, and the one
//! place where etscope's verifier is looser than the Rust crate's (empty vectors of 8-byte
//! elements aligned to 4 only, as FlatBuffers builders before 2024 wrote them).

use flatbuffers::{ErrorTraceDetail, InvalidFlatbuffer, VerifierOptions};

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

/// How many unaligned empty vectors one buffer may have realigned before its verification error
/// stands (each one costs a copy and a verification of the buffer).
const MAX_REALIGNED_EMPTY_VECTORS: usize = 256;

/// Verifies `bytes` with `root` as ExecuTorch's runtime would accept them.
///
/// FlatBuffers builders before 2024 (the `flatc` of ExecuTorch 0.x among them) align an *empty*
/// vector only for its 4-byte length, so an empty `[long]`/`[ulong]`/`[double]` can start at 4
/// mod 8. The C++ verifier ExecuTorch uses never checks vector element alignment (and the
/// runtime's default `Verification::Minimal` runs no verifier at all); the Rust crate's does and
/// refuses such files. When `root` fails on exactly that, the empty vector is re-pointed to an
/// aligned empty vector appended to a copy of the buffer (`realigned` keeps it), which reads
/// the same; the copy is verified again in full. Any other error is returned as it is.
pub(crate) fn root_accepting_unaligned_empty_vectors<'b, T>(
    bytes: &'b [u8],
    realigned: &'b mut Option<Vec<u8>>,
    root: impl Fn(&'b [u8]) -> std::result::Result<T, InvalidFlatbuffer>,
    verify: impl Fn(&[u8]) -> std::result::Result<(), InvalidFlatbuffer>,
) -> std::result::Result<T, InvalidFlatbuffer> {
    let mut error = match root(bytes) {
        Ok(root) => return Ok(root),
        Err(e) => e,
    };
    let mut copy: Option<Vec<u8>> = None;
    for _ in 0..MAX_REALIGNED_EMPTY_VECTORS {
        let buf = copy.get_or_insert_with(|| bytes.to_vec());
        if !realign_empty_vector(buf, &error) {
            return Err(error);
        }
        match verify(buf) {
            Ok(()) => {
                let kept: &'b Vec<u8> = realigned.insert(copy.unwrap_or_default());
                return root(kept);
            }
            Err(e) => error = e,
        }
    }
    Err(error)
}

/// If `error` is the verifier refusing an empty vector whose elements would start unaligned,
/// appends an 8-byte-aligned empty vector to `buf`, points the referring offset at it and
/// returns true; otherwise leaves `buf` alone and returns false.
fn realign_empty_vector(buf: &mut Vec<u8>, error: &InvalidFlatbuffer) -> bool {
    let InvalidFlatbuffer::Unaligned {
        position,
        error_trace,
        ..
    } = error
    else {
        return false;
    };
    // the innermost trace entry is where the offset to the vector is stored
    let offset_at = match error_trace.as_ref().first() {
        Some(ErrorTraceDetail::TableField { position, .. })
        | Some(ErrorTraceDetail::VectorElement { position, .. }) => *position,
        _ => return false,
    };
    let read_u32 = |at: usize| -> Option<usize> {
        let b = buf.get(at..at.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let Some(vector_at) = read_u32(offset_at).and_then(|o| offset_at.checked_add(o)) else {
        return false;
    };
    if vector_at.checked_add(4) != Some(*position) || read_u32(vector_at) != Some(0) {
        return false;
    }
    // the new length word sits at 4 mod 8 so that the (absent) elements start 8-aligned
    let pad = (12 - buf.len() % 8) % 8;
    let new_vector_at = buf.len() + pad;
    let Ok(new_offset) = u32::try_from(new_vector_at - offset_at) else {
        return false;
    };
    buf.resize(new_vector_at + 8, 0);
    buf[offset_at..offset_at + 4].copy_from_slice(&new_offset.to_le_bytes());
    true
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
    crate::formats::generated::program::executorch_flatbuffer::root_as_program_with_opts(
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
    crate::formats::generated::etdump::etdump::size_prefixed_root_as_etdump_with_opts(
        &verifier_options(bytes.len()),
        bytes,
    )
    .map(|_| ())
    .map_err(|e| Error::Corrupt {
        kind: "ETDump (.etdp)",
        detail: e.to_string(),
    })
}

//! Byte-level helpers for writers that patch a program's FlatBuffer in place
//! ([`super::write_plan`], [`super::write_external`]): read and write little-endian words at
//! absolute offsets, and find where a table keeps a field.

use super::read::parse_extended_header;
use super::ExtendedHeader;
use crate::error::{Error, Result};
use crate::formats::flatbuf::{root_accepting_unaligned_empty_vectors, verifier_options};
use crate::formats::generated::program::executorch_flatbuffer as fb;

/// A program's FlatBuffer as a patching writer starts from: its extended header, its length in
/// the file, and its bytes verified (an empty vector aligned to four only re-pointed, as the
/// reader accepts it), which the writer copies and patches.
pub(super) struct Opened {
    pub header: Option<ExtendedHeader>,
    pub len_in_file: usize,
    pub flatbuffer: Vec<u8>,
}

/// Opens `bytes` for a writer (`what` names it in errors).
pub(super) fn open(what: &str, bytes: &[u8]) -> Result<Opened> {
    let header = parse_extended_header(bytes)?;
    let len_in_file = header
        .and_then(|h| usize::try_from(h.program_size).ok())
        .filter(|&n| n > 0 && n <= bytes.len())
        .unwrap_or(bytes.len());
    let opts = verifier_options(len_in_file);
    let mut realigned = None;
    root_accepting_unaligned_empty_vectors(
        &bytes[..len_in_file],
        &mut realigned,
        |b| fb::root_as_program_with_opts(&opts, b),
        |b| fb::root_as_program_with_opts(&opts, b).map(|_| ()),
    )
    .map_err(|e| Error::invalid(what, e.to_string()))?;
    Ok(Opened {
        header,
        len_in_file,
        flatbuffer: realigned.unwrap_or_else(|| bytes[..len_in_file].to_vec()),
    })
}

impl Opened {
    /// The root table, over the bytes verified in [`open`].
    pub fn root(&self, what: &str) -> Result<fb::Program<'_>> {
        let opts = verifier_options(self.flatbuffer.len());
        fb::root_as_program_with_opts(&opts, &self.flatbuffer)
            .map_err(|e| Error::invalid(what, e.to_string()))
    }
}

/// The `u32` at `at`, or an error naming `what` is being written.
pub(super) fn read_u32(what: &str, b: &[u8], at: usize) -> Result<u32> {
    b.get(at..at.saturating_add(4))
        .and_then(|s| s.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or_else(|| Error::invalid(what, format!("offset {at} is outside the FlatBuffer")))
}

/// Writes `bytes` over `b` at `at`.
pub(super) fn put(what: &str, b: &mut [u8], at: usize, bytes: &[u8]) -> Result<()> {
    b.get_mut(at..at.saturating_add(bytes.len()))
        .ok_or_else(|| Error::invalid(what, format!("offset {at} is outside the FlatBuffer")))?
        .copy_from_slice(bytes);
    Ok(())
}

/// Where a table's field lives (absolute), if the table has it.
pub(super) fn field_at(
    table: &flatbuffers::Table<'_>,
    field: flatbuffers::VOffsetT,
) -> Option<usize> {
    let v = table.vtable().get(field);
    (v != 0).then(|| table.loc() + usize::from(v))
}

/// The largest power of two (from 16 to 4096) that divides `x`.
pub(super) fn alignment_of(x: u64) -> u64 {
    let mut a = 4096;
    while a > 16 && !x.is_multiple_of(a) {
        a /= 2;
    }
    a
}

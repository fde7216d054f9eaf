//! Byte-level helpers for writers that patch a program's FlatBuffer in place
//! ([`super::write_plan`], [`super::write_external`]): read and write little-endian words at
//! absolute offsets, and find where a table keeps a field.

use crate::error::{Error, Result};

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

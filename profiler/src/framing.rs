//! ETDump stream framing: a device (or a recorder) writes one size-prefixed ETDump per flush
//! back to back — the exact bytes ExecuTorch's ETDump generator produces — so a stream is a
//! sequence of `u32 LE size | flatbuffer (identifier ED00 at +4)` frames. [`FrameDecoder`] accepts
//! bytes in arbitrary chunks and yields complete, parsed frames.

use etscope_core::formats::etdump::ETDump;
use thiserror::Error;

/// Largest frame accepted; a larger size prefix means the stream is out of sync.
pub const MAX_FRAME_BYTES: u32 = 64 << 20;

/// What can go wrong while cutting a stream into ETDump frames.
#[derive(Debug, Error)]
pub enum FramingError {
    /// The size prefix is implausible: the stream is not at a frame boundary.
    #[error(
        "stream out of sync at byte {offset}: size prefix {size} exceeds {MAX_FRAME_BYTES} bytes"
    )]
    OutOfSync { offset: u64, size: u32 },
    /// The frame has the right length but no `ED00` identifier.
    #[error("frame at byte {offset} is not an ETDump (identifier {found:?})")]
    NotEtdump { offset: u64, found: String },
    /// The frame is an ETDump that does not parse.
    #[error("frame at byte {offset}: {source}")]
    Corrupt {
        offset: u64,
        source: etscope_core::Error,
    },
    /// The stream ended inside a frame.
    #[error("stream ended {missing} bytes short of the frame that starts at byte {offset}")]
    Incomplete { offset: u64, missing: u64 },
}

/// One decoded ETDump frame.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Byte offset of the frame's size prefix in the stream.
    pub offset: u64,
    /// Frame length including the 4-byte prefix.
    pub len: usize,
    pub etdump: ETDump,
}

/// Incremental decoder: push bytes, pull frames.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    pending: Vec<u8>,
    /// Stream offset of `pending[0]`.
    consumed: u64,
}

impl FrameDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends bytes received from a transport.
    pub fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// Bytes received but not yet part of a complete frame.
    pub fn buffered(&self) -> usize {
        self.pending.len()
    }

    /// The next complete frame, `Ok(None)` if more bytes are needed.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, FramingError> {
        if self.pending.len() < 4 {
            return Ok(None);
        }
        let size = u32::from_le_bytes([
            self.pending[0],
            self.pending[1],
            self.pending[2],
            self.pending[3],
        ]);
        if !(8..=MAX_FRAME_BYTES).contains(&size) {
            return Err(FramingError::OutOfSync {
                offset: self.consumed,
                size,
            });
        }
        let len = size as usize + 4;
        if self.pending.len() >= 12 && &self.pending[8..12] != b"ED00" {
            return Err(FramingError::NotEtdump {
                offset: self.consumed,
                found: String::from_utf8_lossy(&self.pending[8..12]).into_owned(),
            });
        }
        if self.pending.len() < len {
            return Ok(None);
        }
        let offset = self.consumed;
        let etdump = ETDump::parse(&self.pending[..len])
            .map_err(|source| FramingError::Corrupt { offset, source })?;
        self.pending.drain(..len);
        self.consumed += len as u64;
        Ok(Some(Frame {
            offset,
            len,
            etdump,
        }))
    }

    /// Call at end of stream: an error if a partial frame is left over.
    pub fn finish(&self) -> Result<(), FramingError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let missing = if self.pending.len() >= 4 {
            let size = u32::from_le_bytes([
                self.pending[0],
                self.pending[1],
                self.pending[2],
                self.pending[3],
            ]);
            (u64::from(size) + 4).saturating_sub(self.pending.len() as u64)
        } else {
            4 - self.pending.len() as u64
        };
        Err(FramingError::Incomplete {
            offset: self.consumed,
            missing,
        })
    }
}

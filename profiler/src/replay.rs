//! File replay: the transport for recorded streams. Feeds a recording (one or more concatenated
//! size-prefixed ETDumps, as a device writes them) through the same decoder a live transport
//! uses, in transport-sized chunks.

use crate::framing::{Frame, FrameDecoder, FramingError};

/// Decodes every frame of a recorded stream, feeding it `chunk` bytes at a time (as an RTT
/// up-channel of that size would deliver it). Errors name the frame's byte offset.
pub fn replay(stream: &[u8], chunk: usize) -> Result<Vec<Frame>, FramingError> {
    let mut decoder = FrameDecoder::new();
    let mut frames = Vec::new();
    for piece in stream.chunks(chunk.max(1)) {
        decoder.push(piece);
        while let Some(f) = decoder.next_frame()? {
            frames.push(f);
        }
    }
    decoder.finish()?;
    Ok(frames)
}

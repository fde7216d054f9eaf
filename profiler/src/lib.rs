//! etscope's profiler: turns byte streams from a target (RTT up-channels, GDB-remote memory reads,
//! or a recorded file) into ETDumps and aggregates them into per-operator statistics.
//!
//! Transports deliver bytes; [`framing`] cuts them into ETDump frames; [`aggregate`] folds frames
//! into a [`etscope_core::profile::Profile`]. **Architecture invariant:** no GUI here; transports
//! and decoders stay apart so either can be replaced (and tested) alone.

pub mod aggregate;
pub mod framing;
pub mod replay;

pub use aggregate::LiveProfile;
pub use framing::{Frame, FrameDecoder, FramingError};

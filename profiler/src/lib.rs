//! etscope's profiler: reads per-operator events from a target while it runs and turns them into
//! the ETDumps the rest of etscope reads.
//!
//! Bytes come from a [`transport`] (GDB remote, probe-rs, or a memory image), through the
//! [`rtt`] up-channel reader, into the [`wire`] decoder (etscope's framed format, version 1:
//! magic, version, type, sequence number, length, CRC; `docs/wire-format.md`), and the
//! [`capture`] assembler builds runs and standard ETDumps from the frames. [`session`] ties them
//! together with the raw capture file on disk. [`framing`] and [`replay`] cut recorded streams of
//! size-prefixed ETDumps. **Architecture invariant:** no GUI here; transports and decoders stay
//! apart so either can be replaced (and tested) alone.

pub mod aggregate;
pub mod capture;
pub mod chip;
pub mod declared_clock;
pub mod elf;
pub mod framing;
pub mod replay;
pub mod rtt;
pub mod session;
pub mod transport;
pub mod wire;

pub use aggregate::LiveProfile;
pub use framing::{Frame, FrameDecoder, FramingError};

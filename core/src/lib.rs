//! etscope's core: readers for every ExecuTorch artifact (`.pte`, ETDump + debug buffer,
//! BundledProgram, ETRecord, `.npy`), one model IR they all lower into, the memory-plan
//! derivation and per-operator profile statistics.
//!
//! **Architecture invariant:** no GUI, no probe, no file system or network access. Every entry
//! point takes bytes (or already-parsed values) that the caller hands it.

pub mod analysis;
pub mod board_image;
pub mod bundled;
pub mod debug_buffer;
pub mod diff;
pub mod diff_sources;
pub mod dtype;
pub mod error;
pub mod etdump;
pub mod etdump_write;
pub mod ethos_u;
pub mod etrecord;
pub mod export_json;
pub mod fault;
pub mod flat_tensor;
pub mod flatbuf;
mod generated;
pub mod identity;
pub mod ir;
pub mod kernels;
pub mod kind;
pub mod memory;
pub mod npy;
pub mod ops;
pub mod passes;
pub mod profile;
pub mod pte;
pub mod runtime;
pub mod tensor;
pub mod torch_save;

pub use dtype::ScalarType;
pub use error::{Error, Result};

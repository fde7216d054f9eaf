//! ExecuTorch's file formats, read exactly (and accepted as ExecuTorch's runtime accepts them),
//! into plain Rust types; no FlatBuffers type leaves this folder.
//!
//! - [`pte`] — programs (`.pte`): plans, values, instructions, delegates, segments
//! - [`bundled`] — BundledPrograms (`.bpte`): test cases and the embedded program
//! - [`flat_tensor`], [`flat_tensor_write`] — external weights (`.ptd`), read and written
//! - [`etrecord`], [`export_json`], [`torch_save`] — ETRecords: `torch.export` stages and their
//!   weights (a restricted pickle reader)
//! - [`etdump`], [`debug_buffer`], [`etdump_write`] — ETDumps: events and captured tensors
//! - [`npy`] — NumPy arrays
//! - [`ethos_u`] — the Ethos-U delegate payload
//! - [`kind`] — which artifact a buffer holds, by magic
//! - [`flatbuf`], `generated` — FlatBuffers helpers and `flatc`'s output for `schemas/*.fbs`

pub mod bundled;
pub mod debug_buffer;
pub mod etdump;
pub mod etdump_write;
pub mod ethos_u;
pub mod etrecord;
pub mod export_json;
pub mod flat_tensor;
pub mod flat_tensor_write;
pub mod flatbuf;
pub(crate) mod generated;
pub mod kind;
pub mod npy;
pub mod pte;
pub mod torch_save;

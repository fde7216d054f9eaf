//! etscope's core: a compiler/runtime spine for ExecuTorch programs, and the analyses beside it.
//!
//! ```text
//! bytes ─▶ formats ─▶ ir ─▶ passes ─▶ runtime ──▶ analysis (diff, profile, identity, notes)
//!                      ▲                 │
//!                     ops (registry) ◀── kernels
//! ```
//!
//! - [`formats`] — readers (and writers) of every ExecuTorch artifact
//! - [`kernels`] — the host kernels (portable, quantized, Cortex-M/CMSIS-NN)
//! - [`ops`] — the operator registry: every operator declared once
//! - [`ir`] — the typed, executable IR every program and stage lowers into
//! - [`passes`] — graph rewrites, each checked
//! - [`runtime`] — prepares an IR graph once and runs it many times
//! - [`plan`] — memory plans: address × lifetime per arena
//! - [`analysis`] — diff, profile, identity, device notes, fault injection
//! - [`board_image`] — a program in the emulated board's image format
//!
//! **Architecture invariant:** no GUI, no probe, no file system or network access. Every entry
//! point takes bytes (or already-parsed values) that the caller hands it.

pub mod analysis;
pub mod board_image;
pub mod cortex_m;
pub mod dtype;
pub mod error;
pub mod formats;
pub mod ir;
pub mod kernels;
pub mod lower;
pub mod ops;
pub mod part;
pub mod passes;
pub mod plan;
pub mod runtime;
pub mod tensor;

pub use dtype::ScalarType;
pub use error::{Error, Result};

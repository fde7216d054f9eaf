//! Analyses beside the spine: what a program computes differently on its device, before
//! anything runs.
//!
//! - [`device_notes`] — calls the board computes differently and what the lowering left that
//!   no runtime computes as meant

pub mod device_notes;

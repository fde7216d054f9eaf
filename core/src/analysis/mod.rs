//! Analyses beside the spine: they read programs, runs and captures and say something about them.
//!
//! - [`cost`] — cycles of every call on a Cortex-M core without a board (CMSIS-NN's paths
//!   priced from their compiled loops and each core's instruction timings)
//! - [`diff`], [`diff_sources`] — node matching, metrics and the first divergence between two
//!   sources of intermediate tensors (`diff_groups`: how the nodes are matched); "program or
//!   stage + input" as a source
//! - [`eval`] — numerics over a dataset: output and per-group statistics that stream and
//!   merge exactly across shards
//! - [`profile`] — Inspector-equal per-operator statistics from an ETDump
//! - [`profile_compare`] — two captures matched operator by operator (re-exports included):
//!   p50, p90, jitter and the change of each
//! - [`identity`] — whether an ETDump or ETRecord belongs to a program
//! - [`device_notes`] — calls the board computes differently, and what the lowering left that
//!   no runtime computes as meant
//! - [`fit`], [`fit_files`] — does a program fit a part: pools, flash with its code, regions;
//!   the files a firmware includes
//! - [`place`] — where each pool and each call's weights go on a part, priced, and the
//!   advisor that chooses
//! - [`fault`] — fault injection (one weighted operator's parameters negated) for testing diffs

pub mod cost;
pub mod device_notes;
pub mod diff;
mod diff_groups;
pub mod diff_sources;
pub mod eval;
pub mod fault;
pub mod fit;
pub mod fit_files;
pub mod identity;
pub mod place;
pub mod profile;
pub mod profile_compare;

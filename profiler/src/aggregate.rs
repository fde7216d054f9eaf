//! Per-operator aggregation over a growing sequence of ETDump frames (one per flush of the
//! device's ETDump buffer): the live counterpart of `etscope_core::analysis::profile::profile`.

use etscope_core::analysis::profile::{profile, Profile};
use etscope_core::formats::etdump::ETDump;

/// Every run received so far, merged into one ETDump, with its profile kept current.
#[derive(Debug, Default)]
pub struct LiveProfile {
    merged: Option<ETDump>,
    frames: usize,
}

impl LiveProfile {
    /// An empty profile.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a frame's runs.
    pub fn add(&mut self, etdump: ETDump) {
        self.frames += 1;
        match &mut self.merged {
            Some(m) => m.runs.extend(etdump.runs),
            None => self.merged = Some(etdump),
        }
    }

    /// Frames received.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// The per-op statistics over every inference received so far, the instructions named by
    /// `ops` ([`etscope_core::formats::pte::Program::instruction_ops`]).
    pub fn profile(&self, ops: Option<&[String]>) -> Option<Profile> {
        self.merged.as_ref().map(|m| profile(m, ops))
    }
}

//! What the app remembers between runs (eframe storage): recent files and display choices.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Persisted settings.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Settings {
    /// Most recent first, at most [`Settings::MAX_RECENT`].
    pub recent: Vec<PathBuf>,
    /// Ticks per microsecond for profiles; `None` shows ticks.
    pub ticks_per_us: Option<f64>,
}

impl Settings {
    pub const MAX_RECENT: usize = 12;
    pub const KEY: &'static str = "etscope-settings";

    /// Moves `paths` to the front of the recent list.
    pub fn remember(&mut self, paths: &[PathBuf]) {
        for p in paths.iter().rev() {
            let p = p.canonicalize().unwrap_or_else(|_| p.clone());
            self.recent.retain(|r| r != &p);
            self.recent.insert(0, p);
        }
        self.recent.truncate(Self::MAX_RECENT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_files_are_unique_newest_first_and_bounded() {
        let mut s = Settings::default();
        for i in 0..20 {
            s.remember(&[PathBuf::from(format!("/nonexistent/{i}.pte"))]);
        }
        s.remember(&[PathBuf::from("/nonexistent/5.pte")]);
        assert_eq!(s.recent.len(), Settings::MAX_RECENT);
        assert_eq!(s.recent[0], PathBuf::from("/nonexistent/5.pte"));
        assert_eq!(s.recent.iter().filter(|p| p.ends_with("5.pte")).count(), 1);
    }
}

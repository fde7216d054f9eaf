//! Replays every fuzz corpus file (seeds from real artifacts, and every input that once crashed
//! a target, kept as a regression test) through its target. Runs in CI with the other tests.

use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn every_corpus_input_returns_in_bounded_time() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let mut replayed = 0;
    for (name, target) in etscope_fuzz_targets::TARGETS {
        let dir = root.join(name);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            panic!("{}: no corpus for target {name}", dir.display());
        };
        let mut files: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        assert!(!files.is_empty(), "{}: empty corpus", dir.display());
        for f in files {
            let data = std::fs::read(&f).expect("corpus file");
            let t = Instant::now();
            target(&data);
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "{}: took {:?}",
                f.display(),
                t.elapsed()
            );
            replayed += 1;
        }
    }
    assert!(replayed >= etscope_fuzz_targets::TARGETS.len());
}

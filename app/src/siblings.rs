//! Files that belong with a program, found beside it by name, so opening `model.pte` alone
//! brings what a user would have picked anyway: `model.etrecord` (stages, debug handles),
//! `model.ptd` (weights kept outside the program; else the `_default_external_constant.ptd`
//! ExecuTorch's export writes), `model.etdp` with its debug buffer
//! `model.bin` (the names `etscope board run -o model.etdp` writes), and an input array
//! `model.input.npy` or, failing that, `input.npy`. Only names are matched here; whether a file
//! really belongs to the program is the loader's check (a file that does not fit is skipped
//! with a warning, never a refusal of the program).

use std::path::{Path, PathBuf};

/// Whether `path` names a program (`.pte` or `.bpte`).
pub fn is_program(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("pte" | "bpte")
    )
}

/// The ETRecord a program's name points to: `model.etrecord` beside `model.pte`.
pub fn etrecord_of(program: &Path) -> PathBuf {
    program.with_extension("etrecord")
}

/// The external weights a program's name points to: `model.ptd`.
pub fn ptd_of(program: &Path) -> PathBuf {
    program.with_extension("ptd")
}

/// The name ExecuTorch's export gives the `.ptd` of external constants
/// (`write_tensor_data_to_file`, the default tag).
pub const EXPORTED_PTD: &str = "_default_external_constant.ptd";

/// The external weights beside a program: `model.ptd`, or else the `.ptd` ExecuTorch's export
/// wrote beside it ([`EXPORTED_PTD`]); `None` when neither exists.
pub fn ptd_beside(program: &Path) -> Option<PathBuf> {
    [ptd_of(program), program.with_file_name(EXPORTED_PTD)]
        .into_iter()
        .find(|p| p.is_file())
}

/// The ETDump a program's name points to: `model.etdp`.
pub fn etdump_of(program: &Path) -> PathBuf {
    program.with_extension("etdp")
}

/// The debug buffer that goes with an ETDump: `model.bin` beside `model.etdp`.
pub fn debug_buffer_of(etdump: &Path) -> PathBuf {
    etdump.with_extension("bin")
}

/// The files beside `program` that its name points to, in loading order, that exist (the
/// names every command looks for too: [`etrecord_of`], [`ptd_beside`], [`etdump_of`]).
pub fn beside(program: &Path) -> Vec<PathBuf> {
    let mut found = vec![etrecord_of(program)];
    found.extend(ptd_beside(program));
    let etdump = etdump_of(program);
    if etdump.is_file() {
        found.push(debug_buffer_of(&etdump));
        found.insert(found.len() - 1, etdump);
    }
    let own_input = program.with_extension("input.npy");
    found.push(if own_input.is_file() {
        own_input
    } else {
        program.with_file_name("input.npy")
    });
    found.retain(|p| p.is_file());
    found
}

/// Whether `a` and `b` name the same file (equal, or the same once resolved).
pub fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (a.canonicalize(), b.canonicalize()),
            (Ok(x), Ok(y)) if x == y
        )
}

/// `given` plus the files beside each program in it, minus those already given and those in
/// `declined` (removed by the user); returns the whole batch and the files that were added.
pub fn with_files_beside(given: &[PathBuf], declined: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let same = same_file;
    let mut batch = given.to_vec();
    let mut added = Vec::new();
    // inputs are per batch: one is enough, and one given wins over any found
    let mut has_input = given
        .iter()
        .any(|p| p.extension().and_then(|e| e.to_str()) == Some("npy"));
    for program in given.iter().filter(|p| is_program(p)) {
        for candidate in beside(program) {
            let is_input = candidate.extension().and_then(|e| e.to_str()) == Some("npy");
            if (is_input && has_input)
                || batch.iter().any(|p| same(p, &candidate))
                || declined.iter().any(|p| same(p, &candidate))
            {
                continue;
            }
            has_input |= is_input;
            batch.push(candidate.clone());
            added.push(candidate);
        }
    }
    (batch, added)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty directory of this test's own (removed first if a previous run left it).
    fn fresh_dir(test: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("etscope-siblings-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    }

    fn touch(dir: &Path, name: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, b"x").expect("write");
        p
    }

    #[test]
    fn a_program_brings_its_named_neighbours_and_nothing_else() {
        let dir = fresh_dir("neighbours");
        let d = dir.as_path();
        let pte = touch(d, "model.pte");
        for n in [
            "model.etrecord",
            "model.etdp",
            "model.bin",
            "input.npy",
            "other.etrecord",
            "other.etdp",
        ] {
            touch(d, n);
        }
        assert_eq!(
            beside(&pte),
            vec![
                d.join("model.etrecord"),
                d.join("model.etdp"),
                d.join("model.bin"),
                d.join("input.npy"),
            ]
        );
        // its own input wins over the directory's
        touch(d, "model.input.npy");
        assert!(beside(&pte).contains(&d.join("model.input.npy")));
        assert!(!beside(&pte).contains(&d.join("input.npy")));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn given_declined_and_an_input_already_chosen_are_not_added_again() {
        let dir = fresh_dir("declined");
        let d = dir.as_path();
        let pte = touch(d, "m.pte");
        let rec = touch(d, "m.etrecord");
        touch(d, "input.npy");
        let mine = touch(d, "mine.npy");
        let (batch, added) = with_files_beside(&[pte.clone(), mine.clone()], &[]);
        assert_eq!(added, vec![rec.clone()]);
        assert_eq!(batch, vec![pte.clone(), mine, rec.clone()]);
        let (batch, added) = with_files_beside(&[pte.clone(), rec.clone()], &[]);
        assert_eq!((batch.len(), added), (3, vec![d.join("input.npy")]));
        let (batch, added) = with_files_beside(std::slice::from_ref(&pte), &[rec]);
        assert_eq!(batch, vec![pte, d.join("input.npy")]);
        assert_eq!(added.len(), 1);
        // no program: nothing is looked for
        assert!(with_files_beside(&[d.join("m.etrecord")], &[]).1.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

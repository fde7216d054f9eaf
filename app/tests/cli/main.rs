//! The `etscope` binary as users and scripts call it: JSON shapes, numbers, exit codes and
//! one-line errors naming the file.

#[path = "../tools/mod.rs"]
mod tools;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod board;
mod diff;
mod eval;
mod graph_layout;
mod inspect;
mod lower_plan;
mod parts;
mod placed;
mod profile;
mod run;

fn tiny(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/tiny_conv_relu_linear")
        .join(name)
}

fn etscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_etscope"))
        .args(args)
        .output()
        .expect("etscope runs")
}

/// Runs etscope, killing it if it has not finished after `secs` seconds (a hang guard, not a
/// speed claim: speeds are benchmarks).
fn etscope_or_hang(args: &[&str], secs: u64) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_etscope"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("etscope runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if child.try_wait().expect("waits").is_some() {
            return child.wait_with_output().expect("output");
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{args:?} hung (killed after {secs} s)");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn json(args: &[&str]) -> Value {
    let out = etscope(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"))
}

/// An empty scratch folder of this test process: `etscope-{name}-{pid}` under the temp dir.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("etscope-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

fn assert_clean_error(args: &[&str], file: &Path, words: &[&str]) {
    let out = etscope(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains(&file.display().to_string()),
        "names the file: {err}"
    );
    assert!(
        words.iter().any(|w| err.contains(w)),
        "says what is wrong ({words:?}): {err}"
    );
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(rel)
}

/// A plan value of flatc's JSON dump as the typed `data` the CLI must print for it.
fn flatc_data(values: &[Value], v: usize) -> Value {
    let val = &values[v]["val"];
    match values[v]["val_type"].as_str().unwrap_or("") {
        "Int" => val["int_val"].clone(),
        "Double" => val["double_val"].clone(),
        "Bool" => val["bool_val"].clone(),
        "String" => val["string_val"].clone(),
        "IntList" => Value::Array(
            val["items"]
                .as_array()
                .expect("items")
                .iter()
                .map(|i| values[i.as_u64().expect("index") as usize]["val"]["int_val"].clone())
                .collect(),
        ),
        "DoubleList" | "BoolList" => val["items"].clone(),
        "TensorList" | "OptionalTensorList" => val["items"].clone(),
        _ => Value::Null,
    }
}

fn training(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/training")
        .join(name)
}

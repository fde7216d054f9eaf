//! Tests that need programs from Debian packages (Xvfb, QEMU, the Arm toolchain) skip with a
//! notice naming the packages when those are absent, so the README's test command passes on a
//! fresh machine; `.ci/run` sets `ETSCOPE_REQUIRE_TOOLS=1`, which turns every such skip into a
//! failure, so CI always runs them.

#![allow(dead_code)]

use std::process::Command;

/// A program a test runs, and the Debian packages that install it.
pub type Tool = (&'static str, &'static str);

/// The emulated board: QEMU and the bare-metal Arm toolchain.
pub const BOARD: &[Tool] = &[
    ("qemu-system-arm", "qemu-system-arm"),
    (
        "arm-none-eabi-gcc",
        "gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi",
    ),
];

/// The ExecuTorch adapter also needs the C++ library of the toolchain.
pub const BOARD_CXX: &[Tool] = &[
    ("qemu-system-arm", "qemu-system-arm"),
    (
        "arm-none-eabi-g++",
        "gcc-arm-none-eabi libstdc++-arm-none-eabi-newlib",
    ),
];

/// A virtual display for the real window.
pub const XVFB: &[Tool] = &[("Xvfb", "xvfb libgl1-mesa-dri")];

fn installed(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Whether a missing tool fails the test rather than skipping it.
fn required() -> bool {
    std::env::var("ETSCOPE_REQUIRE_TOOLS").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// What to do about the tools `missing` from `test`: run (`Ok(true)`), skip (`Ok(false)`) or
/// fail (`Err`, when they are required).
pub fn decide(test: &str, missing: &[Tool], required: bool) -> Result<bool, String> {
    if missing.is_empty() {
        return Ok(true);
    }
    let what = notice(test, missing);
    if required {
        return Err(format!(
            "{what}; ETSCOPE_REQUIRE_TOOLS is set, so a missing tool fails the test"
        ));
    }
    Ok(false)
}

/// `TEST needs PROGRAMS (apt-get install PACKAGES)`.
fn notice(test: &str, missing: &[Tool]) -> String {
    let programs: Vec<&str> = missing.iter().map(|t| t.0).collect();
    let packages: Vec<&str> = missing.iter().map(|t| t.1).collect();
    format!(
        "{test} needs {} (apt-get install {})",
        programs.join(", "),
        packages.join(" ")
    )
}

/// Whether `test` can run here; skips with a notice or panics as [`decide`] says.
pub fn available(test: &str, tools: &[Tool]) -> bool {
    let missing: Vec<Tool> = tools.iter().copied().filter(|t| !installed(t.0)).collect();
    match decide(test, &missing, required()) {
        Ok(true) => true,
        Ok(false) => {
            // written to the terminal itself: the test harness would swallow an `eprintln!` of
            // a test that passes
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("note: skipping {}\n", notice(test, &missing)).as_bytes(),
            );
            false
        }
        Err(e) => panic!("{e}"),
    }
}

/// Whether `file`, which `script` prepares before the tests (`.ci/run` runs it), is in place;
/// skips `test` with a notice naming the script, or panics when tools are required.
pub fn prepared(test: &str, file: &std::path::Path, script: &str) -> bool {
    if file.is_file() {
        return true;
    }
    let what = format!("{test} needs {} (run {script} first)", file.display());
    if required() {
        panic!("{what}; ETSCOPE_REQUIRE_TOOLS is set, so a missing file fails the test");
    }
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("note: skipping {what}\n").as_bytes(),
    );
    false
}

/// The runtime headers of the `executorch` 1.5.1 wheel that `scripts/fetch_executorch_headers.sh`
/// puts in the cache (`$ETSCOPE_CACHE_DIR`, else `~/.cache/etscope`), when `test` may use them:
/// `None` (with a notice, or a panic when tools are required) when they are not there. The
/// test command itself makes no network request.
pub fn executorch_include(test: &str) -> Option<std::path::PathBuf> {
    let include = std::env::var_os("ETSCOPE_CACHE_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/etscope"))
        })
        .unwrap_or_else(std::env::temp_dir)
        .join("executorch-1.5.1-headers/executorch/include");
    prepared(
        test,
        &include.join("executorch/runtime/core/event_tracer.h"),
        "scripts/fetch_executorch_headers.sh",
    )
    .then_some(include)
}

/// Compiles C++ `src` for a Cortex-M55 against ExecuTorch's headers at `include` into `obj`,
/// warnings as errors; the compiler's output when it fails.
pub fn compile_against_executorch(
    include: &std::path::Path,
    src: &std::path::Path,
    obj: &std::path::Path,
) -> Result<(), String> {
    let out = std::process::Command::new("arm-none-eabi-g++")
        .args([
            "-std=c++17",
            "-mcpu=cortex-m55",
            "-mthumb",
            "-Wall",
            "-Wextra",
            "-Werror",
        ])
        .arg(format!("-I{}", include.display()))
        .arg(format!(
            "-I{}",
            include
                .join("executorch/runtime/core/portable_type/c10")
                .display()
        ))
        .args(["-DC10_USING_CUSTOM_GENERATED_MACROS", "-c"])
        .arg(src)
        .arg("-o")
        .arg(obj)
        .output()
        .map_err(|e| {
            format!("arm-none-eabi-g++ does not run ({e}; apt: gcc-arm-none-eabi libstdc++-arm-none-eabi-newlib)")
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).to_string())
    }
}

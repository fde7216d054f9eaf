//! The real window under Xvfb: `etscope FILES --screenshot out.png` opens the program, draws it
//! with the GL renderer and saves what a person would see. Needs `Xvfb` (CI installs it).

mod tools;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn tiny(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/tiny_conv_relu_linear")
        .join(name)
}

struct Xvfb(Child);

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts Xvfb on a free display, or `None` when it is not installed (skipped, see `tools`).
fn xvfb() -> Option<(Xvfb, String)> {
    if !tools::available("the window test", tools::XVFB) {
        return None;
    }
    let display = format!(":{}", 100 + std::process::id() % 400);
    let child = Command::new("Xvfb")
        .args([display.as_str(), "-screen", "0", "1280x800x24"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    std::thread::sleep(Duration::from_millis(800));
    Some((Xvfb(child), display))
}

#[test]
fn the_window_opens_a_program_and_draws_its_graph() {
    let Some((_server, display)) = xvfb() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("etscope-window-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let shot = dir.join("window.png");
    let status = Command::new(env!("CARGO_BIN_EXE_etscope"))
        .arg(tiny("model_int8_cortex_m55.pte"))
        .arg(tiny("model_int8_cortex_m55.etrecord"))
        .arg("--screenshot")
        .arg(&shot)
        .env("DISPLAY", &display)
        .env("XDG_RUNTIME_DIR", &dir)
        .env("LIBGL_ALWAYS_SOFTWARE", "1")
        .status()
        .expect("etscope runs");
    assert!(status.success(), "etscope exited with {status}");
    let img = image::open(&shot).expect("a PNG was written").to_rgba8();
    assert!(
        img.width() >= 1000 && img.height() >= 600,
        "window size {}x{}",
        img.width(),
        img.height()
    );
    let colors: std::collections::HashSet<[u8; 4]> = img.pixels().map(|p| p.0).collect();
    assert!(
        colors.len() > 200,
        "only {} colors: nothing real drawn",
        colors.len()
    );
    // the convolution box (category blue) is on screen
    let conv_blue = img
        .pixels()
        .filter(|p| p.0[0] == 0x3b && p.0[1] == 0x6e && p.0[2] == 0xc9)
        .count();
    assert!(
        conv_blue > 500,
        "no convolution node drawn ({conv_blue} pixels)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_tool_skips_with_the_packages_named_unless_tools_are_required() {
    let missing = [("qemu-system-arm", "qemu-system-arm")];
    assert_eq!(
        tools::decide("t", &[], true),
        Ok(true),
        "nothing missing: run"
    );
    assert_eq!(tools::decide("t", &missing, false), Ok(false), "skip");
    let e = tools::decide("t", &missing, true).expect_err("required: a failure");
    assert!(e.contains("apt-get install qemu-system-arm"), "{e}");
}

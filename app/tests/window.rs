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
    // one display per test of this process (they run in parallel)
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 8;
    let display = format!(":{}", 100 + (std::process::id() % 100) * 8 + n);
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
        .env("XDG_DATA_HOME", &dir)
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

/// What a `--screenshot` run left: its exit status, its stderr and the picture.
struct Shot {
    status: std::process::ExitStatus,
    stderr: String,
    image: image::RgbaImage,
}

/// Runs `etscope ARGS --screenshot DIR/NAME.png` on `display` with its settings in `dir`, killed
/// and failed when it has not exited after `secs` seconds.
fn screenshot_run(
    display: &str,
    dir: &Path,
    name: &str,
    args: &[&std::ffi::OsStr],
    secs: u64,
) -> Shot {
    let shot = dir.join(format!("{name}.png"));
    let err_path = dir.join(format!("{name}.stderr"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_etscope"))
        .args(args)
        .arg("--screenshot")
        .arg(&shot)
        .env("DISPLAY", display)
        .env("XDG_RUNTIME_DIR", dir)
        .env("XDG_DATA_HOME", dir)
        .env("LIBGL_ALWAYS_SOFTWARE", "1")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("etscope runs");
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{name}: `etscope … --screenshot` still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let image = image::open(&shot)
        .unwrap_or_else(|e| panic!("{name}: no screenshot ({e}); stderr: {stderr}"))
        .to_rgba8();
    Shot {
        status,
        stderr,
        image,
    }
}

/// Pixels of the error card's background in `img`.
fn error_card_pixels(img: &image::RgbaImage) -> usize {
    let c = etscope::gui::load_errors::CARD_FILL;
    img.pixels()
        .filter(|p| p.0[0] == c.r() && p.0[1] == c.g() && p.0[2] == c.b())
        .count()
}

/// Damaged files given to the window, alone or beside a good program, end a `--screenshot` run
/// in seconds: the picture shows the error card where the graph would be, stderr names each file
/// and what is wrong, and the exit status fails when nothing could be opened.
#[test]
fn damaged_files_end_a_screenshot_run_promptly_with_the_error_shown() {
    let Some((_server, display)) = xvfb() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("etscope-window-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let pte = std::fs::read(tiny("model_int8_cortex_m55.pte")).expect("fixture");
    // deterministic noise (an LCG): the same bytes on every run
    let mut x = 0x2545_f491_u32;
    let noise: Vec<u8> = (0..4096)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (x >> 24) as u8
        })
        .collect();
    let damaged: [(&str, Vec<u8>); 4] = [
        ("truncated.pte", pte[..pte.len() / 2].to_vec()),
        ("noise.pte", noise),
        (
            "not_a_zip.etrecord",
            b"this is not a zip archive\n".repeat(40),
        ),
        ("empty.etdp", Vec::new()),
    ];
    for (name, bytes) in &damaged {
        std::fs::write(dir.join(name), bytes).expect("write damaged file");
    }
    for (name, _) in &damaged {
        let path = dir.join(name);
        let shot = screenshot_run(
            &display,
            &dir,
            name,
            &[
                "--size".as_ref(),
                "1200x760".as_ref(),
                "--no-siblings".as_ref(),
                path.as_os_str(),
            ],
            60,
        );
        assert!(
            !shot.status.success(),
            "{name}: nothing opened, yet the run succeeded"
        );
        assert!(
            shot.stderr
                .contains(&format!("etscope: error: {}:", path.display())),
            "{name}: stderr does not name the file: {}",
            shot.stderr
        );
        assert!(
            error_card_pixels(&shot.image) > 20_000,
            "{name}: no error card in the screenshot ({} pixels)",
            error_card_pixels(&shot.image)
        );
    }
    // all of them beside a good program: the program is drawn, the card names the others
    let good = tiny("model_int8_cortex_m55.pte");
    let mut args: Vec<&std::ffi::OsStr> = vec!["--size".as_ref(), "1200x760".as_ref()];
    args.push("--no-siblings".as_ref());
    args.push(good.as_os_str());
    let paths: Vec<PathBuf> = damaged.iter().map(|(n, _)| dir.join(n)).collect();
    args.extend(paths.iter().map(|p| p.as_os_str()));
    let shot = screenshot_run(&display, &dir, "mixed", &args, 60);
    assert!(shot.status.success(), "the program opened: {}", shot.status);
    for p in &paths {
        assert!(
            shot.stderr
                .contains(&format!("etscope: error: {}:", p.display())),
            "stderr does not name {}: {}",
            p.display(),
            shot.stderr
        );
    }
    assert!(error_card_pixels(&shot.image) > 20_000, "no error card");
    let _ = std::fs::remove_dir_all(&dir);
}

/// eframe restores the window size the last session left; `--size` wins over it.
#[test]
fn a_given_size_wins_over_the_window_the_last_session_left() {
    let Some((_server, display)) = xvfb() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("etscope-window-size-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    let pte = tiny("model_int8_cortex_m55.pte");
    // a session without --size leaves its window (clamped to the 1280x800 screen) in the settings
    let first = screenshot_run(&display, &dir, "first", &[pte.as_os_str()], 60);
    assert!(first.status.success(), "{}", first.stderr);
    assert!(
        dir.join("etscope/app.ron").is_file(),
        "the session left no settings"
    );
    let second = screenshot_run(
        &display,
        &dir,
        "second",
        &["--size".as_ref(), "900x600".as_ref(), pte.as_os_str()],
        60,
    );
    assert!(second.status.success(), "{}", second.stderr);
    assert_eq!(
        (second.image.width(), second.image.height()),
        (900, 600),
        "the window kept the last session's size"
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

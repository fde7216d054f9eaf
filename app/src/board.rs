//! The emulated board: builds (or reuses) the firmware in `board/` with `arm-none-eabi-gcc`,
//! turns a `.pte` into a board image, starts QEMU (`mps3-an547`, Cortex-M55, `-icount` so SysTick
//! counts instructions deterministically) with the image at 0x60000000 and its GDB stub on a Unix
//! socket, and hands back a connected [`GdbRemote`]. The firmware sources are compiled into the
//! binary, so an installed etscope builds its board anywhere the toolchain is.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use etscope_profiler::elf::symbol_address;
use etscope_profiler::transport::gdb::GdbRemote;

/// One committed file under `board/`, by its path there.
macro_rules! board_source {
    ($path:literal) => {
        ($path, include_str!(concat!("../../board/", $path)))
    };
}

/// The firmware's sources, as committed under `board/` (`board_sources_are_all_embedded` fails
/// when a file there is missing here).
const SOURCES: &[(&str, &str)] = &[
    board_source!("build.sh"),
    board_source!("firmware/link.ld"),
    board_source!("firmware/startup.c"),
    board_source!("firmware/main.c"),
    board_source!("firmware/image.h"),
    board_source!("firmware/image.c"),
    board_source!("firmware/opcodes.h"),
    board_source!("firmware/integer.h"),
    board_source!("firmware/integer.c"),
    board_source!("firmware/kernels.h"),
    board_source!("firmware/kernels.c"),
    board_source!("firmware/portable.h"),
    board_source!("firmware/portable.c"),
    board_source!("firmware/portable_tensor.c"),
    board_source!("firmware/portable_elementwise.c"),
    board_source!("firmware/portable_shape.c"),
    board_source!("firmware/portable_pool.c"),
    board_source!("firmware/portable_reduce.c"),
    board_source!("firmware/portable_nn.c"),
    board_source!("firmware/portable_index.c"),
    board_source!("lib/etscope_trace.c"),
    board_source!("lib/etscope_trace.h"),
];

/// Where the image is loaded (the firmware reads it there).
pub const IMAGE_ADDRESS: u64 = 0x6000_0000;
/// `-icount shift=5`: one instruction ≈ 1.024 SysTick ticks at the board's 32 MHz.
pub const ICOUNT_SHIFT: u32 = 5;

fn cache_root() -> PathBuf {
    if let Some(d) = std::env::var_os("ETSCOPE_CACHE_DIR") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("etscope");
    }
    match std::env::var_os("HOME") {
        Some(h) => PathBuf::from(h).join(".cache").join("etscope"),
        None => std::env::temp_dir().join("etscope-cache"),
    }
}

/// A name part no other build or board of this or another process uses at the same time.
fn unique_suffix() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

fn sources_hash() -> u64 {
    let mut all = Vec::new();
    for (name, text) in SOURCES {
        all.extend_from_slice(name.as_bytes());
        all.extend_from_slice(text.as_bytes());
    }
    etscope_core::analysis::identity::program_fingerprint(&all)
}

/// The firmware ELF, built on first use (and after any change to its sources).
pub fn firmware() -> Result<PathBuf> {
    let dir = cache_root().join(format!("board-{:016x}", sources_hash()));
    let elf = dir.join("firmware.elf");
    if elf.is_file() {
        return Ok(elf);
    }
    // Build in a directory of our own and rename the result into place, so concurrent builds
    // (parallel tests, two windows) never see each other's half-written files.
    let build = dir.join(format!("build-{}", unique_suffix()));
    for (name, text) in SOURCES {
        let p = build.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("{}: cannot create", parent.display()))?;
        }
        std::fs::write(&p, text).with_context(|| format!("{}: cannot write", p.display()))?;
    }
    let tmp = build.join("firmware.elf");
    let out = Command::new("bash")
        .arg(build.join("build.sh"))
        .arg(&tmp)
        .output()
        .context("cannot run bash to build the board firmware")?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&build);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("arm-none-eabi-gcc: command not found")
            || stderr.contains("arm-none-eabi-gcc: No such file")
        {
            bail!("building the board firmware needs arm-none-eabi-gcc (Debian: apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi)");
        }
        bail!(
            "building the board firmware failed:\n{}",
            stderr.lines().take(20).collect::<Vec<_>>().join("\n")
        );
    }
    std::fs::rename(&tmp, &elf).with_context(|| format!("{}: cannot write", elf.display()))?;
    let _ = std::fs::remove_dir_all(&build);
    Ok(elf)
}

/// A running QEMU with the board; killed when dropped.
pub struct Qemu {
    child: Child,
    socket: PathBuf,
    workdir: PathBuf,
    pub elf: PathBuf,
}

impl Qemu {
    /// Starts QEMU halted (`-S`) with `elf` and `image` and waits for its GDB socket.
    pub fn start(elf: &Path, image: &[u8]) -> Result<Qemu> {
        let workdir = std::env::temp_dir().join(format!("etscope-board-{}", unique_suffix()));
        std::fs::create_dir_all(&workdir)
            .with_context(|| format!("{}: cannot create", workdir.display()))?;
        let image_path = workdir.join("image.bin");
        std::fs::write(&image_path, image)
            .with_context(|| format!("{}: cannot write", image_path.display()))?;
        let socket = workdir.join("gdb.sock");
        let child = Command::new("qemu-system-arm")
            .args(["-M", "mps3-an547", "-nographic", "-monitor", "none", "-serial", "null"])
            .args(["-icount", &format!("shift={ICOUNT_SHIFT}")])
            .arg("-S")
            .arg("-kernel")
            .arg(elf)
            .arg("-device")
            .arg(format!(
                "loader,file={},addr={IMAGE_ADDRESS:#x},force-raw=on",
                image_path.display()
            ))
            .arg("-chardev")
            .arg(format!(
                "socket,path={},server=on,wait=off,id=gdb0",
                socket.display()
            ))
            .args(["-gdb", "chardev:gdb0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    anyhow::anyhow!("the emulated board needs qemu-system-arm (Debian: apt-get install qemu-system-arm)")
                } else {
                    anyhow::anyhow!("cannot start qemu-system-arm: {e}")
                }
            })?;
        let mut q = Qemu {
            child,
            socket,
            workdir,
            elf: elf.to_path_buf(),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !q.socket.exists() {
            if let Ok(Some(status)) = q.child.try_wait() {
                let mut err = String::new();
                if let Some(mut s) = q.child.stderr.take() {
                    use std::io::Read;
                    let _ = s.read_to_string(&mut err);
                }
                bail!("qemu-system-arm exited at start ({status}): {}", err.trim());
            }
            if Instant::now() > deadline {
                bail!("qemu-system-arm did not open its GDB socket within 10 s");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(q)
    }

    /// The GDB stub's address as `--gdb` takes it (`unix:PATH`).
    pub fn gdb_address(&self) -> String {
        format!("unix:{}", self.socket.display())
    }

    /// Connects to the board's GDB stub.
    pub fn connect(&self) -> Result<GdbRemote> {
        let address = self.gdb_address();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match GdbRemote::connect(&address, Duration::from_secs(5)) {
                Ok(g) => return Ok(g),
                Err(e) if Instant::now() > deadline => return Err(e.into()),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    /// The control block address of the running firmware.
    pub fn control_block(&self) -> Result<u64> {
        let elf = std::fs::read(&self.elf)
            .with_context(|| format!("{}: cannot read", self.elf.display()))?;
        symbol_address(&elf, "_SEGGER_RTT")
            .with_context(|| format!("{}: no _SEGGER_RTT symbol", self.elf.display()))
    }
}

impl Qemu {
    /// Stops the emulator at once (the transport then sees its connection close).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Qemu {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.workdir);
    }
}

#[cfg(test)]
mod tests {
    use super::SOURCES;

    /// Every source the firmware build reads (`board/build.sh` compiles `firmware/*.c`) is one
    /// the installed binary carries, so a new file under `board/` cannot be left out.
    #[test]
    fn board_sources_are_all_embedded() {
        let board = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../board");
        let mut on_disk = Vec::new();
        for dir in ["firmware", "lib"] {
            for entry in std::fs::read_dir(board.join(dir)).expect("board/ folder") {
                let name = entry
                    .expect("entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned();
                if [".c", ".h", ".ld"].iter().any(|ext| name.ends_with(ext)) {
                    on_disk.push(format!("{dir}/{name}"));
                }
            }
        }
        let embedded: Vec<&str> = SOURCES.iter().map(|(name, _)| *name).collect();
        let missing: Vec<&String> = on_disk
            .iter()
            .filter(|f| !embedded.contains(&f.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "board/ files the binary does not embed: {missing:?}"
        );
        assert!(embedded.contains(&"build.sh"));
    }
}

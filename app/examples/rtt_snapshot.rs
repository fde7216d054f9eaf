//! Makes `tests/fixtures/board/rtt_snapshot.bin`: the emulated board's RTT control block, its
//! channel names and its ring, read through QEMU's GDB stub after the firmware (running the tiny
//! Cortex-M program) has written frames that nobody read yet. The profiler's probe-rs test serves
//! it as a fake target's memory. Format: repeated `u64 address | u32 length | bytes`.
//!
//! `cargo run -p etscope --example rtt_snapshot -- OUT.bin`

use std::time::Duration;

use etscope::board::{firmware, Qemu};
use etscope_core::board_image::{self, BoardOptions};
use etscope_core::formats::pte::Program;
use etscope_profiler::transport::TargetMemory;

fn main() -> anyhow::Result<()> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tests/fixtures/board/rtt_snapshot.bin".into());
    let pte = "assets/tiny_conv_relu_linear/model_int8_cortex_m55.pte";
    let program = Program::parse(std::fs::read(pte)?)?;
    let image = board_image::build(
        &program,
        0,
        &board_image::zero_inputs(&program, 0),
        &BoardOptions {
            runs: 2,
            ring_kib: 8,
            ..BoardOptions::default()
        },
    )?;
    let qemu = Qemu::start(&firmware()?, &image.bytes)?;
    let mut gdb = qemu.connect()?;
    let cb = qemu.control_block()?;
    gdb.resume()?;
    std::thread::sleep(Duration::from_millis(300));
    gdb.halt()?;
    let mut head = [0u8; 72];
    gdb.read(cb, &mut head)?;
    let word = |o: usize| u32::from_le_bytes([head[o], head[o + 1], head[o + 2], head[o + 3]]);
    let mut regions = vec![(cb, head.to_vec())];
    for name_at in [word(0x18), word(0x30)] {
        let mut name = vec![0u8; 64];
        gdb.read(u64::from(name_at), &mut name)?;
        regions.push((u64::from(name_at), name));
    }
    let (ring, size) = (word(0x1c), word(0x20));
    let mut bytes = vec![0u8; size as usize];
    gdb.read(u64::from(ring), &mut bytes)?;
    regions.push((u64::from(ring), bytes));
    let mut file = Vec::new();
    for (addr, data) in &regions {
        file.extend_from_slice(&addr.to_le_bytes());
        file.extend_from_slice(&(data.len() as u32).to_le_bytes());
        file.extend_from_slice(data);
    }
    std::fs::write(&out, &file)?;
    println!(
        "{out}: control block at {cb:#x}, ring {ring:#x} of {size} bytes, WrOff {} RdOff {}",
        word(0x24),
        word(0x28)
    );
    gdb.kill();
    Ok(())
}

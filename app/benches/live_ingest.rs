//! Live-capture throughput on the emulated board, everything measured in one run on one QEMU:
//!
//! - **raw read rate** of QEMU's GDB stub: back-to-back `m` packets (2 KiB each) over 64 KiB of
//!   the halted target's RAM: the ceiling any all-stop RTT reader has;
//! - **sustained ingest**: the RTT reader draining the firmware's frames (ds_cnn_kws with every
//!   output, sent without computing so the producer is never the bottleneck) through the same
//!   stub, with halt / read / advance RdOff / continue per poll; lost frames and bytes;
//! - **decode rate** of the recorded raw stream: wire decoding alone, and decoding plus building
//!   the ETDump and debug buffer.
//!
//! `cargo bench -p etscope --bench live_ingest` (needs qemu-system-arm and arm-none-eabi-gcc).

use std::path::Path;
use std::time::{Duration, Instant};

use etscope::board::{firmware, Qemu};
use etscope_core::board_image::{self, BoardOptions};
use etscope_core::formats::pte::Program;
use etscope_profiler::session::{rebuild, record_until, Locate, Recorder, TargetSource};
use etscope_profiler::transport::{TargetMemory, TransportError};

/// Times where a transport's wall-clock goes: halting, memory traffic, and the target running.
struct Timed<T> {
    inner: T,
    halt: Duration,
    io: Duration,
    resumed_at: Option<Instant>,
    running: Duration,
}

impl<T: TargetMemory> TargetMemory for Timed<T> {
    fn read(&mut self, a: u64, b: &mut [u8]) -> Result<(), TransportError> {
        let t = Instant::now();
        let r = self.inner.read(a, b);
        self.io += t.elapsed();
        r
    }
    fn write(&mut self, a: u64, d: &[u8]) -> Result<(), TransportError> {
        let t = Instant::now();
        let r = self.inner.write(a, d);
        self.io += t.elapsed();
        r
    }
    fn halt(&mut self) -> Result<(), TransportError> {
        if let Some(at) = self.resumed_at.take() {
            self.running += at.elapsed();
        }
        let t = Instant::now();
        let r = self.inner.halt();
        self.halt += t.elapsed();
        r
    }
    fn resume(&mut self) -> Result<(), TransportError> {
        let r = self.inner.resume();
        self.resumed_at = Some(Instant::now());
        r
    }
    fn needs_halt(&self) -> bool {
        self.inner.needs_halt()
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
}
use etscope_profiler::wire::WireDecoder;

/// Lets the benchmark read the timings after the source consumed the transport.
struct Shared<T>(std::sync::Arc<std::sync::Mutex<T>>);

impl<T: TargetMemory> TargetMemory for Shared<T> {
    fn read(&mut self, a: u64, b: &mut [u8]) -> Result<(), TransportError> {
        self.0.lock().map_err(|_| poisoned())?.read(a, b)
    }
    fn write(&mut self, a: u64, d: &[u8]) -> Result<(), TransportError> {
        self.0.lock().map_err(|_| poisoned())?.write(a, d)
    }
    fn halt(&mut self) -> Result<(), TransportError> {
        self.0.lock().map_err(|_| poisoned())?.halt()
    }
    fn resume(&mut self) -> Result<(), TransportError> {
        self.0.lock().map_err(|_| poisoned())?.resume()
    }
    fn needs_halt(&self) -> bool {
        true
    }
    fn describe(&self) -> String {
        "timed GDB".into()
    }
}

fn poisoned() -> TransportError {
    TransportError::Probe("timing lock poisoned".into())
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let pte = root.join("assets/ds_cnn_kws/model_int8_cortex_m55.pte");
    let program = Program::parse(std::fs::read(&pte).expect("asset")).expect("program");
    let runs = 120u32;
    let image = board_image::build(
        &program,
        0,
        &board_image::zero_inputs(&program, 0),
        &BoardOptions {
            runs,
            intermediates: true,
            stream_only: true,
            ..BoardOptions::default()
        },
    )
    .expect("image");
    let qemu = Qemu::start(&firmware().expect("firmware"), &image.bytes).expect("qemu");
    let mut gdb = qemu.connect().expect("gdb");
    let cb = qemu.control_block().expect("symbol");

    // raw read rate of the stub (the target is halted: QEMU starts with -S)
    let mut buf = vec![0u8; 64 << 10];
    let started = Instant::now();
    let mut raw_bytes = 0usize;
    while started.elapsed() < Duration::from_secs(2) {
        gdb.read(0x2000_0000, &mut buf).expect("reads");
        raw_bytes += buf.len();
    }
    let raw_rate = raw_bytes as f64 / started.elapsed().as_secs_f64();

    // sustained ingest through the RTT reader
    let raw_path = std::env::temp_dir().join(format!("etscope-bench-{}.etsw", std::process::id()));
    let timed = std::sync::Arc::new(std::sync::Mutex::new(Timed {
        inner: gdb,
        halt: Duration::ZERO,
        io: Duration::ZERO,
        resumed_at: None,
        running: Duration::ZERO,
    }));
    let mut source = TargetSource::new(Box::new(Shared(timed.clone())), Locate::Address(cb));
    let mut recorder = Recorder::new(Some(&raw_path)).expect("raw file");
    let mut first_byte: Option<Instant> = None;
    let mut last_byte = Instant::now();
    let mut seen = 0u64;
    record_until(
        &mut recorder,
        &mut source,
        Some(u64::from(runs)),
        Duration::from_millis(1),
        Duration::from_secs(30),
        |r| {
            let b = r.stats().wire.bytes;
            if b > seen {
                first_byte.get_or_insert_with(Instant::now);
                last_byte = Instant::now();
                seen = b;
            }
            true
        },
    )
    .expect("records");
    let s = recorder.stats();
    let span = last_byte
        .duration_since(first_byte.unwrap_or(last_byte))
        .as_secs_f64()
        .max(1e-9);
    let ingest = s.wire.bytes as f64 / span;

    // decode rate of the recorded stream
    let bytes = std::fs::read(&raw_path).expect("raw capture");
    let t = Instant::now();
    let mut frames = 0u64;
    let mut reps = 0;
    while t.elapsed() < Duration::from_secs(1) || reps < 3 {
        let mut d = WireDecoder::new();
        d.push(&bytes);
        while d.next_frame().is_some() {
            frames += 1;
        }
        reps += 1;
    }
    let decode = (bytes.len() * reps) as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut reps2 = 0;
    while t.elapsed() < Duration::from_secs(1) || reps2 < 3 {
        rebuild(&bytes, &program, "ds_cnn").expect("rebuilds");
        reps2 += 1;
    }
    let rebuild_rate = (bytes.len() * reps2) as f64 / t.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&raw_path);

    let (halt, io, running) = {
        let t = timed.lock().expect("timings");
        (t.halt, t.io, t.running)
    };
    let mb = |x: f64| x / 1e6;
    println!("live_ingest (QEMU mps3-an547 GDB stub, one run):");
    println!(
        "  raw memory reads (m, 2 KiB packets)   {:>8.2} MB/s",
        mb(raw_rate)
    );
    println!(
        "  sustained RTT ingest                  {:>8.2} MB/s  = {:.0} % of raw  ({} runs, {:.1} MiB, {} polls, {} frames)",
        mb(ingest),
        100.0 * ingest / raw_rate,
        s.capture.runs,
        s.wire.bytes as f64 / (1 << 20) as f64,
        s.polls,
        s.wire.frames
    );
    println!(
        "  lost                                  {} frames, {} bytes, {} CRC errors",
        s.wire.lost_frames, s.wire.lost_bytes, s.wire.crc_errors
    );
    println!(
        "  where the time went                   {:.0} ms target running (producing), {:.0} ms memory packets, {:.0} ms halting",
        running.as_secs_f64() * 1e3,
        io.as_secs_f64() * 1e3,
        halt.as_secs_f64() * 1e3
    );
    println!(
        "  ingest while the target is halted     {:>8.2} MB/s  = {:.0} % of raw",
        mb(s.wire.bytes as f64 / io.as_secs_f64().max(1e-9)),
        100.0 * s.wire.bytes as f64 / io.as_secs_f64().max(1e-9) / raw_rate
    );
    println!(
        "  decode recorded stream (wire)         {:>8.1} MB/s  ({} frames per pass)",
        mb(decode),
        frames / reps as u64
    );
    println!(
        "  decode + ETDump + debug buffer        {:>8.1} MB/s",
        mb(rebuild_rate)
    );
}

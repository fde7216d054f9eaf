//! A live capture: polls a byte source (an RTT channel over a transport, or a recorded raw
//! stream), appends every byte to the raw capture file on disk as it arrives, decodes frames and
//! keeps a bounded window of recent runs for the live view. [`save_capture`] rebuilds the whole
//! capture from the raw file as a `.etdp` (+ debug buffer), so an interrupted session loses
//! nothing that reached the disk.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use etscope_core::analysis::identity::program_fingerprint;
use etscope_core::formats::etdump::ETDump;
use etscope_core::formats::pte::Program;
use thiserror::Error;

use crate::capture::{Assembler, CaptureCounts};
use crate::rtt::{control_block_at, scan_for_control_block, RttChannel, RttError};
use crate::transport::{TargetMemory, TransportError};
use crate::wire::{WireDecoder, WireStats};

/// The RTT channel etscope's C library writes to.
pub const CHANNEL_NAME: &str = "etscope";
/// Runs the live view keeps in memory.
pub const LIVE_WINDOW_RUNS: usize = 256;

/// Capture failures; each names the file or endpoint.
#[derive(Debug, Error)]
pub enum SessionError {
    #[error(transparent)]
    Rtt(#[from] RttError),
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("{path}: {detail}")]
    File { path: PathBuf, detail: String },
    #[error("the RTT control block did not appear within {0} s (is the firmware running etscope_trace_init?)")]
    NoControlBlock(u64),
    #[error("the capture is of another program: the target runs program {target:016x}, {pte} is {expected:016x}")]
    WrongProgram {
        pte: String,
        target: u64,
        expected: u64,
    },
    #[error("{0}: the capture holds no target info frame and no run")]
    Empty(PathBuf),
}

/// Where the control block is.
#[derive(Debug, Clone)]
pub enum Locate {
    /// At this address (the ELF's `_SEGGER_RTT`).
    Address(u64),
    /// Somewhere in these RAM ranges (start, length).
    Scan(Vec<(u64, u64)>),
}

/// A target's RTT channel as a byte source.
pub struct TargetSource {
    pub memory: Box<dyn TargetMemory + Send>,
    pub locate: Locate,
    pub channel_name: String,
    channel: Option<RttChannel>,
}

impl TargetSource {
    pub fn new(memory: Box<dyn TargetMemory + Send>, locate: Locate) -> TargetSource {
        TargetSource {
            memory,
            locate,
            channel_name: CHANNEL_NAME.into(),
            channel: None,
        }
    }

    /// Whether the channel has been found.
    pub fn attached(&self) -> bool {
        self.channel.is_some()
    }

    fn find(&mut self) -> Result<Option<u64>, TransportError> {
        let mem = self.memory.as_mut();
        match &self.locate {
            Locate::Address(a) => Ok(control_block_at(mem, *a)?.then_some(*a)),
            Locate::Scan(ranges) => {
                for &(start, len) in ranges {
                    if let Some(a) = scan_for_control_block(mem, start, len)? {
                        return Ok(Some(a));
                    }
                }
                Ok(None)
            }
        }
    }

    /// One poll: halts if needed, finds the channel (first time), drains it, resumes.
    pub fn poll(&mut self, out: &mut Vec<u8>) -> Result<usize, SessionError> {
        let halt = self.memory.needs_halt();
        if halt {
            self.memory.halt()?;
        }
        let result = self.poll_halted(out);
        if halt {
            self.memory.resume()?;
        }
        result
    }

    fn poll_halted(&mut self, out: &mut Vec<u8>) -> Result<usize, SessionError> {
        if self.channel.is_none() {
            match self.find()? {
                Some(at) => {
                    self.channel = Some(RttChannel::open(
                        self.memory.as_mut(),
                        at,
                        &self.channel_name,
                    )?)
                }
                None => return Ok(0),
            }
        }
        let Some(ch) = self.channel.as_mut() else {
            return Ok(0);
        };
        Ok(ch.drain(self.memory.as_mut(), out)?)
    }
}

/// Live counters for the view.
#[derive(Debug, Clone, Copy, Default)]
pub struct LiveStats {
    pub wire: WireStats,
    pub capture: CaptureCounts,
    pub elapsed: Duration,
    pub polls: u64,
}

impl LiveStats {
    /// Ingest rate so far, bytes per second.
    pub fn bytes_per_second(&self) -> f64 {
        self.wire.bytes as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Bytes in → raw file + decoded frames → bounded live window.
pub struct Recorder {
    decoder: WireDecoder,
    live: Assembler,
    raw: Option<(File, PathBuf)>,
    started: Instant,
    polls: u64,
    scratch: Vec<u8>,
}

impl Recorder {
    /// Writes every byte to `raw_path` (created with its folders, truncated) as it arrives.
    pub fn new(raw_path: Option<&Path>) -> Result<Recorder, SessionError> {
        let raw = match raw_path {
            Some(p) => {
                create_folder_of(p)?;
                let file = File::create(p).map_err(|e| SessionError::File {
                    path: p.into(),
                    detail: format!("cannot create the raw capture: {e}"),
                })?;
                Some((file, p.to_path_buf()))
            }
            None => None,
        };
        Ok(Recorder {
            decoder: WireDecoder::new(),
            live: Assembler::with_window(LIVE_WINDOW_RUNS),
            raw,
            started: Instant::now(),
            polls: 0,
            scratch: Vec::new(),
        })
    }

    /// Takes bytes from any source.
    pub fn ingest(&mut self, bytes: &[u8]) -> Result<(), SessionError> {
        if let Some((f, path)) = &mut self.raw {
            f.write_all(bytes)
                .and_then(|_| f.flush())
                .map_err(|e| SessionError::File {
                    path: path.clone(),
                    detail: format!("writing the raw capture: {e}"),
                })?;
        }
        self.decoder.push(bytes);
        while let Some(frame) = self.decoder.next_frame() {
            self.live.add(frame);
        }
        Ok(())
    }

    /// Polls `source` once; returns the bytes read.
    pub fn poll(&mut self, source: &mut TargetSource) -> Result<usize, SessionError> {
        self.polls += 1;
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        let n = source.poll(&mut buf);
        let result = match n {
            Ok(n) => self.ingest(&buf).map(|_| n),
            Err(e) => Err(e),
        };
        self.scratch = buf;
        result
    }

    pub fn stats(&self) -> LiveStats {
        LiveStats {
            wire: self.decoder.stats(),
            capture: self.live.counts(),
            elapsed: self.started.elapsed(),
            polls: self.polls,
        }
    }

    /// The live window.
    pub fn live(&self) -> &Assembler {
        &self.live
    }

    /// Whether the target announced its run count and all runs arrived.
    pub fn finished(&self) -> bool {
        self.live.finished()
    }
}

/// Polls until `runs` complete runs arrived (or the target's own announced count), the control
/// block never shows up, or `idle` passes without a byte. Calls `tick` after every poll (for a
/// refreshing table); `tick` returning `false` stops the capture.
pub fn record_until(
    recorder: &mut Recorder,
    source: &mut TargetSource,
    runs: Option<u64>,
    poll: Duration,
    idle: Duration,
    mut tick: impl FnMut(&Recorder) -> bool,
) -> Result<(), SessionError> {
    let mut last_data = Instant::now();
    loop {
        let n = recorder.poll(source)?;
        if n > 0 {
            last_data = Instant::now();
        }
        let done = match runs {
            Some(r) => recorder.stats().capture.runs >= r,
            None => recorder.finished(),
        };
        if done || !tick(recorder) {
            return Ok(());
        }
        if last_data.elapsed() > idle {
            if !source.attached() {
                return Err(SessionError::NoControlBlock(idle.as_secs()));
            }
            return Ok(());
        }
        if n == 0 {
            std::thread::sleep(poll);
        }
    }
}

/// A capture rebuilt from its raw stream.
#[derive(Debug, Clone)]
pub struct SavedCapture {
    pub etdump: ETDump,
    pub debug_buffer: Vec<u8>,
    pub wire: WireStats,
    pub counts: CaptureCounts,
    pub logs: Vec<String>,
    pub target_core: Option<String>,
    pub tick_hz: Option<u32>,
}

/// Decodes a whole raw stream (`bytes`) for plan 0 of `program` (named `pte` in messages).
pub fn rebuild(bytes: &[u8], program: &Program, pte: &str) -> Result<SavedCapture, SessionError> {
    let mut decoder = WireDecoder::new();
    let mut all = Assembler::new();
    for chunk in bytes.chunks(64 << 10) {
        decoder.push(chunk);
        while let Some(f) = decoder.next_frame() {
            all.add(f);
        }
    }
    decoder.finish();
    let expected = program_fingerprint(program.bytes());
    if let Some(t) = all.target() {
        if t.program_id != 0 && t.program_id != expected {
            return Err(SessionError::WrongProgram {
                pte: pte.into(),
                target: t.program_id,
                expected,
            });
        }
    }
    if program.method_names().is_empty() {
        return Err(SessionError::File {
            path: pte.into(),
            detail: "the program has no execution plan".into(),
        });
    }
    let (etdump, debug_buffer) = all.to_etdump(&program.instruction_calls(0));
    Ok(SavedCapture {
        etdump,
        debug_buffer,
        wire: decoder.stats(),
        counts: all.counts(),
        logs: all.logs().map(str::to_string).collect(),
        target_core: all.target().map(|t| t.core.clone()),
        tick_hz: all.target().map(|t| t.tick_hz),
    })
}

/// The tick rate a raw stream's target declared (its first TARGET_INFO frame), if any: the
/// capture saved from it holds nanoseconds of that clock.
pub fn declared_tick_hz(raw: &[u8]) -> Option<u32> {
    declared_target(raw).and_then(|t| (t.tick_hz > 0).then_some(t.tick_hz))
}

/// The first TARGET_INFO frame of a raw stream: the target's core, clock and program.
pub fn declared_target(raw: &[u8]) -> Option<crate::wire::TargetInfo> {
    let mut decoder = WireDecoder::new();
    for chunk in raw.chunks(64 << 10) {
        decoder.push(chunk);
        while let Some(f) = decoder.next_frame() {
            if let crate::wire::Record::TargetInfo(t) = f.record {
                return Some(t);
            }
        }
    }
    None
}

/// How an emulator ends its core name (docs/wire-format.md): its ticks count instructions.
pub const EMULATED_SUFFIX: &str = " (emulated)";

/// Whether a target's declared core is an emulator's.
pub fn is_emulated(core: &str) -> bool {
    core.ends_with(EMULATED_SUFFIX)
}

/// Creates the folders `path` is to be written in (`-o captures/today/run.etdp`).
fn create_folder_of(path: &Path) -> Result<(), SessionError> {
    match path.parent().filter(|f| !f.as_os_str().is_empty()) {
        Some(folder) => std::fs::create_dir_all(folder).map_err(|e| SessionError::File {
            path: path.into(),
            detail: format!("cannot create its folder: {e}"),
        }),
        None => Ok(()),
    }
}

/// Writes `bytes` to `path` (its folders created) through a temporary file and a rename (never a
/// half-written file).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), SessionError> {
    create_folder_of(path)?;
    let tmp = path.with_extension("tmp-etscope");
    let fail = |e: std::io::Error| SessionError::File {
        path: path.into(),
        detail: e.to_string(),
    };
    std::fs::write(&tmp, bytes).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)
}

/// The paths a capture `out.etdp` is stored under: the ETDump, its debug buffer and the raw stream.
pub fn capture_paths(out: &Path) -> (PathBuf, PathBuf, PathBuf) {
    (
        out.to_path_buf(),
        out.with_extension("bin"),
        out.with_extension("etsw"),
    )
}

/// Rebuilds the capture from `raw` and writes `out` (+ `out.bin` when tensors were captured).
pub fn save_capture(
    raw: &Path,
    program: &Program,
    pte: &str,
    out: &Path,
) -> Result<SavedCapture, SessionError> {
    let bytes = std::fs::read(raw).map_err(|e| SessionError::File {
        path: raw.into(),
        detail: format!("cannot read the raw capture: {e}"),
    })?;
    let saved = rebuild(&bytes, program, pte)?;
    if saved.target_core.is_none() && saved.counts.runs == 0 {
        return Err(SessionError::Empty(raw.into()));
    }
    write_atomically(out, &saved.etdump.to_bytes())?;
    if !saved.debug_buffer.is_empty() {
        write_atomically(&capture_paths(out).1, &saved.debug_buffer)?;
    }
    Ok(saved)
}

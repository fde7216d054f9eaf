//! The Live view's worker: connects to a target (the emulated board, a GDB server or a debug
//! probe), polls its RTT channel on its own thread, writes the raw stream to disk as it arrives,
//! and sends the window a snapshot (counters, the bounded window of recent runs as an ETDump, its
//! profile and captured tensors) four times a second. Pause stops polling, Stop saves the capture.

use std::path::PathBuf;

use eframe::egui;
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::time::{Duration, Instant};

use crate::job::Job;

use etscope_core::analysis::profile::{profile, Profile};
use etscope_core::board_image::{self, BoardOptions};
use etscope_core::formats::debug_buffer::{captured_tensors, CapturedTensor};
use etscope_core::formats::etdump::ETDump;
use etscope_core::formats::pte::Program;
use etscope_core::tensor::TensorData;
use etscope_profiler::session::{
    capture_paths, save_capture, LiveStats, Locate, Recorder, TargetSource,
};
use etscope_profiler::transport::gdb::GdbRemote;
use etscope_profiler::transport::probe::ProbeSession;
use etscope_profiler::transport::TargetMemory;

/// Where the Live view reads from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveTarget {
    /// Start QEMU with the open program (firmware built on first use).
    Board { runs: u32, intermediates: bool },
    /// A GDB server (`HOST:PORT` or `unix:PATH`); the control block at the ELF's symbol or found
    /// by scanning the first 512 KiB of SRAM.
    Gdb {
        address: String,
        elf: Option<PathBuf>,
    },
    /// A probe-rs probe (`VID:PID[:SERIAL]`, empty for the only one) on `chip`.
    Probe {
        selector: String,
        chip: String,
        elf: Option<PathBuf>,
    },
}

/// A snapshot the worker sends.
pub struct LiveSnapshot {
    pub stats: LiveStats,
    pub etdump: ETDump,
    pub profile: Profile,
    pub debug_buffer: Vec<u8>,
    pub captured: Vec<CapturedTensor>,
    pub core: Option<String>,
    pub tick_hz: Option<u32>,
    pub logs: Vec<String>,
}

/// What the worker reports.
pub enum LiveMessage {
    Connected(String),
    Snapshot(Box<LiveSnapshot>),
    /// The session ended: the saved capture's path, or why it failed (with what was saved).
    Ended {
        saved: Option<PathBuf>,
        error: Option<String>,
    },
}

enum Control {
    Pause(bool),
    Stop,
}

/// A running live session, owned by the window.
pub struct LiveSession {
    rx: Receiver<LiveMessage>,
    /// The worker: its result is the `Ended` message (a panic is said, the stream on disk kept).
    job: Job<LiveMessage>,
    tx: Sender<Control>,
    pub paused: bool,
    pub connected: Option<String>,
    pub latest: Option<Box<LiveSnapshot>>,
    pub ended: Option<(Option<PathBuf>, Option<String>)>,
    pub out: PathBuf,
    /// How many runs the target was asked for (the emulated board); `None`: it runs until
    /// stopped.
    pub expected_runs: Option<u32>,
}

impl LiveSession {
    /// Starts a session on `program` (plan 0), saving the capture to `out`.
    pub fn start(
        program: Program,
        pte_name: String,
        input: Option<TensorData>,
        target: LiveTarget,
        out: PathBuf,
        ctx: egui::Context,
    ) -> LiveSession {
        let (tx_msg, rx) = channel();
        let (tx, rx_ctl) = channel();
        let out2 = out.clone();
        let expected_runs = match &target {
            LiveTarget::Board { runs, .. } => Some(*runs),
            _ => None,
        };
        let wake = ctx.clone();
        let job = Job::spawn(
            "live session",
            move || wake.request_repaint(),
            move |_| {
                worker(
                    &program, &pte_name, input, &target, &out2, &tx_msg, &rx_ctl, &ctx,
                )
            },
        );
        LiveSession {
            rx,
            job,
            tx,
            paused: false,
            connected: None,
            latest: None,
            ended: None,
            out,
            expected_runs,
        }
    }

    /// Takes the worker's messages; returns a new snapshot when one arrived.
    pub fn poll(&mut self) -> bool {
        // the result first: whatever the worker sent before it returned is in the channel then
        let finished = self.job.poll();
        let mut fresh = false;
        loop {
            match self.rx.try_recv() {
                Ok(LiveMessage::Connected(what)) => self.connected = Some(what),
                Ok(LiveMessage::Snapshot(s)) => {
                    self.latest = Some(s);
                    fresh = true;
                }
                Ok(LiveMessage::Ended { saved, error }) => self.ended = Some((saved, error)),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
        match finished.map(|o| o.into_result()) {
            Some(Ok(LiveMessage::Ended { saved, error })) => self.ended = Some((saved, error)),
            Some(Ok(_)) => self.ended = Some((None, Some("the live session stopped".into()))),
            Some(Err(panicked)) => {
                self.ended = Some((
                    None,
                    Some(format!(
                        "{panicked} (a bug): the raw stream on disk is intact"
                    )),
                ))
            }
            None => {}
        }
        fresh
    }

    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
        let _ = self.tx.send(Control::Pause(paused));
    }

    pub fn stop(&self) {
        let _ = self.tx.send(Control::Stop);
    }

    pub fn running(&self) -> bool {
        self.ended.is_none()
    }
}

fn locate(elf: Option<&PathBuf>) -> Result<Locate, String> {
    match elf {
        Some(p) => {
            let bytes = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
            etscope_profiler::elf::symbol_address(&bytes, "_SEGGER_RTT")
                .map(Locate::Address)
                .ok_or_else(|| format!("{}: no _SEGGER_RTT symbol", p.display()))
        }
        None => Ok(Locate::Scan(vec![(0x2000_0000, 0x8_0000)])),
    }
}

fn snapshot(recorder: &Recorder, program: &Program) -> Option<LiveSnapshot> {
    let plan = program.default_plan_index();
    program.method_names().get(plan)?;
    let (etdump, debug_buffer) = recorder.live().to_etdump(&program.instruction_calls(plan));
    let profile = profile(&etdump, Some(&program.instruction_ops(plan)));
    let captured = if debug_buffer.is_empty() {
        Vec::new()
    } else {
        captured_tensors(&etdump, &debug_buffer).unwrap_or_default()
    };
    let target = recorder.live().target();
    Some(LiveSnapshot {
        stats: recorder.stats(),
        etdump,
        profile,
        debug_buffer,
        captured,
        core: target.map(|t| t.core.clone()),
        tick_hz: target.map(|t| t.tick_hz),
        logs: recorder.live().logs().map(str::to_string).collect(),
    })
}

#[allow(clippy::too_many_arguments)]
fn worker(
    program: &Program,
    pte_name: &str,
    input: Option<TensorData>,
    target: &LiveTarget,
    out: &std::path::Path,
    tx: &Sender<LiveMessage>,
    control: &Receiver<Control>,
    ctx: &egui::Context,
) -> LiveMessage {
    let fail = |e: String| LiveMessage::Ended {
        saved: None,
        error: Some(e),
    };
    // the board (kept alive for the whole session) and the target's memory
    let mut _qemu = None;
    let (memory, locate, what): (Box<dyn TargetMemory + Send>, Locate, String) = match target {
        LiveTarget::Board {
            runs,
            intermediates,
        } => {
            let inputs = match input {
                Some(t) => vec![t],
                None => board_image::zero_inputs(program, program.default_plan_index()),
            };
            let options = BoardOptions {
                runs: *runs,
                intermediates: *intermediates,
                scalar_core: !etscope_core::runtime::Target::for_program(
                    program,
                    program.default_plan_index(),
                )
                .has_helium(),
                ..BoardOptions::default()
            };
            let image = match board_image::build(
                program,
                program.default_plan_index(),
                &inputs,
                &options,
            ) {
                Ok(i) => i,
                Err(e) => {
                    return fail(format!("{pte_name}: cannot run on the emulated board: {e}"))
                }
            };
            let started = crate::board::firmware().and_then(|elf| {
                let q = crate::board::Qemu::start(&elf, &image.bytes)?;
                let gdb = q.connect()?;
                let cb = q.control_block()?;
                Ok((q, gdb, cb))
            });
            match started {
                Ok((q, gdb, cb)) => {
                    _qemu = Some(q);
                    (
                        Box::new(gdb),
                        Locate::Address(cb),
                        "emulated board (QEMU mps3-an547, Cortex-M55)".into(),
                    )
                }
                Err(e) => return fail(format!("{e:#}")),
            }
        }
        LiveTarget::Gdb { address, elf } => {
            let loc = match locate(elf.as_ref()) {
                Ok(l) => l,
                Err(e) => return fail(e),
            };
            match GdbRemote::connect(address, Duration::from_secs(5)) {
                Ok(g) => (Box::new(g), loc, format!("GDB server {address}")),
                Err(e) => return fail(e.to_string()),
            }
        }
        LiveTarget::Probe {
            selector,
            chip,
            elf,
        } => {
            let loc = match locate(elf.as_ref()) {
                Ok(l) => l,
                Err(e) => return fail(e),
            };
            let sel = (!selector.trim().is_empty()).then_some(selector.trim());
            match ProbeSession::attach(sel, chip) {
                Ok(p) => (Box::new(p), loc, format!("probe-rs {chip}")),
                Err(e) => return fail(e.to_string()),
            }
        }
    };
    let _ = tx.send(LiveMessage::Connected(what));
    let (_, _, raw) = capture_paths(out);
    let mut recorder = match Recorder::new(Some(&raw)) {
        Ok(r) => r,
        Err(e) => return fail(e.to_string()),
    };
    let mut source = TargetSource::new(memory, locate);
    let mut paused = false;
    let mut last_sent = Instant::now();
    let mut last_data = Instant::now();
    let mut error = None;
    loop {
        match control.try_recv() {
            Ok(Control::Stop) | Err(TryRecvError::Disconnected) => break,
            Ok(Control::Pause(p)) => paused = p,
            Err(TryRecvError::Empty) => {}
        }
        if paused {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        match recorder.poll(&mut source) {
            Ok(0) => {
                if !source.attached() && last_data.elapsed() > Duration::from_secs(10) {
                    error = Some("no RTT control block appeared within 10 s".to_string());
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(_) => last_data = Instant::now(),
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        }
        if last_sent.elapsed() > Duration::from_millis(250) || recorder.finished() {
            if let Some(s) = snapshot(&recorder, program) {
                let _ = tx.send(LiveMessage::Snapshot(Box::new(s)));
                ctx.request_repaint();
            }
            last_sent = Instant::now();
        }
        if recorder.finished() {
            break;
        }
    }
    if let Some(s) = snapshot(&recorder, program) {
        let _ = tx.send(LiveMessage::Snapshot(Box::new(s)));
    }
    match save_capture(&raw, program, pte_name, out) {
        Ok(_) => LiveMessage::Ended {
            saved: Some(out.to_path_buf()),
            error,
        },
        Err(e) => LiveMessage::Ended {
            saved: None,
            error: Some(match error {
                Some(first) => format!("{first}; saving: {e}"),
                None => format!("saving: {e}"),
            }),
        },
    }
}

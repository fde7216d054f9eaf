//! `etscope record`, `etscope profile --live` and `etscope board …`: live captures over RTT from
//! a GDB server, a debug probe or the emulated board, written to disk as they arrive
//! (`OUT.etsw`, the raw stream) and saved as a standard ETDump (`OUT.etdp`, plus `OUT.bin` for
//! captured tensors).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use etscope_core::analysis::profile::profile;
use etscope_core::board_image::{self, BoardOptions};
use etscope_core::formats::pte::Program;
use etscope_profiler::elf::symbol_address;
use etscope_profiler::session::{
    capture_paths, record_until, save_capture, Locate, Recorder, SavedCapture, TargetSource,
};
use etscope_profiler::transport::gdb::GdbRemote;
use etscope_profiler::transport::probe::{list_probes, ProbeSession};
use etscope_profiler::transport::TargetMemory;
use serde_json::json;

use super::BoardJob;

use crate::load;
use crate::table::Table;

/// Where to read the target from.
#[derive(Debug, Args, Clone, Default)]
pub struct TargetArgs {
    /// GDB remote server: `HOST:PORT` (OpenOCD, J-Link GDB server, pyOCD, QEMU) or `unix:PATH`.
    #[arg(long)]
    pub gdb: Option<String>,
    /// Debug probe through probe-rs: `VID:PID[:SERIAL]` (`--probe list` lists them); with --chip.
    #[arg(long)]
    pub probe: Option<String>,
    /// probe-rs chip name (e.g. `STM32H743ZITx`).
    #[arg(long)]
    pub chip: Option<String>,
    /// Firmware ELF: the RTT control block is at its `_SEGGER_RTT` symbol.
    #[arg(long)]
    pub elf: Option<PathBuf>,
    /// Without --elf: RAM to scan for the control block, `START:LEN` (hex or decimal), repeatable.
    /// Default: 0x20000000:0x80000 (the first 512 KiB of SRAM/DTCM).
    #[arg(long)]
    pub scan: Vec<String>,
    /// The RTT up-channel to read, by name.
    #[arg(long, default_value = etscope_profiler::session::CHANNEL_NAME)]
    pub channel: String,
    /// Milliseconds between polls.
    #[arg(long, default_value_t = 1)]
    pub poll_ms: u64,
    /// Stop after this many seconds without data.
    #[arg(long, default_value_t = 10)]
    pub idle_timeout: u64,
}

fn parse_number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn locate(args: &TargetArgs) -> Result<Locate> {
    if let Some(elf) = &args.elf {
        let bytes = load::bytes(elf)?;
        let at = symbol_address(&bytes, "_SEGGER_RTT").with_context(|| {
            format!(
                "{}: no _SEGGER_RTT symbol (not an ELF, stripped, or no RTT); use --scan",
                elf.display()
            )
        })?;
        return Ok(Locate::Address(at));
    }
    let ranges = if args.scan.is_empty() {
        vec![(0x2000_0000, 0x8_0000)]
    } else {
        args.scan
            .iter()
            .map(|s| {
                s.split_once(':')
                    .and_then(|(a, l)| Some((parse_number(a)?, parse_number(l)?)))
                    .with_context(|| format!("--scan {s:?}: expected START:LEN"))
            })
            .collect::<Result<_>>()?
    };
    Ok(Locate::Scan(ranges))
}

/// Opens the transport the arguments name.
pub fn open_target(args: &TargetArgs) -> Result<TargetSource> {
    let memory: Box<dyn TargetMemory + Send> = match (&args.gdb, &args.probe) {
        (Some(addr), None) => Box::new(GdbRemote::connect(addr, Duration::from_secs(5))?),
        (None, Some(p)) if p == "list" => {
            let probes = list_probes();
            if probes.is_empty() {
                bail!("no debug probe is attached");
            }
            let lines: Vec<String> = probes
                .iter()
                .map(|p| format!("{}  {}", p.selector, p.name))
                .collect();
            bail!("choose a probe with --probe:\n{}", lines.join("\n"));
        }
        (gdb, probe) if gdb.is_none() && (probe.is_some() || args.chip.is_some()) => {
            let chip = args
                .chip
                .as_deref()
                .context("--probe needs --chip (a probe-rs target name)")?;
            Box::new(ProbeSession::attach(probe.as_deref(), chip)?)
        }
        (Some(_), Some(_)) => bail!("--gdb and --probe exclude each other"),
        _ => bail!("say where the target is: --gdb HOST:PORT, or --probe VID:PID --chip CHIP"),
    };
    let mut source = TargetSource::new(memory, locate(args)?);
    source.channel_name = args.channel.clone();
    Ok(source)
}

fn live_table(recorder: &Recorder, program: &Program, clear: bool) {
    let plan = program.default_plan_index();
    let (dump, _) = recorder.live().to_etdump(&program.instruction_calls(plan));
    let prof = profile(&dump, Some(&program.instruction_ops(plan)));
    let s = recorder.stats();
    let mut out = String::new();
    if clear {
        out.push_str("\x1b[H\x1b[2J");
    }
    out.push_str(&format!(
        "live: {} runs, {} frames, {} lost frames, {} lost bytes, {:.1} KiB at {:.2} MB/s\n",
        s.capture.runs,
        s.wire.frames,
        s.wire.lost_frames + s.capture.device_dropped_frames,
        s.wire.lost_bytes + s.capture.device_dropped_bytes,
        s.wire.bytes as f64 / 1024.0,
        s.bytes_per_second() / 1e6
    ));
    // a target that declares its clock has its times stored in ns: show µs; else raw ticks
    let declared = recorder.live().target().is_some_and(|t| t.tick_hz > 0);
    let (head, scale, digits) = if declared {
        ([">avg µs", ">p50 µs", ">max µs"], 1000.0, 3)
    } else {
        ([">avg ticks", ">p50 ticks", ">max ticks"], 1.0, 0)
    };
    let mut t = Table::new(&[">instr", "op", ">count", head[0], head[1], head[2]]);
    for r in &prof.rows {
        t.row(vec![
            r.instruction_id.to_string(),
            r.op.clone(),
            r.stats.count.to_string(),
            format!("{:.digits$}", r.stats.avg / scale),
            format!("{:.digits$}", r.stats.p50 / scale),
            format!("{:.digits$}", r.stats.max as f64 / scale),
        ]);
    }
    out.push_str(&t.render());
    print!("{out}");
}

fn summary(out: &Path, saved: &SavedCapture, elapsed: Duration, as_json: bool) -> Result<()> {
    let (etdp, bin, raw) = capture_paths(out);
    let ops: usize = saved.etdump.runs.iter().map(|r| r.events.len()).sum();
    let lost_frames = saved.wire.lost_frames + saved.counts.device_dropped_frames;
    let lost_bytes = saved.wire.lost_bytes + saved.counts.device_dropped_bytes;
    if as_json {
        return super::print_json(&json!({
            "etdump": etdp,
            "debug_buffer": (!saved.debug_buffer.is_empty()).then_some(&bin),
            "raw": raw,
            "runs": saved.counts.runs,
            "incomplete_runs": saved.counts.incomplete_runs,
            "events": ops,
            "frames": saved.wire.frames,
            "bytes": saved.wire.bytes,
            "lost_frames": saved.wire.lost_frames,
            "lost_bytes": saved.wire.lost_bytes,
            "crc_errors": saved.wire.crc_errors,
            "malformed_frames": saved.wire.bad_payloads,
            "device_dropped_frames": saved.counts.device_dropped_frames,
            "device_dropped_bytes": saved.counts.device_dropped_bytes,
            "target_restarts": saved.wire.restarts,
            "core": saved.target_core,
            "tick_hz": saved.tick_hz,
            "seconds": elapsed.as_secs_f64(),
            "logs": saved.logs,
        }));
    }
    println!(
        "{}: {} runs, {} events from {} ({} Hz ticks); {} frames, {:.1} KiB in {:.2} s",
        etdp.display(),
        saved.counts.runs,
        ops,
        saved.target_core.as_deref().unwrap_or("an unnamed target"),
        saved.tick_hz.unwrap_or(0),
        saved.wire.frames,
        saved.wire.bytes as f64 / 1024.0,
        elapsed.as_secs_f64()
    );
    println!(
        "lost: {lost_frames} frames, {lost_bytes} bytes ({} CRC errors, {} malformed frames, {} incomplete runs, {} target restarts); raw stream {}",
        saved.wire.crc_errors,
        saved.wire.bad_payloads,
        saved.counts.incomplete_runs,
        saved.wire.restarts,
        raw.display()
    );
    if !saved.debug_buffer.is_empty() {
        println!("captured tensors: {}", bin.display());
    }
    for l in &saved.logs {
        println!("target: {l}");
    }
    Ok(())
}

/// Records from `source` into `out` (raw stream first, ETDump at the end).
#[allow(clippy::too_many_arguments)]
fn capture(
    mut source: TargetSource,
    program: &Program,
    pte: &Path,
    out: &Path,
    runs: Option<u64>,
    args: &TargetArgs,
    live: bool,
    as_json: bool,
) -> Result<()> {
    let (_, _, raw) = capture_paths(out);
    let mut recorder = Recorder::new(Some(&raw))?;
    let started = Instant::now();
    let clear = std::io::stdout().is_terminal();
    let mut last_print = Instant::now();
    let result = record_until(
        &mut recorder,
        &mut source,
        runs,
        Duration::from_millis(args.poll_ms),
        Duration::from_secs(args.idle_timeout.max(1)),
        |r| {
            // redrawn in place on a terminal; piped, only the final table is printed
            if live && clear && last_print.elapsed() > Duration::from_millis(500) {
                live_table(r, program, clear);
                last_print = Instant::now();
            }
            true
        },
    );
    if live {
        live_table(&recorder, program, clear);
    }
    // Save whatever reached the disk, even when the transport failed mid-stream.
    let saved = save_capture(&raw, program, &pte.display().to_string(), out);
    match (result, saved) {
        // a target that ran nothing (its firmware refused the program) is a failure, said with
        // what the target logged
        (Ok(()), Ok(s)) if s.counts.runs == 0 && s.counts.incomplete_runs == 0 => {
            summary(out, &s, started.elapsed(), as_json)?;
            Err(anyhow::anyhow!(
                "{}: the target completed no run{}",
                pte.display(),
                if s.logs.is_empty() {
                    String::new()
                } else {
                    format!("; it logged: {}", s.logs.join(" | "))
                }
            ))
        }
        (Ok(()), Ok(s)) => summary(out, &s, started.elapsed(), as_json),
        (Err(e), Ok(s)) => {
            summary(out, &s, started.elapsed(), as_json)?;
            Err(anyhow::Error::new(e).context(format!(
                "the capture stopped early; what arrived is saved in {}",
                out.display()
            )))
        }
        (Ok(()), Err(e)) => Err(e.into()),
        (Err(e), Err(_)) => Err(e.into()),
    }
}

/// `etscope record` / `etscope profile --live`.
pub fn record(
    pte: &Path,
    args: &TargetArgs,
    out: &Path,
    runs: Option<u64>,
    live: bool,
    as_json: bool,
) -> Result<()> {
    let program = load::program(pte)?;
    let source = open_target(args)?;
    capture(source, &program, pte, out, runs, args, live, as_json)
}

/// `etscope record --replay RAW`: rebuilds a capture from its raw stream.
pub fn replay(raw: &Path, pte: &Path, out: &Path, as_json: bool) -> Result<()> {
    let program = load::program(pte)?;
    let started = Instant::now();
    let saved = save_capture(raw, &program, &pte.display().to_string(), out)?;
    summary(out, &saved, started.elapsed(), as_json)
}

fn board_inputs(
    program: &Program,
    input: &[std::path::PathBuf],
) -> Result<Vec<etscope_core::tensor::TensorData>> {
    if input.is_empty() {
        return Ok(board_image::zero_inputs(
            program,
            program.default_plan_index(),
        ));
    }
    input
        .iter()
        .map(|p| {
            etscope_core::formats::npy::read_npy(&load::bytes(p)?)
                .with_context(|| p.display().to_string())
        })
        .collect()
}

/// The board image of `pte` (for `board export` and `board run`).
pub fn image_of(
    pte: &Path,
    program: &Program,
    input: &[std::path::PathBuf],
    runs: u32,
    intermediates: bool,
    place: Option<&str>,
) -> Result<Vec<u8>> {
    let target = etscope_core::runtime::Target::for_program(program, program.default_plan_index());
    let placement = place
        .map(|how| super::fit::board_placement(program, program.default_plan_index(), how))
        .transpose()
        .with_context(|| format!("{}: cannot place it on the emulated board", pte.display()))?;
    let options = BoardOptions {
        runs,
        intermediates,
        scalar_core: !target.has_helium(),
        placement,
        ..BoardOptions::default()
    };
    let image = board_image::build(
        program,
        program.default_plan_index(),
        &board_inputs(program, input)?,
        &options,
    )
    .with_context(|| format!("{}: cannot run on the emulated board", pte.display()))?;
    Ok(image.bytes)
}

/// `etscope board export`.
pub fn board_export(job: &BoardJob) -> Result<()> {
    let (pte, out) = (job.pte.as_path(), job.out.as_path());
    let program = load::program(pte)?;
    let bytes = image_of(
        pte,
        &program,
        &job.input,
        job.runs,
        job.intermediates,
        job.place.as_deref(),
    )?;
    std::fs::write(out, &bytes).with_context(|| format!("{}: cannot write", out.display()))?;
    println!("{}: board image, {} bytes", out.display(), bytes.len());
    Ok(())
}

/// `etscope board run`.
pub fn board_run(job: &BoardJob, live: bool, as_json: bool) -> Result<()> {
    let (pte, out, runs) = (job.pte.as_path(), job.out.as_path(), job.runs);
    let program = load::program(pte)?;
    let image = image_of(
        pte,
        &program,
        &job.input,
        runs,
        job.intermediates,
        job.place.as_deref(),
    )?;
    let elf = crate::board::firmware()?;
    let qemu = crate::board::Qemu::start(&elf, &image)?;
    let gdb = qemu.connect()?;
    let source = TargetSource::new(Box::new(gdb), Locate::Address(qemu.control_block()?));
    let args = TargetArgs {
        poll_ms: 1,
        idle_timeout: 20,
        channel: etscope_profiler::session::CHANNEL_NAME.into(),
        ..TargetArgs::default()
    };
    capture(
        source,
        &program,
        pte,
        out,
        Some(u64::from(runs)),
        &args,
        live,
        as_json,
    )?;
    if !as_json {
        println!(
            "times: {} (`etscope cost {} --core C` estimates a real core)",
            etscope_viewer::document::EMULATED_TIMES,
            pte.display()
        );
        // the firmware computes as the program's own core; ExecuTorch's build for the board's
        // Cortex-M55 (CMSIS-NN's Helium path) may not run a program lowered for another
        let refused = etscope_core::analysis::fit::would_not_run(
            &program,
            program.default_plan_index(),
            etscope_core::cortex_m::Core::M55,
        );
        if let Some((id, why)) = refused.first() {
            println!(
                "core: the firmware computes as the core the program was lowered for, with etscope's C kernels; ExecuTorch's CMSIS-NN build for this board's Cortex-M55 would not run it as lowered (instruction {id}: {why}; `etscope fit {} --part mps3-an547`)",
                pte.display()
            );
        }
        let external = program.external_keys().len();
        if external > 0 && job.place.is_none() {
            println!(
                "placement: not applied: the program reads {external} constants from its .ptd (a placed program's moved weights); without --place FILE (the placement.toml beside it) they stay where the image holds them"
            );
        }
        if job.place.is_some() {
            println!("placement: QEMU models no memory timing, so a placed run takes the instructions an unplaced one does; what the placement saves is an estimate (`etscope fit --place`)");
        }
    }
    Ok(())
}

/// `etscope record`'s arguments.
#[derive(Debug, clap::Args)]
pub struct RecordArgs {
    /// The program the target runs (the capture is checked against it).
    #[arg(long)]
    pub pte: std::path::PathBuf,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Stop after this many runs (default: as many as the target announced, or until idle).
    #[arg(long)]
    pub runs: Option<u64>,
    /// Rebuild OUT from a raw stream (`.etsw`) recorded earlier instead of reading a target.
    #[arg(long)]
    pub replay: Option<std::path::PathBuf>,
    /// Show the per-operator table while recording.
    #[arg(long)]
    pub live: bool,
    #[arg(long, short = 'o')]
    pub out: std::path::PathBuf,
    #[arg(long)]
    pub json: bool,
}

/// Runs `etscope record` with its arguments.
pub fn main(args: RecordArgs) -> Result<()> {
    let RecordArgs {
        pte,
        target,
        runs,
        replay,
        live,
        out,
        json,
    } = args;
    match replay {
        Some(raw) => self::replay(&raw, &pte, &out, json),
        None => record(&pte, &target, &out, runs, live, json),
    }
}

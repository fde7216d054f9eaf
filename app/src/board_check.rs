//! A program over a dataset on the emulated board (QEMU `mps3-an547` with the firmware of
//! `board/`), every instruction's output read back over RTT and compared bit for bit with the
//! host's run on the same sample: they must be equal, so a difference is named by sample,
//! instruction and operator. QEMU runs one sample per boot. `eval --board` and the window's
//! Diff ▸ over a dataset both run it.

use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use etscope_core::board_image::{self, BoardOptions};
use etscope_core::formats::debug_buffer::captured_tensors;
use etscope_core::formats::pte::Program;
use etscope_core::runtime::{Runtime, Target};
use etscope_core::tensor::TensorData;
use etscope_profiler::session::{record_until, save_capture, Locate, Recorder, TargetSource};
use serde::Serialize;

/// What the board did over the samples.
#[derive(Debug, Clone, Serialize)]
pub struct BoardCheck {
    /// The program run (B).
    pub program: String,
    /// Samples run on the board.
    pub samples: usize,
    /// Samples whose every captured output equals the host's.
    pub equal: usize,
    /// Instruction outputs compared over all samples.
    pub compared: usize,
    pub differences: Vec<Difference>,
    /// What the board is, said beside its figures.
    pub board: &'static str,
}

/// One instruction whose board output is not the host's.
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    pub sample: u64,
    pub instruction: usize,
    pub op: String,
    /// Elements (bytes, for an integer tensor's storage) that differ.
    pub differing: usize,
    pub elements: usize,
}

const BOARD: &str = "QEMU mps3-an547 (Cortex-M55) running etscope's firmware";

/// Runs `program` (named `b`) on the board for each of `samples` (its index and inputs), with
/// `progress(done)` after each; stops early when `cancelled()`.
pub fn check(
    b: &str,
    program: &Program,
    samples: &mut dyn Iterator<Item = Result<(u64, Vec<TensorData>)>>,
    progress: &mut dyn FnMut(usize) -> bool,
) -> Result<BoardCheck> {
    let plan = program.default_plan_index();
    let target = Target::for_program(program, plan);
    let elf = crate::board::firmware()?;
    let scratch = std::env::temp_dir().join(format!("etscope-eval-board-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .with_context(|| format!("{}: cannot create", scratch.display()))?;
    let mut out = BoardCheck {
        program: b.to_string(),
        samples: 0,
        equal: 0,
        compared: 0,
        differences: Vec::new(),
        board: BOARD,
    };
    let result = (|| -> Result<()> {
        for sample in samples {
            let (i, inputs) = sample?;
            let diffs = one_sample(program, plan, target, &inputs, &elf, &scratch, i, b)?;
            out.samples += 1;
            out.compared += diffs.1;
            if diffs.0.is_empty() {
                out.equal += 1;
            }
            out.differences.extend(diffs.0);
            if !progress(out.samples) {
                bail!("cancelled");
            }
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    result?;
    Ok(out)
}

/// One inference of `image` (of `program`, named `name`) on the board: every instruction output
/// it sent, read back over RTT into `scratch`.
pub fn captured_on_board(
    program: &Program,
    image: &[u8],
    elf: &Path,
    scratch: &Path,
    name: &str,
) -> Result<Vec<etscope_core::formats::debug_buffer::CapturedTensor>> {
    let qemu = crate::board::Qemu::start(elf, image)?;
    let gdb = qemu.connect()?;
    let mut source = TargetSource::new(Box::new(gdb), Locate::Address(qemu.control_block()?));
    let raw = scratch.join("sample.etsw");
    let mut recorder = Recorder::new(Some(&raw)).map_err(|e| anyhow!("{e}"))?;
    record_until(
        &mut recorder,
        &mut source,
        Some(1),
        Duration::from_millis(1),
        Duration::from_secs(60),
        |_| true,
    )
    .map_err(|e| anyhow!("{name} on the board: {e}"))?;
    drop(recorder);
    let etdp = scratch.join("sample.etdp");
    let saved = save_capture(&raw, program, name, &etdp).map_err(|e| anyhow!("{e}"))?;
    let buffer = std::fs::read(crate::siblings::debug_buffer_of(&etdp)).map_err(|_| {
        anyhow!(
            "{name}: the board sent no outputs (its log: {:?})",
            saved.logs
        )
    })?;
    let device = captured_tensors(&saved.etdump, &buffer).map_err(|e| anyhow!("{name}: {e}"))?;
    if device.is_empty() {
        bail!("{name}: the board sent no outputs");
    }
    Ok(device)
}

/// One sample on the board against the host: the differences and the outputs compared.
#[allow(clippy::too_many_arguments)]
fn one_sample(
    program: &Program,
    plan: usize,
    target: Target,
    inputs: &[TensorData],
    elf: &Path,
    scratch: &Path,
    sample: u64,
    name: &str,
) -> Result<(Vec<Difference>, usize)> {
    let host = Runtime::new(program, plan, target)
        .and_then(|rt| rt.run(inputs, true))
        .map_err(|e| anyhow!("{name}: the host cannot run sample {sample}: {e}"))?;
    let options = BoardOptions {
        runs: 1,
        intermediates: true,
        scalar_core: !target.has_helium(),
        ..BoardOptions::default()
    };
    let image = board_image::build(program, plan, inputs, &options)
        .map_err(|e| anyhow!("{name}: cannot run on the emulated board: {e}"))?;
    let device = captured_on_board(program, &image.bytes, elf, scratch, name)
        .map_err(|e| anyhow!("sample {sample}: {e}"))?;
    let calls = program.instruction_calls(plan);
    let op_of = |i: usize| match calls.get(i) {
        Some(etscope_core::formats::pte::InstructionCall::Kernel(op)) => op.clone(),
        _ => String::new(),
    };
    let mut diffs = Vec::new();
    for t in &device {
        let Ok(id) = usize::try_from(t.instruction_id) else {
            continue; // not an instruction's output
        };
        let Some(h) = host
            .captured
            .iter()
            .find(|c| c.instruction_id == Some(id))
            .and_then(|c| c.tensors.first())
        else {
            bail!("{name}: sample {sample}: the host has no output of instruction {id}");
        };
        let want = h.to_data();
        if t.tensor != want {
            let width = want.dtype.element_size().unwrap_or(1).max(1);
            let differing = t
                .tensor
                .bytes
                .chunks(width)
                .zip(want.bytes.chunks(width))
                .filter(|(a, b)| a != b)
                .count()
                + t.tensor.bytes.len().abs_diff(want.bytes.len()) / width;
            diffs.push(Difference {
                sample,
                instruction: id,
                op: op_of(id),
                differing,
                elements: want.bytes.len() / width,
            });
        }
    }
    Ok((diffs, device.len()))
}

impl BoardCheck {
    /// The one line that says what the board did.
    pub fn headline(&self) -> String {
        let c = self;
        format!(
            "board: {} on {}, {} samples: {}",
            c.program,
            c.board,
            c.samples,
            if c.differences.is_empty() {
                format!(
                    "every instruction's output ({} compared) equal to the host's, bit for bit",
                    c.compared
                )
            } else {
                format!(
                    "{} of {} samples differ from the host (they must not)",
                    c.samples - c.equal,
                    c.samples
                )
            }
        )
    }
}

impl Difference {
    /// `sample 3: instruction 8 (cortex_m::quantized_linear.out): 10 of 10 elements differ`.
    pub fn line(&self) -> String {
        format!(
            "sample {}: instruction {} ({}): {} of {} elements differ",
            self.sample, self.instruction, self.op, self.differing, self.elements
        )
    }
}

/// The check as the text output says it (the first 20 differences).
pub fn print_text(c: &BoardCheck) {
    println!("{}", c.headline());
    for d in c.differences.iter().take(20) {
        println!("  {}", d.line());
    }
}

//! The headless command line: `info`, `graph`, `memory`, `profile` (also `--live`), `tensors`,
//! `run`, `diff`, `bundled`, `record` and `board`. Every command
//! prints a readable table, or JSON with `--json` (schemas in `docs/cli-json.md`).

mod bundled;
pub mod cost;
mod diff;
mod eval;
mod eval_sensitivity;
mod fit;
mod graph;
mod info;
mod lower;
mod memory;
mod open;
mod parts;
mod plan;
mod profile;
pub mod profile_compare;
mod record;
mod run;
mod tensors;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};

/// etscope: explore, profile and debug ExecuTorch programs for Arm Cortex-M.
///
/// Without a subcommand, opens the desktop window on FILES (.pte, .bpte, .etrecord, .etdp and
/// a debug buffer .bin); files opened together are associated with their program.
#[derive(Debug, Parser)]
#[command(name = "etscope", version, about, long_about = None, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Files to open in the window.
    pub files: Vec<PathBuf>,
    /// Initial view: graph, profile, timeline, memory, diff.
    #[arg(long)]
    pub view: Option<String>,
    /// Initial stage (e.g. `edge`, `pte`).
    #[arg(long)]
    pub stage: Option<String>,
    /// Select the first search hit for this query (e.g. `#3`, `conv`).
    #[arg(long)]
    pub select: Option<String>,
    /// Show the stage (`--stage`, or the program) side by side with this one (e.g. `edge`).
    #[arg(long)]
    pub side_by_side: Option<String>,
    /// Lower the ETRecord's edge graph for this core (m55, m4, m0, ...; default flow) once
    /// loaded, as "Lower for" does; its stages are named `m55 · default · N PassName`.
    #[arg(long, value_name = "TARGET")]
    pub lower: Option<String>,
    /// The Profile tab's estimate without a board: a core and optionally its clock, `m4@120`
    /// (m0plus, m3, m4, m7, m33, m55, m85; default Cortex-M4 @ 120 MHz).
    #[arg(long, value_name = "CORE[@MHZ]")]
    pub estimate: Option<String>,
    /// The Memory tab's part (`etscope parts`): each region a bar with what sits in it.
    #[arg(long, value_name = "PART")]
    pub part: Option<String>,
    /// The Memory tab's placement on `--part`: `auto` (the advisor's) or a placement file, as
    /// `etscope fit --place` takes them.
    #[arg(long, value_name = "auto|FILE", requires = "part")]
    pub place: Option<String>,
    /// Profile ▸ Compare with: a second capture (`.etdp`) of the program opened.
    #[arg(long, value_name = "FILE")]
    pub compare_capture: Option<PathBuf>,
    /// Save a screenshot of the window to this PNG once loaded, then quit.
    #[arg(long)]
    pub screenshot: Option<PathBuf>,
    /// Open the Live tab and stream this many inferences of the program from the emulated board
    /// (QEMU Cortex-M55).
    #[arg(long, value_name = "RUNS")]
    pub live_board: Option<u32>,
    /// Print to stderr when the first graph was drawn and when every file was attached (time
    /// since launch), then quit: how long a user waits (see README, "First frame").
    #[arg(long)]
    pub timings: bool,
    /// Open only the files given, not the ETRecord, ETDump, debug buffer, .ptd and input found
    /// beside a program by its name.
    #[arg(long)]
    pub no_siblings: bool,
    /// ETRecord stages with more nodes than this are built when first shown, not when the file
    /// is opened (default 5000: a large model's stages cost tens of MB each; an edge stage that
    /// quantizes is always built, the program takes its quantization parameters from it).
    #[arg(long, value_name = "NODES")]
    pub eager_stage_nodes: Option<usize>,
    /// Window size in points, WIDTHxHEIGHT (default 1500x950).
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    pub size: Option<[f32; 2]>,
    /// Draw nothing until every file is attached (the loading before the program was shown
    /// first; for `scripts/first_frame.sh`).
    #[arg(long, hide = true)]
    pub no_preview: bool,
    /// A dataset (a folder of .npy, or one .npy/.npz of samples) for Diff ▸ over a dataset.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Class labels of the dataset (.npy).
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// Compare the first two programs over --data once they are open.
    #[arg(long, requires = "data")]
    pub eval: bool,
    /// With --eval: then keep each layer of B in float in turn (B's ETRecord beside it).
    #[arg(long, requires = "eval")]
    pub sensitivity: bool,
    /// With --eval: also run B on the emulated board for the first N samples, as `eval --board
    /// --limit N` does.
    #[arg(long, value_name = "N", requires = "eval")]
    pub board_samples: Option<usize>,
}

/// `1280x800` → `[1280.0, 800.0]`.
fn parse_size(s: &str) -> Result<[f32; 2], String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("{s}: expected WIDTHxHEIGHT, e.g. 1280x800"))?;
    let dim = |d: &str| match d.trim().parse::<u32>() {
        Ok(v) if (200..=10_000).contains(&v) => Ok(v as f32),
        _ => Err(format!(
            "{s}: each side must be a whole number from 200 to 10000"
        )),
    };
    Ok([dim(w)?, dim(h)?])
}

/// What the command line asks for.
pub enum Launch {
    Command(Command),
    Window(crate::gui::StartOptions),
}

impl Cli {
    /// A subcommand, or the window with its start options.
    pub fn launch(self) -> Launch {
        match self.command {
            Some(c) => Launch::Command(c),
            None => Launch::Window(crate::gui::StartOptions {
                files: self.files,
                tab: self.view.as_deref().and_then(crate::gui::Tab::parse),
                stage: self.stage,
                select: self.select,
                side_by_side: self.side_by_side,
                lower: self.lower,
                screenshot: self.screenshot,
                live_board: self.live_board,
                timings: self.timings.then(std::time::Instant::now),
                no_preview: self.no_preview,
                size: self.size,
                no_siblings: self.no_siblings,
                eager_stage_nodes: self.eager_stage_nodes,
                data: self.data,
                labels: self.labels,
                eval: self.eval,
                sensitivity: self.sensitivity,
                board_samples: self.board_samples,
                estimate: self.estimate,
                part: self.part,
                place: self.place,
                compare_capture: self.compare_capture,
            }),
        }
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Summarize any supported file: .pte, .bpte, .etdp, .etrecord, .npy.
    Info(info::InfoArgs),
    /// What the window makes of a set of files: each program with what attaches to it (found
    /// beside it by name too), its stages, and why any file is not used.
    Open(open::OpenArgs),
    /// Print the IR graph (nodes and edges) of a program or an ETRecord stage.
    Graph(graph::GraphArgs),
    /// Lower an ETRecord's edge graph for a Cortex-M core with etscope's own passes (ExecuTorch
    /// 1.5.1's Cortex-M pass list), pass by pass; `-o` writes the lowered program.
    Lower(lower::LowerArgs),
    /// Estimate every call's cycles on a Cortex-M core without a board: the path CMSIS-NN takes
    /// for the call's shape on that core, priced from its compiled loops and the core's
    /// instruction timings (docs/cost-model.md); totals in cycles and ms at the clock.
    Cost(cost::CostArgs),
    /// Does a program fit a part: every pool ExecuTorch's runtime needs with its exact size and
    /// region, the program and its code in flash, each region's use, the estimated latency, and
    /// what-ifs (inputs as int8, a better planner).
    Fit(fit::FitArgs),
    /// List the built-in parts: core, clock, memory regions (base, size, kind, wait states,
    /// source) and where a default link puts code, constants, arenas and the stack.
    Parts(parts::PartsArgs),
    /// Show the memory plan of a .pte per arena: tensors, lifetimes, peak, lower bound, findings.
    Memory(memory::MemoryArgs),
    /// Plan a .pte's memory with every planner etscope has (ExecuTorch's own greedy
    /// reimplemented, best fit, in-place sharing, the proven optimum of small arenas, a
    /// memory-aware chain order), each checked; -o writes the program re-planned.
    Plan(plan::PlanArgs),
    /// Per-operator timing statistics from an ETDump, as the ExecuTorch Inspector computes them.
    Profile(profile::ProfileArgs),
    /// Execute a program on the host (portable fp32, Q/DQ and cortex_m int8 kernels with
    /// CMSIS-NN arithmetic).
    Run(run::RunArgs),
    /// Compare intermediate tensors of two sources node by node and find the first divergence.
    /// A source is a `.pte` (run on the host), `FILE.etrecord#STAGE` (a lowering stage run on
    /// the host) or `etdump:FILE.etdp+FILE.bin` (device capture).
    Diff(diff::DiffArgs),
    /// Numerics over a dataset: A (the reference) and B on every sample; per output top-1
    /// agreement, accuracies, confusion, RMSE, MAE, L2r, cosine, SNR; per matched group the
    /// SNR's minimum, 5th percentile and median, rmse/scale and the worst samples. `--merge
    /// PART.json…` combines shards' `--json` documents into the numbers of one run.
    Eval(eval::EvalArgs),
    /// Run every test case of a BundledProgram on the host and report pass/fail.
    Bundled(bundled::BundledArgs),
    /// Capture per-operator events (and captured outputs) from a running target over RTT, via a
    /// GDB server or a debug probe; writes OUT.etsw as bytes arrive, then OUT.etdp (+ OUT.bin).
    Record(record::RecordArgs),
    /// The emulated board (QEMU mps3-an547, Cortex-M55): run a Cortex-M program on it and
    /// record every inference over RTT.
    Board {
        #[command(subcommand)]
        action: BoardAction,
    },
    /// List the intermediate tensors captured in an ETDump's debug buffer.
    Tensors(tensors::TensorsArgs),
}

/// `etscope board` actions.
#[derive(Debug, Subcommand)]
pub enum BoardAction {
    /// Build (or reuse) the firmware, start QEMU with the program, record N inferences.
    Run {
        #[command(flatten)]
        job: BoardJob,
        /// Show the per-operator table while recording.
        #[arg(long)]
        live: bool,
        #[arg(long)]
        json: bool,
    },
    /// Write the board image of a program (what the firmware executes) without running it.
    Export {
        #[command(flatten)]
        job: BoardJob,
    },
    /// Build (or reuse) the firmware and print the ELF's path.
    Firmware,
}

/// What the emulated board is asked to do: one program, its input, how many inferences.
#[derive(Debug, Args)]
pub struct BoardJob {
    pub pte: PathBuf,
    /// The program's inputs (`.npy`), one `--input` per program input in order; zeros when
    /// omitted.
    #[arg(long)]
    pub input: Vec<PathBuf>,
    #[arg(long, default_value_t = 10)]
    pub runs: u32,
    /// Also send every instruction's output tensor (debug events + OUT.bin).
    #[arg(long)]
    pub intermediates: bool,
    /// Place the arenas and each call's weights in the board's regions (SRAM, ISRAM, DDR) as a
    /// placement file says (`etscope fit --part mps3-an547 --place …`), or `auto`.
    #[arg(long, value_name = "auto|FILE")]
    pub place: Option<String>,
    #[arg(long, short = 'o')]
    pub out: PathBuf,
}

/// Runs one command.
pub fn run(command: Command) -> Result<()> {
    match command {
        Command::Info(args) => info::main(args),
        Command::Eval(args) => eval::main(args),
        Command::Open(args) => open::main(args),
        Command::Bundled(args) => bundled::main(args),
        Command::Diff(args) => diff::main(args),
        Command::Run(args) => run::main(args),
        Command::Graph(args) => graph::main(args),
        Command::Lower(args) => lower::main(args),
        Command::Parts(args) => parts::main(args),
        Command::Fit(args) => fit::main(args),
        Command::Cost(args) => cost::main(args),
        Command::Memory(args) => memory::main(args),
        Command::Plan(args) => plan::main(args),
        Command::Profile(args) => profile::main(args),
        Command::Record(args) => record::main(args),
        Command::Board { action } => match action {
            BoardAction::Run { job, live, json } => record::board_run(&job, live, json),
            BoardAction::Export { job } => record::board_export(&job),
            BoardAction::Firmware => {
                println!("{}", crate::board::firmware()?.display());
                Ok(())
            }
        },
        Command::Tensors(args) => tensors::main(args),
    }
}

/// Most arenas `info` and `memory` list one by one (real programs have one to three; a hostile
/// plan can declare millions).
const MAX_LISTED_ARENAS: usize = 256;

/// Prints a value as pretty JSON.
fn print_json(v: &impl serde::Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

/// The index of the plan named `method`, or of the one run when none is named.
fn pick_plan(
    program: &etscope_core::formats::pte::Program,
    method: Option<&str>,
    path: &std::path::Path,
) -> Result<usize> {
    let names = program.method_names();
    let found = match method {
        Some(m) => program.plan_index(m),
        None => Some(program.default_plan_index()).filter(|&i| i < names.len()),
    };
    found.ok_or_else(|| {
        anyhow::anyhow!(
            "{}: no execution plan {:?} (plans: {names:?})",
            path.display(),
            method.unwrap_or("<any>")
        )
    })
}

/// A command could not do its work on the host (an operator etscope does not implement, a
/// delegate only its backend runs): not a verdict on the input. `etscope` exits with
/// [`CannotRun::EXIT_CODE`] for it.
#[derive(Debug)]
pub struct CannotRun(pub String);

impl CannotRun {
    /// The process exit code (2 is every other error).
    pub const EXIT_CODE: u8 = 3;
}

impl std::fmt::Display for CannotRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CannotRun {}

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
    Info {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// What the window makes of a set of files: each program with what attaches to it (found
    /// beside it by name too), its stages, and why any file is not used.
    Open {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Open only the files given.
        #[arg(long)]
        no_siblings: bool,
        #[arg(long)]
        json: bool,
    },
    /// Print the IR graph (nodes and edges) of a program or an ETRecord stage.
    Graph {
        file: PathBuf,
        /// ETRecord stage (`exported`, `edge`, `edge_after_transform`, or the entry name); the
        /// first stage when omitted. Ignored for .pte/.bpte.
        #[arg(long)]
        stage: Option<String>,
        /// Execution plan (method) of a .pte; the first when omitted.
        #[arg(long)]
        method: Option<String>,
        #[arg(long)]
        json: bool,
        /// The geometry the window draws (every module unfolded): with --json, a "layout"
        /// object of node boxes, edge polylines and module boxes (docs/cli-json.md).
        #[arg(long)]
        layout: bool,
    },
    /// Lower an ETRecord's edge graph for a Cortex-M core with etscope's own passes (ExecuTorch
    /// 1.5.1's Cortex-M pass list), pass by pass; `-o` writes the lowered program.
    Lower {
        file: PathBuf,
        /// `default` (NCHW tensors stored channels-last) or `explicit` (`_nhwc` operators).
        #[arg(long, default_value = "default")]
        flow: String,
        /// The core: m55, m85 (Helium), m4, m7, m33, m35p (DSP), m0, m0plus, m3, m23 (plain C);
        /// any spelling (`cortex-m55`, `M0+`). `--target` is the same.
        #[arg(long = "core", visible_alias = "target", default_value = "m55")]
        target: String,
        /// The method (`forward` when omitted).
        #[arg(long)]
        method: Option<String>,
        /// Every pass's graph as JSON: {"passes": [{"name", "changed", "graph"}]}.
        #[arg(long)]
        json: bool,
        /// Write the lowered program (.pte) here.
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
        /// Run the edge graph and every pass stage on an input and name the first pass that
        /// changes the outputs (the input: `--input`, else the ETRecord's representative one).
        #[arg(long)]
        numerics: bool,
        /// The input for `--numerics` (.npy; repeat for several inputs).
        #[arg(long)]
        input: Vec<PathBuf>,
        /// Keep these modules' weighted layers in float (comma-separated module paths, as
        /// `eval` names its groups): a mixed program.
        #[arg(long, value_delimiter = ',')]
        keep_float: Vec<String>,
        /// The program takes its inputs (`inputs`, the default), returns its outputs
        /// (`outputs`) or both (`both`) as int8: ExecuTorch's `QuantizeInputs` /
        /// `QuantizeOutputs` before the Cortex-M passes (the application quantizes and
        /// dequantizes; every input must be read by a quantize, every output made by a
        /// dequantize).
        #[arg(long, value_name = "inputs|outputs|both", num_args = 0..=1, default_missing_value = "inputs", value_parser = ["inputs", "outputs", "both"])]
        quantize_io: Option<String>,
    },
    /// Estimate every call's cycles on a Cortex-M core without a board: the path CMSIS-NN takes
    /// for the call's shape on that core, priced from its compiled loops and the core's
    /// instruction timings (docs/cost-model.md); totals in cycles and ms at the clock.
    Cost {
        file: PathBuf,
        #[arg(long)]
        method: Option<String>,
        /// m0plus (m0), m3, m4, m7, m33 (m35p), m55 or m85; any spelling (`cortex-m4`, `M0+`).
        /// `--target` is the same. Default: the part's core, else m55.
        #[arg(long, visible_alias = "target")]
        core: Option<String>,
        /// A part (`etscope parts`), or a part file (NAME.toml): its core, clock and the wait
        /// states of the memory its weights are read from.
        #[arg(long)]
        part: Option<String>,
        /// Clock in MHz (default: the part's, else a clock parts with the core commonly run at).
        #[arg(long)]
        mhz: Option<f64>,
        /// Wait states of the flash the weights are read from, on every 16-byte line read
        /// (default: the part's constants region's where its source states them, else 0).
        #[arg(long)]
        flash_wait_states: Option<u32>,
        #[arg(long)]
        json: bool,
    },
    /// Does a program fit a part: every pool ExecuTorch's runtime needs with its exact size and
    /// region, the program and its code in flash, each region's use, the estimated latency, and
    /// what-ifs (inputs as int8, a better planner).
    Fit {
        file: PathBuf,
        #[arg(long)]
        method: Option<String>,
        /// A part (`etscope parts`), or a part file (NAME.toml).
        #[arg(long)]
        part: String,
        /// The clock in MHz (default: the part's).
        #[arg(long)]
        mhz: Option<f64>,
        /// Write the pool sizes as a C header for ExecuTorch's Arm bare-metal runner
        /// (`etscope_pools.h`) and the part's regions as a linker-script fragment
        /// (`etscope_regions.ld`) into this folder; with --place also the placement
        /// (`placement.toml`) and the estimate per call before and after it (`placed_cost.csv`).
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
        /// Place the pools and each call's weights in the part's regions: `auto` (the advisor:
        /// the placement that lowers the estimate most under the regions' sizes), or a
        /// placement file (`placement.toml`, as `-o` writes it).
        #[arg(long)]
        place: Option<String>,
        /// Exit 1 (after the report) when the program does not fit the part or the part's core
        /// does not run it: a CI gate.
        #[arg(long)]
        check: bool,
        #[arg(long)]
        json: bool,
    },
    /// List the built-in parts: core, clock, memory regions (base, size, kind, wait states,
    /// source) and where a default link puts code, constants, arenas and the stack.
    Parts {
        #[arg(long)]
        json: bool,
    },
    /// Show the memory plan of a .pte per arena: tensors, lifetimes, peak, lower bound, findings.
    Memory {
        file: PathBuf,
        #[arg(long)]
        method: Option<String>,
        /// Also place every tensor anew with etscope's best-fit planner on the same lifetimes
        /// (checked: no two live tensors share a byte) and show what each arena then needs.
        #[arg(long)]
        replan: bool,
        /// The core whose RAM budget is shown (every Cortex-M is a 32-bit Arm target: the same
        /// budget). `--target` is the same.
        #[arg(long = "core", visible_alias = "target", default_value = "m55")]
        target: String,
        #[arg(long)]
        json: bool,
    },
    /// Plan a .pte's memory with every planner etscope has (ExecuTorch's own greedy
    /// reimplemented, best fit, in-place sharing, the proven optimum of small arenas, a
    /// memory-aware chain order), each checked; -o writes the program re-planned.
    Plan {
        file: PathBuf,
        #[arg(long)]
        method: Option<String>,
        /// `best` (the smallest valid plan per arena), or executorch, best_fit, in_place, exact,
        /// exact_in_place, reorder (a memory-aware chain order; written into the program).
        #[arg(long, default_value = "best")]
        algorithm: String,
        #[arg(long)]
        json: bool,
        /// Write the program re-planned with the chosen algorithm (new offsets, arenas declared
        /// at the plan's peak; everything else unchanged).
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
    },
    /// Per-operator timing statistics from an ETDump, as the ExecuTorch Inspector computes them.
    Profile {
        #[arg(long)]
        pte: PathBuf,
        /// The ETDump (`.etdp`, e.g. a saved capture); not with --live.
        #[arg(long, required_unless_present = "live")]
        etdump: Option<PathBuf>,
        /// Capture from a running target and refresh the table as runs arrive (same target
        /// options as `record`); the capture is saved to --out.
        #[arg(long)]
        live: bool,
        #[command(flatten)]
        target: record::TargetArgs,
        /// With --live: where to save the capture.
        #[arg(long, short = 'o', default_value = "live_capture.etdp")]
        out: PathBuf,
        /// ETRecord of the same program: adds debug handles to the rows.
        #[arg(long)]
        etrecord: Option<PathBuf>,
        /// Ticks per microsecond (1000 for a host ETDump in ns; core MHz for Cortex-M cycles).
        #[arg(long)]
        ticks_per_us: Option<f64>,
        /// Beside every measured time, the estimate on this core (m0plus, m3, m4, m7, m33,
        /// m55, m85; `etscope cost`) and measured ÷ estimated, far-off ratios flagged — only
        /// when the capture comes from a part with that core (declared by the capture, or
        /// by --capture-core); a host's or an emulator's capture is never priced as a part.
        /// `--core` names the same.
        #[arg(long, visible_alias = "core", value_name = "CORE")]
        estimate: Option<String>,
        /// The estimate's clock in MHz (default: a clock parts with the core commonly run at).
        #[arg(long, requires = "estimate")]
        mhz: Option<f64>,
        /// The core of the part the ETDump was captured on, for a capture that declares none
        /// (an ETDump a board wrote over its UART); refused when the capture declares another.
        #[arg(long)]
        capture_core: Option<String>,
        /// A second capture B to compare with this one (A), operator by operator: p50, p90,
        /// jitter and the change, sorted by impact.
        #[arg(long, conflicts_with = "live")]
        compare: Option<PathBuf>,
        /// B's program, when B was captured running another export of the model (matched by
        /// debug handle, module path or stack trace); default: --pte.
        #[arg(long, requires = "compare")]
        compare_pte: Option<PathBuf>,
        /// B's ETRecord (its debug handles and module paths, for matching another export).
        #[arg(long, requires = "compare")]
        compare_etrecord: Option<PathBuf>,
        /// B's ticks per microsecond, when its clock differs from A's (default: --ticks-per-us).
        #[arg(long, requires = "compare")]
        compare_ticks_per_us: Option<f64>,
        /// With --compare: exit 1 when any matched operator's p50 grew by more than PCT percent
        /// (a CI gate).
        #[arg(long, requires = "compare", value_name = "PCT")]
        fail_if_slower: Option<f64>,
        /// With --fail-if-slower: operators under PCT percent of A's total p50 are not gated
        /// (their run-to-run noise is larger than any threshold).
        #[arg(
            long,
            requires = "fail_if_slower",
            value_name = "PCT",
            default_value_t = 1.0
        )]
        gate_min_share: f64,
        /// Also write the comparison (with --compare) or the table as CSV to this file.
        #[arg(long)]
        csv: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Execute a program on the host (portable fp32, Q/DQ and cortex_m int8 kernels with
    /// CMSIS-NN arithmetic).
    Run {
        /// A `.pte` program, or `FILE.etrecord#STAGE`: a lowering stage, run exactly as a
        /// program is.
        #[arg(required_unless_present = "pte")]
        source: Option<String>,
        /// The program (the same as SOURCE).
        #[arg(long, conflicts_with = "source")]
        pte: Option<PathBuf>,
        /// One `.npy` per program input, in order.
        #[arg(long = "input")]
        inputs: Vec<PathBuf>,
        /// Write `output_<k>.npy` and every node's out tensors (`instr_<id>.npy` for a program's
        /// instructions, `node_<id>.npy` for a stage's nodes) here.
        #[arg(long)]
        dump: Option<PathBuf>,
        /// The method to run, by name (default: `forward`, else the program's first method).
        #[arg(long)]
        method: Option<String>,
        #[command(flatten)]
        device: run::DeviceChoice,
        /// Execute inside the program's memory plan (one buffer per arena at the planned
        /// offsets), so a bad plan shows up as corrupted values.
        #[arg(long)]
        in_arenas: bool,
        /// The most host memory the program's tensors may take together, in MiB (a guard
        /// against corrupted sizes; raise it for a large program on a large machine).
        #[arg(long, value_name = "MIB", default_value_t = 512)]
        max_memory: u64,
        /// Call the method N times with the same inputs, each call starting from the memory the
        /// last one left (as ExecuTorch's runtime executes a loaded method: a program's state —
        /// a mutable buffer, a KV cache — carries over); the last call's outputs are shown and
        /// written.
        #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        calls: u32,
        #[arg(long)]
        json: bool,
    },
    /// Compare intermediate tensors of two sources node by node and find the first divergence.
    /// A source is a `.pte` (run on the host), `FILE.etrecord#STAGE` (a lowering stage run on
    /// the host) or `etdump:FILE.etdp+FILE.bin` (device capture).
    Diff {
        a: String,
        b: String,
        #[arg(long = "input", required = true)]
        inputs: Vec<PathBuf>,
        /// The program an `etdump:` source was captured from (default: the other side's .pte).
        #[arg(long)]
        etdump_program: Option<PathBuf>,
        /// A node diverges below this signal-to-noise ratio (dB)...
        #[arg(long, default_value_t = 20.0)]
        min_snr: f64,
        /// ...when it also lost at least this many dB against the error carried into it (0: any
        /// node below --min-snr diverges).
        #[arg(long, default_value_t = 10.0)]
        min_drop: f64,
        /// A node also diverges above this max abs error.
        #[arg(long)]
        max_abs: Option<f64>,
        /// The core and CMSIS-NN version a `.pte` side runs as on the host.
        #[command(flatten)]
        device: run::DeviceChoice,
        #[arg(long)]
        json: bool,
    },
    /// Numerics over a dataset: A (the reference) and B on every sample; per output top-1
    /// agreement, accuracies, confusion, RMSE, MAE, L2r, cosine, SNR; per matched group the
    /// SNR's minimum, 5th percentile and median, rmse/scale and the worst samples. `--merge
    /// PART.json…` combines shards' `--json` documents into the numbers of one run.
    Eval {
        /// The reference (a .pte, or FILE.etrecord#STAGE); omitted with --merge.
        #[arg(required_unless_present = "merge")]
        a: Option<String>,
        /// The program compared with it.
        #[arg(required_unless_present = "merge")]
        b: Option<String>,
        /// A folder of .npy samples, or one .npy/.npz whose leading dimension is the sample.
        #[arg(long, required_unless_present = "merge")]
        data: Option<PathBuf>,
        /// Class indices, one per sample (.npy).
        #[arg(long)]
        labels: Option<PathBuf>,
        /// Samples run in parallel (default: every core).
        #[arg(long)]
        jobs: Option<usize>,
        /// Run the K-th of N contiguous slices of the dataset (`K/N`).
        #[arg(long)]
        shard: Option<String>,
        /// Also run B with each weighted layer kept in float (B's ETRecord beside it) and rank
        /// the variants by what they recover, with their arena and flash bytes.
        #[arg(long)]
        sensitivity: bool,
        /// With --sensitivity: only the float variants (each weighted layer in float alone),
        /// not the only-quantized ones (every other layer in float), which take as long again.
        #[arg(long, requires = "sensitivity")]
        float_only: bool,
        /// Write B with these groups kept in float (what --sensitivity names them) to `-o`, and
        /// evaluate that program instead of B.
        #[arg(long, value_delimiter = ',', requires = "out")]
        keep_float: Vec<String>,
        /// Where --keep-float writes the mixed program (.pte).
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
        /// Merge these `eval --json` documents (shards of one dataset) instead of running.
        #[arg(long, num_args = 1.., conflicts_with_all = ["a", "b", "data", "shard"])]
        merge: Vec<PathBuf>,
        /// Also run B (a .pte) on the emulated board (QEMU Cortex-M55) for each sample and say
        /// where the board's outputs differ from the host's, instruction by instruction (they
        /// must not). One boot per sample.
        #[arg(long, conflicts_with = "merge")]
        board: bool,
        /// With --board: the board runs only the first N samples (of the slice).
        #[arg(long, requires = "board")]
        limit: Option<usize>,
        #[command(flatten)]
        device: run::DeviceChoice,
        #[arg(long)]
        json: bool,
    },
    /// Run every test case of a BundledProgram on the host and report pass/fail.
    Bundled {
        file: PathBuf,
        #[arg(long, default_value_t = 1e-5)]
        rtol: f64,
        #[arg(long, default_value_t = 1e-8)]
        atol: f64,
        #[arg(long)]
        json: bool,
    },
    /// Capture per-operator events (and captured outputs) from a running target over RTT, via a
    /// GDB server or a debug probe; writes OUT.etsw as bytes arrive, then OUT.etdp (+ OUT.bin).
    Record {
        /// The program the target runs (the capture is checked against it).
        #[arg(long)]
        pte: PathBuf,
        #[command(flatten)]
        target: record::TargetArgs,
        /// Stop after this many runs (default: as many as the target announced, or until idle).
        #[arg(long)]
        runs: Option<u64>,
        /// Rebuild OUT from a raw stream (`.etsw`) recorded earlier instead of reading a target.
        #[arg(long)]
        replay: Option<PathBuf>,
        /// Show the per-operator table while recording.
        #[arg(long)]
        live: bool,
        #[arg(long, short = 'o')]
        out: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// The emulated board (QEMU mps3-an547, Cortex-M55): run a Cortex-M program on it and
    /// record every inference over RTT.
    Board {
        #[command(subcommand)]
        action: BoardAction,
    },
    /// List the intermediate tensors captured in an ETDump's debug buffer.
    Tensors {
        #[arg(long)]
        etdump: PathBuf,
        #[arg(long)]
        debug_buffer: PathBuf,
        /// The program, to name each instruction's operator.
        #[arg(long)]
        pte: Option<PathBuf>,
        /// Write each tensor as `.npy` into this directory.
        #[arg(long)]
        dump: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
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
        Command::Info { file, json } => info::run(&file, json),
        Command::Eval {
            a,
            b,
            data,
            labels,
            jobs,
            shard,
            sensitivity,
            float_only,
            keep_float,
            out,
            merge,
            board,
            limit,
            device,
            json,
        } => match (a, b, data) {
            (Some(a), Some(b), Some(data)) if merge.is_empty() => {
                let b = match out.as_deref().filter(|_| !keep_float.is_empty()) {
                    Some(out) => eval_sensitivity::write_mixed(&b, &keep_float, out, &device)?,
                    None => b,
                };
                eval::run(
                    &a,
                    &b,
                    &data,
                    labels.as_deref(),
                    jobs,
                    shard.as_deref(),
                    match (sensitivity, float_only) {
                        (false, _) => eval_sensitivity::Sweep::Off,
                        (true, true) => eval_sensitivity::Sweep::FloatOnly,
                        (true, false) => eval_sensitivity::Sweep::All,
                    },
                    board.then_some(limit),
                    &device,
                    json,
                )
            }
            _ => eval::merge(&merge, json),
        },
        Command::Open {
            files,
            no_siblings,
            json,
        } => open::run(&files, !no_siblings, json),
        Command::Bundled {
            file,
            rtol,
            atol,
            json,
        } => bundled::run(&file, rtol, atol, json),
        Command::Diff {
            a,
            b,
            inputs,
            etdump_program,
            min_snr,
            min_drop,
            max_abs,
            device,
            json,
        } => diff::run(
            &a,
            &b,
            &inputs,
            etdump_program.as_deref(),
            &device,
            etscope_core::analysis::diff::Threshold {
                min_snr_db: min_snr,
                min_drop_db: min_drop,
                max_abs: max_abs.unwrap_or(f64::INFINITY),
            },
            json,
        ),
        Command::Run {
            source,
            pte,
            inputs,
            dump,
            method,
            device,
            in_arenas,
            max_memory,
            calls,
            json,
        } => run::run(
            &run::RunSource::parse(source.as_deref(), pte.as_deref()),
            &inputs,
            dump.as_deref(),
            method.as_deref(),
            &run::RunChoices {
                device,
                in_arenas,
                max_bytes: max_memory.saturating_mul(1 << 20),
                calls,
            },
            json,
        ),
        Command::Graph {
            file,
            stage,
            method,
            json,
            layout,
        } => graph::run(&file, stage.as_deref(), method.as_deref(), json, layout),
        Command::Lower {
            file,
            flow,
            target,
            method,
            json,
            out,
            numerics,
            input,
            keep_float,
            quantize_io,
        } => lower::run(
            &file,
            lower::options(&flow, &target)?,
            &lower::Outputs {
                out: out.as_deref(),
                numerics: numerics || !input.is_empty(),
                inputs: &input,
                keep_float: &keep_float,
                quantize_inputs: matches!(quantize_io.as_deref(), Some("inputs" | "both")),
                quantize_outputs: matches!(quantize_io.as_deref(), Some("outputs" | "both")),
            },
            method.as_deref(),
            json,
        ),
        Command::Parts { json } => parts::run(json),
        Command::Fit {
            file,
            method,
            part,
            mhz,
            out,
            place,
            check,
            json,
        } => fit::run(
            &file,
            method.as_deref(),
            out.as_deref(),
            place.as_deref(),
            check,
            &cost::Machine {
                core: None,
                part: Some(&part),
                mhz,
                flash_wait_states: None,
            },
            json,
        ),
        Command::Cost {
            file,
            method,
            core,
            part,
            mhz,
            flash_wait_states,
            json,
        } => cost::run(
            &file,
            method.as_deref(),
            &cost::Machine {
                core: core.as_deref(),
                part: part.as_deref(),
                mhz,
                flash_wait_states,
            },
            json,
        ),
        Command::Memory {
            file,
            method,
            replan,
            target,
            json,
        } => memory::run(&file, method.as_deref(), replan, &target, json),
        Command::Plan {
            file,
            method,
            algorithm,
            json,
            out,
        } => plan::run(&file, method.as_deref(), &algorithm, out.as_deref(), json),
        Command::Profile {
            pte,
            etdump,
            etrecord,
            ticks_per_us,
            estimate,
            mhz,
            capture_core,
            compare,
            compare_pte,
            compare_etrecord,
            compare_ticks_per_us,
            fail_if_slower,
            gate_min_share,
            csv,
            json,
            live,
            target,
            out,
        } => match (live, etdump, compare) {
            (true, _, _) => record::record(&pte, &target, &out, None, true, json),
            (false, Some(etdump), Some(b)) => profile_compare::run(profile_compare::CompareArgs {
                pte: &pte,
                etdump: &etdump,
                etrecord: etrecord.as_deref(),
                ticks_per_us,
                b_etdump: &b,
                b_pte: compare_pte.as_deref(),
                b_etrecord: compare_etrecord.as_deref(),
                b_ticks_per_us: compare_ticks_per_us,
                fail_if_slower,
                gate_min_share,
                csv: csv.as_deref(),
                json,
            }),
            (false, Some(etdump), None) => profile::run(profile::ProfileArgs {
                pte: &pte,
                etdump: &etdump,
                etrecord: etrecord.as_deref(),
                ticks_per_us,
                estimate: estimate.as_deref(),
                mhz,
                capture_core: capture_core.as_deref(),
                csv: csv.as_deref(),
                json,
            }),
            (false, None, _) => anyhow::bail!("profile needs --etdump FILE or --live"),
        },
        Command::Record {
            pte,
            target,
            runs,
            replay,
            live,
            out,
            json,
        } => match replay {
            Some(raw) => record::replay(&raw, &pte, &out, json),
            None => record::record(&pte, &target, &out, runs, live, json),
        },
        Command::Board { action } => match action {
            BoardAction::Run { job, live, json } => record::board_run(&job, live, json),
            BoardAction::Export { job } => record::board_export(&job),
            BoardAction::Firmware => {
                println!("{}", crate::board::firmware()?.display());
                Ok(())
            }
        },
        Command::Tensors {
            etdump,
            debug_buffer,
            pte,
            dump,
            json,
        } => tensors::run(
            &etdump,
            &debug_buffer,
            pte.as_deref(),
            dump.as_deref(),
            json,
        ),
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

//! `etscope run`: executes a program on the host with etscope's runtime and optionally dumps
//! every output and every instruction's out tensors as `.npy`.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use clap::Args;
use etscope_core::cortex_m::Core;
use etscope_core::formats::pte::Program;
use etscope_core::kernels::libm::Libm;
use etscope_core::runtime::{CmsisNn, Device, RunOptions, Runtime, Target};
use serde_json::json;

use crate::load;
use crate::table::Table;

/// The core and CMSIS-NN version the Cortex-M kernels model, as the user chose them (`run`,
/// `diff`).
#[derive(Debug, Default, Clone, Args)]
pub struct DeviceChoice {
    /// The core whose CMSIS-NN path the Cortex-M kernels model: m55/m85 (Helium), m4/m7/m33/
    /// m35p (DSP), m0/m0plus/m3/m23 (plain C); any spelling (`cortex-m4`, `M0+`). Default:
    /// what the program says (an M4 program's linear layers carry a bias and no kernel sum),
    /// else m55. `--target` is the same.
    #[arg(long = "core", visible_alias = "target")]
    pub target: Option<String>,
    /// Same as `--target m4` (a DSP core).
    #[arg(long, hide = true)]
    pub scalar: bool,
    /// The CMSIS-NN version the device runs where behaviour changed: `dbf45dbf` (pinned by
    /// ExecuTorch 1.5.1, default) or `4a8f5b5d` (transpose convolution fixed).
    #[arg(long)]
    pub cmsis_nn: Option<String>,
    /// Whose C library the float kernels' `expf`, `tanhf`, `powf`, ... are: `newlib` (default:
    /// the Arm GNU toolchain's, what the device computes; a function the host does not model is
    /// refused, naming it) or `glibc` (the host's own: what ExecuTorch's x86 runtime computes).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(Libm::NAMES))]
    pub libm: Option<String>,
}

impl DeviceChoice {
    /// The device for plan `index` of `program`: the chosen core, else the program's own.
    pub fn device(&self, program: &Program, index: usize) -> Result<Device> {
        let target = self
            .chosen_target()?
            .unwrap_or_else(|| Target::for_program(program, index));
        self.device_on(target)
    }

    /// The device for a stage (no program to read the core from): the chosen core, else the
    /// default (m55).
    pub fn device_for_stage(&self) -> Result<Device> {
        let target = self.chosen_target()?.unwrap_or_default();
        self.device_on(target)
    }

    /// `target` with the chosen CMSIS-NN version and C library.
    fn device_on(&self, target: Target) -> Result<Device> {
        let cmsis_nn = match &self.cmsis_nn {
            Some(name) => CmsisNn::parse(name).ok_or_else(|| {
                anyhow!("--cmsis-nn {name}: unknown version (dbf45dbf or 4a8f5b5d)")
            })?,
            None => CmsisNn::default(),
        };
        let libm = self
            .libm
            .as_deref()
            .and_then(Libm::parse)
            .unwrap_or_default();
        Ok(Device {
            target,
            cmsis_nn,
            libm,
        })
    }

    /// The core the user chose, if any.
    fn chosen_target(&self) -> Result<Option<Target>> {
        Ok(match (&self.target, self.scalar) {
            (Some(name), _) => Some(Target::parse(name).ok_or_else(|| {
                anyhow!(
                    "--core {name}: unknown core (one of {}, or a CMSIS-NN path: mve, dsp, plain)",
                    Core::list()
                )
            })?),
            (None, true) => Some(Target::CortexMDsp),
            (None, false) => None,
        })
    }

    /// The core of plan `index` of `program`: the one `--core` names, else the one its
    /// CMSIS-NN path stands for (a program says only its path: [`Core::standing_for`]), with
    /// whether the user named it.
    pub fn core(&self, program: &Program, index: usize) -> Result<(Core, bool)> {
        if let Some(name) = &self.target {
            if let Some(core) = Core::parse(name) {
                return Ok((core, true));
            }
        }
        let device = self.device(program, index)?;
        Ok((Core::standing_for(device.target), false))
    }
}

/// What `run` executes: a program or a stage of an ETRecord.
#[derive(Debug, Clone)]
pub enum RunSource {
    Program(PathBuf),
    Stage(PathBuf, String),
}

impl RunSource {
    /// `SOURCE` (`FILE.pte` or `FILE.etrecord#STAGE`) or `--pte FILE`.
    pub fn parse(source: Option<&str>, pte: Option<&Path>) -> RunSource {
        match (source, pte) {
            (_, Some(p)) => RunSource::Program(p.to_path_buf()),
            (Some(s), None) => match s.split_once('#') {
                Some((file, stage)) => RunSource::Stage(file.into(), stage.into()),
                None => RunSource::Program(s.into()),
            },
            (None, None) => RunSource::Program(PathBuf::new()),
        }
    }

    fn label(&self) -> String {
        match self {
            RunSource::Program(p) => p.display().to_string(),
            RunSource::Stage(p, s) => format!("{}#{s}", p.display()),
        }
    }
}

/// Prepares plan `index` of `program` for the chosen device (the program's own target where
/// none is chosen) within a preparation budget of `max_bytes`.
fn prepare_within(
    program: &Program,
    index: usize,
    choice: &DeviceChoice,
    max_bytes: u64,
) -> Result<Runtime> {
    let device = choice.device(program, index)?;
    let mut runtime = Runtime::with_budget(program, index, device.target, max_bytes)?;
    runtime.set_device_versions(&device);
    Ok(runtime)
}

/// How `run` runs, as the user chose.
pub struct RunChoices {
    pub device: DeviceChoice,
    pub in_arenas: bool,
    /// The preparation budget (`--max-memory`).
    pub max_bytes: u64,
    /// Calls of the method in a row, memory carried over (`--calls`).
    pub calls: u32,
}

/// The prepared runtime of `source` and the static device notes of a program.
fn prepare_source(
    source: &RunSource,
    method: Option<&str>,
    choice: &DeviceChoice,
    max_bytes: u64,
) -> Result<(
    Runtime,
    Vec<etscope_core::analysis::device_notes::DeviceNote>,
)> {
    match source {
        RunSource::Program(pte) => {
            let program = load::program(pte)?;
            let index = super::pick_plan(&program, method, pte)?;
            let runtime = prepare_within(&program, index, choice, max_bytes)
                .with_context(|| pte.display().to_string())?;
            let notes =
                etscope_core::analysis::device_notes::notes(&program, index, runtime.device());
            Ok((runtime, notes))
        }
        RunSource::Stage(file, name) => {
            let rec = load::etrecord(file)?;
            let label = source.label();
            let stage = rec.stage(name).ok_or_else(|| {
                let names: Vec<String> = rec
                    .stages
                    .iter()
                    .map(|s| etscope_core::formats::etrecord::stage_short_name(&s.name))
                    .collect();
                anyhow!("{label}: no stage {name:?}; stages: {}", names.join(", "))
            })?;
            let weights = rec.stage_weights(stage).with_context(|| label.clone())?;
            let stage_method = stage.name.split('/').nth(1).unwrap_or("forward");
            let device = choice.device_for_stage()?;
            let runtime = Runtime::for_stage(&stage.graph, name, stage_method, &weights, device)
                .with_context(|| label.clone())?;
            Ok((runtime, Vec::new()))
        }
    }
}

pub fn run(
    source: &RunSource,
    inputs: &[PathBuf],
    dump: Option<&Path>,
    method: Option<&str>,
    choices: &RunChoices,
    as_json: bool,
) -> Result<()> {
    let label = source.label();
    let in_arenas = choices.in_arenas;
    let (runtime, notes) = prepare_source(source, method, &choices.device, choices.max_bytes)?;
    if !as_json {
        for n in &notes {
            let what = if n.kind == "device" {
                "computes differently on the board"
            } else {
                "does not compute what the model means"
            };
            eprintln!(
                "note: instruction {} ({}) {what}: {}",
                n.instruction, n.op, n.why
            );
        }
    }
    let tensors = inputs
        .iter()
        .map(|p| {
            etscope_core::formats::npy::read_npy(&load::bytes(p)?)
                .with_context(|| p.display().to_string())
        })
        .collect::<Result<Vec<_>>>()?;
    let options = RunOptions {
        capture: dump.is_some(),
        in_arenas,
        ..RunOptions::default()
    };
    let calls = vec![tensors; choices.calls.max(1) as usize];
    let result = runtime
        .run_calls(&calls, options)
        .with_context(|| label.clone())?
        .pop()
        .ok_or_else(|| anyhow!("{label}: no call ran"))?;
    if let Some(dir) = dump {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
        let write = |name: String, t: &etscope_core::tensor::TensorData| -> Result<()> {
            let p = dir.join(name);
            std::fs::write(&p, etscope_core::formats::npy::write_npy(t)?)
                .with_context(|| format!("{}: cannot write", p.display()))
        };
        for (k, o) in result.outputs.iter().enumerate() {
            write(format!("output_{k}.npy"), &o.to_data())?;
        }
        for c in &result.captured {
            for (j, t) in c.tensors.iter().enumerate() {
                let stem = match c.instruction_id {
                    Some(i) => format!("instr_{i}"),
                    None => format!("node_{}", c.node),
                };
                let name = if c.tensors.len() == 1 {
                    format!("{stem}.npy")
                } else {
                    format!("{stem}_{j}.npy")
                };
                write(name, &t.to_data())?;
            }
        }
    }
    let rows: Vec<serde_json::Value> = result
        .outputs
        .iter()
        .enumerate()
        .map(|(k, o)| {
            let d = o.to_data();
            match result.texts.get(k).cloned().flatten() {
                // a string the method returns (a training program's parameter names)
                Some(text) => json!({"output": k, "dtype": "str", "shape": [], "text": text}),
                None => json!({"output": k, "dtype": d.dtype.short_name(), "shape": d.shape, "stats": d.stats().ok()}),
            }
        })
        .collect();
    if as_json {
        return super::print_json(&json!({
            "outputs": rows,
            "instructions": result.captured.len(),
            "calls": choices.calls.max(1),
            "device": format!("{:?}", runtime.device()),
            "device_notes": notes,
        }));
    }
    let mut t = Table::new(&[">output", "dtype", "shape", ">min", ">max", ">mean"]);
    for r in &rows {
        let s = &r["stats"];
        let num = |k: &str| s[k].as_f64().map(|x| format!("{x:.6}")).unwrap_or_default();
        if let Some(text) = r["text"].as_str() {
            t.row(vec![
                r["output"].to_string(),
                "str".into(),
                format!("{text:?}"),
                String::new(),
                String::new(),
                String::new(),
            ]);
            continue;
        }
        t.row(vec![
            r["output"].to_string(),
            r["dtype"].as_str().unwrap_or("").into(),
            r["shape"].to_string(),
            num("min"),
            num("max"),
            num("mean"),
        ]);
    }
    print!("{}", t.render());
    if let Some(dir) = dump {
        println!(
            "wrote outputs and {} instructions' tensors to {}",
            result.captured.len(),
            dir.display()
        );
    }
    Ok(())
}

/// `etscope run`'s arguments.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// A `.pte` program, or `FILE.etrecord#STAGE`: a lowering stage, run exactly as a
    /// program is.
    #[arg(required_unless_present = "pte")]
    pub source: Option<String>,
    /// The program (the same as SOURCE).
    #[arg(long, conflicts_with = "source")]
    pub pte: Option<std::path::PathBuf>,
    /// One `.npy` per program input, in order.
    #[arg(long = "input")]
    pub inputs: Vec<std::path::PathBuf>,
    /// Write `output_<k>.npy` and every node's out tensors (`instr_<id>.npy` for a program's
    /// instructions, `node_<id>.npy` for a stage's nodes) here.
    #[arg(long)]
    pub dump: Option<std::path::PathBuf>,
    /// The method to run, by name (default: `forward`, else the program's first method).
    #[arg(long)]
    pub method: Option<String>,
    #[command(flatten)]
    pub device: DeviceChoice,
    /// Execute inside the program's memory plan (one buffer per arena at the planned
    /// offsets), so a bad plan shows up as corrupted values.
    #[arg(long)]
    pub in_arenas: bool,
    /// The most host memory the program's tensors may take together, in MiB (a guard
    /// against corrupted sizes; raise it for a large program on a large machine).
    #[arg(long, value_name = "MIB", default_value_t = 512)]
    pub max_memory: u64,
    /// Call the method N times with the same inputs, each call starting from the memory the
    /// last one left (as ExecuTorch's runtime executes a loaded method: a program's state —
    /// a mutable buffer, a KV cache — carries over); the last call's outputs are shown and
    /// written.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub calls: u32,
    #[arg(long)]
    pub json: bool,
}

/// Runs `etscope run` with its arguments.
pub fn main(args: RunArgs) -> Result<()> {
    let RunArgs {
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
    } = args;
    run(
        &RunSource::parse(source.as_deref(), pte.as_deref()),
        &inputs,
        dump.as_deref(),
        method.as_deref(),
        &RunChoices {
            device,
            in_arenas,
            max_bytes: max_memory.saturating_mul(1 << 20),
            calls,
        },
        json,
    )
}

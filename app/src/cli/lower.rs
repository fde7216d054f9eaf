//! `etscope lower FILE.etrecord`: etscope's own Cortex-M lowering of the ETRecord's `edge`
//! stage, pass by pass (ExecuTorch 1.5.1's pass list for the flow, computed for the target):
//! a table of the passes, or every pass's graph as JSON (`{"passes": [{"name", "graph"}]}`,
//! each graph in `graph --json`'s schema).

use std::path::Path;

use anyhow::{anyhow, Result};
use etscope_core::lower::compare::{changes, differences, Side};
use etscope_core::lower::{self, Core, Flow, Module, Options};

use crate::load;
use crate::table::Table;

/// The lowering's options from the command line's words.
pub fn options(flow: &str, target: &str) -> Result<Options> {
    let flow = Flow::parse(flow)
        .ok_or_else(|| anyhow!("unknown flow {flow:?}: use default or explicit"))?;
    let core = Core::parse(target)
        .ok_or_else(|| anyhow!("unknown core {target:?}: use one of {}", Core::list()))?;
    Ok(Options { flow, core })
}

#[derive(serde::Serialize)]
struct PassJson<'a> {
    name: &'a str,
    changed: bool,
    graph: &'a etscope_core::ir::Graph,
}

#[derive(serde::Serialize)]
struct LowerJson<'a> {
    flow: &'a str,
    target: &'a str,
    passes: Vec<PassJson<'a>>,
}

/// What to produce besides the table.
pub struct Outputs<'a> {
    /// Write the lowered program here.
    pub out: Option<&'a Path>,
    /// Run every stage and name the pass that changes the numbers.
    pub numerics: bool,
    /// Inputs for that (.npy); the ETRecord's representative inputs when empty.
    pub inputs: &'a [std::path::PathBuf],
    /// Modules whose weighted layers stay in float (a mixed program).
    pub keep_float: &'a [String],
    /// The inputs passed as int8 (ExecuTorch's `QuantizeInputs` first).
    pub quantize_inputs: bool,
    /// The outputs returned as int8 (ExecuTorch's `QuantizeOutputs` first).
    pub quantize_outputs: bool,
}

pub fn run(
    path: &Path,
    options: Options,
    outputs: &Outputs,
    method: Option<&str>,
    as_json: bool,
) -> Result<()> {
    let out = outputs.out;
    let etr = load::etrecord(path)?;
    let mut module =
        Module::from_etrecord(&etr, method).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    if !outputs.keep_float.is_empty() {
        module =
            etscope_core::lower::keep_float::keep_float(module, outputs.keep_float, options.flow)
                .map_err(|e| anyhow!("{}: {e}", path.display()))?;
    }
    if outputs.quantize_inputs {
        let (quantized, how) = etscope_core::lower::quantize_io::quantize_inputs(module)
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        module = quantized;
        // what the application must do to each input, which the program no longer does
        for q in &how {
            eprintln!(
                "input {}: int8, quantized by the application as clamp(round(x / {}) + {}, {}, {})",
                q.index, q.scale, q.zero_point, q.quant_min, q.quant_max
            );
        }
    }
    if outputs.quantize_outputs {
        let (quantized, how) = etscope_core::lower::quantize_io::quantize_outputs(module)
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        module = quantized;
        for q in &how {
            eprintln!(
                "output {}: int8 in [{}, {}], dequantized by the application as (q - {}) · {}",
                q.index, q.quant_min, q.quant_max, q.zero_point, q.scale
            );
        }
    }
    let quantize_io = outputs.quantize_inputs || outputs.quantize_outputs;
    let edge_module = outputs.numerics.then(|| module.clone());
    let edge = module.graph.clone();
    let stages = lower::lower(module, &options).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    if let Some(out) = out {
        let last = &stages.last().ok_or_else(|| anyhow!("no passes"))?.module;
        let bytes = etscope_core::lower::emit::program(last, &options).map_err(|e| {
            let why = if outputs.quantize_inputs && options.flow == lower::Flow::Default {
                " (ExecuTorch's own QuantizeInputs writes this program too, and its Cortex-M convolution refuses it the same way: the int8 input is declared contiguous; the explicit-layout flow takes int8 inputs)"
            } else {
                ""
            };
            anyhow!("{}: writing the program: {e}{why}", path.display())
        })?;
        if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| anyhow!("{}: {e}", dir.display()))?;
        }
        std::fs::write(out, bytes).map_err(|e| anyhow!("{}: {e}", out.display()))?;
        if !as_json {
            println!("wrote {}", out.display());
        }
    }
    if as_json {
        return super::print_json(&LowerJson {
            flow: options.flow.name(),
            target: options.core.key(),
            passes: stages
                .iter()
                .map(|s| PassJson {
                    name: s.pass,
                    changed: s.changed,
                    graph: &s.module.graph,
                })
                .collect(),
        });
    }
    println!(
        "{}: the edge graph ({} ops) lowered for {} ({:?} CMSIS-NN path), {} flow",
        path.display(),
        edge.op_count(),
        options.core.key(),
        options.core.isa(),
        options.flow.name()
    );
    let mut t = Table::new(&[">#", "pass", ">ops before", ">ops after", "what changed"]);
    let mut before = &edge;
    for (k, s) in stages.iter().enumerate() {
        t.row(vec![
            (k + 1).to_string(),
            s.pass.to_string(),
            s.ops_before.to_string(),
            s.ops_after.to_string(),
            changes(before, &s.module.graph).summary(),
        ]);
        before = &s.module.graph;
    }
    print!("{}", t.render());
    if let Some(edge_module) = edge_module {
        numerics(path, &etr, &edge_module, &stages, options, outputs.inputs)?;
    }
    // the ETRecord's own result of these passes, when it has one: of the program as quantized,
    // so a mixed program (layers kept in float) is not set against it
    if quantize_io {
        println!(
            "inputs or outputs passed as int8: not compared with the ETRecord's edge_after_transform (ExecuTorch's lowering of the program as it takes and returns floats)"
        );
    } else if !outputs.keep_float.is_empty() {
        println!(
            "layers kept in float ({}): a mixed program, not compared with the ETRecord's edge_after_transform (ExecuTorch's lowering of the program as quantized)",
            outputs.keep_float.join(", ")
        );
    } else if let (Some(theirs), Some(last)) = (
        etr.stage("edge_after_transform"),
        stages.last().map(|s| &s.module),
    ) {
        let graph = etscope_core::ir::from_export::graph_from_export(
            &theirs.graph,
            "edge_after_transform",
            "forward",
        );
        let weights = etr.stage_weights(theirs).unwrap_or_default();
        let constant = |v: usize| {
            let name = &graph.values.get(v)?.name;
            let key = theirs.graph.input_targets.get(name).unwrap_or(name);
            weights.get(key).cloned()
        };
        let ours = |v: usize| last.constants.get(&v).cloned();
        let diffs = differences(
            &Side {
                graph: &last.graph,
                constant: &ours,
            },
            &Side {
                graph: &graph,
                constant: &constant,
            },
        );
        if diffs.is_empty() {
            println!(
                "equals the ETRecord's edge_after_transform (ExecuTorch's own lowering): the same {} calls, arguments and constants",
                last.graph.op_count()
            );
        } else {
            println!(
                "differs from the ETRecord's edge_after_transform in {} places (was it lowered for another target or flow?):",
                diffs.len()
            );
            for d in diffs.iter().take(3) {
                println!("  {d}");
            }
            if diffs.len() > 3 {
                println!(
                    "  … ({} more; `--json` has every pass's graph)",
                    diffs.len() - 3
                );
            }
        }
    }
    Ok(())
}

/// Runs the edge graph and every pass stage, and says which pass changes the outputs.
fn numerics(
    path: &Path,
    etr: &etscope_core::formats::etrecord::ETRecord,
    edge: &Module,
    stages: &[lower::LoweredStage],
    options: Options,
    inputs: &[std::path::PathBuf],
) -> Result<()> {
    let inputs = if inputs.is_empty() {
        let rep = etr
            .representative_inputs()
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        if rep.is_empty() {
            return Err(anyhow!(
                "{}: the ETRecord holds no representative input: give one with --input FILE.npy",
                path.display()
            ));
        }
        rep
    } else {
        inputs
            .iter()
            .map(|p| {
                etscope_core::formats::npy::read_npy(&load::bytes(p)?)
                    .map_err(|e| anyhow!("{}: {e}", p.display()))
            })
            .collect::<Result<Vec<_>>>()?
    };
    let device = lower::device_for(options.core);
    let a = lower::execute::attribute(edge, stages, &inputs, device)
        .map_err(|e| anyhow!("{}: running the edge graph: {e}", path.display()))?;
    println!("numerics (each stage node by node against the stage before it):");
    let describe = |n: &lower::execute::Numerics| {
        use lower::execute::Numerics::*;
        match n {
            Unchanged => "the pass changed nothing".to_string(),
            Equal => "every node equal (to float32 rounding)".to_string(),
            Within { snr_db, node } => {
                format!("within the diff's rule; lowest SNR {snr_db:.1} dB at {node}")
            }
            Diverges { snr_db, node } => format!("diverges at {node}: SNR {snr_db:.1} dB"),
            Failed(e) => format!("not compared: {e}"),
        }
    };
    for (pass, n) in &a.per_pass {
        println!("  {pass:<32} {}", describe(n));
    }
    match &a.first_change {
        Some((pass, n)) => println!(
            "first pass that changes the numbers: {pass} ({})",
            describe(n)
        ),
        None => println!("no pass changes the numbers"),
    }
    Ok(())
}

/// `etscope lower`'s arguments.
#[derive(Debug, clap::Args)]
pub struct LowerArgs {
    pub file: std::path::PathBuf,
    /// `default` (NCHW tensors stored channels-last) or `explicit` (`_nhwc` operators).
    #[arg(long, default_value = "default")]
    pub flow: String,
    /// The core: m55, m85 (Helium), m4, m7, m33, m35p (DSP), m0, m0plus, m3, m23 (plain C);
    /// any spelling (`cortex-m55`, `M0+`). `--target` is the same.
    #[arg(long = "core", visible_alias = "target", default_value = "m55")]
    pub target: String,
    /// The method (`forward` when omitted).
    #[arg(long)]
    pub method: Option<String>,
    /// Every pass's graph as JSON: {"passes": [{"name", "changed", "graph"}]}.
    #[arg(long)]
    pub json: bool,
    /// Write the lowered program (.pte) here.
    #[arg(short = 'o', long = "out")]
    pub out: Option<std::path::PathBuf>,
    /// Run the edge graph and every pass stage on an input and name the first pass that
    /// changes the outputs (the input: `--input`, else the ETRecord's representative one).
    #[arg(long)]
    pub numerics: bool,
    /// The input for `--numerics` (.npy; repeat for several inputs).
    #[arg(long)]
    pub input: Vec<std::path::PathBuf>,
    /// Keep these modules' weighted layers in float (comma-separated module paths, as
    /// `eval` names its groups): a mixed program.
    #[arg(long, value_delimiter = ',')]
    pub keep_float: Vec<String>,
    /// The program takes its inputs (`inputs`, the default), returns its outputs
    /// (`outputs`) or both (`both`) as int8: ExecuTorch's `QuantizeInputs` /
    /// `QuantizeOutputs` before the Cortex-M passes (the application quantizes and
    /// dequantizes; every input must be read by a quantize, every output made by a
    /// dequantize).
    #[arg(long, value_name = "inputs|outputs|both", num_args = 0..=1, default_missing_value = "inputs", value_parser = ["inputs", "outputs", "both"])]
    pub quantize_io: Option<String>,
}

/// Runs `etscope lower` with its arguments.
pub fn main(args: LowerArgs) -> Result<()> {
    let LowerArgs {
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
    } = args;
    run(
        &file,
        options(&flow, &target)?,
        &Outputs {
            out: out.as_deref(),
            numerics: numerics || !input.is_empty(),
            inputs: &input,
            keep_float: &keep_float,
            quantize_inputs: matches!(quantize_io.as_deref(), Some("inputs" | "both")),
            quantize_outputs: matches!(quantize_io.as_deref(), Some("outputs" | "both")),
        },
        method.as_deref(),
        json,
    )
}

//! The sensitivity sweep's variants: B's edge graph with weighted layers kept in float
//! (`etscope_core::lower::keep_float`), each lowered as B was, run over the data against A's
//! outputs (computed once), and priced in arena and flash bytes and estimated cycles. `eval
//! --sensitivity` and the window's Diff ▸ over a dataset both run [`variants`].

use etscope_core::analysis::cost::program_cycles;
use etscope_core::analysis::diff_sources::PreparedSource;
use etscope_core::analysis::eval::Evaluation;
use etscope_core::cortex_m::Core;
use etscope_core::formats::pte::Program;
use etscope_core::lower::{self, Module, Options};
use etscope_core::runtime::Device;
use etscope_core::tensor::TensorData;
use serde::Serialize;

use crate::eval_runner::{evaluate_outputs, Data};

/// Which variants the sweep runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    Off,
    /// Each weighted layer in float alone.
    FloatOnly,
    /// Those, and each layer alone quantized (every other in float).
    All,
}

/// Why the sweep has no int16 variant: the backend has no 16-bit weighted layer to offer.
pub const NO_INT16: &str = "no int16 variants: ExecuTorch 1.5.1's Cortex-M backend computes 16-bit activations only in quantized_div; its convolutions, depthwise convolutions, linears and batch matmuls are int8 (tests/fixtures/ops)";

/// One row of the sensitivity table (`docs/cli-json.md`).
#[derive(Debug, Clone, Serialize)]
pub struct Variant {
    /// What `lower --keep-float` takes.
    pub group: String,
    pub module: String,
    /// `float` (the layer kept in float), `only_quantized` (every other weighted layer kept in
    /// float), or `as_shipped` (B itself, the baseline).
    pub variant: &'static str,
    pub b_accuracy: Option<f64>,
    pub top1_agreement: Option<f64>,
    pub snr_db_mean: Option<f64>,
    /// Planned memory of the variant's arenas.
    pub arena_bytes: Option<u64>,
    /// The variant program's size.
    pub flash_bytes: Option<u64>,
    /// Its estimated cycles per inference on `cycles_core` (the core B was lowered for;
    /// docs/cost-model.md): what a float fallback costs in time.
    pub cycles: Option<f64>,
    pub cycles_core: Option<&'static str>,
    /// Whether `cycles_core` was assumed from B's CMSIS-NN path (`--core` names none, and a
    /// program says only its path: [`Core::standing_for`]).
    pub cycles_core_assumed: bool,
    /// Why the variant has no numbers, when it has none.
    pub error: Option<String>,
}

/// A and the data every variant is set against.
pub struct Sides<'a> {
    pub a: &'a str,
    pub b: &'a str,
    pub side_a: &'a PreparedSource,
    /// A's outputs on every sample of the data's slice, in order.
    pub a_outputs: &'a [Vec<TensorData>],
    pub data: &'a Data<'a>,
}

/// B as shipped, the sweep's baseline row.
pub struct Shipped<'a> {
    pub program: &'a Program,
    pub evaluation: &'a Evaluation,
}

/// `edge` (B's edge module) with each weighted layer kept in float in turn (and, with
/// [`Sweep::All`], each alone quantized), lowered with `options`, run over the data against A:
/// the shipped row first (when given), then the float variants, the most recovered first,
/// failures with their reason, then the only-quantized ones. `assumed` says the core of
/// `options` was assumed from B's CMSIS-NN path; `device` is what each variant runs as.
pub fn variants(
    sides: &Sides<'_>,
    edge: &Module,
    options: &Options,
    assumed: bool,
    which: Sweep,
    shipped: Option<Shipped<'_>>,
    device: &dyn Fn(&Program) -> Result<Device, String>,
) -> Vec<Variant> {
    let groups = lower::keep_float::weighted_modules(edge);
    let core = Some(options.core)
        .filter(|c| c.timing().is_some())
        .map(|c| (c, assumed));
    let mut rows: Vec<Variant> = shipped
        .map(|s| row("", "as_shipped", s.evaluation, s.program, core))
        .into_iter()
        .collect();
    let first = rows.len();
    let plan: Vec<(String, &'static str, Vec<String>)> = groups
        .iter()
        .map(|g| (g.clone(), "float", vec![g.clone()]))
        .chain(
            groups
                .iter()
                .filter(|_| groups.len() > 1 && which == Sweep::All)
                .map(|g| {
                    let others: Vec<String> = groups.iter().filter(|o| *o != g).cloned().collect();
                    (g.clone(), "only_quantized", others)
                }),
        )
        .collect();
    for (g, variant, kept) in plan {
        let made = lower::keep_float::mixed_program(edge, &kept, options)
            .map_err(|e| e.to_string())
            .and_then(|bytes| Program::parse(bytes).map_err(|e| e.to_string()));
        let label = format!("{} with {} in float", sides.b, kept.join(","));
        let result = made.and_then(|p| {
            let side = PreparedSource::program(&label, &p, None, Some(device(&p)?))
                .map_err(|e| e.to_string())?;
            let eval = evaluate_outputs(
                sides.a,
                &label,
                sides.side_a,
                sides.a_outputs,
                &side,
                sides.data,
            )
            .map_err(|e| format!("{e:#}"))?;
            Ok(row(&g, variant, &eval, &p, core))
        });
        rows.push(result.unwrap_or_else(|error| Variant {
            group: g.clone(),
            module: g.clone(),
            variant,
            b_accuracy: None,
            top1_agreement: None,
            snr_db_mean: None,
            arena_bytes: None,
            flash_bytes: None,
            cycles: None,
            cycles_core: None,
            cycles_core_assumed: false,
            error: Some(error),
        }));
    }
    let key = |v: &Variant| {
        v.b_accuracy
            .or(v.top1_agreement)
            .unwrap_or(f64::NEG_INFINITY)
    };
    // the float variants, the most recovered first (accuracy with labels, else agreement with
    // A), failures last; then the only-quantized ones, the least harmful first
    rows[first..].sort_by(|x, y| {
        (x.variant != "float")
            .cmp(&(y.variant != "float"))
            .then(key(y).total_cmp(&key(x)))
    });
    rows
}

fn row(
    group: &str,
    variant: &'static str,
    eval: &Evaluation,
    program: &Program,
    core: Option<(Core, bool)>,
) -> Variant {
    let s = eval.summary();
    let out = s.outputs.first();
    Variant {
        group: group.to_string(),
        module: group.to_string(),
        variant,
        b_accuracy: out.and_then(|o| o.b_accuracy),
        top1_agreement: out.and_then(|o| o.top1_agreement),
        snr_db_mean: out.and_then(|o| o.snr_db_mean),
        arena_bytes: program.planned_bytes(program.default_plan_index()),
        flash_bytes: Some(program.bytes().len() as u64),
        cycles: core.and_then(|(c, _)| program_cycles(program, c)),
        cycles_core: core.map(|(c, _)| c.key()),
        cycles_core_assumed: core.is_some_and(|(_, assumed)| assumed),
        error: None,
    }
}

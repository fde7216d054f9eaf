//! The operator registry: every operator etscope knows is declared once, in `table`, with
//! its qualified name and overloads, its argument schema, category, traits, host kernel, the
//! emulated board's support and a device note. Names are looked up once, when a graph is built
//! ([`OpId`]); dispatch, categories, device notes, fault injection, board support and the
//! viewer read the entry, never the name.
//!
//! An entry is one operator with its functional overloads and the out variants ExecuTorch
//! programs call (`aten::add` covers `Tensor`, `Scalar`, `out` and `Scalar_out`). A node whose
//! overload is one of [`OpDef::out_overloads`] is in the kernel's form: inputs, out tensors,
//! then the returned value, exactly the argument list a `.pte` kernel call carries.

mod cost_model;
mod schema;
mod table;

pub use cost_model::CostModel;
pub use schema::{ArgSpec, ArgType, Default as ArgDefault, Schema};

use crate::kernels::KernelFn;

/// A registry entry's index: what a graph node refers to once its name has been looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct OpId(u16);

impl OpId {
    /// The entry's index in [`all`].
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// What kind of work an operator does (graph colours, profile rollups).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Convolution,
    Linear,
    Pooling,
    Elementwise,
    Activation,
    Normalization,
    Quantize,
    DataMovement,
    Delegate,
    Io,
    Other,
}

/// Properties passes, planners and analyses rely on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Traits {
    /// Each output element depends on the inputs' elements at the same (broadcast) index.
    pub elementwise: bool,
    /// Moves or reinterprets data without arithmetic (copies, views, permutes, pads).
    pub data_movement: bool,
    /// The output keeps the input's quantization parameters (no requantization).
    pub quant_preserving: bool,
    /// The device kernel may write its output over its first input (an element is read before
    /// the element at the same index is written).
    pub in_place_safe: bool,
    /// Carries learned weights (argument 1): what fault injection breaks.
    pub weighted: bool,
    /// Computes on real values: fed integer codes, it computes on the integers, not on the
    /// values they stand for.
    pub float_only: bool,
    /// An activation a quantized flow is expected to fuse into the op before it or tabulate.
    pub fusable_activation: bool,
    /// Quantizes per tensor (float → integer codes with a scale and zero point in arguments 1
    /// and 2).
    pub quantizes: bool,
    /// Dequantizes per tensor (integer codes → float; scale and zero point in arguments 1, 2).
    pub dequantizes: bool,
}

/// The emulated board firmware's kernel for an operator: the code a board image stores for it
/// and the name `board/firmware/opcodes.h` gives that code (`OP_<symbol>`). The header is
/// generated from this table (`crate::board_image::opcodes_header`); several operators may
/// share one kernel (every copy), and then share its code and symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardKernel {
    pub code: u32,
    pub symbol: &'static str,
    pub family: BoardFamily,
}

/// Which part of the firmware computes an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoardFamily {
    /// Integer kernels (`board/firmware/integer.c` over `kernels.c`: the
    /// Cortex-M backend's in CMSIS-NN arithmetic, and the copies and clamps its programs keep on
    /// int8/int16 codes); each checks its own dtypes.
    Integer,
    /// The dtype-generic portable kernels (`board/firmware/portable*.c`), which compute every
    /// ExecuTorch dtype but the half types.
    Portable,
}

/// One operator.
#[derive(Debug)]
pub struct OpDef {
    /// `namespace::name`: `aten::convolution`, `cortex_m::quantized_add`.
    pub name: &'static str,
    /// Every overload this entry covers; the functional ones first.
    pub overloads: &'static [&'static str],
    /// The overloads in the kernel's form (out variants; ExecuTorch's prim ops write their
    /// out argument in their `default` overload).
    pub out_overloads: &'static [&'static str],
    /// The functional argument schema (TorchScript syntax, without the name), where known.
    pub schema: Option<&'static str>,
    pub category: Category,
    pub traits: Traits,
    /// The host kernel (every dtype and core it accepts is its own business: it reads the
    /// tensors' dtypes and the device from its context).
    pub kernel: Option<KernelFn>,
    /// The emulated board firmware's kernel for this operator, where the firmware has one.
    pub board: Option<BoardKernel>,
    /// Why the device computes something else at a call of this operator, where it can
    /// (ExecuTorch's kernel misreads a layout, a CMSIS-NN defect, a core's missing buffer).
    pub device_note: Option<crate::kernels::cmsis::notes::NoteFn>,
    /// How the output's dims relate to the model's (the logical layout the op writes).
    pub layout: LayoutRule,
    /// What the output's dtype follows from, as PyTorch's trace computes it (what a retrace
    /// after a pass gives the output once its inputs' dtypes changed).
    pub output_dtype: OutputDtype,
    /// How ExecuTorch 1.5.1's Cortex-M passes treat the operator.
    pub cortex_m: CortexMRules,
    /// The kernel that computes a call of this operator when it has none of its own (`conv2d`
    /// is a `convolution.out`, every view a `view_copy.out`), and how its arguments map.
    pub computed_by: Option<&'static KernelForm>,
    /// How the cost model prices a call (`analysis::cost`).
    pub cost: CostModel,
}

/// Another operator's out variant that computes a call, with its arguments built from the
/// call's.
#[derive(Debug)]
pub struct KernelForm {
    /// The operator whose `out` overload is called.
    pub op: &'static str,
    pub args: &'static [FormArg],
}

/// One argument of a [`KernelForm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormArg {
    /// The call's schema argument `k` (its schema default where the call leaves it out).
    Arg(usize),
    /// The call's first argument as given.
    First,
    /// `False`.
    False,
    /// `[0, 0]`.
    ZeroPair,
    /// The sizes of the call's output.
    OutputSizes,
}

/// The rules ExecuTorch 1.5.1's Cortex-M passes keep as operator tables, kept with the
/// operators (a pass asks the registry instead of naming a list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CortexMRules {
    /// `ActivationFusionPass` folds it into the output range of the quantized op before it.
    pub fused_activation: bool,
    /// `ActivationFusionPass` folds an activation after it into its output range.
    pub takes_fused_activation: bool,
    /// `QuantizedClampActivationPass` makes it, on int8 tensors, a clamp with quantized bounds.
    pub int8_clamp: bool,
    /// How `CortexMQuantizer` annotates it (by edge-dialect name, every overload).
    pub quantizer: QuantizerRole,
    /// `RemovePermutesAroundElementwiseOps` moves a layout permute through it whatever its
    /// arguments (the ops whose permutability depends on an argument are the pass's own
    /// checks; elementwise ops pass by their `elementwise` trait).
    pub permute_transparent: bool,
}

/// What `CortexMQuantizer` (ExecuTorch 1.5.1) does with an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QuantizerRole {
    /// Not annotated.
    #[default]
    None,
    /// In its pattern table (`quantizer_support.py`: convolutions, linear, the binary ops,
    /// softmax, the LUT activations, pools, bmm), subject to its pattern checks.
    Pattern,
    /// In the Arm `SharedQspecQuantizer`'s list (data movement, clamps, comparisons): annotated
    /// only inside a quantized region, sharing its input's parameters.
    SharedQparams,
}

/// What an operator's output dtype follows from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputDtype {
    /// The first tensor operand's dtype.
    FirstInput,
    /// Type promotion over the tensor operands (a linear of int8 activations and an int32 bias
    /// writes int32).
    Promoted,
    /// Not derived from the operands' dtypes: it keeps the dtype it was traced with
    /// (comparisons write bool, argmax int64, embedding its weight's, creation ops their
    /// `dtype`).
    Own,
    /// The value of its `dtype` argument (dtype casts).
    DtypeArgument,
}

/// The logical layout an operator's output has, relative to its input's: what lets a diff
/// compare an explicit-layout program's NHWC tensors with a model's NCHW ones without guessing
/// from shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutRule {
    /// The output's dims are the first input's (same rank), in the same order.
    Keep,
    /// The output is NHWC (`[N, H, W, C]`) of the model's NCHW tensor: the explicit-layout
    /// flow's `_nhwc` operators.
    ChannelsLast,
    /// The output permutes the input's dims by the int list in argument `k`.
    Permute(usize),
    /// A new tensor in its own order (views, reshapes, matrix products).
    Reset,
}

impl OpDef {
    /// Whether `overload` is this operator's kernel form.
    pub fn is_out_overload(&self, overload: &str) -> bool {
        self.out_overloads.contains(&overload)
    }

    /// The functional schema, parsed (`None` where the registry has none).
    pub fn parsed_schema(&self) -> Option<&'static Schema> {
        table::parsed_schema(self)
    }

    /// The position of the argument `name` in a call of this operator: its place in the
    /// schema (an out variant's call has the schema's arguments first, then its outs), read by
    /// name so that no reader counts arguments (`None`: no schema, or no such argument).
    pub fn arg(&self, name: &str) -> Option<usize> {
        self.parsed_schema()?
            .args
            .iter()
            .position(|a| a.name == name)
    }

    /// The operator without its namespace (`convolution`).
    pub fn short_name(&self) -> &'static str {
        self.name.rsplit("::").next().unwrap_or(self.name)
    }
}

/// Every registered operator, indexed by [`OpId::index`].
pub fn all() -> &'static [OpDef] {
    table::OPS
}

/// The entry of `id`.
pub fn def(id: OpId) -> &'static OpDef {
    &table::OPS[id.index()]
}

/// The entry covering `name` (`aten::add`) with `overload` (`Scalar_out`); an empty overload
/// matches the entry's first one.
pub fn lookup(name: &str, overload: &str) -> Option<OpId> {
    let ids = table::by_name().get(name)?;
    ids.iter()
        .copied()
        .find(|&id| overload.is_empty() || def(id).overloads.contains(&overload))
}

/// The position of argument `arg` in a call of operator `name` (any overload), by its schema's
/// name for it ([`OpDef::arg`]).
pub fn arg_of(name: &str, arg: &str) -> Option<usize> {
    def(lookup(name, "")?).arg(arg)
}

/// An operator's name without namespace or overload: `aten::tanh.out`, `cortex_m::pad` and
/// `tanh` are `tanh` and `pad`.
pub fn base_name(qualified: &str) -> &str {
    let name = qualified.rsplit("::").next().unwrap_or(qualified);
    name.split('.').next().unwrap_or(name)
}

/// The entry of a qualified `name.overload` (`aten::add.Scalar_out`, `cortex_m::pad.out`).
pub fn lookup_qualified(qualified: &str) -> Option<OpId> {
    match qualified.rsplit_once('.') {
        Some((name, overload)) if !name.is_empty() => {
            lookup(name, overload).or_else(|| lookup(qualified, ""))
        }
        _ => lookup(qualified, ""),
    }
}

/// The traits of operator `name` whatever its overload (none for an operator etscope does not
/// know).
pub fn traits_of(name: &str) -> Traits {
    lookup(name, "")
        .map(|id| def(id).traits)
        .unwrap_or_default()
}

/// The category of an operator etscope knows, or a guess from the name of one it does not (a
/// delegate, an operator of another backend).
pub fn category_of(name: &str, overload: &str) -> Category {
    match lookup(name, overload) {
        Some(id) => def(id).category,
        None => Category::guess(name),
    }
}

impl Category {
    /// The category an unregistered operator's name suggests.
    pub fn guess(op: &str) -> Category {
        let short = op.rsplit("::").next().unwrap_or(op).to_ascii_lowercase();
        let s = short.as_str();
        let has = |words: &[&str]| words.iter().any(|w| s.contains(w));
        if op.starts_with("delegate::") || s.contains("call_delegate") {
            Category::Delegate
        } else if op == "input" || op == "output" {
            Category::Io
        } else if has(&["quantize", "dequantize"]) && !has(&["quantized_"]) {
            Category::Quantize
        } else if has(&["conv"]) {
            Category::Convolution
        } else if has(&["linear", "mm", "matmul", "fully_connected"]) {
            Category::Linear
        } else if has(&["pool"]) {
            Category::Pooling
        } else if has(&[
            "relu",
            "sigmoid",
            "tanh",
            "gelu",
            "silu",
            "hardswish",
            "softmax",
            "activation",
            "clamp",
            "elu",
        ]) {
            Category::Activation
        } else if has(&["norm"]) {
            Category::Normalization
        } else if has(&[
            "add", "sub", "mul", "div", "minimum", "maximum", "neg", "exp", "log", "sqrt", "pow",
            "abs", "where", "eq", "ne", "lt", "gt",
        ]) {
            Category::Elementwise
        } else if has(&[
            "view",
            "reshape",
            "permute",
            "transpose",
            "copy",
            "cat",
            "slice",
            "select",
            "split",
            "squeeze",
            "expand",
            "pad",
            "dim_order",
            "clone",
            "index",
            "gather",
            "flatten",
            "move",
            "alloc",
        ]) {
            Category::DataMovement
        } else {
            Category::Other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_and_overload_resolves_to_its_own_entry() {
        for (i, d) in all().iter().enumerate() {
            for o in d.overloads {
                let id = lookup(d.name, o).expect("registered");
                assert_eq!(id.index(), i, "{}.{o} resolves to another entry", d.name);
            }
            for o in d.out_overloads {
                assert!(d.overloads.contains(o), "{}: out overload {o}", d.name);
            }
            if let Some(s) = d.schema {
                assert!(d.parsed_schema().is_some(), "{}: schema {s:?}", d.name);
            }
        }
    }

    /// The cost column: a Cortex-M backend operator is priced by the CMSIS-NN path its kernel
    /// takes, never as portable code; a portable one never by a CMSIS-NN model.
    #[test]
    fn every_cortex_m_operator_has_a_cmsis_nn_cost_model() {
        let mut backend = 0;
        for d in all() {
            let cortex_m = d.name.starts_with("cortex_m::");
            assert_eq!(
                d.cost.is_cmsis_nn(),
                cortex_m,
                "{}: cost model {:?}",
                d.name,
                d.cost
            );
            backend += usize::from(cortex_m);
        }
        assert!(backend >= 23, "{backend} Cortex-M operators");
    }

    #[test]
    fn qualified_names_resolve_through_their_overload() {
        let add = lookup_qualified("aten::add.Scalar_out").expect("add");
        assert_eq!(def(add).name, "aten::add");
        assert!(def(add).is_out_overload("Scalar_out"));
        assert!(lookup_qualified("aten::add.no_such_overload").is_none());
        assert!(lookup_qualified("etscope::linear").is_none());
        let et_view = lookup_qualified("executorch_prim::et_view.default").expect("et_view");
        assert!(def(et_view).is_out_overload("default"));
    }

    #[test]
    fn schemas_name_their_arguments_and_defaults() {
        let conv = def(lookup("aten::convolution", "out").expect("conv"));
        let s = conv.parsed_schema().expect("schema");
        let names: Vec<&str> = s.args.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "input",
                "weight",
                "bias",
                "stride",
                "padding",
                "dilation",
                "transposed",
                "output_padding",
                "groups"
            ]
        );
        let pool = def(lookup("aten::avg_pool2d", "default").expect("pool"));
        let s = pool.parsed_schema().expect("schema");
        assert_eq!(s.args[4].name, "ceil_mode");
        assert_eq!(s.args[4].default, Some(ArgDefault::Bool(false)));
        assert_eq!(s.args[6].default, Some(ArgDefault::None));
    }
}

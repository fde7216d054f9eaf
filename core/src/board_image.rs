//! The board image: a program's values, kernel calls, constants and memory plan in the flat
//! little-endian form the emulated board's firmware (`board/firmware`) interprets. The firmware
//! works like ExecuTorch's runtime: a value table, instructions naming operators and argument
//! values, planned tensors at their arena offsets. Constants and inputs are copied into the
//! image; intermediate tensors live in arenas the firmware allocates from the plan's sizes.
//!
//! Layout (version 2; every offset is from the image start, every record 4-byte aligned):
//!
//! | offset | field |
//! |---|---|
//! | 0 | magic `ETSB`, u32 version, u32 total length |
//! | 12 | u32 value count, u32 values offset (32-byte [`ValueKind`] records) |
//! | 20 | u32 instruction count, u32 offset (12-byte records: op index, argument count, arguments offset) |
//! | 28 | u32 operator count, u32 offset (u32 [`OpCode`] per operator) |
//! | 36 | u32 arena count, u32 offset (u32 size per arena; arena 0 is ExecuTorch's unused one) |
//! | 44 | u32 input count, u32 offset (12-byte records: value, data offset, byte count) |
//! | 52 | u32 runs, u32 flags (bit 0: send intermediate outputs; bit 1: drop frames when the RTT ring is full; bit 2: stream without computing; bits 16..31: ring size in KiB, 0 = all), u32 target (0 = Helium core, 1 = scalar core) |
//! | 64 | u64 program identity ([`crate::analysis::identity::program_fingerprint`]) |
//! | 72 | u32 total arena bytes, then zero padding to 96 |
//!
//! A value record: u8 kind, u8 scalar type, u8 rank, u8 memory (0 = constant in the image,
//! 1..=254 = arena, 255 = none), u32 offset (tensor data; list: count), then for scalars an
//! i64/f64 at 8, for tensors u32 byte count at 8, u32 sizes offset at 12 (i32 each), u32
//! dim-order offset at 16 (u32 each), u32 element count at 20; for lists (int: i64 items,
//! double: f64 items, tensor: u32 value indices) and strings (bytes) the count at 4 and the items
//! offset at 12.

use thiserror::Error;

use crate::analysis::identity::program_fingerprint;
use crate::formats::pte::{EValue, Instruction, Program};
use crate::tensor::TensorData;

/// Image format version the firmware checks.
pub const BOARD_IMAGE_VERSION: u32 = 2;
const HEADER_BYTES: usize = 96;
const VALUE_BYTES: usize = 32;
/// Largest image (and arena total) the emulated board holds: its DDR window minus firmware use.
pub const MAX_BOARD_BYTES: usize = 256 << 20;

/// Operators the firmware implements, with the code the image stores for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum OpCode {
    Quantize = 1,
    Dequantize = 2,
    ConvNhwc = 3,
    DepthwiseNhwc = 4,
    Conv = 5,
    Depthwise = 6,
    Linear = 7,
    AvgPoolNhwc = 8,
    AvgPool = 9,
    MaxPoolNhwc = 10,
    MaxPool = 11,
    Softmax = 12,
    Transpose = 13,
    Pad = 14,
    CloneDimOrder = 15,
    QuantizedAdd = 16,
    QuantizedMul = 17,
    QuantizedActivation = 18,
    Minimum = 19,
    Maximum = 20,
    QuantizedDiv = 21,
    QuantizedBatchMatmul = 22,
    TransposeConvNhwc = 23,
    TransposeConv = 24,
    Hardtanh = 25,
    // the portable (aten) operators: board/firmware/portable.c
    Add = 26,
    Sub = 27,
    Mul = 28,
    Div = 29,
    AtenMaximum = 30,
    AtenMinimum = 31,
    Relu = 32,
    Sigmoid = 33,
    Tanh = 34,
    Neg = 35,
    Abs = 36,
    Exp = 37,
    Log = 38,
    Sqrt = 39,
    Rsqrt = 40,
    Reciprocal = 41,
    Gelu = 42,
    LeakyRelu = 43,
    Clamp = 44,
    Copy = 45,
    PermuteCopy = 46,
    ExpandCopy = 47,
    SliceCopy = 48,
    SelectCopy = 49,
    TCopy = 50,
    TransposeCopy = 51,
    Cat = 52,
    SplitWithSizesCopy = 53,
    AvgPool2d = 54,
    MaxPool2dWithIndices = 55,
    UpsampleNearest2d = 56,
    UpsampleBilinear2d = 57,
    FloatSoftmax = 58,
    LogSoftmax = 59,
    Mean = 60,
    Sum = 61,
    Amax = 62,
    Addmm = 63,
    Mm = 64,
    Bmm = 65,
    AtenLinear = 66,
    Convolution = 67,
    Embedding = 68,
    LayerNorm = 69,
    Full = 70,
    Eq = 71,
    Ne = 72,
    Lt = 73,
    Le = 74,
    Gt = 75,
    Ge = 76,
    Where = 77,
    Expm1 = 78,
    Log2 = 79,
    Log10 = 80,
    Log1p = 81,
    Sin = 82,
    Cos = 83,
    Tan = 84,
    Asin = 85,
    Acos = 86,
    Atan = 87,
    Sinh = 88,
    Cosh = 89,
    Asinh = 90,
    Acosh = 91,
    Atanh = 92,
    Erf = 93,
    Floor = 94,
    Ceil = 95,
    Round = 96,
    Trunc = 97,
    Sign = 98,
    BitwiseNot = 99,
    Isnan = 100,
    Isinf = 101,
    LogicalNot = 102,
    Atan2 = 103,
    Pow = 104,
    Fmod = 105,
    Remainder = 106,
    LogicalAnd = 107,
    LogicalOr = 108,
    LogicalXor = 109,
    BitwiseAnd = 110,
    BitwiseOr = 111,
    BitwiseXor = 112,
    Amin = 113,
    Argmax = 114,
    Argmin = 115,
    Any = 116,
    AnyAll = 117,
    Prod = 118,
    ProdAll = 119,
    MaxAll = 120,
    MinAll = 121,
    AdaptiveAvgPool2d = 122,
    ConstantPadNd = 123,
    Flip = 124,
    IndexSelect = 125,
    Cumsum = 126,
    VarCorrection = 127,
    VarUnbiased = 128,
    Elu = 129,
    Glu = 130,
    Fill = 131,
    Zeros = 132,
    Ones = 133,
    Arange = 134,
    Repeat = 135,
    Roll = 136,
    Stack = 137,
    Tril = 138,
    UnbindCopy = 139,
    Rsub = 140,
    FloorDivide = 141,
    MeanAll = 142,
    ScalarTensor = 143,
    FillTensor = 144,
    Index = 145,
    IndexPut = 146,
    IndexPutInPlace = 147,
    CopyInPlace = 148,
    CopyOut = 149,
    /// `executorch_prim::et_view`: the view shares its input's storage (the image gives it the
    /// input's place), so the call does nothing.
    EtView = 150,
    Gather = 151,
    Scatter = 152,
    ScatterAdd = 153,
    ScatterValue = 154,
    DiagonalCopy = 155,
    DivMode = 156,
    MaskedFill = 157,
    PixelShuffle = 158,
    PixelUnshuffle = 159,
    ReflectionPad1d = 160,
    ReflectionPad2d = 161,
    ReflectionPad3d = 162,
    ReplicationPad1d = 163,
    ReplicationPad2d = 164,
    ReplicationPad3d = 165,
    MaxDim = 166,
    MinDim = 167,
    VarMean = 168,
    ClampTensor = 169,
    NarrowCopy = 170,
    SelectScatter = 171,
    SliceScatter = 172,
    GroupNorm = 173,
    Logit = 174,
    BitwiseLeftShift = 175,
    BitwiseRightShift = 176,
    PowScalar = 177,
    UnfoldCopy = 178,
    AsStridedCopy = 179,
    Empty = 180,
    Topk = 181,
    Nonzero = 182,
    MaskedSelect = 183,
    RepeatInterleave = 184,
    MaskedScatter = 185,
    CdistForward = 186,
    PdistForward = 187,
    GridSampler2d = 188,
    UpsampleBilinear2dAa = 189,
    SplitCopy = 190,
    BatchNorm = 191,
    QdQuantize = 192,
    QdDequantize = 193,
    QdDequantizePerChannel = 194,
}

impl OpCode {
    /// The firmware's operator for a qualified operator name (`cortex_m::pad.out`), as the
    /// operator registry declares it.
    pub fn of(name: &str) -> Option<OpCode> {
        let id = crate::ops::lookup_qualified(name)?;
        let def = crate::ops::def(id);
        let overload = name.rsplit_once('.').map_or("", |(_, o)| o);
        if !def.is_out_overload(overload) {
            return None;
        }
        OpCode::from_code(def.board?)
    }

    /// The operator of an image code.
    fn from_code(code: u32) -> Option<OpCode> {
        Self::ALL.iter().copied().find(|op| *op as u32 == code)
    }

    /// Every code, in order.
    const ALL: &'static [OpCode] = &[
        OpCode::Quantize,
        OpCode::Dequantize,
        OpCode::ConvNhwc,
        OpCode::DepthwiseNhwc,
        OpCode::Conv,
        OpCode::Depthwise,
        OpCode::Linear,
        OpCode::AvgPoolNhwc,
        OpCode::AvgPool,
        OpCode::MaxPoolNhwc,
        OpCode::MaxPool,
        OpCode::Softmax,
        OpCode::Transpose,
        OpCode::Pad,
        OpCode::CloneDimOrder,
        OpCode::QuantizedAdd,
        OpCode::QuantizedMul,
        OpCode::QuantizedActivation,
        OpCode::Minimum,
        OpCode::Maximum,
        OpCode::QuantizedDiv,
        OpCode::QuantizedBatchMatmul,
        OpCode::TransposeConvNhwc,
        OpCode::TransposeConv,
        OpCode::Hardtanh,
        OpCode::Add,
        OpCode::Sub,
        OpCode::Mul,
        OpCode::Div,
        OpCode::AtenMaximum,
        OpCode::AtenMinimum,
        OpCode::Relu,
        OpCode::Sigmoid,
        OpCode::Tanh,
        OpCode::Neg,
        OpCode::Abs,
        OpCode::Exp,
        OpCode::Log,
        OpCode::Sqrt,
        OpCode::Rsqrt,
        OpCode::Reciprocal,
        OpCode::Gelu,
        OpCode::LeakyRelu,
        OpCode::Clamp,
        OpCode::Copy,
        OpCode::PermuteCopy,
        OpCode::ExpandCopy,
        OpCode::SliceCopy,
        OpCode::SelectCopy,
        OpCode::TCopy,
        OpCode::TransposeCopy,
        OpCode::Cat,
        OpCode::SplitWithSizesCopy,
        OpCode::AvgPool2d,
        OpCode::MaxPool2dWithIndices,
        OpCode::UpsampleNearest2d,
        OpCode::UpsampleBilinear2d,
        OpCode::FloatSoftmax,
        OpCode::LogSoftmax,
        OpCode::Mean,
        OpCode::Sum,
        OpCode::Amax,
        OpCode::Addmm,
        OpCode::Mm,
        OpCode::Bmm,
        OpCode::AtenLinear,
        OpCode::Convolution,
        OpCode::Embedding,
        OpCode::LayerNorm,
        OpCode::Full,
        OpCode::Eq,
        OpCode::Ne,
        OpCode::Lt,
        OpCode::Le,
        OpCode::Gt,
        OpCode::Ge,
        OpCode::Where,
        OpCode::Expm1,
        OpCode::Log2,
        OpCode::Log10,
        OpCode::Log1p,
        OpCode::Sin,
        OpCode::Cos,
        OpCode::Tan,
        OpCode::Asin,
        OpCode::Acos,
        OpCode::Atan,
        OpCode::Sinh,
        OpCode::Cosh,
        OpCode::Asinh,
        OpCode::Acosh,
        OpCode::Atanh,
        OpCode::Erf,
        OpCode::Floor,
        OpCode::Ceil,
        OpCode::Round,
        OpCode::Trunc,
        OpCode::Sign,
        OpCode::BitwiseNot,
        OpCode::Isnan,
        OpCode::Isinf,
        OpCode::LogicalNot,
        OpCode::Atan2,
        OpCode::Pow,
        OpCode::Fmod,
        OpCode::Remainder,
        OpCode::LogicalAnd,
        OpCode::LogicalOr,
        OpCode::LogicalXor,
        OpCode::BitwiseAnd,
        OpCode::BitwiseOr,
        OpCode::BitwiseXor,
        OpCode::Amin,
        OpCode::Argmax,
        OpCode::Argmin,
        OpCode::Any,
        OpCode::AnyAll,
        OpCode::Prod,
        OpCode::ProdAll,
        OpCode::MaxAll,
        OpCode::MinAll,
        OpCode::AdaptiveAvgPool2d,
        OpCode::ConstantPadNd,
        OpCode::Flip,
        OpCode::IndexSelect,
        OpCode::Cumsum,
        OpCode::VarCorrection,
        OpCode::VarUnbiased,
        OpCode::Elu,
        OpCode::Glu,
        OpCode::Fill,
        OpCode::Zeros,
        OpCode::Ones,
        OpCode::Arange,
        OpCode::Repeat,
        OpCode::Roll,
        OpCode::Stack,
        OpCode::Tril,
        OpCode::UnbindCopy,
        OpCode::Rsub,
        OpCode::FloorDivide,
        OpCode::MeanAll,
        OpCode::ScalarTensor,
        OpCode::FillTensor,
        OpCode::Index,
        OpCode::IndexPut,
        OpCode::IndexPutInPlace,
        OpCode::CopyInPlace,
        OpCode::CopyOut,
        OpCode::EtView,
        OpCode::Gather,
        OpCode::Scatter,
        OpCode::ScatterAdd,
        OpCode::ScatterValue,
        OpCode::DiagonalCopy,
        OpCode::DivMode,
        OpCode::MaskedFill,
        OpCode::PixelShuffle,
        OpCode::PixelUnshuffle,
        OpCode::ReflectionPad1d,
        OpCode::ReflectionPad2d,
        OpCode::ReflectionPad3d,
        OpCode::ReplicationPad1d,
        OpCode::ReplicationPad2d,
        OpCode::ReplicationPad3d,
        OpCode::MaxDim,
        OpCode::MinDim,
        OpCode::VarMean,
        OpCode::ClampTensor,
        OpCode::NarrowCopy,
        OpCode::SelectScatter,
        OpCode::SliceScatter,
        OpCode::GroupNorm,
        OpCode::Logit,
        OpCode::BitwiseLeftShift,
        OpCode::BitwiseRightShift,
        OpCode::PowScalar,
        OpCode::UnfoldCopy,
        OpCode::AsStridedCopy,
        OpCode::Empty,
        OpCode::Topk,
        OpCode::Nonzero,
        OpCode::MaskedSelect,
        OpCode::RepeatInterleave,
        OpCode::MaskedScatter,
        OpCode::CdistForward,
        OpCode::PdistForward,
        OpCode::GridSampler2d,
        OpCode::UpsampleBilinear2dAa,
        OpCode::SplitCopy,
        OpCode::BatchNorm,
        OpCode::QdQuantize,
        OpCode::QdDequantize,
        OpCode::QdDequantizePerChannel,
    ];

    /// Every operator the firmware runs (for messages and docs), from the registry.
    pub fn supported() -> Vec<String> {
        crate::ops::all()
            .iter()
            .filter(|d| d.board.is_some())
            .map(|d| format!("{}.out", d.name))
            .collect()
    }
}

/// Value kinds in the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ValueKind {
    None = 0,
    Int = 1,
    Double = 2,
    Bool = 3,
    IntList = 4,
    Tensor = 5,
    /// A kind no supported kernel reads (bool lists); present so indices line up.
    Other = 6,
    /// Value indices (u32 each; `u32::MAX` for an absent optional tensor).
    TensorList = 7,
    /// f64 items (`upsample_*.vec`'s scale factors).
    DoubleList = 8,
    /// UTF-8 bytes (`gelu`'s `approximate`).
    String = 9,
}

/// Why a program cannot become a board image.
#[derive(Debug, Error)]
pub enum BoardImageError {
    #[error("instruction {instruction} calls {op}, which the board firmware does not implement (it runs {} operators, listed in docs/compatibility.md; the host runs this program with `etscope run`)", OpCode::supported().len())]
    Unsupported { instruction: usize, op: String },
    #[error("instruction {instruction} is a {kind}; the board firmware runs kernel calls only")]
    NotAKernelCall {
        instruction: usize,
        kind: &'static str,
    },
    #[error("value {value}: {detail}")]
    Value { value: usize, detail: String },
    #[error("input {index}: {detail}")]
    Input { index: usize, detail: String },
    #[error("the program has no plan {0}")]
    NoPlan(usize),
    /// A program feature the firmware does not implement (see [`crate::runtime::support`]).
    #[error("the program uses {0}, which the board firmware does not implement; it is refused rather than run on a guess")]
    Feature(String),
    #[error("the image would take {0} bytes, more than the board's {MAX_BOARD_BYTES}")]
    TooLarge(usize),
}

/// What to put into an image besides the program.
#[derive(Debug, Clone, Default)]
pub struct BoardOptions {
    /// Inferences the firmware runs.
    pub runs: u32,
    /// Send every instruction's output tensor.
    pub intermediates: bool,
    /// Scalar (no-Helium) arithmetic, as on a Cortex-M4.
    pub scalar_core: bool,
    /// Drop frames when the RTT ring is full instead of waiting for the host.
    pub drop_when_full: bool,
    /// RTT ring size in KiB (0: the firmware's whole 64 KiB buffer).
    pub ring_kib: u16,
    /// Send every frame (times, outputs) without computing: the transport benchmark's producer.
    pub stream_only: bool,
}

/// A built image and what it holds.
#[derive(Debug, Clone)]
pub struct BoardImage {
    pub bytes: Vec<u8>,
    pub instructions: usize,
    pub arena_bytes: usize,
}

struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    fn align(&mut self, to: usize) {
        while !self.buf.len().is_multiple_of(to) {
            self.buf.push(0);
        }
    }
    fn append(&mut self, data: &[u8], align: usize) -> Result<u32, BoardImageError> {
        self.align(align);
        let at = self.buf.len();
        self.buf.extend_from_slice(data);
        if self.buf.len() > MAX_BOARD_BYTES {
            return Err(BoardImageError::TooLarge(self.buf.len()));
        }
        Ok(at as u32)
    }
    fn put_u32(&mut self, at: usize, v: u32) {
        self.buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
}

fn le_u32s(items: impl IntoIterator<Item = u32>) -> Vec<u8> {
    items.into_iter().flat_map(u32::to_le_bytes).collect()
}

/// Bytes of `data` (row-major over `shape`) rearranged into the memory order `dim_order`.
fn to_storage_order(data: &[u8], elem: usize, shape: &[usize], dim_order: &[usize]) -> Vec<u8> {
    let rank = shape.len();
    if dim_order.iter().enumerate().all(|(i, &d)| i == d) || elem == 0 {
        return data.to_vec();
    }
    let mut logical_strides = vec![1usize; rank];
    for d in (0..rank.saturating_sub(1)).rev() {
        logical_strides[d] = logical_strides[d + 1] * shape[d + 1];
    }
    let mem_shape: Vec<usize> = dim_order.iter().map(|&d| shape[d]).collect();
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n * elem);
    let mut idx = vec![0usize; rank];
    for _ in 0..n {
        let src: usize = (0..rank)
            .map(|m| idx[m] * logical_strides[dim_order[m]])
            .sum();
        out.extend_from_slice(&data[src * elem..(src + 1) * elem]);
        for m in (0..rank).rev() {
            idx[m] += 1;
            if idx[m] < mem_shape[m] {
                break;
            }
            idx[m] = 0;
        }
    }
    out
}

/// Builds the image of plan `plan_index` with `inputs` (one per plan input, logical row-major).
pub fn build(
    program: &Program,
    plan_index: usize,
    inputs: &[TensorData],
    options: &BoardOptions,
) -> Result<BoardImage, BoardImageError> {
    let plan = program
        .plans
        .get(plan_index)
        .ok_or(BoardImageError::NoPlan(plan_index))?;
    check_supported(program, plan_index)?;
    let instructions = plan.main_instructions();
    let ops: Vec<u32> = plan
        .operators
        .iter()
        .map(|op| OpCode::of(&op.qualified()).map_or(0, |c| c as u32))
        .collect();
    let mut w = Writer {
        buf: vec![0u8; HEADER_BYTES],
    };
    w.buf[0..4].copy_from_slice(b"ETSB");
    w.put_u32(4, BOARD_IMAGE_VERSION);

    // a view of a dynamic-shape program (`et_view`) has no storage of its own: it reads its
    // input's, so its record takes the input's place
    let mut view_of: std::collections::BTreeMap<usize, usize> = Default::default();
    for ins in instructions {
        if let Instruction::KernelCall { op_index, args } = ins {
            let is_view = ops.get(*op_index).copied() == Some(OpCode::EtView as u32);
            if let (true, Some(&input), Some(&out)) = (is_view, args.first(), args.get(2)) {
                view_of.insert(out, input);
            }
        }
    }
    // values: the table first (fixed size), then the data each record points at
    let values_at = w.append(&vec![0u8; plan.values.len() * VALUE_BYTES], 8)? as usize;
    let mut records = vec![[0u8; VALUE_BYTES]; plan.values.len()];
    for (vi, v) in plan.values.iter().enumerate() {
        let rec = &mut records[vi];
        let verr = |detail: String| BoardImageError::Value { value: vi, detail };
        match v {
            EValue::Unset | EValue::Null => rec[0] = ValueKind::None as u8,
            EValue::Int(i) => {
                rec[0] = ValueKind::Int as u8;
                rec[8..16].copy_from_slice(&i.to_le_bytes());
            }
            EValue::Bool(b) => {
                rec[0] = ValueKind::Bool as u8;
                rec[8..16].copy_from_slice(&i64::from(*b).to_le_bytes());
            }
            EValue::Double(d) => {
                rec[0] = ValueKind::Double as u8;
                rec[8..16].copy_from_slice(&d.to_le_bytes());
            }
            EValue::IntList(items) => {
                let resolved: Vec<u8> = items
                    .iter()
                    .map(|&i| match plan.values.get(i as usize) {
                        Some(EValue::Int(x)) => Ok(*x),
                        _ => Err(verr(format!("int list item {i} is not an int value"))),
                    })
                    .collect::<Result<Vec<i64>, _>>()?
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect();
                let at = w.append(&resolved, 8)?;
                rec[0] = ValueKind::IntList as u8;
                rec[4..8].copy_from_slice(&(items.len() as u32).to_le_bytes());
                rec[12..16].copy_from_slice(&at.to_le_bytes());
            }
            EValue::Tensor(t) => {
                let rank = t.sizes.len();
                if rank > 8 {
                    return Err(verr(format!("rank {rank} (the firmware takes ≤ 8)")));
                }
                let nbytes =
                    u32::try_from(t.nbytes).map_err(|_| verr(format!("{} bytes", t.nbytes)))?;
                let sizes = t
                    .sizes
                    .iter()
                    .flat_map(|s| s.to_le_bytes())
                    .collect::<Vec<_>>();
                let order: Vec<u32> = if t.dim_order.is_empty() {
                    (0..rank as u32).collect()
                } else {
                    t.dim_order.iter().map(|&d| u32::from(d)).collect()
                };
                let sizes_at = w.append(&sizes, 4)?;
                let order_at = w.append(&le_u32s(order), 4)?;
                rec[0] = ValueKind::Tensor as u8;
                rec[1] = t.scalar_type.code() as u8;
                rec[2] = rank as u8;
                rec[8..12].copy_from_slice(&nbytes.to_le_bytes());
                rec[12..16].copy_from_slice(&sizes_at.to_le_bytes());
                rec[16..20].copy_from_slice(&order_at.to_le_bytes());
                rec[20..24].copy_from_slice(&(t.numel as u32).to_le_bytes());
                if t.is_constant() {
                    let data = program
                        .constant_bytes(t)
                        .map_err(|e| verr(format!("constant data: {e}")))?;
                    let at = w.append(data, 16)?;
                    rec[3] = 0;
                    rec[4..8].copy_from_slice(&at.to_le_bytes());
                } else if let Some(a) = &t.allocation {
                    let arena = u8::try_from(a.memory_id)
                        .ok()
                        .filter(|&m| m != 0 && m != 255)
                        .ok_or_else(|| verr(format!("memory id {}", a.memory_id)))?;
                    let offset = u32::try_from(a.offset)
                        .map_err(|_| verr(format!("arena offset {}", a.offset)))?;
                    let size = plan
                        .non_const_buffer_sizes
                        .get(usize::from(arena))
                        .copied()
                        .unwrap_or(0);
                    if u64::from(offset) + u64::from(nbytes) > size.max(0) as u64 {
                        return Err(verr(format!(
                            "{nbytes} bytes at offset {offset} overrun arena {arena} of {size} bytes"
                        )));
                    }
                    rec[3] = arena;
                    rec[4..8].copy_from_slice(&offset.to_le_bytes());
                } else if t.nbytes == 0 {
                    rec[3] = 255;
                } else if view_of.contains_key(&vi) {
                    // placed below, once its input's record is written
                } else {
                    return Err(verr(
                        "a tensor with data but no planned memory (dynamic or unplanned)".into(),
                    ));
                }
            }
            EValue::TensorList(items) | EValue::OptionalTensorList(items) => {
                let indices = items.iter().map(|&i| {
                    u32::try_from(i)
                        .ok()
                        .filter(|&i| (i as usize) < plan.values.len())
                        .unwrap_or(u32::MAX)
                });
                let at = w.append(&le_u32s(indices), 4)?;
                rec[0] = ValueKind::TensorList as u8;
                rec[4..8].copy_from_slice(&(items.len() as u32).to_le_bytes());
                rec[12..16].copy_from_slice(&at.to_le_bytes());
            }
            EValue::DoubleList(items) => {
                let bytes: Vec<u8> = items.iter().flat_map(|d| d.to_le_bytes()).collect();
                let at = w.append(&bytes, 8)?;
                rec[0] = ValueKind::DoubleList as u8;
                rec[4..8].copy_from_slice(&(items.len() as u32).to_le_bytes());
                rec[12..16].copy_from_slice(&at.to_le_bytes());
            }
            EValue::String(text) => {
                let at = w.append(text.as_bytes(), 4)?;
                rec[0] = ValueKind::String as u8;
                rec[4..8].copy_from_slice(&(text.len() as u32).to_le_bytes());
                rec[12..16].copy_from_slice(&at.to_le_bytes());
            }
            EValue::BoolList(_) => rec[0] = ValueKind::Other as u8,
        }
    }
    for (&view, &input) in &view_of {
        let (Some(from), true) = (records.get(input).copied(), view < records.len()) else {
            continue;
        };
        let nbytes = u32::from_le_bytes([
            records[view][8],
            records[view][9],
            records[view][10],
            records[view][11],
        ]);
        let input_bytes = u32::from_le_bytes([from[8], from[9], from[10], from[11]]);
        if from[0] != ValueKind::Tensor as u8 || nbytes > input_bytes {
            return Err(BoardImageError::Value {
                value: view,
                detail: format!("a view of value {input}, which holds fewer bytes"),
            });
        }
        records[view][3..8].copy_from_slice(&from[3..8]);
    }
    for (vi, rec) in records.iter().enumerate() {
        let at = values_at + vi * VALUE_BYTES;
        w.buf[at..at + VALUE_BYTES].copy_from_slice(rec);
    }

    // instructions
    let mut table = Vec::with_capacity(instructions.len() * 12);
    for ins in instructions {
        if let Instruction::KernelCall { op_index, args } = ins {
            let args_at = w.append(&le_u32s(args.iter().map(|&a| a as u32)), 4)?;
            table.extend(le_u32s([*op_index as u32, args.len() as u32, args_at]));
        }
    }
    let instrs_at = w.append(&table, 4)?;
    let ops_at = w.append(&le_u32s(ops.iter().copied()), 4)?;
    let arenas: Vec<u32> = plan
        .non_const_buffer_sizes
        .iter()
        .map(|&s| u32::try_from(s.max(0)).map_err(|_| BoardImageError::TooLarge(s as usize)))
        .collect::<Result<_, _>>()?;
    let arena_total = arenas
        .iter()
        .try_fold(0usize, |acc, &s| {
            acc.checked_add((s as usize).div_ceil(16) * 16)
        })
        .filter(|&t| t <= MAX_BOARD_BYTES)
        .ok_or(BoardImageError::TooLarge(usize::MAX))?;
    let arenas_at = w.append(&le_u32s(arenas.iter().copied()), 4)?;

    // inputs, in storage order
    if inputs.len() != plan.inputs.len() {
        return Err(BoardImageError::Input {
            index: inputs.len(),
            detail: format!(
                "the plan takes {} inputs, got {}",
                plan.inputs.len(),
                inputs.len()
            ),
        });
    }
    let mut input_table = Vec::new();
    for (k, (data, &vi)) in inputs.iter().zip(&plan.inputs).enumerate() {
        let ierr = |detail: String| BoardImageError::Input { index: k, detail };
        let t = plan
            .tensor(vi)
            .ok_or_else(|| ierr(format!("value {vi} is not a tensor")))?;
        let want: Vec<usize> = t.sizes.iter().map(|&s| s.max(0) as usize).collect();
        if data.shape != want || data.dtype != t.scalar_type {
            return Err(ierr(format!(
                "{:?} {} given, the program takes {:?} {}",
                data.shape,
                data.dtype.name(),
                want,
                t.scalar_type.name()
            )));
        }
        let elem = t.scalar_type.element_size().unwrap_or(1);
        let order: Vec<usize> = if t.dim_order.is_empty() {
            (0..want.len()).collect()
        } else {
            t.dim_order.iter().map(|&d| usize::from(d)).collect()
        };
        if data.bytes.len() as u64 != t.nbytes || order.len() != want.len() {
            return Err(ierr(format!(
                "{} bytes given, the tensor holds {}",
                data.bytes.len(),
                t.nbytes
            )));
        }
        let stored = to_storage_order(&data.bytes, elem, &want, &order);
        let at = w.append(&stored, 16)?;
        input_table.extend(le_u32s([vi as u32, at, stored.len() as u32]));
    }
    let inputs_at = w.append(&input_table, 4)?;
    if !(1..=u32::MAX).contains(&options.runs) {
        return Err(BoardImageError::Input {
            index: 0,
            detail: "at least one run".into(),
        });
    }
    w.align(16);
    let total = w.buf.len();
    w.put_u32(8, total as u32);
    w.put_u32(12, plan.values.len() as u32);
    w.put_u32(16, values_at as u32);
    w.put_u32(20, instructions.len() as u32);
    w.put_u32(24, instrs_at);
    w.put_u32(28, ops.len() as u32);
    w.put_u32(32, ops_at);
    w.put_u32(36, arenas.len() as u32);
    w.put_u32(40, arenas_at);
    w.put_u32(44, inputs.len() as u32);
    w.put_u32(48, inputs_at);
    w.put_u32(52, options.runs);
    w.put_u32(
        56,
        u32::from(options.intermediates)
            | u32::from(options.drop_when_full) << 1
            | u32::from(options.stream_only) << 2
            | u32::from(options.ring_kib) << 16,
    );
    w.put_u32(60, u32::from(options.scalar_core));
    w.buf[64..72].copy_from_slice(&program_fingerprint(program.bytes()).to_le_bytes());
    w.put_u32(72, arena_total as u32);
    Ok(BoardImage {
        bytes: w.buf,
        instructions: instructions.len(),
        arena_bytes: arena_total,
    })
}

/// Whether every instruction of plan `plan_index` is one the firmware runs (the reason if not).
pub fn check_supported(program: &Program, plan_index: usize) -> Result<(), BoardImageError> {
    let plan = program
        .plans
        .get(plan_index)
        .ok_or(BoardImageError::NoPlan(plan_index))?;
    if let Some(feature) = crate::formats::pte::features::unimplemented_feature(plan) {
        return Err(BoardImageError::Feature(feature));
    }
    // the firmware's arenas start at zero: a planned tensor the program gives initial data
    // (a training program's parameters, a buffer's initial state) would start wrong
    if let Some(v) = plan
        .values
        .iter()
        .position(|v| v.as_tensor().is_some_and(|t| t.has_initial_data()))
    {
        return Err(BoardImageError::Feature(format!(
            "a planned tensor with initial data (value {v})"
        )));
    }
    for (i, ins) in plan.main_instructions().iter().enumerate() {
        match ins {
            Instruction::KernelCall { op_index, args } => {
                let op = plan
                    .operators
                    .get(*op_index)
                    .map_or_else(|| format!("operator #{op_index}"), |o| o.qualified());
                let Some(code) = OpCode::of(&op) else {
                    return Err(BoardImageError::Unsupported { instruction: i, op });
                };
                // the firmware's quantize and dequantize handle int8 and int16 codes
                let int_side = match code {
                    OpCode::Quantize => args.len().checked_sub(2).and_then(|k| args.get(k)),
                    OpCode::Dequantize => args.first(),
                    _ => None,
                };
                let dtype = int_side
                    .and_then(|&v| plan.values.get(v))
                    .and_then(|v| v.as_tensor())
                    .map(|t| t.scalar_type);
                if let Some(held) = unheld_type(plan, code, args) {
                    return Err(BoardImageError::Unsupported {
                        instruction: i,
                        op: format!("{op} on {held} tensors"),
                    });
                }
                if dtype.is_some_and(|d| {
                    !matches!(d, crate::ScalarType::Char | crate::ScalarType::Short)
                }) {
                    return Err(BoardImageError::Unsupported {
                        instruction: i,
                        op: format!(
                            "{op} on {} codes",
                            dtype.map_or_else(|| "?".to_string(), |d| d.short_name())
                        ),
                    });
                }
            }
            other => {
                return Err(BoardImageError::NotAKernelCall {
                    instruction: i,
                    kind: other.kind(),
                })
            }
        }
    }
    Ok(())
}

/// A tensor type among the arguments of a portable operator that the firmware's kernels do not
/// hold (half, bfloat16, quantized and bit types), by name.
fn unheld_type(
    plan: &crate::formats::pte::ExecutionPlan,
    code: OpCode,
    args: &[usize],
) -> Option<String> {
    use crate::ScalarType as S;
    if (code as u32) < OpCode::Add as u32 {
        return None;
    }
    let tensor_type = |v: usize| {
        plan.values
            .get(v)
            .and_then(|v| v.as_tensor())
            .map(|t| t.scalar_type)
    };
    let mut types = Vec::new();
    for &a in args {
        match plan.values.get(a) {
            Some(EValue::TensorList(items) | EValue::OptionalTensorList(items)) => types.extend(
                items
                    .iter()
                    .filter_map(|&i| usize::try_from(i).ok().and_then(tensor_type)),
            ),
            _ => types.extend(tensor_type(a)),
        }
    }
    types
        .into_iter()
        .find(|t| {
            !matches!(
                t,
                S::Byte | S::Char | S::Short | S::Int | S::Long | S::Float | S::Double | S::Bool
            )
        })
        .map(|t| t.name().to_string())
}

/// The zero input of every plan input (when the user gives none).
pub fn zero_inputs(program: &Program, plan_index: usize) -> Vec<TensorData> {
    let Some(plan) = program.plans.get(plan_index) else {
        return Vec::new();
    };
    plan.inputs
        .iter()
        .filter_map(|&vi| plan.tensor(vi))
        .map(|t| TensorData {
            dtype: t.scalar_type,
            shape: t.sizes.iter().map(|&s| s.max(0) as usize).collect(),
            bytes: vec![0; t.nbytes as usize],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_order_moves_channels_last() {
        // [1, 2, 1, 2] logical NCHW → NHWC memory
        let data = [0u8, 1, 2, 3];
        let out = to_storage_order(&data, 1, &[1, 2, 1, 2], &[0, 2, 3, 1]);
        assert_eq!(out, vec![0, 2, 1, 3]);
    }

    #[test]
    fn a_planned_tensor_with_initial_data_is_refused_for_the_board() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/training/initialized_buffer/model.pte"
        );
        let program = Program::parse(std::fs::read(path).expect("fixture")).expect("parses");
        let err = check_supported(&program, program.default_plan_index())
            .expect_err("refused")
            .to_string();
        assert!(err.contains("planned tensor with initial data"), "{err}");
    }
}

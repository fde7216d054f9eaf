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
//! | 28 | u32 operator count, u32 offset (u32 per operator: its firmware kernel's code, 0 for none) |
//! | 36 | u32 arena count, u32 offset (u32 size per arena; arena 0 is ExecuTorch's unused one) |
//! | 44 | u32 input count, u32 offset (12-byte records: value, data offset, byte count) |
//! | 52 | u32 runs, u32 flags (bit 0: send intermediate outputs; bit 1: drop frames when the RTT ring is full; bit 2: stream without computing; bits 16..31: ring size in KiB, 0 = all), u32 target (0 = Helium core, 1 = scalar core) |
//! | 64 | u64 program identity ([`crate::analysis::identity::program_fingerprint`]) |
//! | 72 | u32 total arena bytes |
//! | 76 | u32 placed-arena count, u32 offset (u32 address per arena, 0 = after the image), or 0, 0 |
//! | 84 | u32 placed-constant count, u32 offset (12-byte records: image data offset, byte count, address the firmware copies them to before the first run), or 0, 0; then zero padding to 96 |
//!
//! A value record: u8 kind, u8 scalar type, u8 rank, u8 memory (0 = constant in the image,
//! 1..=254 = arena, 255 = none), u32 offset (tensor data; list: count), then for scalars an
//! i64/f64 at 8, for tensors u32 byte count at 8, u32 sizes offset at 12 (i32 each), u32
//! dim-order offset at 16 (u32 each), u32 element count at 20; for lists (int: i64 items,
//! double: f64 items, tensor: u32 value indices) and strings (bytes) the count at 4 and the items
//! offset at 12.
//!
//! The operator codes are the registry's ([`crate::ops::BoardKernel`]); the firmware reads them
//! from `board/firmware/opcodes.h`, which [`opcodes_header`] writes.

mod opcodes;
mod placement;
mod support;
mod values;
mod writer;

use thiserror::Error;

pub use opcodes::{board_kernels, opcodes_header};
pub use placement::board_addresses;
pub use support::{board_kernel, check_supported, supported_operators};
pub use values::ValueKind;

use crate::analysis::identity::program_fingerprint;
use crate::formats::pte::{Instruction, Program};
use crate::tensor::TensorData;
use writer::{le_u32s, to_storage_order, Writer};

/// Image format version the firmware checks.
pub const BOARD_IMAGE_VERSION: u32 = 2;
const HEADER_BYTES: usize = 96;
const VALUE_BYTES: usize = 32;
/// Largest image (and arena total) the emulated board holds: its DDR window minus firmware use.
pub const MAX_BOARD_BYTES: usize = 256 << 20;

/// The emulated board's part (`etscope parts`): a placement for the board is made on it.
pub const BOARD_PART: &str = "mps3-an547";
/// The regions of [`BOARD_PART`] the firmware keeps for itself (`board/firmware/link.ld`), and
/// what it keeps there: a placement may not put a block in them.
pub const FIRMWARE_REGIONS: [(&str, &str); 2] = [
    ("ITCM", "its code"),
    ("DTCM", "its data, its RTT buffer and its stack"),
];

/// Why a program cannot become a board image.
#[derive(Debug, Error)]
pub enum BoardImageError {
    #[error("instruction {instruction} calls {op}, which the board firmware does not implement (it runs {} operators, listed in docs/compatibility.md); {}", supported_operators().len(), if *host_runs { "`etscope run` computes it on the host" } else { "the host has no kernel for it either" })]
    Unsupported {
        instruction: usize,
        op: String,
        /// Whether the host runtime has a kernel for the operator.
        host_runs: bool,
    },
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
    #[error("instruction {instruction} calls {op} on {dtype} tensors; the board firmware computes it on float32 tensors only{}", if matches!(dtype.as_str(), "int8" | "uint8") { " (a lowering that left a float operator on quantized tensors)" } else { "" })]
    FloatOnly {
        instruction: usize,
        op: String,
        dtype: String,
    },
}

/// The portable operators the firmware computes on float tensors only (its `float tensors only`
/// refusals), checked before an image is built.
const FLOAT_ONLY: [&str; 10] = [
    "aten::convolution",
    "aten::mm",
    "aten::bmm",
    "aten::addmm",
    "aten::relu",
    "aten::sigmoid",
    "aten::tanh",
    "aten::gelu",
    "aten::_softmax",
    "aten::hardtanh",
];

/// A float-only operator called on integer tensors: refused before the board starts.
fn check_float_only(program: &Program, plan_index: usize) -> Result<(), BoardImageError> {
    let Some(plan) = program.plans.get(plan_index) else {
        return Ok(());
    };
    for (i, ins) in plan.main_instructions().iter().enumerate() {
        let Instruction::KernelCall { op_index, args } = ins else {
            continue;
        };
        let Some(op) = plan.operators.get(*op_index) else {
            continue;
        };
        if !FLOAT_ONLY.contains(&op.name.as_str()) {
            continue;
        }
        let first = args.first().and_then(|&a| plan.tensor(a));
        if let Some(t) = first.filter(|t| t.scalar_type != crate::ScalarType::Float) {
            return Err(BoardImageError::FloatOnly {
                instruction: i,
                op: op.qualified(),
                dtype: t.scalar_type.short_name(),
            });
        }
    }
    Ok(())
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
    /// Where the arenas and constants go in the board's memory (`None`: the arenas after the
    /// image, the constants read in place).
    pub placement: Option<BoardPlacement>,
}

/// Addresses in the board's memory for the arenas and for constants a placement moves
/// (`crate::analysis::place::board_addresses` computes them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BoardPlacement {
    /// Per memory id (index 0 unused): the arena's address, 0 = after the image.
    pub arena_at: Vec<u32>,
    /// Constant tensors copied out of the image: (value index, address).
    pub constant_at: Vec<(usize, u32)>,
}

/// A built image and what it holds.
#[derive(Debug, Clone)]
pub struct BoardImage {
    pub bytes: Vec<u8>,
    pub instructions: usize,
    pub arena_bytes: usize,
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
    check_float_only(program, plan_index)?;
    let instructions = plan.main_instructions();
    let ops: Vec<u32> = plan
        .operators
        .iter()
        .map(|op| board_kernel(&op.qualified()).map_or(0, |(_, k)| k.code))
        .collect();
    let mut w = Writer::with_header(HEADER_BYTES);
    w.buf[0..4].copy_from_slice(b"ETSB");
    w.put_u32(4, BOARD_IMAGE_VERSION);

    let values_at = values::write(&mut w, program, plan)?;

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
    let (placed_arenas, placed_constants) = match &options.placement {
        Some(p) => write_placement(&mut w, p, values_at, plan.values.len())?,
        None => ((0, 0), (0, 0)),
    };
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
    w.put_u32(76, placed_arenas.0);
    w.put_u32(80, placed_arenas.1);
    w.put_u32(84, placed_constants.0);
    w.put_u32(88, placed_constants.1);
    Ok(BoardImage {
        bytes: w.buf,
        instructions: instructions.len(),
        arena_bytes: arena_total,
    })
}

/// A table of the image: its record count and offset.
type Table = (u32, u32);

/// The placement's two tables: the arenas' addresses and the constants' records, each
/// constant's image offset and size read from its written value record.
fn write_placement(
    w: &mut Writer,
    p: &BoardPlacement,
    values_at: usize,
    n_values: usize,
) -> Result<(Table, Table), BoardImageError> {
    let arenas = if p.arena_at.is_empty() {
        (0, 0)
    } else {
        let at = w.append(&le_u32s(p.arena_at.iter().copied()), 4)?;
        (p.arena_at.len() as u32, at)
    };
    let mut records = Vec::with_capacity(p.constant_at.len() * 12);
    for &(value, address) in &p.constant_at {
        let verr = |detail: &str| BoardImageError::Value {
            value,
            detail: detail.to_string(),
        };
        if value >= n_values {
            return Err(verr("no such value to place"));
        }
        let rec = values_at + value * VALUE_BYTES;
        let field = |k: usize| {
            w.buf
                .get(rec + k..rec + k + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let (kind, memory) = (w.buf.get(rec).copied(), w.buf.get(rec + 3).copied());
        if kind != Some(ValueKind::Tensor as u8) || memory != Some(0) {
            return Err(verr(
                "placed as a constant, but it is not a constant tensor",
            ));
        }
        let (Some(off), Some(bytes)) = (field(4), field(8)) else {
            return Err(verr("its record is cut short"));
        };
        records.extend(le_u32s([off, bytes, address]));
    }
    let constants = if records.is_empty() {
        (0, 0)
    } else {
        (p.constant_at.len() as u32, w.append(&records, 4)?)
    };
    Ok((arenas, constants))
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

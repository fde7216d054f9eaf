//! What each fuzz target does with its input: the same calls the CLI and the window make on a
//! file a user opens. Every function must return (never panic, abort, hang or exhaust memory)
//! on any input; `fuzz/` drives them with cargo-fuzz, `tests/replay.rs` replays the corpora in CI.

use etscope_core::analysis::profile::profile;
use etscope_core::board_image;
use etscope_core::formats::bundled::BundledProgram;
use etscope_core::formats::debug_buffer::captured_tensors;
use etscope_core::formats::etdump::ETDump;
use etscope_core::formats::etrecord::ETRecord;
use etscope_core::formats::pte::Program;
use etscope_core::runtime::{RunOptions, Runtime, Target};
use etscope_profiler::capture::Assembler;
use etscope_profiler::wire::WireDecoder;
use etscope_viewer::document::Document;

/// A fuzz target's body.
pub type FuzzTarget = fn(&[u8]);

/// The targets, by the name of their corpus directory.
pub const TARGETS: &[(&str, FuzzTarget)] = &[
    ("pte", pte),
    ("run", run),
    ("etdump", etdump),
    ("bpte", bpte),
    ("etrecord", etrecord),
    ("npy", npy),
    ("torch_save", torch_save),
    ("wire", wire),
    ("lower", lower),
];

/// A program as the window opens it: parse, IR of plan 0, layout, module groups, memory plan;
/// then every other plan's IR, the board-image check, every planner with its check, the RAM
/// budget, and the program written with the best plan and read back (`etscope plan -o`).
pub fn pte(data: &[u8]) {
    if let Ok(doc) = Document::from_program_bytes("fuzz.pte", data.to_vec()) {
        if let Some(p) = &doc.program {
            for i in 1..p.plans.len().min(4) {
                let _ = etscope_core::ir::from_pte::graph_from_plan(p, i);
            }
            let _ = board_image::check_supported(p, 0);
            if let (Some(graph), Some(plan)) = (doc.pte_graph(), doc.memory.as_ref()) {
                use etscope_core::plan::alternatives::{alternatives, check_in, write_program};
                let alts = alternatives(graph, plan);
                let mut picks = Vec::new();
                for a in &alts {
                    for alg in &a.algorithms {
                        let _ = check_in(plan, a.memory_id, alg);
                    }
                    if let Some(b) = a
                        .algorithms
                        .iter()
                        .filter(|x| x.order.is_none())
                        .min_by_key(|x| x.peak)
                    {
                        picks.push((a.memory_id, b));
                    }
                }
                let _ = etscope_core::plan::budget::ram_budget(p, 0, plan);
                if let Ok(bytes) = write_program(data, 0, &picks) {
                    let _ = Program::parse(bytes);
                }
            }
        }
    }
}

/// A program executed on the host with zero inputs, bounded by the runtime's budgets.
pub fn run(data: &[u8]) {
    let Ok(program) = Program::parse(data.to_vec()) else {
        return;
    };
    let Ok(rt) = Runtime::new(&program, 0, Target::CortexM55) else {
        return;
    };
    let inputs = board_image::zero_inputs(&program, 0);
    let _ = rt.run_with(
        &inputs,
        RunOptions {
            capture: true,
            // small enough that no input keeps a fuzzing run busy for long
            work_budget: Some(1 << 26),
            ..RunOptions::default()
        },
    );
}

/// An ETDump and a debug buffer: the first 4 bytes (LE) say where the ETDump ends.
pub fn etdump(data: &[u8]) {
    let Some((head, rest)) = data.split_first_chunk::<4>() else {
        return;
    };
    let cut = (u32::from_le_bytes(*head) as usize).min(rest.len());
    let (dump, buffer) = rest.split_at(cut);
    if let Ok(d) = ETDump::parse(dump) {
        let _ = profile(&d, None);
        let _ = captured_tensors(&d, buffer);
    }
}

/// A BundledProgram: parse, and the program inside as the window opens it.
pub fn bpte(data: &[u8]) {
    if BundledProgram::parse(data).is_ok() {
        let _ = Document::from_program_bytes("fuzz.bpte", data.to_vec());
    }
}

/// An ETRecord archive: its JSON programs, pickled weights and every stage's IR and layout;
/// read releasing as the window reads a file (every stage waiting), then each stage read again
/// from its own entry as the window builds a stage when it is shown.
pub fn etrecord(data: &[u8]) {
    if let Ok(rec) = ETRecord::parse(data) {
        let _ = Document::from_etrecord_bytes("fuzz.etrecord", data);
        let _ = etscope_viewer::document::prepare_etrecord_reader(
            "fuzz.etrecord",
            std::io::Cursor::new(data),
            0,
        );
        for st in &rec.stages {
            if let Ok(g) = ETRecord::read_stage(std::io::Cursor::new(data), &st.name, None) {
                let _ = etscope_viewer::document::build_stage(&st.name, &g);
            }
        }
    }
}

pub fn npy(data: &[u8]) {
    let _ = etscope_core::formats::npy::read_npy(data);
}

/// A `torch.save` archive's pickle (restricted unpickler) and the tensors it names.
pub fn torch_save(data: &[u8]) {
    if let Ok(v) = etscope_core::formats::torch_save::load(data) {
        let _ = etscope_core::formats::torch_save::tensors_of(&v);
        drop(v);
    }
}

/// A raw RTT capture: wire decoding, run assembly and the ETDump built from it (for the tiny
/// program, whose operator table names the events).
pub fn wire(data: &[u8]) {
    static TINY: &[u8] =
        include_bytes!("../../../tests/fixtures/tiny_conv_relu_linear/model_int8_cortex_m55.pte");
    thread_local! {
        static PROGRAM: Option<Program> = Program::parse(TINY.to_vec()).ok();
    }
    let mut decoder = WireDecoder::new();
    let mut a = Assembler::new();
    for chunk in data.chunks(97) {
        decoder.push(chunk);
        while let Some(f) = decoder.next_frame() {
            a.add(f);
        }
    }
    decoder.finish();
    PROGRAM.with(|p| {
        if let Some(p) = p.as_ref().filter(|p| !p.method_names().is_empty()) {
            let (d, buf) = a.to_etdump(&p.instruction_calls(0));
            let _ = ETDump::parse(&d.to_bytes());
            let _ = captured_tensors(&d, &buf);
        }
    });
}

/// The edge stages `lower` starts from: ExecuTorch's own quantized graphs of one operator each
/// (`tests/fixtures/lowering/ops`), covering every Cortex-M pass's pattern.
const LOWER_SEEDS: &[&[u8]] = &[
    include_bytes!("../../../tests/fixtures/lowering/ops/quantized_conv2d__dw_k3_p1_c6_n2__explicit__m55.etrecord"),
    include_bytes!("../../../tests/fixtures/lowering/ops/quantized_conv2d__k3_c3to4_relu6_functional__default__m55.etrecord"),
    include_bytes!("../../../tests/fixtures/lowering/ops/quantized_linear__in16_out10_bias__default__m4.etrecord"),
    include_bytes!("../../../tests/fixtures/lowering/ops/quantized_add__relu_1x5x4x3__explicit__m55.etrecord"),
    include_bytes!("../../../tests/fixtures/lowering/ops/quantized_avg_pool2d__divisor_override_k2__default__m4.etrecord"),
    include_bytes!("../../../tests/fixtures/lowering/ops/softmax__dim1_2x5x3__default__m4.etrecord"),
    include_bytes!("../../../tests/fixtures/lowering/ops/quantized_transpose_conv2d__k2_s2_c3to5_relu__default__m4.etrecord"),
    include_bytes!("../../../tests/fixtures/lowering/ops/quantized_batch_matmul__bmm_2x3x5_2x5x4__default__m4.etrecord"),
    include_bytes!("../../../tests/fixtures/lowering/ops/pad__hw_1201_1x3x4x5__explicit__m55.etrecord"),
    include_bytes!("../../../tests/fixtures/lowering/ops/quantized_max_pool2d__k2_ceil_c4__default__m4.etrecord"),
    include_bytes!("../../../tests/fixtures/lowering/ops/quantized_mul__channel_broadcast_1x5x3x4_1x5x1x1__default__m4.etrecord"),
    include_bytes!("../../../tests/fixtures/lowering/ops/quantized_div__broadcast_2x5_1x5__default__m4.etrecord"),
];

/// The edge modules of [`LOWER_SEEDS`], read once.
fn lower_seeds() -> &'static [etscope_core::lower::Module] {
    static SEEDS: std::sync::OnceLock<Vec<etscope_core::lower::Module>> =
        std::sync::OnceLock::new();
    SEEDS.get_or_init(|| {
        LOWER_SEEDS
            .iter()
            .filter_map(|b| ETRecord::parse(b).ok())
            .filter_map(|r| etscope_core::lower::Module::from_etrecord(&r, None).ok())
            .collect()
    })
}

/// `etscope lower` on an edge graph the input edits: byte 0 picks a seed graph, byte 1 the
/// flow and core; then each 8-byte record edits one literal argument (an int, an int list's
/// item, a float, a bool), a value's size, or a constant's size (its data resized with it). Every pass of the lowering runs,
/// then the emitted program is read back and run on the host: none may panic, whatever the
/// arguments say (a group count of 0, a negative stride, sizes that disagree with the data).
pub fn lower(data: &[u8]) {
    use etscope_core::ir::ArgData;
    use etscope_core::lower::{Core, Flow, Options};
    let seeds = lower_seeds();
    let (Some(&pick), Some(&how)) = (data.first(), data.get(1)) else {
        return;
    };
    let Some(seed) = seeds.get(usize::from(pick) % seeds.len().max(1)) else {
        return;
    };
    let mut module = seed.clone();
    for edit in data[2..].chunks_exact(8).take(16) {
        let value = i64::from(i32::from_le_bytes([edit[4], edit[5], edit[6], edit[7]]));
        let (what, at, item) = (
            edit[0] % 4,
            usize::from(u16::from_le_bytes([edit[1], edit[2]])),
            usize::from(edit[3]),
        );
        match what {
            0 | 1 => {
                let nodes = module.graph.nodes.len().max(1);
                let Some(node) = module.graph.nodes.get_mut(at % nodes) else {
                    continue;
                };
                let args = node.args.len();
                if args == 0 {
                    continue;
                }
                let arg = &mut node.args[item % args];
                match &mut arg.data {
                    ArgData::Int(i) => *i = value,
                    ArgData::Ints(v) if !v.is_empty() => {
                        let n = v.len();
                        v[(item / 8) % n] = Some(value);
                    }
                    ArgData::Ints(v) => v.push(Some(value)),
                    ArgData::Float(f) => *f = value as f64 / 256.0,
                    ArgData::Bool(b) => *b = value & 1 == 1,
                    ArgData::None if what == 1 => arg.data = ArgData::Int(value),
                    _ => {}
                }
            }
            2 => {
                let values = module.graph.values.len().max(1);
                if let Some(v) = module.graph.values.get_mut(at % values) {
                    if v.shape.is_empty() {
                        v.shape.push(value);
                    } else {
                        let n = v.shape.len();
                        v.shape[item % n] = value;
                    }
                }
            }
            _ => {
                let keys: Vec<_> = module.constants.keys().copied().collect();
                if keys.is_empty() {
                    continue;
                }
                // a weight of another size, its data resized with it (as a real state dict
                // holds it: sizes and bytes agree)
                if let Some(c) = module.constants.get_mut(&keys[at % keys.len()]) {
                    if c.shape.is_empty() {
                        c.shape.push(value.unsigned_abs() as usize % 64);
                    } else {
                        let n = c.shape.len();
                        c.shape[item % n] = value.unsigned_abs() as usize % 64;
                    }
                    let elem = c.dtype.element_size().unwrap_or(1);
                    let count: usize = c.shape.iter().product();
                    c.bytes.resize(count * elem, 0);
                }
            }
        }
    }
    let options = Options {
        flow: if how & 1 == 0 {
            Flow::Default
        } else {
            Flow::Explicit
        },
        core: [Core::M55, Core::M4, Core::M0, Core::M85][usize::from(how >> 1) % 4],
    };
    let Ok(stages) = etscope_core::lower::lower(module, &options) else {
        return;
    };
    let Some(last) = stages.last() else {
        return;
    };
    let Ok(bytes) = etscope_core::lower::emit::program(&last.module, &options) else {
        return;
    };
    let Ok(program) = Program::parse(bytes) else {
        return;
    };
    if let Ok(rt) = Runtime::new(&program, 0, Target::CortexM55) {
        let inputs = board_image::zero_inputs(&program, 0);
        let _ = rt.run_with(
            &inputs,
            RunOptions {
                work_budget: Some(1 << 24),
                ..RunOptions::default()
            },
        );
    }
}

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
        if let Some(plan) = p.as_ref().and_then(|p| p.plans.first()) {
            let (d, buf) = a.to_etdump(plan);
            let _ = ETDump::parse(&d.to_bytes());
            let _ = captured_tensors(&d, &buf);
        }
    });
}

//! The emulated board end to end: firmware built by arm-none-eabi-gcc, QEMU mps3-an547 running a
//! real Cortex-M program, frames streamed over RTT through QEMU's GDB stub, captures saved and
//! read back through `core`. Also the faults a live capture meets: a target reset mid-run, the
//! transport closing mid-stream, a full buffer in drop mode.

#[path = "../tools/mod.rs"]
mod tools;

use std::path::{Path, PathBuf};
use std::time::Duration;

use etscope::board::{firmware, Qemu};
use etscope_core::analysis::profile::profile;
use etscope_core::board_image::{self, BoardOptions};
use etscope_core::formats::debug_buffer::captured_tensors;
use etscope_core::formats::etdump::ETDump;
use etscope_core::formats::pte::{Instruction, Program};
use etscope_core::runtime::{Runtime, RuntimeError, Target};
use etscope_core::tensor::TensorData;
use etscope_profiler::session::{record_until, save_capture, Locate, Recorder, TargetSource};
use etscope_profiler::transport::gdb::GdbRemote;
use etscope_profiler::transport::{TargetMemory, TransportError};

mod equal_to_host;
mod stream;

fn asset(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../assets")
        .join(rel)
}

fn model() -> (Program, TensorData, PathBuf) {
    let pte = asset("ds_cnn_kws/model_int8_cortex_m55.pte");
    let program = Program::parse(std::fs::read(&pte).expect("asset")).expect("program");
    let input = etscope_core::formats::npy::read_npy(
        &std::fs::read(asset("ds_cnn_kws/input.npy")).expect("input"),
    )
    .expect("npy");
    (program, input, pte)
}

fn image(program: &Program, input: &TensorData, options: BoardOptions) -> Vec<u8> {
    board_image::build(program, 0, std::slice::from_ref(input), &options)
        .expect("board image")
        .bytes
}

fn start(image: &[u8]) -> (Qemu, GdbRemote, u64) {
    let elf = firmware().expect("firmware builds (arm-none-eabi-gcc installed by .ci/run)");
    let qemu = Qemu::start(&elf, image).expect("qemu starts");
    let gdb = qemu.connect().expect("gdb stub");
    let cb = qemu.control_block().expect("_SEGGER_RTT");
    (qemu, gdb, cb)
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("etscope-board-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).expect("tmp");
    d
}

/// Resets the target through QEMU's monitor once the first run has streamed.
struct ResetOnce {
    gdb: GdbRemote,
    halts: usize,
    reset_at: usize,
}

impl TargetMemory for ResetOnce {
    fn read(&mut self, a: u64, b: &mut [u8]) -> Result<(), TransportError> {
        self.gdb.read(a, b)
    }
    fn write(&mut self, a: u64, d: &[u8]) -> Result<(), TransportError> {
        self.gdb.write(a, d)
    }
    fn halt(&mut self) -> Result<(), TransportError> {
        self.gdb.halt()?;
        self.halts += 1;
        if self.halts == self.reset_at {
            self.gdb.monitor("system_reset")?;
        }
        Ok(())
    }
    fn resume(&mut self) -> Result<(), TransportError> {
        self.gdb.resume()
    }
    fn needs_halt(&self) -> bool {
        true
    }
    fn describe(&self) -> String {
        self.gdb.describe()
    }
}

/// Runs `program` once on the emulated board with every output sent and compares each with the
/// host runtime's for the program's core, bit for bit: `Some(outputs compared)`, or `None` when
/// the firmware refuses the program (an operator it does not implement, named) or the host
/// itself cannot run it on that core.
fn equals_the_host_on_the_board(
    name: &str,
    program: &Program,
    inputs: &[TensorData],
) -> Option<usize> {
    let target = Target::for_program(program, 0);
    let options = BoardOptions {
        runs: 1,
        intermediates: true,
        scalar_core: !target.has_helium(),
        ..BoardOptions::default()
    };
    let image = match board_image::build(program, 0, inputs, &options) {
        Ok(img) => img.bytes,
        Err(e) => {
            // refused by name: an operator it lacks, or a delegate (Ethos-U) it cannot run
            let why = e.to_string();
            assert!(
                why.contains("does not implement")
                    || why.contains("runs kernel calls only")
                    || why.contains("on float32 tensors only"),
                "{name}: {e}"
            );
            return None;
        }
    };
    // a C library function the host does not model is refused by name, not compared
    let host = match Runtime::new(program, 0, target).and_then(|rt| rt.run(inputs, true)) {
        Ok(host) => host,
        Err(e @ RuntimeError::Unmodelled { .. }) => {
            eprintln!("{name}: the host refuses it: {e}");
            return None;
        }
        Err(e) => panic!("{name}: the host cannot run it: {e}"),
    };
    let dir = out_dir(&format!("sweep-{}", name.replace('/', "_")));
    let elf = firmware().expect("firmware builds (arm-none-eabi-gcc installed by .ci/run)");
    let device = etscope::board_check::captured_on_board(program, &image, &elf, &dir, name)
        .unwrap_or_else(|e| panic!("{e}"));
    // every output bit for bit, float ones after a C library call (expf, tanhf, ...) included:
    // the host computes newlib's functions as the board does (`etscope_core::kernels::libm`)
    let plan = &program.plans[0];
    let op_of = |i: i32| match usize::try_from(i)
        .ok()
        .and_then(|i| plan.main_instructions().get(i))
    {
        Some(Instruction::KernelCall { op_index, .. }) => plan
            .operators
            .get(*op_index)
            .map(|o| o.name.clone())
            .unwrap_or_default(),
        _ => String::new(),
    };
    for d in &device {
        let h = host
            .captured
            .iter()
            .find(|c| c.instruction_id == Some(d.instruction_id as usize))
            .unwrap_or_else(|| panic!("{name}: the host has no instruction {}", d.instruction_id));
        let want = h.tensors[0].to_data();
        assert!(
            d.tensor == want,
            "{name}: instruction {} ({}) differs: {:?} vs {:?}",
            d.instruction_id,
            op_of(d.instruction_id),
            d.tensor,
            want
        );
    }
    let _ = std::fs::remove_dir_all(dir);
    Some(device.len())
}

fn floats(t: &TensorData) -> Vec<f32> {
    t.bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn npy_inputs(dir: &Path, names: &[String]) -> Vec<TensorData> {
    names
        .iter()
        .map(|n| {
            etscope_core::formats::npy::read_npy(&std::fs::read(dir.join(n)).expect("npy"))
                .expect("npy")
        })
        .collect()
}

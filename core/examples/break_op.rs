//! Writes a copy of a program with one weighted operator broken (its weights and bias / kernel
//! sum negated, `etscope_core::analysis::fault`), to check that a diff finds it:
//!
//!     cargo run -p etscope-core --example break_op -- IN.pte INSTRUCTION OUT.pte
//!
//! Without INSTRUCTION it lists the weighted instructions.

use etscope_core::analysis::fault::{break_op, weighted};
use etscope_core::formats::pte::Program;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let input = args
        .first()
        .ok_or("usage: break_op IN.pte [INSTRUCTION OUT.pte]")?;
    let program = Program::parse(std::fs::read(input)?).map_err(|e| format!("{input}: {e}"))?;
    let (Some(instr), Some(out)) = (args.get(1), args.get(2)) else {
        for w in weighted(&program) {
            println!("{:>4}  {}", w.instruction, w.op);
        }
        return Ok(());
    };
    let bytes = break_op(&program, instr.parse()?)?;
    std::fs::write(out, bytes)?;
    println!("{out}: instruction {instr} broken");
    Ok(())
}

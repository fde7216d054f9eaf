//! Runs plan 0 of a program on zero inputs with a small work budget and prints the resident
//! memory after preparing and after running (for fuzzing findings).
//! `cargo run --release -p etscope-core --example run_zero -- FILE.pte`

fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
        / 1024
}

fn main() {
    let path = std::env::args().nth(1).expect("a .pte");
    let program = etscope_core::formats::pte::Program::parse(std::fs::read(&path).expect("file"))
        .expect("parses");
    let rt =
        etscope_core::runtime::Runtime::new(&program, 0, etscope_core::runtime::Target::CortexM55);
    println!("prepared ({}): peak {} MB", rt.is_ok(), rss());
    if let Ok(rt) = rt {
        let inputs = etscope_core::board_image::zero_inputs(&program, 0);
        let r = rt.run_with(
            &inputs,
            etscope_core::runtime::RunOptions {
                capture: true,
                work_budget: Some(1 << 26),
                ..Default::default()
            },
        );
        println!("ran: {:?}; peak {} MB", r.err(), rss());
    }
}

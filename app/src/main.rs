//! `etscope`: the desktop app and command-line tool for ExecuTorch programs on Arm Cortex-M.
//! With a subcommand it runs headless (`etscope --help`); otherwise it opens the window on the
//! files given.

use clap::Parser;
use etscope::cli::{Cli, Launch};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let args = Cli::parse();
    let result = match args.launch() {
        Launch::Command(command) => etscope::cli::run(command),
        Launch::Window(start) => etscope::gui::run_window(start),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // One line: "etscope: error: <file>: <what is wrong>".
            eprintln!("etscope: error: {e:#}");
            let code = if e.downcast_ref::<etscope::cli::CannotRun>().is_some() {
                etscope::cli::CannotRun::EXIT_CODE
            } else {
                2
            };
            std::process::ExitCode::from(code)
        }
    }
}

//! `etscope`: the desktop app and command-line tool for ExecuTorch programs on Arm Cortex-M.
//! Subcommands run headless (for terminals and CI); see `etscope --help`.

mod cli;
mod load;
mod table;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // One line: "etscope: error: <file>: <what is wrong>".
            eprintln!("etscope: error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

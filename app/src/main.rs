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
        Launch::Command(command) => {
            quiet_on_closed_pipe();
            etscope::cli::run(command)
        }
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

/// A command's output piped into a reader that stops early (`| head`) ends the process the
/// way every Unix tool ends, instead of a "failed printing to stdout" panic: Rust ignores
/// SIGPIPE by default, and `println!` panics on the broken pipe.
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to its default at startup, before any thread is
    // spawned, has no preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

//! `etscope`: the desktop app and command-line tool for ExecuTorch programs on Arm Cortex-M.
//! With a subcommand it runs headless (`etscope --help`); otherwise it opens the window on the
//! files given.

use clap::Parser;
use etscope::cli::{Cli, Launch};

/// mimalloc, except in a `--features system-allocator` build (heap profilers such as heaptrack
/// see the C allocator only).
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc returns freed pages to the system at once and commits arena memory as it is used,
/// instead of keeping them for reuse: loading a large ETRecord frees as much as it keeps, and the
/// retained pages showed as resident memory (about 70 MB of `stress_large`'s peak).
#[cfg(not(feature = "system-allocator"))]
fn return_freed_memory_promptly() {
    // option indices of mimalloc 2's `mi_option_e` (`mimalloc.h`)
    const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: plain option setters of the allocator, called before any other thread exists
    unsafe {
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
    }
}

#[cfg(feature = "system-allocator")]
fn return_freed_memory_promptly() {}

fn main() -> std::process::ExitCode {
    return_freed_memory_promptly();
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
            // One line: "etscope: error: <file>: <what is wrong>"; a message of several lines
            // (a FlatBuffers verifier's trace of where it looked) is folded into it
            let text = format!("{e:#}");
            let folded: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            eprintln!("etscope: error: {}", folded.join("; "));
            let code = if e.downcast_ref::<etscope::cli::CannotRun>().is_some() {
                etscope::cli::CannotRun::EXIT_CODE
            } else if e
                .downcast_ref::<etscope::cli::profile_compare::GateFailed>()
                .is_some()
            {
                etscope::cli::profile_compare::GateFailed::EXIT_CODE
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

//! Work off the frame: a [`Job`] runs one closure on its own thread with a name, a progress
//! counter and a cancel flag the closure may read, and hands back its result, a cancellation, or
//! a panic caught and reported with the job's name (never a silently dropped worker). The window
//! polls its jobs once a frame; the waker given at spawn asks for that frame when a job ends.
//! No egui here: the CLI and the tests use it as the window does.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a job's closure sees: whether it was cancelled, and where it reports progress.
#[derive(Clone)]
pub struct JobHandle {
    cancel: Arc<AtomicBool>,
    done: Arc<AtomicU64>,
    total: Arc<AtomicU64>,
}

impl JobHandle {
    /// True once the job was cancelled; a long closure checks it between steps and stops.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The flag itself, for core functions that take one (`*_cancellable`).
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }

    /// `done` of `total` steps finished.
    pub fn progress(&self, done: u64, total: u64) {
        self.total.store(total, Ordering::Relaxed);
        self.done.store(done, Ordering::Relaxed);
    }
}

/// How a job ended, once [`Job::poll`] sees it.
#[derive(Debug)]
pub enum Outcome<T> {
    /// The closure returned.
    Done(T),
    /// The closure panicked: the message names the job.
    Panicked(String),
    /// The thread went away without a result (it cannot, short of an abort; said, not hidden).
    Lost(String),
}

/// A closure running on a thread of its own.
pub struct Job<T> {
    name: String,
    rx: Receiver<Result<T, String>>,
    /// What [`Job::block_until_done`] took out of `rx` before a poll.
    early: Option<Result<T, String>>,
    /// The outcome was handed out: later polls return `None`.
    finished: bool,
    handle: JobHandle,
    started: Instant,
}

impl<T: Send + 'static> Job<T> {
    /// Runs `work` on a new thread named `name`; `wake` is called once when it ends (a
    /// window's repaint request).
    pub fn spawn(
        name: impl Into<String>,
        wake: impl Fn() + Send + 'static,
        work: impl FnOnce(&JobHandle) -> T + Send + 'static,
    ) -> Job<T> {
        let name = name.into();
        let handle = JobHandle {
            cancel: Arc::new(AtomicBool::new(false)),
            done: Arc::new(AtomicU64::new(0)),
            total: Arc::new(AtomicU64::new(0)),
        };
        let (tx, rx) = channel();
        let inner = handle.clone();
        let label = name.clone();
        let spawned = std::thread::Builder::new()
            .name(name.chars().take(15).collect())
            .spawn(move || {
                let result = catch_unwind(AssertUnwindSafe(|| work(&inner)))
                    .map_err(|payload| format!("{label} failed: {}", panic_text(&*payload)));
                let _ = tx.send(result);
                wake();
            });
        if let Err(e) = spawned {
            // no thread: the job ends at once, saying why
            let (tx, rx2) = channel();
            let _ = tx.send(Err(format!("{name}: cannot start a thread: {e}")));
            return Job {
                name,
                rx: rx2,
                early: None,
                finished: false,
                handle,
                started: Instant::now(),
            };
        }
        Job {
            name,
            rx,
            early: None,
            finished: false,
            handle,
            started: Instant::now(),
        }
    }
}

impl<T> Job<T> {
    /// The job's name, as shown beside its progress and in its errors.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Asks the closure to stop (it sees [`JobHandle::cancelled`]).
    pub fn cancel(&self) {
        self.handle.cancel.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.handle.cancelled()
    }

    /// Time since the job started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// `(done, total)` as last reported, `None` before any report.
    pub fn progress(&self) -> Option<(u64, u64)> {
        let total = self.handle.total.load(Ordering::Relaxed);
        (total > 0).then(|| (self.handle.done.load(Ordering::Relaxed).min(total), total))
    }

    /// The outcome once the job has ended, `None` while it runs. Returns it once; `None` after.
    pub fn poll(&mut self) -> Option<Outcome<T>> {
        if self.finished {
            return None;
        }
        let outcome = self.poll_once();
        self.finished = outcome.is_some();
        outcome
    }

    fn poll_once(&mut self) -> Option<Outcome<T>> {
        if let Some(early) = self.early.take() {
            return Some(match early {
                Ok(value) => Outcome::Done(value),
                Err(message) => Outcome::Panicked(message),
            });
        }
        match self.rx.try_recv() {
            Ok(Ok(value)) => Some(Outcome::Done(value)),
            Ok(Err(message)) => Some(Outcome::Panicked(message)),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Outcome::Lost(format!(
                "{} ended without a result",
                self.name
            ))),
        }
    }

    /// Blocks until the job has ended; the next [`Job::poll`] returns its outcome (a window
    /// started from the command line that must finish a job before its first picture).
    pub fn block_until_done(&mut self) {
        if self.early.is_none() {
            self.early = Some(
                self.rx
                    .recv()
                    .unwrap_or_else(|_| Err(format!("{} ended without a result", self.name))),
            );
        }
    }

    /// Waits for the outcome (tests, the CLI).
    pub fn wait(self) -> Outcome<T> {
        match self.rx.recv() {
            Ok(Ok(value)) => Outcome::Done(value),
            Ok(Err(message)) => Outcome::Panicked(message),
            Err(_) => Outcome::Lost(format!("{} ended without a result", self.name)),
        }
    }
}

impl<T> Outcome<T> {
    /// The value, or the message of a panic or a lost thread.
    pub fn into_result(self) -> Result<T, String> {
        match self {
            Outcome::Done(v) => Ok(v),
            Outcome::Panicked(m) | Outcome::Lost(m) => Err(m),
        }
    }
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn a_result_comes_back_and_the_waker_runs_once() {
        let woken = Arc::new(AtomicUsize::new(0));
        let w = woken.clone();
        let job = Job::spawn(
            "sum",
            move || {
                w.fetch_add(1, Ordering::SeqCst);
            },
            |h| {
                h.progress(3, 3);
                1 + 2
            },
        );
        assert_eq!(job.wait().into_result(), Ok(3));
        // the waker runs right after the result is sent
        let deadline = Instant::now() + Duration::from_secs(5);
        while woken.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(woken.load(Ordering::SeqCst), 1, "woken once");
    }

    #[test]
    fn the_outcome_is_handed_out_once() {
        let mut job = Job::spawn("one", || {}, |_| 1);
        job.block_until_done();
        assert!(matches!(job.poll(), Some(Outcome::Done(1))));
        assert!(
            job.poll().is_none(),
            "no second outcome, no 'lost' after the result"
        );
    }

    #[test]
    fn a_panic_is_reported_with_the_jobs_name() {
        let job: Job<()> = Job::spawn(
            "stage build of edge",
            || {},
            |_| panic!("index 7 out of range"),
        );
        let message = job.wait().into_result().expect_err("a panic");
        assert!(message.contains("stage build of edge"), "{message}");
        assert!(message.contains("index 7 out of range"), "{message}");
    }

    #[test]
    fn cancel_reaches_the_closure_and_progress_the_window() {
        let (go_tx, go_rx) = channel::<()>();
        let mut job = Job::spawn(
            "planners",
            || {},
            move |h| {
                h.progress(1, 4);
                let _ = go_rx.recv();
                let mut steps = 0;
                while !h.cancelled() && steps < 10_000 {
                    std::thread::sleep(Duration::from_millis(1));
                    steps += 1;
                }
                h.cancelled()
            },
        );
        // the first report is visible while the job waits
        let deadline = Instant::now() + Duration::from_secs(5);
        while job.progress().is_none() && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert_eq!(job.progress(), Some((1, 4)));
        assert!(job.poll().is_none(), "still running");
        job.cancel();
        let _ = go_tx.send(());
        assert_eq!(job.wait().into_result(), Ok(true));
    }
}

//! How the integer kernels pick their wide build: each hot loop is plain Rust that LLVM
//! vectorizes, compiled a second time with AVX2 on x86-64 and chosen at run time, so one binary
//! runs on any x86-64 and uses wide integer multiplies where the machine has them.

/// Whether this CPU runs the AVX2 builds.
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Defines `$plain(args) -> ret`, which calls `$body::<true>(args)` through an AVX2 build
/// (`$avx2`) when the CPU has AVX2 and `$body::<false>(args)` otherwise. `$body` passes its
/// `WIDE` parameter on to the loops that have hand-written AVX2 forms.
macro_rules! dispatch {
    ($plain:ident, $avx2:ident, $body:ident, ($($arg:ident: $ty:ty),*), $ret:ty) => {
        fn $plain($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: `$avx2` only needs AVX2, which the CPU was just found to have
                return unsafe { $avx2($($arg),*) };
            }
            $body::<false>($($arg),*)
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        fn $avx2($($arg: $ty),*) -> $ret {
            $body::<true>($($arg),*)
        }
    };
}
pub(crate) use dispatch;

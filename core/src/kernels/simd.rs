//! How the hot kernels pick their wide build: each hot loop is plain Rust that LLVM
//! vectorizes, compiled a second time with AVX2 (or another CPU feature) on x86-64 and chosen
//! at run time, so one binary runs on any x86-64 and uses wide instructions where the machine
//! has them.

/// Whether this CPU runs the AVX2 builds.
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Defines `$plain(args) -> ret`, which calls `$body` through a build of it with a CPU feature
/// (`$fast`) when the CPU has that feature, and `$body::<false>(args)` otherwise.
///
/// Doc comments before the name go to `$plain`.
///
/// - `dispatch!(vis plain, fast, body, (args), ret)`: the AVX2 build, `$body::<true>`; `$body`
///   passes its `WIDE` parameter on to the loops that have hand-written AVX2 forms.
/// - `dispatch!(vis plain, fast, body, (args), ret, "feature")`: a build with `feature` (say
///   `"fma"`), `$body::<false>`: the compiler uses the feature, nothing is hand-written for it.
macro_rules! dispatch {
    ($(#[$doc:meta])* $vis:vis $plain:ident, $fast:ident, $body:ident,
     ($($arg:ident: $ty:ty),*), $ret:ty, $feature:tt) => {
        $crate::kernels::simd::dispatch!(
            @build $feature, false, $(#[$doc])* $vis $plain, $fast, $body, ($($arg: $ty),*), $ret
        );
    };
    ($(#[$doc:meta])* $vis:vis $plain:ident, $fast:ident, $body:ident,
     ($($arg:ident: $ty:ty),*), $ret:ty) => {
        $crate::kernels::simd::dispatch!(
            @build "avx2", true, $(#[$doc])* $vis $plain, $fast, $body, ($($arg: $ty),*), $ret
        );
    };
    (@build $feature:tt, $wide:tt, $(#[$doc:meta])* $vis:vis $plain:ident, $fast:ident,
     $body:ident, ($($arg:ident: $ty:ty),*), $ret:ty) => {
        $(#[$doc])*
        $vis fn $plain($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!($feature) {
                // SAFETY: `$fast` only needs the feature, which the CPU was just found to have
                return unsafe { $fast($($arg),*) };
            }
            $body::<false>($($arg),*)
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feature)]
        fn $fast($($arg: $ty),*) -> $ret {
            $body::<$wide>($($arg),*)
        }
    };
}
pub(crate) use dispatch;

//! The kernel calling context: typed access to argument values and writing out tensors, with
//! errors that name the operator and instruction.

use super::layout;
use super::libm::{Binary, Function, Unmodelled};
use super::value::{Buf, HostTensor, RValue};
use super::{Device, RuntimeError};

/// Largest kernel size, stride, padding or dilation a kernel accepts (2^20): far above any real
/// network, and small enough that output index × stride stays within 64 bits.
pub const MAX_WINDOW_EXTENT: u64 = 1 << 20;

/// What a kernel sees of the run.
pub struct Ctx<'a> {
    pub values: &'a mut Vec<RValue>,
    pub op: &'a str,
    /// The position of each argument by the name the operator's schema gives it (the runtime
    /// asks the registry, a layer above the kernels; [`Ctx::named`]).
    pub names: &'a dyn Fn(&str) -> Option<usize>,
    pub instruction: usize,
    /// The device whose arithmetic the `cortex_m::` kernels reproduce.
    pub device: Device,
    /// Per value, the `dim_order` the program stores it in (empty: row-major or unknown).
    pub dim_orders: &'a [Vec<usize>],
    /// The run's work budget and cancel flag.
    pub work: &'a super::Work,
    /// The prepared runtime's derived constant forms (see [`Ctx::derived`]).
    pub derived: &'a super::Derived,
    /// The storage-order elements kernels wrote this run, for their readers.
    pub stored_forms: &'a mut super::StoredForms,
}

/// A tensor argument as the device sees it: logical sizes, storage order and the elements in
/// storage order.
pub struct Stored {
    pub shape: Vec<usize>,
    pub dim_order: Vec<usize>,
    pub buf: Buf,
}

impl Ctx<'_> {
    /// The device's single-precision `function`, or the error naming it when the host does not
    /// model the device's C library there.
    pub fn libm_f32(&self, function: Function) -> Result<fn(f32) -> f32, RuntimeError> {
        self.device
            .libm
            .f32_fn(function)
            .map_err(|reason| self.unmodelled(reason))
    }

    /// The device's double-precision `function`.
    pub fn libm_f64(&self, function: Function) -> Result<fn(f64) -> f64, RuntimeError> {
        self.device
            .libm
            .f64_fn(function)
            .map_err(|reason| self.unmodelled(reason))
    }

    /// The device's single-precision two-argument `function`.
    pub fn libm_f32_binary(&self, function: Binary) -> Result<fn(f32, f32) -> f32, RuntimeError> {
        self.device
            .libm
            .f32_binary_fn(function)
            .map_err(|reason| self.unmodelled(reason))
    }

    /// The device's double-precision two-argument `function`.
    pub fn libm_f64_binary(&self, function: Binary) -> Result<fn(f64, f64) -> f64, RuntimeError> {
        self.device
            .libm
            .f64_binary_fn(function)
            .map_err(|reason| self.unmodelled(reason))
    }

    fn unmodelled(&self, reason: Unmodelled) -> RuntimeError {
        RuntimeError::Unmodelled {
            op: self.op.to_string(),
            instruction: self.instruction,
            reason,
        }
    }

    /// An error about this call's arguments.
    /// The position of the argument the operator's schema calls `name` (an error naming the
    /// operator and the argument when it has none): kernels read arguments by name.
    pub fn named(&self, name: &str) -> Result<usize, RuntimeError> {
        (self.names)(name)
            .ok_or_else(|| self.bad(format!("the operator's schema has no argument {name:?}")))
    }

    pub fn bad(&self, detail: impl Into<String>) -> RuntimeError {
        RuntimeError::BadArgs {
            op: self.op.to_string(),
            instruction: self.instruction,
            detail: detail.into(),
        }
    }

    /// The error for a call the device's kernel fails on (see `core_buffers`).
    pub fn device_fails(&self, why: impl Into<String>) -> RuntimeError {
        RuntimeError::DeviceFails {
            op: self.op.to_string(),
            instruction: self.instruction,
            why: why.into(),
        }
    }

    /// Charges the work of nested loops to the run's budget before a kernel runs them: the
    /// product of the loop extents, each counted as at least 1 (an outer loop costs its
    /// iterations even when an inner extent is 0), computed saturating. Kernels whose loops an
    /// argument sizes (windows, inner dimensions) call it before looping.
    pub fn charge(&self, factors: &[usize]) -> Result<(), RuntimeError> {
        let units = factors
            .iter()
            .fold(1u64, |acc, &f| acc.saturating_mul(f.max(1) as u64));
        if self.work.cancelled() {
            return Err(RuntimeError::Cancelled {
                instruction: self.instruction,
            });
        }
        if self.work.take(units) {
            Ok(())
        } else {
            Err(RuntimeError::WorkBudget {
                op: self.op.to_string(),
                instruction: self.instruction,
                budget: self.work.budget(),
            })
        }
    }

    /// The element count of an output of `dims`, refused when absurdly large (corrupted
    /// sizes or arguments) rather than aborting on allocation.
    pub fn out_len(&self, dims: &[usize]) -> Result<usize, RuntimeError> {
        super::element_count(dims).ok_or_else(|| {
            self.bad(format!(
                "an output of shape {dims:?} exceeds {} elements",
                super::MAX_TENSOR_ELEMENTS
            ))
        })
    }

    /// A clamping range `[lo, hi]`, refused when it is empty (a corrupted program).
    pub fn range<T: PartialOrd + std::fmt::Debug>(
        &self,
        lo: T,
        hi: T,
    ) -> Result<(T, T), RuntimeError> {
        if lo <= hi {
            Ok((lo, hi))
        } else {
            Err(self.bad(format!("empty clamping range [{lo:?}, {hi:?}]")))
        }
    }

    /// Argument `k`'s value index.
    pub fn arg(&self, args: &[usize], k: usize) -> Result<usize, RuntimeError> {
        args.get(k)
            .copied()
            .ok_or_else(|| self.bad(format!("missing argument {k} (got {})", args.len())))
    }

    fn value(&self, args: &[usize], k: usize) -> Result<&RValue, RuntimeError> {
        let v = self.arg(args, k)?;
        self.values.get(v).ok_or_else(|| {
            self.bad(format!(
                "argument {k} names value {v}, which does not exist"
            ))
        })
    }

    /// Argument `k` as a tensor.
    pub fn tensor(&self, args: &[usize], k: usize) -> Result<&HostTensor, RuntimeError> {
        match self.value(args, k)? {
            RValue::Tensor(t) => Ok(t),
            other => Err(self.bad(format!(
                "argument {k} should be a tensor, is {}",
                kind(other)
            ))),
        }
    }

    /// What `make` derives from argument `k` (packed weights, say): computed once per prepared
    /// runtime when the argument is a fixed constant and `fits` the kept form, else for this
    /// call. `make` must depend only on the argument's elements and what `fits` checks.
    pub fn derived<T: std::any::Any + Send + Sync>(
        &self,
        args: &[usize],
        k: usize,
        fits: impl Fn(&T) -> bool,
        make: impl FnOnce() -> T,
    ) -> Result<std::sync::Arc<T>, RuntimeError> {
        Ok(self.derived.get_or_make(self.arg(args, k)?, fits, make))
    }

    /// Argument `k` as a tensor, shared (no copy of its elements).
    pub fn shared(
        &self,
        args: &[usize],
        k: usize,
    ) -> Result<std::sync::Arc<HostTensor>, RuntimeError> {
        match self.value(args, k)? {
            RValue::Tensor(t) => Ok(std::sync::Arc::clone(t)),
            other => Err(self.bad(format!(
                "argument {k} should be a tensor, is {}",
                kind(other)
            ))),
        }
    }

    /// Argument `k` as an optional tensor (`None` value → `None`).
    pub fn opt_tensor(
        &self,
        args: &[usize],
        k: usize,
    ) -> Result<Option<&HostTensor>, RuntimeError> {
        match self.value(args, k)? {
            RValue::None => Ok(None),
            RValue::Tensor(t) => Ok(Some(t)),
            other => Err(self.bad(format!(
                "argument {k} should be a tensor or None, is {}",
                kind(other)
            ))),
        }
    }

    /// Argument `k` as an integer.
    pub fn int(&self, args: &[usize], k: usize) -> Result<i64, RuntimeError> {
        match self.value(args, k)? {
            RValue::Int(i) => Ok(*i),
            RValue::Bool(b) => Ok(i64::from(*b)),
            other => Err(self.bad(format!("argument {k} should be an int, is {}", kind(other)))),
        }
    }

    /// Argument `k` as a float (ints accepted).
    pub fn double(&self, args: &[usize], k: usize) -> Result<f64, RuntimeError> {
        match self.value(args, k)? {
            RValue::Double(d) => Ok(*d),
            RValue::Int(i) => Ok(*i as f64),
            other => Err(self.bad(format!(
                "argument {k} should be a float, is {}",
                kind(other)
            ))),
        }
    }

    /// Argument `k` as an optional float (`None` value → `None`; ints accepted).
    pub fn opt_double(&self, args: &[usize], k: usize) -> Result<Option<f64>, RuntimeError> {
        match self.value(args, k)? {
            RValue::None => Ok(None),
            _ => self.double(args, k).map(Some),
        }
    }

    /// Argument `k` as a list of tensor value indices.
    pub fn tensor_list(&self, args: &[usize], k: usize) -> Result<Vec<usize>, RuntimeError> {
        match self.value(args, k)? {
            RValue::TensorList(v) => Ok(v.clone()),
            other => Err(self.bad(format!(
                "argument {k} should be a tensor list, is {}",
                kind(other)
            ))),
        }
    }

    /// A dim argument normalised against `rank` (negative counts from the end).
    pub fn dim(&self, d: i64, rank: usize) -> Result<usize, RuntimeError> {
        let r = rank as i64;
        let n = if d < 0 { d + r } else { d };
        if (0..r.max(1)).contains(&n) {
            Ok(n as usize)
        } else {
            Err(self.bad(format!("dim {d} out of range for rank {rank}")))
        }
    }

    /// Argument `k` as a bool.
    pub fn bool(&self, args: &[usize], k: usize) -> Result<bool, RuntimeError> {
        match self.value(args, k)? {
            RValue::Bool(b) => Ok(*b),
            RValue::Int(i) => Ok(*i != 0),
            other => Err(self.bad(format!("argument {k} should be a bool, is {}", kind(other)))),
        }
    }

    /// Argument `k` as an int list of window geometry (kernel size, stride, padding,
    /// dilation): each value within ±[`MAX_WINDOW_EXTENT`], so index arithmetic over it cannot
    /// overflow. The device's kernels take these as `int32`; a program beyond the limit
    /// describes no convolution or pooling a board runs.
    pub fn window_ints(&self, args: &[usize], k: usize) -> Result<Vec<i64>, RuntimeError> {
        let v = self.ints(args, k)?;
        if let Some(x) = v.iter().find(|x| x.unsigned_abs() > MAX_WINDOW_EXTENT) {
            return Err(self.bad(format!(
                "argument {k} (window geometry) holds {x}, beyond the {MAX_WINDOW_EXTENT} etscope's kernels take"
            )));
        }
        Ok(v)
    }

    /// Argument `k` as an int list.
    pub fn ints(&self, args: &[usize], k: usize) -> Result<Vec<i64>, RuntimeError> {
        match self.value(args, k)? {
            RValue::IntList(v) => Ok(v.clone()),
            RValue::Int(i) => Ok(vec![*i]),
            other => Err(self.bad(format!(
                "argument {k} should be an int list, is {}",
                kind(other)
            ))),
        }
    }

    /// Writes `buf` with `shape` into the out tensor at value `v`, checking it fits what the
    /// plan declared.
    pub fn write(&mut self, v: usize, shape: Vec<usize>, buf: Buf) -> Result<(), RuntimeError> {
        let n: usize = shape.iter().product();
        if n != buf.len() {
            return Err(self.bad(format!(
                "kernel produced {} elements for shape {shape:?}",
                buf.len()
            )));
        }
        let declared = match self.values.get(v) {
            Some(RValue::Tensor(t))
                if std::mem::discriminant(&t.buf) != std::mem::discriminant(&buf) =>
            {
                return Err(self.bad(format!(
                    "the kernel computed another element type than the out tensor's {}",
                    t.dtype.short_name()
                )))
            }
            Some(RValue::Tensor(t)) => t.numel(),
            _ => return Err(self.bad(format!("out value {v} is not a tensor"))),
        };
        if declared != n {
            return Err(self.bad(format!(
                "out tensor has {declared} elements, the kernel computed {n} (shape {shape:?})"
            )));
        }
        if let Some(slot @ RValue::Tensor(_)) = self.values.get_mut(v) {
            let dtype = match slot {
                RValue::Tensor(t) => t.dtype,
                _ => return Ok(()),
            };
            *slot = RValue::tensor(HostTensor { dtype, shape, buf });
        }
        Ok(())
    }

    /// Writes `buf` with `shape` into an out tensor whose size is known only at run time (a
    /// dynamic-shape out tensor, planned at its upper bound): at most the elements its plan
    /// holds, as ExecuTorch's runtime resizes such a tensor within its capacity.
    pub fn write_resized(
        &mut self,
        v: usize,
        shape: Vec<usize>,
        buf: Buf,
    ) -> Result<(), RuntimeError> {
        let (capacity, dtype) = match self.values.get(v) {
            Some(RValue::Tensor(t)) => (t.numel(), t.dtype),
            _ => return Err(self.bad(format!("out value {v} is not a tensor"))),
        };
        let n: usize = shape.iter().product();
        if n > capacity || n != buf.len() {
            return Err(self.bad(format!(
                "{n} elements (shape {shape:?}) do not fit the out tensor's {capacity}"
            )));
        }
        let buf = buf.into_like(&self.out_like(v)?);
        if let Some(slot) = self.values.get_mut(v) {
            *slot = RValue::tensor(HostTensor { dtype, shape, buf });
        }
        Ok(())
    }

    /// Writes `values` into the out tensor at value `v`, in its declared shape and element type
    /// (converted as C++ `static_cast` does).
    pub fn write_values(&mut self, v: usize, values: &[f64]) -> Result<(), RuntimeError> {
        let shape = self.out_shape(v)?;
        let like = self.out_like(v)?;
        self.write(v, shape, Buf::from_f64_like(&like, values))
    }

    /// The `dim_order` value `v` is stored in (row-major when the program gives none).
    pub fn dim_order(&self, v: usize, rank: usize) -> Vec<usize> {
        match self.dim_orders.get(v) {
            Some(d) if d.len() == rank => d.clone(),
            _ => (0..rank).collect(),
        }
    }

    /// Argument `k` as the device reads it: elements in storage order.
    pub fn stored(&self, args: &[usize], k: usize) -> Result<Stored, RuntimeError> {
        let v = self.arg(args, k)?;
        let t = self.shared(args, k)?;
        let dim_order = self.dim_order(v, t.shape.len());
        let buf = match self.stored_forms.get(v, &t, &dim_order) {
            // the storage-order elements the writing kernel computed, not reordered twice
            Some(kept) => kept.clone(),
            None => {
                self.charge_layout(t.buf.len(), &dim_order)?;
                layout::to_memory(&t.buf, &t.shape, &dim_order)
            }
        };
        Ok(Stored {
            buf,
            shape: t.shape.clone(),
            dim_order,
        })
    }

    /// The out tensor at value `v` as the device sees it before the kernel writes (a kernel
    /// that leaves elements unwritten leaves what the memory held).
    pub fn stored_out(&self, v: usize) -> Result<Stored, RuntimeError> {
        match self.values.get(v) {
            Some(RValue::Tensor(t)) => {
                let dim_order = self.dim_order(v, t.shape.len());
                self.charge_layout(t.buf.len(), &dim_order)?;
                Ok(Stored {
                    buf: layout::to_memory(&t.buf, &t.shape, &dim_order),
                    shape: t.shape.clone(),
                    dim_order,
                })
            }
            _ => Err(self.bad(format!("out value {v} is not a tensor"))),
        }
    }

    /// An empty buffer of the out tensor's element type (for kernels that produce the type
    /// the program declared).
    pub fn out_like(&self, v: usize) -> Result<Buf, RuntimeError> {
        match self.values.get(v) {
            Some(RValue::Tensor(t)) => Buf::zeros(t.dtype, 0).ok_or_else(|| {
                self.bad(format!(
                    "out tensors of {} are not supported",
                    t.dtype.name()
                ))
            }),
            _ => Err(self.bad(format!("out value {v} is not a tensor"))),
        }
    }

    /// Writes elements given in the out tensor's storage order, keeping its declared shape.
    pub fn write_stored(&mut self, v: usize, buf: Buf) -> Result<(), RuntimeError> {
        let shape = self.out_shape(v)?;
        let n: usize = shape.iter().product();
        if buf.len() != n {
            return Err(self.bad(format!(
                "out tensor has {n} elements, the kernel computed {} (shape {shape:?})",
                buf.len()
            )));
        }
        let order = self.dim_order(v, shape.len());
        if layout::is_contiguous(&order) {
            return self.write(v, shape, buf);
        }
        self.charge_layout(buf.len(), &order)?;
        let logical = layout::from_memory(&buf, &shape, &order);
        self.write(v, shape, logical)?;
        if let Some(RValue::Tensor(written)) = self.values.get(v) {
            self.stored_forms
                .keep(v, std::sync::Arc::clone(written), order, buf);
        }
        Ok(())
    }

    /// The work of reordering `elements` between logical and storage order, when `dim_order`
    /// is not the row-major one (each element walks the dims).
    fn charge_layout(&self, elements: usize, dim_order: &[usize]) -> Result<(), RuntimeError> {
        if layout::is_contiguous(dim_order) {
            return Ok(());
        }
        self.charge(&[elements, dim_order.len()])
    }

    /// The declared shape of the out tensor at value `v`.
    pub fn out_shape(&self, v: usize) -> Result<Vec<usize>, RuntimeError> {
        match self.values.get(v) {
            Some(RValue::Tensor(t)) => Ok(t.shape.clone()),
            _ => Err(self.bad(format!("out value {v} is not a tensor"))),
        }
    }
}

fn kind(v: &RValue) -> &'static str {
    match v {
        RValue::None => "None",
        RValue::Int(_) => "an int",
        RValue::Double(_) => "a float",
        RValue::Bool(_) => "a bool",
        RValue::String(_) => "a string",
        RValue::IntList(_) => "an int list",
        RValue::DoubleList(_) => "a float list",
        RValue::BoolList(_) => "a bool list",
        RValue::TensorList(_) => "a tensor list",
        RValue::OptionalTensorList(_) => "an optional tensor list",
        RValue::Tensor(_) => "a tensor",
    }
}

/// f32 elements of a tensor, or an error naming the dtype.
pub fn f32s<'t>(ctx: &Ctx<'_>, t: &'t HostTensor) -> Result<&'t [f32], RuntimeError> {
    match &t.buf {
        Buf::F32(v) => Ok(v),
        _ => Err(ctx.bad(format!(
            "etscope's kernel for it is implemented for float32 tensors only, not {}",
            t.dtype.short_name()
        ))),
    }
}

/// i8 elements of a tensor.
pub fn i8s<'t>(ctx: &Ctx<'_>, t: &'t HostTensor) -> Result<&'t [i8], RuntimeError> {
    match &t.buf {
        Buf::I8(v) => Ok(v),
        _ => Err(ctx.bad(format!(
            "expected an int8 tensor, got {}",
            t.dtype.short_name()
        ))),
    }
}

/// i8 elements of a tensor buffer.
pub fn i8b<'t>(ctx: &Ctx<'_>, buf: &'t Buf) -> Result<&'t [i8], RuntimeError> {
    match buf {
        Buf::I8(v) => Ok(v),
        _ => Err(ctx.bad("expected an int8 tensor")),
    }
}

/// f32 elements of a tensor buffer.
pub fn f32b<'t>(ctx: &Ctx<'_>, buf: &'t Buf) -> Result<&'t [f32], RuntimeError> {
    match buf {
        Buf::F32(v) => Ok(v),
        _ => Err(ctx.bad("expected a float32 tensor")),
    }
}

/// i32 elements of a tensor (int64 narrowed).
pub fn i32s(ctx: &Ctx<'_>, t: &HostTensor) -> Result<Vec<i32>, RuntimeError> {
    match &t.buf {
        Buf::I32(v) => Ok(v.clone()),
        Buf::I64(v) => Ok(v.iter().map(|&x| x as i32).collect()),
        _ => Err(ctx.bad(format!(
            "expected an int32 tensor, got {}",
            t.dtype.short_name()
        ))),
    }
}

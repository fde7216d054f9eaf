//! The program features etscope's runtime and the board firmware do not implement, found in
//! an execution plan: what changes what a method computes and is neither run exactly nor
//! without effect. Callers refuse the plan naming the feature ([`crate::runtime::support`],
//! [`crate::board_image::check_supported`]); where ExecuTorch's runtime refuses the same
//! thing when it loads the method, the description says so. `docs/compatibility.md` lists every
//! schema field with what becomes of it.

use super::{EValue, ExecutionPlan, Instruction};
use crate::ScalarType;

/// `Tensor.shape_dynamism` of a tensor whose storage the runtime allocates while running.
pub const DYNAMIC_UNBOUND: i8 = 2;
/// `ExtraTensorInfo.device_type` of host memory.
pub const DEVICE_CPU: i8 = 0;
/// `ExtraTensorInfo.location` of a tensor kept outside the program (a `.ptd`).
pub const LOCATION_EXTERNAL: i8 = 1;

/// What of `plan` etscope does not implement, described for the user; `None` when nothing.
pub fn unimplemented_feature(plan: &ExecutionPlan) -> Option<String> {
    if plan.chains.is_empty() {
        return Some("a method without chains (ExecuTorch refuses it: \"No chains\")".into());
    }
    // ExecuTorch runs the chains one after another; etscope's graph is the first chain's
    if let Some((k, c)) = plan
        .chains
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, c)| !c.instructions.is_empty())
    {
        return Some(format!(
            "a second instruction chain (chain {k} has {} instructions; etscope runs one chain)",
            c.instructions.len()
        ));
    }
    if let Some(i) = plan
        .main_instructions()
        .iter()
        .position(|i| matches!(i, Instruction::Empty))
    {
        return Some(format!(
            "an instruction without arguments (instruction {i}; ExecuTorch refuses it: \"Unknown instruction\")"
        ));
    }
    if let Some(d) = plan
        .non_const_buffer_devices
        .iter()
        .find(|d| d.device_type != DEVICE_CPU)
    {
        return Some(format!(
            "a memory-planned arena on device type {} index {} (arena {}; etscope runs on host memory only)",
            d.device_type, d.device_index, d.buffer_idx
        ));
    }
    for (i, v) in plan.values.iter().enumerate() {
        if let Some(f) = value_feature(v) {
            return Some(format!("value {i}: {f}"));
        }
    }
    None
}

/// What of one value the runtime does not implement.
fn value_feature(v: &EValue) -> Option<String> {
    let t = match v {
        EValue::Unset => {
            return Some(
                "a value without a type (ExecuTorch refuses it: \"Unknown KernelTypes value\")"
                    .into(),
            )
        }
        EValue::Tensor(t) => t,
        _ => return None,
    };
    if t.storage_offset != 0 {
        return Some(format!(
            "a tensor with storage_offset {} (ExecuTorch refuses it too: \"Non-zero storage offset not supported\")",
            t.storage_offset
        ));
    }
    if t.shape_dynamism == DYNAMIC_UNBOUND {
        return Some(
            "a tensor of unbounded dynamic shape (DYNAMIC_UNBOUND; ExecuTorch's portable runtime refuses it too)"
                .into(),
        );
    }
    if matches!(t.scalar_type, ScalarType::Unknown(_)) {
        return Some(format!(
            "a tensor of scalar type {} (ExecuTorch refuses it too: invalid ScalarType)",
            t.scalar_type.name()
        ));
    }
    if !host_holds(t.scalar_type) {
        return Some(format!(
            "a tensor of scalar type {} (the host runtime holds bool, 8- to 64-bit integers, float and double)",
            t.scalar_type.name()
        ));
    }
    if let Some(e) = &t.extra {
        if e.device_type != DEVICE_CPU {
            return Some(format!(
                "a tensor on device type {} index {} (etscope runs on host memory only)",
                e.device_type, e.device_index
            ));
        }
        if e.location == LOCATION_EXTERNAL && e.fully_qualified_name.is_none() {
            return Some(
                "a tensor stored externally without a fully qualified name (ExecuTorch refuses it too)"
                    .into(),
            );
        }
    }
    None
}

/// Whether the host runtime holds tensors of `dtype` (what `kernels::value::Buf` stores).
fn host_holds(dtype: ScalarType) -> bool {
    use ScalarType::*;
    matches!(
        dtype,
        Float | Double | Char | QInt8 | Byte | QUInt8 | Short | Int | QInt32 | Long | Bool
    )
}

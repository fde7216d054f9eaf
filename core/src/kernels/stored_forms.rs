//! The storage-order elements a kernel wrote, kept for the kernels that read them next.
//!
//! A channels-last kernel computes its output in storage order; the runtime keeps values in
//! logical order, so the output is reordered once to be written and, without this, reordered
//! back by every channels-last reader. A [`StoredForms`] remembers the storage-order elements
//! beside the value they came from: a reader that asks for the same value in the same order
//! gets them without reordering. The record holds the very tensor it was made with and is
//! used only while the value table still holds that tensor (pointer identity), so a value
//! replaced since (by a kernel, a view refresh or an arena load) is reordered afresh, never
//! read stale.

use std::sync::Arc;

use super::value::{Buf, HostTensor};

/// One run's kept storage-order forms, one slot per value.
#[derive(Default)]
pub struct StoredForms {
    slots: Vec<Option<Kept>>,
}

struct Kept {
    tensor: Arc<HostTensor>,
    dim_order: Vec<usize>,
    buf: Buf,
}

impl StoredForms {
    /// Remembers that `tensor` (now value `v`) stores `buf` in `dim_order`.
    pub fn keep(&mut self, v: usize, tensor: Arc<HostTensor>, dim_order: Vec<usize>, buf: Buf) {
        if self.slots.len() <= v {
            self.slots.resize_with(v + 1, || None);
        }
        self.slots[v] = Some(Kept {
            tensor,
            dim_order,
            buf,
        });
    }

    /// The storage-order elements of `tensor` (value `v`) in `dim_order`, when they were kept
    /// for this very tensor.
    pub fn get(&self, v: usize, tensor: &Arc<HostTensor>, dim_order: &[usize]) -> Option<&Buf> {
        let kept = self.slots.get(v)?.as_ref()?;
        (Arc::ptr_eq(&kept.tensor, tensor) && kept.dim_order == dim_order).then_some(&kept.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ScalarType;

    fn tensor(values: Vec<i8>) -> Arc<HostTensor> {
        Arc::new(HostTensor {
            dtype: ScalarType::Char,
            shape: vec![values.len()],
            buf: Buf::I8(values),
        })
    }

    #[test]
    fn a_kept_form_serves_only_its_own_tensor_in_its_own_order() {
        let mut forms = StoredForms::default();
        let written = tensor(vec![1, 2, 3]);
        forms.keep(4, Arc::clone(&written), vec![0], Buf::I8(vec![1, 2, 3]));
        assert_eq!(forms.get(4, &written, &[0]), Some(&Buf::I8(vec![1, 2, 3])));
        // another order, another value, or an equal tensor that replaced it: nothing
        assert_eq!(forms.get(4, &written, &[1]), None);
        assert_eq!(forms.get(3, &written, &[0]), None);
        let replaced = tensor(vec![1, 2, 3]);
        assert_eq!(forms.get(4, &replaced, &[0]), None);
    }
}

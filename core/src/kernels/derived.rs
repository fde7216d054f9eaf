//! Forms of a program's constants derived once per prepared runtime and shared by every run of
//! it: weights widened and packed for the integer GEMM, for instance. A kernel asks for one
//! through [`super::Ctx::derived`]; it gets the stored form when the argument is a fixed constant
//! (the program's data, never written by any instruction) and the stored form fits the call,
//! and a freshly computed one otherwise, so a cache can make a run faster, never different.

use std::any::Any;
use std::sync::{Arc, OnceLock};

/// One cell per value slot: `Some` for the fixed constants, whose derived form may be kept.
#[derive(Default)]
pub struct Derived {
    cells: Vec<Option<OnceLock<Arc<dyn Any + Send + Sync>>>>,
}

impl Derived {
    /// A store whose slot `v` may keep a derived form when `fixed[v]`.
    pub fn new(fixed: impl IntoIterator<Item = bool>) -> Derived {
        Derived {
            cells: fixed.into_iter().map(|f| f.then(OnceLock::new)).collect(),
        }
    }

    /// Whether slot `slot` may keep a derived form (a fixed constant).
    pub fn is_fixed(&self, slot: usize) -> bool {
        self.cells.get(slot).is_some_and(Option::is_some)
    }

    /// The form of value `slot` that `make` derives, kept when the slot is fixed; `fits` says
    /// whether a kept form was derived for this call's parameters (another call may read the
    /// same constant differently, e.g. with another offset): when it was not, the form is
    /// derived again for this call and not kept.
    pub fn get_or_make<T: Any + Send + Sync>(
        &self,
        slot: usize,
        fits: impl Fn(&T) -> bool,
        make: impl FnOnce() -> T,
    ) -> Arc<T> {
        let Some(cell) = self.cells.get(slot).and_then(Option::as_ref) else {
            return Arc::new(make());
        };
        if let Some(kept) = cell.get() {
            return match Arc::clone(kept).downcast::<T>() {
                Ok(t) if fits(&t) => t,
                _ => Arc::new(make()),
            };
        }
        let made = Arc::new(make());
        // a run on another thread may have kept its own form first: both are the same
        let _ = cell.set(Arc::clone(&made) as Arc<dyn Any + Send + Sync>);
        made
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_fixed_slot_keeps_its_form_and_a_call_it_does_not_fit_derives_its_own() {
        let store = Derived::new([true, false]);
        let made = Cell::new(0);
        let make = |v: i32| {
            made.set(made.get() + 1);
            v
        };
        assert_eq!(*store.get_or_make(0, |&v: &i32| v == 7, || make(7)), 7);
        assert_eq!(*store.get_or_make(0, |&v: &i32| v == 7, || make(7)), 7);
        assert_eq!(made.get(), 1, "the kept form is reused");
        // another parameter: derived for the call, the kept one untouched
        assert_eq!(*store.get_or_make(0, |&v: &i32| v == 8, || make(8)), 8);
        assert_eq!(*store.get_or_make(0, |&v: &i32| v == 7, || make(7)), 7);
        assert_eq!(made.get(), 2);
        // another type at the same slot: derived, not confused with the kept one
        assert_eq!(*store.get_or_make(0, |_: &u8| true, || 3u8), 3);
        // a slot that is not fixed (or does not exist) never keeps anything
        for slot in [1, 9] {
            store.get_or_make(slot, |&v: &i32| v == 1, || make(1));
            store.get_or_make(slot, |&v: &i32| v == 1, || make(1));
        }
        assert_eq!(made.get(), 6);
    }
}

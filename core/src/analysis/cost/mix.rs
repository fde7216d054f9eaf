//! An instruction mix: how many instructions of each class a stretch of a kernel executes, and
//! its cycles on a core. The mixes of CMSIS-NN's loops are counted from its code at dbf45dbf
//! (the commit ExecuTorch 1.5.1 pins) as `arm-none-eabi-gcc -O2` compiles it for each core
//! (`scripts/cost/loop_mix.py`); docs/cost-model.md lists each loop and its addresses.

use super::cores::Timing;
use std::ops::{Add, Mul};

/// Instruction counts per class (fractional once scaled by a trip count).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Mix {
    pub alu: f64,
    pub load: f64,
    pub store: f64,
    pub multiply: f64,
    pub branch: f64,
    pub vector_load_store: f64,
    pub vector_op: f64,
}

impl Mix {
    /// A scalar mix: ALU, loads, stores, multiplies, taken branches.
    pub const fn scalar(alu: f64, load: f64, store: f64, multiply: f64, branch: f64) -> Mix {
        Mix {
            alu,
            load,
            store,
            multiply,
            branch,
            vector_load_store: 0.0,
            vector_op: 0.0,
        }
    }

    /// A mix with Helium instructions.
    pub const fn helium(scalar: Mix, vector_load_store: f64, vector_op: f64) -> Mix {
        Mix {
            vector_load_store,
            vector_op,
            ..scalar
        }
    }

    /// Instructions in all.
    pub fn instructions(&self) -> f64 {
        self.alu
            + self.load
            + self.store
            + self.multiply
            + self.branch
            + self.vector_load_store
            + self.vector_op
    }

    /// Cycles on a core with timing `t`.
    pub fn cycles(&self, t: &Timing) -> f64 {
        self.alu * t.alu
            + self.load * t.load
            + self.store * t.store
            + self.multiply * t.multiply
            + self.branch * t.branch
            + self.vector_load_store * t.vector_load_store
            + self.vector_op * t.vector_op
    }
}

impl Add for Mix {
    type Output = Mix;
    fn add(self, o: Mix) -> Mix {
        Mix {
            alu: self.alu + o.alu,
            load: self.load + o.load,
            store: self.store + o.store,
            multiply: self.multiply + o.multiply,
            branch: self.branch + o.branch,
            vector_load_store: self.vector_load_store + o.vector_load_store,
            vector_op: self.vector_op + o.vector_op,
        }
    }
}

impl Mul<f64> for Mix {
    type Output = Mix;
    fn mul(self, k: f64) -> Mix {
        Mix {
            alu: self.alu * k,
            load: self.load * k,
            store: self.store * k,
            multiply: self.multiply * k,
            branch: self.branch * k,
            vector_load_store: self.vector_load_store * k,
            vector_op: self.vector_op * k,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::cost::cores::Core;

    #[test]
    fn a_mix_prices_each_class_at_its_cores_timing() {
        let m = Mix::scalar(37.0, 20.0, 1.0, 32.0, 1.0);
        assert_eq!(m.instructions(), 91.0);
        // the M4's DSP inner loop of arm_nn_mat_mult_nt_t_s8: LDR 2, taken branch 3
        assert_eq!(
            m.cycles(&Core::M4.timing().expect("timed")),
            37.0 + 40.0 + 1.0 + 32.0 + 3.0
        );
        assert_eq!((m * 2.0 + m).instructions(), 273.0);
    }
}

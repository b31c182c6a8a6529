//! Split-K's `cluster_sum` on a CPU that runs programs one after another.
//! Programs run with grid axis 2 slowest, so when the last program of a
//! cluster (`program_id(2) == splits - 1`) sums, the others have run and
//! left their partial tiles here. The sum is in the GPU's order: the last
//! program's own tile, then the others' by `program_id(2)`.
use super::value::Data;
use crate::ir::ValueId;
use std::collections::HashMap;

#[derive(Default)]
pub(crate) struct ClusterPartials {
    /// By grid point (axes 0 and 1) and the op's result: the partial tiles
    /// of the programs that ran so far, in `program_id(2)` order.
    by_point: HashMap<(u32, u32, ValueId), Vec<Vec<f32>>>,
}

impl ClusterPartials {
    /// The result of `cluster_sum` of `src` over `splits` programs for the
    /// program `pid` of `grid`.
    pub fn sum(
        &mut self,
        pid: [u32; 3],
        grid: [u32; 3],
        splits: u32,
        result: ValueId,
        src: &Data,
    ) -> Result<Data, String> {
        if grid[2] != splits {
            return Err(format!(
                "cluster_sum over {splits} programs needs a grid of {splits} along axis 2, \
                 not {} (launchers multiply the grid's z by the kernel's split count)",
                grid[2]
            ));
        }
        let Data::F32(own) = src else {
            return Err("cluster_sum of a tile that is not f32".into());
        };
        let partials = self.by_point.entry((pid[0], pid[1], result)).or_default();
        if partials.len() != pid[2] as usize {
            return Err(format!(
                "cluster_sum reached twice (or out of order) by program_id(2) = {}",
                pid[2]
            ));
        }
        if pid[2] + 1 < splits {
            partials.push(own.clone());
            return Ok(src.clone());
        }
        let mut total = own.clone();
        for partial in partials.iter() {
            for (t, p) in total.iter_mut().zip(partial) {
                *t += *p;
            }
        }
        self.by_point.remove(&(pid[0], pid[1], result));
        Ok(Data::F32(total))
    }
}

//! Live intervals of values over the ops of a function numbered in program
//! order (pre-order: an op, then the ops of its regions). Codegen uses them to
//! share shared-memory buffers between tiles that are never live together.
//!
//! A value is live from its definition to its last use. A use inside a loop
//! (`While` condition or body) of a value defined before the loop keeps it
//! live to the end of the loop, since the next iteration reads it again.
//! Region arguments and the results of `If`/`While` are defined at the
//! position of their op; region yields are uses at the end of their region.

use crate::ir::walk::{operands, regions};
use crate::ir::{Function, OpKind, Region, ValueId};
use std::collections::HashMap;

/// Positions `def..=last_use` (op numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveInterval {
    pub def: usize,
    pub last_use: usize,
}

impl LiveInterval {
    pub fn contains(&self, pos: usize) -> bool {
        self.def <= pos && pos <= self.last_use
    }

    pub fn overlaps(&self, other: &LiveInterval) -> bool {
        self.def <= other.last_use && other.def <= self.last_use
    }
}

/// Where an op sits: its own number and the number of the last op nested
/// in its regions (`end == start` for ops without regions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpPosition {
    pub start: usize,
    pub end: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Liveness {
    /// One entry per op, in the order of [`crate::ir::walk::walk_ops`].
    pub ops: Vec<OpPosition>,
    intervals: HashMap<ValueId, LiveInterval>,
}

impl Liveness {
    pub fn compute(func: &Function) -> Liveness {
        let mut ops = Vec::new();
        number(&func.body, &mut ops);
        let mut walk = Walk {
            positions: &ops,
            next: 0,
            loops: Vec::new(),
            intervals: HashMap::new(),
        };
        for p in &func.params {
            walk.define(p.value, 0);
        }
        walk.region(&func.body, 0);
        let intervals = walk.intervals;
        Liveness { ops, intervals }
    }

    pub fn interval(&self, v: ValueId) -> Option<LiveInterval> {
        self.intervals.get(&v).copied()
    }

    /// Both values defined, and live at some common position.
    pub fn interfere(&self, a: ValueId, b: ValueId) -> bool {
        match (self.interval(a), self.interval(b)) {
            (Some(x), Some(y)) => x.overlaps(&y),
            _ => false,
        }
    }

    /// Values live at op number `pos`, sorted.
    pub fn live_at(&self, pos: usize) -> Vec<ValueId> {
        let mut v: Vec<ValueId> = self
            .intervals
            .iter()
            .filter(|(_, i)| i.contains(pos))
            .map(|(&v, _)| v)
            .collect();
        v.sort();
        v
    }
}

/// Pre-order numbering; returns nothing, fills `out` in walk order.
fn number(region: &Region, out: &mut Vec<OpPosition>) {
    for op in &region.ops {
        let at = out.len();
        out.push(OpPosition { start: at, end: at });
        for r in regions(&op.kind) {
            number(r, out);
        }
        out[at].end = out.len() - 1;
    }
}

struct Walk<'a> {
    positions: &'a [OpPosition],
    /// Number of the next op met.
    next: usize,
    /// Enclosing loops, outermost first.
    loops: Vec<OpPosition>,
    intervals: HashMap<ValueId, LiveInterval>,
}

impl Walk<'_> {
    fn define(&mut self, v: ValueId, pos: usize) {
        self.intervals.insert(
            v,
            LiveInterval {
                def: pos,
                last_use: pos,
            },
        );
    }

    fn use_at(&mut self, v: ValueId, pos: usize) {
        let Some(interval) = self.intervals.get_mut(&v) else {
            return; // undefined (bad IR): nothing to extend
        };
        let mut end = pos;
        for l in &self.loops {
            if interval.def < l.start {
                end = end.max(l.end);
            }
        }
        interval.last_use = interval.last_use.max(end);
    }

    /// `owner`: position of the op owning the region (0 for the body).
    fn region(&mut self, region: &Region, owner: usize) {
        for &a in &region.args {
            self.define(a, owner);
        }
        for op in &region.ops {
            let pos = self.positions[self.next];
            self.next += 1;
            for v in operands(&op.kind) {
                self.use_at(v, pos.start);
            }
            let is_loop = matches!(op.kind, OpKind::While { .. });
            if is_loop {
                self.loops.push(pos);
            }
            for r in regions(&op.kind) {
                self.region(r, pos.start);
            }
            if is_loop {
                self.loops.pop();
            }
            for &r in &op.results {
                self.define(r, pos.start);
            }
        }
        // Yields are read when the region ends: after its last (nested) op.
        let end = if self.next > 0 && !region.ops.is_empty() {
            self.next - 1
        } else {
            owner
        };
        for &y in &region.yields {
            self.use_at(y, end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_overlap() {
        let a = LiveInterval {
            def: 1,
            last_use: 4,
        };
        let b = LiveInterval {
            def: 4,
            last_use: 6,
        };
        let c = LiveInterval {
            def: 5,
            last_use: 5,
        };
        assert!(a.overlaps(&b) && b.overlaps(&a));
        assert!(!a.overlaps(&c));
        assert!(a.contains(4) && !a.contains(5));
    }
}

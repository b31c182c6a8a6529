//! Variables in SSA form: each name maps to its declared type and the IR value
//! it currently holds. Assignment rebinds the name; control flow compares and
//! restores bindings through snapshots.

use crate::ir::{Type, ValueId};
use crate::span::Span;

#[derive(Clone, Debug)]
pub struct Var {
    pub name: String,
    /// The declared type; every value bound to the variable has exactly this type.
    pub ty: Type,
    /// `None` while a pointer declared without initializer is still unset.
    pub value: Option<ValueId>,
    pub decl_span: Span,
    /// Its declaration failed (already reported): uses fail silently.
    pub poisoned: bool,
}

/// Where a variable lives: its frame and position there. Stable while the
/// frame is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VarRef {
    frame: usize,
    index: usize,
}

/// Nested block scopes, innermost last. Frames are small, so they are plain
/// vectors (which also keeps every iteration order deterministic).
#[derive(Default)]
pub struct Scopes {
    frames: Vec<Vec<Var>>,
}

/// The values of every variable visible when it was taken.
pub struct Snapshot(Vec<(VarRef, Option<ValueId>)>);

impl Snapshot {
    /// The value `r` had (`None` also when `r` was not visible then).
    pub fn value(&self, r: VarRef) -> Option<ValueId> {
        self.0.iter().find(|(x, _)| *x == r).and_then(|(_, v)| *v)
    }

    /// Variables whose values differ between `self` and `later` (taken with the
    /// same frames open), in declaration order.
    pub fn changed_in(&self, later: &Snapshot) -> Vec<VarRef> {
        self.0
            .iter()
            .filter(|(r, v)| later.value(*r) != *v)
            .map(|(r, _)| *r)
            .collect()
    }
}

impl Scopes {
    pub fn push(&mut self) {
        self.frames.push(Vec::new());
    }

    pub fn pop(&mut self) {
        self.frames.pop();
    }

    /// How many frames are open.
    pub fn depth(&self) -> usize {
        self.frames.len()
    }

    /// Closes frames down to `depth` (error recovery).
    pub fn truncate(&mut self, depth: usize) {
        self.frames.truncate(depth);
    }

    /// Adds `var` to the innermost frame; on a name clash there, returns the
    /// span of the earlier declaration.
    pub fn declare(&mut self, var: Var) -> Result<VarRef, Span> {
        let frame = self.frames.len() - 1;
        let vars = &mut self.frames[frame];
        if let Some(prev) = vars.iter().find(|v| v.name == var.name) {
            return Err(prev.decl_span);
        }
        vars.push(var);
        Ok(VarRef {
            frame,
            index: vars.len() - 1,
        })
    }

    /// The innermost variable called `name`.
    pub fn lookup(&self, name: &str) -> Option<VarRef> {
        self.frames
            .iter()
            .enumerate()
            .rev()
            .find_map(|(frame, vars)| {
                vars.iter()
                    .position(|v| v.name == name)
                    .map(|index| VarRef { frame, index })
            })
    }

    pub fn get(&self, r: VarRef) -> &Var {
        &self.frames[r.frame][r.index]
    }

    pub fn set(&mut self, r: VarRef, value: ValueId) {
        self.frames[r.frame][r.index].value = Some(value);
    }

    pub fn snapshot(&self) -> Snapshot {
        let mut out = Vec::new();
        for (frame, vars) in self.frames.iter().enumerate() {
            for (index, v) in vars.iter().enumerate() {
                out.push((VarRef { frame, index }, v.value));
            }
        }
        Snapshot(out)
    }

    /// Puts back the values of `snap` (frames opened since must be closed).
    pub fn restore(&mut self, snap: &Snapshot) {
        for (r, value) in &snap.0 {
            self.frames[r.frame][r.index].value = *value;
        }
    }

    /// Variables of `snap` whose value is different now, in declaration order.
    pub fn changed_since(&self, snap: &Snapshot) -> Vec<VarRef> {
        snap.0
            .iter()
            .filter(|(r, value)| self.get(*r).value != *value)
            .map(|(r, _)| *r)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::DType;

    fn var(name: &str) -> Var {
        Var {
            name: name.into(),
            ty: Type::num(DType::I32),
            value: Some(ValueId(0)),
            decl_span: Span::default(),
            poisoned: false,
        }
    }

    #[test]
    fn shadowing_and_snapshots() {
        let mut s = Scopes::default();
        s.push();
        let x = s.declare(var("x")).unwrap();
        assert!(s.declare(var("x")).is_err());
        s.push();
        let inner = s.declare(var("x")).unwrap();
        assert_eq!(s.lookup("x"), Some(inner));
        s.pop();
        assert_eq!(s.lookup("x"), Some(x));
        let snap = s.snapshot();
        s.set(x, ValueId(7));
        assert_eq!(s.changed_since(&snap), vec![x]);
        s.restore(&snap);
        assert_eq!(s.get(x).value, Some(ValueId(0)));
    }
}

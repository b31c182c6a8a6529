//! Builds IR functions op by op: sema uses it, and tests use it to write IR by hand.

use super::function::*;
use super::types::Type;
use crate::span::Span;

pub struct FunctionBuilder {
    func: Function,
    /// Regions being filled, innermost last; `func.body` is filled through it too.
    open: Vec<Region>,
}

impl FunctionBuilder {
    pub fn new(name: impl Into<String>, span: Span) -> Self {
        let func = Function {
            layouts: None,
            shared: None,
            dot_engines: Default::default(),
            name: name.into(),
            params: Vec::new(),
            body: Region::default(),
            values: Vec::new(),
            span,
        };
        FunctionBuilder {
            func,
            open: vec![Region::default()],
        }
    }

    pub fn new_value(&mut self, ty: Type, name: Option<String>) -> ValueId {
        self.func.new_value(ty, name)
    }

    pub fn ty(&self, v: ValueId) -> &Type {
        self.func.ty(v)
    }

    /// Names a value for printing (the last source name wins).
    pub fn set_name(&mut self, v: ValueId, name: &str) {
        self.func.values[v.0 as usize].name = Some(name.to_string());
    }

    pub fn add_param(&mut self, name: &str, ty: Type, attrs: ParamAttrs) -> ValueId {
        let value = self.new_value(ty, Some(name.to_string()));
        self.func.params.push(Param {
            name: name.to_string(),
            value,
            attrs,
        });
        value
    }

    /// Appends an op to the innermost open region and returns its results,
    /// one new value per entry of `result_types`.
    pub fn push(&mut self, kind: OpKind, result_types: Vec<Type>, span: Span) -> Vec<ValueId> {
        let results: Vec<ValueId> = result_types
            .into_iter()
            .map(|t| self.new_value(t, None))
            .collect();
        self.current().ops.push(Op {
            kind,
            results: results.clone(),
            span,
        });
        results
    }

    /// `push` for ops with exactly one result.
    pub fn push1(&mut self, kind: OpKind, result_type: Type, span: Span) -> ValueId {
        self.push(kind, vec![result_type], span)[0]
    }

    /// Starts a nested region whose args have the given types; ops pushed from
    /// now on go into it until [`FunctionBuilder::close_region`].
    pub fn open_region(&mut self, arg_types: Vec<Type>) -> Vec<ValueId> {
        let args: Vec<ValueId> = arg_types
            .into_iter()
            .map(|t| self.new_value(t, None))
            .collect();
        self.open.push(Region {
            args: args.clone(),
            ops: Vec::new(),
            yields: Vec::new(),
        });
        args
    }

    /// Finishes the innermost nested region with its yielded values.
    pub fn close_region(&mut self, yields: Vec<ValueId>) -> Region {
        assert!(self.open.len() > 1, "close_region without open_region");
        let mut region = self.open.pop().expect("open region");
        region.yields = yields;
        region
    }

    pub fn current(&mut self) -> &mut Region {
        self.open.last_mut().expect("an open region")
    }

    pub fn finish(mut self) -> Function {
        assert_eq!(self.open.len(), 1, "unclosed regions");
        self.func.body = self.open.pop().expect("body region");
        self.func
    }
}

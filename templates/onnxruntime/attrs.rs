// Copied verbatim by triton-opgen: the op's attributes (the spec's `attr`
// lines, op_spec::ATTRS) read from the ONNX node: through the kernel info
// for the custom op (CPU and CUDA execution providers), through the node
// for the plugin EP. A bool attribute is an ONNX int (0 or 1). A missing
// attribute takes its default; without one, or of the wrong type, the
// session cannot be created and the status names the attribute.
use crate::{api, op_spec};
use ort_sys::*;
use std::ffi::{c_char, CStr, CString};

#[derive(Clone, Copy, Debug)]
#[allow(dead_code)]
pub enum AttrKind {
    Float,
    Int,
    Bool,
}

#[derive(Clone, Copy, Debug)]
#[allow(dead_code)]
pub enum AttrValue {
    Float(f64),
    Int(i64),
}

impl AttrValue {
    pub fn as_f64(self) -> f64 {
        match self {
            AttrValue::Float(v) => v,
            AttrValue::Int(v) => v as f64,
        }
    }

    pub fn as_i64(self) -> i64 {
        match self {
            AttrValue::Float(v) => v as i64,
            AttrValue::Int(v) => v,
        }
    }

    /// For keys (plans are cached per shapes and attribute values).
    pub fn bits(self) -> u64 {
        match self {
            AttrValue::Float(v) => v.to_bits(),
            AttrValue::Int(v) => v as u64,
        }
    }
}

pub struct AttrDesc {
    pub name: &'static str,
    pub kind: AttrKind,
    pub default: Option<AttrValue>,
}

fn kind_text(kind: AttrKind) -> &'static str {
    match kind {
        AttrKind::Float => "a float (ONNX FLOAT)",
        AttrKind::Int => "an int (ONNX INT)",
        AttrKind::Bool => "a bool (ONNX INT, 0 or 1)",
    }
}

/// The value, or the default, or why there is none.
fn resolve(desc: &AttrDesc, found: Result<Option<AttrValue>, String>) -> Result<AttrValue, String> {
    let value = match found {
        Ok(Some(v)) => v,
        Ok(None) => desc.default.ok_or_else(|| {
            format!(
                "{}: the node has no attribute `{}` ({}), which the op needs (it has no default)",
                op_spec::QUALIFIED,
                desc.name,
                kind_text(desc.kind)
            )
        })?,
        Err(why) => {
            return Err(format!(
                "{}: attribute `{}` must be {}: {why}",
                op_spec::QUALIFIED,
                desc.name,
                kind_text(desc.kind)
            ))
        }
    };
    if let (AttrKind::Bool, AttrValue::Int(v)) = (desc.kind, value) {
        if v != 0 && v != 1 {
            return Err(format!(
                "{}: attribute `{}` is a bool (ONNX INT, 0 or 1), got {v}",
                op_spec::QUALIFIED,
                desc.name
            ));
        }
    }
    Ok(value)
}

unsafe fn status_text(status: OrtStatusPtr) -> String {
    let text = CStr::from_ptr((api().GetErrorMessage)(status.0)).to_string_lossy().into_owned();
    (api().ReleaseStatus)(status.0);
    text
}

/// Every attribute of the node, from the custom op's kernel info.
pub unsafe fn from_kernel_info(info: *const OrtKernelInfo) -> Result<Vec<AttrValue>, String> {
    let api = api();
    op_spec::ATTRS
        .iter()
        .map(|desc| {
            let name = CString::new(desc.name).unwrap_or_default();
            let found = match desc.kind {
                AttrKind::Float => {
                    let mut v = 0f32;
                    let status = (api.KernelInfoGetAttribute_float)(info, name.as_ptr(), &mut v);
                    (status.0.is_null(), AttrValue::Float(v as f64), status)
                }
                AttrKind::Int | AttrKind::Bool => {
                    let mut v = 0i64;
                    let status = (api.KernelInfoGetAttribute_int64)(info, name.as_ptr(), &mut v);
                    (status.0.is_null(), AttrValue::Int(v), status)
                }
            };
            let found = match found {
                (true, value, _) => Ok(Some(value)),
                (false, _, status) => {
                    let why = status_text(status);
                    // ORT words a missing attribute "No attribute with name:'alpha'is defined."
                    if why.contains("No attribute") { Ok(None) } else { Err(why) }
                }
            };
            resolve(desc, found)
        })
        .collect()
}

/// Every attribute of `node`, for the plugin EP (which sees the graph's node).
pub unsafe fn from_node(node: *const OrtNode) -> Result<Vec<AttrValue>, String> {
    let api = api();
    op_spec::ATTRS
        .iter()
        .map(|desc| {
            let name = CString::new(desc.name).unwrap_or_default();
            let mut attr: *const OrtOpAttr = std::ptr::null();
            let status = (api.Node_GetAttributeByName)(node, name.as_ptr() as *const c_char, &mut attr);
            let found = if !status.0.is_null() || attr.is_null() {
                if !status.0.is_null() {
                    let _ = status_text(status);
                }
                Ok(None)
            } else {
                let mut ty = OrtOpAttrType::ORT_OP_ATTR_UNDEFINED;
                let status = (api.OpAttr_GetType)(attr, &mut ty);
                if !status.0.is_null() {
                    Err(status_text(status))
                } else {
                    read_node_attr(attr, ty, desc.kind)
                }
            };
            resolve(desc, found)
        })
        .collect()
}

unsafe fn read_node_attr(attr: *const OrtOpAttr, ty: OrtOpAttrType, kind: AttrKind) -> Result<Option<AttrValue>, String> {
    let api = api();
    let mut written = 0usize;
    match (kind, ty) {
        (AttrKind::Float, OrtOpAttrType::ORT_OP_ATTR_FLOAT) => {
            let mut v = 0f32;
            let status = (api.ReadOpAttr)(attr, ty, (&mut v as *mut f32).cast(), std::mem::size_of::<f32>(), &mut written);
            if status.0.is_null() { Ok(Some(AttrValue::Float(v as f64))) } else { Err(status_text(status)) }
        }
        (AttrKind::Int | AttrKind::Bool, OrtOpAttrType::ORT_OP_ATTR_INT) => {
            let mut v = 0i64;
            let status = (api.ReadOpAttr)(attr, ty, (&mut v as *mut i64).cast(), std::mem::size_of::<i64>(), &mut written);
            if status.0.is_null() { Ok(Some(AttrValue::Int(v))) } else { Err(status_text(status)) }
        }
        (_, other) => Err(format!("the node's attribute has type {other:?}")),
    }
}

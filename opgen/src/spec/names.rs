//! The names a spec gives (op, namespace, tensors, dims, dtype variables,
//! macros) become C++, Python and TensorFlow identifiers in the generated
//! code, beside the generator's own: each must be a plain identifier that is
//! no keyword of those languages and no name the templates declare, so that
//! the generated op always compiles and means what the spec says.

use super::{Dim, OpSpec};
use tritonc::diagnostics::Diagnostic;
use tritonc::span::Span;

/// Longest op or namespace name: library files are named after both
/// (`libNS_OP_tf.so`), and a file name may have 255 bytes.
pub const MAX_OP_NAME: usize = 64;

const CPP_KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char8_t",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "concept",
    "const",
    "consteval",
    "constexpr",
    "constinit",
    "const_cast",
    "continue",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
    "final",
    "override",
    "NULL",
];

const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Names the generated code uses, unprefixed, in the scopes where a spec's
/// names are declared: C++ types, namespaces and macros of the frameworks,
/// and the Python helper's own names. (Its C++ locals, functions and tables
/// all carry the reserved prefix `opgen_`.)
const GENERATED: &[&str] = &[
    // C++, unqualified in the op bodies
    "at",
    "c10",
    "std",
    "torch",
    "tensorflow",
    "absl",
    "stream_executor",
    // the runtime bridge's namespaces (its cxx header: opgen::launch, rust::Error)
    "opgen",
    "rust",
    "int64_t",
    "int32_t",
    "uint32_t",
    "uint64_t",
    "uint8_t",
    "size_t",
    "uintptr_t",
    "TORCH_CHECK",
    "OP_REQUIRES",
    "OP_REQUIRES_OK",
    "TF_RETURN_IF_ERROR",
    "InvalidArgument",
    "ShapeHandle",
    "DimensionHandle",
    "InferenceContext",
    "OpKernel",
    // the TensorFlow helper's op function and gradient
    "name",
    "tf",
    "load",
    "operation",
    "grads",
    "_checked",
    "_op",
    // the JAX handler's namespaces (C++), the module's imports and function
    "xla",
    "ffi",
    "jax",
    "jnp",
    "result_types",
];

/// Prefixes the generator keeps for itself (`opgen_cdiv`, `opgen_arg0`,
/// `OpgenDenseView`, `dtype_T`).
const RESERVED_PREFIXES: &[&str] = &["opgen_", "OPGEN_", "Opgen", "dtype_"];

/// Checks every name of `spec` (see the module doc).
pub fn check_names(spec: &OpSpec) -> Result<(), Diagnostic> {
    for (what, name) in [("namespace", &spec.namespace), ("op name", &spec.name)] {
        check_op_part(what, name, spec.span)?;
    }
    let tensors: Vec<_> = spec.inputs.iter().chain(spec.outputs.iter()).collect();
    for t in &tensors {
        check_name("tensor", &t.name, t.span)?;
        for d in &t.dims {
            if let Dim::Sym(s) = d {
                check_name("dim", s, t.span)?;
            }
        }
        // `x_arg`, `x_t` and `x_out` are the generated locals of a tensor `x`.
        for suffix in ["_arg", "_t", "_out"] {
            if let Some(other) = tensors
                .iter()
                .find(|o| format!("{}{suffix}", o.name) == t.name)
            {
                return Err(Diagnostic::error(
                    t.span,
                    format!(
                        "tensor `{}` has the name the generated code gives a local of tensor `{}`; rename it",
                        t.name, other.name
                    ),
                )
                .with_label(other.span, "that tensor"));
            }
        }
    }
    for d in &spec.dtypes {
        check_name("dtype variable", &d.var, d.span)?;
    }
    for d in &spec.derived_dtypes {
        check_name("dtype variable", &d.var, d.span)?;
    }
    for m in spec.tune.iter().chain(spec.defines.iter()) {
        check_name("macro", &m.name, m.span)?;
    }
    for a in &spec.attrs {
        // TensorFlow attr names start with a letter.
        if !a.name.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return Err(Diagnostic::error(
                a.span,
                format!(
                    "attribute `{}` must start with a letter (TensorFlow names its attr so)",
                    a.name
                ),
            ));
        }
        check_name("attribute", &a.name, a.span)?;
    }
    Ok(())
}

/// A namespace or op name: an identifier of letters, digits and `_` that
/// starts with a letter (TensorFlow's op name is their CamelCase), short
/// enough for a file name.
fn check_op_part(what: &str, name: &str, span: Span) -> Result<(), Diagnostic> {
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(Diagnostic::error(
            span,
            format!("{what} `{name}` must start with a letter (TensorFlow names the op by it in CamelCase)"),
        ));
    }
    if name.len() > MAX_OP_NAME {
        return Err(Diagnostic::error(
            span,
            format!(
                "{what} `{}...` has {} characters; at most {MAX_OP_NAME} (library files are named after it)",
                &name[..16],
                name.len()
            ),
        ));
    }
    check_name(what, name, span)
}

fn check_name(what: &str, name: &str, span: Span) -> Result<(), Diagnostic> {
    let identifier = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !identifier {
        return Err(Diagnostic::error(
            span,
            format!("{what} `{name}` is not an identifier (letters, digits and `_`, not starting with a digit)"),
        ));
    }
    let clash = if CPP_KEYWORDS.contains(&name) {
        Some("a C++ keyword")
    } else if PYTHON_KEYWORDS.contains(&name) {
        Some("a Python keyword")
    } else if GENERATED.contains(&name) {
        Some("a name the generated code uses")
    } else if RESERVED_PREFIXES.iter().any(|p| name.starts_with(p)) {
        Some("in the generator's reserved prefixes (`opgen_`, `OPGEN_`, `Opgen`, `dtype_`)")
    } else if name.starts_with("__")
        || name.starts_with(|c: char| c == '_')
            && name[1..].starts_with(|c: char| c.is_ascii_uppercase())
    {
        Some("reserved in C++ (`__` or `_` and a capital)")
    } else {
        None
    };
    match clash {
        Some(why) => Err(Diagnostic::error(
            span,
            format!("{what} `{name}` is {why}; rename it (e.g. `{name}_`)"),
        )),
        None => Ok(()),
    }
}

//! The C++ that the frameworks whose op is C++ (PyTorch, TensorFlow, JAX)
//! share: the launch (input checks, dims, variant table, grid, requirements,
//! kernel arguments) in the names the framework gives dtypes and data
//! pointers, the embedded PTX, the bridge's C header, the build folder and
//! the library build.

mod build;
mod folder;
mod kernels;
pub mod launch;
mod text;

pub use build::{build_shared_library, CppBuild};
pub use folder::{render_folder, write_build_folder};
pub use kernels::kernels_cpp;
pub use launch::{ArgCtx, CppLaunch, CppWords};
pub use text::{cpp_all, dims_cpp};

/// The C ABI of the prebuilt runtime (`plugins/bridge`), copied into build folders.
pub const BRIDGE_HEADER: &str = include_str!("../../../plugins/bridge/include/opgen_bridge.h");

/// The C++ type an attribute is read as where the framework gives floats as
/// `float` (TensorFlow's `GetAttr`, XLA FFI's `Attr<float>`).
pub fn attr_cpp_type(ty: crate::spec::AttrType) -> &'static str {
    match ty {
        crate::spec::AttrType::Float => "float",
        crate::spec::AttrType::Int => "int64_t",
        crate::spec::AttrType::Bool => "bool",
    }
}

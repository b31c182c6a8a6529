//! With the `cxx` feature (the static library's), compiles the C++ shim that
//! cxx generates from src/ffi.rs into the library: the generated header's
//! functions (`opgen::launch`, ...) are defined there, and the archive then
//! holds them with cxx's runtime (`rust::Error`, `rust::String`), so a build
//! folder links it with g++ alone. triton-opgen writes the header itself
//! (opgen/build.rs, cxx-gen of the same version).

fn main() {
    println!("cargo:rerun-if-changed=src/ffi.rs");
    #[cfg(feature = "cxx")]
    cxx_build::bridge("src/ffi.rs")
        .std("c++14")
        .compile("opgen-bridge-cxx");
}

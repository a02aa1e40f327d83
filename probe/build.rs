fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-link-arg-bins=-nostartfiles");
    println!("cargo:rustc-link-arg-bins=-Wl,--no-as-needed");
    println!("cargo:rustc-link-arg-bins=-l:libdl.so.2");
    println!("cargo:rustc-link-arg-bins=-lc");
}

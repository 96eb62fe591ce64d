//! Gives the shared library its SONAME, `libredlock.so.<ABI>`: programs record that name and
//! keep loading any later library of the same ABI (`make install` adds the versioned file and
//! the `libredlock.so.<ABI>` / `libredlock.so` symlinks).

/// The ABI number in the SONAME. Bump it (and say so in CHANGELOG.md) on any change that breaks
/// programs linked against an earlier library: a removed or changed function, a changed struct
/// layout other than a field appended to `redlock_options` (see `struct_size`).
const ABI: u32 = 0;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libredlock.so.{ABI}");
    }
}

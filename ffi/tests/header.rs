//! The committed `include/redlock.h` must be exactly what the pinned cbindgen generates from
//! the current sources: change an exported signature without regenerating and this fails.
//! `make header` (REDLOCK_REGENERATE_HEADER=1) rewrites the file instead.

use std::path::Path;

fn generate() -> String {
    let crate_dir = env!("CARGO_MANIFEST_DIR");
    let mut config = cbindgen::Config::from_file(Path::new(crate_dir).join("cbindgen.toml"))
        .expect("ffi/cbindgen.toml parses");
    // The version macros follow Cargo.toml, so a version bump also needs a regenerated header.
    config.after_includes = Some(format!(
        "\n#define REDLOCK_VERSION_MAJOR {}\n#define REDLOCK_VERSION_MINOR {}\n#define REDLOCK_VERSION_PATCH {}\n#define REDLOCK_VERSION \"{}\"",
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_PATCH"),
        env!("CARGO_PKG_VERSION"),
    ));
    let inline_functions = config.trailer.take().unwrap_or_default();
    let mut header = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut header);
    let header = String::from_utf8(header).expect("the header is UTF-8");
    // The inline functions use the declarations: after them, inside `extern "C"` and the guard.
    let end_of_declarations = "#ifdef __cplusplus\n}  // extern \"C\"";
    let at = header
        .rfind(end_of_declarations)
        .expect("the generated header closes its extern \"C\" block");
    format!(
        "{}{}\n\n{}",
        &header[..at],
        inline_functions.trim_start(),
        &header[at..]
    )
}

#[test]
fn committed_header_matches_the_sources() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/redlock.h");
    let generated = generate();
    if std::env::var_os("REDLOCK_REGENERATE_HEADER").is_some() {
        std::fs::write(&path, &generated).expect("write include/redlock.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is out of date with ffi/src: run `make header` and commit the result.\n\
         First differing line: {:?}",
        path.display(),
        committed
            .lines()
            .zip(generated.lines())
            .find(|(a, b)| a != b)
            .map_or_else(
                || "(one file is a prefix of the other)".to_string(),
                |(a, b)| format!("committed {a:?} vs generated {b:?}")
            )
    );
}

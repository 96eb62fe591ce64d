//! Command-line parsing: durations, lists, defaults, and bad values named in the error.

use std::time::Duration;

use clap::Parser;
use redlock_loadgen::cli::values::FanoutChoice;
use redlock_loadgen::cli::{Cli, Command};
use redlock_loadgen::model::values::{HoldSpec, KeyDist};

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("redlock-loadgen").chain(args.iter().copied()))
}

fn rejected(args: &[&str]) -> String {
    let err = parse(args).expect_err("should be rejected");
    assert_eq!(err.exit_code(), 2, "bad arguments exit with 2");
    err.to_string()
}

#[test]
fn no_arguments_is_the_default_run() {
    let cli = parse(&[]).unwrap();
    assert!(cli.command.is_none());
    let run = cli.run;
    assert_eq!(run.clients, 16);
    assert_eq!(run.rate, None);
    assert!(run.target.masters.is_empty() && run.target.spawn.is_none());
    assert_eq!(run.workload.fanout, FanoutChoice::Both);
    assert_eq!(
        run.workload.resources, None,
        "run's default (1) is applied later"
    );
    assert_eq!(run.workload.ttl, Duration::from_secs(1));
    assert_eq!(run.workload.retry_delay, Duration::from_millis(200));
    assert_eq!(
        run.workload.duration, None,
        "the command picks its own default"
    );
}

#[test]
fn durations_and_lists_parse() {
    let cli = parse(&[
        "run",
        "--masters",
        "redis://127.0.0.1:7001,redis://127.0.0.1:7002,redis://127.0.0.1:7003",
        "--duration",
        "10s",
        "--warmup",
        "500ms",
        "--ttl",
        "1m30s",
        "--hold",
        "1ms..5ms",
        "--key-dist",
        "zipf:1.1",
        "--rate",
        "2500",
        "--fanout",
        "concurrent",
        "-q",
    ])
    .unwrap();
    let Some(Command::Run(run)) = cli.command else {
        panic!("expected run");
    };
    assert_eq!(run.target.masters.len(), 3);
    assert_eq!(run.workload.duration, Some(Duration::from_secs(10)));
    assert_eq!(run.workload.warmup, Some(Duration::from_millis(500)));
    assert_eq!(run.workload.ttl, Duration::from_secs(90));
    assert_eq!(
        run.workload.hold,
        HoldSpec {
            min: Duration::from_millis(1),
            max: Duration::from_millis(5)
        }
    );
    assert_eq!(run.workload.key_dist, KeyDist::Zipf(1.1));
    assert_eq!(run.rate, Some(2500.0));
    assert!(run.workload.quiet);

    let Some(Command::Sweep(sweep)) = parse(&["sweep", "--clients", "1,4,16,64"]).unwrap().command
    else {
        panic!("expected sweep");
    };
    assert_eq!(sweep.clients, vec![1, 4, 16, 64]);
    let Some(Command::Merge(merge)) = parse(&["merge", "a.json", "b.json"]).unwrap().command else {
        panic!("expected merge");
    };
    assert_eq!(merge.inputs.len(), 2);
}

#[test]
fn bad_values_are_rejected_with_the_flag_named() {
    let cases: &[(&[&str], &str)] = &[
        (&["--duration", "ten"], "--duration"),
        (&["--duration", "0s"], "--duration"),
        (&["--ttl=-5ms"], "--ttl"),
        (&["--ttl", "5 parsecs"], "--ttl"),
        (&["--clients", "0"], "--clients"),
        (&["--clients", "many"], "--clients"),
        (&["--clients", "100000"], "16384"),
        (&["--duration", "2h"], "1h"),
        (&["--warmup", "1h"], "10m"),
        (&["--percentiles", "50,abc"], "--percentiles"),
        (&["capacity", "--slo", "p99>10ms"], "--slo"),
        (&["capacity", "--min-success", "120%"], "--min-success"),
        (&["--rate=-3"], "--rate"),
        (&["--rate", "inf"], "--rate"),
        (&["--rate", "1e-300"], "--rate"),
        (&["--duration", "100000000y"], "--duration"),
        (&["--hold", "1ms..400days"], "--hold"),
        (&["--hold", "5ms..1ms"], "--hold"),
        (&["--key-dist", "gauss"], "--key-dist"),
        (&["--fanout", "parallel"], "--fanout"),
        (&["--masters", "127.0.0.1:7001"], "--masters"),
        (&["--resources", "0"], "--resources"),
        (&["--resources", "4000000000"], "--resources"),
        (&["--extend", "4294967295"], "--extend"),
        (
            &["--masters", "redis://127.0.0.1:1", "--spawn", "3"],
            "--spawn",
        ),
        (&["sweep", "--clients", "1,x,16"], "--clients"),
        (&["sweep"], "--clients"),
        (&["merge", "only-one.json"], "FILE"),
    ];
    for (args, flag) in cases {
        let message = rejected(args);
        assert!(
            message.contains(flag),
            "{args:?}: message does not name {flag}: {message}"
        );
    }
    // The bad value itself is quoted too.
    assert!(rejected(&["--duration", "ten"]).contains("ten"));
}

/// The client flags default to the core's constants (what the C and Python surfaces use too).
#[test]
fn client_flag_defaults_are_the_cores() {
    let workload = parse(&[]).unwrap().run.workload;
    assert_eq!(workload.retry_count, redlock_core::DEFAULT_RETRY_COUNT);
    assert_eq!(workload.retry_delay, redlock_core::DEFAULT_RETRY_DELAY);
    assert_eq!(
        workload.instance_timeout,
        redlock_core::DEFAULT_INSTANCE_TIMEOUT
    );
    assert_eq!(workload.quorum, None, "the core's majority");
    let Some(Command::Sweep(sweep)) = parse(&["sweep", "--clients", "1,2"]).unwrap().command else {
        panic!("expected sweep");
    };
    assert_eq!(
        sweep.workload.retry_delay,
        redlock_core::DEFAULT_RETRY_DELAY
    );
}

/// `--masters` takes what the core takes (unix sockets too) and refuses what it refuses, with
/// the core's reason.
#[test]
fn masters_are_checked_by_the_core() {
    let cli = parse(&[
        "--masters",
        "unix:///tmp/redis-a.sock,redis://127.0.0.1:7002",
    ])
    .unwrap();
    assert_eq!(
        cli.run.target.masters,
        ["unix:///tmp/redis-a.sock", "redis://127.0.0.1:7002"]
    );
    let message = rejected(&["--masters", "redis://127.0.0.1:notaport"]);
    assert!(
        message.contains("--masters") && message.contains("notaport"),
        "{message}"
    );
    assert!(
        message.contains("not a valid redis://, rediss:// or unix:// URL"),
        "{message}"
    );
}

#[test]
fn a_bad_masters_value_is_named_without_its_password() {
    for value in [
        "foo://user:S3cretPass@127.0.0.1:1",
        "redis://127.0.0.1:1,http://:S3cretPass@127.0.0.1:2",
    ] {
        let message = rejected(&["--masters", value]);
        assert!(message.contains("--masters"), "{message}");
        assert!(
            !message.contains("S3cretPass"),
            "password echoed: {message}"
        );
        assert!(message.contains("127.0.0.1"), "{message}");
    }
}

#[test]
fn capacity_defaults_are_the_documented_objective() {
    let Some(Command::Capacity(c)) = parse(&["capacity"]).unwrap().command else {
        panic!("expected capacity");
    };
    assert_eq!(c.slo.to_string(), "p99<10ms");
    assert!((c.min_success - 0.999).abs() < 1e-12);
    assert_eq!(
        c.workload.resources, None,
        "capacity applies its own default (10000)"
    );
    assert_eq!(c.max_steps, 10);
}

#[test]
fn help_lists_the_exit_codes() {
    for args in [&["--help"][..], &["run", "--help"], &["capacity", "--help"]] {
        let help = parse(args).expect_err("help exits").to_string();
        for code in [
            "0 success",
            "1 failure",
            "2 bad argument",
            "3 mutual-exclusion",
            "130",
        ] {
            assert!(help.contains(code), "{args:?}: no {code:?} in\n{help}");
        }
    }
}

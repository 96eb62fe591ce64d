//! Command-line parsing: durations, lists, defaults, and bad values named in the error.

use std::time::Duration;

use clap::Parser;
use redlock_loadgen::cli::{Cli, Command, FanoutChoice};
use redlock_loadgen::config::{HoldSpec, KeyDist};

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
    assert_eq!(run.workload.resources, 1);
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

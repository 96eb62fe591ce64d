//! The Kubernetes manifests (`deploy/kubernetes/*.yaml`) and the image's `loadgen/Dockerfile`
//! agree with each other and with the CLI: the Job runs N agents at once and tells them
//! `--agents N`; its arguments parse as a real `run` command and carry no URL (passwords come
//! from the Secret through the environment); the Secret, Service and image names match; the
//! image and the pods run as the same non-root user.

use std::path::{Path, PathBuf};

use clap::Parser;
use redlock_loadgen::cli::{Cli, Command};
use redlock_loadgen::plans::coordinator::Coordination;
use yaml_rust2::{Yaml, YamlLoader};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every document of every manifest, by kind.
fn manifests() -> Vec<Yaml> {
    let dir = repo().join("deploy/kubernetes");
    let mut docs = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let text = std::fs::read_to_string(&path).unwrap();
            let parsed = YamlLoader::load_from_str(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            docs.extend(parsed);
        }
    }
    docs
}

fn of_kind<'a>(docs: &'a [Yaml], kind: &str) -> &'a Yaml {
    let found: Vec<&Yaml> = docs
        .iter()
        .filter(|d| d["kind"].as_str() == Some(kind))
        .collect();
    assert_eq!(found.len(), 1, "exactly one {kind} in deploy/kubernetes");
    found[0]
}

fn s<'a>(y: &'a Yaml, what: &str) -> &'a str {
    y.as_str()
        .unwrap_or_else(|| panic!("{what} is not a string: {y:?}"))
}

fn i(y: &Yaml, what: &str) -> i64 {
    y.as_i64()
        .unwrap_or_else(|| panic!("{what} is not an integer: {y:?}"))
}

fn env<'a>(container: &'a Yaml, name: &str) -> &'a Yaml {
    container["env"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|e| e["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("the agent container has no env {name}"))
}

#[test]
fn manifests_and_dockerfile_agree() {
    let docs = manifests();
    let job = of_kind(&docs, "Job");
    let secret = of_kind(&docs, "Secret");
    let service = of_kind(&docs, "Service");
    let deployment = of_kind(&docs, "Deployment");

    // N agents, all at once (they wait for each other), never retried.
    let spec = &job["spec"];
    assert_eq!(s(&spec["completionMode"], "completionMode"), "Indexed");
    let n = i(&spec["completions"], "completions");
    assert_eq!(i(&spec["parallelism"], "parallelism"), n);
    assert_eq!(i(&spec["backoffLimit"], "backoffLimit"), 0);
    let pod = &spec["template"]["spec"];
    assert_eq!(s(&pod["restartPolicy"], "restartPolicy"), "Never");
    let container = &pod["containers"][0];

    // The arguments: a real `run` command for N agents, with no URL (so no password) on it.
    let args: Vec<String> = container["args"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|a| s(a, "an arg").to_string())
        .collect();
    assert!(
        args.iter().all(|a| !a.contains("://")),
        "no URL on the command line: {args:?}"
    );
    let run_id = env(container, "RUN_ID");
    assert_eq!(
        s(&run_id["valueFrom"]["fieldRef"]["fieldPath"], "RUN_ID"),
        "metadata.labels['batch.kubernetes.io/controller-uid']"
    );
    // Masters from the Secret, by name and key.
    let from_secret = &env(container, "REDLOCK_LOADGEN_MASTERS")["valueFrom"]["secretKeyRef"];
    assert_eq!(
        s(&from_secret["name"], "secretKeyRef.name"),
        s(&secret["metadata"]["name"], "Secret name")
    );
    let masters = s(
        &secret["stringData"][s(&from_secret["key"], "secretKeyRef.key")],
        "the Secret's masters",
    );
    // The coordinator is the Service, on its port.
    let coordinator = s(
        &env(container, "REDLOCK_LOADGEN_COORDINATOR")["value"],
        "REDLOCK_LOADGEN_COORDINATOR",
    );
    let port = i(&service["spec"]["ports"][0]["port"], "Service port");
    assert_eq!(
        coordinator,
        format!(
            "redis://{}:{port}",
            s(&service["metadata"]["name"], "Service name")
        )
    );
    // What the pod's environment gives the binary, passed as flags here (the parser is the
    // same): the Job's arguments are a valid `run` of N agents under the Job's uid.
    let mut argv = vec!["redlock-loadgen".to_string()];
    argv.extend(
        args.iter()
            .map(|a| a.replace("$(RUN_ID)", "0b9e1c52-job-uid")),
    );
    argv.extend([
        "--masters".into(),
        masters.to_string(),
        "--coordinator".into(),
        coordinator.to_string(),
    ]);
    let cli = Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    let Some(Command::Run(run)) = cli.command else {
        panic!("the Job's agents do not `run`: {args:?}");
    };
    let coordination = Coordination::from_args(&run.agents).expect("the agents are coordinated");
    assert_eq!(i64::from(coordination.agents), n, "--agents = completions");
    assert_eq!(coordination.run_id.as_deref(), Some("0b9e1c52-job-uid"));
    assert_eq!(run.target.masters.len(), 5);

    // The coordinator Service selects the coordinator Deployment's pods, on its port.
    let pod_labels = &deployment["spec"]["template"]["metadata"]["labels"];
    for (k, v) in service["spec"]["selector"].as_hash().unwrap() {
        assert_eq!(&pod_labels[s(k, "selector key")], v, "Service selector");
    }
    let target_port = s(&service["spec"]["ports"][0]["targetPort"], "targetPort");
    let ports = deployment["spec"]["template"]["spec"]["containers"][0]["ports"]
        .as_vec()
        .unwrap();
    assert!(ports
        .iter()
        .any(|p| p["name"].as_str() == Some(target_port)));

    // The image the Job runs is the one the Dockerfile says to build, and both run as the
    // same non-root user.
    let dockerfile = std::fs::read_to_string(repo().join("loadgen/Dockerfile")).unwrap();
    let image = s(&container["image"], "image");
    assert!(
        dockerfile.contains(&format!("docker build -f loadgen/Dockerfile -t {image} .")),
        "the Dockerfile builds {image}"
    );
    assert!(dockerfile.matches("\nFROM ").count() >= 2, "multi-stage");
    assert!(dockerfile.contains("cargo build --release --locked -p redlock-loadgen"));
    let uid = i(&pod["securityContext"]["runAsUser"], "runAsUser");
    assert!(uid != 0);
    assert_eq!(pod["securityContext"]["runAsNonRoot"].as_bool(), Some(true));
    assert!(
        dockerfile.contains(&format!("\nUSER {uid}:")),
        "the image's USER is the pods' runAsUser {uid}"
    );
}

#!/usr/bin/env python3
"""`make test-deploy`: the manifests of deploy/kubernetes against a real Kubernetes API server.

Starts etcd, kube-apiserver and kube-controller-manager (job and serviceaccount controllers) on
loopback (cluster.py), then checks that:
- the manifests pass a server-side dry run with strict field validation, then apply;
- broken copies of the agents' Job (a misspelled field, an unknown field, a misspelled value)
  are refused, and the refusal names the field;
- the Job controller makes the Job's N pods, indexed 0..N-1, each with JOB_COMPLETION_INDEX,
  RUN_ID from the Job's uid and the masters from the Secret.
There is no kubelet, so the pods stay Pending: the agents do not run here. Every wait is
bounded; the servers are stopped by pid at the end, on Ctrl-C or SIGTERM too, and a process
left behind is a failure.

Usage: run.py --tools DIR --manifests DIR --version vX.Y.Z [--logs DIR] [--broken]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from cluster import Cluster, StartError

JOB = "redlock-loadgen-agents"
JOB_FILE = "agents-job.yaml"
INDEX_KEY = "batch.kubernetes.io/job-completion-index"
UID_LABEL = "batch.kubernetes.io/controller-uid"
# How each agent's environment must reach it: the index the Job controller adds (from the pod's
# label since the pod index label went GA, from its annotation before), the run id from the
# Job's uid (agents-job.yaml), the masters from the Secret.
INDEX_REFS = {f"metadata.labels['{INDEX_KEY}']", f"metadata.annotations['{INDEX_KEY}']"}
RUN_ID_REF = f"metadata.labels['{UID_LABEL}']"
# Broken copies of the Job: (what, text to replace, replacement, what the refusal must say).
BROKEN = [
    ("misspelled field completionMode", "completionMode: Indexed", "completionMod: Indexed",
     ['unknown field "spec.completionMod"']),
    ("unknown field in the pod spec", "      restartPolicy: Never\n",
     "      restartPolicy: Never\n      agentsPerNode: 1\n",
     ['unknown field "spec.template.spec.agentsPerNode"']),
    ("misspelled value of completionMode", "completionMode: Indexed", "completionMode: Indexd",
     ["spec.completionMode", "Indexd"]),
]
KUBECTL_TIMEOUT = 120.0


class Failed(Exception):
    """A check that failed: the message says which and why."""


class Report:
    """Step lines as they happen, and the summary at the end."""

    def __init__(self) -> None:
        self.passed: list[str] = []
        self.failed: list[str] = []
        self.start = time.monotonic()

    def step(self, text: str) -> None:
        print(f"==> [{time.monotonic() - self.start:6.1f} s] {text}", flush=True)

    def ok(self, text: str) -> None:
        self.passed.append(text)
        print(f"    ok    {text}", flush=True)

    def fail(self, text: str) -> None:
        self.failed.append(text)
        print(f"    FAIL  {text}", flush=True)

    def check(self, ok: bool, text: str, why: str) -> None:
        if ok:
            self.ok(text)
        else:
            self.fail(f"{text}: {why}")

    def summary(self) -> int:
        took = time.monotonic() - self.start
        print(f"\ntest-deploy summary ({took:.0f} s):")
        for text in self.failed:
            print(f"  FAILED: {text.splitlines()[0]}")
        print(f"test-deploy: {len(self.passed)} passed, {len(self.failed)} failed")
        return 1 if self.failed else 0


class Kubectl:
    def __init__(self, binary: Path, cluster: Cluster) -> None:
        self.binary = binary
        self.cluster = cluster

    def run(self, *args: str, timeout: float = KUBECTL_TIMEOUT) -> subprocess.CompletedProcess:
        # The kubeconfig on the command line (not in the environment) so that the leak check
        # sees it; the discovery cache in the temporary directory, not in ~/.kube.
        command = [str(self.binary), f"--kubeconfig={self.cluster.kubeconfig}",
                   f"--cache-dir={self.cluster.dir / 'kube-cache'}", *args]
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise Failed(f"kubectl {' '.join(args)}: no answer within {timeout:.0f} s")

    def json(self, *args: str) -> dict:
        done = self.run(*args, "-o", "json")
        if done.returncode != 0:
            raise Failed(f"kubectl {' '.join(args)}: {one_line(done.stderr)}")
        return json.loads(done.stdout)


def poll(what: str, timeout: float, probe):
    """probe() until it returns something true; Failed naming `what` past the bound."""
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() >= deadline:
            raise Failed(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.5)


def start(cluster: Cluster, report: Report) -> None:
    report.step("credentials (openssl: self-signed serving certificate, service-account key)")
    cluster.write_credentials()
    report.step("etcd on loopback")
    took = cluster.start_etcd(60)
    report.ok(f"etcd healthy at {cluster.etcd_url} after {took:.1f} s")
    report.step("kube-apiserver on loopback (token file, RBAC, strict TLS)")
    took = cluster.start_apiserver(240)
    report.ok(f"kube-apiserver /readyz ok at 127.0.0.1:{cluster.api_port} after {took:.1f} s")
    report.step("kube-controller-manager --controllers=job,serviceaccount")
    cluster.start_controller_manager()


def check_version(kubectl: Kubectl, version: str, report: Report) -> None:
    versions = kubectl.json("version")
    server = versions.get("serverVersion", {}).get("gitVersion")
    client = versions.get("clientVersion", {}).get("gitVersion")
    report.check(server == version and client == version,
                 f"server and kubectl are Kubernetes {version}",
                 f"server {server}, kubectl {client}")


def wait_for_service_account(kubectl: Kubectl, cluster: Cluster, report: Report) -> None:
    """Pods are refused until their namespace has its default service account, which the
    serviceaccount controller creates: it is also the sign that the controller manager works."""
    began = time.monotonic()

    def made() -> bool:
        if cluster.dead():
            raise Failed("; ".join(cluster.dead()))
        return kubectl.run("get", "serviceaccount", "default").returncode == 0

    poll("the serviceaccount controller's default/default", 120, made)
    report.ok(f"controller manager running: default service account after "
              f"{time.monotonic() - began:.1f} s")


def dry_run(kubectl: Kubectl, path: Path) -> subprocess.CompletedProcess:
    return kubectl.run("apply", "--dry-run=server", "--validate=strict", "-f", str(path))


def check_dry_run(kubectl: Kubectl, manifests: Path, report: Report) -> None:
    report.step(f"kubectl apply --dry-run=server --validate=strict -f {manifests}")
    done = dry_run(kubectl, manifests)
    for line in done.stdout.splitlines():
        print(f"    | {line}")
    if done.returncode != 0:
        raise Failed(f"the server refused the manifests: {one_line(done.stderr)}")
    report.ok("the manifests pass the server's dry run with strict field validation")


def one_line(text: str) -> str:
    """kubectl's errors, one per line, on one line: the summary shows first lines."""
    return " / ".join(line.strip() for line in text.strip().splitlines())


def check_refusals(kubectl: Kubectl, manifests: Path, scratch: Path, report: Report) -> None:
    report.step(f"broken copies of {JOB_FILE} must be refused, naming the field")
    original = (manifests / JOB_FILE).read_text()
    for number, (what, old, new, expected) in enumerate(BROKEN):
        if old not in original:
            report.fail(f"{what}: cannot plant it, {old.strip()!r} is not in {JOB_FILE}")
            continue
        broken = scratch / f"broken-{number}-{JOB_FILE}"
        broken.write_text(original.replace(old, new, 1))
        done = dry_run(kubectl, broken)
        said = (done.stdout + done.stderr).strip()
        print(f"    | {what}: exit {done.returncode}: {said.splitlines()[-1] if said else ''}")
        if done.returncode == 0:
            report.fail(f"{what}: accepted by the server")
        else:
            missing = [text for text in expected if text not in said]
            report.check(not missing, f"{what}: refused, naming {expected[0]}",
                         f"refused without naming {missing}: {one_line(said)}")


def apply(kubectl: Kubectl, manifests: Path, report: Report) -> dict:
    report.step(f"kubectl apply --validate=strict -f {manifests}")
    done = kubectl.run("apply", "--validate=strict", "-f", str(manifests))
    for line in done.stdout.splitlines():
        print(f"    | {line}")
    if done.returncode != 0:
        raise Failed(f"kubectl apply failed: {one_line(done.stderr)}")
    job = kubectl.json("get", "job", JOB)
    report.ok(f"applied; Job {JOB} has uid {job['metadata']['uid']}")
    return job


def check_pods(kubectl: Kubectl, job: dict, report: Report) -> None:
    n = job["spec"]["completions"]
    uid = job["metadata"]["uid"]
    report.step(f"the Job controller's {n} pods (no kubelet: they stay Pending, as expected)")

    def listed() -> list[dict]:
        pods = kubectl.json("get", "pods", "-l", f"{UID_LABEL}={uid}")["items"]
        return pods if len(pods) >= n else []

    pods = poll(f"{n} pods of Job {JOB}", 90, listed)
    report.check(len(pods) == n, f"{n} pods, as completions says", f"{len(pods)} pods")
    indexes = sorted(pod_index(pod) for pod in pods)
    report.check(indexes == [str(i) for i in range(n)], f"completion indexes 0..{n - 1}",
                 f"found {indexes}")
    for pod in pods:
        check_pod(kubectl, pod, uid, report)
    phases = sorted({pod["status"].get("phase", "?") for pod in pods})
    report.check(phases == ["Pending"], "every pod Pending (expected: no kubelet here)",
                 f"phases {phases}")


def pod_index(pod: dict) -> str:
    meta = pod["metadata"]
    annotation = meta.get("annotations", {}).get(INDEX_KEY)
    label = meta.get("labels", {}).get(INDEX_KEY)
    return annotation if annotation == label else f"{annotation}≠{label}"


def check_pod(kubectl: Kubectl, pod: dict, uid: str, report: Report) -> None:
    name = pod["metadata"]["name"]
    env = {var["name"]: var for var in pod["spec"]["containers"][0].get("env", [])}
    problems = []
    if field_ref(env, "JOB_COMPLETION_INDEX") not in INDEX_REFS:
        problems.append(f"JOB_COMPLETION_INDEX is {env.get('JOB_COMPLETION_INDEX')}")
    if field_ref(env, "RUN_ID") != RUN_ID_REF:
        problems.append(f"RUN_ID is {env.get('RUN_ID')}")
    if pod["metadata"].get("labels", {}).get(UID_LABEL) != uid:
        problems.append(f"label {UID_LABEL} is not the Job's uid {uid}")
    problems += masters_problems(kubectl, env)
    report.check(not problems, f"{name} (index {pod_index(pod)}): JOB_COMPLETION_INDEX, "
                 "RUN_ID = Job uid, masters from the Secret", "; ".join(problems))


def field_ref(env: dict, name: str) -> str | None:
    return env.get(name, {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")


def masters_problems(kubectl: Kubectl, env: dict) -> list[str]:
    ref = env.get("REDLOCK_LOADGEN_MASTERS", {}).get("valueFrom", {}).get("secretKeyRef")
    if not ref:
        return ["REDLOCK_LOADGEN_MASTERS is not taken from a Secret"]
    secret = kubectl.json("get", "secret", ref["name"])
    if ref["key"] not in secret.get("data", {}):
        return [f"Secret {ref['name']} has no key {ref['key']}"]
    return []


def check_coordinator(kubectl: Kubectl, report: Report) -> None:
    service = kubectl.json("get", "service", "redlock-loadgen-coordinator")
    ip = service["spec"].get("clusterIP")
    report.check(bool(ip), f"coordinator Service has a cluster IP ({ip}, allocated only)",
                 "no cluster IP")


def run_checks(cluster: Cluster, args: argparse.Namespace, report: Report) -> None:
    start(cluster, report)
    kubectl = Kubectl(args.tools / "kubectl", cluster)
    check_version(kubectl, args.version, report)
    wait_for_service_account(kubectl, cluster, report)
    manifests = args.manifests
    if args.broken:
        manifests = plant_broken(args.manifests, cluster.dir / "manifests")
    check_dry_run(kubectl, manifests, report)
    check_refusals(kubectl, manifests, cluster.dir, report)
    job = apply(kubectl, manifests, report)
    check_pods(kubectl, job, report)
    check_coordinator(kubectl, report)
    if cluster.dead():
        report.fail("a server died during the checks: " + "; ".join(cluster.dead()))


def plant_broken(manifests: Path, copy: Path) -> Path:
    """--broken: the manifests with completionMode misspelled, to see the whole check fail."""
    shutil.copytree(manifests, copy)
    job = copy / JOB_FILE
    job.write_text(job.read_text().replace("completionMode:", "completionMod:", 1))
    print(f"    (--broken: {JOB_FILE} copied with completionMode misspelled)")
    return copy


def on_signal(number: int, _frame) -> None:
    raise SystemExit(128 + number)  # unwinds into main's finally: the servers are stopped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=Path, required=True)
    parser.add_argument("--manifests", type=Path, required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--logs", type=Path, default=Path("target/test-deploy"))
    parser.add_argument("--broken", action="store_true")
    args = parser.parse_args()
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, on_signal)
    report = Report()
    cluster = Cluster(args.tools.resolve(), args.logs.resolve())
    interrupted = 0
    try:
        run_checks(cluster, args, report)
    except (Failed, StartError, subprocess.CalledProcessError) as error:
        report.fail(str(error))
    except SystemExit as stop:  # on_signal
        interrupted = int(stop.code)
        report.fail(f"interrupted by signal {interrupted - 128}")
    finally:
        # A second Ctrl-C must not cut the teardown short (it is bounded: STOP_TIMEOUT).
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, signal.SIG_IGN)
        report.step("teardown: stopping the servers by pid")
        left = cluster.stop()
        report.check(not left, "no process left, temporary directory removed", ", ".join(left))
        print(f"    (servers' logs: {args.logs})")
    status = report.summary()
    return interrupted or status


if __name__ == "__main__":
    sys.exit(main())

"""A throwaway Kubernetes control plane on loopback: etcd, kube-apiserver and
kube-controller-manager (only the job and serviceaccount controllers), for `make test-deploy`.

There is no kubelet and no scheduler: objects are stored, validated and acted on by those two
controllers, and pods stay Pending. Every server listens on 127.0.0.1 on ports picked at run
time (never 6379); everything it writes is under one temporary directory, and stop() ends the
servers by their pids and checks that none is left.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

LOOPBACK = "127.0.0.1"
# Allocated on paper only: a Service's cluster IP comes from here, but with no proxy and no
# kubelet nothing is ever sent to it.
SERVICE_RANGE = "10.96.0.0/24"
STOP_TIMEOUT = 20.0


class StartError(Exception):
    """A server did not come up within its bound; the message names it and its log's tail."""


def free_port(taken: set[int]) -> int:
    """A port the kernel just gave out on loopback (a short race is acceptable here)."""
    while True:
        with socket.socket() as sock:
            sock.bind((LOOPBACK, 0))
            port = sock.getsockname()[1]
        if port != 6379 and port not in taken:
            taken.add(port)
            return port


def wait_until(what: str, timeout: float, probe, process: subprocess.Popen, log: Path) -> float:
    """Polls probe() until it is true; fails at once when the process died. Seconds waited."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if process.poll() is not None:
            raise StartError(f"{what}: exited with {process.returncode}\n{tail(log)}")
        if probe():
            return time.monotonic() - start
        time.sleep(0.5)
    raise StartError(f"{what}: not ready within {timeout:.0f} s\n{tail(log)}")


def tail(log: Path, lines: int = 15) -> str:
    try:
        text = log.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return f"(no log at {log})"
    return "\n".join(f"    | {line}" for line in text)


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


class Cluster:
    """The three servers, their files and their pids."""

    def __init__(self, tools: Path, logs: Path) -> None:
        self.tools = tools
        self.logs = logs
        self.dir = Path(tempfile.mkdtemp(prefix="redlock-test-deploy-"))
        self.processes: dict[str, subprocess.Popen] = {}
        self.ports: set[int] = set()
        self.token = secrets.token_hex(16)
        self.api_port = 0
        self.kubeconfig = self.dir / "kubeconfig.json"
        logs.mkdir(parents=True, exist_ok=True)

    def log(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    def spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        # A session of its own, so the terminal's Ctrl-C reaches only this script, which
        # then stops each server itself, by pid.
        with open(self.log(name), "wb") as out:
            process = subprocess.Popen(
                args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True, cwd=self.dir)
        self.processes[name] = process
        return process

    def write_credentials(self) -> None:
        """A self-signed serving certificate, the service accounts' key pair, the admin token."""
        d = self.dir
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                "-subj", f"/CN={LOOPBACK}", "-addext", f"subjectAltName=IP:{LOOPBACK}",
                "-keyout", str(d / "serving.key"), "-out", str(d / "serving.crt"))
        openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                "-out", str(d / "sa.key"))
        openssl("pkey", "-in", str(d / "sa.key"), "-pubout", "-out", str(d / "sa.pub"))
        # One user in system:masters, which RBAC's bootstrap policy makes cluster-admin.
        (d / "tokens.csv").write_text(f"{self.token},admin,admin-uid,system:masters\n")
        (d / "tokens.csv").chmod(0o600)

    def start_etcd(self, timeout: float) -> float:
        client, peer = free_port(self.ports), free_port(self.ports)
        self.etcd_url = f"http://{LOOPBACK}:{client}"
        peer_url = f"http://{LOOPBACK}:{peer}"
        process = self.spawn("etcd", [
            "etcd", "--name", "test", "--data-dir", str(self.dir / "etcd"), "--logger", "zap",
            "--listen-client-urls", self.etcd_url, "--advertise-client-urls", self.etcd_url,
            "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
            "--initial-cluster", f"test={peer_url}", "--initial-cluster-state", "new"])
        return wait_until("etcd", timeout, self.etcd_healthy, process, self.log("etcd"))

    def etcd_healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.etcd_url}/health", timeout=2) as answer:
                return json.load(answer).get("health") == "true"
        except (OSError, ValueError):
            return False

    def start_apiserver(self, timeout: float) -> float:
        d = self.dir
        self.api_port = free_port(self.ports)
        process = self.spawn("kube-apiserver", [
            str(self.tools / "kube-apiserver"),
            f"--bind-address={LOOPBACK}", f"--advertise-address={LOOPBACK}",
            f"--secure-port={self.api_port}", f"--cert-dir={d / 'certs'}",
            f"--tls-cert-file={d / 'serving.crt'}", f"--tls-private-key-file={d / 'serving.key'}",
            f"--etcd-servers={self.etcd_url}",
            f"--token-auth-file={d / 'tokens.csv'}", "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={d / 'sa.pub'}",
            f"--service-account-signing-key-file={d / 'sa.key'}",
            f"--service-cluster-ip-range={SERVICE_RANGE}",
            # No kubelet serves the `kubernetes` Service: keep its endpoints unmanaged.
            "--endpoint-reconciler-type=none", "--profiling=false"])
        self.write_kubeconfig()
        return wait_until("kube-apiserver", timeout, self.apiserver_ready, process,
                          self.log("kube-apiserver"))

    def apiserver_ready(self) -> bool:
        context = ssl.create_default_context(cafile=str(self.dir / "serving.crt"))
        request = urllib.request.Request(
            f"https://{LOOPBACK}:{self.api_port}/readyz",
            headers={"Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(request, timeout=2, context=context) as answer:
                return answer.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def write_kubeconfig(self) -> None:
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": "test",
            "clusters": [{"name": "test", "cluster": {
                "server": f"https://{LOOPBACK}:{self.api_port}",
                "certificate-authority": str(self.dir / "serving.crt")}}],
            "users": [{"name": "admin", "user": {"token": self.token}}],
            "contexts": [{"name": "test", "context": {
                "cluster": "test", "user": "admin", "namespace": "default"}}],
        }
        self.kubeconfig.write_text(json.dumps(config))
        self.kubeconfig.chmod(0o600)

    def start_controller_manager(self) -> None:
        """Started only: it is ready when its serviceaccount controller has acted (the caller
        waits for the namespace's default service account)."""
        self.spawn("kube-controller-manager", [
            str(self.tools / "kube-controller-manager"),
            f"--kubeconfig={self.kubeconfig}", "--controllers=job,serviceaccount",
            # One instance, and nothing to serve: no lease, no HTTPS port of its own.
            "--leader-elect=false", "--secure-port=0"])

    def dead(self) -> list[str]:
        """The servers that exited while they should be running, with their logs' tails."""
        return [f"{name} exited with {process.returncode}\n{tail(self.log(name))}"
                for name, process in self.processes.items() if process.poll() is not None]

    def stop(self) -> list[str]:
        """Ends every server by its pid (TERM, then KILL past the bound), removes the temporary
        directory and returns what is left running, if anything (the leak check)."""
        for name, process in reversed(list(self.processes.items())):
            stop_one(process)
        left = [f"{name} (pid {p.pid})" for name, p in self.processes.items() if alive(p.pid)]
        left += [f"pid {pid} still uses {self.dir}" for pid in processes_naming(self.dir)]
        shutil.rmtree(self.dir, ignore_errors=True)
        return left


def stop_one(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    for sig, bound in ((signal.SIGTERM, STOP_TIMEOUT), (signal.SIGKILL, STOP_TIMEOUT)):
        try:
            os.killpg(process.pid, sig)  # its own group (start_new_session), led by this pid
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=bound)
            return
        except subprocess.TimeoutExpired:
            continue


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def processes_naming(directory: Path) -> list[int]:
    """Pids of processes whose command line names the directory: every server and kubectl call
    of this run does (data dir, token file, kubeconfig)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if str(directory).encode() in cmdline:
            found.append(int(entry.name))
    return found

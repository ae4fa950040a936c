"""Helpers for integration tests: start/stop the real schedext binary and
talk HTTP to it; start/stop the fake Kubernetes API server
(test/fakeapi/fakeapi.py) and run schedext against it (python3 standard
library only)."""
from http.client import HTTPConnection
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("SCHEDEXT_BIN") or os.path.join(ROOT, "build", "schedext")
FAKEAPI = os.path.join(ROOT, "test", "fakeapi", "fakeapi.py")


class Server:
    """One `schedext serve` process listening on an ephemeral port (port 0,
    the bound port is read from its log line, so there is no port race)."""

    def __init__(self, *args, env=None, timeout=20):
        self.log = tempfile.NamedTemporaryFile(prefix="schedext-", suffix=".log", delete=False)
        cmd = [BIN, "serve", "--listen", "127.0.0.1:0", "-v=2"] + list(args)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log,
                                     env=env or os.environ.copy())
        self.port = None
        deadline = time.time() + timeout
        while time.time() < deadline:
            m = re.search(r"listening on \S+ \(port (\d+)", self.log_text())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                raise RuntimeError("schedext exited with %d:\n%s" % (self.proc.returncode, self.log_text()))
            time.sleep(0.02)
        if self.port is None:
            self.kill()
            raise RuntimeError("schedext did not start:\n" + self.log_text())

    def log_text(self):
        with open(self.log.name, errors="replace") as f:
            return f.read()

    def request(self, method, path, body=None, headers=None, timeout=30):
        """Returns (status, headers dict (lower-case keys), body bytes)."""
        conn = HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            if isinstance(body, (dict, list)):
                body = json.dumps(body)
            if isinstance(body, str):
                body = body.encode()
            hdrs = {"Content-Type": "application/json"} if body is not None else {}
            hdrs.update(headers or {})
            conn.request(method, path, body=body, headers=hdrs)
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()

    def post_json(self, path, body, **kw):
        status, _, data = self.request("POST", path, body, **kw)
        return status, json.loads(data) if data else None

    def get(self, path):
        status, _, data = self.request("GET", path)
        return status, data

    def raw(self, data, read_timeout=5):
        """Sends raw bytes on a fresh socket; returns what came back."""
        s = socket.create_connection(("127.0.0.1", self.port), timeout=read_timeout)
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            out = b""
            while True:
                try:
                    chunk = s.recv(65536)
                except socket.timeout:
                    break
                if not chunk:
                    break
                out += chunk
            return out
        finally:
            s.close()

    def stop(self, timeout=20):
        """SIGTERM (graceful shutdown); returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        os.unlink(self.log.name)
        return self.proc.returncode

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Checker:
    """Minimal test bookkeeping: check() records failures, done() exits."""

    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, []

    def check(self, cond, what, detail=""):
        if cond:
            self.passed += 1
        else:
            self.failed.append(what)
            print("FAIL: %s %s" % (what, detail), file=sys.stderr)

    def eq(self, got, want, what):
        self.check(got == want, what, "\n  got:  %r\n  want: %r" % (got, want))

    def done(self):
        print("%s: %d checks passed, %d failed" % (self.name, self.passed, len(self.failed)))
        sys.exit(1 if self.failed else 0)


# ------------------------------------------------------------------------
# Against the fake API server (test_kube.py, test_standalone.py): failures
# are collected in one list per test process and reported by run_tests().

failures = []
LIVE = []  # every started Serve, killed at exit whatever happens


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def http(method, url, body=None, timeout=10):
    """Returns (status, decoded JSON body, or the text when it is not JSON)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
            try:
                return r.status, json.loads(raw or b"null")
            except ValueError:
                return r.status, raw.decode(errors="replace")
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, raw.decode(errors="replace")


class FakeApi:
    """One fakeapi.py process on an ephemeral port (read from its first
    stdout line); its log goes to tmp/fakeapi.log."""

    def __init__(self, tmp, *args):
        self.log = open(os.path.join(tmp, "fakeapi.log"), "w")
        self.p = subprocess.Popen([sys.executable, FAKEAPI, "--port", "0"] + list(args),
                                  stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.p.stdout.readline()
        assert line.startswith("listening on "), line
        self.port = int(line.split()[-1])
        self.ctl = "http://127.0.0.1:%d/_control/" % self.port

    def control(self, what, body=None):
        code, out = http("POST" if body is not None else "GET", self.ctl + what, body)
        assert code == 200, (what, code, out)
        return out

    def apply(self, ops):
        return self.control("objects", {"ops": ops})

    def stop(self):
        self.p.terminate()
        self.p.wait()
        self.log.close()


def write_kubeconfig(path, server, user=None, cluster_extra=None):
    cluster = {"server": server}
    cluster.update(cluster_extra or {})
    cfg = {"apiVersion": "v1", "kind": "Config", "current-context": "test",
           "clusters": [{"name": "fake", "cluster": cluster}],
           "users": [{"name": "u", "user": user or {}}],
           "contexts": [{"name": "test", "context": {"cluster": "fake", "user": "u"}}]}
    with open(path, "w") as f:
        json.dump(cfg, f)


class Serve:
    """`schedext serve --kubeconfig KC --listen 127.0.0.1:<free port> EXTRA...`
    with stdout and stderr in tmp/<name>.log."""

    def __init__(self, tmp, kubeconfig, name, *extra):
        self.port = free_port()
        self.logpath = os.path.join(tmp, name + ".log")
        self.log = open(self.logpath, "w")
        self.p = subprocess.Popen([BIN, "serve", "--kubeconfig", kubeconfig, "--listen",
                                   "127.0.0.1:%d" % self.port] + list(extra),
                                  stdout=self.log, stderr=subprocess.STDOUT)
        self.url = "http://127.0.0.1:%d" % self.port
        LIVE.append(self)

    def wait_ready(self, timeout=15):
        end = time.time() + timeout
        while time.time() < end:
            try:
                code, _ = http("GET", self.url + "/readyz", timeout=2)
                if code == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.1)
        return False

    def cache(self):
        """GET /debug/cache, which must answer 200."""
        code, out = http("GET", self.url + "/debug/cache")
        assert code == 200, (code, out)
        return out

    def logtext(self):
        with open(self.logpath) as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM, timeout=20):
        """Sends sig (when still running), waits up to timeout seconds, then
        kills; returns the exit code (-9 when killed)."""
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.log.close()
        return self.p.returncode


def run_tests(name, tests):
    """Runs each test(tmp) in one scratch directory (kept when anything
    failed), kills every Serve left running, prints "<name>: N failed" and
    returns the exit status."""
    if not os.path.exists(BIN):
        print("SKIP: %s not built" % BIN)
        return 0
    stem = os.path.splitext(name)[0].replace("test_", "schedext-", 1)
    tmp = tempfile.mkdtemp(prefix=stem + "-")
    try:
        for t in tests:
            t0 = time.time()
            try:
                t(tmp)
            except Exception as e:  # a crash in one test must not hide the others
                traceback.print_exc()
                check(False, "%s raised %r" % (t.__name__, e))
            print("%s: %.1fs" % (t.__name__, time.time() - t0), flush=True)
    finally:
        for sx in LIVE:
            if sx.p.poll() is None:
                sx.p.kill()
                sx.p.wait()
        if not failures:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("logs kept in", tmp)
    print("%s: %d failed" % (name, len(failures)))
    return 1 if failures else 0

"""Helpers for integration tests: start/stop the real schedext binary and
talk HTTP to it (python3 standard library only)."""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("SCHEDEXT_BIN") or os.path.join(ROOT, "build", "schedext")


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
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
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

"""A real Kubernetes control plane for tests, by envtest's convention
(python3 standard library only).

KUBEBUILDER_ASSETS names a directory holding `etcd` and `kube-apiserver`
(and, when present, `kube-controller-manager` and `kube-scheduler`), as
`setup-envtest use 1.36.x -p path` prints it. etcd may also come from the
distribution (`/usr/bin/etcd`, Debian's etcd-server). Nothing here builds or
downloads a binary.

ControlPlane(tmp, assets) starts them on loopback with free ports:

* etcd: a data dir under tmp, client and peer URLs on 127.0.0.1;
* kube-apiserver: serving certificate from a throw-away CA (openssl),
  service-account signing key (RSA, openssl), --token-auth-file with the
  users below, --authorization-mode=RBAC, an audit log of every request
  (Metadata level) under tmp/audit.log; the admission plugins that need
  controllers this harness does not run (ServiceAccount, as envtest) or that
  would taint every Node created here as not-ready (TaintNodesByCondition:
  there is no kubelet to clear it) are disabled;
* kube-controller-manager (when present) with the PersistentVolume binder
  and the ResourceClaim controllers only, using the admin token;
* kube-scheduler only on request (start_scheduler), with a configuration
  written here (the extender stanza, or none).

Users (static tokens): "admin" and "operator" (both system:masters; the
kubectl plugin runs as "operator" so its requests are found in the audit
log), and a static token whose user name is the schedext ServiceAccount's
(system:serviceaccount:kube-system:schedext), used only when the
TokenRequest API fails. schedext itself runs with a TokenRequest token of
the ServiceAccount kube-system/schedext, bound by the ClusterRole and
bindings of extender-config/deploy.yaml applied here: never as
cluster-admin.

The argument builders (etcd_args, apiserver_args, controller_manager_args,
scheduler_args) and the file writers are plain functions so that
test_controlplane_selftest.py checks them without kube-apiserver.
"""
import base64
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEPLOY_YAML = os.path.join(ROOT, "extender-config", "deploy.yaml")
README_HINT = 'see README "Tests against a real control plane"'

SA_NAMESPACE, SA_NAME = "kube-system", "schedext"
SA_USER = "system:serviceaccount:%s:%s" % (SA_NAMESPACE, SA_NAME)
SERVICE_CIDR = "10.0.0.0/24"


# ---------------------------------------------------------------- discovery

def find_assets(env=None):
    """-> (dict of binary paths, None) or (None, "what is missing").
    Keys: etcd, kube-apiserver (required); kube-controller-manager,
    kube-scheduler (None when absent)."""
    env = os.environ if env is None else env
    d = env.get("KUBEBUILDER_ASSETS", "")
    if not d:
        return None, "KUBEBUILDER_ASSETS not set (needs etcd and kube-apiserver; %s)" % README_HINT
    if not os.path.isdir(d):
        return None, "KUBEBUILDER_ASSETS=%s is not a directory (%s)" % (d, README_HINT)

    def exe(name):
        p = os.path.join(d, name)
        return p if os.path.isfile(p) and os.access(p, os.X_OK) else None
    found = {n: exe(n) for n in ("etcd", "kube-apiserver", "kube-controller-manager",
                                  "kube-scheduler")}
    if not found["kube-apiserver"]:
        return None, "no kube-apiserver in KUBEBUILDER_ASSETS=%s (%s)" % (d, README_HINT)
    if not found["etcd"]:
        found["etcd"] = shutil.which("etcd", path=env.get("PATH", os.defpath))
        if not found["etcd"]:
            return None, ("no etcd in KUBEBUILDER_ASSETS=%s nor on PATH (Debian: apt-get install "
                          "etcd-server; %s)" % (d, README_HINT))
    return found, None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ------------------------------------------------------------ files we write

def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_certs(d):
    """A CA, a serving certificate for 127.0.0.1/localhost signed by it, and
    the service-account RSA key pair. -> dict of paths."""
    os.makedirs(d, exist_ok=True)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2",
            "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=schedext-test-ca",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature", cwd=d)
    with open(os.path.join(d, "serving.ext"), "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\n"
                "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-sha256", "-keyout", "apiserver.key",
            "-out", "apiserver.csr", "-subj", "/CN=kube-apiserver", cwd=d)
    openssl("x509", "-req", "-in", "apiserver.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-sha256", "-days", "2", "-extfile", "serving.ext",
            "-out", "apiserver.crt", cwd=d)
    openssl("genrsa", "-out", "sa.key", "2048", cwd=d)
    openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=d)
    return {k: os.path.join(d, v) for k, v in (
        ("ca", "ca.crt"), ("ca_key", "ca.key"), ("cert", "apiserver.crt"),
        ("key", "apiserver.key"), ("sa_key", "sa.key"), ("sa_pub", "sa.pub"))}


def make_tokens():
    """Random bearer tokens per user."""
    return {u: base64.b32encode(os.urandom(20)).decode().lower()
            for u in ("admin", "operator", "schedext")}


def write_token_file(path, tokens):
    """kube-apiserver --token-auth-file: token,user,uid,"group1,group2"."""
    rows = [(tokens["admin"], "admin", "uid-admin", "system:masters"),
            (tokens["operator"], "operator", "uid-operator", "system:masters"),
            (tokens["schedext"], SA_USER, "uid-schedext-static",
             "system:serviceaccounts,system:serviceaccounts:" + SA_NAMESPACE)]
    with open(path, "w") as f:
        for tok, user, uid, groups in rows:
            f.write('%s,%s,%s,"%s"\n' % (tok, user, uid, groups))
    os.chmod(path, 0o600)


def write_audit_policy(path):
    """Every request at Metadata level (user, verb, objectRef, response
    code), once per request (the RequestReceived stage omitted)."""
    with open(path, "w") as f:
        json.dump({"apiVersion": "audit.k8s.io/v1", "kind": "Policy",
                   "omitStages": ["RequestReceived"], "rules": [{"level": "Metadata"}]}, f)


def kubeconfig(server, ca_path, token, user="user"):
    with open(ca_path, "rb") as f:
        ca = base64.b64encode(f.read()).decode()
    return {"apiVersion": "v1", "kind": "Config", "current-context": "real",
            "clusters": [{"name": "real", "cluster": {"server": server,
                                                     "certificate-authority-data": ca}}],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": "real", "context": {"cluster": "real", "user": user}}]}


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
    return path


# ------------------------------------------------------------ command lines

def etcd_args(etcd, data_dir, client_port, peer_port, supports_no_fsync=False):
    c, p = "http://127.0.0.1:%d" % client_port, "http://127.0.0.1:%d" % peer_port
    args = [etcd, "--name", "default", "--data-dir", data_dir,
            "--listen-client-urls", c, "--advertise-client-urls", c,
            "--listen-peer-urls", p, "--initial-advertise-peer-urls", p,
            "--initial-cluster", "default=" + p, "--logger", "zap", "--log-level", "warn"]
    if supports_no_fsync:  # etcd >= 3.5, as envtest runs it
        args.append("--unsafe-no-fsync")
    return args


def apiserver_args(apiserver, etcd_port, port, certs, cert_dir, token_file, audit_policy,
                   audit_log):
    server = "https://127.0.0.1:%d" % port
    return [apiserver,
            "--etcd-servers", "http://127.0.0.1:%d" % etcd_port,
            "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
            "--secure-port", str(port), "--cert-dir", cert_dir,
            "--tls-cert-file", certs["cert"], "--tls-private-key-file", certs["key"],
            "--client-ca-file", certs["ca"],
            "--token-auth-file", token_file,
            "--authorization-mode", "RBAC",
            "--service-account-issuer", server,
            "--service-account-key-file", certs["sa_pub"],
            "--service-account-signing-key-file", certs["sa_key"],
            "--service-cluster-ip-range", SERVICE_CIDR,
            "--allow-privileged=true",
            "--disable-admission-plugins", "ServiceAccount,TaintNodesByCondition",
            "--audit-policy-file", audit_policy, "--audit-log-path", audit_log,
            "--audit-log-mode", "blocking"]


def controller_manager_args(kcm, kubeconfig_path, port, cert_dir):
    return [kcm, "--kubeconfig", kubeconfig_path,
            "--authentication-kubeconfig", kubeconfig_path,
            "--authorization-kubeconfig", kubeconfig_path,
            "--controllers", "persistentvolume-binder-controller,resourceclaim-controller",
            "--use-service-account-credentials=false", "--leader-elect=false",
            "--bind-address", "127.0.0.1", "--secure-port", str(port), "--cert-dir", cert_dir]


def scheduler_config(kubeconfig_path, extenders=None):
    """KubeSchedulerConfiguration: one default-scheduler profile, every node
    scored (as schedext's explain does), no leader election."""
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "clientConnection": {"kubeconfig": kubeconfig_path},
           "leaderElection": {"leaderElect": False},
           "percentageOfNodesToScore": 100,
           "profiles": [{"schedulerName": "default-scheduler"}]}
    if extenders:
        cfg["extenders"] = extenders
    return cfg


def scheduler_args(ks, config_path, kubeconfig_path, port, cert_dir):
    return [ks, "--config", config_path,
            "--authentication-kubeconfig", kubeconfig_path,
            "--authorization-kubeconfig", kubeconfig_path,
            "--bind-address", "127.0.0.1", "--secure-port", str(port), "--cert-dir", cert_dir]


# ------------------------------------------------------------ deploy.yaml

def deploy_documents(path=DEPLOY_YAML):
    """deploy.yaml split into its documents: [(kind, name, yaml text)]. The
    API server takes application/yaml, so no YAML parser is needed here."""
    with open(path) as f:
        text = f.read()
    docs = []
    for doc in re.split(r"(?m)^---\s*$", text):
        kind = re.search(r"(?m)^kind:\s*(\S+)", doc)
        name = re.search(r"(?m)^metadata:\s*\n(?:\s+.*\n)*?\s+name:\s*(\S+)", doc)
        if kind and name:
            docs.append((kind.group(1), name.group(1), doc))
    return docs


RBAC_PATHS = {
    "ServiceAccount": "/api/v1/namespaces/%s/serviceaccounts" % SA_NAMESPACE,
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
}


# ------------------------------------------------------------ the client

class ApiError(Exception):
    def __init__(self, code, body, what):
        super().__init__("%s: HTTP %d: %s" % (what, code, str(body)[:400]))
        self.code, self.body = code, body


class Kube:
    """A bearer-token client of the API server."""

    def __init__(self, server, token, ca_path):
        self.server, self.token = server, token
        self.ctx = ssl.create_default_context(cafile=ca_path)

    def request(self, method, path, body=None, ctype="application/json", timeout=30):
        """-> (status, decoded JSON or text)."""
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        hdrs = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
        if body is not None:
            hdrs["Content-Type"] = ctype
        req = urllib.request.Request(self.server + path, data=body, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=self.ctx) as r:
                code, raw = r.status, r.read()
        except urllib.error.HTTPError as e:
            code, raw = e.code, e.read()
        try:
            return code, json.loads(raw or b"null")
        except ValueError:
            return code, raw.decode(errors="replace")

    def must(self, method, path, body=None, ok=(200, 201, 202), **kw):
        code, out = self.request(method, path, body, **kw)
        if code not in ok:
            raise ApiError(code, out, "%s %s" % (method, path))
        return out

    def get(self, path):
        return self.must("GET", path)

    def create(self, path, obj, **kw):
        return self.must("POST", path, obj, **kw)

    def patch(self, path, obj, ctype="application/merge-patch+json"):
        return self.must("PATCH", path, obj, ctype=ctype)

    def delete(self, path, ok=(200, 202, 404)):
        return self.must("DELETE", path, ok=ok)

    def items(self, path):
        """Every item of a LIST (all pages), with kind and apiVersion set as
        in `kubectl get -o json`."""
        out, cont = [], ""
        while True:
            sep = "&" if "?" in path else "?"
            page = self.get(path + sep + "limit=500" + ("&continue=" + cont if cont else ""))
            kind = page.get("kind", "")
            for it in page.get("items") or []:
                it.setdefault("kind", kind[:-4] if kind.endswith("List") else kind)
                it.setdefault("apiVersion", page.get("apiVersion"))
                out.append(it)
            cont = (page.get("metadata") or {}).get("continue")
            if not cont:
                return out


# ------------------------------------------------------------ processes

class Proc:
    """One child process with its log in tmp/<name>.log."""

    def __init__(self, tmp, name, args):
        self.name, self.args = name, args
        self.logpath = os.path.join(tmp, name + ".log")
        self.log = open(self.logpath, "a")
        self.p = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)

    def alive(self):
        return self.p.poll() is None

    def logtail(self, n=3000):
        with open(self.logpath, errors="replace") as f:
            return f.read()[-n:]

    def stop(self, sig=signal.SIGTERM, timeout=20):
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.log.close()
        return self.p.returncode


def wait_for(fn, timeout, step=0.25):
    end = time.time() + timeout
    while time.time() < end:
        try:
            if fn():
                return True
        except (OSError, ApiError):
            pass
        time.sleep(step)
    try:
        return bool(fn())
    except (OSError, ApiError):
        return False


def etcd_healthy(port):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/health" % port, timeout=2) as r:
            return json.loads(r.read()).get("health") == "true"
    except (OSError, ValueError):
        return False


def etcd_supports_no_fsync(etcd):
    try:
        out = subprocess.run([etcd, "--help"], capture_output=True, text=True, timeout=10)
        return "--unsafe-no-fsync" in out.stdout + out.stderr
    except (OSError, subprocess.TimeoutExpired):
        return False


class ControlPlane:
    def __init__(self, tmp, assets, start_timeout=90):
        self.tmp, self.assets = tmp, assets
        self.procs = []
        self.certs = make_certs(os.path.join(tmp, "pki"))
        self.tokens = make_tokens()
        self.token_file = os.path.join(tmp, "tokens.csv")
        write_token_file(self.token_file, self.tokens)
        self.audit_policy = os.path.join(tmp, "audit-policy.json")
        write_audit_policy(self.audit_policy)
        self.audit_log = os.path.join(tmp, "audit.log")
        self.etcd_port, self.etcd_peer, self.port = free_port(), free_port(), free_port()
        self.server = "https://127.0.0.1:%d" % self.port
        self.admin = Kube(self.server, self.tokens["admin"], self.certs["ca"])
        self.kc_admin = self.write_kubeconfig("admin", self.tokens["admin"])
        self.kc_operator = self.write_kubeconfig("operator", self.tokens["operator"])
        self.start_timeout = start_timeout
        self.apiserver = self.kcm = self.scheduler = None
        try:
            self._start()
        except BaseException:
            self.stop()  # nothing left running when start-up fails
            raise

    def _start(self):
        tmp, assets = self.tmp, self.assets
        self.etcd = Proc(tmp, "etcd", etcd_args(
            assets["etcd"], os.path.join(tmp, "etcd-data"), self.etcd_port, self.etcd_peer,
            etcd_supports_no_fsync(assets["etcd"])))
        self.procs.append(self.etcd)
        if not wait_for(lambda: etcd_healthy(self.etcd_port), 30):
            raise RuntimeError("etcd did not become healthy:\n" + self.etcd.logtail())
        self.start_apiserver()
        if assets.get("kube-controller-manager"):
            self.kcm = Proc(tmp, "kube-controller-manager", controller_manager_args(
                assets["kube-controller-manager"], self.kc_admin, free_port(),
                os.path.join(tmp, "kcm-certs")))
            self.procs.append(self.kcm)

    def write_kubeconfig(self, name, token):
        return write_json(os.path.join(self.tmp, "kubeconfig-%s.json" % name),
                          kubeconfig(self.server, self.certs["ca"], token, name))

    def ready(self):
        code, out = self.admin.request("GET", "/readyz", timeout=5)
        return code == 200

    def start_apiserver(self):
        self.apiserver = Proc(self.tmp, "kube-apiserver", apiserver_args(
            self.assets["kube-apiserver"], self.etcd_port, self.port, self.certs,
            os.path.join(self.tmp, "apiserver-certs"), self.token_file, self.audit_policy,
            self.audit_log))
        self.procs.append(self.apiserver)
        if not wait_for(lambda: self.apiserver.alive() and self.ready(), self.start_timeout, 0.5):
            raise RuntimeError("kube-apiserver not ready:\n" + self.apiserver.logtail())
        # RBAC's bootstrap roles are written by a post-start hook; wait for one.
        wait_for(lambda: self.admin.request(
            "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:auth-delegator")[0]
            == 200, 30, 0.5)

    def stop_apiserver(self, sig=signal.SIGTERM):
        return self.apiserver.stop(sig)

    def start_scheduler(self, name, extenders=None, kubeconfig_path=None, binary=None):
        kc = kubeconfig_path or self.kc_admin
        cfg = write_json(os.path.join(self.tmp, name + "-config.json"),
                         scheduler_config(kc, extenders))
        self.scheduler = Proc(self.tmp, name, scheduler_args(
            binary or self.assets["kube-scheduler"], cfg, kc, free_port(),
            os.path.join(self.tmp, name + "-certs")))
        self.procs.append(self.scheduler)
        return self.scheduler

    def stop_scheduler(self):
        if self.scheduler:
            self.scheduler.stop()
            self.scheduler = None

    # --- identities

    def apply_deploy_rbac(self):
        """The ServiceAccount, ClusterRoles and ClusterRoleBindings of
        extender-config/deploy.yaml, as `kubectl apply` would create them
        (POSTed as application/yaml; 409 when already there is fine)."""
        done = []
        for kind, name, doc in deploy_documents():
            path = RBAC_PATHS.get(kind)
            if path:
                self.admin.must("POST", path, doc, ctype="application/yaml", ok=(201, 409))
                done.append((kind, name))
        return done

    def schedext_kubeconfig(self):
        """A kubeconfig for the schedext ServiceAccount: a TokenRequest token
        (the same identity a pod with serviceAccountName: schedext gets),
        or the static token with the ServiceAccount's user name when
        TokenRequest is refused. -> (path, how)."""
        code, out = self.admin.request(
            "POST", "/api/v1/namespaces/%s/serviceaccounts/%s/token" % (SA_NAMESPACE, SA_NAME),
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
             "spec": {"expirationSeconds": 7200}})
        if code == 201 and isinstance(out, dict) and (out.get("status") or {}).get("token"):
            return self.write_kubeconfig("schedext", out["status"]["token"]), "TokenRequest"
        return self.write_kubeconfig("schedext", self.tokens["schedext"]), \
            "static token (TokenRequest answered %s)" % code

    def whoami(self, kc_path):
        """The user name a kubeconfig authenticates as (SelfSubjectReview)."""
        with open(kc_path) as f:
            tok = json.load(f)["users"][0]["user"]["token"]
        k = Kube(self.server, tok, self.certs["ca"])
        out = k.create("/apis/authentication.k8s.io/v1/selfsubjectreviews",
                       {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
        return out["status"]["userInfo"]["username"]

    # --- the audit log

    def audit(self, user=None):
        """Audit events (ResponseComplete), optionally of one user."""
        out = []
        try:
            with open(self.audit_log, errors="replace") as f:
                for line in f:
                    try:
                        ev = json.loads(line)
                    except ValueError:
                        continue
                    if ev.get("stage") != "ResponseComplete":
                        continue
                    if user and (ev.get("user") or {}).get("username") != user:
                        continue
                    out.append(ev)
        except FileNotFoundError:
            pass
        return out

    def stop(self):
        for p in reversed(self.procs):
            if p.alive():
                p.stop()

#!/usr/bin/env python3
"""`schedext serve --emulated-version` and `--feature-gates`, named and
validated as kube-scheduler's (component-base's compatibility registry and
featuregate): the release whose defaults run and the gates set away from
them are in the startup log and on /configz; bad values exit 2 with
upstream's words; a configuration file is decoded as the selected release
decodes it."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sxtest import BIN, ROOT, Checker, Server  # noqa: E402

STATE = os.path.join(ROOT, "extender-config", "demo-cluster.yaml")
HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
FILE_137 = HEAD + """profiles:
- schedulerName: default-scheduler
  plugins:
    placementGenerate:
      enabled: [{name: PodTopologySpread}]
    placementScore:
      enabled: [{name: NodeResourcesFit, weight: 2}]
    podGroupPostFilter:
      enabled: [{name: DefaultPreemption}]
  pluginConfig:
  - name: DynamicResources
    args: {bindingTimeout: 5m}
"""

c = Checker("test_feature_gates.py")


def refused(*args):
    """Runs `schedext serve ARGS`; returns (exit code, the last line of
    stderr: the error, after any log lines)."""
    r = subprocess.run([BIN, "serve", "--state", STATE, "--listen", "127.0.0.1:0"] + list(args),
                       capture_output=True, timeout=30)
    lines = r.stderr.decode(errors="replace").strip().splitlines()
    return r.returncode, lines[-1] if lines else ""


def configz(srv):
    status, body = srv.get("/configz")
    c.eq(status, 200, "/configz status")
    return json.loads(body) if status == 200 else {}


def test_defaults():
    srv = Server("--state", STATE)
    try:
        z = configz(srv)
        c.eq(z.get("emulatedVersion"), "1.37", "default release on /configz")
        c.eq(z.get("featureGates"), {}, "no gate set: none listed")
        plugins = z["componentconfig"]["profiles"][0]["plugins"]
        c.check("podGroupPostFilter" in plugins and "placementScore" in plugins,
                "1.37's PodGroup plugin sets on /configz", str(plugins.keys()))
        c.check("behaving as kube-scheduler 1.37; feature gates set away from its defaults: none"
                in srv.log_text(), "startup log names the release", srv.log_text()[:400])
    finally:
        srv.stop()


def test_release_and_gates():
    srv = Server("--state", STATE, "--emulated-version", "kube=1.35",
                 "--feature-gates", "NodeDeclaredFeatures=true",
                 "--feature-gates=OpportunisticBatching=false")
    try:
        z = configz(srv)
        c.eq(z.get("emulatedVersion"), "1.35", "--emulated-version=kube=1.35 on /configz")
        c.eq(z.get("featureGates"), {"NodeDeclaredFeatures": True, "OpportunisticBatching": False},
             "repeated --feature-gates, both on /configz")
        plugins = z["componentconfig"]["profiles"][0]["plugins"]
        c.check("placementScore" not in plugins, "1.35 has no PodGroup sets", str(plugins.keys()))
        dra = [p for p in z["componentconfig"]["profiles"][0]["pluginConfig"]
               if p["name"] == "DynamicResources"]
        c.check(dra and "bindingTimeout" not in dra[0]["args"],
                "1.35: no bindingTimeout default (DRADeviceBindingConditions off)", str(dra))
        c.check("behaving as kube-scheduler 1.35; feature gates set away from its defaults: "
                "NodeDeclaredFeatures=true,OpportunisticBatching=false" in srv.log_text(),
                "startup log lists the gates", srv.log_text()[:400])
    finally:
        srv.stop()


def test_bad_flags():
    rows = [
        (["--feature-gates", "Bogus=true"], "unrecognized feature gate: Bogus"),
        (["--feature-gates", "NodeDeclaredFeatures=false"],
         "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true"),
        (["--feature-gates", "OpportunisticBatching=yes"],
         "invalid value of OpportunisticBatching=yes, err: strconv.ParseBool: parsing \"yes\": "
         "invalid syntax"),
        (["--feature-gates", "OpportunisticBatching"],
         "missing bool value for OpportunisticBatching"),
        (["--emulated-version", "1.35", "--feature-gates", "TopologyAwareWorkloadScheduling=true"],
         "cannot set feature gate TopologyAwareWorkloadScheduling to true, feature is PreAlpha "
         "at emulated version 1.35"),
        (["--emulated-version", "1.34"], "emulation version 1.34 is not between [1.35, 1.37]"),
        (["--emulated-version", "1.36.2"], "patch version not allowed, got: kube=1.36.2"),
        (["--emulated-version", "latest"], "could not parse \"latest\" as version"),
    ]
    for args, want in rows:
        code, err = refused(*args)
        c.eq(code, 2, "exit code of %s" % " ".join(args))
        flag = args[-2]
        c.eq(err, "schedext serve: %s: %s" % (flag, want), "message of %s" % " ".join(args))


def test_explain_flags():
    pod = os.path.join(ROOT, "extender-config", "demo-pod.yaml")
    base = [BIN, "explain", "--state", STATE, "--pod", pod]
    r = subprocess.run(base + ["--emulated-version", "1.36", "--feature-gates",
                               "OpportunisticBatching=false"], capture_output=True, timeout=30)
    c.eq(r.returncode, 0, "explain at 1.36 with a gate: exit code")
    c.check(b"selectedNode" in r.stdout, "explain at 1.36: a verdict", r.stderr[:300])
    r = subprocess.run(base + ["--emulated-version", "1.35", "--feature-gates",
                               "TopologyAwareWorkloadScheduling=true"],
                       capture_output=True, timeout=30)
    c.eq((r.returncode, r.stderr.decode().strip()),
         (2, "schedext: explain: --feature-gates: cannot set feature gate "
             "TopologyAwareWorkloadScheduling to true, feature is PreAlpha at emulated version "
             "1.35"), "explain: PreAlpha gate refused")


def test_config_per_release():
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(FILE_137)
        path = f.name
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(HEAD + "profiles:\n- plugins:\n    bogusSet: {}\n  pluginConfig:\n"
                "  - name: DynamicResources\n    args: {bogusArg: 1}\n")
        bad = f.name
    try:
        srv = Server("--state", STATE, "--config", path)
        try:
            z = configz(srv)
            prof = z["componentconfig"]["profiles"][0]
            c.eq(prof["plugins"]["placementScore"], {"enabled": [{"name": "NodeResourcesFit",
                                                                  "weight": 2}]},
                 "placementScore as configured")
            dra = [p for p in prof["pluginConfig"] if p["name"] == "DynamicResources"]
            c.eq(dra[0]["args"].get("bindingTimeout") if dra else None, "5m0s",
                 "bindingTimeout on /configz")
        finally:
            srv.stop()
        code, err = refused("--config", path, "--emulated-version", "1.36")
        c.eq(code, 2, "1.37 file at 1.36: exit code")
        c.eq(err, "schedext serve: %s: strict decoding error: unknown field "
             "\"profiles[0].plugins.podGroupPostFilter\"" % path, "1.37 file at 1.36: message")
        code, err = refused("--config", path, "--emulated-version", "1.36",
                            "--feature-gates", "DRADeviceBindingConditions=false")
        c.check("unknown field \"profiles[0].plugins.podGroupPostFilter\"" in err,
                "strict decoding comes before validation", err)
        code, err = refused("--config", bad)
        c.eq(err, "schedext serve: %s: strict decoding error: unknown field "
             "\"profiles[0].plugins.bogusSet\", decoding .profiles[0].pluginConfig[0]: strict "
             "decoding error: decoding args for plugin DynamicResources: strict decoding error: "
             "unknown field \"bogusArg\"" % bad, "nested unknown fields: message")
    finally:
        os.unlink(path)
        os.unlink(bad)


if __name__ == "__main__":
    if not os.path.exists(BIN):
        print("SKIP: %s not built" % BIN)
        sys.exit(0)
    test_defaults()
    test_release_and_gates()
    test_bad_flags()
    test_explain_flags()
    test_config_per_release()
    c.done()

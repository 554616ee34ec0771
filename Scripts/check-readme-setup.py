#!/usr/bin/env python3
"""Launches the README's setup (`Snippets/SetUpAnApp.swift`) twice against a loopback collector,
as a new user's app would run, and checks that the dashboards it feeds would tell the truth:

- both launches send the same anonymous id (the identity is persisted by default);
- both send the same hash for the same email (the install's salt is kept with the identity), and
  never the email in clear;
- the files the package created are the owner's alone (0600 files, 0700 folders).

    python3 Scripts/check-readme-setup.py   (after `swift build`)

The launches get a home and an XDG state directory of their own, in a folder under `.build`.
"""
import gzip
import http.server
import json
import os
import stat
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
received = []


class Collector(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        received.append(json.loads(body))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


def launch(home, url):
    env = dict(os.environ, HOME=home, XDG_STATE_HOME=os.path.join(home, "state"), MEASUREMENT_EVENTS_SERVER=url)
    env.pop("XDG_DATA_HOME", None)
    before = len(received)
    subprocess.run(["swift", "run", "--skip-build", "SetUpAnApp"], cwd=ROOT, env=env, check=True)
    calls = [call for body in received[before:] for call in body.get("batch", [])]
    signed_in = [call for call in calls if call.get("event") == "account/signed_in"]
    if len(signed_in) != 1:
        sys.exit(f"expected one account/signed_in call, got {len(signed_in)}: {calls}")
    return signed_in[0]["anonymousId"], signed_in[0]["properties"]["email"]


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    # Not under the system's temporary directory: the HTTP tracker would rightly warn of it there.
    with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, ".build")) as home:
        launches = [launch(home, url) for _ in range(2)]
        for number, (anonymous_id, email) in enumerate(launches, 1):
            print(f"launch {number}: anonymousId {anonymous_id}  email {email}")
        failures = []
        if launches[0][0] != launches[1][0]:
            failures.append("the two launches sent different anonymous ids")
        if launches[0][1] != launches[1][1]:
            failures.append("the two launches sent different hashes for the same email")
        if not launches[0][1].startswith("sha256:"):
            failures.append(f"the email was not hashed: {launches[0][1]}")
        print("files created:")
        umask = os.umask(0)
        os.umask(umask)
        for folder, folders, files in os.walk(home):
            for name in sorted(folders) + sorted(files):
                path = os.path.join(folder, name)
                # Only the package's own: the folders above them, and the toolchain's caches, are not.
                if "MeasurementEvents" not in path and "analytics" not in path:
                    continue
                mode = stat.S_IMODE(os.lstat(path).st_mode)
                expected = 0o700 if os.path.isdir(path) else 0o600
                # `analytics` is the app's folder, above the tracker's own (`segment`): the package
                # makes a missing parent as `mkdir -p` does, with the default mode (issue 47).
                if os.path.isdir(path) and name == "analytics":
                    expected = 0o777 & ~umask
                print(f"  {oct(mode)[2:]} ~/{os.path.relpath(path, home)}")
                if mode != expected:
                    failures.append(f"{path} has mode {oct(mode)}, expected {oct(expected)}")
    server.shutdown()
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()

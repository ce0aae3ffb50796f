#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A hostile OCI registry for the registry security cases (plain http on
# loopback: prewarm's --plain-http). It serves the OCI image layouts given on
# the command line (manifests and blobs by digest, referrers by subject) and
# misbehaves as the file MODE says, read at every request so that one server
# serves every case:
#   ok                 a well-behaved registry
#   drip-manifest      manifests at 1 byte per 0.3 s (Content-Length honest)
#   drip-slice         blobs above 64 KiB at 1 byte per 0.3 s
#   endless-error      every request: 500 with a body that never ends
#   redirect-other     blobs redirected to the other host (127.0.0.2), which
#                      answers 401 Bearer realm=<itself>
#   crlf-token         401 Bearer realm=<this registry>/token; the token has CR/LF
#   upload-other       a blob upload's Location is on the other host
#   hang               every request: nothing, ever
#   referrers-all      the referrers index lists every bundle, whatever its subject
#   referrers-flood:N  the referrers index lists N bogus bundle manifests
# A second word "basic" in MODE makes the registry ask for Basic credentials.
# Every request is logged to LOG as one JSON line: host, method, path, and
# whether it carried Authorization or an injected header.
#   hostile_registry.py MODE_FILE LOG PORT_FILE LAYOUT...
import hashlib
import http.server
import json
import os
import socketserver
import sys
import threading
import time

mode_file, log_file, port_file = sys.argv[1:4]
layouts = sys.argv[4:]
log_lock = threading.Lock()
uploads = {}
ports = {}
MAX_SECONDS = 120  # no misbehaviour outlives a test


def mode():
    with open(mode_file) as f:
        words = f.read().split()
    return (words[0] if words else "ok"), ("basic" in words[1:])


def blob(digest):
    hexd = digest.split(":", 1)[-1]
    for layout in layouts:
        path = os.path.join(layout, "blobs", "sha256", hexd)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                return f.read()
    return uploads.get(digest)


def manifests():
    for layout in layouts:
        where = os.path.join(layout, "blobs", "sha256")
        for name in (os.listdir(where) if os.path.isdir(where) else []):
            data = blob("sha256:" + name)
            try:
                doc = json.loads(data)
            except (ValueError, UnicodeDecodeError):
                continue
            if isinstance(doc, dict) and doc.get("mediaType") == "application/vnd.oci.image.manifest.v1+json":
                yield "sha256:" + name, data, doc


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        entry = {"host": self.server.server_address[0], "method": self.command, "path": self.path,
                 "authorization": self.headers.get("Authorization") is not None,
                 "injected": self.headers.get("X-Injected") is not None}
        with log_lock, open(log_file, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def send(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def drip(self, data, headers=()):
        self.send_response(200)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        end = time.time() + MAX_SECONDS
        try:
            for i in range(len(data)):
                if time.time() > end:
                    break
                self.wfile.write(data[i:i + 1])
                self.wfile.flush()
                time.sleep(0.3)
        except OSError:
            pass
        self.close_connection = True

    def other_host(self):
        return self.server.server_address[0] == "127.0.0.2"

    def handle_any(self):
        self.record()
        what, basic = mode()
        if what == "hang":
            time.sleep(MAX_SECONDS)
            self.close_connection = True
            return
        if self.other_host():
            realm = "http://127.0.0.2:%d/token" % ports["other"]
            return self.send(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}',
                             [("WWW-Authenticate", 'Bearer realm="%s",service="cdn"' % realm)])
        if what == "endless-error":
            self.send_response(500)
            self.send_header("Connection", "close")
            self.end_headers()
            end = time.time() + MAX_SECONDS
            try:
                while time.time() < end:
                    self.wfile.write(b"x" * 4096)
            except OSError:
                pass
            self.close_connection = True
            return
        if self.path.startswith("/token"):
            token = "abc\r\nX-Injected: 1" if what == "crlf-token" else "good"
            return self.send(200, json.dumps({"token": token}).encode(), [("Content-Type", "application/json")])
        if what == "crlf-token" and self.headers.get("Authorization") != "Bearer good":
            realm = "http://127.0.0.1:%d/token" % ports["registry"]
            return self.send(401, b"", [("WWW-Authenticate", 'Bearer realm="%s",service="r"' % realm)])
        if basic and not (self.headers.get("Authorization") or "").startswith("Basic "):
            return self.send(401, b"", [("WWW-Authenticate", 'Basic realm="hostile"')])
        parts = self.path.split("?")[0].split("/")
        if self.path == "/v2/" or self.path == "/v2":
            return self.send(200, b"{}")
        if len(parts) >= 5 and parts[-2] == "manifests" and self.command in ("GET", "HEAD"):
            data = blob(parts[-1])
            if data is None:
                return self.send(404, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}')
            media = json.loads(data).get("mediaType", "application/vnd.oci.image.manifest.v1+json")
            if what == "drip-manifest":
                return self.drip(data, [("Content-Type", media)])
            return self.send(200, data, [("Content-Type", media), ("Docker-Content-Digest", parts[-1])])
        if len(parts) >= 5 and parts[-2] == "referrers":
            return self.referrers(parts[-1], what)
        if len(parts) >= 5 and parts[-2] == "blobs" and self.command in ("GET", "HEAD"):
            data = blob(parts[-1])
            if data is None:
                return self.send(404, b'{"errors":[{"code":"BLOB_UNKNOWN"}]}')
            if what == "redirect-other" and self.command == "GET":
                location = "http://127.0.0.2:%d/cdn/%s" % (ports["other"], parts[-1])
                return self.send(307, b"", [("Location", location)])
            if what == "drip-slice" and len(data) > 65536:
                return self.drip(data)
            return self.send(200, data, [("Docker-Content-Digest", parts[-1])])
        if self.path.rstrip("/").endswith("/blobs/uploads") and self.command == "POST":
            host = "127.0.0.2:%d" % ports["other"] if what == "upload-other" else "127.0.0.1:%d" % ports["registry"]
            return self.send(202, b"", [("Location", "http://%s/upload/1" % host)])
        if self.path.startswith("/upload/") and self.command == "PUT":
            length = int(self.headers.get("Content-Length", "0"))
            data = self.rfile.read(length)
            digest = self.path.split("digest=")[-1].replace("%3A", ":")
            uploads[digest] = data
            return self.send(201, b"", [("Docker-Content-Digest", digest)])
        if len(parts) >= 5 and parts[-2] == "manifests" and self.command == "PUT":
            length = int(self.headers.get("Content-Length", "0"))
            data = self.rfile.read(length)
            digest = "sha256:" + hashlib.sha256(data).hexdigest()
            uploads[digest] = data
            return self.send(201, b"", [("Docker-Content-Digest", digest)])
        return self.send(404, b'{"errors":[{"code":"NAME_UNKNOWN"}]}')

    def referrers(self, subject, what):
        entries = []
        if what.startswith("referrers-flood"):
            count = int(what.split(":")[1])
            for i in range(count):
                fake = hashlib.sha256(b"bogus %d" % i).hexdigest()
                entries.append({"mediaType": "application/vnd.oci.image.manifest.v1+json",
                                "digest": "sha256:" + fake, "size": 1000,
                                "artifactType": "application/vnd.prewarm.bundle.v1",
                                "annotations": {"org.opencontainers.image.created": "2099-01-01T00:00:%02dZ" % (i % 60)}})
        else:
            for digest, data, doc in manifests():
                if doc.get("artifactType") != "application/vnd.prewarm.bundle.v1":
                    continue
                if what == "referrers-all" or (doc.get("subject") or {}).get("digest") == subject:
                    entries.append({"mediaType": doc["mediaType"], "digest": digest, "size": len(data),
                                    "artifactType": doc["artifactType"]})
        body = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                           "manifests": entries}).encode()
        return self.send(200, body, [("Content-Type", "application/vnd.oci.image.index.v1+json")])

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


registry = Server(("127.0.0.1", 0), Handler)
other = Server(("127.0.0.2", 0), Handler)
ports["registry"] = registry.server_address[1]
ports["other"] = other.server_address[1]
threading.Thread(target=other.serve_forever, daemon=True).start()
with open(port_file + ".tmp", "w") as f:
    f.write("%d %d\n" % (ports["registry"], ports["other"]))
os.rename(port_file + ".tmp", port_file)
registry.serve_forever()

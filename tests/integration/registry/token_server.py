#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A token server for distribution's `auth: token` (the registry token flow:
# the registry answers 401 with `WWW-Authenticate: Bearer realm=...,service=...,
# scope=...`; the client asks the realm for a token with its credentials).
# Test support only:
#   token_server.py PORT_FILE TLS_CERT TLS_KEY SIGN_CERT SIGN_KEY ISSUER USER:PASS
# GET /token?service=S&scope=repository:NAME:ACTIONS with Basic USER:PASS:
#   200 {"token": JWT, "access_token": JWT, "expires_in": 300}
#   a JWT (RS256, signed by `openssl dgst -sha256 -sign SIGN_KEY`; header x5c =
#   SIGN_CERT, which the registry's rootcertbundle holds) granting the scopes
#   asked for; other credentials: 401. One line per token in PORT_FILE.log.
import base64, json, os, ssl, subprocess, sys, time, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

port_file, tls_cert, tls_key, sign_cert, sign_key, issuer, userpass = sys.argv[1:8]


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def cert_der(pem_path):
    pem = open(pem_path).read()
    body = pem.split("-----BEGIN CERTIFICATE-----")[1].split("-----END CERTIFICATE-----")[0]
    return base64.b64decode("".join(body.split()))


X5C = [base64.b64encode(cert_der(sign_cert)).decode()]


def make_token(service, scopes):
    access = []
    for scope in scopes:
        kind, _, rest = scope.partition(":")
        name, _, actions = rest.rpartition(":")
        access.append({"type": kind, "name": name, "actions": [a for a in actions.split(",") if a]})
    now = int(time.time())
    header = {"typ": "JWT", "alg": "RS256", "x5c": X5C}
    claims = {"iss": issuer, "sub": userpass.split(":")[0], "aud": service, "exp": now + 300, "nbf": now - 10,
              "iat": now, "jti": str(uuid.uuid4()), "access": access}
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
    signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", sign_key], input=signing_input.encode(),
                               capture_output=True, check=True, timeout=30).stdout
    return f"{signing_input}.{b64url(signature)}"


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urlparse(self.path)
        query = parse_qs(url.query)
        expected = "Basic " + base64.b64encode(userpass.encode()).decode()
        if url.path != "/token" or self.headers.get("Authorization") != expected:
            self.send_response(401 if url.path == "/token" else 404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        token = make_token(query.get("service", [""])[0], query.get("scope", []))
        body = json.dumps({"token": token, "access_token": token, "expires_in": 300}).encode()
        with open(port_file + ".log", "a") as log:
            log.write(f"token {' '.join(query.get('scope', []))}\n")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(tls_cert, tls_key)
server.socket = context.wrap_socket(server.socket, server_side=True)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
server.serve_forever()

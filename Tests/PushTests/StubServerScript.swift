/// A small asyncio HTTP/1.1 server standing in for FCM (OAuth token endpoint and messages:send) and for generic
/// endpoints the HTTP client tests use. Behaviour is chosen by the message token prefix (`unregistered-`, `quota-`, ...).
enum StubServerScript {
    static let source = #"""
import asyncio, base64, json, os, sys, threading, urllib.parse
from email.utils import formatdate
import time

REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           410: "Gone", 413: "Payload Too Large", 429: "Too Many Requests", 500: "Internal Server Error",
           503: "Service Unavailable"}
FCM_ERROR = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"


class State:
    def __init__(self):
        self.latency = 0.0
        self.token_lifetime = 3600
        self.token_status = 200
        self.token_delay = 0.0
        self.reject_auth = False
        self.serial = 0
        self.valid = set()
        self.token_requests = 0
        self.assertions = []
        self.sends = 0
        self.messages = 0
        self.connections = 0
        self.recent = []


S = State()


def fcm_error(code, status, message, error_code=None, extra=None):
    details = []
    if error_code:
        details.append({"@type": FCM_ERROR, "errorCode": error_code})
    if extra:
        details.append(extra)
    return {"error": {"code": code, "message": message, "status": status, "details": details}}


def respond(status, body, headers=None):
    if not isinstance(body, (bytes, bytearray)):
        body = json.dumps(body).encode()
    return status, body, headers or {}


async def token(req):
    S.token_requests += 1
    form = urllib.parse.parse_qs(req["body"].decode())
    if S.token_delay:
        await asyncio.sleep(S.token_delay)
    if form.get("grant_type") != ["urn:ietf:params:oauth:grant-type:jwt-bearer"]:
        return respond(400, {"error": "unsupported_grant_type"})
    assertion = form.get("assertion", [""])[0]
    S.assertions.append(assertion)
    if S.token_status != 200:
        return respond(S.token_status, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."})
    S.serial += 1
    access = "ya29.stub-%d" % S.serial
    S.valid.add(access)
    return respond(200, {"access_token": access, "expires_in": S.token_lifetime, "token_type": "Bearer"})


async def send(req, project):
    S.sends += 1
    if S.latency:
        await asyncio.sleep(S.latency)
    auth = req["headers"].get("authorization", "")
    if S.reject_auth or not auth.startswith("Bearer ") or auth[7:] not in S.valid:
        return respond(401, fcm_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."))
    try:
        message = json.loads(req["body"])["message"]
    except Exception:
        return respond(400, fcm_error(400, "INVALID_ARGUMENT", "Invalid JSON payload received."))
    S.recent.append({"body": req["body"].decode(), "headers": req["headers"], "path": req["path"]})
    del S.recent[:-50]
    tok = message.get("token", "")
    kind = tok.split("-", 1)[0]
    if kind == "unregistered":
        return respond(404, fcm_error(404, "NOT_FOUND", "Requested entity was not found.", "UNREGISTERED"))
    if kind == "invalid":
        violation = {"@type": BAD_REQUEST, "fieldViolations": [
            {"field": "message.token", "description": "The registration token is not a valid FCM registration token"}]}
        return respond(400, fcm_error(400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token",
                                      "INVALID_ARGUMENT", violation))
    if kind == "mismatch":
        return respond(403, fcm_error(403, "PERMISSION_DENIED", "SenderId mismatch", "SENDER_ID_MISMATCH"))
    if kind == "quota":
        return respond(429, fcm_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", "QUOTA_EXCEEDED"), {"Retry-After": "7"})
    if kind == "quotadate":
        when = formatdate(time.time() + 30, usegmt=True)
        return respond(429, fcm_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", "QUOTA_EXCEEDED"), {"Retry-After": when})
    if kind == "unavailable":
        return respond(503, fcm_error(503, "UNAVAILABLE", "The service is currently unavailable.", "UNAVAILABLE"))
    if kind == "internal":
        return respond(500, fcm_error(500, "INTERNAL", "Internal error encountered.", "INTERNAL"))
    if kind == "thirdparty":
        return respond(401, fcm_error(401, "UNAUTHENTICATED", "Auth error from APNS or Web Push Service", "THIRD_PARTY_AUTH_ERROR"))
    if kind == "slow":
        await asyncio.sleep(5)
    if kind == "drop":
        return None
    S.messages += 1
    return respond(200, {"name": "projects/%s/messages/%d" % (project, S.messages)})


async def control(req, action):
    if action == "state":
        return respond(200, {"token_requests": S.token_requests, "assertions": S.assertions, "sends": S.sends,
                             "connections": S.connections, "recent": S.recent})
    if action == "revoke":
        S.valid.clear()
        return respond(200, {})
    if action == "config":
        cfg = json.loads(req["body"] or b"{}")
        S.latency = cfg.get("latency_ms", S.latency * 1000) / 1000
        S.token_lifetime = cfg.get("token_lifetime", S.token_lifetime)
        S.token_status = cfg.get("token_status", S.token_status)
        S.token_delay = cfg.get("token_delay_ms", S.token_delay * 1000) / 1000
        S.reject_auth = bool(cfg.get("reject_auth", S.reject_auth))
        return respond(200, {})
    return respond(404, {})


async def route(req, conn):
    path = req["path"]
    if req["method"] == "CONNECT":  # a tunnel asked of this server as a proxy: refused, as without credentials
        return respond(407, b"", {"Proxy-Authenticate": 'Basic realm="stub"'})
    if path.startswith("http://"):  # an absolute-form target: the client sent it to this server as its proxy
        return respond(200, {"proxied": path, "body": req["body"].decode(errors="replace")})
    parts = path.strip("/").split("/")
    if req["method"] == "POST" and path == "/ok":
        return 200, b'{"ok":true}', {}
    if req["method"] == "POST" and path == "/token":
        return await token(req)
    if req["method"] == "POST" and len(parts) == 4 and parts[0] == "v1" and parts[3] == "messages:send":
        return await send(req, parts[2])
    if parts[0] == "control" and len(parts) == 2:
        return await control(req, parts[1])
    if path.split("?")[0] == "/echo":
        return respond(200, {"method": req["method"], "path": path, "headers": req["headers"],
                             "body": req["body"].decode(errors="replace"), "connection": conn})
    if parts[0] == "status" and len(parts) == 2:
        return respond(int(parts[1]), b"status " + parts[1].encode(), {"X-Test": "yes"})
    if parts[0] == "sleep" and len(parts) == 2:
        await asyncio.sleep(int(parts[1]) / 1000)
        return respond(200, b"slept")
    if parts[0] == "big" and len(parts) == 2:
        return respond(200, b"x" * int(parts[1]))
    if path == "/close":
        return None
    if path == "/closing":
        return respond(200, b"closing", {"Connection": "close"})
    if path == "/then-close":
        return respond(200, b"then close")
    return respond(404, {"error": "no route"})


class Connection(asyncio.Protocol):
    def connection_made(self, transport):
        S.connections += 1
        self.id = S.connections
        self.transport = transport
        self.buffer = b""

    def data_received(self, data):
        if not self.buffer and data[:1] == b"\x16":  # a TLS ClientHello: answer in plain HTTP, as a misconfigured server would
            self.transport.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            self.transport.close()
            return
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].decode("latin-1").split("\r\n")
            method, target, _ = head[0].split(" ", 2)
            headers = {}
            for line in head[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0"))
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4:end + 4 + length]
            self.buffer = self.buffer[end + 4 + length:]
            req = {"method": method, "path": target, "headers": headers, "body": body}
            if method == "POST" and target == "/ok":
                self.write(200, b'{"ok":true}', {})
            else:
                asyncio.ensure_future(self.handle(req))

    async def handle(self, req):
        result = await route(req, self.id)
        if result is None:
            self.transport.close()
            return
        self.write(*result)
        if req["path"] == "/closing":  # answered with Connection: close, then closed, as such a server does
            self.transport.close()
        elif req["path"] == "/then-close":  # kept open, then closed while the client holds it idle
            asyncio.get_event_loop().call_later(0.1, self.transport.close)

    def write(self, status, body, headers):
        lines = ["HTTP/1.1 %d %s" % (status, REASONS.get(status, "Status")), "Content-Type: application/json",
                 "Content-Length: %d" % len(body)]
        lines += ["%s: %s" % item for item in headers.items()]
        if not self.transport.is_closing():
            self.transport.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)


def watch_parent():
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


async def main():
    server = await asyncio.get_running_loop().create_server(Connection, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()


threading.Thread(target=watch_parent, daemon=True).start()
asyncio.run(main())
"""#
}

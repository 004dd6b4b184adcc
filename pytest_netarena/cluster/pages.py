"""What the HTTP stand-ins answer: nginx's default server, Online Boutique's frontend, health endpoints."""

from __future__ import annotations

import email.utils
import time
import urllib.parse

NGINX_VERSION = "1.27.4"
NGINX_WELCOME = b"""<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
"""
NGINX_404 = (b"<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1>"
             b"</center>\r\n<hr><center>nginx/" + NGINX_VERSION.encode() + b"</center>\r\n</body>\r\n</html>\r\n")
NGINX_301 = (b"<html>\r\n<head><title>301 Moved Permanently</title></head>\r\n<body>\r\n<center><h1>301 Moved "
             b"Permanently</h1></center>\r\n<hr><center>nginx/" + NGINX_VERSION.encode() + b"</center>\r\n</body>\r\n"
             b"</html>\r\n")
#: when the welcome page was "installed" (its Last-Modified and ETag never change)
NGINX_MTIME = 1739278800
BOUTIQUE_HOME = (b"<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"UTF-8\"><title>Online Boutique</title>"
                 b"</head>\n<body><h1>Online Boutique</h1><p>(a netarena stand-in of the frontend)</p></body>\n</html>\n")
METHODS = (b"GET ", b"HEAD ", b"POST ", b"PUT ", b"DELETE ", b"OPTIONS ", b"PATCH ")


def _date(when: float | None = None) -> str:
    return email.utils.formatdate(time.time() if when is None else when, usegmt=True)


def response(status: str, body: bytes, content_type: str, headers: list[tuple[str, str]], head: bool) -> bytes:
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers), f"Content-Type: {content_type}",
             f"Content-Length: {len(body)}", "Connection: close", "", ""]
    return "\r\n".join(lines).encode() + (b"" if head else body)


#: nginx's default root, and the content types of what its default mime.types names most
NGINX_ROOT = "/usr/share/nginx/html"
TYPES = {"html": "text/html", "htm": "text/html", "css": "text/css", "js": "application/javascript",
         "json": "application/json", "txt": "text/plain", "xml": "text/xml", "png": "image/png", "svg": "image/svg+xml"}


def nginx(method: str, path: str, files=None) -> bytes:
    """nginx's default server: files of its html folder (files: the container's, cluster/files.py), else the
    welcome page the image ships at / and 404 elsewhere."""
    head = method == "HEAD"
    server = [("Server", f"nginx/{NGINX_VERSION}"), ("Date", _date())]
    plain = urllib.parse.unquote(path.split("?", 1)[0]) or "/"
    if files is not None and plain.startswith("/"):
        where = NGINX_ROOT + plain
        if files.kind(where) == "folder":
            if not plain.endswith("/"):
                return response("301 Moved Permanently", NGINX_301, "text/html",
                                [*server, ("Location", plain + "/")], head)
            where += "index.html"
        content = files.read(where)
        if content is not None:
            kind = TYPES.get(where.rsplit(".", 1)[-1].lower() if "." in where.rsplit("/", 1)[-1] else "",
                             "application/octet-stream")
            return response("200 OK", content, kind, [*server, ("Accept-Ranges", "bytes")], head)
    if plain in ("/", "/index.html"):
        return response("200 OK", NGINX_WELCOME, "text/html", [
            *server, ("Last-Modified", _date(NGINX_MTIME)),
            ("ETag", f'"{NGINX_MTIME:x}-{len(NGINX_WELCOME):x}"'), ("Accept-Ranges", "bytes")], head)
    return response("404 Not Found", NGINX_404, "text/html", server, head)


def boutique_frontend(method: str, path: str) -> bytes:
    plain = path.split("?", 1)[0]
    if plain == "/_healthz":
        return response("200 OK", b"ok", "text/plain; charset=utf-8", [("Date", _date())], method == "HEAD")
    if plain in ("/", "/cart", "/product"):
        return response("200 OK", BOUTIQUE_HOME, "text/html; charset=utf-8", [("Date", _date())], method == "HEAD")
    return response("404 Not Found", b"404 page not found\n", "text/plain; charset=utf-8", [("Date", _date())],
                    method == "HEAD")


def health(method: str, path: str) -> bytes:
    """A plain server's answer: 200 with a short body on every path (coredns's /health and /ready, generic images)."""
    return response("200 OK", b"OK", "text/plain; charset=utf-8", [("Date", _date())], method == "HEAD")

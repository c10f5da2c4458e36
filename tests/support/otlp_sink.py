"""A plain OTLP/HTTP trace collector on loopback, for the export tests.

    OtlpSink()  ThreadingHTTPServer on 127.0.0.1:<free port>
      POST /v1/traces   protobuf ExportTraceServiceRequest (gzip or not) -> 200
      -> .spans         every received span as a flat dict (ids as hex, attributes decoded)
      -> .headers       the headers of every request (to check what reached the collector)
    other paths -> 404; status=<code> makes every POST answer that code

It decodes with opentelemetry-proto, the same message definitions any
collector uses, so the tests check what goes over the wire.
"""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, kind) if kind else None


class OtlpSink:
    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.spans: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                sink._receive(dict(self.headers.items()), body)
                self.send_response(sink.status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _receive(self, headers: dict[str, str], body: bytes) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        spans = []
        for rs in request.resource_spans:
            resource = {kv.key: _value(kv.value) for kv in rs.resource.attributes}
            for ss in rs.scope_spans:
                for s in ss.spans:
                    spans.append(
                        {
                            "name": s.name,
                            "trace_id": s.trace_id.hex(),
                            "span_id": s.span_id.hex(),
                            "parent_id": s.parent_span_id.hex() or None,
                            "start_ns": s.start_time_unix_nano,
                            "end_ns": s.end_time_unix_nano,
                            "status": s.status.code,
                            "attributes": {kv.key: _value(kv.value) for kv in s.attributes},
                            "resource": resource,
                        }
                    )
        with self._lock:
            self.headers.append({k.lower(): v for k, v in headers.items()})
            self.spans.extend(spans)

    def start(self) -> OtlpSink:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> OtlpSink:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

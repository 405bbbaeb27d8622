"""The `ragdiag record` command: its arguments and what it runs (kept out of the cli package)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ragdiag.env_secret import secret_from_env
from ragdiag.errors import ConfigError


def add_parser(sub: Any) -> None:
    rc = sub.add_parser(
        "record", help="record what an application sends to Azure AI Search (a read-only reverse proxy; "
                       "writes refused) and, with --otlp, the traces it exports")
    rc.add_argument("--upstream", help="the search service: https://NAME.search.windows.net, or "
                                       "http://127.0.0.1:PORT of `ragdiag serve`")
    rc.add_argument("--listen", default="127.0.0.1:8766", metavar="HOST:PORT",
                    help="where the application connects instead (default 127.0.0.1:8766)")
    rc.add_argument("--out", default="traffic.jsonl", help="the traffic file (JSONL; default traffic.jsonl)")
    rc.add_argument("--append", action="store_true", help="append to --out (and --otlp-out) instead of replacing")
    rc.add_argument("--api-key-env", metavar="VAR",
                    help="send the key in this environment variable upstream instead of the client's "
                         "credential (the application may then use any dummy key)")
    rc.add_argument("--tls", action="store_true",
                    help="listen with https and a generated certificate (for credentials that require https)")
    rc.add_argument("--cert-dir", help="where the generated certificate goes (default: beside --out)")
    rc.add_argument("--otlp", type=int, metavar="PORT",
                    help="also receive OTLP/HTTP traces on 127.0.0.1:PORT/v1/traces (4318 by convention)")
    rc.add_argument("--otlp-out", default=None, help="the trace file (OTLP JSON lines; default traces.jsonl "
                                                     "beside --out)")
    rc.set_defaults(func=run)


def _listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"--listen takes HOST:PORT such as 127.0.0.1:8766, got {text!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def run(args: argparse.Namespace) -> int:
    from ragdiag.observe.proxy import run_proxy

    if not args.upstream and args.otlp is None:
        raise ConfigError("ragdiag record needs --upstream URL (the search service to record) and/or --otlp PORT "
                          "(traces to receive)")
    key = None
    if args.api_key_env:
        key = secret_from_env(args.api_key_env, "export the upstream api-key there, or leave --api-key-env "
                              "out to forward the client's credential")
    out = Path(args.out)
    host, port = _listen(args.listen)
    if host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: listening on {host}, not loopback: anyone who reaches it searches the upstream index "
              "with the forwarded credential")
    tls = None
    if args.tls:
        from ragdiag.observe.tls import generate_certificate

        tls = generate_certificate(Path(args.cert_dir) if args.cert_dir else out.parent, host)
    otlp = None
    if args.otlp is not None:
        from ragdiag.observe.otlp import OtlpReceiver

        otlp = OtlpReceiver(out=Path(args.otlp_out) if args.otlp_out else out.parent / "traces.jsonl",
                            port=args.otlp, append=args.append)
        otlp.start()
    if not args.upstream:
        return _traces_only(otlp)
    run_proxy(args.upstream, out=out, host=host, port=port, api_key=key, tls=tls, otlp=otlp,
              append=args.append)
    return 0


def _traces_only(otlp: Any) -> int:
    from ragdiag.http_server import wait_for_interrupt

    print(f"OTLP/HTTP traces on {otlp.url}/v1/traces -> {otlp.out}; Ctrl-C to stop")
    try:
        wait_for_interrupt()
    finally:
        otlp.stop()
        print(f"stopped; {otlp.stats()}")
    return 0


__all__ = ["add_parser", "run"]

"""``ragdiag serve``: an Azure-compatible read-only endpoint over a target.
"""

from __future__ import annotations

import argparse

from ragdiag.cli._common import _config_target


def cmd_serve(args: argparse.Namespace) -> int:
    """An Azure-compatible, read-only endpoint over a config's target or the sample indexes."""
    from ragdiag.env_secret import secret_from_env
    from ragdiag.errors import ConfigError
    from ragdiag.targets.emulator import Faults, run_server

    key = None
    if args.api_key_env:
        key = secret_from_env(args.api_key_env, "export the key clients must send, or use --no-auth")
    elif not args.no_auth:
        raise ConfigError("choose --api-key-env VAR (clients must send that key) or --no-auth")
    targets = {}
    if args.config is not None:
        if args.index:
            raise ConfigError("--index NAME=VARIANT serves sample variants; with a config, serve uses "
                              "the config's [target] (name it with --name)")
        target = _config_target(args.config, None, command="serve")
        targets[args.name or target.schema().name] = target
    else:
        if args.name:
            raise ConfigError("--name names a config's target; for sample variants use --index NAME=VARIANT")
        for spec in args.index or ["muster=structured"]:
            name, _, variant = spec.partition("=")
            targets[name] = _config_target(None, variant or "structured", command="serve")
    faults = Faults(latency_ms=args.latency_ms, rate_429=args.rate_429, rate_503=args.rate_503,
                    rate_malformed=args.rate_malformed, rate_drop=args.rate_drop)
    run_server(targets, host="127.0.0.1", port=args.port, api_key=key, faults=faults)
    return 0

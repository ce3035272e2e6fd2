"""What the game server and the arena share: structured logs, refusals and their ``ErrorInfo`` details,
credentials, the gRPC port (TLS or plain), request decoding, health, reflection, the connections' pings,
opening deadline and idle limit, the process signals (event-loop lag, collector pauses), database URLs
and the migration runner.

The two services meet only through the wire contract (``kutnahora.v1``) and this layer, which imports
neither of them (docs/architecture.md#layers).
"""

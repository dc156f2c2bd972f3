"""Adapters over the engine: Hub protocol, command line, match runner."""

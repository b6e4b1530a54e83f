"""Readers of the landing zone (SPEC §3): discover landed files, validate, read."""

from floe.landing.loads import LandingError, LoadFile, already_loaded, discover_loads, read_loads

__all__ = ["LandingError", "LoadFile", "already_loaded", "discover_loads", "read_loads"]

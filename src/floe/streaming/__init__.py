"""`floe stream`: the decode of floe.decode as a long-running Structured Streaming job."""

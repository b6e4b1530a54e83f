"""Privacy: PII tags, masking functions, erasure and rectification (docs/privacy.md)."""

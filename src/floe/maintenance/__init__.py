"""Iceberg table maintenance (``docs/maintenance.md``): compaction, snapshot expiry, orphan
files, manifests."""

from floe.maintenance.core import MaintenancePolicy, TableReport, maintain_table
from floe.runtime.tables import tables_in

__all__ = ["MaintenancePolicy", "TableReport", "maintain_table", "tables_in"]

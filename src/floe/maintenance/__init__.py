"""Iceberg table maintenance (SPEC §12): compaction, snapshot expiry, orphans, manifests."""

from floe.maintenance.core import MaintenancePolicy, TableReport, maintain_table, tables_in

__all__ = ["MaintenancePolicy", "TableReport", "maintain_table", "tables_in"]

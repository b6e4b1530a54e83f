"""The driver JVM's JIT thresholds (docs/decisions/0060-late-c2-jit.md)."""

from __future__ import annotations

import pytest

from floe.runtime.session import JIT_OPTIONS, spark_conf
from floe.runtime.settings import Settings, SettingsError


def test_the_setting_picks_the_thresholds(tmp_path):
    home = {"FLOE_HOME": str(tmp_path)}
    late = spark_conf(Settings.from_env(home))["spark.driver.extraJavaOptions"]
    assert "-XX:Tier4InvocationThreshold=50000" in late
    hotspot = Settings.from_env({**home, "FLOE_JVM_JIT": "hotspot"})
    assert "Tier4" not in spark_conf(hotspot)["spark.driver.extraJavaOptions"]
    with pytest.raises(SettingsError, match="FLOE_JVM_JIT"):
        Settings.from_env({**home, "FLOE_JVM_JIT": "c3"})


@pytest.mark.integration
def test_the_running_session_has_them(spark):
    """The session's JVM runs with the raised thresholds (read back from HotSpot)."""
    jvm = spark.sparkContext._jvm
    bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(
        jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean")
    )
    for option in JIT_OPTIONS["late-c2"].split():
        name, value = option.removeprefix("-XX:").split("=")
        assert bean.getVMOption(name).getValue() == value

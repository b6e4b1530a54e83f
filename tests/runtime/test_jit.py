"""The driver JVM's JIT thresholds (docs/decisions/0060-late-c2-jit.md) and its garbage
collector (docs/decisions/0070-parallel-collector.md)."""

from __future__ import annotations

import pytest

from floe.runtime.session import GC_OPTIONS, JIT_OPTIONS, session_settings, spark_conf
from floe.runtime.settings import Settings, SettingsError


def test_the_setting_picks_the_thresholds(tmp_path):
    home = {"FLOE_HOME": str(tmp_path)}
    late = spark_conf(Settings.from_env(home))["spark.driver.extraJavaOptions"]
    assert "-XX:Tier4InvocationThreshold=50000" in late
    hotspot = Settings.from_env({**home, "FLOE_JVM_JIT": "hotspot"})
    assert "Tier4" not in spark_conf(hotspot)["spark.driver.extraJavaOptions"]
    with pytest.raises(SettingsError, match="FLOE_JVM_JIT"):
        Settings.from_env({**home, "FLOE_JVM_JIT": "c3"})


def test_the_setting_picks_the_collector(tmp_path):
    home = {"FLOE_HOME": str(tmp_path)}
    default = spark_conf(Settings.from_env(home))["spark.driver.extraJavaOptions"]
    assert "-XX:+UseParallelGC" in default.split()
    assert "-XX:+UseG1GC" not in default.split()
    g1 = spark_conf(Settings.from_env({**home, "FLOE_JVM_GC": "g1"}))
    assert "-XX:+UseG1GC" in g1["spark.driver.extraJavaOptions"].split()
    assert "UseParallelGC" not in g1["spark.driver.extraJavaOptions"]
    with pytest.raises(SettingsError, match="FLOE_JVM_GC"):
        Settings.from_env({**home, "FLOE_JVM_GC": "zgc"})


def _hotspot(spark):
    jvm = spark.sparkContext._jvm
    return jvm.java.lang.management.ManagementFactory.getPlatformMXBean(
        jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean")
    )


@pytest.mark.integration
def test_the_running_session_has_them(spark):
    """The session's JVM runs with the raised thresholds (read back from HotSpot)."""
    bean = _hotspot(spark)
    for option in JIT_OPTIONS["late-c2"].split():
        name, value = option.removeprefix("-XX:").split("=")
        assert bean.getVMOption(name).getValue() == value


@pytest.mark.integration
def test_the_running_session_has_its_collector(spark):
    """The session's JVM runs the collector its settings name, and only that one."""
    bean = _hotspot(spark)
    chosen = session_settings().jvm_gc
    for gc, option in GC_OPTIONS.items():
        flag = option.removeprefix("-XX:+")
        assert bean.getVMOption(flag).getValue() == str(gc == chosen).lower()

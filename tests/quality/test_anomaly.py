"""Anomaly strategies over a metric's history: pure Python, no Spark."""

from __future__ import annotations

import pytest

from floe.quality.anomaly import (
    AbsoluteChange,
    AnomalyConfigError,
    RelativeRateOfChange,
    StandardDeviation,
)


def test_relative_rate_of_change():
    s = RelativeRateOfChange(max_increase=2.0, max_decrease=0.5)
    assert s.detect([10.0], 20.0).status == "pass"
    assert s.detect([10.0], 20.1).status == "fail"
    assert s.detect([10.0], 5.0).status == "pass"
    assert s.detect([10.0], 4.9).status == "fail"
    assert s.detect([1.0, 100.0], 150.0).status == "pass", "compares with the latest value"
    assert s.detect([0.0], 0.0).status == "pass"
    assert s.detect([0.0], 1.0).status == "fail"
    assert s.detect([], 1.0).status == "skip"
    assert s.detect([1.0], None).status == "fail"
    with pytest.raises(AnomalyConfigError):
        RelativeRateOfChange()


def test_absolute_change():
    s = AbsoluteChange(max_increase=10, max_decrease=5)
    assert s.detect([100.0], 110.0).status == "pass"
    assert s.detect([100.0], 110.5).status == "fail"
    assert s.detect([100.0], 95.0).status == "pass"
    assert s.detect([100.0], 94.0).status == "fail"
    assert AbsoluteChange(max_decrease=-5).detect([100.0], 94.0).status == "fail"
    assert AbsoluteChange(max_increase=1).detect([100.0], 0.0).status == "pass"


def test_stddev_strategy_on_a_synthetic_history():
    history = [100.0, 102.0, 98.0, 101.0, 99.0]  # mean 100, population stddev sqrt(2)
    s = StandardDeviation(n_sigmas=3.0, min_history=3)
    assert s.detect(history, 104.0).status == "pass"  # z = 2.83
    assert s.detect(history, 104.5).status == "fail"  # z = 3.18
    assert s.detect(history, 95.5).status == "fail"
    assert s.detect(history[:2], 1000.0).status == "skip"
    assert StandardDeviation(window=2).detect(history, 1000.0).status == "skip"
    assert StandardDeviation(min_history=2, window=2).detect([5.0, 5.0], 5.0).status == "pass"
    assert StandardDeviation(min_history=2).detect([5.0, 5.0], 5.1).status == "fail"
    with pytest.raises(AnomalyConfigError):
        StandardDeviation(min_history=1)

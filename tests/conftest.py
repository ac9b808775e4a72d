"""Shared pytest fixtures."""
import pytest
from threadpoolctl import threadpool_limits

@pytest.fixture(autouse=True)
def _single_blas_thread():
    "One BLAS thread per test: as fast at these sizes and far steadier with two pytest workers on 2 cores."
    with threadpool_limits(1):
        yield

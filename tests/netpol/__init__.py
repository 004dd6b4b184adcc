"""Tests of the NetworkPolicy engine (a package so test modules can share netpol_xyz)."""

#!/usr/bin/env python3
"""Perft speed of Pedina against pydraughts (same as ``pedina bench movegen``)."""

from pedina.protocol.bench_movegen import bench_movegen

if __name__ == "__main__":
    bench_movegen()
